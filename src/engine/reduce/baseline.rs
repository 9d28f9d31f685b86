//! The original's runs: it must fail the same way, often enough to tell how many runs a
//! candidate gets; one that runs out of memory here is tried with small sizes, a flaky torch
//! repro with a seed. Then whether it fails the same way in a warm worker.

use std::fs;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::Backend;
use super::{Reduction, run_many, run_one};
use crate::engine::gpu_memory::{self, DeviceWatch};
use crate::engine::kinds;
use crate::engine::memory;
use crate::engine::process::{self, Outcome, Status};
use crate::engine::verdict::{Signature, Verdict, describe};
use scrub_reducers::python::imported_modules;

/// A true repro may be missed by a flaky run at most this often.
const MISS_RATE: f64 = 0.05;
const MAX_ATTEMPTS: usize = 20;

/// How the original's first runs went.
pub(super) enum BaselineEnd {
    Fails(Box<Baseline>),
    /// It ran out of memory every time, and the signature is not about memory.
    OutOfMemory,
    /// It does not fail the expected way: the reason has been printed.
    DoesNotFail,
}

/// What the original's warm run beside its first cold one showed (see
/// [`Reduction::first_runs`]).
enum WarmRun {
    /// None ran: two cold runs.
    NotRun,
    /// It and the cold run failed the same way: the warm run, with its runner's report.
    Same(Box<Outcome>),
    /// One of them did not: a second cold run replaced it.
    Missed,
}

/// How the original fails.
#[derive(Clone)]
pub(super) struct Baseline {
    pub(super) signature: Signature,
    pub(super) duration: Duration,
    /// The most memory one of its runs held, in bytes.
    pub(super) peak_rss: u64,
    /// Runs a candidate gets before it counts as not failing.
    pub(super) attempts: usize,
    pub(super) ratio: String,
    /// A run that failed the same way.
    pub(super) outcome: Outcome,
    /// Whether one of the runs was in a warm worker and failed the same way (see
    /// [`Reduction::start_warm_early`]).
    pub(super) warm_checked: bool,
    /// That warm run, under [`kinds::first_runner`], its report kept: the kinds of the
    /// original's calls, which `kept_path` need not run again for.
    pub(super) warm_report: Option<Outcome>,
    /// How many of its runs were made before the reduction (see `Options::prior`).
    pub(super) prior_runs: usize,
}

