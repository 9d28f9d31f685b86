//! `scrub bench`: every corpus case through the `reduce` engine, with figures and a chart.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::chart::Curve;
use crate::cli::BenchArgs;
use crate::corpus::{self, Case};
use crate::engine::reduce::{self, Cache, Execution, Finish, Options, Summary};

/// One case's figures, as `--json` writes them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseRow {
    pub name: String,
    pub original_lines: usize,
    pub original_bytes: usize,
    pub final_lines: usize,
    pub final_bytes: usize,
    pub oracle_calls: usize,
    pub cache_hits: usize,
    pub wall_seconds: f64,
    pub verified: bool,
    pub bound: usize,
    pub bound_met: bool,
    /// Oracle calls ÷ (m · log2(n/m)), n and m the statements before and after; `None`
    /// when nothing was removed.
    pub lower_bound_ratio: Option<f64>,
    /// Why the case was not run, or why it failed.
    pub skipped: Option<String>,
    #[serde(default)]
    pub trace: Vec<(usize, usize)>,
    /// The reduced script, to compare runs (warm against cold, before against after).
    #[serde(default)]
    pub final_text: String,
    /// For a PyTorch case: the simplifications its failure survived.
    #[serde(default)]
    pub ladder: Vec<crate::engine::ladder::Rung>,
    /// What ran before scrub's passes (PyTorch's minifier).
    #[serde(default)]
    pub stages: Vec<crate::engine::minifier::Stage>,
    /// Runs a candidate got before it counted as not failing (more for a flaky original).
    #[serde(default)]
    pub attempts_per_candidate: usize,
    /// Seconds in each stage of the reduction (baseline, control, passes, verify, …).
    #[serde(default)]
    pub stage_seconds: Vec<(String, f64)>,
    /// The original's fresh run, in seconds (0 in files written before it was recorded).
    #[serde(default)]
    pub original_seconds: f64,
}

impl CaseRow {
    /// The seconds outside the candidates: everything before the first (the original's runs,
    /// the warm-up, the control) and the final check.
    pub fn fixed_seconds(&self) -> f64 {
        const FIXED: [&str; 5] = ["input", "baseline", "warm-up", "control", "verify"];
        self.stage_seconds
            .iter()
            .filter(|(stage, _)| FIXED.contains(&stage.as_str()))
            .map(|(_, s)| s)
            .sum()
    }
}

