//! `scrub bench --vs`: peer reducers beside scrub, on the same cases under the same oracle.
//!
//! Each peer reduces a case through an interestingness test written from the case's oracle
//! (see [`crate::peers`]), for at most a budget of wall time. Every tool's result, scrub's
//! included, is then judged again by scrub's oracle and its same-bug checks (see
//! [`crate::engine::judge`]) and by the case's `keeps`: a result that lost the bug is shown as
//! lost, whatever its size.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::bench::CaseRow;
use crate::chart::Mark;
use crate::cli::BenchArgs;
use crate::corpus::Case;
use crate::engine::judge::{Judge, Judged};
use crate::engine::reduce::Options;
use crate::peers::{Installed, Peer};

/// One tool's result on one case, as `--json` writes it (`vs` in the report).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VsRow {
    pub case: String,
    /// `scrub`, or a peer's name.
    pub tool: String,
    pub version: String,
    /// Candidates the tool runs at once.
    pub at_once: usize,
    pub original_lines: usize,
    pub original_bytes: usize,
    pub lines: usize,
    pub bytes: usize,
    /// Runs of a candidate (scrub's oracle calls, or the peer's runs of its test).
    pub runs: usize,
    pub wall_seconds: f64,
    /// The result fails the same way as the original, by scrub's checks and the case's
    /// `keeps`.
    pub same_bug: bool,
    /// Why it is another bug, when it is.
    pub lost: Option<String>,
    /// Stopped by the budget: the result is its best so far.
    pub cut: bool,
    /// Why the tool gave up (its result is then what it accepted before, or the original).
    #[serde(default)]
    pub gave_up: Option<String>,
    /// The case's hand bound (the size of its hand-minimal script), and whether the result
    /// is within the case's bound.
    pub hand_bound: usize,
    pub bound_met: bool,
    pub final_text: String,
}

/// What `--vs` adds to a bench run: the peers found, and a crash line for each peer that
/// crashed on a case.
pub struct Vs {
    pub peers: Vec<Installed>,
    pub budget: Duration,
    pub jobs: usize,
    pub rows: Vec<VsRow>,
    pub crashes: Vec<String>,
}

impl Vs {
    /// The peers `args` names, each found installed; `Err` is one line: a peer that cannot
    /// run, or a budget that is not a time.
    pub fn new(args: &BenchArgs) -> Result<Option<Vs>> {
        if args.vs.is_empty() {
            return Ok(None);
        }
        if !(args.budget > 0.0 && args.budget.is_finite()) {
            anyhow::bail!("--budget must be a positive number of seconds");
        }
        let mut wanted: Vec<Peer> = Vec::new();
        for peer in &args.vs {
            if !wanted.contains(peer) {
                wanted.push(*peer);
            }
        }
        let peers = wanted
            .into_iter()
            .map(Peer::locate)
            .collect::<Result<Vec<_>>>()?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Some(Vs {
            peers,
            budget: Duration::from_secs_f64(args.budget),
            jobs: args.jobs.unwrap_or(cores),
            rows: Vec::new(),
            crashes: Vec::new(),
        }))
    }

    /// Judges scrub's result on `case` (its row in the bench), then runs every peer on the
    /// case and judges theirs.
    pub fn compare(&mut self, case: &Case, scrub: &CaseRow, args: &BenchArgs) -> Result<()> {
        let original = std::fs::read_to_string(case.script())?;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("repro.py");
        std::fs::write(&file, &original)?;
        let options = Options {
            sig: (!case.spec.derive).then(|| case.spec.signature.clone()),
            execution: args.execution(),
            quiet: true,
            ..Options::new(&file)
        };
        let Some(mut judge) = Judge::of(&options)? else {
            self.crashes.push(format!(
                "{}: the original does not fail with its signature here",
                case.name
            ));
            return Ok(());
        };
        // A flaky original may fail every time in one baseline and not in another: every
        // tool gets the attempts that scrub's own reduction gave its candidates.
        judge.attempts = judge.attempts.max(scrub.attempts_per_candidate);
        let mut row = Made {
            text: scrub.final_text.clone(),
            runs: scrub.oracle_calls,
            wall_seconds: scrub.wall_seconds,
            cut: false,
            gave_up: None,
        };
        let version = env!("SCRUB_VERSION");
        self.push(case, &original, &judge, ("scrub", version, self.jobs), &row)?;
        for peer in &self.peers.clone() {
            if !args.quiet {
                eprintln!("bench: {} with {}", case.name, peer.peer.name());
            }
            let work = tempfile::tempdir()?;
            match peer.reduce(&original, &judge, self.budget, self.jobs, work.path()) {
                Ok(run) => {
                    row = Made {
                        text: run.text,
                        runs: run.runs,
                        wall_seconds: run.wall_seconds,
                        cut: run.cut,
                        gave_up: run.gave_up,
                    };
                    let at_once = peer.peer.at_once(self.jobs);
                    self.push(
                        case,
                        &original,
                        &judge,
                        (peer.peer.name(), peer.version, at_once),
                        &row,
                    )?;
                }
                Err(e) if e.is::<crate::engine::process::Interrupted>() => return Err(e),
                Err(e) => {
                    // The peer's files stay for a look at what went wrong.
                    let kept = work.keep();
                    self.crashes.push(format!(
                        "{} crashed on {}: {e:#} (its files are in {})",
                        peer.peer.name(),
                        case.name,
                        kept.display()
                    ));
                }
            }
        }
        Ok(())
    }

    /// Judges `result` of `tool` (name, version, candidates at once) and adds its row.
    fn push(
        &mut self,
        case: &Case,
        original: &str,
        judge: &Judge,
        (tool, version, at_once): (&str, &str, usize),
        result: &Made,
    ) -> Result<()> {
        let lost = match judge.judge(&result.text)? {
            Judged::Same(outcome) => case
                .spec
                .keeps
                .iter()
                .find(|k| !outcome.stderr.contains(k.as_str()))
                .map(|k| format!("its failure no longer shows {k:?}")),
            Judged::Lost(why) => Some(why),
        };
        let lines = scrub_reducers::count_lines(&result.text);
        self.rows.push(VsRow {
            case: case.name.clone(),
            tool: tool.to_string(),
            version: version.to_string(),
            at_once,
            original_lines: scrub_reducers::count_lines(original),
            original_bytes: original.len(),
            lines,
            bytes: result.text.len(),
            runs: result.runs,
            wall_seconds: result.wall_seconds,
            same_bug: lost.is_none(),
            lost,
            cut: result.cut,
            gave_up: result.gave_up.clone(),
            hand_bound: case.spec.hand_bound,
            bound_met: lines <= case.spec.bound,
            final_text: result.text.clone(),
        });
        Ok(())
    }

    /// The tables, and the line that says how the tools ran.
    pub fn markdown(&self) -> String {
        let mut out = String::from("\n");
        out.push_str(&rows_table(&self.rows));
        out.push('\n');
        out.push_str(&totals_table(&self.rows));
        let tools: Vec<String> = std::iter::once(format!("scrub {} (--jobs)", self.jobs))
            .chain(self.peers.iter().map(|p| {
                let how = match p.peer {
                    Peer::Shrinkray => " (--parallelism)",
                    _ => "",
                };
                format!("{} {}{how}", p.peer.name(), p.peer.at_once(self.jobs))
            }))
            .collect();
        let _ = writeln!(
            out,
            "\nCandidates at once: {}. Budget per case and peer: {} s of wall time (scrub runs to its fixpoint). Versions: {}.",
            tools.join(", "),
            self.budget.as_secs_f64(),
            self.peers
                .iter()
                .map(|p| format!("{} {}", p.peer.name(), p.version))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out
    }

    /// The size-against-time chart beside the reduction curves `svg` names: `NAME-vs.svg`.
    pub fn chart(&self, svg: &Path) -> Result<()> {
        let stem = svg.file_stem().unwrap_or_default().to_string_lossy();
        let marks: Vec<Mark> = self
            .rows
            .iter()
            .map(|r| Mark {
                tool: &r.tool,
                wall_seconds: r.wall_seconds,
                bytes: r.bytes,
                same_bug: r.same_bug,
                cut: r.cut,
            })
            .collect();
        crate::chart::size_against_time(&marks, &svg.with_file_name(format!("{stem}-vs.svg")))
    }
}

