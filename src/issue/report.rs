//! Step 10: the report — the comment a maintainer would post, and everything behind it as
//! JSON (`--json`) or text.

use serde::Serialize;

use super::bisect::Bisection;
use super::github::{Applied, Planned, shell_line};
use super::minimize::Minimized;
use super::reproduce::{Reproduction, Versions};
use super::safety::Risk;

/// One block of the issue, as the report lists it.
#[derive(Debug, Clone, Serialize)]
pub struct BlockRow {
    pub source: String,
    pub kind: super::extract::Kind,
    pub lines: usize,
}

/// Where the pipeline stopped before its end, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Stop {
    /// `judge`, `safety`, `trust`, `check`, `reproduce`, or the `--stop-after` step.
    pub step: &'static str,
    pub reason: String,
    /// Whether a person must decide before scrub goes on (a flag lets it go on).
    pub needs_decision: bool,
}

/// Everything `scrub issue` found and planned.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Report {
    pub number: u64,
    pub title: String,
    pub repo: Option<String>,
    pub url: Option<String>,
    pub category: &'static str,
    pub reason: String,
    pub repro_source: Option<String>,
    pub repro_reason: Option<String>,
    /// The failure the issue shows, as a signature (from its evidence, when the form gives
    /// one).
    pub expected_signature: Option<String>,
    /// How the thread shows its failure: the form, what kind, where, and the line.
    pub evidence: Option<super::evidence::Evidence>,
    pub blocks: Vec<BlockRow>,
    pub risks: Vec<Risk>,
    /// Whether the author is a collaborator (`None`: not checked).
    pub author_collaborator: Option<bool>,
    pub missing_modules: Vec<String>,
    pub recent_confirmation: Option<String>,
    pub labels_to_add: Vec<String>,
    pub labels_to_remove: Vec<String>,
    pub refresh_triaged: bool,
    pub propose_close: bool,
    pub duplicate_of: Option<u64>,
    pub locked: bool,
    pub stopped: Option<Stop>,
    pub work_dir: Option<String>,
    pub outcome: Option<Reproduction>,
    pub versions: Option<Versions>,
    pub bisect: Option<Bisection>,
    pub minimized: Option<Minimized>,
    pub hint: Option<String>,
    pub comment: Option<String>,
    pub planned_commands: Vec<Vec<String>>,
    #[serde(skip)]
    pub plan: Vec<Planned>,
    pub applied: Vec<Applied>,
    pub notes: Vec<String>,
}

/// The comment, per the recipe: still / no longer reproduces on VERSION, the fixing PR when
/// found, the minimized repro only when it changed, the necessary conditions only when the
/// issue does not state them, and a short attribution line.
pub fn comment(
    issue_text: &str,
    outcome: &Reproduction,
    versions: &Versions,
    bisect: Option<&Bisection>,
    minimized: Option<&Minimized>,
    hint: Option<&str>,
    thread_showed_error: bool,
) -> String {
    let on = match &versions.torch {
        Some(torch) => format!("PyTorch {torch}"),
        None => format!("Python {}", versions.python),
    };
    let mut out = String::new();
    if outcome.reproduces {
        let still = if thread_showed_error { "still " } else { "" };
        out.push_str(&format!("This issue {still}reproduces on {on}"));
        if outcome.runs > 2 {
            out.push_str(&format!(" ({} runs)", outcome.ratio));
        }
        out.push_str(".\n");
        if !thread_showed_error {
            let sig = outcome
                .signature
                .as_deref()
                .filter(|s| *s != outcome.detail)
                .map(|s| format!(" (signature `{s}`)"))
                .unwrap_or_default();
            out.push_str(&format!(
                "\nThe issue shows no error message; running its repro here ends with `{}`{sig}.\n",
                outcome.detail
            ));
        }
    } else {
        out.push_str(&format!("This issue no longer reproduces on {on}"));
        match outcome.result {
            "no-error" => out.push_str(": the repro runs to completion.\n"),
            "different-error" => out.push_str(&format!(
                " as reported: the repro now fails with `{}`.\n",
                outcome.detail
            )),
            _ => out.push_str(&format!(": the repro now ends with {}.\n", outcome.detail)),
        }
    }
    if let Some(b) = bisect {
        if let Some(pr) = &b.fixed_by {
            out.push_str(&format!("\nFixed by {pr}.\n"));
        }
        match (&b.last_broken, &b.first_fixed) {
            (Some(bad), Some(good)) => out.push_str(&format!(
                "\nIt still fails on {bad} and is fixed from {good}.\n"
            )),
            (None, Some(good)) => out.push_str(&format!("\nIt is already fixed on {good}.\n")),
            (Some(bad), None) => out.push_str(&format!(
                "\nIt still fails on {bad}, the newest version tried besides {on}.\n"
            )),
            (None, None) => {}
        }
    }
    if let Some(m) = minimized.filter(|m| m.changed) {
        out.push_str(&format!(
            "\nMinimized repro ({} → {} lines):\n\n```python\n{}{}```\n",
            m.original_lines,
            m.final_lines,
            m.text,
            if m.text.ends_with('\n') { "" } else { "\n" }
        ));
        if !m.signature_names.is_empty() {
            out.push_str(&format!(
                "\nIt fails with `{}`, and keeps what names that failure:\n",
                m.signature
            ));
            for name in &m.signature_names {
                let (what, line) = name.split_once(": ").unwrap_or(("", name));
                out.push_str(&format!("- {what}: `{line}`\n"));
            }
        }
        if let Some(why) = &m.unguarded {
            out.push_str(&format!(
                "\nThis result is unguarded: {why}. Nothing run checked that it is the same bug as the original's; compare it with the original before relying on it.\n"
            ));
        }
        let lower = issue_text.to_ascii_lowercase();
        let new: Vec<&str> = m
            .ladder
            .iter()
            .filter(|r| r.ran())
            .map(|r| r.meaning.as_str())
            .filter(|meaning| !lower.contains(&meaning.to_ascii_lowercase()))
            .collect();
        if !new.is_empty() {
            out.push_str("\nWhat the failure needs:\n");
            for meaning in new {
                out.push_str(&format!("- {meaning}\n"));
            }
        }
    }
    if let Some(h) = hint {
        out.push_str(&format!("\nNote: {h}.\n"));
    }
    out.push_str(&format!(
        "\n<sub>Checked with scrub {}.</sub>\n",
        env!("CARGO_PKG_VERSION")
    ));
    out
}