/// One pass's figures summed over the corpus.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PassTotal {
    pub name: String,
    pub candidates: usize,
    pub accepted: usize,
    pub bytes_removed: usize,
    pub oracle_seconds: f64,
    #[serde(default)]
    pub pumps_kept: usize,
    #[serde(default)]
    pub pumps_rolled_back: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub cases: Vec<CaseRow>,
    pub passes: Vec<PassTotal>,
    /// With `--vs`: every tool's result on every case, judged by scrub's oracle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vs: Vec<crate::vs::VsRow>,
}

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let dirs = if args.dirs.is_empty() {
        vec![PathBuf::from("corpus")]
    } else {
        args.dirs.clone()
    };
    let mut cases = Vec::new();
    for dir in &dirs {
        cases.extend(corpus::load(dir)?);
    }
    cases.retain(|c| {
        args.filter.is_empty() || args.filter.iter().any(|f| c.name.contains(f.as_str()))
    });
    if cases.is_empty() {
        bail!(
            "no corpus case found in {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let baseline: Option<Report> = match &args.baseline {
        Some(path) => Some(
            serde_json::from_str(
                &std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
            )
            .with_context(|| format!("{} is not a scrub bench --json file", path.display()))?,
        ),
        None => None,
    };
    // Every peer is found before any case runs: a missing one is a line, not a lost hour.
    let mut vs = crate::vs::Vs::new(args)?;
    let python = args.python.clone();
    // One connection, and so one pool of actors, for every case.
    let execution = reduce::connect(&args.execution())?;
    let mut report = Report {
        cases: Vec::new(),
        passes: Vec::new(),
        vs: Vec::new(),
    };
    for case in &cases {
        if !args.quiet {
            eprintln!("bench: {}", case.name);
        }
        let row = match case.missing_needs(python.as_deref().unwrap_or(Path::new("python3"))) {
            Some(why) => skipped(case, why),
            None => match bench_case(case, args, &execution)? {
                Ok((summary, text)) => {
                    add_passes(&mut report.passes, &summary);
                    row_of(case, &summary, text)
                }
                Err(why) => skipped(case, why),
            },
        };
        if let Some(vs) = vs.as_mut().filter(|_| row.skipped.is_none()) {
            vs.compare(case, &row, args)?;
        }
        report.cases.push(row);
    }
    if let Some(vs) = &vs {
        report.vs = vs.rows.clone();
    }

    print!("{}", markdown(&report));
    if let Some(vs) = &vs {
        print!("{}", vs.markdown());
    }
    if let Some(baseline) = &baseline {
        print!("{}", comparison(&report, baseline));
        print!("{}", side_by_side(&report, baseline));
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.svg {
        charts(&report, vs.as_ref(), path)?;
    }
    if let Some(crashes) = vs.as_ref().map(|vs| &vs.crashes).filter(|c| !c.is_empty()) {
        for crash in crashes {
            eprintln!("scrub: {crash}");
        }
        return Ok(ExitCode::from(2));
    }
    let failed = report.cases.iter().any(|c| {
        c.skipped
            .as_deref()
            .is_some_and(|s| s.starts_with("failed"))
            || (c.skipped.is_none() && !c.bound_met)
    });
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The reduction curves at `path`, and with `--vs` the size-against-time chart beside them.
fn charts(report: &Report, vs: Option<&crate::vs::Vs>, path: &Path) -> Result<()> {
    let curves: Vec<Curve> = report
        .cases
        .iter()
        .filter(|c| c.skipped.is_none())
        .map(|c| Curve {
            name: &c.name,
            original_lines: c.original_lines,
            final_lines: c.final_lines,
            runs: c.oracle_calls,
            trace: &c.trace,
        })
        .collect();
    crate::chart::reduction_curves(&curves, path)?;
    match vs {
        Some(vs) => vs.chart(path),
        None => Ok(()),
    }
}

/// Reduces a temp copy of the case with the same engine as `scrub reduce --exhaustive`: the
/// figures and the reduced script.
fn bench_case(
    case: &Case,
    args: &BenchArgs,
    execution: &Execution,
) -> Result<Result<(Summary, String), String>> {
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("repro.py");
    std::fs::copy(case.script(), &file)?;
    let options = Options {
        // A derived case is reduced as a user without a signature would.
        sig: (!case.spec.derive).then(|| case.spec.signature.clone()),
        execution: execution.clone(),
        target_lines: None,
        cache: if args.warm_cache {
            Cache::Default
        } else {
            Cache::Dir(dir.path().join("cache"))
        },
        minifier: args.minifier.into(),
        quiet: true,
        ..Options::new(file)
    };
    Ok(match reduce::reduce(&options) {
        Ok(Finish::Reduced(summary)) => {
            let text = std::fs::read_to_string(&summary.output).unwrap_or_default();
            Ok((*summary, text))
        }
        Ok(Finish::DoesNotFail) => {
            Err("failed: the original does not fail with its signature".into())
        }
        Ok(Finish::Interrupted(_)) => bail!("interrupted"),
        Err(e) => Err(format!("failed: {e:#}")),
    })
}

fn row_of(case: &Case, s: &Summary, final_text: String) -> CaseRow {
    let (n, m) = (s.original_statements as f64, s.final_statements as f64);
    let ideal = m * (n / m).log2();
    CaseRow {
        name: case.name.clone(),
        original_lines: s.original_lines,
        original_bytes: s.original_bytes,
        final_lines: s.final_lines,
        final_bytes: s.final_bytes,
        oracle_calls: s.oracle_calls,
        cache_hits: s.cache_hits,
        wall_seconds: s.wall_seconds,
        verified: s.verified,
        bound: case.spec.bound,
        bound_met: s.final_lines <= case.spec.bound,
        lower_bound_ratio: (m > 0.0 && ideal > 0.0).then(|| s.oracle_calls as f64 / ideal),
        skipped: None,
        trace: s.trace.clone(),
        final_text,
        ladder: s.ladder.clone(),
        stages: s.stages.clone(),
        attempts_per_candidate: s.attempts_per_candidate,
        stage_seconds: s
            .stage_seconds
            .iter()
            .map(|lap| (lap.stage.to_string(), lap.seconds))
            .collect(),
        original_seconds: s.original_seconds,
    }
}

fn skipped(case: &Case, why: String) -> CaseRow {
    CaseRow {
        name: case.name.clone(),
        original_lines: 0,
        original_bytes: 0,
        final_lines: 0,
        final_bytes: 0,
        oracle_calls: 0,
        cache_hits: 0,
        wall_seconds: 0.0,
        verified: false,
        bound: case.spec.bound,
        bound_met: false,
        lower_bound_ratio: None,
        skipped: Some(why),
        trace: Vec::new(),
        final_text: String::new(),
        ladder: Vec::new(),
        stages: Vec::new(),
        attempts_per_candidate: 0,
        stage_seconds: Vec::new(),
        original_seconds: 0.0,
    }
}

fn add_passes(totals: &mut Vec<PassTotal>, summary: &Summary) {
    for p in &summary.passes {
        let i = match totals.iter().position(|t| t.name == p.name) {
            Some(i) => i,
            None => {
                totals.push(PassTotal {
                    name: p.name.to_string(),
                    ..PassTotal::default()
                });
                totals.len() - 1
            }
        };
        let t = &mut totals[i];
        t.candidates += p.candidates;
        t.accepted += p.accepted;
        t.bytes_removed += p.bytes_removed;
        t.oracle_seconds += p.oracle_seconds;
        t.pumps_kept += p.pumps_kept;
        t.pumps_rolled_back += p.pumps_rolled_back;
    }
}

/// The cases table, the skipped cases, and the per-pass table.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    out.push_str("| case | lines | bytes | reduction | oracle calls | cache hits | wall s | fixed s | original s | calls ÷ m·log2(n/m) | verified | bound met |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in report.cases.iter().filter(|c| c.skipped.is_none()) {
        let reduction = 100.0 * (1.0 - c.final_bytes as f64 / c.original_bytes.max(1) as f64);
        let ratio = c
            .lower_bound_ratio
            .map_or("–".to_string(), |r| format!("{r:.1}"));
        let _ = writeln!(
            out,
            "| {} | {} → {} | {} → {} | {reduction:.0} % | {} | {} | {:.1} | {:.1} | {:.1} | {ratio} | {} | {} (≤ {}) |",
            c.name,
            c.original_lines,
            c.final_lines,
            c.original_bytes,
            c.final_bytes,
            c.oracle_calls,
            c.cache_hits,
            c.wall_seconds,
            c.fixed_seconds(),
            c.original_seconds,
            if c.verified { "yes" } else { "no" },
            if c.bound_met { "yes" } else { "NO" },
            c.bound
        );
    }
    out.push_str(&medians(report));
    let ladders: Vec<&CaseRow> = report
        .cases
        .iter()
        .filter(|c| !c.ladder.is_empty())
        .collect();
    if !ladders.is_empty() {
        out.push_str("\n| case | ladder (✓ still fails there, ✗ needs what it had, – not tried) |\n|---|---|\n");
        for c in ladders {
            let rungs: Vec<String> = c
                .ladder
                .iter()
                .map(|r| {
                    let mark = match r.state {
                        crate::engine::ladder::State::Held => "✓",
                        crate::engine::ladder::State::DidNotHold => "✗",
                        crate::engine::ladder::State::NotTried => "–",
                    };
                    format!("{} {mark}", r.rung)
                })
                .collect();
            let _ = writeln!(out, "| {} | {} |", c.name, rungs.join(", "));
        }
    }
    let staged: Vec<&CaseRow> = report
        .cases
        .iter()
        .filter(|c| !c.stages.is_empty())
        .collect();
    if !staged.is_empty() {
        out.push_str("\n| case | minifier queries | minifier runs | minifier s | minifier's own result, lines | outcome | scrub's result, lines | wall s in all |\n|---|---|---|---|---|---|---|---|\n");
        for c in staged {
            for s in &c.stages {
                let or_dash = |n: Option<usize>| n.map_or("–".to_string(), |n| n.to_string());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {:.1} | {} | {} | {} | {:.1} |",
                    c.name,
                    or_dash(s.queries),
                    s.runs,
                    s.seconds,
                    or_dash(s.output_lines),
                    s.outcome,
                    c.final_lines,
                    c.wall_seconds
                );
            }
        }
    }
    for c in report.cases.iter().filter(|c| c.skipped.is_some()) {
        let _ = writeln!(out, "\n{}: {}", c.name, c.skipped.as_deref().unwrap_or(""));
    }
    out.push_str(
        "\n| pass | candidates | accepted | bytes removed | oracle s | bytes per oracle s | pumps kept / rolled back |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for p in &report.passes {
        let rate = if p.oracle_seconds > 0.0 {
            p.bytes_removed as f64 / p.oracle_seconds
        } else {
            0.0
        };
        let pumps = if p.pumps_kept + p.pumps_rolled_back > 0 {
            format!("{} / {}", p.pumps_kept, p.pumps_rolled_back)
        } else {
            "–".to_string()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.1} | {rate:.0} | {pumps} |",
            p.name, p.candidates, p.accepted, p.bytes_removed, p.oracle_seconds
        );
    }
    out
}