impl Reduction<'_> {
    /// How the original fails, or `None` when it does not fail the same way (the reason has
    /// been printed). The original must fail the same way, and an empty script must not (see
    /// `Reduction::ground`). One that runs out of memory here first is tried with its sizes
    /// shrunk, and a flaky torch repro with a fixed seed; when that makes it fail (every
    /// time), the reduction starts from the rewritten script.
    pub(super) fn baseline(&mut self) -> Result<Option<Baseline>> {
        let base = match self.runs(&self.text, self.sig.clone())? {
            BaselineEnd::Fails(base) => *base,
            BaselineEnd::DoesNotFail => return Ok(None),
            BaselineEnd::OutOfMemory => match self.with_small_sizes()? {
                Some(base) => base,
                None => return Ok(None),
            },
        };
        Ok(Some(self.stabilised(base)?))
    }

    /// The original with every tensor size shrunk to 8 or less, when that fails the same way.
    fn with_small_sizes(&mut self) -> Result<Option<Baseline>> {
        let small = scrub_reducers::Script::parse(self.text.as_str(), self.interp.parser_version)
            .and_then(|s| scrub_reducers::prepare::small_sizes(&s));
        let Some(small) = small else {
            eprintln!(
                "scrub: the original runs out of memory here, and has no tensor sizes to shrink"
            );
            return Ok(None);
        };
        self.console
            .say("the original runs out of memory here; trying it with sizes of 8 or less");
        match self.runs(&small, self.sig.clone())? {
            BaselineEnd::Fails(base) => {
                self.start = small;
                self.prepared.push(
                    "shrank every tensor size to 8 or less: the original ran out of memory"
                        .to_string(),
                );
                Ok(Some(*base))
            }
            BaselineEnd::OutOfMemory => {
                eprintln!(
                    "scrub: the original runs out of memory here, even with sizes of 8 or less"
                );
                Ok(None)
            }
            BaselineEnd::DoesNotFail => Ok(None),
        }
    }

    /// `base`, or for a flaky repro that imports torch the baseline of the script seeded with
    /// `torch.manual_seed(0)`, when that fails the same way every time (the reduction then
    /// starts from it).
    fn stabilised(&mut self, base: Baseline) -> Result<Baseline> {
        if base.attempts == 1 {
            return Ok(base);
        }
        let Some(seeded) = scrub_reducers::Script::parse(&self.start, self.interp.parser_version)
            .and_then(|s| scrub_reducers::prepare::seeded(&s))
        else {
            return Ok(base);
        };
        self.console
            .say("trying the flaky original with torch.manual_seed(0)");
        match self.runs(&seeded, Some(base.signature.clone()))? {
            BaselineEnd::Fails(stable) if stable.attempts == 1 => {
                self.prepared.push(format!(
                    "inserted torch.manual_seed(0): the original failed the same way {} times, the seeded one {}",
                    base.ratio, stable.ratio
                ));
                self.start = seeded;
                Ok(*stable)
            }
            _ => Ok(base),
        }
    }

    /// Starts the warm workers before the original's first run, so that their imports and
    /// that run go side by side: when they will be used (not `--cold`, not on Ray) and their
    /// number is known (not chosen from the GPUs' memory while the original runs). A torch
    /// script's workers run candidates in their own process unless its original crashes,
    /// which only the runs tell: `ground` restarts them forked then.
    pub(super) fn start_warm_early(&mut self) -> Result<()> {
        let in_process = match self.options.execution.backend {
            Backend::InProcess => true,
            Backend::Warm => imported_modules(&self.text, self.interp.parser_version)
                .iter()
                .any(|m| m == "torch"),
            Backend::Fork => false,
            Backend::Cold | Backend::Ray(_) => return Ok(()),
        };
        if self.workers.remote {
            return Ok(());
        }
        // One worker, for the original's warm run: the others would only slow the cold run
        // down; they start once the runs end.
        self.workers.set_jobs(self.workers.jobs, in_process);
        self.workers.start_warm_on(&self.original()?, 1);
        self.early_warm = Some(in_process);
        Ok(())
    }

    /// The original's first two runs, and whether the second was in a warm worker (when
    /// they were started early and `text` is the original): one cold and one warm side by
    /// side, which count as two runs when both fail as `given` (or the signature derived from
    /// the cold one) says; else a second cold run replaces the warm one (and `runs` makes
    /// more, as for a flaky original: the miss may have been one).
    fn first_runs(
        &self,
        text: &str,
        given: Option<&Signature>,
        prior: Vec<Outcome>,
    ) -> Result<(Vec<Outcome>, WarmRun)> {
        let early = self.early_warm.filter(|_| text == self.text);
        let Some(original) = early.and_then(|_| self.original().ok()) else {
            let mut runs = prior;
            runs.extend(run_many(text, 2 - runs.len(), &self.workers)?);
            return Ok((runs, WarmRun::NotRun));
        };
        let mut warm = self.workers.clone();
        warm.warm = Some(original);
        let (cold, warm) = std::thread::scope(|scope| {
            // Under the runner a candidate runs under (the harness of a plain warm run), so
            // that its report gives the kinds of the original's calls.
            let warm = scope.spawn(|| warm.probe(text, kinds::first_runner()));
            let cold = match prior.into_iter().next() {
                Some(cold) => Ok(cold),
                None => run_one(text, &self.workers),
            };
            (cold, warm.join())
        });
        let cold = cold?;
        let warm = match warm.map_err(|_| anyhow::anyhow!("the warm run panicked"))? {
            Err(e) if e.is::<process::Interrupted>() => return Err(e),
            warm => warm,
        };
        let sig = given.cloned().or_else(|| Signature::derive(&cold));
        let both = |o: &Outcome| sig.as_ref().is_some_and(|s| s.judge(o) == Verdict::Same);
        let warm = warm.map(|report| (kinds::without_report(&report), report));
        match warm {
            Ok((plain, report)) if both(&cold) && both(&plain) => {
                Ok((vec![cold, plain], WarmRun::Same(Box::new(report))))
            }
            _ => Ok((vec![cold, run_one(text, &self.workers)?], WarmRun::Missed)),
        }
    }

    /// The fresh runs of `text` made before the reduction (see `Options::prior`), at most
    /// two; none when they were of another script, or the reduction's candidates run where
    /// those runs did not (on a cluster).
    fn prior_runs(&self, text: &str) -> Vec<Outcome> {
        let prior = &self.options.prior;
        if prior.text != text || self.workers.remote {
            return Vec::new();
        }
        prior.runs.iter().take(2).cloned().collect()
    }

    /// Runs `text` twice, and five more times when the two disagree or a `given` signature
    /// was missed twice (a flaky repro), thirteen more when under half of those seven failed.
    /// The second run may be in a warm worker (see [`Reduction::first_runs`]).
    pub(super) fn runs(&self, text: &str, given: Option<Signature>) -> Result<BaselineEnd> {
        let prior = self.prior_runs(text);
        let prior_runs = prior.len();
        let (runs, warm) = self.first_runs(text, given.as_ref(), prior)?;
        let warm_checked = matches!(warm, WarmRun::Same(_));
        if given.as_ref().is_some_and(|s| !s.is_out_of_memory())
            && runs.iter().all(crate::engine::verdict::out_of_memory)
        {
            return Ok(BaselineEnd::OutOfMemory);
        }
        let explicit = given.is_some();
        let Some(sig) = given.or_else(|| self.derived(&runs)) else {
            eprintln!("scrub: the original does not fail: {}", describe(&runs[0]));
            return Ok(BaselineEnd::DoesNotFail);
        };
        let same = |o: &Outcome| sig.judge(o) == Verdict::Same;
        // A warm run's time and memory are not a fresh process's.
        let cold_runs = &runs[..if warm_checked { 1 } else { runs.len() }];
        let duration = cold_runs
            .iter()
            .map(|o| o.duration)
            .max()
            .unwrap_or_default();
        let peak_rss = cold_runs
            .iter()
            .map(|o| o.peak_rss)
            .max()
            .unwrap_or_default();
        let hits = runs.iter().filter(|o| same(o)).count();
        let timed_out = runs.iter().all(|o| o.status == Status::TimedOut);
        if hits == 0 && (timed_out || !explicit) {
            let near = match sig.judge(&runs[0]) {
                Verdict::NearMiss(_) => " (same class, other message)",
                _ => "",
            };
            eprintln!(
                "scrub: the original does not fail with {sig}: {}{near}",
                describe(&runs[0])
            );
            return Ok(BaselineEnd::DoesNotFail);
        }
        // Every run, for one that failed the same way to read the anchor off.
        let mut all = runs.clone();
        // A warm run that missed may have been a flaky miss: more cold runs tell.
        let (attempts, ratio) = if hits == 2 && !matches!(warm, WarmRun::Missed) {
            (1, "2/2".to_string())
        } else {
            // The two disagree, or a given signature was missed twice: a flaky repro shows
            // itself within five more runs.
            match self.flaky(text, &sig, hits, &mut all)? {
                Some(flaky) => flaky,
                None => {
                    eprintln!(
                        "scrub: the original does not fail with {sig} in 7 runs: {}",
                        describe(&runs[0])
                    );
                    return Ok(BaselineEnd::DoesNotFail);
                }
            }
        };
        let outcome = all
            .into_iter()
            .find(|o| same(o))
            .expect("a baseline that fails has a run that failed the same way");
        let sig = match explicit {
            true => self.with_detail(sig, &outcome),
            false => sig,
        };
        Ok(BaselineEnd::Fails(Box::new(Baseline {
            signature: sig,
            duration,
            peak_rss,
            attempts,
            ratio,
            outcome,
            warm_checked,
            warm_report: match warm {
                WarmRun::Same(report) => Some(*report),
                _ => None,
            },
            prior_runs,
        })))
    }

    /// The signature derived from the first run that failed (a flaky original may pass once),
    /// said on the console.
    fn derived(&self, runs: &[Outcome]) -> Option<Signature> {
        let sig = runs.iter().find_map(Signature::derive)?;
        self.console.say(format!(
            "signature: {sig} (derived from the original run; pass --sig to choose)"
        ));
        for name in sig.names() {
            self.console.say(format!("  {name}"));
        }
        Some(sig)
    }

    /// A given signature with the detail lines of the original's message (see
    /// [`Signature::with_detail`]), said on the console when there are any.
    fn with_detail(&self, sig: Signature, outcome: &Outcome) -> Signature {
        let before = sig.names().len();
        let sig = sig.with_detail(outcome);
        for name in sig.names().iter().skip(before) {
            self.console.say(format!(
                "signature: {name} (a line under the one --sig matched, which candidates keep too)"
            ));
        }
        sig
    }

    /// The attempts per candidate and the ratio of a flaky `text`, which failed as `sig` says
    /// `hits` times of the two runs in `all`, from more runs (added to `all`); `None` when
    /// none of seven failed so.
    fn flaky(
        &self,
        text: &str,
        sig: &Signature,
        hits: usize,
        all: &mut Vec<Outcome>,
    ) -> Result<Option<(usize, String)>> {
        let same = |o: &Outcome| sig.judge(o) == Verdict::Same;
        let more = run_many(text, 5, &self.workers)?;
        let (mut total, mut runs_done) = (hits + more.iter().filter(|o| same(o)).count(), 7);
        all.extend(more);
        if total == 0 {
            return Ok(None);
        }
        // A low ratio from 7 runs is a poor estimate, and it sets how often every candidate
        // is run: measure it over 20 runs.
        if total * 2 < runs_done {
            let extra = run_many(text, 13, &self.workers)?;
            total += extra.iter().filter(|o| same(o)).count();
            runs_done += 13;
            all.extend(extra);
        }
        let ratio = format!("{total}/{runs_done}");
        // Every cold run failed: only the warm one missed (see `first_runs`).
        if total == runs_done {
            return Ok(Some((1, ratio)));
        }
        let p = total as f64 / runs_done as f64;
        let attempts = ((MISS_RATE.ln() / (1.0 - p).ln()).ceil() as usize).clamp(2, MAX_ATTEMPTS);
        self.console.say(format!(
            "the original is flaky: it failed the same way {total} of {runs_done} times; each candidate gets up to {attempts} runs"
        ));
        Ok(Some((attempts, ratio)))
    }

    /// Samples the GPUs' memory while the original runs, when the jobs are to be chosen from
    /// it: there are GPUs, `--jobs` is not given and the workers are local.
    pub(super) fn device_watch(&self) -> Option<DeviceWatch> {
        let workers = &self.workers;
        let chosen = self.options.execution.jobs.is_none();
        if chosen && !workers.gpus.is_empty() && !workers.remote {
            DeviceWatch::start(&workers.gpus)
        } else {
            None
        }
    }

    /// The jobs from what `watch` saw of the original (see `engine::gpu_memory`).
    pub(super) fn jobs_from_devices(&mut self, watch: Option<DeviceWatch>) {
        let Some(watch) = watch else {
            return;
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, why) = gpu_memory::choose(&watch.stop(), cores);
        // The warm workers are made for them in `ground`, once their mode is known.
        self.workers.jobs = jobs;
        self.workers.max_memory = memory::limit(self.options.execution.max_memory, jobs);
        self.jobs_note = Some(why);
    }

    /// Whether warm candidates run in their worker's own process: when asked, or by default
    /// for a torch script whose original raised an exception. A fork of a worker that has
    /// imported torch costs a candidate 30–200 ms more on a CPU (a CUDA context on a GPU),
    /// and a crash in the worker's own process costs a new worker: a script that crashes
    /// forks.
    pub(super) fn in_process(&self, base: &Baseline) -> bool {
        match self.options.execution.backend {
            Backend::InProcess => true,
            Backend::Warm => {
                imported_modules(&self.text, self.interp.parser_version)
                    .iter()
                    .any(|m| m == "torch")
                    && !matches!(base.outcome.status, Status::Signaled(_))
            }
            Backend::Fork | Backend::Cold | Backend::Ray(_) => false,
        }
    }

    /// The input's absolute path, which warm workers preload.
    pub(super) fn original(&self) -> Result<std::path::PathBuf> {
        let file = &self.options.file;
        fs::canonicalize(file).with_context(|| format!("cannot resolve {}", file.display()))
    }

    /// Whether a warm run of the script the reduction starts from failed as `base` says, in
    /// the workers' mode: a torch script that crashed was checked in place, and its workers
    /// now fork.
    pub(super) fn warm_checked(&self, base: &Baseline) -> bool {
        base.warm_checked
            && self.start == self.text
            && self.early_warm == Some(self.workers.in_process)
    }

    /// Switches the workers to warm mode when the original fails the same way in a warm
    /// worker as it did cold (as one of its first runs did, or a run now); otherwise says so
    /// and stays cold. Returns why warm mode is off, `None` when it is on.
    pub(super) fn warm_up(&mut self, base: &Baseline) -> Result<Option<String>> {
        let original = self.original()?;
        let sig = &base.signature;
        let checked = self.warm_checked(base);
        let workers = &mut self.workers;
        workers.warm = Some(original);
        if checked {
            return Ok(None);
        }
        // A flaky original gets twice the runs a candidate gets, one of which must fail the
        // same way: a candidate's runs miss a true repro at most 5 % of the time, and a
        // reduction made cold for such a miss is many times slower.
        let mut run = run_one(&self.start, workers);
        for _ in 1..base.attempts * 2 {
            match &run {
                Ok(outcome) if sig.judge(outcome) != Verdict::Same => {
                    run = run_one(&self.start, workers);
                }
                _ => break,
            }
        }
        let cold_why = match run {
            Ok(outcome) if sig.judge(&outcome) == Verdict::Same => None,
            Ok(outcome) => {
                let why = format!(
                    "the original does not fail the same way in a warm worker ({})",
                    crate::engine::verdict::describe(&outcome)
                );
                self.console.say(format!("{why}; using cold workers"));
                Some(why)
            }
            Err(e) if e.is::<process::Interrupted>() || workers.remote => return Err(e),
            Err(e) => {
                let why = format!("cannot start a warm worker ({e:#})");
                self.console.warn(format!("{why}; using cold workers"));
                Some(why)
            }
        };
        if cold_why.is_some() {
            if workers.remote {
                bail!("the original does not fail the same way on the Ray actors as it does here");
            }
            workers.warm = None;
            workers.stop_zygotes();
        }
        Ok(cold_why)
    }
}
