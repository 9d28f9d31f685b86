//! `scrub issue` end to end: the built binary on the issue fixtures, real interpreters for
//! the reproduction, the minimization and the bisection, and a stand-in `gh` on PATH (the
//! only stand-in: GitHub is out of reach) that replays the fixture and records every call.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(180);

fn fixture(name: &str) -> PathBuf {
    repo_root().join(format!("tests/fixtures/issues/{name}.json"))
}

/// A sandbox for one run: the stand-in `gh` first on PATH, its call log and subscription
/// state, and the temp root that `scrub issue` writes under.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Sandbox { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// `scrub issue ARGS` with the stand-in replaying `issue_json`.
    fn command(&self, issue_json: &Path, args: &[&str]) -> Command {
        let mut cmd = scrub();
        let gh_dir = repo_root().join("tests/fixtures/gh");
        let path = format!(
            "{}:{}",
            gh_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.arg("issue")
            .args(args)
            .env("PATH", path)
            .env("GH_STUB_LOG", self.dir.path().join("gh.log"))
            .env("GH_STUB_ISSUE", issue_json)
            .env("GH_STUB_STATE", self.dir.path().join("subscription"))
            .env("GH_STUB_COLLABORATORS", "reporter")
            .env("SCRUB_ISSUE_TMP", self.root())
            .env_remove("GH_STUB_FAIL");
        cmd
    }

    fn run(&self, issue_json: &Path, args: &[&str]) -> Output {
        run_with_limit(&mut self.command(issue_json, args), LIMIT)
    }

    /// Every `gh` call, as argv lists.
    fn calls(&self) -> Vec<Vec<String>> {
        let Ok(log) = std::fs::read_to_string(self.dir.path().join("gh.log")) else {
            return Vec::new();
        };
        log.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The calls, each shortened to a few words that name it.
    fn call_names(&self) -> Vec<String> {
        self.calls().iter().map(|c| name_call(c)).collect()
    }
}

/// `graphql query`, `graphql mutation state=X`, `issue edit --add-label a`, `issue comment`…
fn name_call(argv: &[String]) -> String {
    match argv.first().map(String::as_str) {
        Some("api") if argv[1] == "graphql" => {
            let query = argv.iter().find(|a| a.starts_with("query=")).unwrap();
            if query.starts_with("query=mutation") {
                let state = argv.iter().find(|a| a.starts_with("state=")).unwrap();
                format!("graphql mutation {state}")
            } else {
                "graphql query".into()
            }
        }
        Some("api") => format!("api {}", argv[1]),
        Some("issue") => {
            let mut words = vec![argv[0].clone(), argv[1].clone()];
            words.extend(
                argv[3..]
                    .iter()
                    .filter(|a| *a != "--repo" && *a != "acme/widgets")
                    .filter(|a| !a.starts_with('/'))
                    .cloned(),
            );
            words.join(" ")
        }
        _ => argv.join(" "),
    }
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let sandbox = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"number\": 5, \"title\": ").unwrap();
    let no_number = dir.path().join("nonumber.json");
    std::fs::write(&no_number, "{\"title\": \"x\"}").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--from-json".into(), "/nonexistent/issue.json".into()],
            "no such file",
        ),
        (
            vec!["--from-json".into(), broken.display().to_string()],
            "is not the JSON of an issue",
        ),
        (
            vec!["--from-json".into(), no_number.display().to_string()],
            "has no issue \"number\"",
        ),
        (vec![], "give an issue number"),
        (
            vec![
                "12".into(),
                "--from-json".into(),
                fixture("rfc_feature").display().to_string(),
            ],
            "not both",
        ),
        (
            vec![
                "--from-json".into(),
                fixture("rfc_feature").display().to_string(),
                "--env".into(),
                "3.9".into(),
                "--env".into(),
                "other".into(),
            ],
            "name one environment",
        ),
        (
            vec!["12".into(), "--repo".into(), "justaname".into()],
            "is not OWNER/NAME",
        ),
        (
            vec![
                "--from-json".into(),
                fixture("rfc_feature").display().to_string(),
                "--env".into(),
                "3.9=/nonexistent/bin/python".into(),
            ],
            "no such interpreter",
        ),
        (
            vec![
                "--from-json".into(),
                fixture("rfc_feature").display().to_string(),
                "--python".into(),
                "/nonexistent/bin/python".into(),
            ],
            "not found",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = sandbox.run(&fixture("rfc_feature"), &args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("scrub: ") && err.contains(needle),
            "{args:?}: {err}"
        );
    }
    assert!(sandbox.calls().is_empty(), "bad input reaches no gh");
}

