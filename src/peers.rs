//! The peer reducers that `scrub bench --vs` sets beside scrub: where each is installed, and
//! one run of one on one case, under an interestingness test written from the case's oracle.
//!
//! Every peer gets the same test (`peers/interesting.py`): the case's signature (exception
//! class and message substring, signal or exit status), the per-candidate timeout and the
//! attempts that scrub's own reduction of the case uses. What a peer returns is judged again
//! by scrub's oracle (see [`crate::engine::judge`]), which a class and a substring alone do not
//! make.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use crate::engine::judge::Judge;
use crate::engine::process::{RunSpec, Status, run_in, signal_name};
use crate::engine::verdict::Signature;

/// The versions `scripts/peers-venv` installs (a test checks that the two agree).
pub const PYSOURCE_MINIMIZE_VERSION: &str = "0.10.1";
pub const SHRINKRAY_VERSION: &str = "26.9.13.0";

const INTERESTING: &str = include_str!("peers/interesting.py");
const PYSOURCE_MINIMIZE_DRIVER: &str = include_str!("peers/pysource_minimize_driver.py");

/// A reducer to compare scrub with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Peer {
    /// pysource-minimize's `minimize(source, checker)`, one candidate at a time.
    PysourceMinimize,
    /// shrinkray, with `--parallelism` set to `--jobs` and no language-model passes.
    Shrinkray,
    /// treereduce, which has no Python front end on crates.io: refused with a line saying so.
    Treereduce,
}

impl Peer {
    pub fn name(self) -> &'static str {
        match self {
            Peer::PysourceMinimize => "pysource-minimize",
            Peer::Shrinkray => "shrinkray",
            Peer::Treereduce => "treereduce",
        }
    }

    /// Candidates it runs at once when scrub runs `jobs`.
    pub fn at_once(self, jobs: usize) -> usize {
        match self {
            Peer::Shrinkray => jobs,
            _ => 1,
        }
    }

    /// The installed peer; `Err` says, in one line, why it cannot run and what to do.
    pub fn locate(self) -> Result<Installed> {
        let version = match self {
            Peer::PysourceMinimize => PYSOURCE_MINIMIZE_VERSION,
            Peer::Shrinkray => SHRINKRAY_VERSION,
            Peer::Treereduce => bail!(
                "treereduce has no Python front end to run: crates.io has treereduce-c, -java, -lua, -rust, -souffle and -swift 0.4.1, but no treereduce-python; leave it out of --vs"
            ),
        };
        if let Some(venv) = installed_venv(self.name(), version) {
            return Ok(Installed {
                peer: self,
                version,
                python: venv.join("bin/python"),
                venv,
            });
        }
        if self == Peer::Shrinkray && python_312().is_none() {
            bail!(
                "shrinkray needs Python 3.12 or later, and there is none (SCRUB_SHRINKRAY_PYTHON, python3.12 or python3.13 on PATH, or under {}/versions)",
                pyenv_root().display()
            );
        }
        bail!(
            "{} is not installed: `scripts/peers-venv {}` in scrub's repository installs {}=={version} under {}",
            self.name(),
            self.name(),
            self.name(),
            venv_root().display()
        )
    }
}

/// Where `scripts/peers-venv` (and `scripts/torch-venv`) keep their venvs.
fn venv_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SCRUB_VENV_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cache"));
    cache.join("scrub/venvs")
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
}

fn pyenv_root() -> PathBuf {
    std::env::var_os("PYENV_ROOT")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".pyenv"))
}

