//! Warm workers (forked from a zygote) against cold processes, on real python3.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use scrub::corpus;
use scrub::engine::process::{Outcome, RunSpec, Status, run_script};
use scrub::engine::verdict::{Signature, Verdict};
use scrub::engine::workers::Workers;

fn warm_workers(original: &Path, jobs: usize, gpus: Vec<String>) -> Workers {
    let mut workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(20),
        jobs,
        gpus,
    );
    workers.warm = Some(original.to_path_buf());
    workers
}

/// `script` run in a fresh process, and in a warm worker of `original`.
fn cold_and_warm(original: &Path, script: &str) -> (Outcome, Outcome) {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    let cold = run_script(script, &spec).unwrap();
    let warm = warm_workers(original, 1, vec![])
        .run_all(&[script])
        .remove(0)
        .unwrap();
    (cold, warm)
}

fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}/cwd")).exists()
}

#[test]
fn warm_and_cold_runs_of_every_corpus_original_fail_the_same_way() {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    for case in corpus::load(&common::repo_root().join("corpus")).unwrap() {
        if !case.spec.needs.is_empty() || case.spec.flaky {
            continue;
        }
        let text = std::fs::read_to_string(case.script()).unwrap();
        let sig = Signature::parse(&case.spec.signature).unwrap();
        let cold = run_script(&text, &spec).unwrap();
        let workers = warm_workers(&case.script(), 1, vec![]);
        let warm = workers.run_all(&[&text]).remove(0).unwrap();
        assert_eq!(
            sig.judge(&cold),
            Verdict::Same,
            "{}: cold {:?}",
            case.name,
            cold.status
        );
        assert_eq!(
            sig.judge(&warm),
            Verdict::Same,
            "{}: warm {:?}\n{}",
            case.name,
            warm.status,
            warm.stderr
        );
        assert_eq!(cold.status, warm.status, "{}", case.name);
        // The final exception's header; a crash's fault dump lists the zygote's own frames too.
        let header = |s: &str| scrub::engine::exception::final_exception(s).map(|e| e.header);
        if matches!(cold.status, Status::Exited(_)) {
            assert_eq!(header(&cold.stderr), header(&warm.stderr), "{}", case.name);
        }
    }
}

#[test]
fn a_hanging_warm_candidate_times_out_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let script = format!(
        "import os, subprocess, sys, time\np = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\nopen({:?}, 'w').write(f'{{os.getpid()}} {{p.pid}}')\ntime.sleep(600)\n",
        pid_file.to_str().unwrap()
    );
    let original = dir.path().join("original.py");
    std::fs::write(&original, &script).unwrap();
    let mut workers = warm_workers(&original, 1, vec![]);
    workers.timeout = Duration::from_secs(2);
    let outcome = workers.run_all(&[&script]).remove(0).unwrap();
    assert_eq!(outcome.status, Status::TimedOut);
    let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap()
        .split(' ')
        .map(|p| p.parse().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for pid in pids {
        assert!(!alive(pid), "{pid} is still running");
    }
}

#[test]
fn a_candidate_that_kills_its_zygote_is_not_interesting_and_the_next_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import json\nraise KeyError('x')\n").unwrap();
    let workers = warm_workers(&original, 1, vec![]);
    let killer = "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(5)\n";
    assert!(
        workers.run_all(&[killer]).remove(0).is_err(),
        "a dead zygote gives no outcome"
    );
    let next = workers
        .run_all(&["raise KeyError('x')\n"])
        .remove(0)
        .unwrap();
    assert_eq!(next.status, Status::Exited(1));
    assert!(next.stderr.contains("KeyError: 'x'"));
}

#[test]
fn warm_children_behave_like_python_script() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import sys\n").unwrap();
    let workers = warm_workers(&original, 1, vec![]);
    let script = "import atexit, os, sys, threading, time\n\
                  atexit.register(lambda: print('atexit ran'))\n\
                  t = threading.Thread(target=lambda: (time.sleep(0.2), print('thread joined')))\n\
                  t.start()\n\
                  print(__name__, sys.argv, os.listdir('.'), os.environ['PYTHONHASHSEED'], repr(sys.stdin.read()))\n\
                  sys.exit(3)\n";
    let out = workers.run_all(&[script]).remove(0).unwrap();
    assert_eq!(out.status, Status::Exited(3));
    assert_eq!(
        out.stdout,
        "__main__ ['repro.py'] ['repro.py'] 0 ''\nthread joined\natexit ran\n"
    );
    let abort = workers
        .run_all(&["import os\nos.abort()\n"])
        .remove(0)
        .unwrap();
    assert_eq!(abort.status, Status::Signaled(libc::SIGABRT));
}

