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
    reduce_queued_cases();
}

/// Takes cases from the same queue as the test above, so that two reductions run side by side.
#[test]
fn every_corpus_case_reduces_within_its_bound_and_warm_as_cold_beside_the_other_test() {
    reduce_queued_cases();
}

/// The pure cases that `SCRUB_CORPUS_FILTER` names (tests/torch.rs runs the torch ones
/// against the pinned venv).
fn queue() -> &'static Queue {
    static QUEUE: std::sync::OnceLock<Queue> = std::sync::OnceLock::new();
    QUEUE.get_or_init(|| {
        let cases = corpus::load(&repo_root().join("corpus")).unwrap();
        assert!(cases.len() >= 12, "the corpus has {} cases", cases.len());
        let submodules = |c: &&Case| c.spec.exercises.iter().any(|e| e == "submodule-imports");
        assert!(cases.iter().filter(submodules).count() >= 2);
        let filter = corpus_filter();
        Queue::new(
            cases
                .into_iter()
                .filter(|c| c.name.contains(&filter) && c.spec.needs.is_empty())
                .rev()
                .collect(),
        )
    })
}

fn reduce_queued_cases() {
    let python = Path::new(&python()).to_path_buf();
    queue().drain(|case| {
        let warm = reduce_case(case, &python)?;
        let cold = reduce_case_with(case, &python, &["--cold"])?;
        if warm.summary["warm"] != true {
            return Err("not reduced warm".into());
        }
        if warm.result != cold.result {
            return Err(format!(
                "warm and cold differ\n--- warm\n{}--- cold\n{}",
                warm.result, cold.result
            ));
        }
        Ok(warm.row)
    });
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
