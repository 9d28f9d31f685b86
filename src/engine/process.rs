//! Run one script as a child process in its own process group, with a timeout.
//!
//! This layer knows nothing about Python exceptions: it reports how the child ended.
//! The whole group (grandchildren included) is killed on timeout, on interruption, after
//! the child exits (stragglers) and if the runner itself unwinds.

use std::fs;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use process_wrap::std::{ProcessGroup, StdChildWrapper, StdCommandWrap};
use serde::{Deserialize, Serialize};

use crate::engine::memory::Watch;
use crate::engine::output::keep_file;

/// Set by the Ctrl-C handler; every poll loop watches it.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

const POLL: Duration = Duration::from_millis(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    /// Killed for holding more memory than `--max-memory` allows.
    OutOfMemory,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub status: Status,
    pub stdout: String,
    pub stderr: String,
    pub duration: Duration,
    /// The most memory the run was seen to hold, in bytes (its process group, sampled; the
    /// child's own peak when it was reaped); 0 when unknown.
    #[serde(default)]
    pub peak_rss: u64,
}

#[cfg(test)]
impl Outcome {
    /// A run that exited with `code` and printed `stderr`, for tests of what reads outcomes.
    pub(crate) fn exited(code: i32, stderr: &str) -> Outcome {
        Outcome {
            status: Status::Exited(code),
            stdout: String::new(),
            stderr: stderr.into(),
            duration: Duration::ZERO,
            peak_rss: 0,
        }
    }
}

/// What a script run needs besides its text.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    pub python: &'a Path,
    pub timeout: Duration,
    /// Extra environment, on top of the inherited one.
    pub env: &'a [(String, String)],
    /// The memory the run's process group may hold, in bytes (see `memory.rs`).
    pub max_memory: Option<u64>,
}

/// The run was stopped by Ctrl-C.
#[derive(Debug, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Runs `text` as `PY repro.py` in a fresh temporary working directory, stdin closed,
/// `PYTHONHASHSEED=0`. Errors are failures to run at all; an interruption is an error of
/// type [`Interrupted`].
pub fn run_script(text: &str, spec: &RunSpec) -> Result<Outcome> {
    run_prepared(prepare_dir(text)?, spec, &["repro.py"])
}

/// [`run_script`], with the interpreter given `args` instead of `repro.py` (`-c CODE`, which
/// then runs `repro.py` itself).
pub fn run_script_with(text: &str, spec: &RunSpec, args: &[&str]) -> Result<Outcome> {
    run_prepared(prepare_dir(text)?, spec, args)
}

/// [`run_script`] with the temporary directory made under `parent` (`scrub issue` runs
/// every repro under `/tmp/scrub-N/`).
pub fn run_script_in(parent: &Path, text: &str, spec: &RunSpec) -> Result<Outcome> {
    run_prepared(prepare_dir_in(text, Some(parent))?, spec, &["repro.py"])
}

/// Runs `PY ARGS` with `work` as its working directory, kept afterwards with what the run
/// wrote there; its output goes to `LOG.stdout` and `LOG.stderr` as well.
pub fn run_in(work: &Path, log: &Path, args: &[&str], spec: &RunSpec) -> Result<Outcome> {
    let open = |ext: &str| output_file(&log.with_extension(ext));
    run_at(work, (open("stdout")?, open("stderr")?), spec, args)
}

fn run_prepared(
    (dir, out, err): (tempfile::TempDir, fs::File, fs::File),
    spec: &RunSpec,
    args: &[&str],
) -> Result<Outcome> {
    run_at(&dir.path().join("work"), (out, err), spec, args)
}

fn run_at(
    work: &Path,
    (mut out, mut err): (fs::File, fs::File),
    spec: &RunSpec,
    args: &[&str],
) -> Result<Outcome> {
    let mut command = StdCommandWrap::with_new(spec.python, |c| {
        c.args(args)
            .current_dir(work)
            .env("PYTHONHASHSEED", "0")
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("clone stdout file"))
            .stderr(err.try_clone().expect("clone stderr file"));
    });
    command.wrap(ProcessGroup::leader());
    let start = Instant::now();
    let child = command
        .spawn()
        .with_context(|| format!("cannot run {}", spec.python.display()))?;
    let mut group = Group(child);
    let pid = group.0.id() as i32;
    let mut watch = Watch::new(pid, spec.max_memory);
    let exit = ExitWatch::open(pid);
    let (status, maxrss) = loop {
        if let Some(ended) = reap(pid)? {
            break ended;
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            group.kill();
            return Err(Interrupted.into());
        }
        if start.elapsed() >= spec.timeout {
            group.kill();
            break (Status::TimedOut, 0);
        }
        if watch.over_limit() {
            group.kill();
            break (Status::OutOfMemory, 0);
        }
        exit.wait(POLL);
    };
    let duration = start.elapsed();
    drop(group);
    Ok(Outcome {
        status,
        stdout: keep_file(&mut out)?,
        stderr: keep_file(&mut err)?,
        duration,
        peak_rss: watch.peak.max(maxrss),
    })
}