#[test]
fn every_fixture_gets_its_category_and_repro_at_triage() {
    let sandbox = Sandbox::new();
    let cases = [
        ("scheduler_resume", "actionable", Some("body")),
        ("isoformat_zulu", "actionable", Some("body")),
        ("rfc_feature", "feature", None),
        ("tracker_checklist", "tracker", None),
        ("closed_completed", "closed", Some("body")),
        ("duplicate_marked", "duplicate", Some("body")),
        ("screenshot_only", "screenshot-only", None),
        ("fence_counter_example", "actionable", Some("body")),
        ("commenter_shorter", "actionable", Some("comment:1")),
        ("old_underspecified", "needs-reproduction", None),
        ("multi_gpu", "hardware", Some("body")),
        ("stale_xfail", "actionable", Some("body")),
        // Evidence in every form makes a repro actionable.
        ("jupyter_traceback", "actionable", Some("body")),
        ("cpp_abort", "actionable", Some("body")),
        ("fpe_crash", "actionable", Some("body")),
        ("sanitizer_report", "actionable", Some("body")),
        ("marked_in_script", "actionable", Some("body")),
        ("allclose_mismatch", "actionable", Some("body")),
        ("prose_compile_failure", "actionable", Some("body")),
        ("prose_hang", "actionable", Some("body")),
        ("python_c_transcript", "actionable", Some("body")),
        // Trackers, hardware, duplicates and requests from the text.
        ("umbrella_tracker", "tracker", None),
        ("linked_issues_tracker", "tracker", None),
        ("mps_prose", "hardware", None),
        ("xla_title", "hardware", None),
        ("gpus_in_title", "hardware", None),
        ("closed_in_favor", "duplicate", Some("body")),
        ("feature_prose", "feature", None),
        ("docstring_task", "better-engineering", None),
        // A debugger session a maintainer asks for is not a repro; nor is a fragment.
        ("gdb_instructions", "needs-reproduction", None),
        ("fragment_only", "needs-reproduction", None),
        ("null_fields", "needs-reproduction", None),
        // No failure the thread shows: at triage, nothing runs, so nothing is decided.
        ("silent_failure", "needs-reproduction", Some("body")),
        ("silent_success", "needs-reproduction", Some("body")),
    ];
    for (name, category, source) in cases {
        let out = sandbox.run(
            &fixture(name),
            &[
                "--from-json",
                fixture(name).to_str().unwrap(),
                "--stop-after",
                "triage",
                "--json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let report = json_of(&out);
        assert_eq!(report["category"], category, "{name}");
        assert_eq!(report["repro_source"].as_str(), source, "{name}");
        for key in [
            "risks",
            "labels_to_add",
            "labels_to_remove",
            "planned_commands",
        ] {
            assert!(report[key].is_array(), "{name}: {key}");
        }
        assert!(
            report["outcome"].is_null(),
            "{name}: nothing runs at triage"
        );
    }
    assert!(
        !sandbox.root().join("scrub-41017").exists(),
        "triage writes no run directory"
    );
}

/// `scrub issue FIXTURE --stop-after triage --json`.
fn triage_report(sandbox: &Sandbox, name: &str) -> Value {
    let path = fixture(name);
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "triage",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    json_of(&out)
}

#[test]
fn every_form_of_evidence_is_read_with_the_signature_it_gives() {
    let sandbox = Sandbox::new();
    let cases = [
        (
            "jupyter_traceback",
            "jupyter",
            "exception",
            Some("RuntimeError: stack expects each tensor to be equal size, but got"),
        ),
        ("cpp_abort", "abort", "signal", Some("signal:SIGABRT")),
        ("fpe_crash", "fatal-signal", "signal", Some("signal:SIGFPE")),
        ("sanitizer_report", "sanitizer", "sanitizer", None),
        (
            "marked_in_script",
            "marked-in-script",
            "exception",
            Some("json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes"),
        ),
        ("allclose_mismatch", "comparison", "mismatch", None),
        ("prose_compile_failure", "prose", "described", None),
        ("prose_hang", "prose", "hang", None),
        (
            "python_c_transcript",
            "fatal-signal",
            "signal",
            Some("signal:SIGSEGV"),
        ),
    ];
    for (name, form, kind, signature) in cases {
        let report = triage_report(&sandbox, name);
        let evidence = &report["evidence"];
        assert_eq!(evidence["form"], form, "{name}: {evidence}");
        assert_eq!(evidence["kind"], kind, "{name}: {evidence}");
        assert_eq!(report["expected_signature"].as_str(), signature, "{name}");
        assert!(
            report["reason"].as_str().unwrap().contains("the failure:"),
            "{name}: {}",
            report["reason"]
        );
    }
    let report = triage_report(&sandbox, "cpp_abort");
    assert!(
        report["evidence"]["text"]
            .as_str()
            .unwrap()
            .contains("what():  invalid device pointer"),
        "{report}"
    );
    let report = triage_report(&sandbox, "closed_in_favor");
    assert_eq!(report["duplicate_of"], 41500);
    assert!(
        report["planned_commands"].as_array().unwrap().is_empty(),
        "a closed duplicate is not touched"
    );
    let report = triage_report(&sandbox, "python_c_transcript");
    let kinds: Vec<&str> = report["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["shell", "code"], "the python -c code is the repro");
}

#[test]
fn null_and_missing_fields_are_tolerated_and_a_truncated_file_is_refused() {
    let sandbox = Sandbox::new();
    let report = triage_report(&sandbox, "null_fields");
    assert_eq!(report["category"], "needs-reproduction");
    assert_eq!(
        report["labels_to_add"],
        serde_json::json!(["needs reproduction"])
    );
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("null_fields")).unwrap();
    let truncated = dir.path().join("truncated.json");
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let out = sandbox.run(
        &truncated,
        &["--from-json", truncated.to_str().unwrap(), "--json"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("scrub: ") && err.contains("is not the JSON of an issue"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(listing(&sandbox.root()).is_empty(), "nothing is written");
    assert!(sandbox.calls().is_empty());
}

#[test]
fn a_script_that_fails_although_the_thread_shows_no_error_is_actionable_with_what_was_observed() {
    let sandbox = Sandbox::new();
    let path = fixture("silent_failure");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "actionable", "{report}");
    assert_eq!(report["expected_signature"], Value::Null);
    assert_eq!(report["outcome"]["result"], "error");
    let observed = report["outcome"]["signature"].as_str().unwrap();
    assert!(
        observed.starts_with("TypeError: '<' not supported between instances of"),
        "{observed}"
    );
    assert!(
        report["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("the thread does not show the error; scrub observed TypeError")),
        "{report}"
    );
    let minimized = std::fs::read_to_string(sandbox.root().join("repro_41720.py")).unwrap();
    assert!(minimized.contains(".sort("), "{minimized}");
    let comment = report["comment"].as_str().unwrap();
    assert!(
        comment.starts_with("Running the repro here on Python 3."),
        "{comment}"
    );
    assert!(
        comment.contains("The thread does not show the error message"),
        "{comment}"
    );
    assert!(comment.contains(&minimized), "{comment}");
    assert!(report["labels_to_add"].as_array().unwrap().is_empty());
}

#[test]
fn a_script_that_exits_0_without_an_error_in_the_thread_needs_reproduction_with_the_run_in_the_comment()
 {
    let sandbox = Sandbox::new();
    let path = fixture("silent_success");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "needs-reproduction", "{report}");
    assert_eq!(report["outcome"]["result"], "no-error");
    assert_eq!(
        report["labels_to_add"],
        serde_json::json!(["needs reproduction"])
    );
    assert!(report["minimized"].is_null() && report["bisect"].is_null());
    let comment = report["comment"].as_str().unwrap();
    assert!(
        comment.starts_with(
            "The repro in this issue runs to completion here without an error on Python 3."
        ),
        "{comment}"
    );
    assert!(comment.contains("[0, 2, 2, 4]"), "the output: {comment}");
    assert!(
        comment.contains("python repro.py"),
        "what was run: {comment}"
    );
    let planned: Vec<String> = report["planned_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let argv: Vec<String> = serde_json::from_value(c.clone()).unwrap();
            name_call(&argv[1..])
        })
        .collect();
    assert_eq!(
        planned,
        [
            "graphql query",
            "issue edit --add-label needs reproduction",
            "issue comment --body-file",
            "graphql mutation state=<saved state>",
        ],
        "commented and labelled, never closed"
    );
}

#[test]
fn a_crash_shown_in_a_transcript_reproduces_with_its_signal() {
    let sandbox = Sandbox::new();
    let path = fixture("python_c_transcript");
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["outcome"]["result"], "same-error", "{report}");
    assert_eq!(report["outcome"]["signature"], "signal:SIGSEGV");
}

#[test]
fn a_hang_the_issue_describes_is_reproduced_by_a_timeout() {
    let sandbox = Sandbox::new();
    let path = fixture("prose_hang");
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--timeout",
            "2",
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["evidence"]["kind"], "hang");
    assert_eq!(report["outcome"]["result"], "timeout");
    assert_eq!(report["outcome"]["reproduces"], true, "{report}");
    let comment = report["comment"].as_str().unwrap();
    assert!(
        comment.starts_with("Running the repro here on Python 3.")
            && comment.contains("it ends here: timed out after 2 s."),
        "what the run showed, not \"still reproduces\" for a hang told in words: {comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
}

/// The torch venv's python, or `None` (skipped) outside `scripts/test`.
fn torch() -> Option<PathBuf> {
    common::torch_python()
}

#[test]
fn with_torch_a_failing_script_without_an_error_shown_is_actionable_and_minimized() {
    let Some(python) = torch() else { return };
    let sandbox = Sandbox::new();
    let path = fixture("torch_silent_failure");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(600),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "actionable", "{report}");
    assert_eq!(report["outcome"]["result"], "error");
    let observed = report["outcome"]["signature"].as_str().unwrap();
    assert!(
        observed.starts_with("RuntimeError: view size is not compatible"),
        "{observed}"
    );
    assert!(
        report["versions"]["torch"]
            .as_str()
            .unwrap()
            .starts_with("2.")
    );
    let minimized = &report["minimized"];
    assert!(minimized["changed"].as_bool().unwrap(), "{minimized}");
    assert!(
        minimized["final_lines"].as_u64().unwrap() < minimized["original_lines"].as_u64().unwrap(),
        "{minimized}"
    );
    let text = std::fs::read_to_string(sandbox.root().join("repro_41722.py")).unwrap();
    assert!(text.contains(".view("), "{text}");
    assert!(
        report["comment"]
            .as_str()
            .unwrap()
            .contains("The thread does not show the error message")
    );
}

#[test]
fn with_torch_a_script_that_exits_0_needs_reproduction_with_the_run_in_the_comment() {
    let Some(python) = torch() else { return };
    let sandbox = Sandbox::new();
    let path = fixture("torch_silent_success");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "needs-reproduction", "{report}");
    assert_eq!(report["outcome"]["result"], "no-error");
    let comment = report["comment"].as_str().unwrap();
    assert!(comment.contains("on PyTorch 2."), "{comment}");
    assert!(comment.contains("torch.Size([0])"), "the output: {comment}");
}

