//! Step 6: run the repro as the issue gives it, and say what happened against the issue's
//! error: the same error, no error, a different error, a crash, a timeout or an OOM.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

use crate::engine::exception::final_exception;
use crate::engine::memory::human;
use crate::engine::process::{self, Outcome, RunSpec, Status, signal_name};
use crate::engine::verdict::{Signature, Verdict};

use super::machine::{self, Lack};

/// What one run means for the issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunVerdict {
    /// `same-error`, `error` (the issue names no error and the run failed), `no-error`,
    /// `different-error`, `environment` (a failure of this machine, see `lacking`), `signal`,
    /// `crash` (an exit status above 128), `timeout`, `oom`.
    pub result: &'static str,
    /// The exception header, the signal, or the status.
    pub detail: String,
    /// What this machine lacked, when the result is `environment`.
    pub lacking: Option<Lack>,
}

impl RunVerdict {
    /// Whether the run shows the issue's failure.
    pub fn reproduces(&self) -> bool {
        matches!(self.result, "same-error" | "error")
    }
}

/// The reproduction: what the runs gave, how often, and the signature to minimize with.
#[derive(Debug, Clone, Serialize)]
pub struct Reproduction {
    pub result: &'static str,
    pub detail: String,
    pub reproduces: bool,
    /// What this machine lacked, when the result is `environment`: never the reported bug.
    pub lacking: Option<Lack>,
    /// The lines that show the failure as the run printed them (see [`failure_lines`]).
    pub failure: Vec<String>,
    /// Runs that showed `result`, over all runs: `2/2`, or e.g. `3/5` when runs disagreed.
    pub ratio: String,
    pub runs: usize,
    /// The first two runs disagreed, and the others ran with a fixed seed.
    pub seeded: bool,
    pub seconds: f64,
    /// The signature the minimization keeps: the issue's when it matched, else derived from
    /// the run.
    pub signature: Option<String>,
    /// Whether the minimization derives its signature from the run again (with what names
    /// the failure besides its first line: an inner error, the detail under a header, the
    /// cause), rather than keep `signature` alone: so it does whenever the run failed, also
    /// when its failure is the issue's, whose first line may be a wrapper's.
    pub derived: bool,
    /// The end of the first run's stderr.
    pub stderr_tail: String,
    /// The end of the first run's stdout.
    pub stdout_tail: String,
    /// The script the first two runs ran and their outcomes: fresh runs, which the
    /// minimization counts as its own first runs of the same script (see
    /// `reduce::Options::prior`).
    #[serde(skip)]
    pub first_runs: crate::engine::reduce::PriorRuns,
}

/// Classifies `outcome` against the issue's signature.
pub fn classify(outcome: &Outcome, expected: Option<&Signature>) -> RunVerdict {
    let v = |result, detail: String| RunVerdict {
        result,
        detail,
        lacking: None,
    };
    match outcome.status {
        Status::TimedOut => v(
            "timeout",
            format!("timed out after {:.0} s", outcome.duration.as_secs_f64()),
        ),
        Status::OutOfMemory => v(
            "oom",
            format!(
                "killed over the memory limit, holding {}",
                human(outcome.peak_rss)
            ),
        ),
        // The issue names no error: any failure is the one it reports.
        Status::Signaled(sig) if expected.is_none() => {
            v("error", format!("killed by {}", signal_name(sig)))
        }
        Status::Exited(code) if code > 128 && expected.is_none() => v(
            "error",
            format!("exit status {code} ({})", signal_name(code - 128)),
        ),
        Status::Signaled(sig) => {
            if expected == Some(&Signature::Signal(sig)) {
                v("same-error", format!("killed by {}", signal_name(sig)))
            } else {
                v("signal", format!("killed by {}", signal_name(sig)))
            }
        }
        Status::Exited(0) => v("no-error", "ran to completion without an error".into()),
        Status::Exited(code) if code > 128 => {
            let sig = code - 128;
            if expected == Some(&Signature::Signal(sig)) {
                v(
                    "same-error",
                    format!("exit status {code} ({})", signal_name(sig)),
                )
            } else {
                v(
                    "crash",
                    format!("exit status {code} ({})", signal_name(sig)),
                )
            }
        }
        Status::Exited(code) => {
            let header = match final_exception(&outcome.stderr) {
                Some(e) => e.header,
                None if outcome.stderr.contains("unexpected success") => {
                    "unittest reported an unexpected success".into()
                }
                None => format!("exit status {code} without a traceback"),
            };
            let is_oom = |t: &str| t.contains("out of memory") || t.contains("OutOfMemoryError");
            let expects_oom = expected.is_some_and(|s| is_oom(&s.to_string()));
            // A failure of this machine is never the reported one, unless it is what the
            // issue shows.
            let same = expected.is_some_and(|s| s.judge(outcome) == Verdict::Same);
            if let Some(lack) = machine::lacking(&outcome.stderr, expects_oom)
                && !same
            {
                return RunVerdict {
                    result: "environment",
                    detail: header,
                    lacking: Some(lack),
                };
            }
            if is_oom(&outcome.stderr) && !expects_oom {
                return v("oom", header);
            }
            match expected {
                None => v("error", header),
                Some(sig) => match sig.judge(outcome) {
                    Verdict::Same => v("same-error", header),
                    _ => v("different-error", header),
                },
            }
        }
    }
}