/// The median case's figures: its wall time, its fixed cost, and how far that cost is past
/// one fresh run of its original (what a reduction cannot do without).
fn medians(report: &Report) -> String {
    let ran: Vec<&CaseRow> = report
        .cases
        .iter()
        .filter(|c| c.skipped.is_none())
        .collect();
    if ran.is_empty() {
        return String::new();
    }
    let median = |f: &dyn Fn(&CaseRow) -> f64| median(ran.iter().map(|c| f(c)));
    format!(
        "\nMedian per case: wall {:.1} s, oracle calls {:.0}, fixed cost {:.1} s, the original's fresh run {:.1} s, fixed cost past that run {:.1} s.\n",
        median(&|c| c.wall_seconds),
        median(&|c| c.oracle_calls as f64),
        median(&|c| c.fixed_seconds()),
        median(&|c| c.original_seconds),
        median(&|c| c.fixed_seconds() - c.original_seconds),
    )
}

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// For every case that ran PyTorch's minifier first here and not in `baseline` (a
/// `--minifier never` run): the minifier alone (its own result's size), scrub alone, and scrub
/// with the stage, side by side; and how long the stage's reduction took past the minifier's
/// own time. Empty when there is no such case.
pub fn side_by_side(report: &Report, baseline: &Report) -> String {
    let mut out = String::new();
    for c in report.cases.iter().filter(|c| c.skipped.is_none()) {
        let Some(stage) = c.stages.iter().find(|s| s.name == "minifier") else {
            continue;
        };
        let Some(alone) = baseline
            .cases
            .iter()
            .find(|o| o.name == c.name && o.skipped.is_none() && o.stages.is_empty())
        else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\n| case | PyTorch minifier alone | scrub alone | scrub with the minifier stage | past the minifier's own time |\n|---|---|---|---|---|\n");
        }
        let queries = stage
            .queries
            .map_or(String::new(), |q| format!("{q} queries, "));
        let lines = stage
            .output_lines
            .map_or("–".to_string(), |n| format!("{n} lines"));
        let _ = writeln!(
            out,
            "| {} | {queries}{:.0} s → {lines} | {} runs, {:.0} s → {} lines | {} runs, {:.0} s → {} lines ({}) | {:+.0} s |",
            c.name,
            stage.seconds,
            alone.oracle_calls,
            alone.wall_seconds,
            alone.final_lines,
            c.oracle_calls,
            c.wall_seconds,
            c.final_lines,
            stage.outcome,
            c.wall_seconds - stage.seconds
        );
    }
    out
}

