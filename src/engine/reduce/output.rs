//! What a reduction leaves: the run log's account of how it was set up, the result and its
//! diff (or, on Ctrl-C, the best script so far), and the figures `--json` prints.

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};
use scrub_reducers::python::count_statements;
use scrub_reducers::{StopReason, count_lines};
use serde::Serialize;

use super::passes::Looped;
use super::{Ground, Reduction, input};
use crate::engine::memory::human;
use scrub_reducers::fix::Fix;

/// The figures of one reduction, as `--json` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub input: PathBuf,
    pub output: PathBuf,
    pub run_dir: PathBuf,
    pub signature: String,
    /// What else the signature keeps, when derived from the original run: the inner error or
    /// detail lines (`and: …`) and the cause it was raised from (`cause: …`), abstracted.
    pub signature_names: Vec<String>,
    /// The library functions that called back into the script on the original's failing
    /// stack (a `vmap`, a pool's worker), which every accepted candidate kept.
    pub through: Vec<String>,
    /// Candidate runs that failed with the class but not the rest of the signature or anchor.
    pub near_misses: usize,
    /// The calls the original makes into libraries on its failing path, with the kinds of
    /// the values it hands them, which every accepted candidate kept (see `engine::kinds`).
    pub kinds: Vec<String>,
    /// Of the near misses, the candidates whose calls into libraries received a value of
    /// another kind, or whose failing call lost a positional argument: a user's mistake.
    pub kind_near_misses: usize,
    /// Candidates that failed the same way and whose control failed too (the same failure
    /// without the suspect or the transform: a user's mistake).
    pub control_near_misses: usize,
    /// Where the original failed outside the script (`torch/_dynamo/exc.py:unimplemented`),
    /// which every accepted candidate kept; `None` when the script raised it itself.
    pub site: Option<String>,
    /// The suspect whose control every accepted candidate passed (`torch.compile → eager`);
    /// `None` when no control guarded the reduction.
    pub control: Option<&'static str>,
    /// The edit of the script's own code that made the original pass and every accepted
    /// candidate pass too (`X - 1 → X`), when one was found.
    pub fix: Option<String>,
    /// A mismatch reduced without a control: nothing checked that the bug stayed.
    pub unguarded: bool,
    /// How the control was chosen, or why there is none (as `run.log` says it).
    pub control_note: String,
    /// How the original failed with each suspect replaced by its reference (`torch.compile →
    /// eager: it raised …`), when none of those controls passed: the failure may be the
    /// script's own mistake rather than the suspect's.
    pub fails_without_suspect: Option<String>,
    /// Control runs, counted in `oracle_calls` too.
    pub control_runs: usize,
    /// Whether candidates were forked from warm workers: the original failed the same way
    /// there as in a fresh process (else, or with `--cold`, every run was a fresh process).
    pub warm: bool,
    /// Whether warm candidates ran in their worker's own process rather than a fork of it.
    pub in_process: bool,
    /// Candidates run at once, and the GPU ids the workers were pinned to (round robin).
    pub jobs: usize,
    pub gpus: Vec<String>,
    pub original_lines: usize,
    pub original_bytes: usize,
    pub final_lines: usize,
    pub final_bytes: usize,
    pub oracle_calls: usize,
    pub cache_hits: usize,
    pub wall_seconds: f64,
    pub stop_reason: &'static str,
    /// Whether the loop's own result held in a fresh run (else an earlier one was written).
    pub verified: bool,
    /// Where a fresh run rejected what the warm workers accepted, and the reduction went on
    /// cold from the step before.
    pub divergence: Option<Divergence>,
    /// Statements at every level, before and after.
    pub original_statements: usize,
    pub final_statements: usize,
    pub rounds: usize,
    pub attempts_per_candidate: usize,
    pub reproduce_ratio: String,
    pub passes: Vec<PassRow>,
    /// (candidate runs so far, non-blank lines) after every accepted step.
    pub trace: Vec<(usize, usize)>,
    /// For a PyTorch repro: the simplifications the failure survived.
    pub ladder: Vec<crate::engine::ladder::Rung>,
    /// The rewrites made before the reduction, which it starts from (see `prepare`).
    pub prepared: Vec<String>,
    /// The memory a candidate's process group could hold, in bytes (`None`: no limit).
    pub max_memory: Option<u64>,
    /// What ran before scrub's passes (PyTorch's minifier), each with its figures.
    pub stages: Vec<crate::engine::minifier::Stage>,
    /// Where the wall time went, stage by stage: the input's checks, the original's runs,
    /// its control, the warm workers, PyTorch's minifier, the passes, the final check and
    /// the ladder.
    pub stage_seconds: Vec<super::Lap>,
    /// The original's fresh run, in seconds: what the fixed cost is held to.
    pub original_seconds: f64,
    /// The most memory the original's runs and the largest candidate run held, in bytes.
    pub peak_rss_original: u64,
    pub peak_rss_candidate: u64,
    /// What the warm candidates' compiles found in the reduction's own inductor cache
    /// (`None`: the script has no torch, the user named a cache, or the runs were remote).
    pub inductor_cache: Option<crate::engine::inductor_cache::Counts>,
}