/// Runs `text` with `python` under `dir`, twice; when the two disagree, three more times as
/// `seeded` (the text with a fixed seed; `PYTHONHASHSEED=0` is set for every run), and
/// reports the most common result with its ratio.
pub fn reproduce(
    text: &str,
    seeded: &str,
    python: &Path,
    expected: Option<&Signature>,
    dir: &Path,
    timeout: Duration,
) -> Result<Reproduction> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("repro.py"), text)?;
    // A repro may hold most of the machine, as one reduction job may, and no more: one that
    // would push the machine into swap is stopped and reported as out of memory.
    let spec = RunSpec {
        python,
        timeout,
        env: &[],
        max_memory: crate::engine::memory::limit(crate::engine::memory::Limit::Share, 1),
    };
    let mut outcomes = Vec::new();
    for _ in 0..2 {
        outcomes.push(process::run_script_in(dir, text, &spec)?);
    }
    let mut verdicts: Vec<RunVerdict> = outcomes.iter().map(|o| classify(o, expected)).collect();
    if verdicts[0].result != verdicts[1].result {
        for _ in 0..3 {
            let o = process::run_script_in(dir, seeded, &spec)?;
            verdicts.push(classify(&o, expected));
            outcomes.push(o);
        }
    }
    for (i, o) in outcomes.iter().enumerate() {
        std::fs::write(dir.join(format!("run-{}.stderr", i + 1)), &o.stderr)?;
    }
    // The most common result; on a tie, the one that reproduces.
    let best = verdicts
        .iter()
        .max_by_key(|v| {
            (
                verdicts.iter().filter(|w| w.result == v.result).count(),
                v.reproduces(),
            )
        })
        .expect("at least two runs")
        .clone();
    let hits = verdicts.iter().filter(|v| v.result == best.result).count();
    let first = outcomes
        .iter()
        .zip(&verdicts)
        .find(|(_, v)| v.result == best.result)
        .map(|(o, _)| o)
        .expect("the best verdict came from a run");
    let signature = match (best.result, expected) {
        ("same-error", Some(sig)) => Some(sig.to_string()),
        ("error", None) => Signature::derive(first).map(|s| s.to_string()),
        _ => None,
    };
    let tail: Vec<&str> = first.stderr.lines().rev().take(15).collect();
    let out_tail: Vec<&str> = first.stdout.lines().rev().take(15).collect();
    Ok(Reproduction {
        first_runs: crate::engine::reduce::PriorRuns {
            text: text.to_string(),
            runs: outcomes[..2].to_vec(),
        },
        seeded: verdicts.len() > 2,
        result: best.result,
        reproduces: best.reproduces(),
        detail: best.detail,
        lacking: best.lacking,
        failure: failure_lines(&first.stderr),
        ratio: format!("{hits}/{}", verdicts.len()),
        runs: verdicts.len(),
        seconds: (outcomes
            .iter()
            .map(|o| o.duration.as_secs_f64())
            .sum::<f64>()
            * 1000.0)
            .round()
            / 1000.0,
        derived: signature.is_some(),
        signature,
        stderr_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        stdout_tail: out_tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
    })
}

/// The lines `text` fails with in one fresh run with `python` under `dir` (see
/// [`failure_lines`]): what a comment quotes of a minimized repro.
pub fn failure_of(text: &str, python: &Path, dir: &Path, timeout: Duration) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let spec = RunSpec {
        python,
        timeout,
        env: &[],
        max_memory: crate::engine::memory::limit(crate::engine::memory::Limit::Share, 1),
    };
    let outcome = process::run_script_in(dir, text, &spec)?;
    Ok(failure_lines(&outcome.stderr))
}

/// Hint lines a library prints under its error, which say nothing of the failure.
const HINTS: &[&str] = &[
    "Set TORCHDYNAMO_VERBOSE=1",
    "You can suppress this exception",
    "For even more developer context",
    "from user code:",
    "torch._dynamo.config.suppress_errors",
    "import torch._dynamo",
];

/// The most lines, and characters a line, a comment quotes of a failure.
const QUOTED_LINES: usize = 8;
const QUOTED_CHARS: usize = 200;