/// Wakes the poll loop as soon as a child exits (a pidfd, Linux 5.3+), not at the next tick:
/// a cold run of a small script takes about 40 ms, and sleeping out the tick cost it 10 ms on
/// average. Where there is no pidfd, it sleeps the tick out.
struct ExitWatch(Option<std::os::fd::OwnedFd>);

impl ExitWatch {
    fn open(pid: i32) -> ExitWatch {
        use std::os::fd::FromRawFd;
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        // SAFETY: a non-negative result is a descriptor that nothing else owns.
        ExitWatch((fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) }))
    }

    /// Waits until the child exits or `tick` has passed.
    fn wait(&self, tick: Duration) {
        use std::os::fd::AsRawFd;
        let Some(fd) = &self.0 else {
            return std::thread::sleep(tick);
        };
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, waited on for at most `tick`.
        unsafe { libc::poll(&mut poll, 1, tick.as_millis() as i32) };
    }
}

/// How the child `pid` ended and its peak resident memory in bytes, once it has.
fn reap(pid: i32) -> Result<Option<(Status, u64)>> {
    let mut raw = 0;
    // SAFETY: rusage is plain data that wait4 fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child, without blocking.
    let got = unsafe { libc::wait4(pid, &mut raw, libc::WNOHANG, &mut usage) };
    if got == 0 {
        return Ok(None);
    }
    if got < 0 {
        return Err(std::io::Error::last_os_error()).context("cannot wait for a run");
    }
    let status = if libc::WIFSIGNALED(raw) {
        Status::Signaled(libc::WTERMSIG(raw))
    } else {
        Status::Exited(libc::WEXITSTATUS(raw))
    };
    Ok(Some((status, usage.ru_maxrss.max(0) as u64 * 1024)))
}

/// A fresh temporary directory holding `work/repro.py` with `text`, and the files that take
/// the run's stdout and stderr (beside `work/`, out of the script's sight).
pub(crate) fn prepare_dir(text: &str) -> Result<(tempfile::TempDir, fs::File, fs::File)> {
    prepare_dir_in(text, None)
}

fn prepare_dir_in(
    text: &str,
    parent: Option<&Path>,
) -> Result<(tempfile::TempDir, fs::File, fs::File)> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("scrub-");
    let dir = match parent {
        Some(parent) => builder.tempdir_in(parent),
        None => builder.tempdir(),
    }
    .context("cannot create a temporary directory")?;
    let work = dir.path().join("work");
    fs::create_dir(&work)?;
    fs::write(work.join("repro.py"), text)?;
    let (out, err) = (
        output_file(&dir.path().join("stdout"))?,
        output_file(&dir.path().join("stderr"))?,
    );
    Ok((dir, out, err))
}

/// A file that takes a run's output stream, read back afterwards.
fn output_file(path: &Path) -> std::io::Result<fs::File> {
    fs::File::options()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(path)
}

/// The child's process group; killed whenever this is dropped, so that no straggler
/// (a grandchild that outlived the child, or everything when the runner unwinds) remains.
struct Group(Box<dyn StdChildWrapper>);

impl Group {
    fn kill(&mut self) {
        let _ = self.0.start_kill();
        let _ = self.0.inner_mut().wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
        let _ = self.0.inner_mut().try_wait();
    }
}

/// The conventional name of a signal number (`SIGSEGV`), or `SIG<n>`.
pub fn signal_name(sig: i32) -> String {
    SIGNALS
        .iter()
        .find(|(n, _)| *n == sig)
        .map_or_else(|| format!("SIG{sig}"), |(_, name)| name.to_string())
}

/// A signal number from its name, with or without the `SIG` prefix.
pub fn signal_number(name: &str) -> Option<i32> {
    let name = name.trim().to_ascii_uppercase();
    let name = if name.starts_with("SIG") {
        name
    } else {
        format!("SIG{name}")
    };
    SIGNALS
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(sig, _)| *sig)
}

const SIGNALS: &[(i32, &str)] = &[
    (libc::SIGHUP, "SIGHUP"),
    (libc::SIGINT, "SIGINT"),
    (libc::SIGQUIT, "SIGQUIT"),
    (libc::SIGILL, "SIGILL"),
    (libc::SIGTRAP, "SIGTRAP"),
    (libc::SIGABRT, "SIGABRT"),
    (libc::SIGBUS, "SIGBUS"),
    (libc::SIGFPE, "SIGFPE"),
    (libc::SIGKILL, "SIGKILL"),
    (libc::SIGUSR1, "SIGUSR1"),
    (libc::SIGSEGV, "SIGSEGV"),
    (libc::SIGUSR2, "SIGUSR2"),
    (libc::SIGPIPE, "SIGPIPE"),
    (libc::SIGALRM, "SIGALRM"),
    (libc::SIGTERM, "SIGTERM"),
    (libc::SIGXCPU, "SIGXCPU"),
    (libc::SIGSYS, "SIGSYS"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names_round_trip() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_number("SIGABRT"), Some(libc::SIGABRT));
        assert_eq!(signal_number("segv"), Some(libc::SIGSEGV));
        assert_eq!(signal_number("SIGNOPE"), None);
    }
}