/// Every case present in both reports, with size and time ratios; a case that got bigger or
/// slower is marked.
pub fn comparison(report: &Report, baseline: &Report) -> String {
    let mut out = String::from(
        "\n| case | final bytes (new ÷ old) | oracle calls (new ÷ old) | wall (new ÷ old) | ms per call (new, old) | same output | |\n|---|---|---|---|---|---|---|\n",
    );
    for (c, old) in pairs(report, baseline) {
        let ratio = |new: f64, old: f64| if old > 0.0 { new / old } else { 1.0 };
        let size = ratio(c.final_bytes as f64, old.final_bytes as f64);
        let calls = ratio(c.oracle_calls as f64, old.oracle_calls as f64);
        let wall = ratio(c.wall_seconds, old.wall_seconds);
        // Wall time on a shared machine is noisy: a quarter more counts as slower.
        let mark = match (size > 1.0, calls > 1.0 || wall > 1.25) {
            (true, true) => "bigger, slower",
            (true, false) => "bigger",
            (false, true) => "slower",
            (false, false) => "",
        };
        let per_call = |r: &CaseRow| 1000.0 * r.wall_seconds / r.oracle_calls.max(1) as f64;
        let same = match (c.final_text.is_empty(), old.final_text.is_empty()) {
            (false, false) if c.final_text == old.final_text => "yes",
            (false, false) => "no",
            _ => "–",
        };
        let _ = writeln!(
            out,
            "| {} | {size:.2} | {calls:.2} | {wall:.2} | {:.0}, {:.0} | {same} | {mark} |",
            c.name,
            per_call(c),
            per_call(old)
        );
    }
    let _ = writeln!(out, "{}", per_candidate(report, baseline));
    let walls = |pick: fn((&CaseRow, &CaseRow)) -> f64| median(pairs(report, baseline).map(pick));
    let (new, old) = (
        walls(|(c, _)| c.wall_seconds),
        walls(|(_, o)| o.wall_seconds),
    );
    let _ = writeln!(
        out,
        "Median wall per case, the cases in both: new {new:.1} s, old {old:.1} s; new ÷ old {:.2}",
        if old > 0.0 { new / old } else { 1.0 }
    );
    out
}

