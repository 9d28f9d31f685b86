//! Every pure-Python corpus case, reduced by the built binary with real python3 on a temp copy:
//! the result must fail the same way on its own and meet the case's bound.

mod common;

use std::path::Path;

use common::*;
use scrub::corpus::{self, Case};
use scrub::engine::verdict::Signature;

#[test]
fn every_corpus_case_reduces_to_a_script_that_fails_the_same_way_within_its_bound() {
    let cases = corpus::load(&repo_root().join("corpus")).unwrap();
    assert!(cases.len() >= 12, "the corpus has {} cases", cases.len());
    let filter = corpus_filter();
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c.name.contains(&filter)) {
        if !case.spec.needs.is_empty() {
            // The torch cases: tests/torch.rs runs them against the pinned venv.
            continue;
        }
        match reduce_case(case, Path::new(&python())) {
            Ok(reduced) => eprintln!("{}", reduced.row),
            Err(why) => {
                eprintln!("{:<28} FAILED: {why}", case.name);
                failures.push(case.name.clone());
            }
        }
    }
    assert!(failures.is_empty(), "failed: {failures:?}");
}

/// The cases whose scripts import two submodules of one package, or reach a submodule through
/// another's import: a warm worker that let a candidate see what it did not import would
/// give another result than fresh processes do.
#[test]
fn a_case_that_imports_submodules_reduces_warm_as_cold() {
    let cases = corpus::load(&repo_root().join("corpus")).unwrap();
    let exposed: Vec<&Case> = cases
        .iter()
        .filter(|c| c.spec.exercises.iter().any(|e| e == "submodule-imports"))
        .collect();
    assert!(exposed.len() >= 2, "{} cases", exposed.len());
    for case in exposed {
        let python = Path::new(&python()).to_path_buf();
        let warm = reduce_case(case, &python).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let cold = reduce_case_with(case, &python, &["--cold"])
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(warm.summary["warm"], true, "{}", case.name);
        assert_eq!(warm.result, cold.result, "{}", case.name);
    }
}

#[test]
fn a_derived_pure_case_takes_its_hand_version_and_refuses_its_near_miss() {
    let cases = corpus::load(&repo_root().join("corpus")).unwrap();
    let derived: Vec<&Case> = cases
        .iter()
        .filter(|c| c.spec.derive && c.spec.needs.is_empty())
        .collect();
    assert!(!derived.is_empty(), "no pure case is reduced without --sig");
    let workers = warm_workers(Path::new(&python()), &derived[0].script());
    let wrong = misjudged(&derived, &workers, &|_, _| false);
    assert!(wrong.is_empty(), "{wrong:#?}");
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
