//! `scrub bench` on a small real corpus: the table, the JSON, the chart, skips, baselines.

mod common;

use std::time::Duration;

use common::*;

/// A corpus of two cases copied from the real one, plus one that needs a missing module.
fn small_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["unit_registry", "webhook_error_handler"] {
        let to = dir.path().join(name);
        std::fs::create_dir(&to).unwrap();
        for file in ["repro.py", "case.toml"] {
            std::fs::copy(
                repo_root().join("corpus").join(name).join(file),
                to.join(file),
            )
            .unwrap();
        }
    }
    let needy = dir.path().join("needs_a_missing_module");
    std::fs::create_dir(&needy).unwrap();
    std::fs::write(needy.join("repro.py"), "import no_such_module_for_scrub\n").unwrap();
    std::fs::write(
        needy.join("case.toml"),
        "signature = \"RuntimeError\"\nbound = 1\nhand_bound = 1\nexercises = [\"needs\"]\nneeds = [\"no_such_module_for_scrub\"]\n",
    )
    .unwrap();
    dir
}

#[test]
fn bench_prints_the_table_writes_json_and_a_chart_and_compares_with_a_baseline() {
    let corpus = small_corpus();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("bench.json");
    let svg = out_dir.path().join("bench.svg");
    let out = run_with_limit(
        scrub()
            .arg("bench")
            .arg(corpus.path())
            .args(["--jobs", "2", "--quiet", "--python", &python()])
            .arg("--json")
            .arg(&json)
            .arg("--svg")
            .arg(&svg),
        Duration::from_secs(600),
    );
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", stderr(&out));
    assert!(table.contains("| unit_registry | "), "{table}");
    assert!(table.contains("| webhook_error_handler | "), "{table}");
    assert!(
        table.contains("needs_a_missing_module: needs no_such_module_for_scrub"),
        "{table}"
    );
    assert!(table.contains("| delete_statements | "), "{table}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = report["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for field in [
        "name",
        "original_lines",
        "original_bytes",
        "final_lines",
        "final_bytes",
        "oracle_calls",
        "cache_hits",
        "wall_seconds",
        "verified",
        "bound_met",
        "skipped",
    ] {
        assert!(
            cases.iter().all(|c| c.get(field).is_some()),
            "{field} missing"
        );
    }
    let ran: Vec<_> = cases.iter().filter(|c| c["skipped"].is_null()).collect();
    assert!(
        ran.iter()
            .all(|c| c["verified"] == true && c["bound_met"] == true && c["cache_hits"].is_u64())
    );
    assert!(
        report["passes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["oracle_seconds"].as_f64().unwrap() > 0.0)
    );

    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(
        chart.starts_with("<svg"),
        "{}",
        &chart[..100.min(chart.len())]
    );
    assert!(chart.contains("unit_registry") && chart.contains("webhook_error_handler"));

    // Against a baseline whose results were smaller and cheaper, every case is marked.
    let mut better = report.clone();
    for case in better["cases"].as_array_mut().unwrap() {
        if case["skipped"].is_null() {
            case["final_bytes"] = serde_json::json!(1);
            case["oracle_calls"] = serde_json::json!(1);
        }
    }
    let baseline = out_dir.path().join("baseline.json");
    std::fs::write(&baseline, better.to_string()).unwrap();
    let out = run_with_limit(
        scrub()
            .arg("bench")
            .arg(corpus.path())
            .args([
                "--filter",
                "unit_registry",
                "--quiet",
                "--python",
                &python(),
            ])
            .arg("--baseline")
            .arg(&baseline),
        Duration::from_secs(600),
    );
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("| unit_registry |") && l.contains("bigger, slower")),
        "{table}"
    );
}

#[test]
fn a_missing_corpus_is_a_one_line_error() {
    let out = run_with_limit(
        scrub().args(["bench", "/nonexistent/corpus"]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out).trim_end().lines().count(),
        1,
        "{}",
        stderr(&out)
    );
}

/// The python of pysource-minimize's pinned venv, made by `scripts/peers-venv` on first use.
fn pysource_minimize_installed() {
    let out = run_with_limit(
        std::process::Command::new(repo_root().join("scripts/peers-venv"))
            .arg("pysource-minimize")
            .stdin(std::process::Stdio::null()),
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "scripts/peers-venv pysource-minimize failed: {}",
        stderr(&out)
    );
}

/// `tests/fixtures/vs/ratio_parser_registry`: fractions refuses "x/2", and deleting the line
/// that registers it reaches the loader's own raise of the same class and message start. A
/// class-and-substring test takes that deletion; scrub's anchor (where the failure was raised)
/// does not.
#[test]
fn bench_vs_sets_a_peer_beside_scrub_and_shows_a_result_that_lost_the_bug_as_lost() {
    pysource_minimize_installed();
    let corpus = tempfile::tempdir().unwrap();
    let case = corpus.path().join("ratio_parser_registry");
    std::fs::create_dir(&case).unwrap();
    let fixture = repo_root().join("tests/fixtures/vs/ratio_parser_registry");
    for file in ["repro.py", "case.toml"] {
        std::fs::copy(fixture.join(file), case.join(file)).unwrap();
    }
    let out_dir = tempfile::tempdir().unwrap();
    let (json, svg) = (out_dir.path().join("b.json"), out_dir.path().join("b.svg"));
    let out = run_with_limit(
        scrub()
            .arg("bench")
            .arg(corpus.path())
            .args(["--vs", "pysource-minimize", "--budget", "90", "--jobs", "2"])
            .args(["--quiet", "--python", &python()])
            .arg("--json")
            .arg(&json)
            .arg("--svg")
            .arg(&svg),
        Duration::from_secs(300),
    );
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{table}\n{}", stderr(&out));
    assert!(
        table.contains(
            "| case (hand) | tool | lines | bytes | candidate runs | wall s | same bug | cut |"
        ),
        "{table}"
    );
    let row = |tool: &str| {
        table
            .lines()
            .find(|l| l.contains(&format!(" | {tool} | ")))
            .unwrap_or_else(|| panic!("no {tool} row in {table}"))
            .to_string()
    };
    assert!(
        row("scrub").starts_with("| ratio_parser_registry (2) | scrub | 18 → ")
            && row("scrub").ends_with("| yes |  |"),
        "{table}"
    );
    let peer = row("pysource-minimize");
    assert!(
        peer.contains("| **lost**: ") && peer.contains("raised at the script itself"),
        "{table}"
    );
    assert!(
        table.contains("Candidates at once: scrub 2 (--jobs), pysource-minimize 1."),
        "{table}"
    );
    assert!(
        table.contains("Versions: pysource-minimize 0.10.1."),
        "{table}"
    );

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["vs"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let (ours, theirs) = (&rows[0], &rows[1]);
    assert_eq!(
        (ours["tool"].as_str(), ours["same_bug"].as_bool()),
        (Some("scrub"), Some(true))
    );
    assert_eq!(theirs["tool"], "pysource-minimize");
    assert_eq!(theirs["same_bug"], false);
    assert_eq!(theirs["cut"], false);
    assert_eq!(theirs["at_once"], 1);
    assert!(theirs["runs"].as_u64().unwrap() > 1);
    assert!(
        theirs["final_text"]
            .as_str()
            .unwrap()
            .contains("raise ValueError")
    );
    for field in ["lines", "bytes", "wall_seconds", "lost", "version"] {
        assert!(theirs.get(field).is_some(), "{field} missing");
    }
    let chart = std::fs::read_to_string(out_dir.path().join("b-vs.svg")).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("pysource-minimize"));
}