/// Each case that ran in both reports, as (in `report`, in `baseline`).
fn pairs<'a>(
    report: &'a Report,
    baseline: &'a Report,
) -> impl Iterator<Item = (&'a CaseRow, &'a CaseRow)> {
    let ran = |c: &&CaseRow| c.skipped.is_none();
    report.cases.iter().filter(ran).filter_map(move |c| {
        let old = baseline
            .cases
            .iter()
            .filter(ran)
            .find(|o| o.name == c.name)?;
        Some((c, old))
    })
}

/// The seconds a case spent on candidates: its wall time outside the fixed cost.
fn candidate_seconds(row: &CaseRow) -> f64 {
    (row.wall_seconds - row.fixed_seconds()).max(0.0)
}

/// Milliseconds a candidate, new against old, over the cases both reports ran: the seconds
/// outside each case's fixed cost (the original's runs, the warm-up, the control, the final
/// check) over the oracle calls. The fixed cost is the same cold runs in either mode, so it
/// is left out of what a warm worker saves per candidate.
fn per_candidate(report: &Report, baseline: &Report) -> String {
    let (mut new, mut old) = ((0.0, 0), (0.0, 0));
    for (c, o) in pairs(report, baseline) {
        new = (new.0 + candidate_seconds(c), new.1 + c.oracle_calls);
        old = (old.0 + candidate_seconds(o), old.1 + o.oracle_calls);
    }
    let ms = |(seconds, calls): (f64, usize)| 1000.0 * seconds / calls.max(1) as f64;
    let ratio = if ms(old) > 0.0 {
        ms(new) / ms(old)
    } else {
        1.0
    };
    format!(
        "\nPer candidate, the cases in both (wall outside the fixed cost ÷ oracle calls): new {:.2} ms ({} calls, {:.1} s), old {:.2} ms ({} calls, {:.1} s); new ÷ old {ratio:.3}",
        ms(new),
        new.1,
        new.0,
        ms(old),
        old.1,
        old.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::minifier::Stage;

    fn row(name: &str, calls: usize, seconds: f64, lines: usize, stages: Vec<Stage>) -> CaseRow {
        CaseRow {
            name: name.into(),
            final_lines: lines,
            oracle_calls: calls,
            wall_seconds: seconds,
            stages,
            ..skipped_row(name)
        }
    }

    fn skipped_row(name: &str) -> CaseRow {
        let case = Case {
            name: name.into(),
            dir: PathBuf::new(),
            spec: toml::from_str("signature = \"E\"\nbound = 1\nhand_bound = 1").unwrap(),
        };
        let mut r = skipped(&case, String::new());
        r.skipped = None;
        r
    }

    #[test]
    fn the_side_by_side_table_sets_the_minifier_beside_scrub_alone() {
        let stage = Stage {
            name: "minifier".into(),
            queries: Some(29),
            output_lines: Some(59),
            runs: 3,
            seconds: 178.4,
            dump_seconds: 20.0,
            outcome: "used".into(),
        };
        let with = Report {
            cases: vec![
                row("kernel", 144, 302.5, 5, vec![stage]),
                row("plain", 20, 1.0, 1, Vec::new()),
            ],
            passes: Vec::new(),
            vs: Vec::new(),
        };
        let alone = Report {
            cases: vec![
                row("kernel", 480, 900.0, 51, Vec::new()),
                row("plain", 20, 1.0, 1, Vec::new()),
            ],
            passes: Vec::new(),
            vs: Vec::new(),
        };
        let table = side_by_side(&with, &alone);
        assert!(
            table.contains("| kernel | 29 queries, 178 s → 59 lines | 480 runs, 900 s → 51 lines | 144 runs, 302 s → 5 lines (used) | +124 s |"),
            "{table}"
        );
        assert!(!table.contains("| plain |"), "{table}");
        assert_eq!(side_by_side(&with, &with), "");
    }

    #[test]
    fn the_time_per_candidate_leaves_out_the_fixed_cost() {
        let mut warm = row("case", 100, 3.0, 1, Vec::new());
        warm.stage_seconds = vec![
            ("baseline".into(), 1.0),
            ("passes".into(), 1.5),
            ("verify".into(), 1.0),
        ];
        let mut cold = row("case", 100, 11.0, 1, Vec::new());
        cold.stage_seconds = vec![("baseline".into(), 1.0), ("verify".into(), 1.0)];
        let report = |rows: Vec<CaseRow>| Report {
            cases: rows,
            passes: Vec::new(),
            vs: Vec::new(),
        };
        let line = per_candidate(
            &report(vec![warm, row("only_new", 10, 9.0, 1, Vec::new())]),
            &report(vec![cold]),
        );
        assert!(
            line.contains(
                "new 10.00 ms (100 calls, 1.0 s), old 90.00 ms (100 calls, 9.0 s); new ÷ old 0.111"
            ),
            "{line}"
        );
    }

    #[test]
    fn the_median_case_shows_its_fixed_cost_past_one_run_of_its_original() {
        let case = |name: &str, wall: f64, fixed: f64, original: f64| {
            let mut c = row(name, 10, wall, 1, Vec::new());
            c.stage_seconds = vec![("baseline".into(), fixed), ("passes".into(), 1.0)];
            c.original_seconds = original;
            c
        };
        let report = Report {
            cases: vec![
                case("a", 4.0, 3.0, 2.0),
                case("b", 9.0, 5.0, 2.5),
                case("c", 30.0, 20.0, 10.0),
                CaseRow {
                    skipped: Some("needs torch".into()),
                    ..skipped_row("d")
                },
            ],
            passes: Vec::new(),
            vs: Vec::new(),
        };
        let line = medians(&report);
        assert!(
            line.contains("wall 9.0 s, oracle calls 10, fixed cost 5.0 s, the original's fresh run 2.5 s, fixed cost past that run 2.5 s"),
            "{line}"
        );
        assert_eq!(median([1.0, 4.0, 2.0, 3.0].into_iter()), 2.5);
    }
}