#[test]
fn a_warm_candidate_recurses_as_deep_as_a_cold_run() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import sys\n").unwrap();
    let script = "import sys\n\
                  def down(n):\n\
                  \x20   try:\n\
                  \x20       return down(n + 1)\n\
                  \x20   except RecursionError:\n\
                  \x20       return n\n\
                  print(down(0), sys.getrecursionlimit())\n";
    let (cold, warm) = cold_and_warm(&original, script);
    assert_eq!(cold.status, Status::Exited(0), "{}", cold.stderr);
    assert_eq!(warm.stdout, cold.stdout);
}

#[test]
fn a_warm_candidate_sees_only_the_modules_its_own_imports_bring_in() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(
        &original,
        "import logging\nimport logging.config\nimport logging.handlers\nimport json\nimport xml.etree.ElementTree\n",
    )
    .unwrap();
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    // A submodule the worker loaded but the candidate does not import is not there; one that
    // the candidate's import loads (json.decoder, logging.handlers by logging.config) is.
    let scripts = [
        "import logging\nprint(hasattr(logging, 'config'), hasattr(logging, 'handlers'))\n",
        "import logging.handlers\nprint(hasattr(logging, 'config'))\n",
        "import logging.config\nprint(hasattr(logging, 'handlers'))\n",
        "import json\nprint(json.decoder.JSONDecoder.__module__)\n",
        "import xml.etree.ElementTree as ET\nprint(ET.fromstring('<a/>').tag, 'xml.dom' in __import__('sys').modules)\n",
        "import argparse\nprint(argparse.ArgumentParser().parse_args([]))\n",
        "import sys\nprint(sys.orig_argv[1:] == sys.argv, len(sys.orig_argv))\n",
    ];
    // Forked, and run one after another in the worker's own process (each put back after).
    for in_place in [false, true] {
        let mut workers = warm_workers(&original, 1, vec![]);
        workers.set_jobs(1, in_place);
        for script in scripts {
            let cold = run_script(script, &spec).unwrap();
            let warm = workers.run_all(&[script]).remove(0).unwrap();
            assert_eq!(
                (warm.stdout.as_str(), warm.status),
                (cold.stdout.as_str(), cold.status),
                "in place: {in_place}\n{script}\n{}",
                warm.stderr
            );
        }
    }
}

#[test]
fn each_warm_worker_sees_its_own_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import os\n").unwrap();
    let workers = warm_workers(&original, 2, vec!["3".into(), "5".into()]);
    let script =
        "import os, time\ntime.sleep(0.3)\nprint(os.environ.get('CUDA_VISIBLE_DEVICES'))\n";
    let seen: std::collections::BTreeSet<String> = workers
        .run_all(&[script; 4])
        .into_iter()
        .map(|o| o.unwrap().stdout.trim().to_string())
        .collect();
    assert_eq!(seen, ["3".to_string(), "5".to_string()].into());
}

#[test]
fn a_warm_child_sees_the_same_file_name_and_traceback_as_a_cold_run() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import os\n").unwrap();
    let script = "import os\nprint(os.path.isabs(__file__), os.path.basename(__file__))\nraise KeyError('x')\n";
    let (cold, warm) = cold_and_warm(&original, script);
    assert_eq!(warm.stdout, cold.stdout);
    let frames = |s: &str| {
        s.lines()
            .filter(|l| l.trim_start().starts_with("File "))
            .count()
    };
    assert_eq!(
        frames(&warm.stderr),
        frames(&cold.stderr),
        "{}\n{}",
        warm.stderr,
        cold.stderr
    );
}

#[test]
fn a_warm_child_reports_a_script_that_does_not_compile_as_python_does() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("original.py");
    std::fs::write(&original, "import os\n").unwrap();
    let broken = "x = 1\nbreak\n";
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    let cold = run_script(broken, &spec).unwrap();
    let warm = warm_workers(&original, 1, vec![])
        .run_all(&[broken])
        .remove(0)
        .unwrap();
    assert_eq!(warm.status, cold.status);
    assert!(!warm.stderr.contains("Traceback"), "{}", warm.stderr);
    let header = |s: &str| scrub::engine::exception::final_exception(s).map(|e| e.header);
    assert_eq!(
        header(&warm.stderr),
        header(&cold.stderr),
        "{}\n{}",
        warm.stderr,
        cold.stderr
    );
}
