//! Shared pieces of the integration tests: the built binary, temp copies, outer timeouts.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use scrub::corpus::Case;
use scrub::engine::process::{Outcome, RunSpec, run_script};
use scrub::engine::verdict::{Anchor, Signature, Verdict};
use scrub::engine::workers::Workers;

pub fn scrub() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scrub"));
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `cmd` to completion, killing it and failing the test after `limit`.
pub fn run_with_limit(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    // Drain the pipes on threads so that a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut buf).ok();
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut buf).ok();
        buf
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Output {
                status,
                stdout: out_reader.join().unwrap(),
                stderr: err_reader.join().unwrap(),
            };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A temp dir holding `repro.py` with `text`.
pub fn temp_script(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repro.py");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file in `dir`, by name, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `SCRUB_TEST_PYTHON`, or the executable behind `python3` (a launcher shim would triple
/// the cost of every run).
pub fn python() -> String {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            std::env::var("SCRUB_TEST_PYTHON").unwrap_or_else(|_| {
                let out = Command::new("python3")
                    .args(["-c", "import sys; print(sys.executable)"])
                    .output()
                    .expect("python3 on PATH");
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            })
        })
        .clone()
}

/// The interpreter of the pinned PyTorch venv, from `SCRUB_TORCH_PYTHON` (which `scripts/test`
/// sets); see [`needed_python`].
pub fn torch_python() -> Option<PathBuf> {
    needed_python("SCRUB_TORCH_PYTHON")
}

/// The interpreter that `var` names, for a test that needs torch or Ray (`scripts/test` sets
/// both). Without it the test fails, unless `SCRUB_ALLOW_SKIP=1`, which skips it with a
/// message: a run that leaves them out says so, instead of passing as if they had run.
pub fn needed_python(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if std::env::var("SCRUB_ALLOW_SKIP").is_ok_and(|v| v == "1") => {
            eprintln!("skipped: {var} is not set (SCRUB_ALLOW_SKIP=1)");
            None
        }
        _ => panic!(
            "{var} is not set: run the tests with scripts/test, or set SCRUB_ALLOW_SKIP=1 to skip the tests that need it"
        ),
    }
}

/// `SCRUB_CORPUS_FILTER`, the part of a case's name that picks the cases a corpus test runs
/// (empty: all of them). A filter that names no case of the corpus fails the test: a typo
/// would otherwise run nothing and pass.
pub fn corpus_filter() -> String {
    let filter = std::env::var("SCRUB_CORPUS_FILTER").unwrap_or_default();
    if !filter.is_empty() {
        let cases = scrub::corpus::load(&repo_root().join("corpus")).unwrap();
        assert!(
            cases.iter().any(|c| c.name.contains(&filter)),
            "SCRUB_CORPUS_FILTER={filter} matches no corpus case; give part of a case name (see corpus/)"
        );
    }
    filter
}

/// Whether `text` fails as `sig` says in at least one of `tries` cold runs.
pub fn reproduces(text: &str, python: &Path, sig: &Signature, tries: usize) -> bool {
    reproduction(text, python, sig, tries).is_some()
}

/// The first of `tries` cold runs of `text` that fails as `sig` says.
pub fn reproduction(text: &str, python: &Path, sig: &Signature, tries: usize) -> Option<Outcome> {
    let spec = RunSpec {
        python,
        timeout: Duration::from_secs(120),
        env: &[],
        max_memory: None,
    };
    (0..tries)
        .map(|_| run_script(text, &spec).unwrap())
        .find(|outcome| sig.judge(outcome) == Verdict::Same)
}

/// A corpus case reduced by [`reduce_case`].
pub struct Reduced {
    /// Its figures, one line.
    pub row: String,
    pub result: String,
    /// `scrub reduce --json`.
    pub summary: serde_json::Value,
    /// A cold run of the result that failed the same way.
    pub outcome: Outcome,
    /// Where it ran: `repro.py`, `repro.min.py` and `scrub.out/`.
    pub dir: tempfile::TempDir,
}

/// Reduces a temp copy of `case` with `--exhaustive --jobs 2` and checks the result: the input is
/// left alone, the result fails the same way on its own and meets the case's bound. `Ok` holds
/// the figures row, the result, the `--json` summary and the run that reproduced it.
pub fn reduce_case(case: &Case, python: &Path) -> Result<Reduced, String> {
    reduce_case_with(case, python, &[])
}

