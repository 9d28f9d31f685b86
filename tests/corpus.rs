//! Every corpus case, reduced by the built binary with real python3 on a temp copy: the
//! result must fail the same way on its own and meet the case's bound.

mod common;

use std::time::Duration;

use common::*;
use scrub::corpus::{self, Case};
use scrub::oracle::{Signature, Verdict};
use scrub::process::{RunSpec, run_script};

fn reproduces(text: &str, sig: &Signature, tries: usize) -> bool {
    let python = std::path::PathBuf::from(python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(60),
        env: &[],
    };
    (0..tries).any(|_| sig.judge(&run_script(text, &spec).unwrap()) == Verdict::Same)
}

fn check(case: &Case) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("repro.py");
    std::fs::copy(case.script(), &input).unwrap();
    let original = std::fs::read_to_string(&input).unwrap();
    let out = run_with_limit(
        scrub()
            .arg("reduce")
            .arg(&input)
            .args([
                "--sig",
                &case.spec.signature,
                "--exhaustive",
                "--jobs",
                "2",
                "--no-cache",
                "--json",
                "--quiet",
            ])
            .arg("--python")
            .arg(python()),
        Duration::from_secs(900),
    );
    if out.status.code() != Some(0) {
        return Err(format!("exit {:?}: {}", out.status.code(), stderr(&out)));
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let result =
        std::fs::read_to_string(dir.path().join("repro.min.py")).map_err(|e| e.to_string())?;
    if std::fs::read_to_string(&input).unwrap() != original {
        return Err("the input was modified".into());
    }
    let sig = Signature::parse(&case.spec.signature).unwrap();
    let tries = if case.spec.flaky { 20 } else { 1 };
    if !reproduces(&result, &sig, tries) {
        return Err(format!("the result does not reproduce:\n{result}"));
    }
    let lines = scrub_reducers::count_lines(&result);
    let row = format!(
        "{:<28} {:>4} -> {:>3} lines  {:>5} calls  {:>4} hits  {:>6.1} s  bound {}",
        case.name,
        summary["original_lines"],
        lines,
        summary["oracle_calls"],
        summary["cache_hits"],
        summary["wall_seconds"].as_f64().unwrap_or(0.0),
        case.spec.bound
    );
    if lines > case.spec.bound {
        return Err(format!("{row}: over the bound:\n{result}"));
    }
    Ok(row)
}

#[test]
fn every_corpus_case_reduces_to_a_script_that_fails_the_same_way_within_its_bound() {
    let cases = corpus::load(&repo_root().join("corpus")).unwrap();
    assert!(cases.len() >= 12, "the corpus has {} cases", cases.len());
    let filter = std::env::var("SCRUB_CORPUS_FILTER").unwrap_or_default();
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c.name.contains(&filter)) {
        if let Some(why) = case.missing_needs(std::path::Path::new(&python())) {
            eprintln!("{:<28} skipped: {why}", case.name);
            continue;
        }
        match check(case) {
            Ok(row) => eprintln!("{row}"),
            Err(why) => {
                eprintln!("{:<28} FAILED: {why}", case.name);
                failures.push(case.name.clone());
            }
        }
    }
    assert!(failures.is_empty(), "failed: {failures:?}");
}

#[test]
fn every_case_toml_is_complete_and_every_repro_is_of_realistic_size() {
    for case in corpus::load(&repo_root().join("corpus")).unwrap() {
        Signature::parse(&case.spec.signature).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let text = std::fs::read_to_string(case.script()).unwrap();
        let lines = text.lines().count();
        assert!((80..=250).contains(&lines), "{}: {lines} lines", case.name);
        assert!(case.spec.hand_bound <= case.spec.bound, "{}", case.name);
        assert!(!case.spec.exercises.is_empty(), "{}", case.name);
    }
}
