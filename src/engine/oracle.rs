//! The reduction loop's oracle in the binary: the cache first, then the worker pool, with
//! a log of every run and the figures `--json` reports.

use std::collections::HashMap;
use std::time::Instant;

use scrub_reducers::control::Suspect;
use scrub_reducers::fix::Fix;
use scrub_reducers::{Oracle, Progress, PythonVersion, Script};

use crate::engine::cache::Cache;
use crate::engine::console::Console;
use crate::engine::process::{self, Outcome};
use crate::engine::rundir::RunDir;
use crate::engine::verdict::{Anchor, Signature, Verdict, describe};
use crate::engine::workers::Workers;

/// A candidate's control: its suspect replaced by the reference, or, when an edit of the
/// original's custom code made it pass, that edit made (see `scrub_reducers::fix`).
#[derive(Debug, Clone)]
pub(crate) struct Control {
    pub(crate) suspect: Suspect,
    pub(crate) fix: Option<Fix>,
    pub(crate) version: PythonVersion,
}

impl Control {
    /// The control of `script`; `None` when its suspect, or the code the fix changes, is gone.
    pub(crate) fn build(&self, script: &Script) -> Option<String> {
        match &self.fix {
            Some(fix) => fix.apply(script),
            None => self.suspect.control(script, self.version),
        }
    }
}

/// The reduction loop's oracle: cache first, then worker processes.
pub(crate) struct ProcessOracle<'a> {
    pub(crate) workers: &'a Workers,
    pub(crate) cache: &'a Cache,
    pub(crate) sig: &'a Signature,
    /// Where the original failed and what it computed, which a candidate must keep.
    pub(crate) anchor: &'a Anchor,
    /// The control that must pass for a candidate to count.
    pub(crate) control: Option<Control>,
    /// Control runs (counted in `calls` too).
    pub(crate) control_calls: usize,
    /// For a custom implementation's control: the library calls of the original's reference
    /// side, which every candidate's must still make.
    pub(crate) reference_calls: Vec<String>,
    /// For a custom implementation's control: how many of the original's custom sides read
    /// nothing of their input (see `scrub_reducers::control::hollow_customs`); no candidate
    /// may have more.
    pub(crate) hollow_customs: usize,
    pub(crate) attempts: usize,
    pub(crate) run_dir: &'a RunDir,
    pub(crate) console: &'a Console,
    pub(crate) calls: usize,
    pub(crate) hits: usize,
    /// Every script the loop accepted, the original first.
    pub(crate) history: Vec<String>,
    pub(crate) pass: String,
    /// Seconds spent running candidates, per pass.
    pub(crate) oracle_seconds: HashMap<String, f64>,
    /// (candidate runs so far, non-blank lines) after every accepted step.
    pub(crate) trace: Vec<(usize, usize)>,
    /// The most memory a candidate run held, in bytes.
    pub(crate) peak_rss: u64,
}