/// The finished venv `PEER-VERSION-pyX.Y` under the venv root, the first by name.
fn installed_venv(name: &str, version: &str) -> Option<PathBuf> {
    let prefix = format!("{name}-{version}-py");
    let mut found: Vec<PathBuf> = std::fs::read_dir(venv_root())
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
                && p.join(".complete").is_file()
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// A Python of 3.12 or later that shrinkray's venv can be made with, searched as
/// `scripts/peers-venv` searches.
fn python_312() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = match std::env::var_os("SCRUB_SHRINKRAY_PYTHON") {
        Some(p) if !p.is_empty() => vec![PathBuf::from(p)],
        _ => vec!["python3.12".into(), "python3.13".into()],
    };
    if let Ok(entries) = std::fs::read_dir(pyenv_root().join("versions")) {
        let mut versions: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("bin/python3")))
            .collect();
        versions.sort();
        candidates.extend(versions);
    }
    candidates.into_iter().find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import sys; sys.exit(sys.version_info < (3, 12))"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// The exit status of the pysource-minimize driver when pysource-minimize gave up.
const GAVE_UP: i32 = 3;

/// The newest non-empty reduction that shrinkray recorded in `dir/.shrinkray/RUN/reductions/N/`
/// (a record is written whole before the next: only the newest can be cut short, and a cut
/// record is empty, which no result of a failing original is).
fn newest_reduction(dir: &Path) -> Option<String> {
    let mut records: Vec<(u64, PathBuf)> = Vec::new();
    for run in std::fs::read_dir(dir.join(".shrinkray")).ok()?.flatten() {
        let Ok(entries) = std::fs::read_dir(run.path().join("reductions")) else {
            continue;
        };
        for entry in entries.flatten() {
            if let Some(n) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                records.push((n, entry.path().join("repro.py")));
            }
        }
    }
    records.sort();
    records
        .iter()
        .rev()
        .find_map(|(_, path)| std::fs::read_to_string(path).ok().filter(|t| !t.is_empty()))
}

/// A peer found in its venv.
#[derive(Debug, Clone)]
pub struct Installed {
    pub peer: Peer,
    pub version: &'static str,
    pub python: PathBuf,
    pub venv: PathBuf,
}

/// What a peer made of one case.
#[derive(Debug, Clone)]
pub struct PeerRun {
    /// Its result: the best script so far when it was cut off.
    pub text: String,
    /// Runs of the interestingness test's candidate script.
    pub runs: usize,
    pub wall_seconds: f64,
    /// Stopped by the budget before it finished.
    pub cut: bool,
    /// Why it gave up (its result is then what it accepted before, or the original).
    pub gave_up: Option<String>,
}

/// The case's oracle as the interestingness test reads it (`oracle.json`).
#[derive(Debug, Serialize)]
struct OracleFile<'a> {
    python: &'a Path,
    timeout: f64,
    attempts: usize,
    kind: &'static str,
    class: Option<&'a str>,
    substring: Option<&'a str>,
    signal: Option<i32>,
    exit: Option<i32>,
    runs: &'a Path,
}

impl<'a> OracleFile<'a> {
    fn of(judge: &'a Judge, runs: &'a Path) -> OracleFile<'a> {
        let mut file = OracleFile {
            python: &judge.python,
            timeout: judge.timeout().as_secs_f64(),
            attempts: judge.attempts,
            kind: "exception",
            class: None,
            substring: None,
            signal: None,
            exit: None,
            runs,
        };
        match judge.signature() {
            Signature::Exception {
                class, substring, ..
            } => (file.class, file.substring) = (Some(class.as_str()), substring.as_deref()),
            Signature::Signal(n) => (file.kind, file.signal) = ("signal", Some(*n)),
            Signature::Exit(n) => (file.kind, file.exit) = ("exit", Some(*n)),
        }
        file
    }
}

