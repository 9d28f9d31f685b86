//! The reduction loop's oracle in the binary: the cache first, then the worker pool, with
//! a log of every run and the figures `--json` reports.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::time::Instant;

use scrub_reducers::control::Suspect;
use scrub_reducers::fix::Fix;
use scrub_reducers::{Oracle, Progress, PythonVersion, Script};

use crate::engine::cache::{Cache, Key};
use crate::engine::console::Console;
use crate::engine::kinds;
use crate::engine::process::{self, Outcome};
use crate::engine::rundir::RunDir;
use crate::engine::verdict::{Anchor, Signature, Verdict, describe};
use crate::engine::workers::{Pool, Workers};

/// A candidate's control: its suspect replaced by the reference, or, when an edit of the
/// original's custom code made it pass, that edit made (see `scrub_reducers::fix`).
#[derive(Debug, Clone)]
pub(crate) struct Control {
    pub(crate) suspect: Suspect,
    pub(crate) fix: Option<Fix>,
    pub(crate) version: PythonVersion,
    /// For a custom implementation: the library calls of the original's reference side,
    /// which every candidate's must still make.
    pub(crate) reference_calls: Vec<String>,
    /// For a custom implementation: how many of the original's custom sides read nothing of
    /// their input (see `scrub_reducers::control::hollow_customs`); no candidate may have more.
    pub(crate) hollow_customs: usize,
    /// For a compiled function: how many of the original's compiled callables it also calls
    /// eagerly (see `scrub_reducers::control::eager_references`); no candidate may have fewer
    /// when the failure is a check of results (`mismatch`).
    pub(crate) eager_references: usize,
    /// Whether the failure is a check comparing results (an `AssertionError`), where the eager
    /// call is the reference; a failure raised inside the compiled call needs no eager call.
    pub(crate) mismatch: bool,
    /// Whether the control runs. It does not when none passed on the original: the result is
    /// unguarded, and only the checks on the code hold.
    pub(crate) runs: bool,
    /// For a custom implementation guarded by nothing that names its code (no fix; or a
    /// control that does not run): what the original's custom sides call (see
    /// `scrub_reducers::control::custom_calls`), which every candidate must still call. A
    /// control that replaces the custom side by the reference passes whatever that side
    /// computes, the input itself included: without this, `x` compared with `softplus(x)`
    /// would stand for a broken softplus.
    pub(crate) custom_calls: Vec<String>,
    /// For a custom implementation whose control does not run: the statements of its
    /// computation, which every candidate keeps as they are (see
    /// `scrub_reducers::control::custom_code`).
    pub(crate) custom_code: Vec<String>,
}

impl Control {
    /// The control of a reduction that starts from `original`.
    pub(crate) fn new(
        suspect: Suspect,
        fix: Option<Fix>,
        original: &str,
        version: PythonVersion,
    ) -> Control {
        let parsed = Script::parse(original, version);
        let custom = parsed.as_ref().filter(|_| suspect == Suspect::Custom);
        let custom_calls = custom
            .filter(|_| fix.is_none())
            .map(scrub_reducers::control::custom_calls)
            .unwrap_or_default();
        Control {
            suspect,
            fix,
            version,
            runs: true,
            mismatch: true,
            custom_calls,
            custom_code: Vec::new(),
            reference_calls: custom
                .map(scrub_reducers::control::reference_calls)
                .unwrap_or_default(),
            hollow_customs: custom.map_or(0, scrub_reducers::control::hollow_customs),
            eager_references: parsed
                .as_ref()
                .filter(|_| suspect == Suspect::Compile)
                .map_or(0, scrub_reducers::control::eager_references),
        }
    }

    /// The guard of a custom implementation whose control does not pass on `original`: no
    /// run, and every candidate still makes the calls of its custom code.
    pub(crate) fn unrun(original: &str, version: PythonVersion) -> Control {
        Control {
            runs: false,
            custom_code: Script::parse(original, version)
                .map(|s| scrub_reducers::control::custom_code(&s))
                .unwrap_or_default(),
            ..Control::new(Suspect::Custom, None, original, version)
        }
    }

