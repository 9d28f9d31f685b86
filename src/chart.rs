//! The reduction chart of `scrub bench --svg`: lines left against candidate runs, per case.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

use crate::bench::CaseRow;

/// One step curve per case, each labelled at its end, so that no legend is needed.
pub fn reduction_curves(cases: &[CaseRow], path: &Path) -> Result<()> {
    let cases: Vec<&CaseRow> = cases
        .iter()
        .filter(|c| c.skipped.is_none() && !c.trace.is_empty())
        .collect();
    let max_x = cases
        .iter()
        .map(|c| c.oracle_calls)
        .max()
        .unwrap_or(1)
        .max(1);
    let max_y = cases
        .iter()
        .map(|c| c.original_lines)
        .max()
        .unwrap_or(1)
        .max(1);
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (1100, 650)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "scrub bench: non-blank lines left against candidate runs",
                ("sans-serif", 22),
            )
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(55)
            // Room on the right for the labels at the ends of the curves.
            .build_cartesian_2d(0..max_x + max_x / 4, 0..max_y + max_y / 20)?;
        chart
            .configure_mesh()
            .x_desc("candidate runs")
            .y_desc("non-blank lines")
            .light_line_style(WHITE)
            .draw()?;
        for (i, case) in cases.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let mut points = Vec::new();
            for window in case.trace.windows(2) {
                let ((_, y0), (x1, y1)) = (window[0], window[1]);
                points.push((x1, y0));
                points.push((x1, y1));
            }
            points.insert(0, case.trace[0]);
            points.push((case.oracle_calls, case.final_lines));
            chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
            let label = format!(
                "{} ({} → {})",
                case.name, case.original_lines, case.final_lines
            );
            chart.draw_series(std::iter::once(Text::new(
                label,
                (case.oracle_calls + max_x / 100, case.final_lines),
                ("sans-serif", 12).into_font().color(&color),
            )))?;
        }
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}