#[test]
fn the_four_backtick_repro_is_chosen_over_a_later_counter_example() {
    let sandbox = Sandbox::new();
    let path = fixture("fence_counter_example");
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "triage",
            "--json",
        ],
    );
    let report = json_of(&out);
    assert!(
        report["repro_reason"]
            .as_str()
            .unwrap()
            .contains("1 later block(s) the poster says do not reproduce"),
        "{report}"
    );
    let kinds: Vec<(&str, &str)> = report["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["source"].as_str().unwrap(), b["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("body", "code"),
            ("body", "traceback"),
            ("comment:1", "code"),
            ("comment:2", "log"),
            ("comment:2", "shell"),
        ]
    );
    assert_eq!(
        report["expected_signature"],
        "ValueError: Invalid placeholder in string: line"
    );
}

#[test]
fn a_dry_run_reproduces_minimizes_and_changes_nothing() {
    let sandbox = Sandbox::new();
    let path = fixture("scheduler_resume");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    let kinds: Vec<&str> = report["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["code", "traceback", "environment"]);
    assert_eq!(report["outcome"]["result"], "same-error");
    assert_eq!(report["outcome"]["ratio"], "2/2");
    assert_eq!(report["author_collaborator"], true);
    assert!(
        report["versions"]["python"]
            .as_str()
            .unwrap()
            .starts_with("3.")
    );
    let original = sandbox.root().join("repro_41017_original.py");
    let minimized = sandbox.root().join("repro_41017.py");
    assert_eq!(report["minimized"]["path"], minimized.display().to_string());
    let original_text = std::fs::read_to_string(&original).unwrap();
    let minimized_text = std::fs::read_to_string(&minimized).unwrap();
    assert!(original_text.contains("def parse_args"));
    assert!(minimized_text.lines().count() < original_text.lines().count() / 2);
    // The failure is the script's own comparison with the `None` that `load_state_dict` put
    // there: the minimized repro is that comparison.
    assert!(minimized_text.contains(" < "), "{minimized_text}");
    let comment = report["comment"].as_str().unwrap();
    assert!(
        comment.starts_with("This issue still reproduces on Python 3."),
        "{comment}"
    );
    assert!(comment.contains(&minimized_text), "{comment}");
    assert_eq!(
        report["labels_to_remove"],
        serde_json::json!(["needs reproduction"])
    );
    let planned: Vec<String> = report["planned_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let argv: Vec<String> = serde_json::from_value(c.clone()).unwrap();
            name_call(&argv[1..])
        })
        .collect();
    assert_eq!(
        planned,
        [
            "graphql query",
            "issue edit --remove-label needs reproduction",
            "issue comment --body-file",
            "graphql mutation state=<saved state>",
        ]
    );
    let comment_file = sandbox.root().join("scrub-41017/comment.md");
    assert_eq!(std::fs::read_to_string(comment_file).unwrap(), comment);
    // The reproduce step's two fresh runs were the minimization's first two.
    let log =
        std::fs::read_to_string(sandbox.root().join("scrub-41017/scrub.out/run.log")).unwrap();
    assert!(
        log.contains("(original reproduced 2/2; 2 of its runs were made before the reduction)"),
        "{log}"
    );
    // The only call was the collaborator check: a dry run changes nothing.
    assert_eq!(
        sandbox.call_names(),
        ["api repos/acme/widgets/collaborators/reporter"]
    );
}