    /// The same control for a reduction that starts from `start` instead (the minifier's
    /// plain script): what no candidate may lose is counted there.
    pub(crate) fn starting_from(&self, start: &str) -> Control {
        if !self.runs {
            return Control::unrun(start, self.version);
        }
        Control {
            mismatch: self.mismatch,
            ..Control::new(self.suspect, self.fix.clone(), start, self.version)
        }
    }

    /// The checks on the code of `script` (see the fields): why it lost the suspect, if it did.
    pub(crate) fn lost(&self, script: &Script) -> Option<String> {
        if self.suspect == Suspect::Custom {
            // A fix keeps the suspect compared even where its own code was inlined (and its
            // operators with it: only the library calls are looked for then).
            use scrub_reducers::control::{compared_calls, counted, is_operator, reference_calls};
            let (kept, needed) = if self.fix.is_some() {
                let calls: Vec<String> = (self.reference_calls.iter())
                    .filter(|c| !is_operator(c))
                    .cloned()
                    .collect();
                (compared_calls(script), calls)
            } else {
                (reference_calls(script), self.reference_calls.clone())
            };
            if let Some(call) = scrub_reducers::control::missing_call(&needed, &counted(kept)) {
                return Some(format!("the reference no longer makes each {call}"));
            }
            if scrub_reducers::control::hollow_customs(script) > self.hollow_customs {
                return Some("the script's own computation no longer reads its input".into());
            }
            if let Err(lost) = scrub_reducers::control::keeps_code(script, &self.custom_code) {
                return Some(format!("the custom code no longer holds `{lost}`"));
            }
            let made = scrub_reducers::control::calls_made(script);
            if let Some(call) = scrub_reducers::control::missing_call(&self.custom_calls, &made) {
                return Some(format!("the custom code no longer makes each {call}"));
            }
        }
        if self.suspect == Suspect::Compile
            && self.mismatch
            && scrub_reducers::control::eager_references(script) < self.eager_references
        {
            return Some("the compiled function is no longer compared with its eager call".into());
        }
        None
    }

    /// The control of `script`; `None` when its suspect, or the code the fix changes, is gone.
    pub(crate) fn build(&self, script: &Script) -> Option<String> {
        match &self.fix {
            Some(fix) => fix.apply(script),
            None => self.suspect.control(script, self.version),
        }
    }
}

/// What a candidate must keep to count: the failure, where the original failed and what it
/// computed there, and the runs a flaky repro gets to show it.
pub(crate) struct Criteria {
    pub(crate) sig: Signature,
    /// Where the original failed and what it computed, which a candidate must keep.
    pub(crate) anchor: Anchor,
    /// Runs a candidate gets before it counts as not failing.
    pub(crate) attempts: usize,
    /// The calls the original makes into libraries on its failing path, with the kinds of
    /// the values it hands them (see [`crate::engine::kinds`]): a candidate's calls must keep
    /// them. Empty when nothing is checked.
    pub(crate) kinds: Vec<kinds::Call>,
    /// For a custom implementation that no control guards: the calls of its custom code that
    /// ran in the original's failing run, which must run in every candidate's (see
    /// `scrub_reducers::control::calls_run`). Empty when nothing is checked.
    pub(crate) custom_run: Vec<String>,
    /// What the library made that the original's failing call reads (`ast.unparse` for
    /// `ast.parse(new_code)`): a candidate's failing call reads it too. Empty when nothing is
    /// checked.
    pub(crate) made_for: BTreeSet<String>,
    /// For a failed check, how far apart its sides were in the original's run: a candidate's
    /// are as far apart (see [`kinds::Apart::moved`]). `None` when nothing is checked.
    pub(crate) apart: Option<kinds::Apart>,
    /// The Python version the scripts are parsed as.
    pub(crate) version: PythonVersion,
}

