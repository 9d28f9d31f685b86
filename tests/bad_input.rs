//! Every bad input gets a one-line error and exit 2 (1 for an original that does not fail),
//! and nothing is written.

mod common;

use std::time::Duration;

use common::*;

/// Runs `scrub reduce` on `repro.py` holding `bytes` with `args`; returns (exit code, stderr).
/// Asserts that the directory holds nothing new afterwards and the input is unchanged.
fn reduce_in_place(bytes: &[u8], args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repro.py");
    std::fs::write(&path, bytes).unwrap();
    let out = run_with_limit(
        scrub()
            .arg("reduce")
            .arg(&path)
            .args(args)
            .arg("--no-cache"),
        Duration::from_secs(60),
    );
    assert_eq!(
        listing(dir.path()),
        vec!["repro.py"],
        "nothing may be written next to the input"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the input must not change"
    );
    let err = stderr(&out);
    (out.status.code().unwrap(), err)
}

fn assert_one_line(err: &str, needle: &str) {
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "one line expected, got: {err}"
    );
    assert!(err.starts_with("scrub: "), "{err}");
    assert!(err.contains(needle), "{needle:?} not in {err:?}");
}

#[test]
fn a_missing_file_is_refused() {
    let out = run_with_limit(
        scrub().args(["reduce", "/nonexistent/repro.py"]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "no such file");
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_limit(
        scrub().arg("reduce").arg(dir.path()),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "is a directory");
    assert!(listing(dir.path()).is_empty());
}

#[test]
fn a_binary_file_is_refused() {
    let (code, err) = reduce_in_place(b"\x7fELF\x00\x01\x02", &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "binary");
}

#[test]
fn a_file_that_is_not_utf8_is_refused() {
    let (code, err) = reduce_in_place(b"x = '\xff\xfe'\nraise ValueError(x)\n", &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "not UTF-8");
}

#[test]
fn an_empty_file_is_refused() {
    let (code, err) = reduce_in_place(b"\n\n", &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "is empty");
}

#[test]
fn a_syntax_error_is_refused_with_its_line() {
    let (code, err) = reduce_in_place(b"import os\n\ndef f(:\n    pass\n", &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "syntax error at line 3");
}

#[test]
fn a_ten_megabyte_file_is_refused() {
    let big = "x = 1\n".repeat(10 * 1024 * 1024 / 6);
    let (code, err) = reduce_in_place(big.as_bytes(), &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "MB");
}

#[test]
fn a_malformed_signature_is_refused() {
    for sig in [
        "",
        ": only a message",
        "two words: x",
        "signal:SIGNOPE",
        "exit:x",
    ] {
        let (code, err) = reduce_in_place(b"raise ValueError('x')\n", &["--sig", sig]);
        assert_eq!(code, 2, "{sig:?}");
        assert_one_line(&err, "invalid --sig");
    }
}

#[test]
fn a_malformed_memory_limit_is_refused() {
    for size in ["lots", "0", "-2G", "8X"] {
        let flag = format!("--max-memory={size}");
        let (code, err) = reduce_in_place(b"raise ValueError('x')\n", &[&flag]);
        assert_eq!(code, 2, "{size:?}");
        assert_one_line(&err, "invalid value");
        assert_one_line(&err, "--max-memory");
    }
}

#[test]
fn a_gpu_id_that_is_not_a_number_is_refused() {
    let (code, err) = reduce_in_place(b"raise ValueError('x')\n", &["--gpus", "0,first"]);
    assert_eq!(code, 2);
    assert_one_line(&err, "\"first\" is not a GPU id");
}

#[test]
fn cold_workers_and_ray_actors_together_are_refused_in_one_line() {
    let (code, err) = reduce_in_place(b"raise ValueError('x')\n", &["--cold", "--ray", "auto"]);
    assert_eq!(code, 2);
    assert_one_line(&err, "'--cold' cannot be used with '--ray <ADDRESS>'");
    let out = run_with_limit(
        scrub().args(["bench", "corpus", "--cold", "--ray", "auto"]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "cannot be used with");
    assert!(stderr(&out).contains("--cold") && stderr(&out).contains("--ray"));
}

#[test]
fn a_cache_directory_and_no_cache_together_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // `reduce_in_place` adds `--no-cache`.
    let (code, err) = reduce_in_place(
        b"raise ValueError('x')\n",
        &["--cache-dir", cache.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "'--cache-dir <DIR>' cannot be used with '--no-cache'");
    assert!(!cache.exists());
}

#[test]
fn a_flag_the_command_line_cannot_read_is_one_line_too() {
    for flag in [
        &["--minifier", "bogus"][..],
        &["--jobs", "abc"],
        &["--no-such-flag"],
    ] {
        let (code, err) = reduce_in_place(b"raise ValueError('x')\n", flag);
        assert_eq!(code, 2, "{flag:?}");
        assert_one_line(&err, "see scrub --help");
    }
}

#[test]
fn a_missing_interpreter_is_refused() {
    let (code, err) = reduce_in_place(
        b"raise ValueError('x')\n",
        &["--python", "/nonexistent/python3"],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "not found");
}

#[test]
fn a_repro_that_passes_exits_1_and_says_so() {
    let (code, err) = reduce_in_place(b"print('all good')\n", &[]);
    assert_eq!(code, 1);
    assert_one_line(&err, "ran to completion");
}

#[test]
fn a_repro_failing_another_way_exits_1_with_the_header_it_raised() {
    let (code, err) = reduce_in_place(
        b"raise KeyError('gain')\n",
        &["--sig", "KeyError: 'calibration'"],
    );
    assert_eq!(code, 1);
    assert_one_line(&err, "KeyError: 'gain'");
}

#[test]
fn a_repro_that_hangs_exits_1_after_the_timeout() {
    let (code, err) = reduce_in_place(b"import time\ntime.sleep(600)\n", &["--timeout", "1"]);
    assert_eq!(code, 1);
    assert_one_line(&err, "timed out");
}

#[test]
fn a_signature_that_an_empty_script_matches_is_refused() {
    // An interpreter wrapper that exits 3 after every script: `exit:3` matches the empty
    // script too, so it cannot tell candidates apart.
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("python");
    let script = format!(
        "#!/bin/sh\n{} \"$@\"\n[ \"$1\" = repro.py ] && exit 3\nexit 0\n",
        python()
    );
    std::fs::write(&wrapper, script).unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let (code, err) = reduce_in_place(
        b"print('x')\n",
        &["--sig", "exit:3", "--python", wrapper.to_str().unwrap()],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "also matches an empty script");
}

#[test]
fn the_output_may_not_be_the_input() {
    let (dir, path) = temp_script("raise ValueError('x')\n");
    let out = run_with_limit(
        scrub().arg("reduce").arg(&path).arg("-o").arg(&path),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "is the input");
    assert_eq!(listing(dir.path()), vec!["repro.py"]);
}

#[test]
fn an_unknown_shell_for_completions_is_refused() {
    let out = run_with_limit(
        scrub().args(["completions", "tcsh"]),
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "invalid value 'tcsh'");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_man_page_for_an_unknown_command_is_refused() {
    let out = run_with_limit(scrub().args(["man", "nope"]), Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    assert_one_line(&stderr(&out), "no command `nope`; pick one of reduce");
    assert!(out.stdout.is_empty());
}

/// `scrub bench FIXTURE --vs PEERS ARGS` with `envs` set (and `SCRUB_SHRINKRAY_PYTHON`
/// unset unless given); returns (exit code, stderr).
fn bench_vs(peers: &str, args: &[&str], envs: &[(&str, &std::path::Path)]) -> (i32, String) {
    let mut cmd = scrub();
    cmd.arg("bench")
        .arg(repo_root().join("tests/fixtures/vs"))
        .args([
            "--vs",
            peers,
            "--quiet",
            "--jobs",
            "2",
            "--python",
            &python(),
        ])
        .args(args)
        .env_remove("SCRUB_SHRINKRAY_PYTHON");
    for (key, value) in envs {
        cmd.env(key, value);
    }
    let out = run_with_limit(&mut cmd, Duration::from_secs(120));
    (out.status.code().unwrap(), stderr(&out))
}

#[test]
fn an_unknown_peer_is_refused() {
    let (code, err) = bench_vs("pysource-minimize,creduce", &[], &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "invalid value 'creduce' for '--vs");
}

#[test]
fn peers_on_a_ray_cluster_are_refused() {
    let (code, err) = bench_vs("pysource-minimize", &["--ray", "127.0.0.1:1"], &[]);
    assert_eq!(code, 2);
    assert_one_line(
        &err,
        "'--vs <PEER,...>' cannot be used with '--ray <ADDRESS>'",
    );
}

#[test]
fn treereduce_is_refused_with_why_it_cannot_run() {
    let (code, err) = bench_vs("treereduce", &[], &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "treereduce has no Python front end");
}

#[test]
fn a_peer_that_is_not_installed_is_refused_with_the_command_that_installs_it() {
    let empty = tempfile::tempdir().unwrap();
    let (code, err) = bench_vs(
        "pysource-minimize",
        &[],
        &[("SCRUB_VENV_DIR", empty.path())],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "`scripts/peers-venv pysource-minimize`");
    assert!(err.contains("pysource-minimize is not installed"), "{err}");
}

#[test]
fn shrinkray_without_a_python_of_3_12_is_refused() {
    let empty = tempfile::tempdir().unwrap();
    let (code, err) = bench_vs(
        "shrinkray",
        &[],
        &[
            ("SCRUB_VENV_DIR", empty.path()),
            ("PYENV_ROOT", empty.path()),
            ("SCRUB_SHRINKRAY_PYTHON", std::path::Path::new(&python())),
        ],
    );
    assert_eq!(code, 2);
    assert_one_line(&err, "shrinkray needs Python 3.12 or later");
}

#[test]
fn a_budget_that_is_not_a_time_is_refused() {
    let (code, err) = bench_vs("pysource-minimize", &["--budget", "0"], &[]);
    assert_eq!(code, 2);
    assert_one_line(&err, "--budget must be a positive number of seconds");
}

#[test]
fn a_peer_that_crashes_is_one_line_and_exit_2() {
    // A venv whose python dies as a broken install would.
    let venvs = tempfile::tempdir().unwrap();
    let venv = venvs.path().join("pysource-minimize-0.10.1-py3.11");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join(".complete"), "").unwrap();
    let python = venv.join("bin/python");
    std::fs::write(
        &python,
        "#!/bin/sh\necho 'ModuleNotFoundError: No module named pysource_minimize' >&2\nexit 1\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&python).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&python, perms).unwrap();
    let (code, err) = bench_vs(
        "pysource-minimize",
        &[],
        &[("SCRUB_VENV_DIR", venvs.path())],
    );
    assert_eq!(code, 2, "{err}");
    assert_one_line(
        &err,
        "pysource-minimize crashed on ratio_parser_registry: exited with status 1",
    );
    assert!(err.contains("No module named pysource_minimize"), "{err}");
}
