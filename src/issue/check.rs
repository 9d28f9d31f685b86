//! Step 5: what would make a run pointless — modules the target interpreter lacks, and a
//! recent comment that already confirms the error.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
pub use scrub_reducers::python::imported_modules;

use super::extract::is_bot;
use super::fetch::{self, Issue};
use crate::engine::verdict::Signature;

/// The modules of `modules` that `python` cannot find.
pub fn missing_modules(python: &Path, modules: &[String]) -> Result<Vec<String>> {
    if modules.is_empty() {
        return Ok(Vec::new());
    }
    let probe = "import importlib.util, sys\nfor m in sys.argv[1:]:\n    try:\n        found = importlib.util.find_spec(m) is not None\n    except Exception:\n        found = False\n    if not found:\n        print(m)\n";
    let out = Command::new(python)
        .arg("-c")
        .arg(probe)
        .args(modules)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {}", python.display()))?;
    if !out.status.success() {
        bail!(
            "{} could not check the repro's imports: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Words with which a commenter confirms that a bug is still there.
const CONFIRMATIONS: &[&str] = &[
    "still reproduces",
    "still reproducible",
    "still happens",
    "still happening",
    "still an issue",
    "still fails",
    "still broken",
    "can confirm",
    "i can reproduce",
    "i could reproduce",
    "reproduced on",
    "same error",
    "same issue here",
    "also seeing",
    "also hitting",
];

/// A comment from the last six months (182 days before `today`) that confirms the error:
/// `comment:K` and its author.
pub fn recent_confirmation(
    issue: &Issue,
    signature: Option<&Signature>,
    today: i64,
) -> Option<String> {
    issue.comments.iter().enumerate().rev().find_map(|(k, c)| {
        let day = c.created_at.as_deref().and_then(fetch::days_since_epoch)?;
        if today - day > 182 || is_bot(c.login()) {
            return None;
        }
        let lower = c.body.to_ascii_lowercase();
        let words = CONFIRMATIONS.iter().any(|w| lower.contains(w));
        let same_error = match signature {
            Some(Signature::Exception {
                class,
                substring: Some(s),
                ..
            }) => {
                c.body.contains(class.rsplit('.').next().unwrap_or(class))
                    && c.body.contains(s.as_str())
            }
            _ => false,
        };
        (words || same_error).then(|| {
            format!(
                "comment:{} by @{} ({} days ago) confirms the error",
                k + 1,
                c.login(),
                today - day
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::fetch::{Actor, Comment};
    use scrub_reducers::python::PythonVersion;

    #[test]
    fn imports_are_listed_by_their_top_level_module() {
        let text = "from __future__ import annotations\nimport os.path\nimport numpy as np\nfrom torch.nn import functional\nfrom . import local\ndef f():\n    import yaml\n";
        assert_eq!(
            imported_modules(text, PythonVersion::latest()),
            ["os", "numpy", "torch", "yaml"]
        );
    }

    #[test]
    fn only_recent_comments_confirm() {
        let comment = |date: &str, body: &str| Comment {
            author: Some(Actor { login: "u".into() }),
            body: body.into(),
            created_at: Some(date.into()),
            author_association: None,
        };
        let today = fetch::days_since_epoch("2025-06-01T00:00:00Z").unwrap();
        let mut issue = Issue {
            number: 1,
            comments: vec![comment("2024-01-01T00:00:00Z", "I can confirm this")],
            ..Default::default()
        };
        assert_eq!(recent_confirmation(&issue, None, today), None);
        issue
            .comments
            .push(comment("2025-05-01T00:00:00Z", "Still happens on nightly"));
        assert!(
            recent_confirmation(&issue, None, today)
                .unwrap()
                .starts_with("comment:2")
        );
        let sig = Signature::parse("ValueError: math domain error").unwrap();
        issue.comments = vec![comment(
            "2025-05-20T00:00:00Z",
            "Got `ValueError: math domain error` today",
        )];
        assert!(recent_confirmation(&issue, Some(&sig), today).is_some());
    }
}