#[test]
fn apply_saves_the_subscription_first_and_restores_it_last() {
    let sandbox = Sandbox::new();
    let path = fixture("scheduler_resume");
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "reproduce",
            "--apply",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sandbox.call_names(),
        [
            "api repos/acme/widgets/collaborators/reporter",
            "graphql query",
            "issue edit --remove-label needs reproduction",
            "issue comment --body-file",
            "graphql query",
            "graphql mutation state=UNSUBSCRIBED",
        ]
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("restored subscription state UNSUBSCRIBED"),
        "{text}"
    );
}

#[test]
fn label_changes_for_different_labels_are_one_edit() {
    let sandbox = Sandbox::new();
    let path = fixture("duplicate_marked");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--apply"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sandbox.call_names(),
        [
            "graphql query",
            "issue edit --add-label duplicate --remove-label needs reproduction",
            "graphql query",
            "graphql mutation state=UNSUBSCRIBED",
        ]
    );
}

#[test]
fn an_unchanged_non_actionable_issue_refreshes_triaged_in_two_steps() {
    let sandbox = Sandbox::new();
    let path = fixture("tracker_checklist");
    let out = sandbox.run(
        &path,
        &["--from-json", path.to_str().unwrap(), "--apply", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out)["refresh_triaged"], true);
    assert_eq!(
        sandbox.call_names(),
        [
            "graphql query",
            "issue edit --remove-label triaged",
            "issue edit --add-label triaged",
            "graphql query",
            "graphql mutation state=UNSUBSCRIBED",
        ]
    );
}

#[test]
fn an_already_subscribed_viewer_is_left_subscribed() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.dir.path().join("subscription"), "SUBSCRIBED").unwrap();
    let path = fixture("rfc_feature");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--apply"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sandbox.call_names(),
        [
            "graphql query",
            "issue edit --add-label feature",
            "graphql query"
        ]
    );
}

