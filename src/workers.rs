//! A pool of workers that run candidates in parallel, each pinned to a GPU when there are any.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Result;

use crate::process::{Outcome, RunSpec, run_script};

pub struct Workers {
    pub python: PathBuf,
    pub timeout: Duration,
    pub jobs: usize,
    /// GPU ids handed out round robin: worker i sees `CUDA_VISIBLE_DEVICES=gpus[i % n]`.
    /// Empty: the variable is left as it is.
    pub gpus: Vec<String>,
}

impl Workers {
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
                    let spec = RunSpec {
                        python: &self.python,
                        timeout: self.timeout,
                        env: &env,
                    };
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        if i >= texts.len() {
                            break;
                        }
                        *results[i].lock().unwrap() = Some(run_script(texts[i], &spec));
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
