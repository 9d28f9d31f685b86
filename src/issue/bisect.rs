//! Step 7: when the repro no longer fails, the first version that fixed it, and the pull
//! requests between the last broken and the first fixed version that look responsible.
//!
//! Environments are `--env VER=PYTHON` pairs and conda environments named `pytorch-<ver>`;
//! each round runs two or three evenly spaced probes at once.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::reproduce::{RunVerdict, classify};
use crate::engine::process::{self, RunSpec};
use crate::engine::verdict::Signature;

/// One environment to probe: a version and the interpreter (or wrapper) that has it.
#[derive(Debug, Clone, Serialize)]
pub struct Env {
    pub version: String,
    pub python: PathBuf,
}

/// `VER=PYTHON`.
pub fn parse_pair(text: &str) -> Result<Env> {
    let Some((version, python)) = text.split_once('=') else {
        bail!("--env {text:?} is neither NAME nor VER=PYTHON");
    };
    if version.trim().is_empty() || python.trim().is_empty() {
        bail!("--env {text:?}: expected VER=PYTHON, e.g. 2.4=/opt/envs/pt24/bin/python");
    }
    Ok(Env {
        version: version.trim().to_string(),
        python: PathBuf::from(python.trim()),
    })
}

/// Conda environments named `pytorch-<ver>`, each run through a wrapper in `dir` that calls
/// `conda run -n ENV python` from /tmp with `PYTHONPATH` cleared. Empty without conda.
pub fn conda_envs(dir: &Path) -> Result<Vec<Env>> {
    let Ok(out) = Command::new("conda")
        .args(["env", "list", "--json"])
        .stdin(Stdio::null())
        .output()
    else {
        return Ok(Vec::new());
    };
    if !out.status.success() {
        return Ok(Vec::new());
    }
    #[derive(serde::Deserialize)]
    struct List {
        envs: Vec<PathBuf>,
    }
    let list: List =
        serde_json::from_slice(&out.stdout).context("cannot read `conda env list --json`")?;
    let mut envs = Vec::new();
    for path in list.envs {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Some(version) = name.strip_prefix("pytorch-") {
            envs.push(Env {
                version: version.to_string(),
                python: conda_wrapper(dir, &name)?,
            });
        }
    }
    Ok(envs)
}