#[test]
fn closing_a_fixed_issue_skips_the_restore() {
    let sandbox = Sandbox::new();
    let path = fixture("isqrt_fixed");
    let out = sandbox.run(
        &path,
        &["--from-json", path.to_str().unwrap(), "--apply", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["outcome"]["result"], "no-error");
    assert!(
        report["comment"]
            .as_str()
            .unwrap()
            .starts_with("This issue no longer reproduces on Python 3.")
    );
    assert_eq!(
        sandbox.call_names(),
        [
            "api repos/acme/widgets/collaborators/reporter",
            "graphql query",
            "issue comment --body-file",
            "issue close --reason completed",
        ]
    );
}

#[test]
fn a_failed_change_stops_the_rest_and_exits_1() {
    let sandbox = Sandbox::new();
    let path = fixture("duplicate_marked");
    let out = run_with_limit(
        sandbox
            .command(&path, &["--from-json", path.to_str().unwrap(), "--apply"])
            .env("GH_STUB_FAIL", "--add-label"),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let names = sandbox.call_names();
    assert_eq!(names[0], "graphql query");
    assert!(names[1].starts_with("issue edit"));
    assert!(!names.iter().any(|n| n.starts_with("issue comment")));
}

#[test]
fn a_locked_issue_is_reported_and_gets_no_changes() {
    let sandbox = Sandbox::new();
    let path = fixture("locked_actionable");
    // Fetched through gh, the locked state coming from `gh api`.
    let out = sandbox.run(
        &path,
        &[
            "40901",
            "--repo",
            "acme/widgets",
            "--apply",
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["locked"], true);
    assert_eq!(report["outcome"]["result"], "same-error");
    assert_eq!(report["planned_commands"], serde_json::json!([]));
    let calls = sandbox.calls();
    assert_eq!(
        calls[0][..5],
        ["issue", "view", "40901", "--repo", "acme/widgets"]
    );
    assert_eq!(
        sandbox.call_names()[1..],
        [
            "api repos/acme/widgets/issues/40901",
            "api repos/acme/widgets/collaborators/reporter",
        ]
    );
}

#[test]
fn a_closed_issue_is_not_run_and_not_touched() {
    let sandbox = Sandbox::new();
    let path = fixture("closed_completed");
    let out = sandbox.run(
        &path,
        &["--from-json", path.to_str().unwrap(), "--apply", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "closed");
    assert!(report["outcome"].is_null());
    assert!(sandbox.calls().is_empty());
}

#[test]
fn risks_stop_the_run_with_their_lines() {
    let sandbox = Sandbox::new();
    let path = fixture("risky_repro");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    let risks: Vec<(String, u64)> = report["risks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(String, u64)> = [
        ("network", 3),
        ("env-change", 5),
        ("network", 6),
        ("package-install", 7),
        ("shell", 8),
        ("dynamic-code", 9),
    ]
    .iter()
    .map(|(k, l)| (k.to_string(), *l))
    .collect();
    assert_eq!(risks, expected);
    assert_eq!(report["stopped"]["step"], "safety");
    assert!(report["outcome"].is_null());
    assert!(
        sandbox.calls().is_empty(),
        "nothing is asked of GitHub before the risks are cleared"
    );
}

#[test]
fn an_author_who_is_not_a_collaborator_needs_trust_and_missing_modules_stop_the_run() {
    let sandbox = Sandbox::new();
    let path = fixture("missing_module");
    let out = run_with_limit(
        sandbox
            .command(&path, &["--from-json", path.to_str().unwrap(), "--json"])
            .env("GH_STUB_COLLABORATORS", "someone-else"),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    assert_eq!(report["stopped"]["step"], "trust");
    assert_eq!(report["author_collaborator"], false);

    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--trust-author",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    assert_eq!(report["stopped"]["step"], "check");
    assert_eq!(
        report["missing_modules"],
        serde_json::json!(["nonexistent_tablefmt_pkg"])
    );
    assert!(report["outcome"].is_null());
}

#[test]
fn a_recent_confirmation_stops_unless_reverify() {
    let sandbox = Sandbox::new();
    let mut issue: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("recently_confirmed")).unwrap())
            .unwrap();
    // Ten days ago, whenever the test runs.
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        / 86400
        - 10;
    issue["comments"][0]["createdAt"] = Value::String(date_of(days as i64));
    let path = sandbox.dir.path().join("recent.json");
    std::fs::write(&path, issue.to_string()).unwrap();
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["stopped"]["step"], "check");
    assert!(
        report["recent_confirmation"]
            .as_str()
            .unwrap()
            .contains("10 days ago")
    );

    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--reverify",
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out)["outcome"]["result"], "same-error");
}

/// `YYYY-MM-DDT00:00:00Z` of a day counted from the epoch (civil_from_days).
fn date_of(days: i64) -> String {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T00:00:00Z")
}

#[test]
fn a_passing_expected_failure_gets_the_stale_marker_hint() {
    let sandbox = Sandbox::new();
    let path = fixture("stale_xfail");
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(
        report["outcome"]["detail"],
        "unittest reported an unexpected success"
    );
    assert!(
        report["hint"]
            .as_str()
            .unwrap()
            .contains("`test_cumsum_empty` passes now"),
        "{report}"
    );
}

/// Python interpreters under /root/.pyenv/versions (3.9 and newer), as (minor, path).
fn pyenv_pythons() -> Vec<(u32, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/root/.pyenv/versions") else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut parts = name.split('.');
        let (Some("3"), Some(minor)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(minor) = minor.parse::<u32>() else {
            continue;
        };
        let python = entry.path().join("bin/python");
        if minor >= 9 && python.exists() && !out.iter().any(|(m, _)| *m == minor) {
            out.push((minor, python));
        }
    }
    out.sort();
    out
}

