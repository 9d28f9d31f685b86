//! `scrub reduce` end to end on small real scripts: cache, determinism, JSON, Ctrl-C.

mod common;

use std::time::Duration;

use common::*;

const SCRIPT: &str = r#"import json
import logging
import os

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("demo")

DEFAULTS = {"retries": 3, "gain": 1.5}


def load_settings(path=None):
    settings = dict(DEFAULTS)
    if path and os.path.exists(path):
        with open(path) as fh:
            settings.update(json.load(fh))
    return settings


def apply(settings):
    try:
        settings["retries"] += 1
    except KeyError:
        log.warning("no retries")
    return settings["calibration"]


def main():
    settings = load_settings()
    for key in sorted(settings):
        log.info("%s=%s", key, settings[key])
    print(apply(settings))


if __name__ == "__main__":
    main()
"#;

fn reduce(path: &std::path::Path, extra: &[&str]) -> std::process::Output {
    run_with_limit(
        scrub()
            .arg("reduce")
            .arg(path)
            .args(["--json", "--quiet", "--exhaustive"])
            .args(extra),
        Duration::from_secs(300),
    )
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_second_identical_run_is_answered_from_the_cache() {
    let (dir, path) = temp_script(SCRIPT);
    let cache = dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    let first = json(&reduce(
        &path,
        &["--cache-dir", cache, "--sig", "KeyError: 'calibration'"],
    ));
    assert!(first["oracle_calls"].as_u64().unwrap() > 0);
    let second = json(&reduce(
        &path,
        &["--cache-dir", cache, "--sig", "KeyError: 'calibration'"],
    ));
    assert_eq!(second["oracle_calls"], 0, "{second}");
    // Memory figures: the limit (a share of the machine by default) and what runs held.
    assert!(first["max_memory"].as_u64().unwrap() > 0, "{first}");
    assert!(
        first["peak_rss_original"].as_u64().unwrap() > 1 << 20,
        "{first}"
    );
    assert!(
        first["peak_rss_candidate"].as_u64().unwrap() > 1 << 20,
        "{first}"
    );
    assert_eq!(second["final_bytes"], first["final_bytes"]);
    assert!(second["cache_hits"].as_u64().unwrap() > 0);
}

#[test]
fn the_result_is_the_same_for_any_number_of_jobs() {
    let (dir, path) = temp_script(SCRIPT);
    let one = dir.path().join("one.py");
    let two = dir.path().join("two.py");
    json(&reduce(
        &path,
        &["--no-cache", "--jobs", "1", "-o", one.to_str().unwrap()],
    ));
    json(&reduce(
        &path,
        &["--no-cache", "--jobs", "2", "-o", two.to_str().unwrap()],
    ));
    // More jobs than a window: later windows are judged speculatively.
    let sixteen = dir.path().join("sixteen.py");
    json(&reduce(
        &path,
        &[
            "--no-cache",
            "--jobs",
            "16",
            "-o",
            sixteen.to_str().unwrap(),
        ],
    ));
    let (one, two, sixteen) = (
        std::fs::read_to_string(one).unwrap(),
        std::fs::read_to_string(two).unwrap(),
        std::fs::read_to_string(sixteen).unwrap(),
    );
    assert_eq!(one, two);
    assert_eq!(one, sixteen);
}

#[test]
fn the_signature_is_derived_printed_and_the_result_written_beside_the_input() {
    // The plain command goes to the fixpoint; a line the user fenced stays, without the fence.
    let script = SCRIPT.replace(
        "    settings = load_settings()\n",
        "    settings = load_settings()\n    log.debug('loaded')  # scrub: keep\n",
    );
    let (dir, path) = temp_script(&script);
    let out = run_with_limit(
        scrub().arg("reduce").arg(&path).arg("--no-cache"),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("signature: KeyError: 'calibration'"),
        "{}",
        stderr(&out)
    );
    let result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    assert!(scrub_reducers::count_lines(&result) <= 9, "{result}");
    assert!(result.contains("log.debug('loaded')\n"), "{result}");
    assert!(!result.contains("scrub:"), "{result}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        script,
        "the input is never written"
    );
    assert!(dir.path().join("scrub.out/result.diff").exists());
    assert!(dir.path().join("scrub.out/run.log").exists());
    // The result fails the same way on its own.
    let run = std::process::Command::new(python())
        .arg(dir.path().join("repro.min.py"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&run.stderr).contains("KeyError: 'calibration'"));
}

#[test]
fn the_json_summary_has_every_documented_field() {
    let (_dir, path) = temp_script(SCRIPT);
    let summary = json(&reduce(&path, &["--no-cache"]));
    for field in [
        "original_lines",
        "original_bytes",
        "final_lines",
        "final_bytes",
        "oracle_calls",
        "cache_hits",
        "wall_seconds",
        "signature",
        "output",
        "stop_reason",
        "passes",
    ] {
        assert!(
            summary.get(field).is_some(),
            "{field} missing from {summary}"
        );
    }
    let passes = summary["passes"].as_array().unwrap();
    assert!(
        passes
            .iter()
            .all(|p| p["name"].is_string() && p["candidates"].is_u64() && p["accepted"].is_u64())
    );
    assert_eq!(summary["stop_reason"], "fixpoint");
    assert!(summary["final_lines"].as_u64() < summary["original_lines"].as_u64());
}

#[test]
fn ctrl_c_stops_the_workers_and_keeps_the_best_result_so_far() {
    // Every candidate that still fails sleeps first, so the run is slow enough to interrupt.
    // Every run leaves its pid in `pids/` and then sleeps, in lines that `# scrub: keep`
    // protects, so the run is slow enough to interrupt, and none of its processes may remain.
    let (dir, path) = temp_script("");
    let pids = dir.path().join("pids");
    std::fs::create_dir(&pids).unwrap();
    let prologue = format!(
        "open({:?} + '/' + str(__import__('os').getpid()), 'w')  # scrub: keep\n__import__('time').sleep(0.5)  # scrub: keep\n",
        pids.to_str().unwrap()
    );
    std::fs::write(&path, format!("{prologue}{SCRIPT}")).unwrap();
    let child = scrub()
        .arg("reduce")
        .arg(&path)
        .args([
            "--no-cache",
            "--exhaustive",
            "--jobs",
            "2",
            "--sig",
            "KeyError",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("repro.partial.py").exists());
    assert!(
        !dir.path().join("repro.min.py").exists(),
        "a partial result is never presented as final"
    );
    // No candidate process is left behind.
    let started = listing(&pids);
    assert!(
        !started.is_empty(),
        "no candidate ran before the interruption"
    );
    // The kernel kills a worker's children when it dies (their parent-death signal), which
    // takes it a moment on a busy machine: what still runs a second later is left behind.
    let running = || -> Vec<&String> {
        started
            .iter()
            .filter(|pid| std::path::Path::new(&format!("/proc/{pid}/cwd")).exists())
            .collect()
    };
    // Nor a warm worker: their command lines name the input.
    let input = path.to_str().unwrap();
    let workers = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(input))
            .collect()
    };
    let gone = |deadline: std::time::Instant| loop {
        if running().is_empty() && workers().is_empty() {
            return true;
        }
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if !gone(std::time::Instant::now() + Duration::from_secs(1)) {
        panic!(
            "left behind: candidates {:?}, warm workers {:?}",
            running(),
            workers()
        );
    }
}

/// Inductor puts a whole compiler log into its exception; the traceback before it and the
/// header must survive whatever the message's size.
const HUGE_MESSAGE: &str = r#"import sys

def compile_kernel(name):
    log = "".join(f"warning: unused variable 'tmp{i}' [-Wunused-variable]\n" for i in range(20000))
    raise RuntimeError(f"C++ compile error in {name}\n{log}error: 'tmp0' was not declared")

for step in range(3):
    print("step", step, file=sys.stderr)
compile_kernel("kernel_0")
"#;

#[test]
fn a_failure_whose_message_carries_a_megabyte_of_text_is_judged_and_reduced() {
    for mode in [&[][..], &["--cold"][..]] {
        let (dir, path) = temp_script(HUGE_MESSAGE);
        let sig = [
            "--sig",
            "RuntimeError: C++ compile error in kernel_0",
            "--no-cache",
        ];
        let out = reduce(&path, &[&sig[..], mode].concat());
        let report = json(&out);
        assert_eq!(report["verified"], true, "{report}");
        let min = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
        assert!(min.contains("C++ compile error in"), "{min}");
        assert!(report["final_lines"].as_u64().unwrap() < 6, "{min}");
    }
}

/// A script that names `torch.compile` and fails as inductor does, without torch: what the
/// minifier stage decides is in the run log, whether or not it runs.
fn compiled_failure(padding: usize) -> String {
    let mut text = String::from(
        "class InductorError(Exception):\n    pass\n\n\nBACKEND = \"torch.compile\"\n",
    );
    for i in 0..padding {
        text.push_str(&format!("step_{i} = {i} * 2\n"));
    }
    text.push_str("raise InductorError(\"CppCompileError: C++ compile error\")\n");
    text
}

#[test]
fn the_minifier_stage_is_skipped_on_a_small_script_and_tried_on_a_large_one() {
    let minifier_line = |padding: usize| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repro.py");
        std::fs::write(&path, compiled_failure(padding)).unwrap();
        let sig = "InductorError: CppCompileError";
        json(&reduce(&path, &["--sig", sig, "--jobs", "1"]));
        let log = std::fs::read_to_string(dir.path().join("scrub.out/run.log")).unwrap();
        log.lines()
            .find(|l| l.starts_with("minifier:"))
            .unwrap_or_else(|| panic!("no minifier line in the run log:\n{log}"))
            .to_string()
    };
    let small = minifier_line(4);
    assert!(
        small.contains("not run: the original is 8 lines"),
        "{small}"
    );
    // Past the size, the stage runs (here it finds no torch to dump a graph with).
    let large = minifier_line(16);
    assert!(!large.contains("lines: on a script this small"), "{large}");
    assert!(large.contains("dumped nothing"), "{large}");
}

