//! The minifier stage: PyTorch's own minifier, run before scrub's passes on a repro that
//! fails inside `torch.compile`.
//!
//! The minifier works on the compiled FX graph, so it reaches a one-op core in tens of
//! queries where scrub's script-level passes need hundreds of compiles; but it writes that
//! core as generated code that reads its inputs from a checkpoint folder. The stage runs the
//! original under `TORCHDYNAMO_REPRO_AFTER`/`TORCHDYNAMO_REPRO_LEVEL` so that it dumps
//! `minifier_launcher.py`, runs the launcher, and turns its `repro.py` into a plain script
//! (`scrub_reducers::minified`). The caller keeps that script only if it fails the same way,
//! and reduces it with scrub's passes. Everything the minifier writes stays in the run
//! directory but its compiled kernels, which go to the inductor cache the candidates share.
//! The queries fork, side by side, from a launcher that has imported torch and warmed its
//! compiler (`forked_queries.py`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use scrub_reducers::minified::{Check, plain};
use scrub_reducers::{PythonVersion, Script};
use serde::{Deserialize, Serialize};

use crate::engine::exception::final_exception;
use crate::engine::process::Outcome;
use crate::engine::process::{RunSpec, run_in};
use crate::engine::verdict::Signature;
use crate::engine::workers::Workers;

/// Whether to run PyTorch's minifier first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Never: scrub's passes alone.
    Never,
    /// When the original fails inside `torch.compile` (a dynamo backend or inductor
    /// exception, a signal in a compiled script, a mismatch of a compiled result).
    Auto,
    /// Whenever the script calls `torch.compile`.
    Always,
}

/// The exception classes raised when a compiler backend fails, after dynamo has traced.
const BACKEND_FAILURES: &[&str] = &[
    "BackendCompilerFailed",
    "InductorError",
    "CppCompileError",
    "LoweringException",
    "CompilationError",
];

/// `TORCHDYNAMO_REPRO_LEVEL` for a crash (a signal), whose queries run in a subprocess each.
const CRASH: u8 = 3;

/// How to run the minifier on a repro.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `TORCHDYNAMO_REPRO_AFTER`: `aot` (inductor's graph) or `dynamo` (the backend's input).
    pub after: &'static str,
    /// `TORCHDYNAMO_REPRO_LEVEL`: 2 exceptions, 3 crashes (in a subprocess), 4 accuracy.
    pub level: u8,
    /// For an accuracy repro: how the plain script checks the compiled result.
    pub check: Option<Check>,
    /// How many of the minifier's queries run side by side.
    pub jobs: usize,
}

impl Plan {
    /// How the launcher is run: under `forked` (a copy of [`FORKED_QUERIES`]), which forks
    /// each query from a process that has imported torch and inductor, `jobs` side by side.
    /// Left to itself the minifier runs each query one after the other, in a process of its
    /// own for a crash (a torch import and a cold compiler per query: about 8 s of the 9
    /// each takes on two cores), else in its own process, which a crash would take down.
    /// A crash keeps the minifier's isolation for where a fork cannot run (CUDA).
    pub fn launcher_args(&self, forked: &Path) -> Vec<String> {
        let mut args = vec![
            path_text(forked),
            "minifier_launcher.py".to_string(),
            "minify".to_string(),
        ];
        if self.level != CRASH {
            args.push("--no-isolate".into());
        }
        args
    }
}

/// Runs the launcher named after it with its queries forked side by side.
pub const FORKED_QUERIES: &str = include_str!("minifier/forked_queries.py");

/// What one stage of a reduction did, for `run.log`, `--json` and `scrub issue`'s report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stage {
    pub name: String,
    /// The minifier's own queries (each a compile), when it said.
    pub queries: Option<usize>,
    /// Non-blank lines of the minifier's own result (its `repro.py`), when it wrote one.
    pub output_lines: Option<usize>,
    /// Processes run for the stage.
    pub runs: usize,
    pub seconds: f64,
    /// Of which the original's run that dumps the graph (the rest is the minifier's search).
    #[serde(default)]
    pub dump_seconds: f64,
    /// What came of it: `used` or why its result was not used.
    pub outcome: String,
}