impl<'a> ProcessOracle<'a> {
    /// An oracle for reducing `original` on `workers`; a flaky repro gets `attempts` runs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        original: &str,
        workers: &'a Workers,
        cache: &'a Cache,
        sig: &'a Signature,
        anchor: &'a Anchor,
        attempts: usize,
        run_dir: &'a RunDir,
        console: &'a Console,
    ) -> ProcessOracle<'a> {
        ProcessOracle {
            workers,
            cache,
            sig,
            anchor,
            control: None,
            control_calls: 0,
            reference_calls: Vec::new(),
            hollow_customs: 0,
            attempts,
            run_dir,
            console,
            calls: 0,
            hits: 0,
            history: vec![original.to_string()],
            pass: String::new(),
            oracle_seconds: HashMap::new(),
            trace: vec![(0, scrub_reducers::count_lines(original))],
            peak_rss: 0,
        }
    }

    /// What a run of `text` means: the signature's verdict, a near miss when the failure
    /// moved from its anchor.
    fn verdict(&self, text: &str, outcome: &Outcome) -> Verdict {
        judge(self.sig, self.anchor, text, outcome)
    }

    /// Refuses, among the candidates that failed the same way, those whose control cannot be
    /// built (the suspect is gone) or does not pass (the failure is not the suspect's).
    fn controlled(
        &mut self,
        texts: &[String],
        verdicts: &mut [bool],
    ) -> Result<(), scrub_reducers::Interrupted> {
        let Some(guard) = self.control.clone() else {
            return Ok(());
        };
        let suspect = guard.suspect;
        let mut pending = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            if !verdicts[i] {
                continue;
            }
            let script = Script::parse(text.as_str(), guard.version);
            let lost = script.as_ref().and_then(|script| {
                let kept = scrub_reducers::control::reference_calls(script);
                self.reference_calls
                    .iter()
                    .find(|call| !kept.contains(call))
                    .filter(|_| suspect == Suspect::Custom)
            });
            if let Some(call) = lost {
                self.run_dir
                    .log(format!("near miss: the reference no longer calls {call}"));
                verdicts[i] = false;
                continue;
            }
            if suspect == Suspect::Custom
                && script.as_ref().is_some_and(|s| {
                    scrub_reducers::control::hollow_customs(s) > self.hollow_customs
                })
            {
                self.run_dir
                    .log("near miss: the script's own computation no longer reads its input");
                verdicts[i] = false;
                continue;
            }
            let control = script.and_then(|script| guard.build(&script));
            let Some(control) = control else {
                self.run_dir.log(match &guard.fix {
                    Some(fix) => format!(
                        "near miss: the code the original's fix changes ({}) is gone",
                        fix.describe()
                    ),
                    None => format!("near miss: no control ({}) can be built", suspect.as_str()),
                });
                verdicts[i] = false;
                continue;
            };
            let key = self.cache.key(&control);
            match self.cache.get(&key) {
                Some(outcome) => {
                    self.hits += 1;
                    verdicts[i] = passes(&outcome);
                }
                None => pending.push((i, control, key)),
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let batch: Vec<&str> = pending.iter().map(|(_, c, _)| c.as_str()).collect();
        let results = self.charged(batch.len(), |workers| workers.run_all(&batch));
        self.control_calls += batch.len();
        for ((i, control, key), result) in pending.into_iter().zip(results) {
            let outcome = match result {
                Ok(o) => o,
                Err(e) if e.is::<process::Interrupted>() => {
                    return Err(scrub_reducers::Interrupted);
                }
                Err(e) => {
                    self.run_dir.log(format!("could not run a control: {e:#}"));
                    verdicts[i] = false;
                    continue;
                }
            };
            let label = if passes(&outcome) {
                "control passes".to_string()
            } else {
                format!("control fails too: {}", describe(&outcome))
            };
            if !passes(&outcome) {
                self.run_dir.log(format!("near miss: {label}"));
            }
            self.run_dir.record(&control, &outcome, &label);
            self.cache.put(&key, &outcome);
            verdicts[i] = passes(&outcome);
        }
        Ok(())
    }

    /// `run`, which runs `runs` scripts on the workers, with its time charged to the current
    /// pass and its runs counted.
    fn charged<T>(&mut self, runs: usize, run: impl FnOnce(&Workers) -> T) -> T {
        let start = Instant::now();
        let out = run(self.workers);
        *self.oracle_seconds.entry(self.pass.clone()).or_default() += start.elapsed().as_secs_f64();
        self.calls += runs;
        out
    }
}

/// Whether a control run passed: it ran to completion.
pub(crate) fn passes(outcome: &Outcome) -> bool {
    outcome.status == process::Status::Exited(0)
}

/// The signature's verdict on a run of `text`, made a near miss when the failure moved from
/// `anchor`.
pub(crate) fn judge(sig: &Signature, anchor: &Anchor, text: &str, outcome: &Outcome) -> Verdict {
    match sig.judge(outcome) {
        Verdict::Same => match anchor.moved(text, outcome) {
            Some(why) => Verdict::NearMiss(why),
            None => Verdict::Same,
        },
        other => other,
    }
}

