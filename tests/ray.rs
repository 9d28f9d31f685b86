//! `scrub reduce --ray` on a real two-node Ray cluster bound to loopback: the same output as
//! local runs at every `--jobs`, an actor killed mid-run, and bad input.

mod common;

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The interpreter of the pinned Ray venv, from `SCRUB_RAY_PYTHON` (which `scripts/test` sets
/// from `scripts/ray-venv`); see `common::needed_python`.
fn ray_python() -> Option<PathBuf> {
    common::needed_python("SCRUB_RAY_PYTHON")
}

/// One cluster at a time: two would fight over Ray's fixed helper ports.
static CLUSTER: Mutex<()> = Mutex::new(());

/// A local Ray cluster of two nodes on 127.0.0.1, each advertising 8 CPUs, in a temp dir of its
/// own. Dropping it (also when a test panics) kills every process of this cluster, and only
/// those: `ray stop --force` would also stop any other Ray cluster on the machine.
struct Cluster {
    address: String,
    temp: tempfile::TempDir,
    _lock: std::sync::MutexGuard<'static, ()>,
}

impl Cluster {
    fn start(python: &Path) -> Cluster {
        let lock = CLUSTER.lock().unwrap_or_else(|e| e.into_inner());
        // Short: Ray's socket paths live under it.
        let temp = tempfile::Builder::new()
            .prefix("scrub-rc-")
            .tempdir_in("/tmp")
            .unwrap();
        // An ephemeral port, free now, above Ray's own worker port range (10002-19999).
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Cluster {
            address: format!("127.0.0.1:{port}"),
            temp,
            _lock: lock,
        };
        let ray = python.with_file_name("ray");
        let common = [
            "--node-ip-address=127.0.0.1",
            "--num-cpus=8",
            "--disable-usage-stats",
        ];
        let head = cluster.ray_start(
            &ray,
            &[
                "--head",
                &format!("--port={port}"),
                "--include-dashboard=false",
                &format!("--temp-dir={}", cluster.temp.path().display()),
            ],
            &common,
        );
        assert!(
            head.status.success(),
            "ray start --head: {}",
            common::stderr(&head)
        );
        let node = cluster.ray_start(&ray, &[&format!("--address={}", cluster.address)], &common);
        assert!(
            node.status.success(),
            "ray start --address: {}",
            common::stderr(&node)
        );
        cluster
    }

    fn ray_start(&self, ray: &Path, args: &[&str], common: &[&str]) -> Output {
        common::run_with_limit(
            Command::new(ray)
                // A process group of its own, which the node's daemons inherit: the one that
                // `Drop` kills, never the test's.
                .process_group(0)
                .arg("start")
                .args(args)
                .args(common)
                .env("RAY_USAGE_STATS_ENABLED", "0")
                .stdin(Stdio::null()),
            Duration::from_secs(180),
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Every process whose command line names this cluster's temp dir (the GCS, raylets,
        // monitors), their process groups, and everything they started (agents, workers,
        // actors and whatever those forked).
        let temp = self.temp.path().to_string_lossy().into_owned();
        let roots: Vec<i32> = processes()
            .into_iter()
            .filter(|p| p.cmdline.contains(&temp))
            .map(|p| p.pgid)
            // SAFETY: getpgrp has no preconditions.
            .filter(|&g| g > 1 && g != unsafe { libc::getpgrp() })
            .collect();
        for _ in 0..3 {
            let all = processes();
            let mut doomed: Vec<i32> = all
                .iter()
                .filter(|p| roots.contains(&p.pgid))
                .map(|p| p.pid)
                .collect();
            loop {
                let more: Vec<i32> = all
                    .iter()
                    .filter(|p| doomed.contains(&p.ppid) && !doomed.contains(&p.pid))
                    .map(|p| p.pid)
                    .collect();
                if more.is_empty() {
                    break;
                }
                doomed.extend(more);
            }
            if doomed.is_empty() {
                break;
            }
            for pid in doomed {
                // SAFETY: kill only sends a signal to a process of this cluster.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

struct Process {
    pid: i32,
    ppid: i32,
    pgid: i32,
    cmdline: String,
    cwd: String,
}

fn processes() -> Vec<Process> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd"))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Process {
            pid,
            ppid: fields.get(1).and_then(|f| f.parse().ok()).unwrap_or(0),
            pgid: fields.get(2).and_then(|f| f.parse().ok()).unwrap_or(0),
            cmdline,
            cwd,
        });
    }
    out
}

/// Reduces a copy of `script` with `--sig sig` and `args`; the result's text, and the run log.
fn reduce(
    python: &Path,
    script: &str,
    sig: &str,
    args: &[&str],
) -> Result<(String, String), String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("repro.py");
    std::fs::write(&input, script).unwrap();
    let out = common::run_with_limit(
        common::scrub()
            .arg("reduce")
            .arg(&input)
            .args(["--sig", sig, "--no-cache", "--quiet", "--python"])
            .arg(python)
            .args(args),
        Duration::from_secs(600),
    );
    if out.status.code() != Some(0) {
        return Err(format!(
            "{args:?}: exit {:?}: {}",
            out.status.code(),
            common::stderr(&out)
        ));
    }
    assert_eq!(std::fs::read_to_string(&input).unwrap(), script);
    let result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    let log = std::fs::read_to_string(dir.path().join("scrub.out/run.log")).unwrap();
    Ok((result, log))
}

#[test]
fn ray_actors_give_the_same_result_as_local_workers_at_every_jobs_in_reduce_and_bench() {
    let Some(python) = ray_python() else { return };
    let cluster = Cluster::start(&python);
    let corpus = common::repo_root().join("corpus");
    let mut names = Vec::new();
    for name in [
        "unit_registry",
        "invoice_decimal",
        "config_validation_multiline",
    ] {
        let case = scrub::corpus::load(&corpus)
            .unwrap()
            .into_iter()
            .find(|c| c.name == name)
            .unwrap();
        let script = std::fs::read_to_string(case.script()).unwrap();
        let sig = case.spec.signature.as_str();
        let (local, _) = reduce(&python, &script, sig, &["--jobs", "2"]).unwrap();
        for jobs in ["1", "2", "8"] {
            if jobs != "2" {
                let (local_n, _) = reduce(&python, &script, sig, &["--jobs", jobs]).unwrap();
                assert_eq!(local_n, local, "{name}: local --jobs {jobs}");
            }
            let (on_ray, log) = reduce(
                &python,
                &script,
                sig,
                &["--jobs", jobs, "--ray", &cluster.address],
            )
            .unwrap();
            assert_eq!(on_ray, local, "{name}: --ray --jobs {jobs}\n{log}");
            assert!(
                log.contains(&format!("workers: Ray actors ({jobs} on 2 nodes")),
                "{log}"
            );
        }
        names.push(name);
    }
    // `scrub bench --ray` reduces the same cases, on temp copies, to the same scripts.
    let json = tempfile::NamedTempFile::new().unwrap();
    let mut bench = common::scrub();
    bench.arg("bench").arg(&corpus);
    for name in &names {
        bench.args(["--filter", name]);
    }
    let out = common::run_with_limit(
        bench
            .args([
                "--jobs",
                "2",
                "--quiet",
                "--ray",
                &cluster.address,
                "--python",
            ])
            .arg(&python)
            .arg("--json")
            .arg(json.path()),
        Duration::from_secs(600),
    );
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(json.path()).unwrap()).unwrap();
    for name in &names {
        let case = report["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == *name)
            .unwrap_or_else(|| panic!("{name} is missing from {report}"));
        // bench reduces exhaustively: the same script with no target, as on a local run.
        let (exhaustive, _) = reduce(
            &python,
            &std::fs::read_to_string(corpus.join(name).join("repro.py")).unwrap(),
            report_sig(&corpus, name).as_str(),
            &["--jobs", "2", "--exhaustive"],
        )
        .unwrap();
        assert_eq!(case["final_text"], exhaustive.as_str(), "{name}");
    }

    // `scrub issue --batch --ray`: one connection for the batch, the same minimized repro as
    // a local triage.
    let fixtures = common::repo_root().join("tests/fixtures");
    let batch = tempfile::tempdir().unwrap();
    let list = batch.path().join("backlog.txt");
    std::fs::write(
        &list,
        format!(
            "{}\n{}\n",
            fixtures.join("issues/scheduler_resume.json").display(),
            fixtures.join("issues/rfc_feature.json").display()
        ),
    )
    .unwrap();
    let triage = |extra: &[&str]| {
        let root = tempfile::tempdir().unwrap();
        let mut cmd = common::scrub();
        cmd.arg("issue")
            .args([
                "--batch",
                list.to_str().unwrap(),
                "--json",
                "--trust-author",
            ])
            .args(["--jobs", "2", "--python"])
            .arg(&python)
            .args(extra)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    fixtures.join("gh").display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("GH_STUB_LOG", root.path().join("gh.log"))
            .env(
                "GH_STUB_ISSUE",
                fixtures.join("issues/scheduler_resume.json"),
            )
            .env("GH_STUB_STATE", root.path().join("subscription"))
            .env("SCRUB_ISSUE_TMP", root.path());
        let out = common::run_with_limit(&mut cmd, Duration::from_secs(600));
        assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
        let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rows.as_array().unwrap().len(), 2, "{rows}");
        assert_eq!(rows[1]["report"]["category"], "feature");
        let minimized = &rows[0]["report"]["minimized"];
        std::fs::read_to_string(minimized["path"].as_str().unwrap()).unwrap()
    };
    let local = triage(&[]);
    assert_eq!(triage(&["--ray", &cluster.address]), local);
}

