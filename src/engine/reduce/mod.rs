//! `scrub reduce`: check the input and the original failure, reduce, verify, write.
//!
//! A [`Reduction`] goes through its stages in order, one file each: the input's checks
//! (`input`), the original's runs (`baseline`), its control (`control`), PyTorch's minifier
//! (`minifier_stage`), the one-off rewrites and the seed (`prepare`), the passes (`passes`),
//! the fresh re-verification and the ladder (`verify`), and what the run leaves: the result,
//! the run log and the figures (`output`).

mod baseline;
mod control;
mod input;
mod minifier_stage;
mod options;
mod output;
mod passes;
mod prepare;
mod verify;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};

use crate::engine::cache;
use crate::engine::console::Console;
use crate::engine::interpreter::Interpreter;
use crate::engine::kinds::Call;
use crate::engine::oracle::{Control, Criteria};
use crate::engine::process::Outcome;
use crate::engine::rundir::RunDir;
use crate::engine::verdict::{Anchor, Signature, Verdict};
use crate::engine::workers::Workers;
use baseline::{Baseline, BaselineEnd};
use control::Guard;

pub use options::{Backend, Cache, Cluster, Execution, Options, PriorRuns, connect};
pub use output::{Divergence, PassRow, Summary};

/// The least time a candidate gets, however fast the original.
const MIN_TIMEOUT: Duration = Duration::from_secs(1);

/// How a reduction ended, for the command line and for other callers (bench).
pub enum Finish {
    Reduced(Box<Summary>),
    /// The original does not fail with the signature; the reason has been printed.
    DoesNotFail,
    /// Ctrl-C: the best script so far is in this file.
    Interrupted(PathBuf),
}

/// Checks the inputs and the original failure, reduces, verifies the result and writes it.
pub fn reduce(options: &Options) -> Result<Finish> {
    let mut reduction = Reduction::new(options)?;
    reduction.clock.lap("input");
    let devices = reduction.device_watch();
    if devices.is_none() {
        reduction.start_warm_early()?;
    }
    let Some(base) = reduction.baseline()? else {
        return Ok(Finish::DoesNotFail);
    };
    reduction.jobs_from_devices(devices);
    reduction.clock.lap("baseline");
    let mut ground = reduction.ground(base)?;
    let stages = reduction.minifier_stage(&ground)?;
    reduction.clock.lap("minifier");
    let looped = reduction.passes(&ground)?;
    reduction.clock.lap("passes");
    if let Some(partial) = reduction.interrupted(&looped)? {
        return Ok(Finish::Interrupted(partial));
    }
    let verified = reduction.verify(&ground, &looped)?;
    let (mut looped, verified, divergence) = reduction.resume(&mut ground, looped, verified)?;
    if let Some(partial) = reduction.interrupted(&looped)? {
        return Ok(Finish::Interrupted(partial));
    }
    let result = verified.text;
    reduction.write(&result, &ground)?;
    reduction.clock.lap("verify");
    let ladder = reduction.ladder(&ground, &mut looped, &result);
    reduction.clock.lap("ladder");
    Ok(Finish::Reduced(Box::new(reduction.summary(
        &ground,
        looped,
        output::Final {
            text: result,
            verified: verified.newest,
            divergence,
            ladder,
            stages,
        },
    ))))
}

/// One reduction under way: what its stages share. Each stage is a method, in a file of its
/// own.
struct Reduction<'o> {
    options: &'o Options,
    /// The input as read; the result is compared with it.
    text: String,
    /// The script the passes start from: the input, or what the stages before them made of it
    /// (noted in `prepared`).
    start: String,
    /// The signature `--sig` gives.
    sig: Option<Signature>,
    interp: Interpreter,
    output: PathBuf,
    workers: Workers,
    /// `--timeout`, which also bounds the original's runs.
    timeout: Option<Duration>,
    console: Console,
    /// The rewrites made before the passes, which the reduction starts from.
    prepared: Vec<String>,
    /// Where the time went, stage by stage.
    clock: Clock,
    /// How the jobs were chosen from the GPUs' memory, when they were.
    jobs_note: Option<String>,
    /// The warm workers started before the original's first run, to import side by side with
    /// it: whether they run candidates in their own process. `None`: not started yet.
    early_warm: Option<bool>,
}