#[test]
fn bisection_over_real_interpreters_finds_the_first_fixed_version() {
    // `datetime.fromisoformat` accepts a trailing `Z` from Python 3.11 on.
    let pythons = pyenv_pythons();
    let old = pythons.iter().filter(|(m, _)| *m < 11).count();
    let new = pythons.iter().filter(|(m, _)| *m >= 11).count();
    if old == 0 || new < 2 {
        if std::env::var_os("CI").is_some() {
            panic!("CI needs Python 3.9/3.10 and two of 3.11+ under /root/.pyenv/versions");
        }
        eprintln!(
            "skipped: fewer than 2 interpreters on each side of 3.11 under /root/.pyenv/versions"
        );
        return;
    }
    let (_, target) = pythons.last().unwrap();
    let mut args: Vec<String> = vec![
        "--from-json".into(),
        fixture("isoformat_zulu").display().to_string(),
        "--python".into(),
        target.display().to_string(),
        "--json".into(),
    ];
    for (minor, python) in &pythons[..pythons.len() - 1] {
        args.push("--env".into());
        args.push(format!("3.{minor}={}", python.display()));
    }
    // A source checkout with tags for the versions, and one fix between them.
    let src = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .arg("-C")
            .arg(src.path())
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(status.status.success(), "git {args:?}: {}", stderr(&status));
    };
    let first_fixed = pythons.iter().find(|(m, _)| *m >= 11).unwrap().0;
    let last_broken = pythons.iter().rev().find(|(m, _)| *m < 11).unwrap().0;
    git(&["init", "-q"]);
    std::fs::create_dir(src.path().join("Lib")).unwrap();
    std::fs::write(src.path().join("Lib/datetime.py"), "# v1\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "Initial"]);
    git(&["tag", &format!("v3.{last_broken}")]);
    std::fs::write(src.path().join("Lib/datetime.py"), "# v2\n").unwrap();
    git(&[
        "commit",
        "-qam",
        "Accept a trailing Z in datetime.fromisoformat (#80010)",
    ]);
    std::fs::write(src.path().join("README"), "docs\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "Docs: typo (#80011)"]);
    git(&["tag", &format!("v3.{first_fixed}")]);
    args.push("--source-repo".into());
    args.push(src.path().display().to_string());

    let sandbox = Sandbox::new();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sandbox.run(&fixture("isoformat_zulu"), &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["outcome"]["result"], "no-error");
    let bisect = &report["bisect"];
    assert_eq!(
        bisect["first_fixed"],
        format!("3.{first_fixed}"),
        "{bisect}"
    );
    assert_eq!(
        bisect["last_broken"],
        format!("3.{last_broken}"),
        "{bisect}"
    );
    let probes = bisect["probes"].as_array().unwrap();
    assert!(probes.len() < pythons.len());
    // Every probe agrees with the interpreter's version.
    for p in probes {
        let minor: u32 = p["version"].as_str().unwrap()[2..].parse().unwrap();
        assert_eq!(p["reproduces"], minor < 11, "{p}");
    }
    let commits = bisect["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{bisect}");
    assert_eq!(commits[0]["pr"], "#80010");
    assert_eq!(commits[0]["why"], "mentions isoformat");
    let comment = report["comment"].as_str().unwrap();
    assert!(
        comment.contains(&format!(
            "still fails on 3.{last_broken} and is fixed from 3.{first_fixed}"
        )),
        "{comment}"
    );
}

#[test]
fn runs_that_disagree_are_repeated_with_a_fixed_seed_and_the_ratio_reported() {
    // Fails on every other run: a counter kept under /tmp between runs.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let counter = format!("/tmp/scrub-test-lease-{}-{nanos}.count", std::process::id());
    let repro = format!(
        "import os\n\nPATH = \"{counter}\"\nn = int(open(PATH).read()) if os.path.exists(PATH) else 0\nwith open(\"{counter}\", \"w\") as f:\n    f.write(str(n + 1))\nif n % 2 == 0:\n    raise RuntimeError(\"lease expired before renewal\")\n"
    );
    let issue = serde_json::json!({
        "number": 42001,
        "title": "Lease renewal fails intermittently",
        "body": format!("Fails about half the time:\n\n```python\n{repro}```\n\n```\nTraceback (most recent call last):\n  File \"lease.py\", line 8, in <module>\nRuntimeError: lease expired before renewal\n```\n"),
        "state": "OPEN",
        "author": {"login": "reporter"},
        "url": "https://github.com/acme/widgets/issues/42001",
    });
    let sandbox = Sandbox::new();
    let path = sandbox.dir.path().join("flaky.json");
    std::fs::write(&path, issue.to_string()).unwrap();
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--stop-after",
            "reproduce",
            "--json",
        ],
    );
    let _ = std::fs::remove_file(&counter);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    let outcome = &report["outcome"];
    assert_eq!(outcome["result"], "same-error", "{outcome}");
    assert_eq!(outcome["ratio"], "3/5");
    assert_eq!(outcome["seeded"], true);
    assert!(
        report["comment"]
            .as_str()
            .unwrap()
            .starts_with("This issue still reproduces on Python 3.")
            && report["comment"].as_str().unwrap().contains("(3/5 runs)")
    );
}

#[test]
fn a_failed_save_is_reported_and_the_changes_go_on_without_a_restore() {
    let sandbox = Sandbox::new();
    let path = fixture("rfc_feature");
    let out = run_with_limit(
        sandbox
            .command(&path, &["--from-json", path.to_str().unwrap(), "--apply"])
            .env("GH_STUB_FAIL", "viewerSubscription"),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sandbox.call_names(),
        ["graphql query", "issue edit --add-label feature"]
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("going on without saving the subscription"),
        "{text}"
    );
}

