//! The torch corpus against the pinned PyTorch venv (`SCRUB_TORCH_PYTHON`, set by
//! `scripts/test`): every hand-written repro fails the same way, and every case reduces with
//! `--exhaustive` to its bound and keeps its bug (warm and cold runs of its original agree; the
//! result is raised in the same library function, its control or fix passes, and so does it
//! with its injected bug switched off).

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use scrub::corpus::{self, Case};
use scrub::engine::inductor_cache::InductorCache;
use scrub::engine::process::{RunSpec, Status, run_script};
use scrub::engine::verdict::{Signature, Verdict};
use scrub::engine::workers::Workers;

fn torch_cases() -> Vec<Case> {
    let cases: Vec<Case> = corpus::load(&repo_root().join("corpus"))
        .unwrap()
        .into_iter()
        .filter(|c| c.spec.needs.iter().any(|n| n == "torch"))
        .collect();
    assert!(
        cases.len() >= 8,
        "the torch corpus has {} cases",
        cases.len()
    );
    cases
}

#[test]
fn the_venv_holds_the_pinned_torch() {
    let Some(python) = torch_python() else { return };
    let out = std::process::Command::new(&python)
        .args(["-c", "import torch, numpy; print(torch.__version__)"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("2.15.0"));
}

/// What a reduced torch repro must no longer hold, unless its failure needs it.
fn leftovers(result: &str, ladder: &serde_json::Value) -> Vec<String> {
    let held = |rung: &str| {
        ladder
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["rung"] == rung && r["held"] == true)
    };
    let mut out = Vec::new();
    if result.contains("cuda") {
        out.push("cuda".to_string());
    }
    if held("float32") && (result.contains("float64") || result.contains(".double()")) {
        out.push("float64".to_string());
    }
    out
}

#[test]
fn every_hand_written_torch_repro_fails_the_same_way_in_its_hand_bound() {
    let Some(python) = torch_python() else { return };
    let filter = corpus_filter();
    let cases: Vec<Case> = torch_cases()
        .into_iter()
        .filter(|c| c.name.contains(&filter))
        .collect();
    let hands: Vec<String> = cases
        .iter()
        .map(|case| {
            std::fs::read_to_string(case.dir.join("hand.py"))
                .unwrap_or_else(|e| panic!("{}: hand.py: {e}", case.name))
        })
        .collect();
    for (case, hand) in cases.iter().zip(&hands) {
        let lines = hand.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(lines, case.spec.hand_bound, "{}: hand.py", case.name);
        assert!(case.spec.hand_bound < case.spec.bound, "{}", case.name);
    }
    // Derived cases are judged by the signature derived from their repro, in their own test;
    // the others run forked from one warm zygote, and a miss is tried twice more cold.
    let (cases, hands): (Vec<&Case>, Vec<&str>) = cases
        .iter()
        .zip(&hands)
        .filter(|(case, _)| !case.spec.derive)
        .map(|(case, hand)| (case, hand.as_str()))
        .unzip();
    let Some(first) = cases.first() else { return };
    let warm = warm_workers(&python, &first.dir.join("hand.py")).run_all(&hands);
    for ((case, hand), outcome) in cases.iter().zip(&hands).zip(warm) {
        let sig = Signature::parse(&case.spec.signature).unwrap();
        let same = outcome.is_ok_and(|o| sig.judge(&o) == Verdict::Same);
        assert!(
            same || reproduces(hand, &python, &sig, 2),
            "{}: hand.py does not fail the same way",
            case.name
        );
    }
}

