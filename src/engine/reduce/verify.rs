//! After the loop: the newest accepted script that fails the same way in a fresh process is
//! the result, and the rungs of the ladder it still stands on are run stepped off it.

use anyhow::{Result, bail};

use super::output::Divergence;
use super::passes::Looped;
use super::{Ground, Reduction, run_one};
use crate::engine::ladder::Rung;
use crate::engine::oracle::{Control, Criteria, ProcessOracle};
use crate::engine::verdict::Verdict;
use crate::engine::workers::Workers;

/// The result the fresh check found in the loop's history.
pub(super) struct Verified {
    pub(super) text: String,
    /// Its place in the history (0: the script the passes started from).
    pub(super) index: usize,
    /// Whether it is the loop's own result, the newest of the history.
    pub(super) newest: bool,
    /// When it is not: the first step after it that a fresh run rejected, and how many of the
    /// steps checked a fresh run rejected.
    pub(super) rejected: Option<(usize, usize)>,
}

impl Reduction<'_> {
    /// The result, and whether it is the loop's own: the newest script of the loop's history
    /// that fails the same way in a fresh process, without any `# scrub:` directive.
    pub(super) fn verify(&mut self, ground: &Ground, looped: &Looped) -> Result<Verified> {
        // The final check is always a cold process; the warm workers wait for the ladder.
        let warm = self.workers.warm.take();
        let verified = self.verified(ground, looped);
        self.workers.warm = warm;
        verified
    }

    /// See [`Reduction::verify`], with cold workers.
    fn verified(&self, ground: &Ground, looped: &Looped) -> Result<Verified> {
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
        if only_cosmetic {
            let text = unmarked(&self.text);
            if text == self.text {
                return Ok(Verified {
                    text,
                    index: 0,
                    newest: true,
                    rejected: None,
                });
            }
            return self.verified_result(&[text], &ground.criteria, looped.control.as_ref());
        }
        let history: Vec<String> = looped.history.iter().map(|t| unmarked(t)).collect();
        self.verified_result(&history, &ground.criteria, looped.control.as_ref())
    }

    /// The newest accepted script that fails the same way in a fresh process (no cache): the
    /// cache may hold a verdict that a fresh run does not give (a flaky repro, a warm worker
    /// unlike a fresh process). When the newest does not, the last step that does is found by
    /// bisection: the original is taken to, and checked when nothing after it does.
    fn verified_result(
        &self,
        history: &[String],
        criteria: &Criteria,
        control: Option<&Control>,
    ) -> Result<Verified> {
        let workers = &self.workers;
        let fresh = |i: usize| verify_controlled(&history[i], criteria, control, workers);
        let last = history.len() - 1;
        if fresh(last)? {
            return Ok(Verified {
                text: history[last].clone(),
                index: last,
                newest: true,
                rejected: None,
            });
        }
        let (mut good, mut bad, mut rejected) = (0, last, 1);
        while bad - good > 1 {
            let mid = (good + bad) / 2;
            if fresh(mid)? {
                good = mid;
            } else {
                bad = mid;
                rejected += 1;
            }
        }
        if good == 0 && !fresh(0)? {
            bail!("not even the original reproduces any more: the failure is not stable")
        }
        self.console.warn(format!(
            "accepted step {bad} of {last} did not reproduce in a fresh run; step {good} did"
        ));
        Ok(Verified {
            text: history[good].clone(),
            index: good,
            newest: false,
            rejected: Some((bad, rejected)),
        })
    }

    /// After a warm loop whose result a fresh run rejected (see [`Verified::rejected`]): the
    /// reduction goes on from the last step a fresh run confirmed, with cold candidates and a
    /// cache of their own (the warm verdicts are not to be trusted), and is verified again.
    /// What the warm workers got wrong is said in the run log and the summary.
    pub(super) fn resume(
        &mut self,
        ground: &mut Ground,
        looped: Looped,
        verified: Verified,
    ) -> Result<(Looped, Verified, Option<Divergence>)> {
        let Some((step, contradicted)) = verified.rejected.filter(|_| ground.warm()) else {
            return Ok((looped, verified, None));
        };
        let divergence = Divergence {
            contradicted,
            step,
            did: looped.steps[step].clone(),
            resumed_from: verified.index,
            lines_resumed: scrub_reducers::count_lines(&verified.text),
        };
        let note = divergence.describe();
        self.console.warn(note.clone());
        ground.run_dir.log(format!("diverged: {note}"));
        self.workers.stop_zygotes();
        self.workers.warm = None;
        ground.cache = ground.cache.apart("cold, after a warm divergence");
        self.start = looped.history[verified.index].clone();
        let again = self.passes(ground)?;
        let looped = looped.continued(verified.index, again);
        let verified = self.verify(ground, &looped)?;
        Ok((looped, verified, Some(divergence)))
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
