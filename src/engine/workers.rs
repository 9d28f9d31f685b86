//! A pool of workers that run candidates in parallel, each pinned to a GPU when there are any.
//!
//! Where a candidate runs is a [`Backend`]: a cold local process, a fork of a local warm
//! zygote, or a fork inside a Ray actor (`ray.rs`). The loop, the cache and the oracle see
//! only the [`Outcome`].

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, TryLockError};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Result;

use crate::engine::inductor_cache::InductorCache;
use crate::engine::process::{Outcome, RunSpec, run_script, run_script_with};
use crate::engine::zygote::{Spent, Zygote};

/// How often a worker that is starting is looked at again (see [`Workers::run_all`]).
const READY_POLL: Duration = Duration::from_millis(20);

/// One run of a script, whatever runs it.
pub struct Job<'a> {
    pub text: &'a str,
    /// The script whose imports a warm back end preloads.
    pub original: &'a Path,
    /// Extra environment of the worker (a local GPU pin).
    pub env: &'a [(String, String)],
    /// The probe's source, to run the script under it (see `probe.rs`).
    pub probe: Option<&'a str>,
    pub timeout: Duration,
    pub max_memory: Option<u64>,
}

/// Where warm candidates run: the same `Outcome` for the same script from every back end.
pub trait Backend: Send + Sync {
    /// How the run log names it.
    fn describe(&self) -> String;
    /// Runs `job` on worker `worker` (0 ≤ worker < jobs); an interruption is an error of type
    /// [`crate::engine::process::Interrupted`].
    fn run(&self, worker: usize, job: &Job) -> Result<Outcome>;
    /// Gets worker `worker` ready for runs like `job` (a warm worker started), so that a
    /// [`Pool`] hands a run only to a worker that can start it at once.
    fn ready(&self, _worker: usize, _job: &Job) -> Result<()> {
        Ok(())
    }
    /// Whether worker `worker` can start a run at once, not waiting for it to get ready.
    fn is_ready(&self, _worker: usize) -> bool {
        true
    }
    /// Stops every warm worker; they start again on demand.
    fn stop(&self);
    /// Lines for the run log about the workers themselves (a restart), since last asked.
    fn events(&self) -> Vec<String> {
        Vec::new()
    }
}

/// Local warm workers: worker i's zygote, started on first use and again after it dies.
pub struct Zygotes {
    python: PathBuf,
    slots: Vec<Mutex<Option<Zygote>>>,
    /// Whether each candidate runs in its zygote's own process (`--in-process`), not a fork.
    here: bool,
    /// Zygotes replaced since last asked, and why.
    replaced: Mutex<Vec<String>>,
}

impl Zygotes {
    pub fn new(python: PathBuf, jobs: usize) -> Zygotes {
        Zygotes {
            python,
            slots: (0..jobs).map(|_| Mutex::new(None)).collect(),
            here: false,
            replaced: Mutex::new(Vec::new()),
        }
    }

    /// Workers that run each candidate in their own process (see `zygote.py`'s `run_here`).
    pub fn in_process(python: PathBuf, jobs: usize) -> Zygotes {
        Zygotes {
            here: true,
            ..Zygotes::new(python, jobs)
        }
    }

    /// Runs `job` on the zygote in `slot`, started when there is none; a zygote that failed
    /// or is spent is dropped, so that the next run starts a fresh one. Says why it was
    /// spent.
    fn run_in_slot(
        &self,
        slot: &mut Option<Zygote>,
        worker: usize,
        job: &Job,
    ) -> (Result<Outcome>, Option<Spent>) {
        if slot.is_none() {
            match Zygote::start(&self.python, job.original, job.env, self.here) {
                Ok(zygote) => *slot = Some(zygote),
                Err(e) => return (Err(e), None),
            }
        }
        let zygote = slot.as_mut().expect("started above");
        let result = zygote.run(job.text, job.timeout, job.max_memory, job.probe);
        let spent = zygote.spent.clone();
        if result
            .as_ref()
            .is_err_and(|e| !e.is::<crate::engine::process::Interrupted>())
            || spent.is_some()
        {
            *slot = None;
        }
        if let Some(Spent::Died(why) | Spent::Dirty(why) | Spent::Worn(why)) = &spent {
            let mut replaced = self.replaced.lock().unwrap_or_else(|e| e.into_inner());
            replaced.push(format!("worker {worker} replaced: {why}"));
        }
        (result, spent)
    }
}