/// What a tool left of a case, before it is judged.
struct Made {
    text: String,
    runs: usize,
    wall_seconds: f64,
    cut: bool,
    gave_up: Option<String>,
}

/// One row per case and tool.
pub fn rows_table(rows: &[VsRow]) -> String {
    let mut out = String::from(
        "| case (hand) | tool | lines | bytes | candidate runs | wall s | same bug | cut |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut last_case = "";
    for r in rows {
        let case = if r.case == last_case {
            String::new()
        } else {
            format!("{} ({})", r.case, r.hand_bound)
        };
        last_case = &r.case;
        let same = match &r.lost {
            None => "yes".to_string(),
            Some(why) => format!("**lost**: {}", why.replace('|', "\\|")),
        };
        let _ = writeln!(
            out,
            "| {case} | {} | {} → {} | {} → {} | {} | {:.1} | {same} | {} |",
            r.tool,
            r.original_lines,
            r.lines,
            r.original_bytes,
            r.bytes,
            r.runs,
            r.wall_seconds,
            match (r.cut, &r.gave_up) {
                (true, _) => "cut",
                (false, Some(_)) => "gave up",
                (false, None) => "",
            }
        );
    }
    for r in rows {
        if let Some(why) = &r.gave_up {
            let _ = writeln!(out, "\n{} gave up on {}: {why}", r.tool, r.case);
        }
    }
    out
}

/// One row per tool: how many results kept the bug, and the sums.
pub fn totals_table(rows: &[VsRow]) -> String {
    let mut out = String::from(
        "| tool | cases | same bug | lost | cut | within the bound, same bug | lines in all | bytes in all | candidate runs in all | wall s in all |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let mut tools: Vec<&str> = Vec::new();
    for r in rows {
        if !tools.contains(&r.tool.as_str()) {
            tools.push(&r.tool);
        }
    }
    for tool in tools {
        let mine: Vec<&VsRow> = rows.iter().filter(|r| r.tool == tool).collect();
        let count = |f: &dyn Fn(&VsRow) -> bool| mine.iter().filter(|r| f(r)).count();
        let _ = writeln!(
            out,
            "| {tool} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
            mine.len(),
            count(&|r| r.same_bug),
            count(&|r| !r.same_bug),
            count(&|r| r.cut),
            count(&|r| r.same_bug && r.bound_met),
            mine.iter().map(|r| r.lines).sum::<usize>(),
            mine.iter().map(|r| r.bytes).sum::<usize>(),
            mine.iter().map(|r| r.runs).sum::<usize>(),
            mine.iter().map(|r| r.wall_seconds).sum::<f64>()
        );
    }
    out
}