#[test]
fn an_old_idle_underspecified_issue_is_closed_as_not_planned_only_when_confirmed() {
    let sandbox = Sandbox::new();
    let path = fixture("old_underspecified");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    let report = json_of(&out);
    assert_eq!(report["propose_close"], true);
    assert!(
        !report["planned_commands"].to_string().contains("\"close\""),
        "{report}"
    );
    let out = sandbox.run(
        &path,
        &[
            "--from-json",
            path.to_str().unwrap(),
            "--confirm-close",
            "--apply",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        sandbox.call_names(),
        [
            "graphql query",
            "issue edit --add-label needs reproduction",
            "issue close --reason not planned",
        ]
    );
}

#[test]
fn the_issue_can_come_from_stdin() {
    let sandbox = Sandbox::new();
    let path = fixture("rfc_feature");
    let out = run_with_limit(
        sandbox
            .command(&path, &["--from-json", "-", "--json"])
            .stdin(std::fs::File::open(&path).unwrap()),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out)["category"], "feature");
}

#[test]
fn a_batch_triages_every_issue_and_one_failing_does_not_stop_the_others() {
    let sandbox = Sandbox::new();
    let batch = sandbox.dir.path().join("backlog.txt");
    let first = fixture("scheduler_resume");
    std::fs::write(
        &batch,
        format!(
            "# this week's backlog\n{}\nmissing.json\n\n{}  # an RFC\n",
            first.display(),
            fixture("rfc_feature").display()
        ),
    )
    .unwrap();
    let out = sandbox.run(&first, &["--batch", batch.to_str().unwrap(), "--json"]);
    // The missing file fails its row, and so the batch, but not the issues after it.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = json_of(&out);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0]["report"]["outcome"]["result"], "same-error");
    assert!(
        rows[0]["report"]["minimized"]["final_lines"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        rows[1]["error"].as_str().unwrap().contains("missing.json"),
        "{:?}",
        rows[1]
    );
    assert_eq!(rows[2]["report"]["category"], "feature");

    // Without --json, the table lists every issue.
    let out = sandbox.run(&first, &["--batch", batch.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        table.lines().filter(|l| l.starts_with("| ")).count(),
        4,
        "{table}"
    );
    assert!(table.contains("| failed |"), "{table}");
}

#[test]
fn a_batch_file_that_lists_nonsense_is_refused_before_anything_runs() {
    let sandbox = Sandbox::new();
    let batch = sandbox.dir.path().join("backlog.txt");
    std::fs::write(&batch, "148859\nplease triage these\n").unwrap();
    let first = fixture("scheduler_resume");
    let out = sandbox.run(&first, &["--batch", batch.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("line 2"), "{err}");
    assert!(sandbox.calls().is_empty());
}

/// The report's comment, and the `gh` commands planned, each named by `name_call`.
fn comment_and_plan(report: &Value) -> (String, Vec<String>) {
    let comment = report["comment"].as_str().unwrap_or_default().to_string();
    let planned = report["planned_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let argv: Vec<String> = serde_json::from_value(c.clone()).unwrap();
            name_call(&argv[1..])
        })
        .collect();
    (comment, planned)
}

#[test]
fn a_failure_of_this_machine_is_its_own_outcome_and_its_comment_claims_no_result() {
    let sandbox = Sandbox::new();
    // (fixture, what was lacking, category, exit code, a line the run printed)
    let cases = [
        (
            "missing_data_file",
            "file",
            "needs-reproduction",
            0,
            "FileNotFoundError: [Errno 2] No such file or directory: 'measurements.csv'",
        ),
        (
            "no_network",
            "network",
            "actionable",
            1,
            "urllib.error.URLError: <urlopen error",
        ),
        (
            "missing_package",
            "package",
            "actionable",
            1,
            "ModuleNotFoundError: No module named 'framecodec_native'",
        ),
        (
            "gpu_memory",
            "gpu-memory",
            "hardware",
            0,
            "OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB",
        ),
    ];
    for (name, lack, category, code, line) in cases {
        let path = fixture(name);
        let out = sandbox.run(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--allow-risk",
                "--json",
            ],
        );
        assert_eq!(out.status.code(), Some(code), "{name}: {}", stderr(&out));
        let report = json_of(&out);
        assert_eq!(
            report["outcome"]["result"], "environment",
            "{name}: {report}"
        );
        assert_eq!(report["outcome"]["reproduces"], false, "{name}");
        assert_eq!(report["lacking"], lack, "{name}");
        assert_eq!(report["category"], category, "{name}: {report}");
        assert!(
            report["minimized"].is_null() && report["bisect"].is_null(),
            "{name}"
        );
        let (comment, planned) = comment_and_plan(&report);
        assert!(
            comment.starts_with("Not run to a result here: "),
            "{name}: {comment}"
        );
        assert!(
            comment.contains(line),
            "{name}: the line as printed: {comment}"
        );
        assert!(
            comment.contains("not a result about the issue"),
            "{name}: {comment}"
        );
        assert!(!comment.contains("reproduces"), "{name}: {comment}");
        assert!(
            !planned.iter().any(|c| c.starts_with("issue comment")),
            "{name}: nothing that claims a result is posted: {planned:?}"
        );
    }
}

#[test]
fn a_thread_with_prose_only_gets_what_the_run_showed_and_a_question() {
    let sandbox = Sandbox::new();
    let path = fixture("prose_trailing_comma");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["evidence"]["form"], "prose");
    assert_eq!(report["category"], "actionable", "{report}");
    assert_eq!(report["outcome"]["result"], "error");
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.starts_with("Running the repro here on Python 3."),
        "{comment}"
    );
    assert!(
        comment.contains("is this the error you see?"),
        "asks the reporter: {comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
    // The lines as the runs printed them, numbers and all; the abstraction stays in --json.
    let first = comment.split("Minimized repro").next().unwrap();
    assert!(
        first.contains("json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 30 (char 29)"),
        "{comment}"
    );
    let after = comment.split("Minimized repro").nth(1).unwrap();
    assert!(
        after.contains("It fails with:\n\n```\njson.decoder.JSONDecodeError: "),
        "{comment}"
    );
    assert!(!comment.contains('#'), "no abstracted numbers: {comment}");
    assert!(
        report["minimized"]["signature_names"][0]
            .as_str()
            .unwrap()
            .contains("line # column #"),
        "{report}"
    );
    assert!(planned.iter().any(|c| c.starts_with("issue comment")));
}