fn report_sig(corpus: &Path, name: &str) -> String {
    scrub::corpus::load(corpus)
        .unwrap()
        .into_iter()
        .find(|c| c.name == name)
        .unwrap()
        .spec
        .signature
}

/// A repro whose every candidate sleeps, so that an actor can be killed while it runs one; an
/// exit status, so that the reduction goes statement by statement.
fn slow_script() -> String {
    let mut script = String::from("import sys\nimport time\ntime.sleep(0.5)\n");
    for i in 0..24 {
        script.push_str(&format!("x{i} = {i}\n"));
    }
    script.push_str("if x3 + x5 == 8:\n    sys.exit(3)\n");
    script
}

#[test]
fn a_killed_actor_is_restarted_and_its_candidate_run_again_with_the_same_result() {
    let Some(python) = ray_python() else { return };
    let cluster = Cluster::start(&python);
    let script = slow_script();
    let sig = "exit:3";
    let (local, _) = reduce(&python, &script, sig, &["--jobs", "2", "--exhaustive"]).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("repro.py");
    std::fs::write(&input, &script).unwrap();
    let mut child = common::scrub()
        .arg("reduce")
        .arg(&input)
        .args([
            "--sig",
            sig,
            "--no-cache",
            "--quiet",
            "--jobs",
            "2",
            "--exhaustive",
        ])
        .args(["--ray", &cluster.address, "--python"])
        .arg(&python)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The bridge reports each actor's pid in the run log; kill actor 1 while it runs a candidate.
    let log_path = dir.path().join("scrub.out/run.log");
    let start = Instant::now();
    let victim = loop {
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        if let Some(pid) = log
            .lines()
            .find_map(|l| l.strip_prefix("ray: actor 1 pid "))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|pid| pid.parse::<i32>().ok())
        {
            break pid;
        }
        if start.elapsed() > Duration::from_secs(300) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("no actor pid in the run log:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(400));
    // SAFETY: kill only sends a signal to the actor process the run log named.
    unsafe {
        libc::kill(victim, libc::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the run did not finish after its actor was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{status:?}: {err}");
    let result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert_eq!(result, local, "{log}");
    assert!(
        log.contains(&format!("ray: actor 1 (pid {victim}) died")) && log.contains("runs again"),
        "{log}"
    );
    // No candidate left: nothing runs in a candidate's directory, on either node.
    std::thread::sleep(Duration::from_secs(2));
    let left: Vec<String> = processes()
        .into_iter()
        .filter(|p| p.cwd.contains("/scrub-ray-"))
        .map(|p| format!("{} {}", p.pid, p.cmdline))
        .collect();
    assert!(left.is_empty(), "candidates left behind: {left:?}");
    drop(cluster);
}

#[test]
fn ray_to_an_address_where_nothing_listens_is_bad_input_and_writes_nothing() {
    let Some(python) = ray_python() else { return };
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (dir, input) = common::temp_script("raise ValueError('boom')\n");
    let out = common::run_with_limit(
        common::scrub()
            .arg("reduce")
            .arg(&input)
            .args(["--ray", &format!("127.0.0.1:{port}"), "--python"])
            .arg(&python),
        Duration::from_secs(120),
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("scrub: cannot connect to the Ray cluster"),
        "{err}"
    );
    assert_eq!(common::listing(dir.path()), ["repro.py"]);
}

#[test]
fn ray_with_an_interpreter_that_lacks_ray_names_the_package() {
    // A venv without ray, made from the test interpreter.
    let base = common::python();
    let has_ray = Command::new(&base)
        .args(["-c", "import ray"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if has_ray {
        eprintln!("skipped: {base} has ray");
        return;
    }
    let (dir, input) = common::temp_script("raise ValueError('boom')\n");
    let out = common::run_with_limit(
        common::scrub()
            .arg("reduce")
            .arg(&input)
            .args(["--ray", "127.0.0.1:1", "--python", &base]),
        Duration::from_secs(120),
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("the Python package ray"), "{err}");
    assert_eq!(common::listing(dir.path()), ["repro.py"]);
}

#[test]
fn a_ray_actor_reports_each_way_a_run_ends_as_a_local_zygote_does() {
    use scrub::engine::process::Status;
    use scrub::engine::workers::{Backend, Job, Zygotes};
    let Some(python) = ray_python() else { return };
    let cluster = Cluster::start(&python);
    let (_dir, original) = common::temp_script("import json\n");
    let ray = scrub::engine::ray::Ray::connect(&python, &cluster.address, 1, None).unwrap();
    let local = Zygotes::new(python.clone(), 1);
    let limit = 100 << 20;
    let cases = [
        ("print('out')\nraise SystemExit(3)\n", Status::Exited(3)),
        ("import json\njson.loads('{')\n", Status::Exited(1)),
        (
            "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n",
            Status::Signaled(libc::SIGSEGV),
        ),
        ("import time\ntime.sleep(60)\n", Status::TimedOut),
        (
            "import time\nx = bytearray(400 << 20)\ntime.sleep(60)\n",
            Status::OutOfMemory,
        ),
    ];
    for (text, expected) in cases {
        // Short only where the timeout is the point: a loaded machine may take seconds to
        // fork and fill 400 MiB.
        let timeout = match expected {
            Status::TimedOut => 3,
            _ => 30,
        };
        let job = Job {
            text,
            original: &original,
            env: &[],
            probe: None,
            timeout: Duration::from_secs(timeout),
            max_memory: Some(limit),
        };
        let here = local.run(0, &job).unwrap();
        let there = ray.run(0, &job).unwrap();
        assert_eq!(there.status, expected, "{text}");
        assert_eq!(there.status, here.status, "{text}");
        assert_eq!(there.stdout, here.stdout, "{text}");
        assert_eq!(
            there.stderr.lines().last(),
            here.stderr.lines().last(),
            "{text}"
        );
        if there.status == Status::OutOfMemory {
            assert!(there.peak_rss > limit, "{text}: {}", there.peak_rss);
        }
    }
    drop(ray);
    drop(cluster);
}
