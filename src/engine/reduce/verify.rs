//! After the loop: the newest accepted script that fails the same way in a fresh process is
//! the result, and the rungs of the ladder it still stands on are run stepped off it.

use anyhow::{Result, bail};

use super::passes::Looped;
use super::{Ground, Reduction, run_one};
use crate::engine::ladder::Rung;
use crate::engine::oracle::{Control, Criteria, ProcessOracle};
use crate::engine::verdict::Verdict;
use crate::engine::workers::Workers;

impl Reduction<'_> {
    /// The result, and whether it is the loop's own: the newest script of the loop's history
    /// that fails the same way in a fresh process, without any `# scrub:` directive.
    pub(super) fn verify(
        &mut self,
        ground: &Ground,
        looped: &mut Looped,
    ) -> Result<(String, bool)> {
        // The final check is always a cold process; the warm workers wait for the ladder.
        let warm = self.workers.warm.take();
        let verified = self.verified(ground, looped);
        self.workers.warm = warm;
        verified
    }

    /// See [`Reduction::verify`], with cold workers.
    fn verified(&self, ground: &Ground, looped: &mut Looped) -> Result<(String, bool)> {
        // Comments and blank lines alone do not make a repro smaller: it was already minimal.
        let only_cosmetic = self.prepared.is_empty()
            && looped
                .reduction
                .passes
                .iter()
                .filter(|p| p.accepted > 0)
                .all(|p| {
                    scrub_reducers::passes::by_name(p.name).is_some_and(|p| p.info().is_cosmetic())
                });
        // The result is what a reader pastes: no `# scrub:` directive stays in it, the user's
        // own included (each candidate is verified without them).
        let unmarked = |t: &str| {
            scrub_reducers::Script::parse(t, self.interp.parser_version)
                .map_or_else(|| t.to_string(), |s| s.unmarked())
        };
        let history = std::mem::take(&mut looped.history);
        let history: Vec<String> = if only_cosmetic {
            vec![self.text.clone()]
        } else {
            history
        };
        let history: Vec<String> = history.iter().map(|t| unmarked(t)).collect();
        if only_cosmetic && history[0] == self.text {
            return Ok((self.text.clone(), true));
        }
        self.verified_result(&history, &ground.criteria, looped.control.as_ref())
    }

    /// The newest accepted script that fails the same way in a fresh process (no cache): the
    /// cache may hold a verdict that a fresh run no longer gives. True when that is the newest.
    fn verified_result(
        &self,
        history: &[String],
        criteria: &Criteria,
        control: Option<&Control>,
    ) -> Result<(String, bool)> {
        let workers = &self.workers;
        for (back, candidate) in history.iter().rev().enumerate() {
            if verify_controlled(candidate, criteria, control, workers)? {
                return Ok((candidate.clone(), back == 0));
            }
            self.console.warn(format!(
                "the result {back} step(s) back did not reproduce in a fresh run; trying the one before"
            ));
        }
        bail!("not even the original reproduces any more: the failure is not stable")
    }

    /// The rungs the result still stands on, run stepped off it like candidates, warm when
    /// they were (the loop has usually tried them: the cache then answers); their runs are
    /// counted with the loop's. The warm workers stop after them.
    pub(super) fn ladder(&self, ground: &Ground, looped: &mut Looped, result: &str) -> Vec<Rung> {
        let mut rung_oracle = ProcessOracle::new(
            result,
            &ground.criteria,
            &self.workers,
            &ground.cache,
            &ground.run_dir,
            &self.console,
        );
        rung_oracle.pass = "ladder".to_string();
        rung_oracle.control = looped.control.take();
        let ladder = crate::engine::ladder::verdict(
            &self.text,
            result,
            self.interp.parser_version,
            &mut |texts| scrub_reducers::Oracle::judge(&mut rung_oracle, texts).ok(),
        );
        looped.counts.add(&rung_oracle);
        self.workers.stop_zygotes();
        for rung in &ladder {
            self.console.say(format!("ladder: {}", rung.meaning));
            ground.run_dir.log(format!(
                "ladder: {} {}: {}",
                rung.rung,
                rung.state.as_str(),
                rung.meaning
            ));
        }
        ladder
    }
}

/// Whether `text` fails the same way in a fresh run (with the attempts a flaky repro gets)
/// and its control, when there is one, passes in a fresh run: the first attempt and the
/// control run side by side.
fn verify_controlled(
    text: &str,
    criteria: &Criteria,
    control: Option<&Control>,
    workers: &Workers,
) -> Result<bool> {
    let checked = match control {
        None => None,
        Some(control) => match control_script(text, control) {
            Ok(checked) => checked,
            Err(()) => return Ok(false),
        },
    };
    let mut texts = vec![text];
    texts.extend(checked.as_deref());
    let outcomes = workers
        .run_all(&texts)
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    if let Some(checked) = &checked {
        // A control that draws without a seed passes twice (see `oracle::control_runs`).
        if !crate::engine::oracle::passes(&outcomes[1]) {
            return Ok(false);
        }
        for _ in 1..crate::engine::oracle::control_runs(checked) {
            if !crate::engine::oracle::passes(&run_one(checked, workers)?) {
                return Ok(false);
            }
        }
    }
    if criteria.judge(text, &outcomes[0]) == Verdict::Same {
        return Ok(true);
    }
    for _ in 1..criteria.attempts {
        if criteria.judge(text, &run_one(text, workers)?) == Verdict::Same {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The control of `text` to run: `None` when the control does not run (and `text` keeps what
/// it checks); `Err` when `text` lost what the control checks, or it cannot be built.
fn control_script(text: &str, control: &Control) -> Result<Option<String>, ()> {
    let script = scrub_reducers::Script::parse(text, control.version).ok_or(())?;
    if !control.runs {
        return control.lost(&script).is_none().then_some(None).ok_or(());
    }
    control.build(&script).map(Some).ok_or(())
}

/// A fresh run (no cache) of `text`, with the attempts a flaky repro gets.
pub(super) fn verify(text: &str, criteria: &Criteria, workers: &Workers) -> Result<bool> {
    for _ in 0..criteria.attempts {
        if criteria.judge(text, &run_one(text, workers)?) == Verdict::Same {
            return Ok(true);
        }
    }
    Ok(false)
}
