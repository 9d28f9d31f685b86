//! Judging a script that another reducer made: does it still fail the same way as the
//! original, by every check a candidate of `scrub reduce` must pass?
//!
//! The original is run as `reduce` runs it first (its baseline, its control, its anchor), and
//! a result is then held to the same verdict as the reduction's final check: the signature
//! and the anchor in a fresh run, with the attempts a flaky original gets, and the control.

use std::time::Duration;

use anyhow::Result;
use scrub_reducers::Script;

use crate::engine::oracle::{Control, Criteria, passes};
use crate::engine::process::Outcome;
use crate::engine::reduce::{Options, Settled, run_one, settle};
use crate::engine::verdict::{Signature, Verdict, describe};
use crate::engine::workers::Workers;

/// The original's failure, and what a result must keep of it.
pub struct Judge {
    /// What runs every script.
    pub python: std::path::PathBuf,
    /// Runs a script gets before it counts as not failing (more than one for a flaky original).
    pub attempts: usize,
    criteria: Criteria,
    control: Option<Control>,
    workers: Workers,
}

/// A result, judged.
pub enum Judged {
    /// It fails the same way: the run that showed it.
    Same(Box<Outcome>),
    /// It lost the bug: why, as the run log says it.
    Lost(String),
}

impl Judge {
    /// Runs the original of `options` as `reduce` does before its first candidate; `None`
    /// when it does not fail with the signature (the reason has been printed).
    pub fn of(options: &Options) -> Result<Option<Judge>> {
        let Some(Settled {
            criteria,
            control,
            python,
            workers,
        }) = settle(options)?
        else {
            return Ok(None);
        };
        Ok(Some(Judge {
            python,
            attempts: criteria.attempts,
            criteria,
            control,
            workers,
        }))
    }

    /// The original's failure.
    pub fn signature(&self) -> &Signature {
        &self.criteria.sig
    }

    /// How long a candidate may run: what `reduce` gives each of its own.
    pub fn timeout(&self) -> Duration {
        self.workers.timeout
    }

    /// Whether `text` fails the same way as the original, in a fresh run.
    pub fn judge(&self, text: &str) -> Result<Judged> {
        let mut last = None;
        for _ in 0..self.attempts {
            let outcome = run_one(text, &self.workers)?;
            match self.criteria.judge(text, &outcome) {
                Verdict::Same => {
                    if let Some(why) = self.kinds_changed(text)? {
                        return Ok(Judged::Lost(format!("near miss: kinds: {why}")));
                    }
                    if let Some(why) = self.control_fails(text)? {
                        return Ok(Judged::Lost(why));
                    }
                    return Ok(Judged::Same(Box::new(outcome)));
                }
                Verdict::NearMiss(why) => last = Some(format!("near miss: {why}")),
                Verdict::Other => last = Some(describe(&outcome)),
            }
        }
        Ok(Judged::Lost(last.unwrap_or_default()))
    }

    /// Why a run of `text` under the kinds runner shows a user's mistake (see
    /// [`crate::engine::kinds`]); `None` when its calls into libraries keep their kinds.
    fn kinds_changed(&self, text: &str) -> Result<Option<String>> {
        if !self.criteria.checks_path() {
            return Ok(None);
        }
        let run = self.workers.probe(
            text,
            crate::engine::kinds::runner(&self.criteria.sig, false),
        )?;
        Ok(self.criteria.kinds_changed(text, &run))
    }

    /// Why the control of `text` says it is another bug: the code the control checks is gone,
    /// or its control does not pass; `None` when it passes, or nothing guards the original.
    fn control_fails(&self, text: &str) -> Result<Option<String>> {
        let Some(control) = &self.control else {
            return Ok(None);
        };
        let Some(script) = Script::parse(text, control.version) else {
            return Ok(Some("it does not parse".into()));
        };
        if let Some(why) = control.lost(&script) {
            return Ok(Some(why));
        }
        if !control.runs {
            return Ok(None);
        }
        let Some(checked) = control.build(&script) else {
            return Ok(Some(format!(
                "no control ({}) can be built",
                control.suspect.as_str()
            )));
        };
        let run = run_one(&checked, &self.workers)?;
        Ok((!passes(&run)).then(|| format!("its control fails too: {}", describe(&run))))
    }
}
