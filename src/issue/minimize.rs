//! Step 8: the repro minimized by the engine (`scrub reduce`), keeping the failure.
//!
//! The original is saved as `repro_N_original.py` first and the result written as
//! `repro_N.py`, both in the temp root (`/tmp` unless `SCRUB_ISSUE_TMP` says
//! otherwise).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde::Serialize;

use crate::cli::{Cli, Command};
use crate::ladder::Rung;
use crate::reduce::{self, Finish};

/// What the minimization gave.
#[derive(Debug, Clone, Serialize)]
pub struct Minimized {
    pub original: PathBuf,
    pub path: PathBuf,
    pub original_lines: usize,
    pub final_lines: usize,
    /// Whether the result differs from the original.
    pub changed: bool,
    pub signature: String,
    pub oracle_calls: usize,
    pub verified: bool,
    /// The simplifications the failure survived (PyTorch repros).
    pub ladder: Vec<Rung>,
    /// What ran before scrub's passes (PyTorch's minifier), with its figures.
    pub stages: Vec<crate::minifier::Stage>,
    #[serde(skip)]
    pub text: String,
}

/// Saves `original` (the repro as the issue gives it) as `root/repro_N_original.py`, reduces
/// `text` (the repro as it was run, which may carry scrub's rewrites) with `signature` under
/// `python`, and writes `root/repro_N.py`; the run's log goes to `work/scrub.out`.
#[allow(clippy::too_many_arguments)]
pub fn minimize(
    original_text: &str,
    text: &str,
    signature: &str,
    python: &Path,
    root: &Path,
    work: &Path,
    number: u64,
    quiet: bool,
) -> Result<Minimized> {
    let original = root.join(format!("repro_{number}_original.py"));
    let output = root.join(format!("repro_{number}.py"));
    std::fs::write(&original, original_text)
        .with_context(|| format!("cannot write {}", original.display()))?;
    let input = if text == original_text {
        original.clone()
    } else {
        let prepared = work.join("prepared.py");
        std::fs::write(&prepared, text)
            .with_context(|| format!("cannot write {}", prepared.display()))?;
        prepared
    };
    // Built through the command line, so that the engine's own defaults apply to every
    // option this module does not name.
    let mut argv: Vec<String> = vec![
        "scrub".into(),
        "reduce".into(),
        input.display().to_string(),
        "--sig".into(),
        signature.into(),
        "-o".into(),
        output.display().to_string(),
        "--python".into(),
        python.display().to_string(),
        "--run-dir".into(),
        work.join("scrub.out").display().to_string(),
        // A comment wants the smallest script, not one under a size.
        "--exhaustive".into(),
    ];
    if quiet {
        argv.push("--quiet".into());
    }
    let cli = Cli::try_parse_from(&argv).context("cannot build the reduce command")?;
    let Command::Reduce(args) = cli.command else {
        unreachable!("the argv names the reduce command");
    };
    match reduce::reduce(&args)? {
        Finish::Reduced(summary) => {
            let result = std::fs::read_to_string(&output)
                .with_context(|| format!("cannot read {}", output.display()))?;
            Ok(Minimized {
                original,
                path: output,
                original_lines: summary.original_lines,
                final_lines: summary.final_lines,
                changed: result != text,
                signature: summary.signature,
                oracle_calls: summary.oracle_calls,
                verified: summary.verified,
                ladder: summary.ladder,
                stages: summary.stages,
                text: result,
            })
        }
        Finish::DoesNotFail => {
            bail!("the repro did not fail with {signature} when the minimization started")
        }
        Finish::Interrupted(partial) => bail!(
            "interrupted; the best script so far is in {}",
            partial.display()
        ),
    }
}