/// The plan for `text`, which fails as `sig` says with `stderr`, or why the minifier is not
/// run.
pub fn plan(mode: Mode, text: &str, sig: &Signature, stderr: &str) -> Result<Plan, String> {
    if mode == Mode::Never {
        return Err("--minifier never".into());
    }
    if !(text.contains("torch.compile") || text.contains("_dynamo.optimize")) {
        return Err("the script does not call torch.compile".into());
    }
    let named_backend = text.contains("backend=") && !text.contains("inductor");
    let after = if named_backend { "dynamo" } else { "aot" };
    match sig {
        Signature::Signal(_) => Ok(Plan {
            after,
            level: CRASH,
            check: None,
            jobs: 1,
        }),
        Signature::Exception {
            class, substring, ..
        } if is_mismatch(class, substring.as_deref()) => Ok(Plan {
            after,
            level: 4,
            check: Some(match substring {
                Some(s) if !text.contains("assert_close") => Check::AssertAllclose(s.clone()),
                _ => Check::AssertClose,
            }),
            jobs: 1,
        }),
        Signature::Exception { class, .. } => {
            let last = class.rsplit('.').next().unwrap_or(class);
            if BACKEND_FAILURES.contains(&last)
                || raised_in_compiled_code(stderr)
                || mode == Mode::Always
            {
                Ok(Plan {
                    after,
                    level: 2,
                    check: None,
                    jobs: 1,
                })
            } else {
                Err(format!(
                    "{class} is not a compiler backend failure: the minifier has no graph to work on"
                ))
            }
        }
        Signature::Exit(_) => Err("an exit status is no failure the minifier reproduces".into()),
    }
}

/// Whether the traceback's innermost frames are inductor's compiled code (its generated
/// module, or the wrapper that calls it): a kernel that fails at run time.
fn raised_in_compiled_code(stderr: &str) -> bool {
    let frames: Vec<&str> = stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("File \""))
        .collect();
    frames
        .iter()
        .rev()
        .take(2)
        .any(|f| f.contains("torchinductor_") || f.contains("/_inductor/output_code.py"))
}

/// Whether a failure is a compiled result that does not match its reference.
fn is_mismatch(class: &str, substring: Option<&str>) -> bool {
    let last = class.rsplit('.').next().unwrap_or(class);
    last == "AccuracyError"
        || (last == "AssertionError"
            && substring.is_none_or(|s| {
                let s = s.to_lowercase();
                ["not close", "mismatch", "differ", "match"]
                    .iter()
                    .any(|w| s.contains(w))
            }))
}

/// The longest the launcher may search.
const MINIFY_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How the stage's processes run: as the candidates do.
pub struct Runner<'a> {
    pub python: &'a Path,
    /// What the candidates add to their environment (their inductor cache, their GPU).
    pub env: &'a [(String, String)],
    /// The candidates' warm workers, when they fork from ones.
    pub warm: Option<&'a Workers>,
}