/// What the original's failing run shows that every candidate's must keep (see
/// [`Reduction::kept_path`]).
#[derive(Default)]
struct KeptPath {
    kinds: Vec<Call>,
    custom_run: Vec<String>,
    apart: Option<crate::engine::kinds::Apart>,
    /// A `RecursionError` raised short of the recursion limit: no candidate may recurse
    /// endlessly (see [`scrub_reducers::recursion`]).
    bounded_recursion: bool,
}

/// The seconds each stage of a reduction took, in order.
struct Clock {
    last: std::time::Instant,
    laps: Vec<Lap>,
}

/// One stage's wall time.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Lap {
    pub stage: &'static str,
    pub seconds: f64,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            last: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }

    /// Ends the stage `stage`, which began when the last one ended (or when the clock
    /// started).
    fn lap(&mut self, stage: &'static str) {
        let now = std::time::Instant::now();
        let seconds = (now - std::mem::replace(&mut self.last, now)).as_secs_f64();
        self.laps.push(Lap {
            stage,
            seconds: (seconds * 10.0).round() / 10.0,
        });
    }
}

/// What the original's runs settled, which every later stage stands on.
struct Ground {
    base: Baseline,
    /// What a candidate must keep to count.
    criteria: Criteria,
    guard: Guard,
    /// Why candidates do not fork from warm workers; `None` when they do.
    cold_why: Option<String>,
    run_dir: RunDir,
    cache: cache::Cache,
    /// The library functions whose results the failing line reads (see
    /// [`Reduction::producers`]).
    producers: BTreeSet<String>,
    /// The failure is an `assert` whose message shows a value (see
    /// [`Reduction::shown_check`]), read off the original: a reduction resumed from a later
    /// step no longer has its failing line as the traceback wrote it.
    shown_check: bool,
    /// The original's `RecursionError` came short of the recursion limit (see
    /// [`KeptPath::bounded_recursion`]).
    bounded_recursion: bool,
}

/// The original of `options` as a reduction settles it before its first candidate: what a
/// script must keep to fail the same way, its control, and the workers that ran it. This is
/// how another reducer's result is judged (`engine::judge`).
pub(crate) struct Settled {
    pub(crate) criteria: Criteria,
    pub(crate) control: Option<Control>,
    pub(crate) python: PathBuf,
    pub(crate) workers: Workers,
}

/// Runs the original of `options` as [`reduce`] does before its first candidate, without
/// rewriting it; `None` when it does not fail the same way (the reason has been printed).
pub(crate) fn settle(options: &Options) -> Result<Option<Settled>> {
    let mut reduction = Reduction::new(options)?;
    let BaselineEnd::Fails(base) = reduction.runs(&reduction.text, reduction.sig.clone())? else {
        return Ok(None);
    };
    reduction.set_timeout(&base);
    let (guard, anchor) = reduction.guard(&base)?;
    let KeptPath {
        kinds,
        custom_run,
        apart,
        ..
    } = reduction.kept_path(&base.signature, &guard, None)?;
    let producers = reduction.producers(&base, &anchor);
    let made_for = reduction.made_for(&producers, &kinds);
    Ok(Some(Settled {
        criteria: Criteria {
            sig: base.signature,
            anchor,
            attempts: base.attempts,
            kinds,
            custom_run,
            made_for,
            apart,
            version: reduction.interp.parser_version,
        },
        control: guard.control,
        python: reduction.interp.path,
        workers: reduction.workers,
    }))
}

impl Ground {
    /// Whether candidates fork from warm workers.
    fn warm(&self) -> bool {
        self.cold_why.is_none()
    }
}

