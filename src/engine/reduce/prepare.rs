//! One-off rewrites before the passes, each kept only when the failure survives it
//! (`torch._dynamo.reset()` between repeated compiles, a seed of scrub's own for a torch
//! script), and the seed taken out again at the end when the result fails without it.

use anyhow::Result;
use scrub_reducers::long_lines::{LIMIT as LINE_LIMIT, NameLongValues};
use scrub_reducers::{StopReason, count_lines};

use super::passes::Loop;
use super::run_many;
use crate::engine::verdict::{Verdict, describe};

/// Fresh runs the result must fail in, all of them, without the seed scrub inserted.
const UNSEEDED_RUNS: usize = 8;

impl Loop<'_> {
    /// The script the passes start from: `text` after the one-off rewrites that keep its
    /// failure (`torch._dynamo.reset()` between repeated compiles, a kept seed for a torch
    /// script), noted in `prepared`; and whether the seed was inserted.
    pub(super) fn prepare(&mut self, text: String) -> (String, bool) {
        let version = self.options.version;
        let parse = |text: &str| scrub_reducers::Script::parse(text, version);
        let mut text = text;
        let resets =
            parse(&text).and_then(|script| scrub_reducers::prepare::dynamo_resets(&script));
        if let Some((resets, n)) = resets {
            let what =
                format!("inserted torch._dynamo.reset() before {n} repeated torch.compile call(s)");
            text = self.try_rewrite(text, resets, what);
        }
        // A repro that seeds its own random numbers fails deterministically; once a candidate
        // drops that seed it may fail only by chance, which one run per candidate cannot tell.
        // One that does not may fail on most draws at its own sizes and on few once they
        // shrink. A seed of our own, which no pass removes, keeps every candidate
        // deterministic; the end drops it again when the result fails without it every time
        // (see `without_seed`).
        let seeds_itself = ["manual_seed(", "random.seed(", "np.random.seed("]
            .iter()
            .any(|call| text.contains(call));
        if let Some(seeded) =
            parse(&text).and_then(|script| scrub_reducers::prepare::seeded(&script))
        {
            let what = format!(
                "inserted `torch.manual_seed(0)`, kept while the reduction runs: {}",
                if seeds_itself {
                    "the repro seeds its random numbers"
                } else {
                    "every candidate draws the same random numbers"
                }
            );
            let before = self.prepared.len();
            text = self.try_rewrite(text, seeded, what);
            return (text, self.prepared.len() > before);
        }
        (text, false)
    }

    /// `rewritten` when it still fails the same way (and `what` noted in `prepared`), else
    /// `text`.
    fn try_rewrite(&mut self, text: String, rewritten: String, what: String) -> String {
        let judged =
            scrub_reducers::Oracle::judge(&mut self.oracle, std::slice::from_ref(&rewritten));
        if matches!(judged, Ok(v) if v == [true]) {
            self.accept_prepared(&rewritten, what);
            rewritten
        } else {
            self.oracle
                .run_dir
                .log(format!("not prepared (the failure changed): {what}"));
            text
        }
    }

    /// Notes `what` in `prepared`, the console and the log, and records `text` as an accepted
    /// step like any other: in the history the result falls back on, under its own name.
    fn accept_prepared(&mut self, text: &str, what: String) {
        self.oracle.console.say(format!("prepared: {what}"));
        self.oracle.run_dir.log(format!("prepared: {what}"));
        self.prepared.push(what);
        scrub_reducers::Oracle::progress(
            &mut self.oracle,
            &scrub_reducers::Progress {
                pass: "prepare",
                round: 0,
                text,
                step: None,
                lines: count_lines(text),
                bytes: text.len(),
            },
        );
    }

    /// The reduction's script without the seed that `prepare` inserted (the caller knows it
    /// did), when the script's own seed supersedes it before any draw (see
    /// [`scrub_reducers::prepare::superseded_seed`]), or when it fails the same way without it in each of [`UNSEEDED_RUNS`] fresh runs (a
    /// seed that decides nothing is not part of the repro), and then without what only the
    /// seed used (`import torch`, the blank lines around it). A result with a control keeps
    /// the seed unless its control, built from the script without the seed, passes in each of
    /// as many runs too: the control may depend on the draw as well. A result that compares
    /// tensors and may draw them at random ([`crate::engine::oracle::draws_at_random`]) keeps it whatever those runs
    /// show: whether numbers drawn at random are close is
    /// a matter of the draw (one element of `torch.randn(1)` near 0 makes a fixed
    /// normalization differ from the reference), and a draw that fails one run in fifty
    /// passes eight runs most times.
    pub(super) fn without_seed(&mut self, reduction: &mut scrub_reducers::Reduction) -> Result<()> {
        let line = format!("{}\n", scrub_reducers::prepare::SEED_LINE);
        if reduction.text.matches(&line).count() != 1 {
            return Ok(());
        }
        let text = reduction.text.replacen(&line, "", 1);
        let superseded = scrub_reducers::Script::parse(&reduction.text, self.options.version)
            .is_some_and(|s| scrub_reducers::prepare::superseded_seed(&s));
        let what = if superseded {
            "removed the seed again: the script seeds torch itself before any draw".to_string()
        } else if let Some(why) = self.seed_decides(&text)? {
            self.oracle.run_dir.log(format!("kept the seed: {why}"));
            return Ok(());
        } else {
            format!(
                "removed the seed again: the result fails the same way without it {UNSEEDED_RUNS} times of {UNSEEDED_RUNS}"
            )
        };
        self.accept_prepared(&text, what);
        let tidy: Vec<&dyn scrub_reducers::Pass> = ["drop_imports", "tidy_blank_lines"]
            .into_iter()
            .filter_map(scrub_reducers::passes::by_name)
            .collect();
        let again = scrub_reducers::reduce(&text, &tidy, &mut self.oracle, &self.options)?;
        absorb(reduction, again);
        Ok(())
    }

    /// Names the values on the result's lines that are too long to paste, with the names
    /// `original` gave them (see [`NameLongValues`]); each step is judged as the passes' are.
    pub(super) fn name_long_values(
        &mut self,
        reduction: &mut scrub_reducers::Reduction,
        original: &str,
    ) -> Result<()> {
        let too_long = |text: &str| text.lines().any(|l| l.chars().count() > LINE_LIMIT);
        let original = scrub_reducers::Script::parse(original, self.options.version);
        let (true, Some(original)) = (too_long(&reduction.text), original) else {
            return Ok(());
        };
        let pass = NameLongValues::of(&original);
        // Every step, however few lines the script has left; one at a time, so that a line
        // that fits is not split again.
        let options = scrub_reducers::Options {
            target_lines: None,
            window: 1,
            ..self.options.clone()
        };
        let again = scrub_reducers::reduce(&reduction.text, &[&pass], &mut self.oracle, &options)?;
        absorb(reduction, again);
        Ok(())
    }

    /// Why the seed stays in the result that is `text` without it, if it does: `text`
    /// compares tensors, does not fail the same way in every run, or its control does not
    /// pass in every run.
    fn seed_decides(&self, text: &str) -> Result<Option<String>> {
        if crate::engine::oracle::draws_at_random(text)
            && scrub_reducers::Script::parse(text, self.options.version)
                .is_some_and(|s| scrub_reducers::control::compares_tensors(&s))
        {
            return Ok(Some("the result compares tensors drawn at random".into()));
        }
        let workers = self.oracle.workers;
        let criteria = self.oracle.criteria;
        let outcomes = run_many(text, UNSEEDED_RUNS, workers)?;
        let (same, other): (Vec<_>, Vec<_>) = outcomes
            .iter()
            .partition(|outcome| criteria.judge(text, outcome) == Verdict::Same);
        if let Some(other) = other.first() {
            return Ok(Some(format!(
                "without it the result failed the same way {} times of {UNSEEDED_RUNS} (once {})",
                same.len(),
                describe(other)
            )));
        }
        match self.oracle.control_of(text) {
            Err(why) => Ok(Some(format!("without it {why}"))),
            Ok(Some((control, _))) => {
                let passed = run_many(&control, UNSEEDED_RUNS, workers)?
                    .iter()
                    .filter(|outcome| crate::engine::oracle::passes(outcome))
                    .count();
                Ok((passed < UNSEEDED_RUNS).then(|| {
                    format!("without it the control passed {passed} times of {UNSEEDED_RUNS}")
                }))
            }
            Ok(None) => Ok(None),
        }
    }
}

/// `reduction` continued by `again`, a run of some passes from its result: `again`'s text and
/// stop, with its figures added to the passes' rows.
fn absorb(reduction: &mut scrub_reducers::Reduction, again: scrub_reducers::Reduction) {
    for row in again.passes {
        match reduction.passes.iter_mut().find(|p| p.name == row.name) {
            Some(total) => {
                total.candidates += row.candidates;
                total.accepted += row.accepted;
                total.bytes_removed += row.bytes_removed;
            }
            None => reduction.passes.push(row),
        }
    }
    reduction.text = again.text;
    if again.stop == StopReason::Interrupted {
        reduction.stop = again.stop;
    }
}
