//! The passes: the loop of `scrub_reducers` run against the oracle of the workers and the
//! cache, from the script the stages before it prepared.

use std::collections::{BTreeSet, HashMap};

use anyhow::Result;
use scrub_reducers::control::Suspect;
use scrub_reducers::{PASSES, StopReason};

use super::{Baseline, Ground, Reduction};
use crate::engine::oracle::{Control, ProcessOracle};
use crate::engine::verdict::{Anchor, Signature};

/// The loop with its oracle, and the notes of what was prepared before it.
pub(super) struct Loop<'a> {
    pub(super) oracle: ProcessOracle<'a>,
    pub(super) options: scrub_reducers::Options,
    pub(super) prepared: &'a mut Vec<String>,
}

/// What the loop gave, with the oracle's figures.
pub(super) struct Looped {
    pub(super) reduction: scrub_reducers::Reduction,
    /// Every script the loop accepted, the original first, and what made each.
    pub(super) history: Vec<String>,
    pub(super) steps: Vec<String>,
    /// The control every candidate passed, counted on the script the passes started from.
    pub(super) control: Option<Control>,
    pub(super) counts: Counts,
    /// Seconds spent running candidates, per pass.
    pub(super) oracle_seconds: HashMap<String, f64>,
    /// (candidate runs so far, non-blank lines) after every accepted step.
    pub(super) trace: Vec<(usize, usize)>,
    /// The most memory a candidate run held, in bytes.
    pub(super) peak_rss: u64,
}

/// What an oracle ran and found, summed over the loop's and the ladder's.
#[derive(Default)]
pub(super) struct Counts {
    pub(super) calls: usize,
    pub(super) hits: usize,
    pub(super) near_misses: usize,
    /// Control runs, counted in `calls` too.
    pub(super) control_calls: usize,
    /// Candidates refused because a call into a library received a value of another kind,
    /// and those whose control failed too.
    pub(super) kind_misses: usize,
    pub(super) control_misses: usize,
}

impl Looped {
    /// This loop's run, continued from its step `index` by `again`: the history up to that
    /// step and `again`'s after it, and the figures of both.
    pub(super) fn continued(mut self, index: usize, again: Looped) -> Looped {
        self.history.truncate(index + 1);
        self.steps.truncate(index + 1);
        self.history.extend(again.history.into_iter().skip(1));
        self.steps.extend(again.steps.into_iter().skip(1));
        let calls = self.counts.calls;
        self.trace.extend(
            again
                .trace
                .iter()
                .map(|&(runs, lines)| (calls + runs, lines)),
        );
        self.counts.absorb(&again.counts);
        for (pass, seconds) in again.oracle_seconds {
            *self.oracle_seconds.entry(pass).or_default() += seconds;
        }
        self.peak_rss = self.peak_rss.max(again.peak_rss);
        let (mine, theirs) = (&mut self.reduction, again.reduction);
        for pass in theirs.passes {
            match mine.passes.iter_mut().find(|p| p.name == pass.name) {
                Some(p) => {
                    p.candidates += pass.candidates;
                    p.accepted += pass.accepted;
                    p.bytes_removed += pass.bytes_removed;
                    p.pumps_kept += pass.pumps_kept;
                    p.pumps_rolled_back += pass.pumps_rolled_back;
                }
                None => mine.passes.push(pass),
            }
        }
        mine.rounds += theirs.rounds;
        mine.speculative_wasted += theirs.speculative_wasted;
        mine.text = theirs.text;
        mine.stop = theirs.stop;
        self
    }
}

impl Counts {
    fn absorb(&mut self, other: &Counts) {
        self.calls += other.calls;
        self.hits += other.hits;
        self.near_misses += other.near_misses;
        self.control_calls += other.control_calls;
        self.kind_misses += other.kind_misses;
        self.control_misses += other.control_misses;
    }

    pub(super) fn add(&mut self, oracle: &ProcessOracle) {
        self.calls += oracle.calls;
        self.hits += oracle.hits;
        self.near_misses += oracle.near_misses;
        self.control_calls += oracle.control_calls;
        self.kind_misses += oracle.kind_misses;
        self.control_misses += oracle.control_misses;
    }
}