impl Reduction<'_> {
    /// The candidates' timeout, from the original's runs in `base` unless `--timeout` gives it:
    /// five times its cold run's time, and for a warm candidate five times its warm run's,
    /// where one was made (a warm worker has paid the imports already: a candidate that
    /// never ends costs that much less).
    fn set_timeout(&mut self, base: &Baseline) {
        let five_times = |d: Duration| (d * 5).max(MIN_TIMEOUT);
        self.workers.timeout = self.timeout.unwrap_or(five_times(base.duration));
        self.workers.warm_timeout = match self.timeout {
            Some(_) => None,
            None => base
                .warm_report
                .as_ref()
                .map(|warm| five_times(warm.duration).min(self.workers.timeout)),
        };
    }

    /// The control and the anchor, once the original fails as `base` says.
    fn guard(&mut self, base: &Baseline) -> Result<(Guard, Anchor)> {
        let guard = self.control(&base.outcome)?;
        self.clock.lap("control");
        // The values of an assertion are kept when nothing else tells its bug from another
        // (pure Python: no reference to compare with).
        let anchor = Anchor::of(
            &self.start,
            &base.outcome,
            guard.control.is_none() && !self.start.contains("torch"),
        );
        Ok((guard, anchor))
    }

    /// What the original's failing run shows that every candidate's must keep, from one run
    /// under the kinds runner (see [`crate::engine::kinds`]): the calls it makes into
    /// libraries on its failing path, with the kinds of the values it hands them; for a
    /// failed check (an `AssertionError`), how far apart its sides were; and, for a custom
    /// implementation that no control guards, the calls of its custom code that ran. Nothing
    /// for a failure that is not an exception, or a run that does not fail the same way; no
    /// kinds for a failed check: what it compares is guarded by its control and anchor, and
    /// whether the compared values require grad (a `no_grad` block kept or dropped) does not
    /// make the check legal or not. `warm_report`: the original's warm run under
    /// [`crate::engine::kinds::first_runner`], when it may stand for that run.
    fn kept_path(
        &self,
        sig: &Signature,
        guard: &Guard,
        warm_report: Option<&Outcome>,
    ) -> Result<KeptPath> {
        let (check_kinds, check_apart) = match sig {
            Signature::Exception { class, .. } => {
                let check = class.ends_with("AssertionError");
                (!check, check)
            }
            _ => (false, false),
        };
        let mut custom = match &guard.control {
            Some(control) if !control.runs => control.custom_calls.clone(),
            _ => Vec::new(),
        };
        if !check_kinds && !check_apart && custom.is_empty() {
            return Ok(KeptPath::default());
        }
        let source = crate::engine::kinds::runner(sig, !custom.is_empty());
        // The original's warm run beside its first cold one ran under this runner already.
        let outcome = match warm_report {
            Some(report) if source == crate::engine::kinds::first_runner() => report.clone(),
            _ => self.workers.probe(&self.start, source)?,
        };
        if sig.judge(&outcome) != Verdict::Same {
            return Ok(KeptPath::default());
        }
        let kinds = match check_kinds {
            true => crate::engine::kinds::calls(&outcome).unwrap_or_default(),
            false => Vec::new(),
        };
        let apart = check_apart
            .then(|| crate::engine::kinds::apart(&outcome))
            .flatten();
        let ran =
            crate::engine::kinds::calls_run(&outcome, &self.start, self.interp.parser_version);
        custom.retain(|c| ran.contains(c));
        Ok(KeptPath {
            kinds,
            custom_run: custom,
            apart,
            bounded_recursion: crate::engine::kinds::depth(&outcome)
                .is_some_and(|d| d.short_of_limit()),
        })
    }

    /// What the library made that the original's failing call reads (see
    /// [`scrub_reducers::producers::read_by`]): the producers of its line that the call itself
    /// reads, where its run says which call of the line failed.
    fn made_for(&self, producers: &BTreeSet<String>, kinds: &[Call]) -> BTreeSet<String> {
        let Some(place) = crate::engine::kinds::failing_place(kinds) else {
            return BTreeSet::new();
        };
        if producers.is_empty() {
            return BTreeSet::new();
        }
        let Some(script) = scrub_reducers::Script::parse(&self.start, self.interp.parser_version)
        else {
            return BTreeSet::new();
        };
        let read = scrub_reducers::producers::read_by(&script, place);
        producers.intersection(&read).cloned().collect()
    }

    /// What the reduction stands on, once the original fails as `base` says: the candidates'
    /// timeout, the control, the anchor, warm workers, the run directory and the cache.
    fn ground(&mut self, base: Baseline) -> Result<Ground> {
        let cold = matches!(self.options.execution.backend, Backend::Cold);
        if !cold && !self.workers.remote {
            let in_process = self.in_process(&base);
            if self.early_warm != Some(in_process) {
                self.workers.set_jobs(self.workers.jobs, in_process);
            }
            self.workers.start_warm(&self.original()?);
        }
        self.set_timeout(&base);
        let sig = base.signature.clone();
        if sig.judge(&run_one("", &self.workers)?) == Verdict::Same {
            bail!("the signature {sig} also matches an empty script; give a more specific --sig");
        }
        // Warm first: the control's runs then cost their own work, not an import each.
        let cold_why = match cold {
            true => Some("--cold".to_string()),
            false => self.warm_up(&base)?,
        };
        self.clock.lap("warm-up");
        let (guard, anchor) = self.guard(&base)?;
        let report = base
            .warm_report
            .as_ref()
            .filter(|_| self.warm_checked(&base));
        let KeptPath {
            kinds,
            custom_run,
            apart,
            bounded_recursion,
        } = self.kept_path(&sig, &guard, report)?;
        let producers = self.producers(&base, &anchor);
        let shown_check = self.shown_check(&base, &anchor);
        let made_for = self.made_for(&producers, &kinds);
        let run_dir = RunDir::create(
            &self
                .options
                .run_dir
                .clone()
                .unwrap_or_else(|| input::beside(&self.output, "scrub.out")),
        )?;
        let cache_dir = match &self.options.cache {
            Cache::Default => cache::default_dir(),
            Cache::Dir(dir) => Some(dir.clone()),
            Cache::Off => None,
        };
        // The attempts per candidate are left out of the key, so that a flaky repro's second
        // run finds its verdicts whatever its own baseline measured. Warm and cold outcomes
        // are kept apart: a `--cold` run never takes a warm worker's word.
        let mode = if cold_why.is_none() { "warm" } else { "cold" };
        let cache = cache::Cache::new(
            cache_dir,
            &[
                &sig.to_string(),
                &self.interp.identity(),
                &env_knobs(),
                mode,
            ],
        );
        let ground = Ground {
            criteria: Criteria {
                sig,
                anchor,
                attempts: base.attempts,
                kinds,
                custom_run,
                made_for,
                apart,
                version: self.interp.parser_version,
            },
            base,
            guard,
            cold_why,
            run_dir,
            cache,
            producers,
            shown_check,
            bounded_recursion,
        };
        self.log_ground(&ground);
        Ok(ground)
    }
}

