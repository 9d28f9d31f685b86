//! Warm workers that run each candidate in their own process (`--in-process`), on real
//! python3: what a candidate changes is put back, and a worker it broke is replaced.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use scrub::corpus;
use scrub::engine::process::{Outcome, Status};
use scrub::engine::verdict::{Signature, Verdict};
use scrub::engine::workers::Workers;

fn in_process(original: &Path) -> Workers {
    let mut workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(20),
        1,
        vec![],
    );
    workers.set_jobs(1, true);
    workers.warm = Some(original.to_path_buf());
    workers
}

/// Runs `texts` one after the other on one in-process worker started for `original`.
fn run(workers: &Workers, texts: &[&str]) -> Vec<Outcome> {
    texts
        .iter()
        .map(|text| workers.run_all(&[text]).remove(0).unwrap())
        .collect()
}

fn original() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repro.py");
    std::fs::write(&path, "import json\n").unwrap();
    (dir, path)
}

const PID: &str = "import os\nprint(os.getpid())\n";

fn pid(outcome: &Outcome) -> u32 {
    outcome
        .stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid: {:?} {}", outcome.status, outcome.stderr))
}

#[test]
fn every_pure_corpus_original_fails_in_process_as_in_a_fresh_process() {
    for case in corpus::load(&common::repo_root().join("corpus")).unwrap() {
        if !case.spec.needs.is_empty() || case.spec.flaky {
            continue;
        }
        let text = std::fs::read_to_string(case.script()).unwrap();
        let sig = Signature::parse(&case.spec.signature).unwrap();
        let workers = in_process(&case.script());
        // Twice in the same worker: the second run starts from the state put back.
        for outcome in run(&workers, &[&text, &text]) {
            assert_eq!(
                sig.judge(&outcome),
                Verdict::Same,
                "{}: {:?}\n{}",
                case.name,
                outcome.status,
                outcome.stderr
            );
        }
    }
}

#[test]
fn a_candidate_that_crashes_its_worker_is_a_crash_and_the_next_runs_in_a_new_one() {
    let (_dir, original) = original();
    let workers = in_process(&original);
    let crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n";
    let raise = "raise ValueError('after the crash')\n";
    let outcomes = run(&workers, &[PID, crash, PID, raise]);
    assert_eq!(outcomes[1].status, Status::Signaled(libc::SIGSEGV));
    assert_ne!(
        pid(&outcomes[0]),
        pid(&outcomes[2]),
        "the worker was not replaced"
    );
    assert_eq!(outcomes[3].status, Status::Exited(1));
    assert!(outcomes[3].stderr.contains("ValueError: after the crash"));
    let events = workers.events();
    assert!(events.iter().any(|e| e.contains("signal 11")), "{events:?}");
}

#[test]
fn what_a_candidate_changes_is_put_back_before_the_next() {
    let (_dir, original) = original();
    let workers = in_process(&original);
    let leak = "import os, sys, types, warnings\n\
                sys.modules['leaked'] = types.ModuleType('leaked')\n\
                os.environ['LEAKED'] = '1'\n\
                sys.path.append('/leaked')\n\
                warnings.simplefilter('error')\n\
                os.chdir('/')\n\
                print(os.getpid())\n";
    let look = "import os, sys, warnings\n\
                print(os.getpid())\n\
                print(os.environ.get('LEAKED'), '/leaked' in sys.path, os.getcwd() == '/')\n\
                warnings.warn('only a warning')\n\
                import leaked\n";
    let outcomes = run(&workers, &[leak, look]);
    let first = pid(&outcomes[0]);
    let lines: Vec<&str> = outcomes[1].stdout.lines().collect();
    assert_eq!(
        lines[0].parse::<u32>().unwrap(),
        first,
        "the worker was replaced"
    );
    assert_eq!(lines[1], "None False False");
    assert!(
        outcomes[1]
            .stderr
            .contains("ModuleNotFoundError: No module named 'leaked'"),
        "{}",
        outcomes[1].stderr
    );
    assert!(outcomes[1].stderr.contains("UserWarning: only a warning"));
    assert!(workers.events().is_empty());
}

#[test]
fn state_that_cannot_be_put_back_replaces_the_worker_and_its_candidate_runs_again() {
    let (_dir, original) = original();
    let workers = in_process(&original);
    // A thread left running stands for what the worker cannot undo (a poisoned CUDA
    // context on a GPU): the candidate's verdict comes from a fresh worker.
    let poison = "import os, threading, time\n\
                  threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n\
                  print(os.getpid())\n\
                  raise KeyError('poisoned')\n";
    let outcomes = run(&workers, &[PID, poison, PID]);
    assert_eq!(outcomes[1].status, Status::Exited(1));
    assert!(outcomes[1].stderr.contains("KeyError: 'poisoned'"));
    let (a, b, c) = (pid(&outcomes[0]), pid(&outcomes[1]), pid(&outcomes[2]));
    assert!(a != b && b != c, "{a} {b} {c}: the worker was not replaced");
    let events = workers.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|e| e.contains("thread")), "{events:?}");
}

#[test]
fn a_worker_that_keeps_a_candidates_memory_is_replaced_and_each_candidate_has_its_own_peak() {
    const MIB: u64 = 1 << 20;
    let (_dir, original) = original();
    let mut workers = in_process(&original);
    // A candidate may hold 1 GiB: the worker may keep about half of what it leaves.
    workers.max_memory = Some(1024 * MIB);
    let passing = "x = b'1' * (300 << 20)\nimport os\nprint(os.getpid())\n";
    let kept = "import json, os\njson.kept = b'1' * (600 << 20)\nprint(os.getpid())\n";
    let outcomes = run(&workers, &[passing, PID, kept, PID]);
    assert!(
        outcomes[0].peak_rss >= 300 * MIB,
        "{}",
        outcomes[0].peak_rss
    );
    assert!(outcomes[1].peak_rss < 200 * MIB, "{}", outcomes[1].peak_rss);
    assert_eq!(pid(&outcomes[0]), pid(&outcomes[1]), "replaced too soon");
    assert_eq!(pid(&outcomes[1]), pid(&outcomes[2]));
    // Its outcome stands (it is not run again), and the next runs in a new worker.
    assert_eq!(outcomes[2].status, Status::Exited(0));
    assert_ne!(pid(&outcomes[2]), pid(&outcomes[3]), "the worker was kept");
    let events = workers.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].contains("MiB after its candidate"), "{events:?}");
}