/// A script that runs `conda run -n NAME python ARGS…` from /tmp with `PYTHONPATH` cleared.
pub fn conda_wrapper(dir: &Path, name: &str) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("python-{name}"));
    // The repro is given relative to the run's directory: make it absolute before leaving it.
    // Options (`-c …`, as the version probe passes) go through as they are.
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in\n  -*) ;;\n  /*) ;;\n  *) f=\"$PWD/$1\"; shift; set -- \"$f\" \"$@\" ;;\nesac\ncd /tmp && exec env -u PYTHONPATH conda run --no-capture-output -n '{name}' python \"$@\"\n"
    );
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(path)
}

/// Orders versions numerically, component by component (`2.10` after `2.9`).
pub fn sort_envs(envs: &mut [Env]) {
    let key = |v: &str| {
        v.split(['.', '+', '-'])
            .map(|p| {
                let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits.parse::<u64>().unwrap_or(0)
            })
            .collect::<Vec<_>>()
    };
    envs.sort_by_key(|a| key(&a.version));
}

/// One probe's result.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub version: String,
    pub round: usize,
    pub result: &'static str,
    pub detail: String,
    pub reproduces: bool,
}

/// The result of a bisection.
#[derive(Debug, Clone, Serialize)]
pub struct Bisection {
    /// The newest version that still fails (None: every environment probed is fixed).
    pub last_broken: Option<String>,
    /// The oldest version that no longer fails (None: every environment still fails, and
    /// only the target interpreter is fixed).
    pub first_fixed: Option<String>,
    pub rounds: usize,
    pub probes: Vec<Probe>,
    /// Pull requests between the two versions that touch the traceback's files or match its
    /// keywords (with `--source-repo`).
    pub commits: Vec<Commit>,
    /// `#N` when exactly one commit touches a file from the traceback.
    pub fixed_by: Option<String>,
}

/// Finds the first fixed version among `envs` (sorted, oldest first), assuming that the
/// failure, once fixed, stays fixed. The target interpreter, which no longer fails, stands
/// after the newest environment.
pub fn bisect(
    text: &str,
    envs: &[Env],
    expected: Option<&Signature>,
    dir: &Path,
    timeout: Duration,
) -> Result<Bisection> {
    std::fs::create_dir_all(dir)?;
    // `lo` still fails (-1: none known), `hi` is fixed (`envs.len()`: the target).
    let (mut lo, mut hi) = (-1i64, envs.len() as i64);
    let mut probes = Vec::new();
    let mut rounds = 0;
    while hi - lo > 1 {
        rounds += 1;
        let gap = hi - lo - 1;
        let k = gap.min(3);
        let mut picks: Vec<i64> = (1..=k).map(|j| lo + (hi - lo) * j / (k + 1)).collect();
        picks.dedup();
        // The probes run side by side: each may hold its share of the machine.
        let max_memory =
            crate::engine::memory::limit(crate::engine::memory::Limit::Share, picks.len());
        let results: Vec<Result<RunVerdict>> = std::thread::scope(|s| {
            let handles: Vec<_> = picks
                .iter()
                .map(|&i| {
                    let env = &envs[i as usize];
                    s.spawn(move || {
                        let spec = RunSpec {
                            python: &env.python,
                            timeout,
                            env: &[],
                            max_memory,
                        };
                        let outcome = process::run_script_in(dir, text, &spec)?;
                        Ok(classify(&outcome, expected))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("probe thread"))
                .collect()
        });
        let mut round = Vec::new();
        for (&i, result) in picks.iter().zip(results) {
            let verdict =
                result.with_context(|| format!("cannot probe {}", envs[i as usize].version))?;
            round.push((i, verdict.reproduces()));
            probes.push(Probe {
                version: envs[i as usize].version.clone(),
                round: rounds,
                result: verdict.result,
                reproduces: verdict.reproduces(),
                detail: verdict.detail,
            });
        }
        if let Some(newest_broken) = round.iter().filter(|(_, bad)| *bad).map(|(i, _)| *i).max() {
            lo = lo.max(newest_broken);
        }
        hi = round
            .iter()
            .filter(|(i, bad)| !bad && *i > lo)
            .map(|(i, _)| *i)
            .min()
            .unwrap_or(hi)
            .min(hi);
    }
    Ok(Bisection {
        last_broken: (lo >= 0).then(|| envs[lo as usize].version.clone()),
        first_fixed: ((hi as usize) < envs.len()).then(|| envs[hi as usize].version.clone()),
        rounds,
        probes,
        commits: Vec::new(),
        fixed_by: None,
    })
}

/// A commit that may have fixed the bug.
#[derive(Debug, Clone, Serialize)]
pub struct Commit {
    pub pr: String,
    pub sha: String,
    pub subject: String,
    /// `touches FILE` or `mentions WORD`.
    pub why: String,
}

/// More candidates than this is no answer.
const MAX_CANDIDATES: usize = 8;

/// The tag of `version` in `repo`: `vVER`, `VER`, `vVER.0`.
fn tag_of(repo: &Path, version: &str) -> Option<String> {
    [
        format!("v{version}"),
        version.to_string(),
        format!("v{version}.0"),
    ]
    .into_iter()
    .find(|tag| {
        Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["rev-parse", "--verify", "-q", &format!("{tag}^{{commit}}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Commits with `(#NNNNN)` in their subject between the tags of `broken` and `fixed` in the
/// git checkout `repo` that touch one of `files` (path suffixes from the traceback) or
/// mention one of `keywords`. Empty when the tags are missing or nothing is clear.
pub fn find_commits(
    repo: &Path,
    broken: &str,
    fixed: &str,
    files: &[String],
    keywords: &[String],
) -> Vec<Commit> {
    let (Some(from), Some(to)) = (tag_of(repo, broken), tag_of(repo, fixed)) else {
        return Vec::new();
    };
    let Ok(out) = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "log",
            "--format=%x01%H%x09%s",
            "--name-only",
            &format!("{from}..{to}"),
        ])
        .stdin(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    let log = String::from_utf8_lossy(&out.stdout);
    let mut found = Vec::new();
    for record in log.split('\x01').filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines();
        let Some((sha, subject)) = lines.next().and_then(|l| l.split_once('\t')) else {
            continue;
        };
        let Some(pr) = pr_number(subject) else {
            continue;
        };
        let changed: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
        let touched = files
            .iter()
            .find(|f| changed.iter().any(|c| c.ends_with(f.as_str())));
        let lower = subject.to_ascii_lowercase();
        let mentioned = keywords
            .iter()
            .find(|k| lower.contains(&k.to_ascii_lowercase()));
        let why = match (touched, mentioned) {
            (Some(f), _) => format!("touches {f}"),
            (None, Some(k)) => format!("mentions {k}"),
            _ => continue,
        };
        found.push(Commit {
            pr,
            sha: sha.to_string(),
            subject: subject.to_string(),
            why,
        });
    }
    if found.len() > MAX_CANDIDATES {
        return Vec::new();
    }
    found
}

/// `#NNNNN` from a subject ending in `(#NNNNN)`.
fn pr_number(subject: &str) -> Option<String> {
    let at = subject.rfind("(#")?;
    let digits: String = subject[at + 2..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (!digits.is_empty() && subject[at + 2 + digits.len()..].starts_with(')'))
        .then(|| format!("#{digits}"))
}

/// The one commit that touches a traceback file, when there is exactly one.
pub fn fixed_by(commits: &[Commit]) -> Option<String> {
    let touching: Vec<&Commit> = commits
        .iter()
        .filter(|c| c.why.starts_with("touches"))
        .collect();
    match touching.as_slice() {
        [one] => Some(one.pr.clone()),
        _ => None,
    }
}

/// The file name of every frame in `traceback` (`decoder.py`; `json/__init__.py` for a
/// package), leaving out `<stdin>` and the like.
pub fn traceback_files(traceback: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in traceback.lines() {
        let Some(rest) = line.trim_start().strip_prefix("File \"") else {
            continue;
        };
        let Some(path) = rest.split('"').next() else {
            continue;
        };
        if path.starts_with('<') {
            continue;
        }
        let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
        // A package's `__init__.py` says nothing without its directory.
        let keep = if parts.last() == Some(&"__init__.py") {
            2
        } else {
            1
        };
        let tail = parts[parts.len().saturating_sub(keep)..].join("/");
        if !tail.is_empty() && !out.contains(&tail) {
            out.push(tail);
        }
    }
    out
}

/// The exception's class and the longer words of its message.
pub fn keywords(sig: &Signature) -> Vec<String> {
    let Signature::Exception {
        class, substring, ..
    } = sig
    else {
        return Vec::new();
    };
    let mut out = vec![class.rsplit('.').next().unwrap_or(class).to_string()];
    if let Some(s) = substring {
        let mut words: Vec<&str> = s
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| w.len() >= 6)
            .collect();
        words.sort_by_key(|w| std::cmp::Reverse(w.len()));
        out.extend(words.into_iter().take(3).map(str::to_string));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_numerically() {
        let mut envs: Vec<Env> = ["2.10", "2.9", "2.1.2", "1.13"]
            .iter()
            .map(|v| Env {
                version: v.to_string(),
                python: PathBuf::new(),
            })
            .collect();
        sort_envs(&mut envs);
        let order: Vec<&str> = envs.iter().map(|e| e.version.as_str()).collect();
        assert_eq!(order, ["1.13", "2.1.2", "2.9", "2.10"]);
    }

    #[test]
    fn pairs_parse_and_bad_ones_are_refused() {
        let e = parse_pair("3.11=/usr/bin/python3.11").unwrap();
        assert_eq!(e.version, "3.11");
        assert!(parse_pair("3.11").is_err());
        assert!(parse_pair("=x").is_err());
    }

    #[test]
    fn the_conda_wrapper_is_valid_shell() {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = conda_wrapper(dir.path(), "pytorch-2.4").unwrap();
        let status = Command::new("sh").arg("-n").arg(&wrapper).status().unwrap();
        assert!(status.success());
        let text = std::fs::read_to_string(&wrapper).unwrap();
        assert!(text.contains("conda run --no-capture-output -n 'pytorch-2.4' python"));
    }

    #[test]
    fn pr_numbers_come_from_the_subject_end() {
        assert_eq!(
            pr_number("Fix isoformat Z (#12345)").as_deref(),
            Some("#12345")
        );
        assert_eq!(pr_number("Fix (#12a)"), None);
        assert_eq!(pr_number("no number"), None);
    }

    #[test]
    fn traceback_files_are_named_by_their_file_names() {
        let tb = "Traceback (most recent call last):\n  File \"/home/u/repro.py\", line 3, in <module>\n  File \"/usr/lib/python3.10/json/decoder.py\", line 337, in decode\n  File \"/usr/lib/python3.10/json/__init__.py\", line 346, in loads\n  File \"<stdin>\", line 1\nValueError: x\n";
        assert_eq!(
            traceback_files(tb),
            ["repro.py", "decoder.py", "json/__init__.py"]
        );
    }
}