#[test]
fn every_derived_torch_case_takes_its_hand_version_and_refuses_its_near_miss() {
    let Some(python) = torch_python() else { return };
    let cases = torch_cases();
    let derived: Vec<&Case> = cases.iter().filter(|c| c.spec.derive).collect();
    assert!(derived.len() >= 5, "{} derived torch cases", derived.len());
    let workers = warm_workers(&python, &derived[0].script());
    // A near miss the signature takes is refused when the case's control, which passes on
    // the original, does not pass on it: a transform whose plain code fails the same way.
    // Where no control passes on the original, the custom code it compares stays in every
    // candidate.
    let refuses = |case: &Case, near: &str| {
        let suspect = CONTROLS
            .iter()
            .find(|(name, _, fix)| *name == case.name && fix.is_none())
            .map(|(_, suspect, _)| *suspect);
        let repro = std::fs::read_to_string(case.script()).unwrap();
        match suspect {
            _ if UNGUARDED.contains(&case.name.as_str()) => lost_custom_code(&repro, near),
            Some(suspect) => {
                control_of(near, suspect).is_none_or(|control| failure(&control, &python).is_some())
            }
            None => false,
        }
    };
    let wrong = misjudged(&derived, &workers, &refuses);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The control each torch original gets (as `--json` names it), and for a custom
/// implementation the fix of its own code that makes it pass; every other case has none.
const CONTROLS: &[(&str, &str, Option<&str>)] = &[
    ("torch_data_dependent_eager", COMPILE, None),
    ("torch_dynamo_fullgraph", COMPILE, None),
    ("torch_compiled_alias_eager_reference", COMPILE, None),
    ("torch_compile_accuracy", COMPILE, None),
    ("torch_compile_cpp_error", COMPILE, None),
    ("torch_compile_kernel_error", COMPILE, None),
    ("torch_inductor_relu_accuracy", COMPILE, None),
    ("torch_custom_rmsnorm", CUSTOM, Some("X - 1 → X")),
    (
        "torch_allclose_layernorm",
        CUSTOM,
        Some("unbiased=True → False"),
    ),
    (
        "torch_layernorm_device_fallback",
        CUSTOM,
        Some("dim=0 → -1"),
    ),
    ("torch_softplus_seeded_draw", CUSTOM, None),
    (
        "torch_tempered_softmax_reseeded",
        CUSTOM,
        Some("exp(X) → exp(X - X.max())"),
    ),
    ("torch_layernorm_passed_class", CUSTOM, None),
    ("torch_vmap_grad_outside", TRANSFORM, None),
    ("torch_trace_baked_batch", TRANSFORM, None),
    ("torch_trace_conv_relu_wrapper", TRANSFORM, None),
];
/// The cases whose control does not pass on the original (dropout on both sides): their
/// custom code stays in every candidate, as written.
const UNGUARDED: &[&str] = &["torch_layernorm_passed_class"];
const COMPILE: &str = "torch.compile → eager";
const TRANSFORM: &str = "a transform → the code it transforms, run plainly";
const CUSTOM: &str = "the script's own computation → the reference it is compared with";

// Two tests that take the cases from one queue, so that two reductions run side by side
// until the last: the minifier's queries and the cold runs around a reduction keep one core
// busy at a time.

#[test]
fn every_torch_case_reduces_to_its_bound_and_keeps_its_bug() {
    reduce_queued_cases();
}

#[test]
fn every_torch_case_reduces_to_its_bound_and_keeps_its_bug_beside_the_other_test() {
    reduce_queued_cases();
}

/// The torch cases that `SCRUB_CORPUS_FILTER` names, longest first (those that compile, with
/// inductor first), for the two tests above to take one at a time.
fn queue() -> &'static Queue {
    static QUEUE: std::sync::OnceLock<Queue> = std::sync::OnceLock::new();
    QUEUE.get_or_init(|| {
        let filter = corpus_filter();
        let mut cases: Vec<Case> = torch_cases()
            .into_iter()
            .filter(|c| c.name.contains(&filter))
            .collect();
        let exercises =
            |c: &Case, what: &[&str]| c.spec.exercises.iter().any(|e| what.contains(&e.as_str()));
        // Taken from the end.
        cases.sort_by_key(|c| {
            (
                exercises(c, &["inductor"]),
                exercises(c, &["compile", "torch.compile", "dynamo", "export"]),
            )
        });
        Queue::new(cases)
    })
}

/// Reduces the cases it takes from the queue with `--exhaustive`, each to its bound and
/// keeping its bug.
fn reduce_queued_cases() {
    let Some(python) = torch_python() else { return };
    queue().drain(|case| {
        let reduced = reduce_case(case, &python)?;
        let lost = lost(case, &reduced, &python);
        match lost.is_empty() {
            true => Ok(reduced.row),
            false => Err(format!("{lost:?}\n{}", reduced.result)),
        }
    });
}