/// A script that a fork of a warm worker runs unlike a fresh process (its parent is Python
/// there): without `checked`, a fresh run exits cleanly, a warm one still fails. The lines
/// marked keep read the parent in every candidate.
const DIVERGES: &str = r#"import os

# A fork of a warm worker has a Python parent; a fresh `python repro.py` has scrub's.
with open(f"/proc/{os.getppid()}/comm") as f:  # scrub: keep
    fresh = not f.read().startswith("python")  # scrub: keep
checked = True
limits = {"rows": 10, "cols": 4}
rows = limits["rows"] * limits["cols"]
if fresh and not globals().get("checked"):  # scrub: keep
    raise SystemExit(0)  # scrub: keep
raise ValueError(f"too many rows: {rows}")
"#;

#[test]
fn a_warm_step_that_a_fresh_run_rejects_is_recovered_cold_to_the_cold_result() {
    let (dir, path) = temp_script(DIVERGES);
    let sig = ["--sig", "ValueError: too many rows", "--no-cache"];
    let warm = json(&reduce(&path, &[&sig[..], &["--fork"]].concat()));
    let warm_result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    let divergence = &warm["divergence"];
    assert!(divergence["contradicted"].as_u64() >= Some(1), "{warm}");
    assert!(divergence["did"].is_string(), "{warm}");
    let log = std::fs::read_to_string(dir.path().join("scrub.out/run.log")).unwrap();
    assert!(log.contains("diverged: a fresh run rejected"), "{log}");
    let cold = json(&reduce(&path, &[&sig[..], &["--cold"]].concat()));
    let cold_result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    assert!(cold["divergence"].is_null(), "{cold}");
    assert_eq!(warm_result, cold_result);
    assert!(warm_result.contains("checked = True"), "{warm_result}");
    assert_eq!(warm["verified"], true, "{warm}");
}