/// The comment for a repro that the thread shows no error for and that runs to completion
/// here: what was run, on what, and its output, with a request for the failure.
pub fn unreproduced_comment(
    outcome: &Reproduction,
    versions: &Versions,
    work: &std::path::Path,
) -> String {
    let on = match &versions.torch {
        Some(torch) => format!("PyTorch {torch} (Python {})", versions.python),
        None => format!("Python {}", versions.python),
    };
    let mut out = format!(
        "The repro in this issue runs to completion here without an error on {on}: `python repro.py` in `{}`, {} runs, {}.\n",
        work.display(),
        outcome.runs,
        outcome.detail
    );
    let output = [
        outcome.stdout_tail.trim_end(),
        outcome.stderr_tail.trim_end(),
    ]
    .iter()
    .filter(|t| !t.is_empty())
    .copied()
    .collect::<Vec<_>>()
    .join("\n");
    if output.is_empty() {
        out.push_str("\nIt printed nothing.\n");
    } else {
        out.push_str(&format!("\nIts output:\n\n```\n{output}\n```\n"));
    }
    out.push_str(
        "\nCould you add the error you see (the full traceback), or the result you expected and the one you got?\n",
    );
    out.push_str(&format!(
        "\n<sub>Checked with scrub {}.</sub>\n",
        env!("CARGO_PKG_VERSION")
    ));
    out
}

/// The report as text, for a person at a terminal.
pub fn render(r: &Report) -> String {
    let mut out = format!("issue #{}: {}\n", r.number, r.title);
    out.push_str(&format!("category: {} ({})\n", r.category, r.reason));
    match (&r.repro_source, &r.repro_reason) {
        (Some(src), Some(why)) => out.push_str(&format!("repro: {src} ({why})\n")),
        _ => out.push_str("repro: none\n"),
    }
    if let Some(e) = &r.evidence {
        out.push_str(&format!(
            "failure in the issue: {:?} in the {}: {}\n",
            e.form, e.source, e.text
        ));
    }
    if let Some(sig) = &r.expected_signature {
        out.push_str(&format!("error in the issue: {sig}\n"));
    }
    if !r.risks.is_empty() {
        out.push_str("risks:\n");
        for risk in &r.risks {
            out.push_str(&format!(
                "  line {}: {}: {}\n",
                risk.line, risk.kind, risk.snippet
            ));
        }
    }
    if !r.missing_modules.is_empty() {
        out.push_str(&format!(
            "missing modules: {}\n",
            r.missing_modules.join(", ")
        ));
    }
    if let Some(c) = &r.recent_confirmation {
        out.push_str(&format!("recent confirmation: {c}\n"));
    }
    if let (Some(o), Some(v)) = (&r.outcome, &r.versions) {
        let torch = v
            .torch
            .as_deref()
            .map(|t| format!(", torch {t}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "outcome: {} ({}) on Python {}{torch}, {} runs agreeing {}\n",
            o.result, o.detail, v.python, o.runs, o.ratio
        ));
    }
    out.push_str(&bisected_and_minimized(r));
    if let Some(h) = &r.hint {
        out.push_str(&format!("hint: {h}\n"));
    }
    for note in &r.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    if let Some(stop) = &r.stopped {
        out.push_str(&format!("stopped at {}: {}\n", stop.step, stop.reason));
    }
    if let Some(c) = &r.comment {
        out.push_str("\ncomment:\n");
        for line in c.lines() {
            out.push_str(&format!("  | {line}\n"));
        }
    }
    out.push_str(&github_lines(r));
    out
}