/// The lines that show a run's failure as it printed them, for a comment to quote: the final
/// exception's header and the lines under it, without blank lines and the hint lines a library
/// adds (and the dispatcher's table of the backends an operator is registered for),
/// trimmed (at most 8 lines of 200 characters); empty when the run printed no exception.
pub fn failure_lines(stderr: &str) -> Vec<String> {
    let Some(exc) = final_exception(stderr) else {
        return Vec::new();
    };
    let mut lines: Vec<String> = std::iter::once(exc.header.as_str())
        .chain(exc.message.lines().skip(1))
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.contains(" registered at "))
        .take_while(|l| !HINTS.iter().any(|h| l.trim_start().starts_with(h)))
        .map(|l| match l.char_indices().nth(QUOTED_CHARS) {
            Some((at, _)) => format!("{}…", &l[..at]),
            None => l.to_string(),
        })
        .collect();
    if lines.len() > QUOTED_LINES {
        lines.truncate(QUOTED_LINES);
        lines.push("…".into());
    }
    lines
}

/// The versions a report names.
#[derive(Debug, Clone, Serialize)]
pub struct Versions {
    pub python: String,
    /// `None` when the repro does not use torch, or torch is not importable.
    pub torch: Option<String>,
    pub interpreter: String,
}

/// Asks `python` for its version, and torch's when `with_torch`.
pub fn versions(python: &Path, with_torch: bool) -> Versions {
    let script = if with_torch {
        "import sys\nprint('%d.%d.%d' % sys.version_info[:3])\ntry:\n    import torch\n    print(torch.__version__)\nexcept Exception:\n    pass\n"
    } else {
        "import sys\nprint('%d.%d.%d' % sys.version_info[:3])\n"
    };
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .stdin(Stdio::null())
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut lines = text.lines();
    Versions {
        python: lines.next().unwrap_or("unknown").to_string(),
        torch: lines.next().map(str::to_string),
        interpreter: python.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB: &str = "Traceback (most recent call last):\n  File \"r.py\", line 1, in <module>\n";

    #[test]
    fn outcomes_are_classified_against_the_issue() {
        let sig = Signature::parse("ValueError: math domain error").unwrap();
        let c = |o: &Outcome| classify(o, Some(&sig)).result;
        assert_eq!(
            c(&Outcome::exited(
                1,
                &format!("{TB}ValueError: math domain error\n")
            )),
            "same-error"
        );
        assert_eq!(
            c(&Outcome::exited(1, &format!("{TB}KeyError: 'x'\n"))),
            "different-error"
        );
        assert_eq!(c(&Outcome::exited(0, "")), "no-error");
        assert_eq!(c(&Outcome::exited(139, "")), "crash");
        assert_eq!(
            c(&Outcome::exited(
                1,
                &format!("{TB}torch.OutOfMemoryError: CUDA out of memory.\n")
            )),
            "environment"
        );
        assert_eq!(
            c(&Outcome::exited(
                1,
                &format!(
                    "{TB}RuntimeError: [enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried to allocate 800000000000 bytes. out of memory\n"
                )
            )),
            "oom"
        );
        let segv = Outcome {
            status: Status::Signaled(libc::SIGSEGV),
            ..Outcome::exited(0, "")
        };
        assert_eq!(c(&segv), "signal");
        assert_eq!(
            classify(&segv, Some(&Signature::Signal(libc::SIGSEGV))).result,
            "same-error"
        );
        assert_eq!(
            classify(&Outcome::exited(1, &format!("{TB}KeyError: 'x'\n")), None).result,
            "error"
        );
    }

    #[test]
    fn a_comment_quotes_the_failure_as_printed_without_hints() {
        let stderr = format!(
            "{TB}torch._dynamo.exc.UserError: Constraints violated (dz)!\n  - Not all values of dz = L['z'].size()[0] in the specified range satisfy\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n"
        );
        assert_eq!(
            failure_lines(&stderr),
            [
                "torch._dynamo.exc.UserError: Constraints violated (dz)!",
                "  - Not all values of dz = L['z'].size()[0] in the specified range satisfy",
            ]
        );
        assert!(failure_lines("").is_empty());
    }

    #[test]
    fn a_failure_of_the_machine_is_its_own_outcome_whatever_the_issue_shows() {
        let gpu = Outcome::exited(
            1,
            &format!("{TB}RuntimeError: Found no NVIDIA driver on your system.\n"),
        );
        let v = classify(&gpu, None);
        assert_eq!((v.result, v.lacking), ("environment", Some(Lack::Gpu)));
        assert!(!v.reproduces());
        let sig = Signature::parse("NotImplementedError: Could not run").unwrap();
        assert_eq!(classify(&gpu, Some(&sig)).result, "environment");
        let about = Signature::parse("RuntimeError: Found no NVIDIA driver").unwrap();
        assert_eq!(classify(&gpu, Some(&about)).result, "same-error");
    }
}
