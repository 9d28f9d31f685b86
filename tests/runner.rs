//! The process layer and the worker pool, on real python3 processes.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use scrub::engine::process::{RunSpec, Status, run_script};
use scrub::engine::workers::Workers;

fn alive(pid: i32) -> bool {
    // A zombie has exited; only a process that still runs counts.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The kill is sent before `run_script` returns; give the kernel a moment to deliver it.
fn assert_gone(pid: i32) {
    for _ in 0..50 {
        if !alive(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("process {pid} is still running");
}

/// Runs `script`, which starts a grandchild that sleeps and then ends as `ending` says,
/// and returns the outcome and the grandchild's pid.
fn with_grandchild(ending: &str, timeout: Duration) -> (scrub::engine::process::Outcome, i32) {
    let marker = tempfile::tempdir().unwrap();
    let pid_file = marker.path().join("pid");
    let script = format!(
        "import subprocess, sys, time\n\
         p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n\
         open({:?}, 'w').write(str(p.pid))\n\
         {ending}\n",
        pid_file.to_str().unwrap()
    );
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout,
        env: &[],
        max_memory: None,
    };
    let outcome = run_script(&script, &spec).unwrap();
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (outcome, pid)
}

#[test]
fn a_timed_out_candidates_grandchild_is_killed_with_it() {
    let (outcome, pid) = with_grandchild("time.sleep(600)", Duration::from_secs(2));
    assert_eq!(outcome.status, Status::TimedOut);
    assert_gone(pid);
}

#[test]
fn a_grandchild_left_running_after_the_child_exits_is_killed() {
    let (outcome, pid) = with_grandchild("raise SystemExit(4)", Duration::from_secs(20));
    assert_eq!(outcome.status, Status::Exited(4));
    assert_gone(pid);
}

#[test]
fn signals_exit_statuses_and_stderr_are_reported() {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    let abort = run_script("import os\nos.abort()\n", &spec).unwrap();
    assert_eq!(abort.status, Status::Signaled(libc::SIGABRT));
    let raised = run_script("raise KeyError('calibration')\n", &spec).unwrap();
    assert_eq!(raised.status, Status::Exited(1));
    assert!(
        raised.stderr.ends_with("KeyError: 'calibration'\n"),
        "{}",
        raised.stderr
    );
}

#[test]
fn every_candidate_runs_in_a_fresh_directory_with_a_fixed_hash_seed_and_no_stdin() {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    let script = "import os, sys\nprint(os.listdir('.'), os.environ['PYTHONHASHSEED'], repr(sys.stdin.read()))\nopen('left.txt', 'w')\n";
    let a = run_script(script, &spec).unwrap();
    let b = run_script(script, &spec).unwrap();
    assert_eq!(a.stdout, "['repro.py'] 0 ''\n");
    assert_eq!(
        b.stdout, a.stdout,
        "the second run must not see the first run's file"
    );
}

#[test]
fn workers_are_pinned_to_gpus_round_robin() {
    // Each run sleeps so that both workers take part; each reports what it sees.
    let workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(20),
        2,
        vec!["3".into(), "5".into()],
    );
    let script =
        "import os, time\ntime.sleep(0.3)\nprint(os.environ.get('CUDA_VISIBLE_DEVICES'))\n";
    let outcomes = workers.run_all(&[script; 4]);
    let seen: BTreeSet<String> = outcomes
        .into_iter()
        .map(|o| o.unwrap().stdout.trim().to_string())
        .collect();
    assert_eq!(seen, BTreeSet::from(["3".to_string(), "5".to_string()]));
    assert_eq!(
        workers.env_of(0),
        vec![("CUDA_VISIBLE_DEVICES".to_string(), "3".to_string())]
    );
    assert_eq!(workers.env_of(3)[0].1, "5");
}

#[test]
fn without_gpus_the_variable_is_left_alone() {
    let workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(20),
        2,
        vec![],
    );
    assert!(workers.env_of(0).is_empty());
    let script = "import os\nprint(os.environ.get('CUDA_VISIBLE_DEVICES', 'unset'))\n";
    let inherited = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into());
    let out = workers.run_all(&[script]).remove(0).unwrap();
    assert_eq!(out.stdout.trim(), inherited);
}

#[test]
fn results_come_back_in_the_order_of_the_texts() {
    let workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(20),
        2,
        vec![],
    );
    let texts: Vec<String> = (0..6)
        .map(|i| {
            format!(
                "import time\ntime.sleep({})\nprint({i})\n",
                (6 - i) as f64 * 0.05
            )
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let outs: Vec<String> = workers
        .run_all(&refs)
        .into_iter()
        .map(|o| o.unwrap().stdout.trim().to_string())
        .collect();
    assert_eq!(outs, ["0", "1", "2", "3", "4", "5"]);
}

/// A script that holds about 600 MB in a child process it starts, then sleeps: only the
/// group's memory, not the child's own, goes over a 300 MB limit.
const GREEDY: &str = "import subprocess, sys, time\n\
    subprocess.Popen([sys.executable, '-c', 'b = bytearray(600 << 20); import time; time.sleep(60)'])\n\
    time.sleep(60)\n";

#[test]
fn a_group_over_its_memory_limit_is_killed_and_judged_out_of_memory() {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(30),
        env: &[],
        max_memory: Some(300 << 20),
    };
    let outcome = run_script(GREEDY, &spec).unwrap();
    assert_eq!(outcome.status, Status::OutOfMemory);
    assert!(outcome.peak_rss > 300 << 20, "{}", outcome.peak_rss);
    assert!(outcome.duration < Duration::from_secs(30));
}

#[test]
fn a_warm_child_over_its_memory_limit_is_killed_too() {
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("repro.py");
    std::fs::write(&original, GREEDY).unwrap();
    let mut workers = Workers::new(
        PathBuf::from(common::python()),
        Duration::from_secs(30),
        1,
        vec![],
    );
    workers.warm = Some(original);
    workers.max_memory = Some(300 << 20);
    let outcome = workers.run_all(&[GREEDY]).remove(0).unwrap();
    assert_eq!(outcome.status, Status::OutOfMemory);
}

#[test]
fn every_run_reports_its_peak_memory() {
    let python = PathBuf::from(common::python());
    let spec = RunSpec {
        python: &python,
        timeout: Duration::from_secs(20),
        env: &[],
        max_memory: None,
    };
    // Quicker than the first sample: the peak comes from the reaped child's own figures.
    let outcome = run_script(
        "b = bytearray(100 << 20)\nb[::4096] = b'x' * len(b[::4096])\n",
        &spec,
    )
    .unwrap();
    assert_eq!(outcome.status, Status::Exited(0), "{}", outcome.stderr);
    assert!(outcome.peak_rss > 100 << 20, "{}", outcome.peak_rss);
}