impl Criteria {
    /// What a run of `text` means: the signature's verdict, a near miss when the failure
    /// moved from its anchor.
    pub(crate) fn judge(&self, text: &str, outcome: &Outcome) -> Verdict {
        match self.sig.judge(outcome) {
            Verdict::Same => match self.anchor.moved(text, outcome) {
                Some(why) => Verdict::NearMiss(why),
                None => Verdict::Same,
            },
            other => other,
        }
    }

    /// Why a run of `text` under the kinds runner (see [`crate::engine::kinds`]) shows a
    /// user's mistake: a call on its failing path received a value of another kind than the
    /// original's, the failing call lost a positional argument, or it no longer reads what the
    /// library made for it (see [`Criteria::made_for`]).
    pub(crate) fn kinds_changed(&self, text: &str, outcome: &Outcome) -> Option<String> {
        // A run under the runner that did not fail as the candidate's did (it timed out on a
        // loaded machine, it was flaky) tells nothing: no verdict rests on a report it lacks.
        let plain = kinds::without_report(outcome);
        if self.judge(text, &plain) != Verdict::Same {
            return Some(format!(
                "its run under the kinds runner did not fail the same way: {}",
                describe(&plain)
            ));
        }
        if !self.kinds.is_empty() && kinds::calls(outcome).is_none() {
            return Some("its run under the kinds runner reported no calls".to_string());
        }
        if let Some(why) = self
            .apart
            .as_ref()
            .zip(kinds::apart(outcome))
            .and_then(|(was, now)| was.moved(&now))
        {
            return Some(why);
        }
        let calls = kinds::calls(outcome)?;
        kinds::changed(&self.kinds, &calls).or_else(|| self.made_lost(text, &calls))
    }

    /// Which of [`Criteria::made_for`] the failing call of `text`'s run (its `calls`) no
    /// longer reads.
    fn made_lost(&self, text: &str, calls: &[kinds::Call]) -> Option<String> {
        if self.made_for.is_empty() {
            return None;
        }
        let read = kinds::failing_place(calls)
            .zip(Script::parse(text, self.version))
            .map(|(place, script)| scrub_reducers::producers::read_by(&script, place))
            .unwrap_or_default();
        let lost = self.made_for.difference(&read).next()?;
        Some(format!(
            "the failing call no longer reads what {lost} made: it fails on a value the script wrote"
        ))
    }

    /// Why the run of `text` under the kinds runner shows that the custom code no longer
    /// runs: a call of it that ran in the original ran on none of `text`'s lines.
    pub(crate) fn custom_lost(&self, text: &str, outcome: &Outcome) -> Option<String> {
        if self.custom_run.is_empty() {
            return None;
        }
        let ran = kinds::calls_run(outcome, text, self.version);
        let call = self.custom_run.iter().find(|c| !ran.contains(*c))?;
        Some(format!("the custom code's {call} no longer runs"))
    }

    /// The runner a warm candidate runs under from the start, when its calls into libraries
    /// are checked and nothing else of its run is (see [`kinds::plain_runner`]): its report
    /// comes with its first run, and no second run is made.
    pub(crate) fn first_runner(&self) -> Option<&'static str> {
        if !self.checks_path() || !self.custom_run.is_empty() {
            return None;
        }
        kinds::plain_runner(&self.sig)
    }

    /// Whether a candidate's run under the kinds runner is read: for its calls into
    /// libraries, or for how far apart its failed check's sides are.
    pub(crate) fn checks_path(&self) -> bool {
        !self.kinds.is_empty() || self.apart.is_some()
    }

    /// The runner a text that failed the same way runs under next, when its path is checked.
    pub(crate) fn runner(&self) -> Option<&'static str> {
        match (!self.checks_path(), self.custom_run.is_empty()) {
            (true, true) => None,
            (_, lines) => Some(kinds::runner(&self.sig, !lines)),
        }
    }
}

