//! PyTorch's minifier as the first stage (see `engine::minifier`): when the failure calls for
//! it, the passes start from its result made plain, if that fails the same way.

use anyhow::Result;
use scrub_reducers::control::Suspect;
use scrub_reducers::count_lines;

use super::verify::verify;
use super::{Ground, Reduction};
use crate::engine::minifier::{self, Mode, Stage};

impl Reduction<'_> {
    /// Runs PyTorch's minifier when the mode and the failure call for it, and starts the
    /// reduction from its plain script when that fails the same way as candidates run. What
    /// the stage did, for the log and `--json` (nothing when it was not run).
    pub(super) fn minifier_stage(&mut self, ground: &Ground) -> Result<Vec<Stage>> {
        let plan = match self.skip_minifier(ground) {
            Some(why) => Err(why),
            None => minifier::plan(
                self.options.minifier,
                &self.start,
                &ground.criteria.sig,
                &ground.base.outcome.stderr,
            ),
        };
        let plan = match plan {
            Ok(plan) => minifier::Plan {
                jobs: self.workers.jobs,
                ..plan
            },
            Err(why) => {
                ground.run_dir.log(format!("minifier: not run: {why}"));
                return Ok(Vec::new());
            }
        };
        self.console.say(format!(
            "running PyTorch's minifier first (TORCHDYNAMO_REPRO_AFTER={}, level {})",
            plan.after, plan.level
        ));
        let env = self.workers.env_of(0);
        let runner = minifier::Runner {
            python: &self.interp.path,
            env: &env,
            // A Ray actor is on another machine, without the stage's files; a worker that
            // runs candidates in its own process does not fork the launcher's queries.
            warm: (ground.warm() && matches!(self.options.execution.backend, super::Backend::Warm))
                .then_some(&self.workers),
        };
        let (plain, mut stage) = minifier::run(
            &plan,
            &self.start,
            self.interp.parser_version,
            &ground.run_dir.path().join("minifier"),
            ground.base.duration,
            &runner,
        )?;
        // The tightest form that fails the same way.
        let sig = &ground.criteria.sig;
        let mut kept = None;
        for (i, form) in plain.iter().enumerate() {
            stage.runs += 1;
            if verify(form, &ground.criteria, &self.workers)? {
                if i > 0 {
                    stage.outcome = format!("used (its tighter forms do not fail with {sig})");
                }
                kept = Some(form.clone());
                break;
            }
            stage.outcome = format!("its plain script does not fail with {sig}");
        }
        let queries = stage
            .queries
            .map_or(String::new(), |q| format!("{q} queries, "));
        let said = format!(
            "minifier: {queries}{} runs, {:.1} s (the dump {:.1} s): {}",
            stage.runs, stage.seconds, stage.dump_seconds, stage.outcome
        );
        ground.run_dir.log(&said);
        match kept {
            Some(plain) => {
                self.console.say(said);
                self.prepared
                    .push("started from PyTorch's minifier's result, made plain".into());
                self.start = plain;
            }
            None => self
                .console
                .say(format!("{said}; reducing the original instead")),
        }
        Ok(vec![stage])
    }

    /// Why the minifier is not run whatever the failure: it isolates a compiled graph, of no
    /// use when the control shows that the bug is elsewhere, nor for an original already
    /// under the target size; and on its own (`auto`) not for a script so small that the
    /// stage costs as much as the passes it saves.
    fn skip_minifier(&self, ground: &Ground) -> Option<String> {
        let auto = self.options.minifier == Mode::Auto;
        let lines = count_lines(&self.start);
        match ground.guard.control.as_ref().map(|c| c.suspect) {
            Some(suspect) if suspect != Suspect::Compile && auto => Some(format!(
                "the control is {}: the compile is not the suspect",
                suspect.as_str()
            )),
            _ if self.options.target_lines.is_some_and(|t| lines < t) => {
                Some("the original is already under the target size".into())
            }
            _ if auto && lines <= SMALL_SCRIPT => Some(format!(
                "the original is {lines} lines: on a script this small the stage (a dump run, \
                 the launcher and its queries) costs as much as the passes it saves"
            )),
            _ => None,
        }
    }
}

/// The most lines of a script that the minifier stage does not pay for. Measured with a
/// 2-op compiled module in a 16-line script (`InductorError`, 2 cores, `--jobs 2`, cold
/// caches): 31.5 s with the stage (11.9 s of it the stage), 33.0 s without; the result was
/// the same 3 lines. Past the script's size, what the stage saves is the passes over code
/// around the compiled region, which it drops in one step, so a small compiled region in a
/// large script is still worth the stage.
const SMALL_SCRIPT: usize = 15;
