//! Warm workers: a Python zygote imports the repro's modules once, then forks a child per
//! candidate, so that a heavy import (torch: ~5 s) is paid once per worker, not per candidate.
//!
//! The child is treated like a cold process: its own process group, a fresh working
//! directory, output to files, the same timeout and group kill, the same `Outcome`.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use process_wrap::std::{ProcessGroup, StdChildWrapper, StdCommandWrap};
use serde::Deserialize;

use crate::engine::memory::Watch;
use crate::engine::output::keep_file;
use crate::engine::process::{INTERRUPTED, Interrupted, Outcome, Status, prepare_dir};

/// The warm worker's source (the minifier's forked queries import its warm-up too).
pub(crate) const SOURCE: &str = include_str!("zygote/zygote.py");
/// Importing torch with a cold disk can take a minute.
const READY_TIMEOUT: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(20);

pub struct Zygote {
    child: Box<dyn StdChildWrapper>,
    requests: ChildStdin,
    answers: Receiver<String>,
    /// Whether candidates run in the zygote's own process instead of a fork of it.
    here: bool,
    /// Why the zygote must not run another candidate, when it must not.
    pub spent: Option<Spent>,
}

/// Why a zygote that runs candidates in its own process is not used again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spent {
    /// The candidate ended the process (a signal, `os._exit`, a timeout): its outcome says so.
    Died(String),
    /// The candidate left state that could not be put back; its own outcome is sound, as it
    /// started from a clean state.
    Dirty(String),
    /// The worker holds more memory than it may keep between candidates (see `zygote.py`'s
    /// `worn`); the candidate's outcome is sound.
    Worn(String),
}

#[derive(Deserialize)]
struct Answer {
    pid: i32,
    status: Option<i32>,
    /// The child's peak resident memory in bytes, with its status.
    #[serde(default)]
    maxrss: u64,
    /// In the zygote's own process: what the candidate changed that could not be put back.
    #[serde(default)]
    dirty: Vec<String>,
    /// In the zygote's own process: why it holds too much memory to run another candidate.
    #[serde(default)]
    worn: Option<String>,
}

/// Why scrub killed a child before it ended.
enum Killed {
    Interrupted,
    TimedOut,
    OutOfMemory,
}

impl Zygote {
    /// Starts a zygote for the script at `original` under `python`, with `env` added; with
    /// `here`, it runs each candidate in its own process (see `zygote.py`'s `run_here`).
    pub fn start(
        python: &Path,
        original: &Path,
        env: &[(String, String)],
        here: bool,
    ) -> Result<Zygote> {
        // The zygote's own source, as a file: in `ps`, its command line stays short.
        let mut program = tempfile::Builder::new()
            .prefix("scrub-zygote-")
            .suffix(".py")
            .tempfile()?;
        program.write_all(SOURCE.as_bytes())?;
        program.flush()?;
        let mut args = vec![program.path(), original];
        if here {
            args.push(Path::new("--here"));
        }
        let (child, requests, stdout) = spawn_helper(python, &args, env, "a warm worker")?;
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let zygote = Zygote {
            child,
            requests,
            answers,
            here,
            spent: None,
        };
        let ready = zygote.answers.recv_timeout(READY_TIMEOUT);
        // Read and compiled by now: the file goes, so that even a scrub killed outright
        // leaves none behind.
        drop(program);
        match ready {
            Ok(line) if line.contains("ready") => Ok(zygote),
            Ok(line) => bail!("the warm worker said {line:?} instead of getting ready"),
            Err(_) => bail!("the warm worker did not get ready"),
        }
    }