/// How `reduced`, which fails the same way within its bound, is not the bug of `case`'s
/// original: what it holds that the failure does not need, a failure raised elsewhere, a
/// control or a fix that no longer passes, the minifier's generated code.
fn lost(case: &Case, reduced: &common::Reduced, python: &std::path::Path) -> Vec<String> {
    let (result, summary) = (&reduced.result, &reduced.summary);
    let mut wrong = leftovers(result, &summary["ladder"]);
    // The candidates were forked from warm workers: the original failed there as it did in
    // the fresh processes of scrub's baseline.
    if summary["warm"] != true {
        wrong.push("the original does not fail the same way warm".to_string());
    }
    // Raised in the same library function as the original.
    let site = scrub::engine::exception::site(&reduced.outcome.stderr);
    if site.as_deref() != summary["site"].as_str() {
        wrong.push(format!(
            "raised in {site:?}, the original in {}",
            summary["site"]
        ));
    }
    let (control, fix) = CONTROLS
        .iter()
        .find(|(name, ..)| *name == case.name)
        .map_or((None, None), |(_, control, fix)| (Some(*control), *fix));
    if summary["control"].as_str() != control {
        wrong.push(format!("control {}", summary["control"]));
    }
    if summary["fix"].as_str() != fix {
        wrong.push(format!("fix {}", summary["fix"]));
    }
    let unguarded = UNGUARDED.contains(&case.name.as_str());
    if unguarded && summary["unguarded"] != true {
        wrong.push(format!("unguarded {}", summary["unguarded"]));
    }
    let original = std::fs::read_to_string(case.script()).unwrap();
    if unguarded && lost_custom_code(&original, result) {
        wrong.push("the custom code compared is not kept as written".to_string());
    }
    match (control, fix) {
        // The bug is still the original's: its fix makes the result pass. (The custom
        // computation may be inlined into the comparison, where no call of the script's own
        // code is left to replace.)
        (_, Some(fix)) => {
            let script = scrub_reducers::Script::parse(
                result.as_str(),
                scrub_reducers::PythonVersion::PY311,
            )
            .unwrap();
            let fixed = scrub_reducers::fix::Fix::candidates(&script)
                .into_iter()
                .find(|f| f.describe() == fix)
                .and_then(|f| f.apply(&script));
            match fixed {
                None => wrong.push(format!("the code {fix} changes is gone")),
                Some(fixed) => {
                    if let Some(stderr) = failure(&fixed, python) {
                        wrong.push(format!("fixed, it still fails:\n{fixed}\n{stderr}"));
                    }
                }
            }
        }
        (Some(_), None) if unguarded => {}
        (Some(suspect), None) => match control_of(result, suspect) {
            None => wrong.push("the suspect is gone".to_string()),
            Some(control) => {
                if let Some(stderr) = failure(&control, python) {
                    wrong.push(format!("its control fails:\n{control}\n{stderr}"));
                }
            }
        },
        (None, None) => {}
    }
    // Inductor's test-only bug, switched off: the result passes.
    let injected = "inject_relu_bug_TESTING_ONLY = ";
    if result.contains(injected) {
        let fixed: Vec<String> = result
            .lines()
            .map(|line| match line.split_once(injected) {
                Some((head, _)) => format!("{head}{injected}None"),
                None => line.to_string(),
            })
            .collect();
        if let Some(stderr) = failure(&fixed.join("\n"), python) {
            wrong.push(format!(
                "without the injected bug, it still fails:\n{stderr}"
            ));
        }
    }
    // Through PyTorch's minifier, to a plain script.
    if case.spec.exercises.iter().any(|e| e == "minifier") {
        let stage = &summary["stages"][0];
        if stage["name"] != "minifier" || stage["outcome"] != "used" {
            wrong.push(format!("stage {stage}"));
        }
        for generated in ["run_repro", "load_args", "os.environ", "/tmp/"] {
            if result.contains(generated) {
                wrong.push(format!("{generated} left"));
            }
        }
        let kept = reduced.dir.path().join("scrub.out/minifier/minify.stderr");
        if !kept.is_file() {
            wrong.push("the minifier's output is not in the run directory".to_string());
        }
    }
    // A compiled script's candidates used the reduction's own inductor cache, which is gone;
    // those of an accuracy bug (whose compiles succeed and run to the end) found what others
    // compiled there.
    if case.spec.exercises.iter().any(|e| e == "inductor") {
        let cache = &summary["inductor_cache"];
        let completes = case.spec.signature.starts_with("AssertionError");
        let hits = cache["hits"].as_u64().unwrap_or(0);
        if cache["candidates"].as_u64().unwrap_or(0) == 0 || (completes && hits == 0) {
            wrong.push(format!("inductor cache {cache}"));
        }
        let log = std::fs::read_to_string(reduced.dir.path().join("scrub.out/run.log"))
            .unwrap_or_default();
        let dir = log
            .lines()
            .find_map(|l| l.strip_prefix("inductor cache: "))
            .and_then(|l| l.split(' ').next());
        if dir.is_none_or(|d| std::path::Path::new(d).exists()) {
            wrong.push(format!("the inductor cache {dir:?} is left"));
        }
    }
    wrong
}

/// The stderr of `text` run with the venv's python, unless it exits 0.
fn failure(text: &str, python: &std::path::Path) -> Option<String> {
    let run = run_torch(text, python);
    (run.status != Status::Exited(0)).then_some(run.stderr)
}