/// [`reduce_case`] with `extra` arguments (`--cold`).
pub fn reduce_case_with(case: &Case, python: &Path, extra: &[&str]) -> Result<Reduced, String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("repro.py");
    std::fs::copy(case.script(), &input).unwrap();
    let original = std::fs::read_to_string(&input).unwrap();
    // A derived case is reduced as a user without a signature would: scrub names the failure.
    let sig: &[&str] = if case.spec.derive {
        &[]
    } else {
        &["--sig", &case.spec.signature]
    };
    let out = run_with_limit(
        scrub()
            .arg("reduce")
            .arg(&input)
            .args(sig)
            .args([
                "--exhaustive",
                "--jobs",
                "2",
                "--no-cache",
                "--json",
                "--quiet",
            ])
            .args(extra)
            .arg("--python")
            .arg(python),
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
    if !summary["divergence"].is_null() {
        return Err(format!(
            "a fresh run rejected what the warm workers accepted: {}",
            summary["divergence"]
        ));
    }
    let sig = Signature::parse(&case.spec.signature).unwrap();
    let tries = if case.spec.flaky { 20 } else { 1 };
    let Some(outcome) = reproduction(&result, python, &sig, tries) else {
        return Err(format!("the result does not reproduce:\n{result}"));
    };
    if let Some(lost) = case
        .spec
        .keeps
        .iter()
        .find(|k| !outcome.stderr.contains(*k))
    {
        return Err(format!(
            "the result's failure no longer shows {lost:?} (another bug):\n{result}\n{}",
            outcome.stderr
        ));
    }
    if let Some(lost) = case.spec.keeps_code.iter().find(|k| !result.contains(*k)) {
        return Err(format!(
            "the result no longer holds {lost:?}, the suspect (another bug):\n{result}"
        ));
    }
    let lines = scrub_reducers::count_lines(&result);
    // Where the time went, stage by stage (`baseline 2.1 passes 5.0 …`).
    let stages: Vec<String> = summary["stage_seconds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|lap| lap["seconds"].as_f64().unwrap_or(0.0) >= 0.1)
        .map(|lap| {
            format!(
                "{} {}",
                lap["stage"].as_str().unwrap_or("?"),
                lap["seconds"]
            )
        })
        .collect();
    let row = format!(
        "{:<28} {:>4} -> {:>3} lines  {:>5} calls  {:>4} hits  {:>6.1} s  bound {}  ({})",
        case.name,
        summary["original_lines"],
        lines,
        summary["oracle_calls"],
        summary["cache_hits"],
        summary["wall_seconds"].as_f64().unwrap_or(0.0),
        case.spec.bound,
        stages.join(", ")
    );
    if lines > case.spec.bound {
        return Err(format!("{row}: over the bound:\n{result}"));
    }
    if let Some(bytes) = case.spec.byte_bound
        && result.len() > bytes
    {
        return Err(format!(
            "{row}: {} bytes, over the byte bound {bytes}:\n{result}",
            result.len()
        ));
    }
    Ok(Reduced {
        row,
        result,
        summary,
        outcome,
        dir,
    })
}

/// Workers for checking many corpus scripts: forked, two at a time, from a zygote that has
/// imported what `warm_on` imports (a torch script's import is paid once, not per script).
pub fn warm_workers(python: &Path, warm_on: &Path) -> Workers {
    let mut workers = Workers::new(python.to_path_buf(), Duration::from_secs(120), 2, vec![]);
    workers.warm = Some(warm_on.to_path_buf());
    workers
}

/// The signature and anchor that scrub derives from a run of a case's repro.
pub struct Derived {
    pub sig: Signature,
    anchor: Anchor,
    /// The original's calls into libraries, from its run under the kinds runner.
    kinds: Vec<scrub::engine::kinds::Call>,
}

impl Derived {
    /// From the original's run, and its run under the kinds runner.
    pub fn of(repro: &str, original: &Outcome, kinds: &Outcome) -> Option<Derived> {
        Some(Derived {
            sig: Signature::derive(original)?,
            anchor: Anchor::of(repro, original, false),
            kinds: scrub::engine::kinds::calls(kinds).unwrap_or_default(),
        })
    }

    /// A run of `text` (and its run under the kinds runner), judged: `Ok(true)` the same
    /// failure, `Ok(false)` a near miss (the same class, another bug, or a library call that
    /// received a value of another kind), `Err` with its stderr for any other end.
    pub fn judge(&self, text: &str, out: &Outcome, kinds: &Outcome) -> Result<bool, String> {
        let changed = scrub::engine::kinds::calls(kinds)
            .and_then(|calls| scrub::engine::kinds::changed(&self.kinds, &calls));
        match self.sig.judge(out) {
            Verdict::Same => Ok(self.anchor.moved(text, out).is_none() && changed.is_none()),
            Verdict::NearMiss(_) => Ok(false),
            Verdict::Other => Err(out.stderr.clone()),
        }
    }
}

/// For every derived case in `cases`, why its `near.py` (the same class and first line,
/// another bug) is not refused as a near miss by the signature and anchor derived from its
/// repro, nor by `refuses` (a case's control, which must pass for a candidate to count), or
/// its `hand.py` not taken for the same failure: one line each, none when all are judged as
/// they should. Every script runs on `workers`.
pub fn misjudged(
    cases: &[&Case],
    workers: &Workers,
    refuses: &dyn Fn(&Case, &str) -> bool,
) -> Vec<String> {
    let read = |case: &Case, name: &str| {
        std::fs::read_to_string(case.dir.join(name))
            .unwrap_or_else(|e| panic!("{}: {name}: {e}", case.name))
    };
    let texts: Vec<[String; 3]> = cases
        .iter()
        .map(|c| [read(c, "repro.py"), read(c, "near.py"), read(c, "hand.py")])
        .collect();
    let all: Vec<&str> = texts.iter().flatten().map(String::as_str).collect();
    let outcomes: Vec<Outcome> = workers
        .run_all(&all)
        .into_iter()
        .map(|o| o.expect("a corpus script runs"))
        .collect();
    // Each case's scripts run under the runner for the signature its repro derives.
    let kinds: Vec<Outcome> = all
        .iter()
        .zip(outcomes.chunks(3).flat_map(|runs| [&runs[0]; 3]))
        .map(|(text, repro)| {
            let sig = Signature::derive(repro).unwrap_or(Signature::Exit(1));
            workers
                .probe(text, scrub::engine::kinds::runner(&sig, false))
                .expect("a corpus script runs")
        })
        .collect();
    let mut out = Vec::new();
    for (((case, [repro, near, hand]), runs), kinds) in cases
        .iter()
        .zip(&texts)
        .zip(outcomes.chunks(3))
        .zip(kinds.chunks(3))
    {
        let Some(derived) = Derived::of(repro, &runs[0], &kinds[0]) else {
            out.push(format!("{}: the repro did not fail", case.name));
            continue;
        };
        let sig = &derived.sig;
        match derived.judge(near, &runs[1], &kinds[1]) {
            Ok(false) => {}
            Ok(true) if refuses(case, near) => {}
            Ok(true) => out.push(format!("{}: near.py was taken for {sig}", case.name)),
            Err(e) => out.push(format!(
                "{}: near.py is not even a near miss:\n{e}",
                case.name
            )),
        }
        match derived.judge(hand, &runs[2], &kinds[2]) {
            Ok(true) => {}
            Ok(false) => out.push(format!("{}: hand.py is a near miss of {sig}", case.name)),
            Err(e) => out.push(format!("{}: hand.py does not fail so:\n{e}", case.name)),
        }
    }
    out
}

/// Corpus cases for tests that take them one at a time from one list, so that two tests
/// reduce side by side until the last case (a reduction alone leaves a core idle in its
/// serial stages: the original's runs, the final fresh check).
pub struct Queue(std::sync::Mutex<Vec<Case>>);

impl Queue {
    /// The cases, taken from the last one.
    pub fn new(cases: Vec<Case>) -> Queue {
        Queue(std::sync::Mutex::new(cases))
    }

    /// Checks each case it takes with `check` (`Ok` with its figures row, or why it failed)
    /// until none is left, then fails with the names of those that failed.
    pub fn drain(&self, check: impl Fn(&Case) -> Result<String, String>) {
        let mut failures = Vec::new();
        loop {
            // Taken in a statement of its own: the lock is not held while the case runs.
            let next = self.0.lock().unwrap().pop();
            let Some(case) = next else { break };
            match check(&case) {
                Ok(row) => eprintln!("{row}"),
                Err(why) => {
                    eprintln!("{:<28} FAILED: {why}", case.name);
                    failures.push(case.name.clone());
                }
            }
        }
        assert!(failures.is_empty(), "failed: {failures:?}");
    }
}
