//! Step 10: the report — the comment a maintainer would post, and everything behind it as
//! JSON (`--json`) or text.

use serde::Serialize;

use super::bisect::Bisection;
use super::github::{Applied, Planned, shell_line};
use super::machine::Lack;
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
    /// How the repro ran as the issue gives it.
    pub outcome: Option<Reproduction>,
    /// What this machine lacked in that run (a GPU, a file, …): never the reported bug.
    pub lacking: Option<Lack>,
    /// How the repro ran moved to the CPU, when this machine has no GPU.
    pub cpu_outcome: Option<Reproduction>,
    /// Why a repro that needs the GPU this machine lacks was not moved to the CPU (the report
    /// is about CUDA itself, or the rewrite could not reach its CUDA).
    pub not_moved: Option<String>,
    pub versions: Option<Versions>,
    pub bisect: Option<Bisection>,
    pub minimized: Option<Minimized>,
    pub hint: Option<String>,
    pub comment: Option<String>,
    /// Why the comment is not planned for posting (it claims no result), when it is not.
    pub comment_not_posted: Option<String>,
    pub planned_commands: Vec<Vec<String>>,
    #[serde(skip)]
    pub plan: Vec<Planned>,
    pub applied: Vec<Applied>,
    pub notes: Vec<String>,
}

/// What a comment reports on: the run it describes, on which versions, whether the thread
/// shows an error message to match it with, and whether the repro ran moved to the CPU.
pub struct Seen<'a> {
    pub outcome: &'a Reproduction,
    pub versions: &'a Versions,
    /// The thread shows an error scrub matched the run against (a traceback, an abort);
    /// with prose alone, a failing run may be another failure than the reporter's.
    pub thread_showed_error: bool,
    /// The run is of the repro moved to the CPU, because this machine has no GPU.
    pub on_cpu: bool,
}

impl Seen<'_> {
    /// `PyTorch 2.15.0`, or `Python 3.11.9` for a repro without torch.
    fn on(&self) -> String {
        match &self.versions.torch {
            Some(torch) => format!("PyTorch {torch}"),
            None => format!("Python {}", self.versions.python),
        }
    }
}

/// The failure's lines as the run printed them, fenced; `None` when it printed none.
fn quoted(lines: &[String]) -> Option<String> {
    (!lines.is_empty()).then(|| format!("\n```\n{}\n```\n", lines.join("\n")))
}

/// The comment's first paragraph: what the run showed, and only that. "Still reproduces"
/// only when the run failed with the error the thread shows; with no error in the thread,
/// what the run showed and a question to the reporter.
fn opening(seen: &Seen) -> String {
    let o = seen.outcome;
    let (place, cuda) = if seen.on_cpu {
        (
            " on the CPU",
            "; not run on CUDA (this machine has no GPU, so the repro ran with its CUDA device moved to the CPU)",
        )
    } else {
        ("", "")
    };
    let on = if seen.on_cpu {
        format!("{place} with {}", seen.on())
    } else {
        format!(" on {}", seen.on())
    };
    let ratio = if o.runs > 2 {
        format!(" ({} runs)", o.ratio)
    } else {
        String::new()
    };
    let failed = |o: &Reproduction| match quoted(&o.failure) {
        Some(q) => format!("fails with:\n{q}"),
        None => format!("ends here: {}.\n", o.detail),
    };
    match (o.reproduces, o.result) {
        (true, "same-error") => format!("This issue still reproduces{on}{ratio}{cuda}.\n"),
        (true, _) => format!(
            "Running the repro here{on}{ratio}{cuda}, it {}\nThe thread does not show the error message, so this run cannot be matched with your failure: is this the error you see? If it is not, please add the full traceback.\n",
            failed(o)
        ),
        (false, "no-error") => {
            format!("This issue no longer reproduces{on}{cuda}: the repro runs to completion.\n")
        }
        (false, "different-error") => format!(
            "The repro fails differently{on}{cuda} than the issue reports: it now {}\nThat is not the error the issue shows (and it may stop the repro before the reported one).\n",
            failed(o)
        ),
        (false, _) => format!(
            "The repro does not fail as the issue reports{on}{cuda}: it ends with {}.\n",
            o.detail
        ),
    }
}

/// The comment, per the recipe: what the run showed (still / no longer reproduces on
/// VERSION only when the thread shows the error to compare with), the fixing PR when found,
/// the minimized repro only when it changed with the lines it fails with, the necessary
/// conditions only when the issue does not state them, and a short attribution line.
pub fn comment(
    issue_text: &str,
    seen: &Seen,
    bisect: Option<&Bisection>,
    minimized: Option<&Minimized>,
    hint: Option<&str>,
) -> String {
    let on = seen.on();
    let mut out = opening(seen);
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
        out.push_str(&minimized_section(issue_text, m));
    }
    if let Some(h) = hint {
        out.push_str(&format!("\nNote: {h}.\n"));
    }
    out.push_str(&attribution());
    out
}