/// `scrub reduce --json` on a temp script with the venv's python.
fn reduce_json(text: &str, sig: &str, extra: &[&str]) -> Option<(serde_json::Value, String)> {
    let python = torch_python()?;
    let (dir, path) = temp_script(text);
    let out = run_with_limit(
        scrub()
            .arg("reduce")
            .arg(&path)
            .args(["--sig", sig, "--no-cache", "--json", "--quiet"])
            .args(if extra.contains(&"--jobs") {
                &[][..]
            } else {
                &["--jobs", "2"][..]
            })
            .args(extra)
            .arg("--python")
            .arg(python),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = std::fs::read_to_string(dir.path().join("repro.min.py")).unwrap();
    Some((serde_json::from_slice(&out.stdout).unwrap(), result))
}

#[test]
fn repeated_compiles_get_a_dynamo_reset_between_them() {
    let text = "import torch\nf = torch.compile(lambda x: x + 1, backend=\"eager\")\nf(torch.ones(2))\ng = torch.compile(lambda x: x.view(3), backend=\"eager\")\ng(torch.ones(2))\n";
    let sig = "torch._dynamo.exc.TorchRuntimeError: when making fake tensor call";
    let Some((summary, result)) = reduce_json(text, sig, &[]) else {
        return;
    };
    assert_eq!(
        summary["prepared"][0],
        "inserted torch._dynamo.reset() before 1 repeated torch.compile call(s)"
    );
    // The reduction may drop the first compile; while both are left, the reset between them is.
    assert!(
        result.matches("torch.compile(").count() < 2 || result.contains("torch._dynamo.reset()\n"),
        "{result}"
    );
}

#[test]
fn a_repro_that_runs_out_of_memory_here_is_tried_with_small_sizes() {
    let text = "import torch\nbuf = torch.empty(100000, 100000, 1000)\ntorch.nn.Linear(3, 4)(torch.randn(2, 5))\n";
    let sig = "RuntimeError: mat1 and mat2 shapes cannot be multiplied";
    let Some((summary, result)) = reduce_json(text, sig, &["--exhaustive"]) else {
        return;
    };
    assert!(
        summary["prepared"][0]
            .as_str()
            .unwrap()
            .starts_with("shrank every tensor size to 8"),
        "{summary}"
    );
    assert!(!result.contains("100000"), "{result}");
}

#[test]
fn a_flaky_torch_repro_is_stabilised_with_a_seed() {
    // Fails on two runs of three (a counter outside the run's own directory: the first fails,
    // the second passes) unless torch is seeded with 0: flaky for sure, and stable once
    // seeded. Over half of the first seven runs fail, so that no more are needed to measure
    // it; the passes, each candidate a fresh import of torch, are not what this is about.
    let counter = tempfile::tempdir().unwrap();
    let text = format!(
        "import os\nimport torch\npath = {:?}\nn = int(open(path).read()) if os.path.exists(path) else 0\nopen(path, 'w').write(str(n + 1))\nif torch.initial_seed() == 0 or n % 3 != 1:\n    raise ValueError('unlucky draw')\n",
        counter.path().join("runs").to_str().unwrap()
    );
    let Some((summary, result)) = reduce_json(
        &text,
        "ValueError: unlucky",
        &["--jobs", "1", "--cold", "--target-lines", "20"],
    ) else {
        return;
    };
    let prepared = summary["prepared"][0].as_str().unwrap_or_default();
    assert!(
        prepared.starts_with("inserted torch.manual_seed(0)"),
        "{summary}"
    );
    assert_eq!(summary["attempts_per_candidate"], 1);
    assert!(result.contains("torch.manual_seed(0)\n"), "{result}");
    assert!(!result.contains("scrub:"), "{result}");
}

#[test]
fn a_repro_that_seeds_itself_keeps_a_seed_of_its_own() {
    // Fails only with the right random numbers: once the reduction drops the script's own
    // seed, the kept one still decides them, so no candidate fails by chance.
    let text = "import torch\ndef main():\n    torch.manual_seed(0)\n    x = torch.rand(1)\n    if 0.49 < x.item() < 0.5:\n        raise ValueError('unlucky draw')\nmain()\n";
    let Some((summary, result)) = reduce_json(text, "ValueError: unlucky", &["--exhaustive"])
    else {
        return;
    };
    let prepared = summary["prepared"][0].as_str().unwrap_or_default();
    assert!(
        prepared.contains("the repro seeds its random numbers"),
        "{summary}"
    );
    // The seed goes again only with the draw it decided.
    assert!(
        !result.contains("torch.rand") || result.contains("torch.manual_seed(0)\n"),
        "{result}"
    );
    assert_eq!(summary["verified"], true);
}

#[test]
fn warm_candidates_compile_as_a_new_process_does() {
    // The zygote of a script that compiles has compiled once itself, then reset dynamo: each
    // fork compiles a kernel big enough to run on OpenMP threads and of a new shape (a
    // compile that waited on the zygote's pool, or a kernel on its threads, would hang), runs
    // a backward pass (which sets the thread count of the autograd engine's threads: a
    // thread pool the zygote started would abort it), and starts with no frame compiled and
    // no counter set.
    let Some(python) = torch_python() else { return };
    let text = "import torch\n\
                from torch._dynamo.utils import counters\n\
                assert not counters, dict(counters)\n\
                n = 32 + torch.randint(0, 1000, ()).item()\n\
                with torch.no_grad():\n    \
                    y = torch.compile(lambda x: x.relu())(torch.ones(16, 16, 32, n))\n\
                w = torch.ones(2, requires_grad=True)\n\
                (w * 3).sum().backward()\n\
                print(torch._dynamo.convert_frame.FRAME_COUNTER, float(y[0, 0, 0, 0]), float(w.grad[0]))\n";
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("repro.py");
    std::fs::write(&original, text).unwrap();
    // A cold inductor cache, so that the zygote's own compile starts a compile pool.
    let cold = dir.path().join("python");
    std::fs::write(
        &cold,
        format!(
            "#!/bin/sh\nTORCHINDUCTOR_CACHE_DIR={} exec {} \"$@\"\n",
            dir.path().join("inductor").display(),
            python.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&cold, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut workers = Workers::new(cold, Duration::from_secs(60), 2, vec![]);
    workers.warm = Some(original);
    for outcome in workers.run_all(&[text; 4]) {
        let outcome = outcome.unwrap();
        assert_eq!(outcome.stdout.trim(), "1 1.0 3.0", "{}", outcome.stderr);
    }
}

/// One warm worker that runs candidates in its own process, for the script `original` (in a
/// temporary directory that lives as long as the first value).
fn in_process_worker(python: PathBuf, original: &str) -> (tempfile::TempDir, Workers) {
    let (dir, original) = temp_script(original);
    let mut workers = Workers::new(python, Duration::from_secs(120), 1, vec![]);
    workers.set_jobs(1, true);
    workers.warm = Some(original);
    (dir, workers)
}

#[test]
fn a_worker_that_runs_candidates_in_its_own_process_puts_torch_back_between_them() {
    // One candidate compiles with a config value set, changes torch's global settings and
    // leaves them so; the next, in the same process, must see what a fresh process sees and
    // compile from nothing.
    let Some(python) = torch_python() else { return };
    let leak = "import os\nimport torch\n\
                torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'accuracy'\n\
                torch._dynamo.config.cache_size_limit = 1\n\
                torch.set_default_dtype(torch.float64)\n\
                torch.set_grad_enabled(False)\n\
                torch.set_printoptions(precision=1)\n\
                torch.backends.quantized.engine = 'qnnpack'\n\
                torch.set_float32_matmul_precision('medium')\n\
                print(os.getpid(), torch.compile(lambda x: x.relu())(torch.ones(2)).tolist())\n\
                torch._dynamo.config = True\n";
    let look = "import os\nimport torch\n\
                from torch._dynamo.utils import counters\n\
                assert not counters, dict(counters)\n\
                c = torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY\n\
                print(os.getpid(), c, torch._dynamo.config.cache_size_limit > 1, torch.get_default_dtype(), torch.is_grad_enabled(), torch.tensor([0.123456]))\n\
                print(torch.compile(lambda x: x.relu())(torch.ones(2)).tolist())\n\
                print(os.environ['TORCHINDUCTOR_CACHE_DIR'])\n\
                print(torch.backends.quantized.engine != 'qnnpack', torch.get_float32_matmul_precision())\n";
    let (_dir, mut workers) = in_process_worker(python, leak);
    // A cache of its own: a compile that misses starts inductor's thread pool, which the
    // candidate's end must stop.
    workers.inductor = InductorCache::for_script(leak).unwrap().map(Arc::new);
    let outcomes: Vec<_> = [leak, look]
        .iter()
        .map(|text| workers.run_all(&[text]).remove(0).unwrap())
        .collect();
    // The injected bug adds 1 to what inductor's relu keeps.
    let first: Vec<&str> = outcomes[0].stdout.split_whitespace().collect();
    assert_eq!(first[1..], ["[2.0,", "2.0]"], "{}", outcomes[0].stderr);
    let lines: Vec<&str> = outcomes[1].stdout.lines().collect();
    assert_eq!(
        lines.first().map(|l| l.split_once(' ').unwrap()),
        Some((first[0], "None True torch.float32 True tensor([0.1235])")),
        "{}",
        outcomes[1].stderr
    );
    assert_eq!(lines[1], "[1.0, 1.0]");
    // The worker's own first compile went to the kept cache; the script's go to the run's.
    let cache = workers.inductor.as_ref().unwrap().path();
    assert_eq!(lines[2], cache.to_str().unwrap());
    assert_eq!(lines[3], "True highest");
    assert!(workers.events().is_empty(), "{:?}", workers.events());
}

#[test]
fn a_candidate_that_first_imports_dynamo_leaves_its_worker_in_use() {
    // `torch.testing` imports dynamo's config, which a worker of a script without
    // `torch.compile` has not imported: an import is not a changed setting.
    let Some(python) = torch_python() else { return };
    let text = "import os\nimport torch\n\
                torch.testing.assert_close(torch.ones(2), torch.ones(2))\n\
                print(os.getpid())\n";
    let (_dir, workers) = in_process_worker(python, text);
    let pids: Vec<String> = (0..2)
        .map(|_| workers.run_all(&[text]).remove(0).unwrap().stdout)
        .collect();
    assert_eq!(pids[0], pids[1]);
    assert!(workers.events().is_empty(), "{:?}", workers.events());
}

#[test]
fn a_config_that_tracing_set_back_to_its_defaults_leaves_the_worker_in_use() {
    // Tracing a higher-order op (`while_loop` under `vmap`) patches dynamo's settings and sets
    // them back as values equal to their defaults: not a changed setting. Counted as one,
    // every candidate replaced its worker (a 6-line report ran past 300 s).
    let Some(python) = torch_python() else { return };
    let text = "import os\nimport torch\nprint(os.getpid(), flush=True)\n\
                torch.vmap(lambda x: torch.while_loop(lambda x: x < 1, lambda x: (x + 1,), (x,)))(torch.zeros(1))\n";
    let (_dir, workers) = in_process_worker(python, "import torch\n");
    let outcomes: Vec<_> = (0..2)
        .map(|_| workers.run_all(&[text]).remove(0).unwrap())
        .collect();
    assert!(
        outcomes[0].stderr.contains("KeyError"),
        "{}",
        outcomes[0].stderr
    );
    assert_eq!(outcomes[0].stdout, outcomes[1].stdout);
    assert!(workers.events().is_empty(), "{:?}", workers.events());
}

#[test]
fn a_config_that_a_candidate_first_imported_and_changed_is_fresh_for_the_next() {
    // The worker of a plain torch script imports no config module before its first candidate:
    // one that imports dynamo's config and changes it leaves a worker that is replaced.
    let Some(python) = torch_python() else { return };
    let change = "import torch._dynamo.config as c\nc.cache_size_limit = 1\n";
    let look = "import torch._dynamo\nprint(torch._dynamo.config.cache_size_limit > 1)\n";
    let (_dir, workers) = in_process_worker(python, "import torch\n");
    let outcomes: Vec<_> = [change, look]
        .iter()
        .map(|text| workers.run_all(&[text]).remove(0).unwrap())
        .collect();
    assert_eq!(outcomes[1].stdout.trim(), "True", "{}", outcomes[1].stderr);
    // Replaced twice: the candidate runs again in a fresh worker, which it changes too.
    let events = workers.events();
    assert_eq!(events.len(), 2, "{events:?}");
}

#[test]
fn warm_candidates_draw_fresh_random_numbers_as_cold_ones_do() {
    // Forked from one zygote that imported torch and numpy, each child must not inherit its
    // generators' state: a draw that fails one time in two must not fail every time warm.
    let Some(python) = torch_python() else { return };
    let text = "import numpy\nimport torch\nprint(torch.rand(1).item(), numpy.random.rand())\n";
    let dir = tempfile::tempdir().unwrap();
    let original = dir.path().join("repro.py");
    std::fs::write(&original, text).unwrap();
    let mut workers = Workers::new(python, Duration::from_secs(120), 1, vec![]);
    workers.warm = Some(original);
    let texts = vec![text; 4];
    let lines: Vec<String> = workers
        .run_all(&texts)
        .into_iter()
        .map(|outcome| outcome.unwrap().stdout.trim().to_string())
        .collect();
    for column in 0..2 {
        let draws: std::collections::HashSet<&str> = lines
            .iter()
            .map(|line| line.split(' ').nth(column).unwrap_or_default())
            .collect();
        assert_eq!(draws.len(), 4, "{lines:?}");
    }
}

#[test]
fn a_seed_that_decides_nothing_is_removed_again() {
    // Every candidate draws under scrub's seed; the result fails without it on any draw.
    let text = "import torch\nx = torch.randn(4, 5)\nw = torch.randn(3, 4)\ntorch.nn.functional.linear(x, w)\n";
    let sig = "RuntimeError: mat1 and mat2 shapes cannot be multiplied";
    let Some((summary, result)) = reduce_json(text, sig, &["--exhaustive"]) else {
        return;
    };
    let prepared: Vec<&str> = summary["prepared"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .collect();
    assert!(
        prepared[0].contains("every candidate draws the same random numbers"),
        "{summary}"
    );
    assert!(
        prepared
            .last()
            .unwrap()
            .starts_with("removed the seed again"),
        "{summary}"
    );
    assert!(!result.contains("manual_seed"), "{result}");
    assert_eq!(summary["verified"], true);
}

#[test]
fn a_seed_that_decides_nothing_goes_from_a_guarded_result_too() {
    // The control (the function called eagerly) passes on any draw, and the compiled call
    // fails on any: the seed decides nothing for either.
    let text = "import torch\ndef f(x):\n    return x if x.mean() > 0 else -x\nx = torch.randn(2)\ntorch.compile(f, backend=\"eager\", fullgraph=True)(x)\n";
    let sig = "torch._dynamo.exc.Unsupported: Data-dependent branching";
    let Some((summary, result)) = reduce_json(text, sig, &["--exhaustive"]) else {
        return;
    };
    assert!(summary["control"].is_string(), "{summary}");
    assert!(
        summary["prepared"]
            .as_array()
            .unwrap()
            .last()
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .starts_with("removed the seed again"),
        "{summary}"
    );
    assert!(!result.contains("manual_seed"), "{result}");
    assert_eq!(summary["verified"], true);
}

#[test]
fn a_seed_that_a_shrunk_draw_needs_is_kept() {
    // 20000 draws almost surely hold one near 0.4963, so the original fails on any draw; once
    // the size shrinks to 1, only the seed's draw (0.49626) does. The check is kept as it is,
    // so that the reduction can only shrink the draw.
    let text = "import torch\nx = torch.rand(20000)\n# scrub: keep-begin\nif (x - 0.4963).abs().min() < 0.001:\n    raise ValueError('a value near the threshold')\n# scrub: keep-end\n";
    let Some((summary, result)) = reduce_json(text, "ValueError: a value near", &["--exhaustive"])
    else {
        return;
    };
    assert_eq!(summary["attempts_per_candidate"], 1, "{summary}");
    assert!(!result.contains("20000"), "{result}");
    assert!(result.contains("if (x - 0.4963)"), "{result}");
    assert!(result.contains("torch.manual_seed(0)\n"), "{result}");
    assert!(!result.contains("scrub:"), "{result}");
    assert!(
        !summary["prepared"].to_string().contains("removed the seed"),
        "{summary}"
    );
    assert_eq!(summary["verified"], true);
}

/// Runs `text` with the venv's python: its outcome.
fn run_torch(text: &str, python: &std::path::Path) -> scrub::engine::process::Outcome {
    let spec = RunSpec {
        python,
        timeout: Duration::from_secs(300),
        env: &[],
        max_memory: None,
    };
    run_script(text, &spec).unwrap()
}

/// Whether `text` lost a statement of the computation that `original`'s comparison runs on
/// its custom side.
fn lost_custom_code(original: &str, text: &str) -> bool {
    let version = scrub_reducers::PythonVersion::PY311;
    let parse = |t: &str| scrub_reducers::Script::parse(t, version).unwrap();
    let code = scrub_reducers::control::custom_code(&parse(original));
    assert!(!code.is_empty(), "no custom code compared in:\n{original}");
    scrub_reducers::control::keeps_code(&parse(text), &code).is_err()
}

/// The control of `text` for the suspect named `suspect` (as `--json` prints it).
fn control_of(text: &str, suspect: &str) -> Option<String> {
    use scrub_reducers::control::Suspect;
    let version = scrub_reducers::PythonVersion::PY311;
    let script = scrub_reducers::Script::parse(text, version)?;
    Suspect::all_of(&script, version)
        .into_iter()
        .find(|(s, _)| s.as_str() == suspect)
        .map(|(_, control)| control)
}

#[test]
fn a_mismatch_without_a_control_is_marked_unguarded() {
    // Two library results compared: nothing to replace by a reference, and the first side
    // computed again differs from itself (an unseeded draw), so no control passes.
    let text =
        "import torch\nx = torch.randn(2)\nassert torch.equal(x, x + 1), \"values do not match\"\n";
    let Some((summary, _)) = reduce_json(text, "AssertionError: values do not match", &[]) else {
        return;
    };
    assert_eq!(summary["unguarded"], true, "{summary}");
    assert_eq!(summary["control"], serde_json::Value::Null, "{summary}");
    // A compile whose eager control would pass, with the guard turned off.
    let text = "import torch\nf = torch.compile(lambda x: x + 1, backend=\"eager\")\nassert torch.equal(f(torch.ones(2)), torch.ones(2)), \"values do not match\"\n";
    let Some((summary, _)) = reduce_json(
        text,
        "AssertionError: values do not match",
        &["--no-control"],
    ) else {
        return;
    };
    assert_eq!(summary["unguarded"], true, "{summary}");
    assert_eq!(summary["control"], serde_json::Value::Null, "{summary}");
}

#[test]
fn without_a_control_that_passes_the_custom_code_compared_stays() {
    // The reference draws its own slopes each call, so no control passes and no edit of the
    // script's code does either; a result comparing the reference with `x` would fail too.
    let text = "import torch\nimport torch.nn.functional as F\ndef leaky(x):\n    neg = x.clamp(max=0.0)\n    return x.clamp(min=0.0) + 0.2 * neg\nx = torch.randn(16)\ntorch.testing.assert_close(leaky(x), F.rrelu(x, training=True))\n";
    let Some((summary, result)) =
        reduce_json(text, "AssertionError: Tensor-likes are not close", &[])
    else {
        return;
    };
    assert_eq!(summary["unguarded"], true, "{summary}");
    let note = summary["control_note"].as_str().unwrap_or_default();
    assert!(note.contains("stays in every candidate"), "{summary}");
    assert!(result.contains(".clamp("), "{result}");
}

#[test]
fn the_probe_rebuilds_the_tensors_and_modules_a_failing_line_reads() {
    let Some(python) = torch_python() else { return };
    let text = "import torch\nimport numpy as np\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(4, 3).double()\n        self.emb = torch.nn.Embedding(10, 4)\n    def forward(self, x, ids, a):\n        return self.emb(ids) + self.fc(x * 2) + x.t() + a + torch.float16\nNet().eval()(torch.randn(8, 4), torch.tensor([1, 12]), np.ones(3))\n";
    let workers = Workers::new(python, Duration::from_secs(120), 1, Vec::new());
    let crash = scrub::engine::probe::crash(
        &workers
            .probe(text, &scrub::engine::probe::source(false))
            .unwrap(),
    )
    .expect("a crash is reported");
    let values = &crash.frames[0].values;
    let value = |k: &str| {
        values
            .iter()
            .find(|(e, _)| e == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no value for {k}: {values:?}"))
    };
    assert_eq!(value("self.emb"), "torch.nn.Embedding(10, 4).eval()");
    assert_eq!(value("self.fc"), "torch.nn.Linear(4, 3).double().eval()");
    assert_eq!(value("ids"), "torch.tensor([1, 12])");
    assert_eq!(value("x"), "torch.randn(8, 4)");
    assert_eq!(value("x * 2"), "torch.randn(8, 4)");
    assert_eq!(value("a"), "np.array([1.0, 1.0, 1.0], dtype=np.float64)");
    assert_eq!(value("torch.float16"), "torch.float16");
}

#[test]
fn the_probe_rebuilds_nothing_for_an_accuracy_check() {
    let Some(python) = torch_python() else { return };
    let text = "import torch\ndef check(actual, expected):\n    torch.testing.assert_close(actual, expected)\ncheck(torch.zeros(20), torch.ones(20))\n";
    let workers = Workers::new(python, Duration::from_secs(120), 1, Vec::new());
    let crash = scrub::engine::probe::crash(
        &workers
            .probe(text, &scrub::engine::probe::source(false))
            .unwrap(),
    )
    .expect("a crash is reported");
    assert!(
        crash.frames[0]
            .values
            .iter()
            .all(|(e, _)| e == "torch.testing.assert_close"),
        "{:?}",
        crash.frames[0].values
    );
    assert!(crash.computed.is_empty(), "{:?}", crash.computed);
}

#[test]
fn a_checked_probe_rebuilds_a_checks_inputs_with_random_floats() {
    let Some(python) = torch_python() else { return };
    let text = "import torch\ndef check(x, ids):\n    torch.testing.assert_close(x.sum() + ids, ids)\ncheck(torch.tensor([0.5, 1.5]), torch.arange(3))\n";
    let workers = Workers::new(python, Duration::from_secs(120), 1, Vec::new());
    let source = scrub::engine::probe::source(true);
    let crash =
        scrub::engine::probe::crash(&workers.probe(text, &source).unwrap()).expect("reported");
    let values = &crash.frames[0].values;
    let value = |k: &str| values.iter().find(|(e, _)| e == k).map(|(_, v)| v.as_str());
    // Exact small floats would let shrinking pick values on which both sides agree.
    assert_eq!(value("x"), Some("torch.randn(2)"), "{values:?}");
    assert_eq!(value("ids"), Some("torch.tensor([0, 1, 2])"), "{values:?}");
    assert!(crash.computed.is_empty(), "{:?}", crash.computed);
}

#[test]
fn the_probe_reports_what_module_level_code_computed_warm_and_cold() {
    let Some(python) = torch_python() else { return };
    let text = "import torch\nimport torch.nn as nn\ntorch.manual_seed(0)\ntorch.autograd.set_detect_anomaly(True)\nxt = torch.cat([torch.rand(1, 1), torch.rand(1, 1)], dim=1)\ndef loss(v):\n    return torch.sqrt(v)\nloss(nn.Linear(2, 1)(xt)).backward()\n";
    let mut workers = Workers::new(python, Duration::from_secs(120), 1, Vec::new());
    let cold = scrub::engine::probe::crash(
        &workers
            .probe(text, &scrub::engine::probe::source(false))
            .unwrap(),
    )
    .expect("reported");
    let (dir, path) = temp_script(text);
    workers.warm = Some(path);
    let warm = scrub::engine::probe::crash(
        &workers
            .probe(text, &scrub::engine::probe::source(false))
            .unwrap(),
    )
    .expect("reported");
    drop(dir);
    assert_eq!(cold, warm);
    let code = |line: usize, expr: &str| {
        let start = text.lines().nth(line - 1).unwrap().find(expr).unwrap();
        cold.computed
            .iter()
            .find(|c| c.start == (line, start) && c.end == (line, start + expr.len()))
            .map(|c| c.code.as_str())
    };
    assert_eq!(
        code(5, "torch.cat([torch.rand(1, 1), torch.rand(1, 1)], dim=1)"),
        Some("torch.tensor([[0.4963, 0.7682]])"),
        "{:?}",
        cold.computed
    );
    assert_eq!(
        code(8, "nn.Linear(2, 1)(xt)"),
        Some("torch.tensor([[-0.9609]]).requires_grad_().clone()")
    );
    assert_eq!(
        code(7, "torch.sqrt(v)"),
        Some("torch.tensor([[float('nan')]]).requires_grad_().clone()")
    );
    // Not the call that failed.
    assert_eq!(code(8, "loss(nn.Linear(2, 1)(xt)).backward()"), None);
    // A script that may compile its functions: module-level code only.
    let compiled = text.replace(
        "torch.manual_seed(0)",
        "torch.manual_seed(0)  # torch.compile",
    );
    let crash = scrub::engine::probe::crash(
        &workers
            .probe(&compiled, &scrub::engine::probe::source(false))
            .unwrap(),
    )
    .expect("reported");
    assert!(
        crash.computed.iter().all(|c| c.start.0 != 7),
        "{:?}",
        crash.computed
    );
    assert!(
        crash.computed.iter().any(|c| c.start.0 == 8),
        "{:?}",
        crash.computed
    );
}

#[test]
fn a_torch_script_reduces_in_place_as_it_does_cold() {
    // Two submodules of one package imported, one of them no longer needed once the
    // reduction drops its call: a worker in place has both loaded, a fresh process only what
    // the candidate imports. Each verdict of the loop must be one a fresh run gives: a sample
    // of the candidates it judged is run again in fresh processes.
    let Some(python) = torch_python() else { return };
    let text = "import torch\nimport torch.nn.functional as F\nimport torch.utils.data\n\nweight = torch.randn(2, 5)\nbatch = torch.utils.data.default_collate([torch.randn(3), torch.randn(3)])\ny = F.linear(batch, weight)\n";
    let sig = "RuntimeError: mat1 and mat2 shapes cannot be multiplied";
    let (dir, path) = temp_script(text);
    let out = run_with_limit(
        scrub()
            .arg("reduce")
            .arg(&path)
            .args([
                "--sig",
                sig,
                "--no-cache",
                "--json",
                "--quiet",
                "--jobs",
                "2",
            ])
            .arg("--python")
            .arg(&python),
        Duration::from_secs(300),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["in_process"], true, "{summary}");
    assert_eq!(summary["verified"], true, "{summary}");
    assert!(summary["divergence"].is_null(), "{summary}");
    // Every sixth run the loop recorded, with the verdict it gave: the same failure, a run
    // to the end, or another exception (a near miss is judged on more than the run).
    let runs = dir.path().join("scrub.out/runs");
    let sampled: Vec<(String, String)> = listing(&runs)
        .iter()
        .step_by(6)
        .filter_map(|name| {
            let record = std::fs::read_to_string(runs.join(name)).unwrap();
            let (verdict, rest) = record.split_once('\n')?;
            let (_, rest) = rest.split_once("--- candidate ---\n")?;
            let (candidate, _) = rest.split_once("\n--- stdout ---\n")?;
            let verdict = verdict.strip_prefix("verdict: ")?;
            (!verdict.starts_with("near miss")).then(|| (verdict.to_string(), candidate.into()))
        })
        .collect();
    assert!(sampled.len() >= 5, "{} runs sampled", sampled.len());
    let sig = Signature::parse(sig).unwrap();
    let disagrees = |(verdict, candidate): &(String, String)| {
        let outcome = run_torch(candidate, &python);
        let agrees = match verdict.as_str() {
            "same failure" => sig.judge(&outcome) == Verdict::Same,
            "it ran to completion without an error" => outcome.status == Status::Exited(0),
            raised => raised
                .strip_prefix("it raised ")
                .is_some_and(|line| outcome.stderr.contains(line)),
        };
        (!agrees).then(|| {
            format!(
                "in place: {verdict}; fresh:\n{}\n{candidate}",
                outcome.stderr
            )
        })
    };
    // Two at a time, as the reduction ran them.
    let (first, second) = sampled.split_at(sampled.len() / 2);
    let wrong: Vec<String> = std::thread::scope(|scope| {
        let other = scope.spawn(|| second.iter().filter_map(disagrees).collect::<Vec<_>>());
        let mut wrong: Vec<String> = first.iter().filter_map(disagrees).collect();
        wrong.extend(other.join().unwrap());
        wrong
    });
    assert!(wrong.is_empty(), "{wrong:#?}");
}