impl Installed {
    /// Reduces `original` in `dir` (a fresh directory) under the interestingness test of
    /// `judge`, for at most `budget`; `jobs` is scrub's own parallelism. `Err` is a crash.
    pub fn reduce(
        &self,
        original: &str,
        judge: &Judge,
        budget: Duration,
        jobs: usize,
        dir: &Path,
    ) -> Result<PeerRun> {
        let runs = dir.join("runs");
        std::fs::write(&runs, "")?;
        let oracle = serde_json::to_string_pretty(&OracleFile::of(judge, &runs))?;
        std::fs::write(dir.join("oracle.json"), oracle)?;
        std::fs::write(dir.join("interesting.py"), INTERESTING)?;
        std::fs::write(dir.join("repro.py"), original)?;
        let (program, args, result) = self.command(judge, jobs, dir)?;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let spec = RunSpec {
            python: &program,
            timeout: budget,
            env: &[],
            max_memory: None,
        };
        let outcome = run_in(dir, &dir.join("peer"), &args, &spec)
            .with_context(|| format!("cannot run {}", self.peer.name()))?;
        let cut = outcome.status == Status::TimedOut;
        let last = outcome.stderr.lines().rev().find(|l| !l.trim().is_empty());
        let gave_up = (self.peer == Peer::PysourceMinimize
            && outcome.status == Status::Exited(GAVE_UP))
        .then(|| {
            last.unwrap_or("")
                .trim()
                .trim_start_matches("gave up: ")
                .to_string()
        });
        if !cut && gave_up.is_none() && outcome.status != Status::Exited(0) {
            let how = match outcome.status {
                Status::Exited(code) => format!("exited with status {code}"),
                Status::Signaled(n) => format!("killed by {}", signal_name(n)),
                _ => crate::engine::verdict::describe(&outcome),
            };
            bail!("{how}: {}", last.unwrap_or("no output").trim());
        }
        let text = match self.peer {
            // Shrinkray truncates its file before each write of it, and a cut may land between
            // the two: its record of every reduction holds the last whole one.
            Peer::Shrinkray if cut => newest_reduction(dir),
            _ => std::fs::read_to_string(&result).ok(),
        };
        Ok(PeerRun {
            text: text.unwrap_or_else(|| original.to_string()),
            runs: std::fs::metadata(&runs).map_or(0, |m| m.len() as usize),
            wall_seconds: outcome.duration.as_secs_f64(),
            cut,
            gave_up,
        })
    }

    /// The program that runs the peer in `dir`, its arguments, and the file its result is
    /// in (written as it goes).
    fn command(
        &self,
        judge: &Judge,
        jobs: usize,
        dir: &Path,
    ) -> Result<(PathBuf, Vec<String>, PathBuf)> {
        let test = dir.join("interesting.py");
        Ok(match self.peer {
            Peer::PysourceMinimize => {
                let driver = dir.join("driver.py");
                std::fs::write(&driver, PYSOURCE_MINIMIZE_DRIVER)?;
                let args = vec![
                    driver.display().to_string(),
                    "repro.py".to_string(),
                    "best.py".to_string(),
                ];
                (self.python.clone(), args, dir.join("best.py"))
            }
            Peer::Shrinkray => {
                // Shrinkray's own limit only stops a test that hangs: the test limits each run.
                let limit = judge.timeout().as_secs_f64() * judge.attempts as f64 + 5.0;
                let args = [
                    "--ui",
                    "basic",
                    "--no-llm",
                    "--parallelism",
                    &jobs.to_string(),
                    "--timeout",
                    &format!("{limit:.1}"),
                    "--formatter",
                    "none",
                    "--input-type",
                    "arg",
                    "--trivial-is-not-error",
                    &format!("{} {}", self.python.display(), test.display()),
                    "repro.py",
                ];
                let args = args.iter().map(|a| a.to_string()).collect();
                (self.venv.join("bin/shrinkray"), args, dir.join("repro.py"))
            }
            Peer::Treereduce => unreachable!("treereduce is refused by Peer::locate"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_versions_are_those_scripts_peers_venv_installs() {
        let script = include_str!("../scripts/peers-venv");
        assert!(script.contains(&format!(
            "PYSOURCE_MINIMIZE_VERSION={PYSOURCE_MINIMIZE_VERSION}\n"
        )));
        assert!(script.contains(&format!("SHRINKRAY_VERSION={SHRINKRAY_VERSION}\n")));
    }
}