/// The reduction loop's oracle: cache first, then worker processes. Texts are judged as the
/// loop starts them, each run on the first worker free (see [`Pool`]); the runs a text takes
/// (its attempts, then its control) follow one another there, and its verdict comes back when
/// the last one ends.
pub(crate) struct ProcessOracle<'a> {
    pub(crate) workers: &'a Workers,
    pub(crate) cache: &'a Cache,
    /// What a candidate must keep to count.
    pub(crate) criteria: &'a Criteria,
    /// The control that must pass for a candidate to count.
    pub(crate) control: Option<Control>,
    /// Control runs (counted in `calls` too).
    pub(crate) control_calls: usize,
    pub(crate) run_dir: &'a RunDir,
    pub(crate) console: &'a Console,
    pub(crate) calls: usize,
    pub(crate) hits: usize,
    /// Candidate runs that failed with the signature's class but not its message, inner error,
    /// cause or path (see [`Verdict::NearMiss`]).
    pub(crate) near_misses: usize,
    /// Of those, the candidates whose calls into libraries received values of another kind
    /// (see [`crate::engine::kinds`]).
    pub(crate) kind_misses: usize,
    /// Candidates that failed the same way and whose control failed too: the same failure
    /// without the suspect, a user's mistake.
    pub(crate) control_misses: usize,
    /// Runs under the kinds runner (counted in `calls` too).
    pub(crate) kinds_calls: usize,
    /// Every script the loop accepted, the original first.
    pub(crate) history: Vec<String>,
    /// What made each script of `history` (the pass and its step), in order.
    pub(crate) steps: Vec<String>,
    pub(crate) pass: String,
    /// Seconds spent running candidates, per pass.
    pub(crate) oracle_seconds: HashMap<String, f64>,
    /// (candidate runs so far, non-blank lines) after every accepted step.
    pub(crate) trace: Vec<(usize, usize)>,
    /// The most memory a candidate run held, in bytes.
    pub(crate) peak_rss: u64,
    /// The workers runs are handed to, made at the first.
    pool: Option<Pool>,
    /// The texts with a run on the workers, by the run's number.
    running: HashMap<u64, Judging>,
    runs_started: u64,
    /// Verdicts not yet given to the loop.
    judged: VecDeque<(String, bool)>,
}

/// A text being judged.
struct Judging {
    text: String,
    key: Key,
    /// The runs of the text so far: a flaky repro gets several, until its first failure.
    attempts: usize,
    /// The control that must pass once the text failed the same way, and its key.
    guard: Option<(String, Key)>,
    /// Once the text failed the same way, the key of its run under the kinds runner, which
    /// runs next.
    kinds: Option<Key>,
    /// Once the text failed the same way, that control, which runs next.
    control: Option<(String, Key)>,
    /// The control's passing runs so far (see [`control_runs`]).
    control_passed: usize,
}

/// The passing runs a control needs: two when it draws random numbers without a seed, whose
/// draw may pass a comparison by chance (a tolerance that only large values meet), else one.
pub(crate) fn control_runs(control: &str) -> usize {
    if draws_at_random(control) && !control.contains("manual_seed") {
        2
    } else {
        1
    }
}

/// Whether `text` may draw random numbers: a random tensor, distribution or dropout, Python's
/// or numpy's generator, a module whose parameters are initialised at random (`nn.…`), or
/// uninitialised memory. Meant to err towards yes: only a script that draws nothing loses the
/// seed whatever it compares.
pub(crate) fn draws_at_random(text: &str) -> bool {
    [
        "rand",
        "normal",
        "uniform",
        "bernoulli",
        "multinomial",
        "poisson",
        "dropout",
        "Dropout",
        "random",
        "nn.",
        "empty",
        "init.",
    ]
    .iter()
    .any(|word| text.contains(word))
}

