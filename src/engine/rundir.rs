//! The run directory: a log of the run, one file per candidate run, and the result's diff.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};

use crate::engine::memory::human;
use crate::engine::process::{Outcome, Status, signal_name};

pub struct RunDir {
    path: PathBuf,
    log: Mutex<fs::File>,
    runs: AtomicUsize,
}

impl RunDir {
    /// Creates `path` afresh (an earlier run's contents are removed).
    pub fn create(path: &Path) -> Result<RunDir> {
        if path.join("run.log").exists() {
            fs::remove_dir_all(path).with_context(|| format!("cannot clear {}", path.display()))?;
        }
        fs::create_dir_all(path.join("runs"))
            .with_context(|| format!("cannot create {}", path.display()))?;
        let log = fs::File::create(path.join("run.log"))?;
        Ok(RunDir {
            path: path.to_path_buf(),
            log: Mutex::new(log),
            runs: AtomicUsize::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A line in `run.log`.
    pub fn log(&self, line: impl AsRef<str>) {
        let _ = writeln!(self.log.lock().unwrap(), "{}", line.as_ref());
    }

    /// One run of a candidate: its text, how it ended, its verdict and its output.
    pub fn record(&self, text: &str, outcome: &Outcome, verdict: &str) {
        let n = self.runs.fetch_add(1, Ordering::SeqCst) + 1;
        let status = match outcome.status {
            Status::Exited(code) => format!("exit {code}"),
            Status::Signaled(sig) => format!("killed by {}", signal_name(sig)),
            Status::TimedOut => "timed out".to_string(),
            Status::OutOfMemory => format!(
                "killed over the memory limit, holding {}",
                human(outcome.peak_rss)
            ),
        };
        let body = format!(
            "verdict: {verdict}\nstatus: {status}\nduration: {:.3} s\npeak memory: {}\n\n--- candidate ---\n{text}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            outcome.duration.as_secs_f64(),
            human(outcome.peak_rss),
            outcome.stdout,
            outcome.stderr
        );
        let _ = fs::write(self.path.join("runs").join(format!("{n:05}.txt")), body);
    }

    pub fn write(&self, name: &str, contents: &str) -> Result<()> {
        fs::write(self.path.join(name), contents)
            .with_context(|| format!("cannot write {}", self.path.join(name).display()))
    }
}