/// Environment variables that change how a script behaves, for the cache key.
fn env_knobs() -> String {
    let mut knobs: Vec<String> = std::env::vars()
        .filter(|(k, _)| {
            ["PYTHON", "TORCH", "CUDA", "OMP_", "MKL_", "LD_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    knobs.sort();
    knobs.join("\n")
}

fn run_many(text: &str, n: usize, workers: &Workers) -> Result<Vec<Outcome>> {
    let texts = vec![text; n];
    workers
        .run_all(&texts)
        .into_iter()
        .collect::<Result<Vec<_>>>()
}

pub(crate) fn run_one(text: &str, workers: &Workers) -> Result<Outcome> {
    Ok(run_many(text, 1, workers)?.remove(0))
}

/// Runs `texts` in order, `jobs` at a time, until one passes: its index (the first that
/// passes, as one at a time would find), and the outcomes of every text before it.
fn first_passing(texts: &[&str], workers: &Workers) -> Result<(Option<usize>, Vec<Outcome>)> {
    let mut before = Vec::new();
    for chunk in texts.chunks(workers.jobs.max(1)) {
        for outcome in workers.run_all(chunk) {
            let outcome = outcome?;
            if crate::engine::oracle::passes(&outcome) {
                return Ok((Some(before.len()), before));
            }
            before.push(outcome);
        }
    }
    Ok((None, before))
}