/// Warm verdicts that a fresh run contradicted (see `Reduction::resume`).
#[derive(Debug, Clone, Serialize)]
pub struct Divergence {
    /// Accepted steps that a fresh run rejected, of those the check ran.
    pub contradicted: usize,
    /// The first rejected step found (its number among the accepted ones), and what made it.
    pub step: usize,
    pub did: String,
    /// The step the reduction went on from, cold, and its lines.
    pub resumed_from: usize,
    pub lines_resumed: usize,
}

impl Divergence {
    pub fn describe(&self) -> String {
        format!(
            "a fresh run rejected {} step(s) the warm workers accepted, first step {} ({}); going on cold from step {} ({} lines)",
            self.contradicted, self.step, self.did, self.resumed_from, self.lines_resumed
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PassRow {
    pub name: &'static str,
    pub candidates: usize,
    pub accepted: usize,
    pub bytes_removed: usize,
    pub oracle_seconds: f64,
    /// Pumps that grew the script and paid off after the next round, and those rolled back.
    pub pumps_kept: usize,
    pub pumps_rolled_back: usize,
}

/// The result written, and what the stages around the passes found.
pub(super) struct Final {
    pub(super) text: String,
    /// Whether it is the loop's own result (see [`Summary::verified`]).
    pub(super) verified: bool,
    pub(super) divergence: Option<Divergence>,
    pub(super) ladder: Vec<crate::engine::ladder::Rung>,
    pub(super) stages: Vec<crate::engine::minifier::Stage>,
}

impl Reduction<'_> {
    /// The run log's account of what the reduction stands on.
    pub(super) fn log_ground(&self, ground: &Ground) {
        let (run_dir, sig, anchor) = (
            &ground.run_dir,
            &ground.criteria.sig,
            &ground.criteria.anchor,
        );
        let (guard, workers, warm) = (&ground.guard, &self.workers, ground.warm());
        run_dir.log(format!(
            "input: {}\nsignature: {sig}{}\ninterpreter: {}",
            self.options.file.display(),
            sig.names()
                .iter()
                .map(|n| format!("\n  {n}"))
                .collect::<String>(),
            self.interp.identity()
        ));
        if !ground.criteria.kinds.is_empty() {
            run_dir.log(format!(
                "kinds: every candidate's calls into libraries keep these: {}",
                crate::engine::kinds::describe(&ground.criteria.kinds)
            ));
        }
        run_dir.log(format!(
            "control: {}{}",
            guard.note,
            if guard.unguarded {
                "; the result is unguarded"
            } else {
                ""
            }
        ));
        if !ground.criteria.custom_run.is_empty() {
            run_dir.log(format!(
                "control: the custom code's statements stay as written, and these of its calls, which ran in the original, run in every candidate: {}",
                ground.criteria.custom_run.join(", ")
            ));
        }
        run_dir.log(format!(
            "workers: {} {}, {}",
            workers.jobs,
            match (warm, workers.in_process) {
                (true, true) => "warm, each candidate in its worker's own process",
                (true, false) => "warm, each candidate a fork of its worker",
                (false, _) => "cold",
            },
            if workers.gpus.is_empty() {
                "no GPU pinning".to_string()
            } else {
                format!(
                    "pinned round robin to CUDA_VISIBLE_DEVICES {}",
                    workers.gpus.join(",")
                )
            }
        ));
        run_dir.log(format!(
            "site: {}",
            anchor
                .site
                .as_deref()
                .unwrap_or("none (the script raises it itself)")
        ));
        if let Some(entry) = &anchor.entry {
            run_dir.log(format!(
                "entered at: {entry} (a candidate that calls another entry of that file is a near miss)"
            ));
        }
        if !anchor.through.is_empty() {
            run_dir.log(format!(
                "called back through: {} (a candidate without it is a near miss)",
                anchor.through.join(", ")
            ));
        }
        if !anchor.computed.is_empty() {
            run_dir.log(format!(
                "computed values kept: {}",
                anchor.computed.join(", ")
            ));
        }
        run_dir.log(format!(
            "attempts per candidate: {} (original reproduced {}{})",
            ground.base.attempts,
            ground.base.ratio,
            match ground.base.prior_runs {
                0 => String::new(),
                n => format!("; {n} of its runs were made before the reduction"),
            }
        ));
        run_dir.log(format!(
            "timeout per candidate: {:.1} s{}, jobs: {}",
            workers.timeout.as_secs_f64(),
            workers
                .warm_timeout
                .map(|t| format!(" cold, {:.1} s warm", t.as_secs_f64()))
                .unwrap_or_default(),
            self.jobs_note
                .clone()
                .unwrap_or_else(|| workers.jobs.to_string())
        ));
        run_dir.log(format!(
            "memory per candidate: {}; the original held {}",
            workers.max_memory.map_or("no limit".to_string(), human),
            human(ground.base.peak_rss)
        ));
        run_dir.log(format!(
            "workers: {}",
            match &ground.cold_why {
                None => workers.backend.describe(),
                Some(why) => format!("cold: {why}"),
            }
        ));
    }

    /// On Ctrl-C in the loop: the best script so far, written beside the output (never under
    /// its name), and said.
    pub(super) fn interrupted(&self, looped: &Looped) -> Result<Option<PathBuf>> {
        let reduction = &looped.reduction;
        if reduction.stop != StopReason::Interrupted {
            return Ok(None);
        }
        let partial = input::with_suffix(&self.output, ".partial.py");
        fs::write(&partial, &reduction.text)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        eprintln!(
            "scrub: interrupted; the best script so far ({} lines, not re-verified) is in {}",
            count_lines(&reduction.text),
            partial.display()
        );
        Ok(Some(partial))
    }

    /// Writes `result` as the output, and its diff from the input in the run directory.
    pub(super) fn write(&self, result: &str, ground: &Ground) -> Result<()> {
        let output = &self.output;
        fs::write(output, result).with_context(|| format!("cannot write {}", output.display()))?;
        let diff = similar::TextDiff::from_lines(self.text.as_str(), result)
            .unified_diff()
            .header(
                &self.options.file.display().to_string(),
                &output.display().to_string(),
            )
            .to_string();
        ground.run_dir.write("result.diff", &diff)
    }

    /// The figures of the reduction that ended with `result`, logged and said too.
    pub(super) fn summary(self, ground: &Ground, looped: Looped, result: Final) -> Summary {
        let (text, console, run_dir) = (&self.text, &self.console, &ground.run_dir);
        let counts = &looped.counts;
        let wall = console.elapsed().as_secs_f64();
        let stop_reason = if result.text == *text {
            "already_minimal"
        } else {
            looped.reduction.stop.as_str()
        };
        run_dir.log(format!(
            "stop: {stop_reason}; runs: {}; cache hits: {}; near misses: {}; {wall:.1} s; the largest candidate held {}",
            counts.calls,
            counts.hits,
            counts.near_misses,
            human(looped.peak_rss)
        ));
        run_dir.log(format!(
            "speculative runs made stale by a win: {}",
            looped.reduction.speculative_wasted
        ));
        let inductor = self.workers.inductor.as_ref().map(|cache| {
            let counts = cache.counts();
            run_dir.log(format!(
                "inductor cache: {} (this reduction's, removed at its end): {}",
                cache.path().display(),
                counts.describe()
            ));
            counts
        });
        let laps = &self.clock.laps;
        run_dir.log(format!(
            "time: {}",
            laps.iter()
                .map(|lap| format!("{} {:.1} s", lap.stage, lap.seconds))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        console.say(format!(
            "{}: {} → {} lines, {} → {} bytes; {} runs, {} cache hits, {wall:.1} s; wrote {}",
            self.options.file.display(),
            count_lines(text),
            count_lines(&result.text),
            text.len(),
            result.text.len(),
            counts.calls,
            counts.hits,
            self.output.display()
        ));
        let (criteria, guard, version) =
            (&ground.criteria, &ground.guard, self.interp.parser_version);
        Summary {
            input: self.options.file.clone(),
            output: self.output.clone(),
            run_dir: run_dir.path().to_path_buf(),
            signature: criteria.sig.to_string(),
            signature_names: criteria.sig.names(),
            through: criteria.anchor.through.clone(),
            near_misses: counts.near_misses,
            kinds: criteria
                .kinds
                .iter()
                .map(crate::engine::kinds::Call::describe)
                .collect(),
            kind_near_misses: counts.kind_misses,
            control_near_misses: counts.control_misses,
            site: criteria.anchor.site.clone(),
            control: guard.control.as_ref().map(|c| c.suspect.as_str()),
            fix: guard
                .control
                .as_ref()
                .and_then(|c| c.fix.as_ref().map(Fix::describe)),
            unguarded: guard.unguarded,
            control_note: guard.note.clone(),
            fails_without_suspect: guard.fails_without_suspect.clone(),
            control_runs: counts.control_calls,
            warm: ground.warm(),
            in_process: ground.warm() && self.workers.in_process,
            jobs: self.workers.jobs,
            gpus: self.workers.gpus.clone(),
            original_lines: count_lines(text),
            original_bytes: text.len(),
            final_lines: count_lines(&result.text),
            final_bytes: result.text.len(),
            oracle_calls: counts.calls,
            cache_hits: counts.hits,
            wall_seconds: (wall * 1000.0).round() / 1000.0,
            stop_reason,
            verified: result.verified,
            divergence: result.divergence,
            original_statements: count_statements(text, version),
            final_statements: count_statements(&result.text, version),
            rounds: looped.reduction.rounds,
            attempts_per_candidate: criteria.attempts,
            reproduce_ratio: ground.base.ratio.clone(),
            passes: looped
                .reduction
                .passes
                .iter()
                .map(|p| PassRow {
                    name: p.name,
                    candidates: p.candidates,
                    accepted: p.accepted,
                    bytes_removed: p.bytes_removed,
                    oracle_seconds: looped.oracle_seconds.get(p.name).copied().unwrap_or(0.0),
                    pumps_kept: p.pumps_kept,
                    pumps_rolled_back: p.pumps_rolled_back,
                })
                .collect(),
            trace: looped.trace,
            ladder: result.ladder,
            prepared: self.prepared,
            stages: result.stages,
            stage_seconds: self.clock.laps,
            max_memory: self.workers.max_memory,
            original_seconds: ground.base.duration.as_secs_f64(),
            peak_rss_original: ground.base.peak_rss,
            peak_rss_candidate: looped.peak_rss,
            inductor_cache: inductor,
        }
    }
}
