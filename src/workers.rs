//! A pool of workers that run candidates in parallel, each pinned to a GPU when there are any.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::process::{Outcome, RunSpec, run_script, run_script_with};
use crate::zygote::Zygote;

pub struct Workers {
    pub python: PathBuf,
    pub timeout: Duration,
    pub jobs: usize,
    /// GPU ids handed out round robin: worker i sees `CUDA_VISIBLE_DEVICES=gpus[i % n]`.
    /// Empty: the variable is left as it is.
    pub gpus: Vec<String>,
    /// Warm mode: the script whose imports each worker's zygote preloads. `None`: every
    /// candidate is a cold `PY repro.py`.
    pub warm: Option<PathBuf>,
    /// Worker i's zygote, started on first use and again after it dies.
    pub zygotes: Vec<Mutex<Option<Zygote>>>,
    /// The memory each run's process group may hold, in bytes (`None`: no limit).
    pub max_memory: Option<u64>,
}

impl Workers {
    pub fn new(python: PathBuf, timeout: Duration, jobs: usize, gpus: Vec<String>) -> Workers {
        Workers {
            python,
            timeout,
            jobs,
            gpus,
            warm: None,
            zygotes: (0..jobs).map(|_| Mutex::new(None)).collect(),
            max_memory: None,
        }
    }

    /// Runs `text` under the probe (see `probe.rs`) on the first worker, warm or cold as the
    /// candidates run. Only while no candidates are being run.
    pub fn probe(&self, text: &str) -> Result<Outcome> {
        self.run_with(0, text, &self.env_of(0), Some(crate::probe::SOURCE))
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
        let Some(original) = &self.warm else {
            let spec = RunSpec {
                python: &self.python,
                timeout: self.timeout,
                env,
                max_memory: self.max_memory,
            };
            return match probe {
                Some(source) => run_script_with(text, &spec, &["-c", source]),
                None => run_script(text, &spec),
            };
        };
        let mut slot = self.zygotes[worker]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(Zygote::start(&self.python, original, env)?);
        }
        let result =
            slot.as_mut()
                .expect("started above")
                .run(text, self.timeout, self.max_memory, probe);
        if result
            .as_ref()
            .is_err_and(|e| !e.is::<crate::process::Interrupted>())
        {
            // A zygote that failed is replaced before the next candidate.
            *slot = None;
        }
        result
    }

    /// Stops every zygote (they are started again on demand).
    pub fn stop_zygotes(&self) {
        for slot in &self.zygotes {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    }

    /// The environment worker `i` adds to every run.
    pub fn env_of(&self, worker: usize) -> Vec<(String, String)> {
        if self.gpus.is_empty() {
            Vec::new()
        } else {
            vec![(
                "CUDA_VISIBLE_DEVICES".to_string(),
                self.gpus[worker % self.gpus.len()].clone(),
            )]
        }
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
                    loop {
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

/// GPU ids from `--gpus 0,1,3`, or else from `nvidia-smi`; empty when there are none.
pub fn detect_gpus(list: Option<&str>) -> Vec<String> {
    if let Some(list) = list {
        return list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
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