impl<'a> ProcessOracle<'a> {
    /// An oracle for reducing `original` on `workers` by `criteria`.
    pub(crate) fn new(
        original: &str,
        criteria: &'a Criteria,
        workers: &'a Workers,
        cache: &'a Cache,
        run_dir: &'a RunDir,
        console: &'a Console,
    ) -> ProcessOracle<'a> {
        ProcessOracle {
            workers,
            cache,
            criteria,
            control: None,
            control_calls: 0,
            run_dir,
            console,
            calls: 0,
            hits: 0,
            near_misses: 0,
            kind_misses: 0,
            kinds_calls: 0,
            control_misses: 0,
            history: vec![original.to_string()],
            steps: vec!["the script the passes started from".to_string()],
            pass: String::new(),
            oracle_seconds: HashMap::new(),
            trace: vec![(0, scrub_reducers::count_lines(original))],
            peak_rss: 0,
            pool: None,
            running: HashMap::new(),
            runs_started: 0,
            judged: VecDeque::new(),
        }
    }

    /// Hands the next run of `judging` to the workers: its control once it has one, else the
    /// text itself.
    fn launch(&mut self, judging: Judging) {
        let (text, probe) = match (&judging.control, &judging.kinds) {
            (Some((control, _)), _) => {
                self.control_calls += 1;
                (control.clone(), None)
            }
            (None, Some(_)) => {
                self.kinds_calls += 1;
                (judging.text.clone(), self.criteria.runner())
            }
            (None, None) => (judging.text.clone(), self.first_runner()),
        };
        let id = self.runs_started;
        self.runs_started += 1;
        self.calls += 1;
        let workers = self.workers;
        self.pool
            .get_or_insert_with(|| workers.pool())
            .start(id, text, probe);
        self.running.insert(id, judging);
    }

    /// The runner a candidate's own runs are made under (see [`Criteria::first_runner`]):
    /// only on warm workers, where it is the harness a plain run has; a cold run under it is
    /// `python -c`, not `python repro.py`.
    fn first_runner(&self) -> Option<&'static str> {
        self.workers.warm.as_ref().and(self.criteria.first_runner())
    }

    /// The control `text` must pass, with its key: `Ok(None)` when nothing guards the
    /// reduction. `Err` says why `text` cannot count whatever its run shows: the control cannot
    /// be built (the suspect, or the code the fix changes, is gone), the reference lost a
    /// library call, or the script's own computation no longer reads its input. Such a text is
    /// refused without a run.
    pub(crate) fn control_of(&self, text: &str) -> Result<Option<(String, Key)>, String> {
        let Some(guard) = &self.control else {
            return Ok(None);
        };
        let suspect = guard.suspect;
        let script = Script::parse(text, guard.version);
        if let Some(why) = script.as_ref().and_then(|s| guard.lost(s)) {
            return Err(why);
        }
        if !guard.runs {
            return Ok(None);
        }
        let Some(control) = script.and_then(|script| guard.build(&script)) else {
            return Err(match &guard.fix {
                Some(fix) => format!(
                    "the code the original's fix changes ({}) is gone",
                    fix.describe()
                ),
                None => format!("no control ({}) can be built", suspect.as_str()),
            });
        };
        let key = self.cache.key(&control);
        Ok(Some((control, key)))
    }

    /// The text of `judging` failed the same way: its calls into libraries are checked next,
    /// when the original's are known (from the cache, or a run under the kinds runner).
    fn failed_the_same_way(&mut self, mut judging: Judging) {
        let Some(runner) = self.criteria.runner() else {
            return self.kinds_kept(judging);
        };
        let key = self.cache.key(&kinds::cache_text(runner, &judging.text));
        match self.cache.get(&key) {
            Some(outcome) => {
                self.hits += 1;
                self.kinds_ran(judging, &outcome);
            }
            None => {
                judging.kinds = Some(key);
                self.launch(judging);
            }
        }
    }

    /// The run of `judging` under the kinds runner ended with `outcome`: a near miss when its
    /// calls into libraries received values of another kind.
    fn kinds_ran(&mut self, judging: Judging, outcome: &Outcome) {
        if let Some(why) = self.criteria.kinds_changed(&judging.text, outcome) {
            self.near_misses += 1;
            self.kind_misses += 1;
            self.run_dir.log(format!("near miss: kinds: {why}"));
            self.judged.push_back((judging.text, false));
        } else if let Some(why) = self.criteria.custom_lost(&judging.text, outcome) {
            self.control_misses += 1;
            self.run_dir.log(format!("near miss: {why}"));
            self.judged.push_back((judging.text, false));
        } else {
            self.kinds_kept(judging);
        }
    }

    /// The text of `judging` failed the same way and kept its kinds: it is judged once its
    /// control, when there is one, is known to pass.
    fn kinds_kept(&mut self, mut judging: Judging) {
        let Some((control, key)) = judging.guard.take() else {
            self.judged.push_back((judging.text, true));
            return;
        };
        match self.cache.get(&key) {
            Some(outcome) => {
                self.hits += 1;
                self.judged.push_back((judging.text, passes(&outcome)));
            }
            None => {
                judging.control = Some((control, key));
                self.launch(judging);
            }
        }
    }

    /// What the run of `judging` that ended with `result` means: a verdict, or another run.
    fn run_ended(
        &mut self,
        mut judging: Judging,
        result: anyhow::Result<Outcome>,
    ) -> Result<(), scrub_reducers::Interrupted> {
        let what = match (&judging.control, &judging.kinds) {
            (Some(_), _) => "control",
            (None, Some(_)) => "run under the kinds runner",
            (None, None) => "candidate",
        };
        let outcome = match result {
            Ok(o) => o,
            Err(e) if e.is::<process::Interrupted>() => return Err(scrub_reducers::Interrupted),
            Err(e) => {
                self.run_dir.log(format!("could not run a {what}: {e:#}"));
                self.judged.push_back((judging.text, false));
                return Ok(());
            }
        };
        if judging.control.is_none()
            && let Some(key) = judging.kinds.take()
        {
            self.cache.put(&key, &outcome);
            self.kinds_ran(judging, &outcome);
            return Ok(());
        }
        if let Some((control, key)) = &judging.control {
            if passes(&outcome) && judging.control_passed + 1 < control_runs(control) {
                self.run_dir
                    .record(control, &outcome, "control passes; it runs again");
                judging.control_passed += 1;
                self.launch(judging);
                return Ok(());
            }
            let label = if passes(&outcome) {
                "control passes".to_string()
            } else {
                let label = format!("control fails too: {}", describe(&outcome));
                self.control_misses += 1;
                self.run_dir.log(format!("near miss: {label}"));
                label
            };
            self.run_dir.record(control, &outcome, &label);
            self.cache.put(key, &outcome);
            self.judged.push_back((judging.text, passes(&outcome)));
            return Ok(());
        }
        // A run under the runner is judged as the plain run it is; its report is read only
        // when it failed the same way.
        let runner = self.first_runner();
        let (outcome, full) = match runner {
            Some(_) => (kinds::without_report(&outcome), Some(outcome)),
            None => (outcome, None),
        };
        self.peak_rss = self.peak_rss.max(outcome.peak_rss);
        let verdict = self.criteria.judge(&judging.text, &outcome);
        let label = match &verdict {
            Verdict::Same => "same failure".to_string(),
            Verdict::NearMiss(header) => {
                self.near_misses += 1;
                self.run_dir.log(format!("near miss: {header}"));
                format!("near miss: {header}")
            }
            Verdict::Other => describe(&outcome),
        };
        self.run_dir.record(&judging.text, &outcome, &label);
        if verdict == Verdict::Same {
            self.cache.put(&judging.key, &outcome);
            match runner.zip(full) {
                Some((runner, full)) => {
                    let key = self.cache.key(&kinds::cache_text(runner, &judging.text));
                    self.cache.put(&key, &full);
                    self.kinds_ran(judging, &full);
                }
                None => self.failed_the_same_way(judging),
            }
        } else if judging.attempts < self.criteria.attempts {
            // A flaky repro gets several tries; a candidate stops at its first failure.
            judging.attempts += 1;
            self.launch(judging);
        } else {
            self.cache.put(&judging.key, &outcome);
            self.judged.push_back((judging.text, false));
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

impl Oracle for ProcessOracle<'_> {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, scrub_reducers::Interrupted> {
        let mut wanted: HashSet<&str> = HashSet::new();
        for text in texts {
            if wanted.insert(text) {
                self.start(text);
            }
        }
        let mut verdicts = HashMap::new();
        let mut others = Vec::new();
        while verdicts.len() < wanted.len() {
            let (text, verdict) = self.ended()?;
            if wanted.contains(text.as_str()) && !verdicts.contains_key(&text) {
                verdicts.insert(text, verdict);
            } else {
                others.push((text, verdict));
            }
        }
        // Texts the loop started before are still its own to wait for.
        self.judged.extend(others);
        Ok(texts.iter().map(|t| verdicts[t]).collect())
    }

    fn start(&mut self, text: &str) -> bool {
        let key = self.cache.key(text);
        let guard = match self.control_of(text) {
            Ok(guard) => guard,
            Err(why) => {
                self.run_dir.log(format!("not run: {why}"));
                self.judged.push_back((text.to_string(), false));
                return true;
            }
        };
        let judging = Judging {
            text: text.to_string(),
            key,
            attempts: 1,
            guard,
            kinds: None,
            control: None,
            control_passed: 0,
        };
        match self.cache.get(&key) {
            Some(outcome) => {
                self.hits += 1;
                if self.criteria.judge(text, &outcome) == Verdict::Same {
                    self.failed_the_same_way(judging);
                } else {
                    self.judged.push_back((judging.text, false));
                }
            }
            None => self.launch(judging),
        }
        true
    }

    fn ended(&mut self) -> Result<(String, bool), scrub_reducers::Interrupted> {
        loop {
            // Verdicts the cache gave run no process that would notice a Ctrl-C or a SIGTERM:
            // a loop of cached steps stops here.
            if crate::engine::process::INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
                return Err(scrub_reducers::Interrupted);
            }
            if let Some(judged) = self.judged.pop_front() {
                return Ok(judged);
            }
            let waited = Instant::now();
            let (id, result) = self.pool.as_ref().expect("a run was started").ended();
            *self.oracle_seconds.entry(self.pass.clone()).or_default() +=
                waited.elapsed().as_secs_f64();
            for event in self.workers.events() {
                self.run_dir.log(event);
            }
            let judging = self
                .running
                .remove(&id)
                .expect("every run is one of a text");
            self.run_ended(judging, result)?;
        }
    }

    fn crash(&mut self, text: &str) -> Option<scrub_reducers::Crash> {
        // Only an exception has a traceback to follow.
        if !matches!(self.criteria.sig, Signature::Exception { .. }) {
            return None;
        }
        // Where a control judges every candidate, a check may be fed rebuilt values.
        let source = crate::engine::probe::source(self.control.is_some());
        let key = self
            .cache
            .key(&crate::engine::probe::cache_text(&source, text));
        let outcome = match self.cache.get(&key) {
            Some(outcome) => {
                self.hits += 1;
                outcome
            }
            None => match self.charged(1, |workers| workers.probe(text, &source)) {
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
                "accepted ({}): {} lines, {} bytes{}",
                p.pass,
                p.lines,
                p.bytes,
                p.step.map(|s| format!(": {s}")).unwrap_or_default()
            ));
            self.history.push(p.text.to_string());
            self.steps.push(match p.step {
                Some(step) => format!("{}: {step}", p.pass),
                None => p.pass.to_string(),
            });
            self.trace.push((self.calls, p.lines));
        }
        if self.pass != p.pass {
            self.run_dir.log(format!(
                "round {}: {} (after {} runs)",
                p.round, p.pass, self.calls
            ));
            self.pass = p.pass.to_string();
        }
        self.console
            .status(p.pass, p.lines, p.bytes, self.calls, self.hits);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_script_of_constant_tensors_draws_nothing() {
        let constant = "import torch\nx = torch.ones(2, 2)\ntorch.testing.assert_close(x, x + 1)\n";
        assert!(!draws_at_random(constant));
        for drawn in [
            "x = torch.randn(2)",
            "x = torch.nn.Linear(2, 2)(torch.ones(2))",
            "x = torch.empty(2).normal_()",
            "x = F.dropout(y)",
        ] {
            assert!(draws_at_random(drawn), "{drawn}");
        }
    }

    use super::*;

    #[test]
    fn a_control_counts_what_no_candidate_may_lose_on_the_script_the_passes_start_from() {
        // The original compares the compiled function with its eager call; the minifier's
        // plain script of a crash compiles the op alone, and the passes start from it.
        let original = "import torch\ndef f(x):\n    return x.relu()\nx = torch.randn(2)\nassert torch.allclose(torch.compile(f)(x), f(x))\n";
        let minified = "import torch\ntorch.compile(torch.ops.aten.relu)(torch.randn(2))\n";
        let control = Control::new(Suspect::Compile, None, original, PythonVersion::PY311);
        assert_eq!(control.eager_references, 1);
        let restarted = control.starting_from(minified);
        assert_eq!(restarted.eager_references, 0);
        assert_eq!(restarted.suspect, Suspect::Compile);
    }

    #[test]
    fn a_run_under_the_kinds_runner_that_did_not_fail_the_same_way_refuses() {
        let call = kinds::Call {
            at: "ast.py:parse".into(),
            args: Default::default(),
            positional: Some(1),
            place: None,
            same_shape: Vec::new(),
        };
        let criteria = Criteria {
            sig: Signature::parse("SyntaxError").unwrap(),
            anchor: Anchor::default(),
            attempts: 1,
            kinds: vec![call],
            custom_run: Vec::new(),
            made_for: BTreeSet::new(),
            apart: None,
            version: PythonVersion::PY312,
        };
        let text = "import ast\nast.parse('\"')\n";
        let timed_out = Outcome::exited(0, "");
        assert!(
            criteria
                .kinds_changed(text, &timed_out)
                .is_some_and(|why| why.contains("did not fail the same way"))
        );
        let unreported = Outcome::exited(1, "SyntaxError: unterminated string literal\n");
        assert!(
            criteria
                .kinds_changed(text, &unreported)
                .is_some_and(|why| why.contains("reported no calls"))
        );
    }

    #[test]
    fn a_failing_call_on_a_value_written_by_hand_lost_what_the_library_made_for_it() {
        let criteria = Criteria {
            sig: Signature::parse("SyntaxError").unwrap(),
            anchor: Anchor::default(),
            attempts: 1,
            kinds: Vec::new(),
            custom_run: Vec::new(),
            made_for: BTreeSet::from(["ast.unparse".to_string()]),
            apart: None,
            version: PythonVersion::PY312,
        };
        let nested = "import ast\nast.parse(ast.unparse(ast.parse('\"')))\n";
        let failing = |place| {
            vec![kinds::Call {
                at: "ast.py:parse".into(),
                args: Default::default(),
                positional: Some(1),
                place: Some(place),
                same_shape: Vec::new(),
            }]
        };
        // The inner parse of a source written by hand failed; the outer one reads the unparse.
        let inner = criteria.made_lost(nested, &failing([2, 22, 2, 36]));
        assert!(inner.is_some_and(|why| why.contains("ast.unparse")));
        assert_eq!(criteria.made_lost(nested, &failing([2, 0, 2, 38])), None);
    }
}
