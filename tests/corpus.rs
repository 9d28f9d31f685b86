//! Every pure-Python corpus case, reduced by the built binary with real python3 on a temp copy:
//! the result must fail the same way on its own and meet the case's bound, warm as cold.

mod common;

use std::path::Path;

use common::*;
use scrub::corpus::{self, Case};
use scrub::engine::verdict::Signature;

/// Every pure case, reduced warm (the default) and `--cold`: the warm result fails the same way
/// within the bound, no warm verdict was contradicted by the final fresh check, and fresh
/// processes reach the same script. A warm worker that let a candidate see what it did not
/// import (two submodules of one package, a submodule reached through another's import)
/// would give another result than fresh processes do.
#[test]
fn every_corpus_case_reduces_within_its_bound_and_warm_as_cold() {
    let cases = corpus::load(&repo_root().join("corpus")).unwrap();
    assert!(cases.len() >= 12, "the corpus has {} cases", cases.len());
    let submodules = |c: &&Case| c.spec.exercises.iter().any(|e| e == "submodule-imports");
    assert!(cases.iter().filter(submodules).count() >= 2);
    let filter = corpus_filter();
    let python = Path::new(&python()).to_path_buf();
    let mut failures = Vec::new();
    for case in cases.iter().filter(|c| c.name.contains(&filter)) {
        if !case.spec.needs.is_empty() {
            // The torch cases: tests/torch.rs runs them against the pinned venv.
            continue;
        }
        let both = reduce_case(case, &python).and_then(|warm| {
            let cold = reduce_case_with(case, &python, &["--cold"])?;
            Ok((warm, cold))
        });
        match both {
            Ok((warm, _)) if warm.summary["warm"] != true => {
                eprintln!("{:<28} FAILED: not reduced warm", case.name);
                failures.push(case.name.clone());
            }
            Ok((warm, cold)) if warm.result != cold.result => {
                eprintln!(
                    "{:<28} FAILED: warm and cold differ\n--- warm\n{}--- cold\n{}",
                    case.name, warm.result, cold.result
                );
                failures.push(case.name.clone());
            }
            Ok((warm, _)) => eprintln!("{}", warm.row),
            Err(why) => {
                eprintln!("{:<28} FAILED: {why}", case.name);
                failures.push(case.name.clone());
            }
        }
    }
    assert!(failures.is_empty(), "failed: {failures:?}");
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