impl Oracle for ProcessOracle<'_> {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, scrub_reducers::Interrupted> {
        let keys: Vec<_> = texts.iter().map(|t| self.cache.key(t)).collect();
        let mut verdicts = vec![false; texts.len()];
        let mut pending = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            match self.cache.get(key) {
                Some(outcome) => {
                    self.hits += 1;
                    verdicts[i] = self.verdict(&texts[i], &outcome) == Verdict::Same;
                }
                None => pending.push(i),
            }
        }
        // A flaky repro gets several tries; a candidate stops at its first failure.
        let mut last: Vec<Option<Outcome>> = vec![None; texts.len()];
        for _ in 0..self.attempts {
            if pending.is_empty() {
                break;
            }
            let batch: Vec<&str> = pending.iter().map(|&i| texts[i].as_str()).collect();
            let results = self.charged(batch.len(), |workers| workers.run_all(&batch));
            for event in self.workers.events() {
                self.run_dir.log(event);
            }
            let mut still = Vec::new();
            for (&i, result) in pending.iter().zip(results) {
                let outcome = match result {
                    Ok(o) => o,
                    Err(e) if e.is::<process::Interrupted>() => {
                        return Err(scrub_reducers::Interrupted);
                    }
                    Err(e) => {
                        self.run_dir
                            .log(format!("could not run a candidate: {e:#}"));
                        continue;
                    }
                };
                self.peak_rss = self.peak_rss.max(outcome.peak_rss);
                let verdict = self.verdict(&texts[i], &outcome);
                let label = match &verdict {
                    Verdict::Same => "same failure".to_string(),
                    Verdict::NearMiss(header) => {
                        self.run_dir.log(format!("near miss: {header}"));
                        format!("near miss: {header}")
                    }
                    Verdict::Other => describe(&outcome),
                };
                self.run_dir.record(&texts[i], &outcome, &label);
                if verdict == Verdict::Same {
                    verdicts[i] = true;
                    self.cache.put(&keys[i], &outcome);
                } else {
                    last[i] = Some(outcome);
                    still.push(i);
                }
            }
            pending = still;
        }
        for i in pending {
            if let Some(outcome) = &last[i] {
                self.cache.put(&keys[i], outcome);
            }
        }
        self.controlled(texts, &mut verdicts)?;
        Ok(verdicts)
    }

    fn seconds(&self, pass: &str) -> Option<f64> {
        Some(self.oracle_seconds.get(pass).copied().unwrap_or(0.0))
    }

    fn crash(&mut self, text: &str) -> Option<scrub_reducers::Crash> {
        // Only an exception has a traceback to follow.
        if !matches!(self.sig, Signature::Exception { .. }) {
            return None;
        }
        let key = self.cache.key(&crate::engine::probe::cache_text(text));
        let outcome = match self.cache.get(&key) {
            Some(outcome) => {
                self.hits += 1;
                outcome
            }
            None => match self.charged(1, |workers| workers.probe(text)) {
                Ok(outcome) => {
                    self.cache.put(&key, &outcome);
                    outcome
                }
                Err(e) => {
                    self.run_dir.log(format!("probe failed: {e:#}"));
                    return None;
                }
            },
        };
        let crash = crate::engine::probe::crash(&outcome);
        self.run_dir.log(match &crash {
            Some(c) => format!(
                "probe: failing lines {:?}",
                c.frames.iter().map(|f| f.line).collect::<Vec<_>>()
            ),
            None => "probe: no traceback through the script".to_string(),
        });
        crash
    }

    fn progress(&mut self, p: &Progress) {
        if self.history.last().is_some_and(|h| h != p.text) {
            self.run_dir.log(format!(
                "accepted ({}): {} lines, {} bytes",
                p.pass, p.lines, p.bytes
            ));
            self.history.push(p.text.to_string());
            self.trace.push((self.calls, p.lines));
        }
        if self.pass != p.pass {
            self.run_dir.log(format!("round {}: {}", p.round, p.pass));
            self.pass = p.pass.to_string();
        }
        self.console
            .status(p.pass, p.lines, p.bytes, self.calls, self.hits);
    }
}
