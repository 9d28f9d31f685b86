//! Corpus cases: `corpus/<name>/repro.py` with its `case.toml`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

/// What `case.toml` says about a case.
#[derive(Debug, Clone, Deserialize)]
pub struct CaseSpec {
    /// The `--sig` the case fails with.
    pub signature: String,
    /// The most non-blank lines the reduction may end with.
    pub bound: usize,
    /// The size of the smallest version a person writes by hand.
    pub hand_bound: usize,
    /// The most bytes the reduction may end with, for a case whose failure hangs on data
    /// inside a literal (where lines alone do not show what is left).
    #[serde(default)]
    pub byte_bound: Option<usize>,
    #[serde(default)]
    pub exercises: Vec<String>,
    /// Python modules the case imports beyond the standard library.
    #[serde(default)]
    pub needs: Vec<String>,
    #[serde(default)]
    pub flaky: bool,
    /// Reduced without `--sig`: scrub derives the signature from what names the failure.
    #[serde(default)]
    pub derive: bool,
    /// What the result's failure must still show beyond the signature's first line: the inner
    /// error, a detail line or the cause, which a derived signature keeps.
    #[serde(default)]
    pub keeps: Vec<String>,
    /// Code the result must still hold: the suspect, where a misuse of the library fails with
    /// the same message without it (a dimension marked dynamic shrunk to 1).
    #[serde(default)]
    pub keeps_code: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub spec: CaseSpec,
}

impl Case {
    pub fn script(&self) -> PathBuf {
        self.dir.join("repro.py")
    }

    /// Why `python` cannot run the case: the modules it needs that do not import there.
    pub fn missing_needs(&self, python: &Path) -> Option<String> {
        let missing: Vec<&str> = self
            .spec
            .needs
            .iter()
            .filter(|m| {
                !std::process::Command::new(python)
                    .args(["-c", &format!("import {m}")])
                    .stdin(std::process::Stdio::null())
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .map(String::as_str)
            .collect();
        (!missing.is_empty()).then(|| format!("needs {}", missing.join(", ")))
    }
}

/// Every case under `dir` (folders holding a `case.toml`), sorted by name.
pub fn load(dir: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("cannot read corpus {}", dir.display()))?
    {
        let path = entry?.path();
        let toml_path = path.join("case.toml");
        if !toml_path.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&toml_path)?;
        let spec: CaseSpec =
            toml::from_str(&text).with_context(|| format!("invalid {}", toml_path.display()))?;
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        cases.push(Case {
            name,
            dir: path,
            spec,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}