    /// Runs `text` as a forked child; like `process::run_script`, an interruption is an
    /// error of type [`Interrupted`], and a zygote that dies is an error too. With `probe` (the
    /// source of the probe, see `probe.rs`), an uncaught exception is also reported as the
    /// probe reports it. The child's group is killed when it holds more than `max_memory`.
    pub fn run(
        &mut self,
        text: &str,
        timeout: Duration,
        max_memory: Option<u64>,
        probe: Option<&str>,
    ) -> Result<Outcome> {
        let (dir, mut out, mut err) = prepare_dir(text)?;
        let probe_path = match probe {
            Some(source) => {
                let path = dir.path().join("probe.py");
                std::fs::write(&path, source)?;
                Some(path)
            }
            None => None,
        };
        let request = serde_json::json!({
            "dir": dir.path().join("work"),
            "script": "repro.py",
            "stdout": dir.path().join("stdout"),
            "stderr": dir.path().join("stderr"),
            "probe": probe_path,
            "max_memory": max_memory,
        });
        writeln!(self.requests, "{request}").context("the warm worker is gone")?;
        self.requests.flush().context("the warm worker is gone")?;
        let start = Instant::now();
        let pid = self.answer(Duration::from_secs(30))?.pid;
        let mut watch = Watch::new(pid, max_memory);
        let mut killed = None;
        let (raw, maxrss) = loop {
            if killed.is_none() {
                killed = if INTERRUPTED.load(Ordering::SeqCst) {
                    Some(Killed::Interrupted)
                } else if start.elapsed() >= timeout {
                    Some(Killed::TimedOut)
                } else if watch.over_limit() {
                    Some(Killed::OutOfMemory)
                } else {
                    None
                };
                if killed.is_some() {
                    kill_group(pid);
                }
            }
            match self.answers.recv_timeout(POLL) {
                Ok(line) => {
                    let answer: Answer = serde_json::from_str(&line)
                        .context("unreadable answer from the warm worker")?;
                    if let (true, Some(status)) = (answer.pid == pid, answer.status) {
                        if !answer.dirty.is_empty() {
                            self.spent = Some(Spent::Dirty(answer.dirty.join("; ")));
                        } else if let Some(why) = answer.worn {
                            self.spent = Some(Spent::Worn(why));
                        }
                        break (status, answer.maxrss);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // A candidate run here that crashed (or was killed) took the zygote with it:
                // its status is the candidate's.
                Err(RecvTimeoutError::Disconnected) if self.here => {
                    break (self.death()?, watch.peak);
                }
                Err(RecvTimeoutError::Disconnected) => bail!("the warm worker died"),
            }
        };
        let duration = start.elapsed();
        // Stragglers: anything the child left running in its group (a candidate run here
        // shares the zygote's group: the zygote says when it left a process behind).
        if !self.here {
            kill_group(pid);
        }
        let status = match killed {
            Some(Killed::Interrupted) => return Err(Interrupted.into()),
            Some(Killed::TimedOut) => Status::TimedOut,
            Some(Killed::OutOfMemory) => Status::OutOfMemory,
            None if libc::WIFSIGNALED(raw) => Status::Signaled(libc::WTERMSIG(raw)),
            None => Status::Exited(libc::WEXITSTATUS(raw)),
        };
        Ok(Outcome {
            status,
            stdout: keep_file(&mut out)?,
            stderr: keep_file(&mut err)?,
            duration,
            peak_rss: watch.peak.max(maxrss),
        })
    }

    /// The zygote's wait status once it has died with a candidate run in its process.
    fn death(&mut self) -> Result<i32> {
        let status = self.child.inner_mut().wait()?;
        self.spent = Some(Spent::Died(match status.signal() {
            Some(signal) => format!("its candidate ended it with signal {signal}"),
            None => format!("its candidate ended it with status {:?}", status.code()),
        }));
        Ok(status.into_raw())
    }

    fn answer(&self, limit: Duration) -> Result<Answer> {
        let line = self
            .answers
            .recv_timeout(limit)
            .map_err(|_| anyhow!("the warm worker did not answer"))?;
        serde_json::from_str(&line).context("unreadable answer from the warm worker")
    }
}

/// Starts `PY ARGS` as a helper that scrub talks to in lines of JSON (a zygote, the Ray
/// bridge): in a process group of its own, `PYTHONHASHSEED=0` and `env` added, stdin and
/// stdout piped, stderr discarded. `what` names it in the error when it cannot start.
pub(crate) fn spawn_helper(
    python: &Path,
    args: &[&Path],
    env: &[(String, String)],
    what: &str,
) -> Result<(Box<dyn StdChildWrapper>, ChildStdin, ChildStdout)> {
    let mut command = StdCommandWrap::with_new(python, |c| {
        c.args(args)
            .env("PYTHONHASHSEED", "0")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
    });
    command.wrap(ProcessGroup::leader());
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {what} with {}", python.display()))?;
    let requests = child.stdin().take().expect("piped stdin");
    let stdout = child.stdout().take().expect("piped stdout");
    Ok((child, requests, stdout))
}

fn kill_group(pid: i32) {
    if pid > 0 {
        // SAFETY: killpg only sends a signal; a group that is gone gives ESRCH, ignored.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.inner_mut().wait();
    }
}