/// The minimized repro, the lines it fails with as it prints them (the signature's abstraction
/// stays in `--json` and the run log), and what the failure needs that the issue does not say.
fn minimized_section(issue_text: &str, m: &Minimized) -> String {
    let mut out = format!(
        "\nMinimized repro ({} → {} lines):\n\n```python\n{}{}```\n",
        m.original_lines,
        m.final_lines,
        m.text,
        if m.text.ends_with('\n') { "" } else { "\n" }
    );
    if let Some(q) = quoted(&m.failure) {
        out.push_str(&format!("\nIt fails with:\n{q}"));
    }
    if let Some(how) = m
        .fails_without_suspect
        .as_ref()
        .filter(|_| m.unguarded.is_none())
    {
        out.push_str(&format!(
            "\nWith its suspect replaced the original fails too ({how}): the failure may be the script's own mistake rather than a bug there.\n"
        ));
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
    out
}

fn attribution() -> String {
    format!(
        "\n<sub>Checked with scrub {}.</sub>\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The comment for a repro this machine could not run to a result for want of `lack`: what
/// was lacking, the lines the run printed, what the repro moved to the CPU did (`cpu`), and
/// what running it needs. It claims nothing about the issue.
pub fn not_run_comment(
    lack: Lack,
    seen: &Seen,
    cpu: Option<&Reproduction>,
    not_moved: Option<&str>,
) -> String {
    let o = seen.outcome;
    let mut out = format!(
        "Not run to a result here: {}. With {} the repro ends with{}",
        lack.says(),
        seen.on(),
        match quoted(&o.failure) {
            Some(q) => format!(":\n{q}"),
            None => format!(" {}.\n", o.detail),
        }
    );
    if let Some(c) = cpu {
        let ran = match (c.result, c.lacking) {
            ("no-error", _) => {
                "runs to completion: the reported failure did not show there".to_string()
            }
            (_, Some(also)) => format!(
                "ends with `{}`: it could not run there either ({})",
                c.detail,
                also.says()
            ),
            _ => format!(
                "ends with `{}`, which is not the error the issue shows",
                c.detail
            ),
        };
        out.push_str(&format!(
            "\nMoved to the CPU (its CUDA device replaced by `cpu`), the repro {ran}. It was not run on CUDA.\n"
        ));
    }
    if let (None, Some(why)) = (cpu, not_moved) {
        out.push_str(&format!("\nIt was not moved to the CPU: {why}.\n"));
    }
    out.push_str(&format!(
        "\nThis is a limit of this machine, not a result about the issue: nothing here says whether the bug is still there. Running it needs {}.\n",
        lack.needs()
    ));
    out.push_str(&attribution());
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
    out.push_str(&attribution());
    out
}

/// The outcome in a few words, for a table: what the run gave, what this machine lacked,
/// or what the repro moved to the CPU gave; `not run` when nothing ran.
pub fn outcome_words(r: &Report) -> String {
    let Some(o) = &r.outcome else {
        return "not run".into();
    };
    match (&r.cpu_outcome, o.lacking) {
        (Some(c), _) if c.reproduces => format!("{} on the CPU (no GPU here)", c.result),
        (_, Some(lack)) => format!(
            "environment: {}",
            serde_json::to_value(lack)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        ),
        _ => o.result.to_string(),
    }
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
    if let Some(lack) = r.lacking {
        out.push_str(&format!(
            "lacking: {} (not the reported bug; it needs {})\n",
            lack.says(),
            lack.needs()
        ));
    }
    if let Some(c) = &r.cpu_outcome {
        out.push_str(&format!(
            "moved to the CPU: {} ({}), {} runs agreeing {}\n",
            c.result, c.detail, c.runs, c.ratio
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
            failure: vec![
                "AttributeError: Module 'M' has no attribute 'blocks':".into(),
                "  while tracing line 4".into(),
            ],
            unguarded: None,
            fails_without_suspect: None,
            ladder,
            stages: Vec::new(),
            text: result.into(),
        };
        let outcome = reproduce::Reproduction {
            result: "same-error",
            detail: String::new(),
            reproduces: true,
            lacking: None,
            failure: Vec::new(),
            ratio: "2/2".into(),
            runs: 2,
            seeded: false,
            seconds: 1.0,
            signature: None,
            derived: false,
            stderr_tail: String::new(),
            stdout_tail: String::new(),
            first_runs: Default::default(),
        };
        let versions = reproduce::Versions {
            python: "3.11.0".into(),
            torch: Some("2.15.0".into()),
            interpreter: "python3".into(),
        };
        let seen = Seen {
            outcome: &outcome,
            versions: &versions,
            thread_showed_error: true,
            on_cpu: false,
        };
        let comment = comment("", &seen, None, Some(&minimized), None);
        assert!(
            comment.contains("It fails with:\n\n```\nAttributeError: Module 'M' has no attribute 'blocks':\n  while tracing line 4\n```\n"),
            "the lines as the run printed them: {comment}"
        );
        assert!(!comment.contains("with: `"), "no abstraction: {comment}");
        let needs = comment.split("What the failure needs:").nth(1).unwrap();
        assert!(
            needs.contains("- still fails with sizes of 8 or less"),
            "{comment}"
        );
        assert!(!needs.contains("backend"), "{comment}");
        assert!(!needs.contains("compil"), "{comment}");
        assert!(!comment.contains("not tried"), "{comment}");
    }

    fn run(result: &'static str, reproduces: bool, lacking: Option<Lack>) -> Reproduction {
        Reproduction {
            result,
            detail: "NotImplementedError: Could not run 'aten::add_' with arguments from the 'SparseCPU' backend.".into(),
            reproduces,
            lacking,
            failure: vec![
                "NotImplementedError: Could not run 'aten::add_' with arguments from the 'SparseCPU' backend.".into(),
            ],
            ratio: "2/2".into(),
            runs: 2,
            seeded: false,
            seconds: 1.0,
            signature: None,
            derived: false,
            stderr_tail: String::new(),
            stdout_tail: String::new(),
            first_runs: Default::default(),
        }
    }

    fn versions() -> Versions {
        Versions {
            python: "3.11.9".into(),
            torch: Some("2.15.0".into()),
            interpreter: "python".into(),
        }
    }

    #[test]
    fn a_failure_without_an_error_in_the_thread_is_shown_and_asked_about_never_still_reproduces() {
        let (outcome, versions) = (run("error", true, None), versions());
        let seen = Seen {
            outcome: &outcome,
            versions: &versions,
            thread_showed_error: false,
            on_cpu: true,
        };
        let c = comment("", &seen, None, None, None);
        assert!(
            c.starts_with("Running the repro here on the CPU with PyTorch 2.15.0; not run on CUDA"),
            "{c}"
        );
        assert!(c.contains("```\nNotImplementedError: Could not run"), "{c}");
        assert!(c.contains("is this the error you see?"), "{c}");
        assert!(!c.contains("reproduces"), "{c}");
    }

    #[test]
    fn the_same_error_on_the_cpu_still_reproduces_there_and_says_cuda_was_not_run() {
        let (mut outcome, versions) = (run("same-error", true, None), versions());
        outcome.failure.clear();
        let seen = Seen {
            outcome: &outcome,
            versions: &versions,
            thread_showed_error: true,
            on_cpu: true,
        };
        let c = comment("", &seen, None, None, None);
        assert!(
            c.starts_with(
                "This issue still reproduces on the CPU with PyTorch 2.15.0; not run on CUDA"
            ),
            "{c}"
        );
    }

    #[test]
    fn a_different_error_is_reported_as_different() {
        let (outcome, versions) = (run("different-error", false, None), versions());
        let seen = Seen {
            outcome: &outcome,
            versions: &versions,
            thread_showed_error: true,
            on_cpu: false,
        };
        let c = comment("", &seen, None, None, None);
        assert!(
            c.starts_with("The repro fails differently on PyTorch 2.15.0"),
            "{c}"
        );
        assert!(!c.contains("reproduces"), "{c}");
    }

    #[test]
    fn a_failure_of_the_machine_says_what_was_lacking_and_claims_no_result() {
        let mut outcome = run("environment", false, Some(Lack::Gpu));
        outcome.failure = vec!["RuntimeError: Found no NVIDIA driver on your system.".into()];
        let mut cpu = run("no-error", false, None);
        cpu.failure.clear();
        let versions = versions();
        let seen = Seen {
            outcome: &outcome,
            versions: &versions,
            thread_showed_error: false,
            on_cpu: false,
        };
        let c = not_run_comment(Lack::Gpu, &seen, Some(&cpu), None);
        assert!(
            c.starts_with("Not run to a result here: this machine has no GPU"),
            "{c}"
        );
        assert!(c.contains("Found no NVIDIA driver"), "{c}");
        assert!(
            c.contains("the repro runs to completion: the reported failure did not show there"),
            "{c}"
        );
        assert!(
            c.contains("Running it needs a machine with a CUDA GPU."),
            "{c}"
        );
        assert!(!c.contains("reproduces"), "{c}");
    }

    #[test]
    fn a_table_names_what_the_machine_lacked_or_what_the_cpu_showed() {
        let mut r = Report::default();
        assert_eq!(outcome_words(&r), "not run");
        r.outcome = Some(run("environment", false, Some(Lack::Gpu)));
        assert_eq!(outcome_words(&r), "environment: gpu");
        r.cpu_outcome = Some(run("error", true, None));
        assert_eq!(outcome_words(&r), "error on the CPU (no GPU here)");
    }
}