/// Runs the minifier as `plan` says on `text` as `runner` says, in `dir` (created), and
/// returns the plain scripts it leads to, the tightest first (none when it led nowhere), with
/// what the stage did. `base` is how long the original takes.
pub fn run(
    plan: &Plan,
    text: &str,
    version: PythonVersion,
    dir: &Path,
    base: Duration,
    runner: &Runner,
) -> Result<(Vec<String>, Stage)> {
    let start = Instant::now();
    let mut stage = Stage {
        name: "minifier".into(),
        queries: None,
        output_lines: None,
        runs: 0,
        seconds: 0.0,
        dump_seconds: 0.0,
        outcome: String::new(),
    };
    let plain_text = search(plan, (text, version), dir, base, runner, &mut stage);
    stage.seconds = (start.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    match plain_text {
        Ok(forms) => {
            stage.outcome = "used".into();
            Ok((forms, stage))
        }
        Err(Why::Interrupted(e)) => Err(e),
        Err(Why::Not(why)) => {
            stage.outcome = why;
            Ok((Vec::new(), stage))
        }
    }
}

enum Why {
    Not(String),
    Interrupted(anyhow::Error),
}

impl From<anyhow::Error> for Why {
    fn from(e: anyhow::Error) -> Why {
        if e.is::<crate::engine::process::Interrupted>() {
            Why::Interrupted(e)
        } else {
            Why::Not(format!("{e:#}"))
        }
    }
}

fn search(
    plan: &Plan,
    (text, version): (&str, PythonVersion),
    dir: &Path,
    base: Duration,
    runner: &Runner,
    stage: &mut Stage,
) -> Result<Vec<String>, Why> {
    let (python, candidates_env) = (runner.python, runner.env);
    // The runs' working directories differ from ours: every path they are given is absolute.
    let dir = &std::path::absolute(dir).map_err(anyhow::Error::from)?;
    let work = dir.join("work");
    std::fs::create_dir_all(&work).map_err(anyhow::Error::from)?;
    std::fs::write(work.join("repro.py"), text).map_err(anyhow::Error::from)?;
    let debug = (
        "TORCH_COMPILE_DEBUG_DIR".to_string(),
        path_text(&dir.join("debug")),
    );
    let var = |name: &str, value: &str| (name.to_string(), value.to_string());
    // The graph is dumped on its way into the compiler, which a cached compile skips.
    let mut env = candidates_env.to_vec();
    env.extend([
        var("TORCHDYNAMO_REPRO_AFTER", plan.after),
        var("TORCHDYNAMO_REPRO_LEVEL", &plan.level.to_string()),
        var("TORCHINDUCTOR_FX_GRAPH_CACHE", "0"),
        var("TORCHINDUCTOR_AUTOGRAD_CACHE", "0"),
        debug.clone(),
    ]);
    let spec = RunSpec {
        python,
        timeout: (base * 10).max(Duration::from_secs(120)),
        env: &env,
        max_memory: None,
    };
    stage.runs += 1;
    let dump = run_in(&work, &dir.join("dump"), &["repro.py"], &spec)?;
    stage.dump_seconds = (dump.duration.as_secs_f64() * 10.0).round() / 10.0;
    let Some(launcher) = find(&dir.join("debug"), "minifier_launcher.py") else {
        return Err(Why::Not(format!(
            "the minifier dumped nothing ({})",
            crate::engine::verdict::describe(&dump)
        )));
    };
    // The launcher sets a fresh inductor cache of its own; it gets the candidates' instead,
    // where the kernels it compiles are likely compiled already (a cold cache costs about
    // 30 s on two cores).
    let source = std::fs::read_to_string(&launcher).map_err(anyhow::Error::from)?;
    let source = shared_cache(&source);
    std::fs::write(&launcher, source).map_err(anyhow::Error::from)?;
    let folder = launcher.parent().unwrap_or(dir).to_path_buf();
    let forked = dir.join("forked_queries.py");
    std::fs::write(&forked, FORKED_QUERIES).map_err(anyhow::Error::from)?;
    std::fs::write(dir.join("zygote.py"), crate::engine::zygote::SOURCE)
        .map_err(anyhow::Error::from)?;
    // A forked query gets as long as a candidate (see `forked_queries.py`).
    let mut env = candidates_env.to_vec();
    env.extend([
        debug,
        var("SCRUB_QUERY_TIMEOUT", &spec.timeout.as_secs().to_string()),
        var("SCRUB_QUERY_JOBS", &plan.jobs.to_string()),
    ]);
    let spec = RunSpec {
        timeout: MINIFY_TIMEOUT,
        env: &env,
        ..spec
    };
    stage.runs += 1;
    let args = plan.launcher_args(&forked);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let minify = launch(&folder, &dir.join("minify"), &args, &spec, runner.warm)?;
    stage.queries = queries(&minify.stderr).or_else(|| queries(&minify.stdout));
    let repro = std::fs::read_to_string(folder.join("repro.py")).map_err(|_| {
        let how = match final_exception(&minify.stderr) {
            Some(e) => e.header,
            None => crate::engine::verdict::describe(&minify),
        };
        Why::Not(format!("the minifier wrote no repro.py ({how})"))
    })?;
    stage.output_lines = Some(scrub_reducers::count_lines(&repro));
    let script = Script::parse(repro, version)
        .ok_or_else(|| Why::Not("the minifier's repro.py does not parse".into()))?;
    let forms = plain(&script, plan.check.as_ref(), text);
    if forms.is_empty() {
        return Err(Why::Not(
            "the minifier's repro.py is not in a shape scrub knows".into(),
        ));
    }
    Ok(forms)
}

/// Runs the launcher in `folder` with `args`, as `spec` says: forked from a warm worker when
/// there is one, where torch is imported and its compiler warmed (about 5 s less on two
/// cores, of the import and the first compile), else as a fresh interpreter. Its output goes
/// beside `log`.
fn launch(
    folder: &Path,
    log: &Path,
    args: &[&str],
    spec: &RunSpec,
    warm: Option<&Workers>,
) -> Result<Outcome> {
    let Some(workers) = warm else {
        return run_in(folder, log, args, spec);
    };
    let mut workers = workers.clone();
    workers.timeout = spec.timeout;
    let text = launcher_in_worker(folder, args, spec.env);
    let outcome = workers.run_all(&[text.as_str()]).remove(0)?;
    std::fs::write(log.with_extension("stdout"), &outcome.stdout)?;
    std::fs::write(log.with_extension("stderr"), &outcome.stderr)?;
    Ok(outcome)
}

/// The script a warm worker runs for `python ARGS` in `folder` with `env` added. The
/// worker imported torch before the environment was set: the one setting read at import
/// (where the minifier writes its checkpoints) is set again.
fn launcher_in_worker(folder: &Path, args: &[&str], env: &[(String, String)]) -> String {
    // A JSON string is a Python string literal, a JSON object a dict, an array a list.
    let env: std::collections::BTreeMap<&str, &str> =
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let json = |v: serde_json::Result<String>| v.expect("strings serialise");
    format!(
        "import os, runpy, sys\n\
         os.chdir({folder})\n\
         os.environ.update({env})\n\
         import torch._dynamo.config\n\
         if 'TORCH_COMPILE_DEBUG_DIR' in os.environ:\n    \
             torch._dynamo.config.debug_dir_root = os.path.join(os.environ['TORCH_COMPILE_DEBUG_DIR'], 'torch_compile_debug')\n\
         sys.argv = {args}\n\
         sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))\n\
         runpy.run_path(sys.argv[0], run_name='__main__')\n",
        folder = json(serde_json::to_string(&path_text(folder))),
        env = json(serde_json::to_string(&env)),
        args = json(serde_json::to_string(args)),
    )
}

/// `source` without its `os.environ['TORCHINDUCTOR_CACHE_DIR'] = …`.
fn shared_cache(source: &str) -> String {
    source
        .lines()
        .filter(|line| !line.starts_with("os.environ['TORCHINDUCTOR_CACHE_DIR']"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// "Made 28 queries", as the minifier ends its search.
fn queries(output: &str) -> Option<usize> {
    output.lines().rev().find_map(|l| {
        l.trim()
            .strip_prefix("Made ")?
            .strip_suffix(" queries")?
            .parse()
            .ok()
    })
}

/// The newest file called `name` under `dir`.
fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == name) {
                let modified = entry.metadata().and_then(|m| m.modified()).ok()?;
                found.push((modified, path));
            }
        }
    }
    found.into_iter().max().map(|(_, path)| path)
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(s: &str) -> Signature {
        Signature::parse(s).unwrap()
    }

    const COMPILED: &str = "import torch\nf = torch.compile(lambda x: x.relu())\n";

    #[test]
    fn a_backend_failure_in_a_compiled_script_is_minified_as_an_exception() {
        let plan = plan(
            Mode::Auto,
            COMPILED,
            &sig("InductorError: CppCompileError"),
            "",
        )
        .unwrap();
        assert_eq!((plan.after, plan.level), ("aot", 2));
    }

    #[test]
    fn a_crash_and_a_mismatch_get_their_own_levels() {
        let crash = plan(Mode::Auto, COMPILED, &sig("signal:SIGABRT"), "").unwrap();
        assert_eq!(crash.level, 3);
        // Every query is forked by the wrapper; only a crash's keep the minifier's isolation.
        let forked = Path::new("/run/forked_queries.py");
        assert_eq!(
            crash.launcher_args(forked),
            ["/run/forked_queries.py", "minifier_launcher.py", "minify"]
        );
        let mismatch = plan(
            Mode::Auto,
            COMPILED,
            &sig("AssertionError: compiled output differs from eager"),
            "",
        )
        .unwrap();
        assert_eq!(mismatch.level, 4);
        assert_eq!(
            mismatch.launcher_args(forked),
            [
                "/run/forked_queries.py",
                "minifier_launcher.py",
                "minify",
                "--no-isolate"
            ]
        );
        assert_eq!(
            mismatch.check,
            Some(Check::AssertAllclose(
                "compiled output differs from eager".into()
            ))
        );
    }

    #[test]
    fn a_tracing_failure_or_an_uncompiled_script_is_left_to_the_passes() {
        let traced = sig("torch._dynamo.exc.Unsupported: Data-dependent branching");
        assert!(plan(Mode::Auto, COMPILED, &traced, "").is_err());
        assert!(plan(Mode::Always, COMPILED, &traced, "").is_ok());
        let plain_script = "import torch\ntorch.ones(2).foo()\n";
        assert!(plan(Mode::Always, plain_script, &sig("AttributeError"), "").is_err());
        assert!(plan(Mode::Never, COMPILED, &sig("signal:SIGABRT"), "").is_err());
    }

    #[test]
    fn an_error_raised_by_a_compiled_kernel_is_minified() {
        let stderr = "Traceback (most recent call last):\n  File \"/tmp/x/repro.py\", line 6, in <module>\n    out = f(x)\n  File \"/venv/torch/_inductor/output_code.py\", line 830, in __call__\n    return self.current_callable(inputs)\n  File \"/tmp/torchinductor_root/yl/cylb5.py\", line 81, in call\n    cpp_fused_mul_relu_0(arg0_1, buf0)\nRuntimeError: unhandled error\n";
        let kernel = sig("RuntimeError: unhandled error");
        assert_eq!(
            plan(Mode::Auto, COMPILED, &kernel, stderr).unwrap().level,
            2
        );
        assert!(plan(Mode::Auto, COMPILED, &kernel, "").is_err());
    }

    #[test]
    fn the_launcher_shares_the_candidates_inductor_cache() {
        let source =
            "import os\nos.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/tmpab12'\nimport torch";
        assert_eq!(shared_cache(source), "import os\nimport torch");
    }

    #[test]
    fn the_number_of_queries_is_read_from_the_end_of_the_search() {
        assert_eq!(
            queries("Strategy: Truncate suffix\n\nMade 28 queries\n"),
            Some(28)
        );
        assert_eq!(queries("no search\n"), None);
    }
}
