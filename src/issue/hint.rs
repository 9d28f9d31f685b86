//! Step 9: a simple fix to point at — a test still marked as expected to fail that passes now.
//! Sources are never edited; the hint only says so.

use super::fetch::Issue;
use super::reproduce::Reproduction;

const MARKERS: &[&str] = &[
    "xfailIfTorchDynamo",
    "expectedFailure",
    "expectedFailureIf",
    "skipIfTorchDynamo",
    "@xfail",
];

/// The hint, when the issue is about a test carrying a stale expected-failure marker and the
/// run shows that the test passes now (it ran clean, or unittest reported an unexpected
/// success).
pub fn stale_xfail(issue: &Issue, repro_text: &str, run: &Reproduction) -> Option<String> {
    let text = format!("{}\n{}\n{repro_text}", issue.title, issue.body);
    let marker = MARKERS.iter().find(|m| text.contains(*m))?;
    let passes = run.result == "no-error" || run.stderr_tail.contains("unexpected success");
    if !passes {
        return None;
    }
    let test = text
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '.')
        .find(|w| w.starts_with("test_") || w.contains(".test_"))
        .map(|t| format!(" `{t}`"))
        .unwrap_or_default();
    Some(format!(
        "the test{test} passes now: its `{marker}` marker looks stale and can be removed"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(result: &'static str, stderr: &str) -> Reproduction {
        Reproduction {
            result,
            detail: String::new(),
            reproduces: false,
            lacking: None,
            failure: Vec::new(),
            ratio: "2/2".into(),
            runs: 2,
            seeded: false,
            seconds: 0.1,
            signature: None,
            derived: false,
            stderr_tail: stderr.into(),
            stdout_tail: String::new(),
            first_runs: Default::default(),
        }
    }

    #[test]
    fn an_unexpected_success_of_a_marked_test_is_a_hint() {
        let issue = Issue {
            number: 1,
            title: "DISABLED test_sum (__main__.TestOps)".into(),
            body: "It carries @expectedFailure".into(),
            ..Default::default()
        };
        let hint = stale_xfail(
            &issue,
            "",
            &run(
                "different-error",
                "FAILED (unexpected successes=1)\n... unexpected success",
            ),
        )
        .unwrap();
        assert!(
            hint.contains("`test_sum`") && hint.contains("expectedFailure"),
            "{hint}"
        );
        assert!(stale_xfail(&issue, "", &run("same-error", "")).is_none());
        let plain = Issue {
            number: 1,
            title: "sum is wrong".into(),
            ..Default::default()
        };
        assert!(stale_xfail(&plain, "", &run("no-error", "")).is_none());
    }
}