#[test]
fn with_torch_a_distributed_job_without_its_launcher_lacks_its_peers() {
    let Some(python) = torch() else { return };
    let sandbox = Sandbox::new();
    let path = fixture("dist_no_launcher");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "hardware", "{report}");
    assert_eq!(report["lacking"], "peers");
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.starts_with(
            "Not run to a result here: the repro waits for the other processes of a distributed job"
        ),
        "{comment}"
    );
    assert!(
        comment.contains("environment variable RANK expected"),
        "{comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
    assert!(!planned.iter().any(|c| c.starts_with("issue comment")));
}

#[test]
fn with_torch_a_cuda_repro_whose_bug_needs_cuda_is_hardware_and_claims_nothing() {
    let Some(python) = torch() else { return };
    let sandbox = Sandbox::new();
    let path = fixture("cuda_half_gelu");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "hardware", "{report}");
    assert_eq!(report["outcome"]["result"], "environment");
    assert_eq!(report["lacking"], "gpu");
    assert_eq!(report["cpu_outcome"]["result"], "no-error", "{report}");
    assert!(report["bisect"].is_null() && report["minimized"].is_null());
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.starts_with("Not run to a result here: this machine has no GPU"),
        "{comment}"
    );
    assert!(
        comment.contains("RuntimeError: Found no NVIDIA driver"),
        "{comment}"
    );
    assert!(
        comment.contains("the repro runs to completion: the reported failure did not show there. It was not run on CUDA."),
        "{comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
    assert!(!planned.iter().any(|c| c.starts_with("issue comment")));
    assert!(
        !planned.iter().any(|c| c.contains("close")),
        "a machine that could not run it closes nothing: {planned:?}"
    );

    // A report about CUDA itself is not moved to the CPU: that would not run what it reports.
    let path = fixture("cuda_named_in_title");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "hardware", "{report}");
    assert_eq!(report["lacking"], "gpu");
    assert!(report["cpu_outcome"].is_null(), "{report}");
    assert_eq!(report["not_moved"], "the report is about CUDA itself");
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.contains("It was not moved to the CPU: the report is about CUDA itself."),
        "{comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
    assert!(!planned.iter().any(|c| c.starts_with("issue comment")));
}

#[test]
fn with_torch_a_cuda_repro_whose_bug_shows_on_the_cpu_is_reproduced_and_minimized_there() {
    let Some(python) = torch() else { return };
    let sandbox = Sandbox::new();
    let path = fixture("cuda_sparse_prose");
    let out = run_with_limit(
        &mut sandbox.command(
            &path,
            &[
                "--from-json",
                path.to_str().unwrap(),
                "--python",
                python.to_str().unwrap(),
                "--json",
            ],
        ),
        Duration::from_secs(900),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["category"], "actionable", "{report}");
    assert_eq!(report["outcome"]["result"], "environment");
    assert_eq!(report["lacking"], "gpu");
    assert_eq!(report["cpu_outcome"]["result"], "error", "{report}");
    let minimized = std::fs::read_to_string(sandbox.root().join("repro_43101.py")).unwrap();
    assert!(
        !minimized.contains("cuda"),
        "minimized on the CPU: {minimized}"
    );
    assert!(minimized.contains("index_select"), "{minimized}");
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.starts_with("Running the repro here on the CPU with PyTorch ")
            && comment.contains("; not run on CUDA (this machine has no GPU"),
        "{comment}"
    );
    assert!(
        comment.contains("NotImplementedError: Could not run 'aten::index_add_' with arguments from the 'SparseCPU' backend."),
        "{comment}"
    );
    assert!(comment.contains("is this the error you see?"), "{comment}");
    assert!(!comment.contains("reproduces"), "{comment}");
    assert!(!comment.contains("Found no NVIDIA driver"), "{comment}");
    assert!(comment.contains(&minimized), "{comment}");
    assert!(planned.iter().any(|c| c.starts_with("issue comment")));
}

#[test]
fn a_thread_with_prose_only_whose_repro_runs_clean_is_asked_about_and_not_closed() {
    let sandbox = Sandbox::new();
    let path = fixture("prose_runs_clean");
    let out = sandbox.run(&path, &["--from-json", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["evidence"]["form"], "prose", "{report}");
    assert_eq!(report["outcome"]["result"], "no-error");
    let (comment, planned) = comment_and_plan(&report);
    assert!(
        comment.starts_with("The repro in this issue runs to completion here without an error"),
        "{comment}"
    );
    assert!(
        comment.contains("Could you add the error you see"),
        "{comment}"
    );
    assert!(!comment.contains("reproduces"), "{comment}");
    assert!(planned.iter().any(|c| c.starts_with("issue comment")));
    assert!(
        !planned.iter().any(|c| c.starts_with("issue close")),
        "nothing shows the reported failure is gone: {planned:?}"
    );
}
