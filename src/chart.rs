//! The reduction chart of `scrub bench --svg`: lines left against candidate runs, per case.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// Strong colours that stay apart on white; cycled when there are more cases.
const COLOURS: &[(u8, u8, u8)] = &[
    (31, 119, 180),
    (214, 39, 40),
    (44, 160, 44),
    (148, 103, 189),
    (255, 127, 14),
    (140, 86, 75),
    (227, 119, 194),
    (23, 190, 207),
    (127, 127, 127),
    (188, 189, 34),
    (0, 0, 128),
    (128, 0, 0),
    (0, 100, 0),
    (75, 0, 130),
    (184, 134, 11),
    (0, 128, 128),
    (199, 21, 133),
];

/// One case's reduction: (candidate runs, non-blank lines) after every accepted step.
pub struct Curve<'a> {
    pub name: &'a str,
    pub original_lines: usize,
    pub final_lines: usize,
    pub runs: usize,
    pub trace: &'a [(usize, usize)],
}

/// One step curve per case. Labels stand in a column right of the curves, in the order the
/// curves end, each joined to its curve's end by a thin line: no legend to hunt, no overlap.
pub fn reduction_curves(cases: &[Curve], path: &Path) -> Result<()> {
    let mut cases: Vec<&Curve> = cases.iter().filter(|c| !c.trace.is_empty()).collect();
    cases.sort_by_key(|c| (c.final_lines, c.name));
    let max_x = cases.iter().map(|c| c.runs).max().unwrap_or(1).max(1);
    let max_y = cases
        .iter()
        .map(|c| c.original_lines)
        .max()
        .unwrap_or(1)
        .max(1);
    let label_x = max_x + max_x / 20;
    let gap = (max_y / 25).max(1);
    let mut label_y = Vec::new();
    for case in &cases {
        let below = label_y.last().map_or(0, |y: &usize| y + gap);
        label_y.push(case.final_lines.max(below));
    }
    let top = label_y.last().copied().unwrap_or(0).max(max_y) + gap;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "scrub bench: non-blank lines left against candidate runs",
                ("sans-serif", 22),
            )
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(55)
            .build_cartesian_2d(0..max_x + max_x * 2 / 5, 0..top)?;
        chart
            .configure_mesh()
            .x_desc("candidate runs")
            .y_desc("non-blank lines")
            .light_line_style(WHITE)
            .draw()?;
        for ((i, case), &y) in cases.iter().enumerate().zip(&label_y) {
            let (r, g, b) = COLOURS[i % COLOURS.len()];
            let colour = RGBColor(r, g, b);
            let mut points = vec![case.trace[0]];
            for window in case.trace.windows(2) {
                let ((_, y0), (x1, y1)) = (window[0], window[1]);
                points.push((x1, y0));
                points.push((x1, y1));
            }
            let end = (case.runs, case.final_lines);
            points.push(end);
            chart.draw_series(LineSeries::new(points, colour.stroke_width(2)))?;
            chart.draw_series(LineSeries::new(
                [end, (label_x, y)],
                colour.mix(0.5).stroke_width(1),
            ))?;
            let label = format!(
                "{} ({} → {})",
                case.name, case.original_lines, case.final_lines
            );
            chart.draw_series(std::iter::once(Text::new(
                label,
                (label_x + max_x / 100, y),
                ("sans-serif", 12).into_font().color(&colour),
            )))?;
        }
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}

/// One tool's result on one case.
pub struct Mark<'a> {
    pub tool: &'a str,
    pub wall_seconds: f64,
    pub bytes: usize,
    /// Whether it fails the same way as the original.
    pub same_bug: bool,
    /// Whether the budget stopped the tool.
    pub cut: bool,
}

/// The chart of `scrub bench --vs`: each tool's result on each case as one mark, its size
/// (bytes, log scale) against the wall time it took (log scale). A tool is a colour and a
/// shape; a hollow mark lost the bug, a mark with a bar above it was cut off by the budget.
pub fn size_against_time(rows: &[Mark], path: &Path) -> Result<()> {
    let mut tools: Vec<&str> = Vec::new();
    for r in rows {
        if !tools.contains(&r.tool) {
            tools.push(r.tool);
        }
    }
    let max_x = rows.iter().map(|r| r.wall_seconds).fold(1.0, f64::max) * 1.5;
    let max_y = rows.iter().map(|r| r.bytes).max().unwrap_or(1).max(10) as f64 * 1.5;
    let draw = || -> Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::new(path, (1100, 700)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "scrub bench --vs: bytes left against wall time, one mark per tool and case",
                ("sans-serif", 22),
            )
            .margin(20)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d((0.1..max_x).log_scale(), (5.0..max_y).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(
                "wall seconds (filled: the same bug by scrub's checks; hollow: lost it; a bar above: cut off by the budget)",
            )
            .y_desc("bytes left")
            .light_line_style(WHITE)
            .draw()?;
        for (i, tool) in tools.iter().enumerate() {
            let (r, g, b) = COLOURS[i % COLOURS.len()];
            let colour = RGBColor(r, g, b);
            let mine = rows.iter().filter(|r| r.tool == *tool);
            let points: Vec<_> = mine
                .map(|r| ((r.wall_seconds.max(0.1), r.bytes.max(5) as f64), r))
                .collect();
            let style = |same: bool| {
                if same {
                    colour.filled()
                } else {
                    colour.stroke_width(2)
                }
            };
            // A circle, a triangle, a square, then the same again.
            let drawn = match i % 3 {
                0 => chart.draw_series(
                    points
                        .iter()
                        .map(|&(at, r)| Circle::new(at, 6, style(r.same_bug))),
                )?,
                1 => chart.draw_series(
                    points
                        .iter()
                        .map(|&(at, r)| TriangleMarker::new(at, 7, style(r.same_bug))),
                )?,
                _ => chart.draw_series(points.iter().map(|&(at, r)| {
                    EmptyElement::at(at) + Rectangle::new([(-5, -5), (5, 5)], style(r.same_bug))
                }))?,
            };
            drawn.label(*tool).legend(move |(x, y)| {
                Rectangle::new([(x - 5, y - 5), (x + 5, y + 5)], colour.filled())
            });
            chart.draw_series(points.iter().filter(|(_, r)| r.cut).map(|&(at, _)| {
                EmptyElement::at(at) + PathElement::new([(-6, -9), (6, -9)], colour.stroke_width(2))
            }))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| anyhow!("cannot draw {}: {e}", path.display()))
}