impl Reduction<'_> {
    /// The library functions whose results the script's line that raised the failure, or
    /// called the library that raised it, reads (see [`scrub_reducers::producers`]).
    pub(super) fn producers(&self, base: &Baseline, anchor: &Anchor) -> BTreeSet<String> {
        let here = anchor.site.is_none();
        self.failing_line(base, anchor)
            .map(|(line, script)| scrub_reducers::producers::producers(&script, &line, here))
            .unwrap_or_default()
    }

    /// The keywords the failure's `message` names that the failing line passes (see
    /// [`scrub_reducers::named`]).
    fn named(&self, base: &Baseline, anchor: &Anchor, message: Option<&str>) -> BTreeSet<String> {
        message
            .zip(self.failing_line(base, anchor))
            .map(|(message, (line, script))| scrub_reducers::named::named(&script, message, &line))
            .unwrap_or_default()
    }

    /// Whether the failure is an `assert` whose message shows a value, not a text written out
    /// (see [`scrub_reducers::expected::shows_a_value`]).
    pub(super) fn shown_check(&self, base: &Baseline, anchor: &Anchor) -> bool {
        matches!(&base.signature, Signature::Exception { class, .. } if class.ends_with("AssertionError"))
            && self
                .failing_line(base, anchor)
                .is_some_and(|(line, script)| {
                    scrub_reducers::expected::shows_a_value(&script, &line)
                })
    }

    /// The script's line that raised the failure, or called the library that raised it, in
    /// the original's run; with the script the passes start from.
    fn failing_line(
        &self,
        base: &Baseline,
        anchor: &Anchor,
    ) -> Option<(String, scrub_reducers::Script)> {
        let stderr = &base.outcome.stderr;
        let line = match anchor.site.is_none() {
            true => crate::engine::exception::raising_line(stderr),
            false => crate::engine::exception::calling_line(stderr),
        };
        line.zip(scrub_reducers::Script::parse(
            &self.start,
            self.interp.parser_version,
        ))
    }

    /// Runs the passes from the prepared script (see `Loop::prepare`) to the stop rule, and
    /// then, when scrub inserted a seed, tries the result without it; last, names the values of
    /// lines too long to paste.
    pub(super) fn passes(&mut self, ground: &Ground) -> Result<Looped> {
        let mut oracle = ProcessOracle::new(
            &self.start,
            &ground.criteria,
            &self.workers,
            &ground.cache,
            &ground.run_dir,
            &self.console,
        );
        // What no candidate may lose is counted on the script the passes start from.
        let control = ground
            .guard
            .control
            .as_ref()
            .map(|c| c.starting_from(&self.start));
        oracle.control = control.clone();
        if let Some(control) = &control
            && control.suspect == Suspect::Custom
        {
            ground.run_dir.log(format!(
                "reference kept: {}",
                control.reference_calls.join(", ")
            ));
        }
        let message = match &ground.criteria.sig {
            Signature::Exception { substring, .. } => substring.clone(),
            _ => None,
        };
        let (base, anchor) = (&ground.base, &ground.criteria.anchor);
        let options = scrub_reducers::Options {
            version: self.interp.parser_version,
            target_lines: self.options.target_lines,
            in_flight: self.workers.jobs,
            named: self.named(base, anchor, message.as_deref()),
            message,
            // A check's sides computed alike pass for any deterministic pair: what each side
            // computes stays, as where nothing guards the mismatch (an own implementation
            // compared with a reference keeps its code instead, see `Control::unrun`).
            unguarded: (ground.guard.unguarded && control.is_none())
                || control
                    .as_ref()
                    .is_some_and(|c| c.suspect == Suspect::Repeat),
            producers: ground.producers.clone(),
            bounded_recursion: ground.bounded_recursion,
            shown_check: ground.shown_check,
            ..Default::default()
        };
        let mut passes = Loop {
            oracle,
            options,
            prepared: &mut self.prepared,
        };
        let (start, seeded) = passes.prepare(self.start.clone());
        let mut reduction =
            scrub_reducers::reduce(&start, PASSES, &mut passes.oracle, &passes.options)?;
        if seeded && reduction.stop != StopReason::Interrupted {
            passes.without_seed(&mut reduction)?;
        }
        if reduction.stop != StopReason::Interrupted {
            passes.name_long_values(&mut reduction, &self.text)?;
        }
        self.start = start;
        self.console.finish();
        let mut oracle = passes.oracle;
        let mut counts = Counts::default();
        counts.add(&oracle);
        Ok(Looped {
            reduction,
            history: std::mem::take(&mut oracle.history),
            steps: std::mem::take(&mut oracle.steps),
            control,
            counts,
            oracle_seconds: std::mem::take(&mut oracle.oracle_seconds),
            trace: std::mem::take(&mut oracle.trace),
            peak_rss: oracle.peak_rss,
        })
    }
}