/// The bisection's and the minimization's lines of [`render`].
fn bisected_and_minimized(r: &Report) -> String {
    let mut out = String::new();
    if let Some(b) = &r.bisect {
        let probes: Vec<String> = b
            .probes
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p.version,
                    if p.reproduces { "fails" } else { "fixed" }
                )
            })
            .collect();
        out.push_str(&format!(
            "bisect: last broken {}, first fixed {} ({} rounds: {})\n",
            b.last_broken.as_deref().unwrap_or("none of those tried"),
            b.first_fixed.as_deref().unwrap_or("the target interpreter"),
            b.rounds,
            probes.join(", ")
        ));
        for c in &b.commits {
            out.push_str(&format!("  {} {} ({})\n", c.pr, c.subject, c.why));
        }
    }
    if let Some(m) = &r.minimized {
        out.push_str(&format!(
            "minimized: {} → {} lines, {} (original saved as {})\n",
            m.original_lines,
            m.final_lines,
            m.path.display(),
            m.original.display()
        ));
        for s in &m.stages {
            let queries = s
                .queries
                .map_or(String::new(), |q| format!("{q} queries, "));
            out.push_str(&format!(
                "  stage {}: {queries}{} runs, {:.1} s: {}\n",
                s.name, s.runs, s.seconds, s.outcome
            ));
        }
    }
    out
}

/// The GitHub commands' lines of [`render`]: planned, or run with how they went.
fn github_lines(r: &Report) -> String {
    let mut out = String::new();
    if r.applied.is_empty() {
        if r.plan.is_empty() {
            out.push_str("\nno GitHub changes\n");
        } else {
            out.push_str("\nGitHub commands (dry run; --apply runs them):\n");
            for p in &r.plan {
                out.push_str(&format!("  {}\n", shell_line(&p.argv)));
            }
        }
    } else {
        out.push_str("\nGitHub commands run:\n");
        for a in &r.applied {
            out.push_str(&format!(
                "  [{}] {} — {}\n",
                if a.ok { "ok" } else { "failed" },
                shell_line(&a.argv),
                a.note
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use scrub_reducers::PythonVersion;

    use super::*;
    use crate::engine::ladder::{State, verdict};
    use crate::issue::{minimize::Minimized, reproduce};

    #[test]
    fn the_issue_comment_says_nothing_of_a_rung_that_was_not_tried() {
        let original = "import torch\nx = torch.randn(64)\nf = torch.compile(g, backend=\"aot_eager\")\nf(x)\n";
        let result = "import torch\nimport argparse\na = argparse\nf = torch.compile(g, backend=a)\nf(torch.randn(4))\n";
        let ladder = verdict(
            original,
            result,
            PythonVersion::PY311,
            &mut |_: &[String]| -> Option<Vec<bool>> { panic!("nothing should run") },
        );
        let states: Vec<(&str, State)> =
            ladder.iter().map(|r| (r.rung.as_str(), r.state)).collect();
        assert_eq!(
            states,
            [("small_dims", State::Held), ("eager", State::NotTried)]
        );
        let minimized = Minimized {
            original: "o.py".into(),
            path: "m.py".into(),
            original_lines: 4,
            final_lines: 5,
            changed: true,
            signature: "RuntimeError".into(),
            signature_names: vec!["with: Module 'M' has no attribute 'blocks':".into()],
            oracle_calls: 1,
            verified: true,
            unguarded: None,
            ladder,
            stages: Vec::new(),
            text: result.into(),
        };
        let outcome = reproduce::Reproduction {
            result: "same-error",
            detail: String::new(),
            reproduces: true,
            ratio: "2/2".into(),
            runs: 2,
            seeded: false,
            seconds: 1.0,
            signature: None,
            derived: false,
            stderr_tail: String::new(),
            stdout_tail: String::new(),
        };
        let versions = reproduce::Versions {
            python: "3.11.0".into(),
            torch: Some("2.15.0".into()),
            interpreter: "python3".into(),
        };
        let comment = comment("", &outcome, &versions, None, Some(&minimized), None, true);
        assert!(
            comment.contains("It fails with `RuntimeError`, and keeps what names that failure:\n- with: `Module 'M' has no attribute 'blocks':`\n"),
            "{comment}"
        );
        let needs = comment.split("What the failure needs:").nth(1).unwrap();
        assert!(
            needs.contains("- still fails with sizes of 8 or less"),
            "{comment}"
        );
        assert!(!needs.contains("backend"), "{comment}");
        assert!(!needs.contains("compil"), "{comment}");
        assert!(!comment.contains("not tried"), "{comment}");
    }
}