impl Backend for Zygotes {
    fn describe(&self) -> String {
        match self.here {
            true => "warm (in the zygote's own process, its state put back after each)".into(),
            false => "warm (forked from a zygote)".into(),
        }
    }

    fn events(&self) -> Vec<String> {
        std::mem::take(&mut *self.replaced.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn ready(&self, worker: usize, job: &Job) -> Result<()> {
        let mut slot = self.slots[worker].lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(Zygote::start(
                &self.python,
                job.original,
                job.env,
                self.here,
            )?);
        }
        Ok(())
    }

    fn is_ready(&self, worker: usize) -> bool {
        match self.slots[worker].try_lock() {
            Ok(slot) => slot.is_some(),
            // Being started, or running: not free now.
            Err(TryLockError::WouldBlock) => false,
            // A run there says what went wrong.
            Err(TryLockError::Poisoned(_)) => true,
        }
    }

    fn run(&self, worker: usize, job: &Job) -> Result<Outcome> {
        let mut slot = self.slots[worker].lock().unwrap_or_else(|e| e.into_inner());
        match self.run_in_slot(&mut slot, worker, job) {
            // A candidate that left state behind is run again in a fresh worker, in case the
            // state was there before it too (a leak the check missed).
            (_, Some(Spent::Dirty(_))) => self.run_in_slot(&mut slot, worker, job).0,
            (result, _) => result,
        }
    }

    fn stop(&self) {
        for slot in &self.slots {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }
}

/// Cold local processes: `PY repro.py` per candidate.
pub fn run_cold(python: &Path, job: &Job) -> Result<Outcome> {
    let spec = RunSpec {
        python,
        timeout: job.timeout,
        env: job.env,
        max_memory: job.max_memory,
    };
    match job.probe {
        Some(source) => run_script_with(job.text, &spec, &["-c", source]),
        None => run_script(job.text, &spec),
    }
}

#[derive(Clone)]
pub struct Workers {
    pub python: PathBuf,
    /// How long a cold run may take.
    pub timeout: Duration,
    /// How long a warm run may take, when it differs: a warm worker has already paid the
    /// imports that a cold run's time includes.
    pub warm_timeout: Option<Duration>,
    pub jobs: usize,
    /// GPU ids handed out round robin: worker i sees `CUDA_VISIBLE_DEVICES=gpus[i % n]`.
    /// Empty: the variable is left as it is.
    pub gpus: Vec<String>,
    /// Warm mode: the script whose imports each warm worker preloads. `None`: every
    /// candidate is a cold `PY repro.py`.
    pub warm: Option<PathBuf>,
    /// Where warm candidates run: local zygotes, or Ray actors.
    pub backend: Arc<dyn Backend>,
    /// Whether the warm back end is remote (`--ray`): there is no falling back to cold then.
    pub remote: bool,
    /// The memory each run's process group may hold, in bytes (`None`: no limit).
    pub max_memory: Option<u64>,
    /// Whether warm candidates run in their worker's own process (else a fork of it).
    pub in_process: bool,
    /// The reduction's own inductor cache, which every local run uses; removed with the
    /// last clone of these workers.
    pub inductor: Option<Arc<InductorCache>>,
}

impl Workers {
    pub fn new(python: PathBuf, timeout: Duration, jobs: usize, gpus: Vec<String>) -> Workers {
        Workers {
            python: python.clone(),
            timeout,
            warm_timeout: None,
            jobs,
            gpus,
            warm: None,
            backend: Arc::new(Zygotes::new(python.clone(), jobs)),
            remote: false,
            max_memory: None,
            in_process: false,
            inductor: None,
        }
    }

    /// Sets the number of workers, before any has started.
    pub fn set_jobs(&mut self, jobs: usize, in_process: bool) {
        self.jobs = jobs;
        self.in_process = in_process;
        self.backend = Arc::new(match in_process {
            true => Zygotes::in_process(self.python.clone(), jobs),
            false => Zygotes::new(self.python.clone(), jobs),
        });
    }

    /// Runs `text` under the probe (see `probe.rs`) on the first worker, warm or cold as the
    /// candidates run. Only while no candidates are being run.
    pub fn probe(&self, text: &str, source: &str) -> Result<Outcome> {
        self.run_with(0, text, &self.env_of(0), Some(source))
    }

    /// Runs `text` on worker `worker`: forked from its zygote in warm mode, else cold; under
    /// the probe when it is given.
    fn run_with(
        &self,
        worker: usize,
        text: &str,
        env: &[(String, String)],
        probe: Option<&str>,
    ) -> Result<Outcome> {
        let job = Job {
            text,
            original: self.warm.as_deref().unwrap_or(Path::new("")),
            env,
            probe,
            timeout: self.run_timeout(),
            max_memory: self.max_memory,
        };
        match &self.warm {
            Some(_) => self.backend.run(worker, &job),
            None => run_cold(&self.python, &job),
        }
    }

    /// How long the next run may take: warm or cold, as the workers run.
    fn run_timeout(&self) -> Duration {
        match self.warm {
            Some(_) => self.warm_timeout.unwrap_or(self.timeout),
            None => self.timeout,
        }
    }

    /// Gets worker `worker` ready for warm runs (see [`Backend::ready`]); cold workers are.
    fn ready(&self, worker: usize, env: &[(String, String)]) -> Result<()> {
        let Some(original) = &self.warm else {
            return Ok(());
        };
        let job = Job {
            text: "",
            original,
            env,
            probe: None,
            timeout: self.timeout,
            max_memory: self.max_memory,
        };
        self.backend.ready(worker, &job)
    }

    /// Starts the warm workers of `original` in the background, side by side, so that a run
    /// on the first waits only for its own import; a run that needs one before it is ready
    /// waits for it.
    pub fn start_warm(&self, original: &Path) {
        self.start_warm_on(original, self.jobs);
    }

    /// Starts the first `count` warm workers of `original` (see [`Workers::start_warm`]); a
    /// worker already started stays as it is.
    pub fn start_warm_on(&self, original: &Path, count: usize) {
        let mut warm = self.clone();
        warm.warm = Some(original.to_path_buf());
        for worker in 0..count.min(self.jobs) {
            warm.start_warm_worker(worker);
        }
    }

    /// Starts warm worker `worker` in the background, when the workers are warm.
    fn start_warm_worker(&self, worker: usize) {
        if self.warm.is_none() {
            return;
        }
        let warm = self.clone();
        std::thread::spawn(move || {
            let env = warm.env_of(worker);
            // A worker that cannot start says why when it is handed a run.
            let _ = warm.ready(worker, &env);
        });
    }

    /// Whether worker `worker` can start a run at once: cold, or its warm worker started.
    fn is_ready(&self, worker: usize) -> bool {
        self.warm.is_none() || self.backend.is_ready(worker)
    }

    /// Stops every warm worker (they are started again on demand).
    pub fn stop_zygotes(&self) {
        self.backend.stop();
    }

    /// Lines for the run log about the workers since last asked (a Ray actor restarted).
    pub fn events(&self) -> Vec<String> {
        self.backend.events()
    }

    /// The environment worker `i` adds to every run.
    pub fn env_of(&self, worker: usize) -> Vec<(String, String)> {
        let mut env = self.inductor.as_ref().map(|c| c.env()).unwrap_or_default();
        if !self.gpus.is_empty() {
            env.push((
                "CUDA_VISIBLE_DEVICES".to_string(),
                self.gpus[worker % self.gpus.len()].clone(),
            ));
        }
        env
    }

    /// Runs every text, at most `jobs` at a time; the results come back in the same order.
    pub fn run_all(&self, texts: &[&str]) -> Vec<Result<Outcome>> {
        let results: Vec<Mutex<Option<Result<Outcome>>>> =
            texts.iter().map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for worker in 0..self.jobs.min(texts.len()) {
                let (results, next) = (&results, &next);
                scope.spawn(move || {
                    let env = self.env_of(worker);
                    if worker > 0 && !self.is_ready(worker) {
                        self.start_warm_worker(worker);
                    }
                    loop {
                        // The first worker is waited for; another takes a text only once it
                        // is ready, so that no text waits for a worker still starting while
                        // one is free (the others may never be needed).
                        if worker > 0 && !self.is_ready(worker) {
                            if next.load(Ordering::SeqCst) >= texts.len() {
                                break;
                            }
                            std::thread::sleep(READY_POLL);
                            continue;
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= texts.len() {
                            break;
                        }
                        *results[i].lock().unwrap() =
                            Some(self.run_with(worker, texts[i], &env, None));
                    }
                });
            }
        });
        results
            .into_iter()
            .map(|r| r.into_inner().unwrap().expect("every text was run"))
            .collect()
    }
}

/// Workers that take texts as they are handed in: each text runs on the first worker free,
/// and its outcome comes back as soon as it ends, so that a slow run holds up only its own
/// worker. The workers are those of [`Workers`] as they were when the pool was made.
pub struct Pool {
    /// Each run's number, its text, and the probe to run it under (see `probe.rs`).
    tasks: Option<Sender<(u64, String, Option<&'static str>)>>,
    ended: Receiver<(u64, Result<Outcome>)>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// A pool of these `jobs` workers (see [`Pool`]).
    pub fn pool(&self) -> Pool {
        let (tasks, queue) = channel::<(u64, String, Option<&'static str>)>();
        let queue = Arc::new(Mutex::new(queue));
        let (done, ended) = channel();
        let threads = (0..self.jobs)
            .map(|worker| {
                let (workers, queue, done) = (self.clone(), Arc::clone(&queue), done.clone());
                std::thread::spawn(move || {
                    let env = workers.env_of(worker);
                    // A worker that cannot get ready says why when it is handed a run.
                    let _ = workers.ready(worker, &env);
                    loop {
                        let task = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let Ok((id, text, probe)) = task else { break };
                        let result = workers.run_with(worker, &text, &env, probe);
                        if done.send((id, result)).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        Pool {
            tasks: Some(tasks),
            ended,
            threads,
        }
    }
}

impl Pool {
    /// Hands `text` to the first worker free, under `probe` when it is given; its outcome
    /// comes back from [`Pool::ended`] with `id`.
    pub fn start(&self, id: u64, text: String, probe: Option<&'static str>) {
        let tasks = self.tasks.as_ref().expect("open until dropped");
        tasks
            .send((id, text, probe))
            .expect("the workers wait for tasks");
    }

    /// Waits for the next run to end; only while some run was started and has not ended.
    pub fn ended(&self) -> (u64, Result<Outcome>) {
        self.ended.recv().expect("the workers outlive their runs")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Without tasks, each worker ends once its run does.
        self.tasks.take();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// GPU ids from `--gpus 0,1,3`, or else from `nvidia-smi`; empty when there are none.
pub fn detect_gpus(list: Option<&[u32]>) -> Vec<String> {
    if let Some(list) = list {
        return list.iter().map(u32::to_string).collect();
    }
    let out = std::process::Command::new("nvidia-smi")
        .args(["--query-gpu=index", "--format=csv,noheader"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}
