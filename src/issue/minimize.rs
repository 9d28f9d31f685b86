//! Step 8: the repro minimized by the engine (`scrub reduce`), keeping the failure.
//!
//! The original is saved as `repro_N_original.py` first and the result written as
//! `repro_N.py`, both in the temp root (`/tmp` unless `SCRUB_ISSUE_TMP` says
//! otherwise).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::engine::ladder::Rung;
use crate::engine::reduce::{self, Execution, Finish, Options};

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
    /// What else the signature kept, when derived (see `reduce::Summary::signature_names`).
    pub signature_names: Vec<String>,
    pub oracle_calls: usize,
    pub verified: bool,
    /// The lines the result fails with, as a fresh run of it prints them (see
    /// `reproduce::failure_lines`): what a comment quotes, where `signature` abstracts.
    pub failure: Vec<String>,
    /// Why the result is unguarded (no control passed on the original), when it is.
    pub unguarded: Option<String>,
    /// How the original failed with its suspect replaced by the reference, when it did (see
    /// `reduce::Summary::fails_without_suspect`).
    pub fails_without_suspect: Option<String>,
    /// The simplifications the failure survived (PyTorch repros).
    pub ladder: Vec<Rung>,
    /// What ran before scrub's passes (PyTorch's minifier), with its figures.
    pub stages: Vec<crate::engine::minifier::Stage>,
    #[serde(skip)]
    pub text: String,
}

/// Where a minimization writes: the temp root (the original and the result), its work
/// folder (the run's log) and the number (in the files' names).
pub struct Place<'a> {
    pub root: &'a Path,
    pub work: &'a Path,
    pub number: u64,
}

/// Saves `original` (the repro as the issue gives it) as `root/repro_N_original.py`, reduces
/// `text` (the repro as it was run, which may carry scrub's rewrites) with `signature` (derived
/// again from the run when `None`) as `execution` says, and writes `root/repro_N.py`; the
/// run's log goes to `work/scrub.out`.
pub fn minimize(
    original_text: &str,
    text: &str,
    prior: &reduce::PriorRuns,
    signature: Option<&str>,
    place: &Place,
    quiet: bool,
    execution: &Execution,
) -> Result<Minimized> {
    let Place { root, work, number } = *place;
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
    let options = Options {
        sig: signature.map(str::to_string),
        output: Some(output.clone()),
        execution: execution.clone(),
        run_dir: Some(work.join("scrub.out")),
        // A comment wants the smallest script, not one under a size.
        target_lines: None,
        quiet,
        prior: prior.clone(),
        ..Options::new(input)
    };
    match reduce::reduce(&options)? {
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
                signature_names: summary.signature_names,
                oracle_calls: summary.oracle_calls,
                verified: summary.verified,
                failure: Vec::new(),
                unguarded: summary.unguarded.then(|| summary.control_note.clone()),
                fails_without_suspect: summary.fails_without_suspect,
                ladder: summary.ladder,
                stages: summary.stages,
                text: result,
            })
        }
        Finish::DoesNotFail => {
            bail!(
                "the repro did not fail with {} when the minimization started",
                signature.unwrap_or("the signature derived from it")
            )
        }
        Finish::Interrupted(partial) => bail!(
            "interrupted; the best script so far is in {}",
            partial.display()
        ),
    }
}
