//! The loop against one-line fake oracles: microseconds, no processes.

use scrub_reducers::edit::{Candidate, Edit};
use scrub_reducers::{Interrupted, Options, Oracle, PASSES, StopReason, count_lines, reduce};

/// Interesting when the text contains every one of the needles.
struct Contains(&'static [&'static str]);

impl Oracle for Contains {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        Ok(texts
            .iter()
            .map(|t| self.0.iter().all(|n| t.contains(n)))
            .collect())
    }
}

/// Like `Contains`, and counts the texts it judged.
struct Counting(Contains, usize);

impl Oracle for Counting {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        self.1 += texts.len();
        self.0.judge(texts)
    }
}

/// Answers yes `budget` times, then reports an interruption.
struct StopsAfter(usize);

impl Oracle for StopsAfter {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        if self.0 == 0 {
            return Err(Interrupted);
        }
        self.0 -= 1;
        Ok(vec![true; texts.len()])
    }
}

const BLOATED: &str = r#"import argparse
import logging
import os, sys

log = logging.getLogger(__name__)


class Config:
    """Settings for the run."""

    def __init__(self, path):
        self.path = path
        self.values = {}

    def get(self, key):
        return self.values[key]


def helper(x):
    return x * 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args([])
    if args.verbose:
        log.info("verbose")
    for i in range(3):
        print(helper(i))
    cfg = Config(os.getcwd())
    cfg.get("calibration")


if __name__ == "__main__":
    main()
"#;

fn exhaustive() -> Options {
    Options {
        target_lines: None,
        ..Options::default()
    }
}

#[test]
fn reduction_keeps_what_the_oracle_needs_and_drops_the_rest() {
    let mut oracle = Contains(&["calibration"]);
    let out = reduce(BLOATED, PASSES, &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.stop, StopReason::Fixpoint);
    assert!(out.text.contains("calibration"));
    assert!(count_lines(&out.text) <= 2, "{}", out.text);
}

#[test]
fn needles_in_separate_places_all_survive() {
    let mut oracle = Contains(&["parse_args", "cfg.get(", "class Config"]);
    let out = reduce(BLOATED, PASSES, &mut oracle, &exhaustive()).unwrap();
    // `cfg` stays bound where `cfg.get(` reads it: a read of a deleted local would raise
    // NameError, and no candidate makes one.
    assert!(count_lines(&out.text) <= 7, "{}", out.text);
    assert!(out.text.contains("cfg = "), "{}", out.text);
    assert!(
        !out.text.contains("\n\n\n"),
        "blank lines are tidied: {}",
        out.text
    );
}

#[test]
fn the_target_stops_the_loop_early() {
    let mut oracle = Contains(&["calibration"]);
    let options = Options {
        target_lines: Some(30),
        ..Options::default()
    };
    let out = reduce(BLOATED, PASSES, &mut oracle, &options).unwrap();
    assert_eq!(out.stop, StopReason::TargetReached);
    assert!(count_lines(&out.text) >= 5);
}

#[test]
fn an_interruption_returns_the_last_accepted_script() {
    let out = reduce(BLOATED, PASSES, &mut StopsAfter(1), &exhaustive()).unwrap();
    assert_eq!(out.stop, StopReason::Interrupted);
    assert!(out.text.len() < BLOATED.len());
}

#[test]
fn every_candidate_the_oracle_sees_parses() {
    struct MustParse;
    impl Oracle for MustParse {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            for t in texts {
                assert!(
                    scrub_reducers::python::is_valid(t, Options::default().version),
                    "{t}"
                );
            }
            Ok(texts.iter().map(|t| t.contains("calibration")).collect())
        }
    }
    reduce(BLOATED, PASSES, &mut MustParse, &exhaustive()).unwrap();
}

#[test]
fn the_result_does_not_depend_on_how_the_oracle_batches() {
    // The window is part of the options, not of the oracle: two oracles that differ only in
    // how they count give the same script.
    let a = reduce(
        BLOATED,
        PASSES,
        &mut Contains(&["values[key]"]),
        &exhaustive(),
    )
    .unwrap();
    let mut counting = Counting(Contains(&["values[key]"]), 0);
    let b = reduce(BLOATED, PASSES, &mut counting, &exhaustive()).unwrap();
    assert_eq!(a.text, b.text);
    let total: usize = b.passes.iter().map(|p| p.candidates).sum();
    assert_eq!(total, counting.1);
}

#[test]
fn a_script_with_a_syntax_error_is_refused() {
    let err = reduce("def f(:\n", PASSES, &mut Contains(&[]), &exhaustive()).unwrap_err();
    assert!(err.to_string().contains("syntax error"));
}

#[test]
fn a_run_stopped_at_its_target_still_drops_comments_and_blank_line_runs() {
    let mut text = String::from("# header comment\nimport os\n\n\n\n");
    for i in 0..30 {
        text.push_str(&format!("x{i} = {i}  # value {i}\n"));
    }
    text.push_str("\n\n\nraise KeyError('calibration')\n");
    let options = Options {
        target_lines: Some(25),
        ..Options::default()
    };
    let out = reduce(&text, PASSES, &mut Contains(&["calibration"]), &options).unwrap();
    assert_eq!(out.stop, StopReason::TargetReached);
    assert!(!out.text.contains('#'), "{}", out.text);
    assert!(!out.text.contains("\n\n\n"), "{}", out.text);
}

#[test]
fn code_marked_keep_survives_every_pass() {
    let text = "import os\nSEED = 1234  # scrub: keep\n# scrub: keep-begin\ndef setup():\n    return os.getcwd()\n# scrub: keep-end\nx = 1\nraise KeyError('calibration')\n";
    let out = reduce(text, PASSES, &mut Contains(&["calibration"]), &exhaustive()).unwrap();
    assert!(
        out.text.contains("SEED = 1234  # scrub: keep\n"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("def setup():\n    return os.getcwd()\n"),
        "{}",
        out.text
    );
    assert!(!out.text.contains("x = 1"), "{}", out.text);
}

#[test]
fn values_shrink_to_what_the_oracle_needs() {
    let text = "for i in range(100):\n    n = 48\nraise KeyError('calibration-and-more')\n";
    let out = reduce(text, PASSES, &mut Contains(&["calib"]), &exhaustive()).unwrap();
    assert!(
        !out.text.contains("range") && !out.text.contains("48"),
        "{}",
        out.text
    );
    assert!(
        out.text.contains("'calib'") && !out.text.contains("calibr"),
        "{}",
        out.text
    );
}

#[test]
fn a_pass_refused_again_and_again_is_set_aside_then_retried_in_full_before_the_fixpoint() {
    /// Refuses everything, and records how many texts each call brought.
    struct Refuses(Vec<usize>);
    impl Oracle for Refuses {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            self.0.push(texts.len());
            Ok(vec![false; texts.len()])
        }
    }
    let impatient = Options {
        target_lines: None,
        give_up_after: 8,
        ..Options::default()
    };
    let out = reduce(BLOATED, PASSES, &mut Refuses(Vec::new()), &impatient).unwrap();
    assert_eq!(out.stop, StopReason::Fixpoint);
    // Without the fine passes, then patiently; with them, then patiently.
    assert_eq!(
        out.rounds, 4,
        "a round that gave up is followed by a patient one"
    );
    let patient = Options {
        target_lines: None,
        give_up_after: usize::MAX,
        ..Options::default()
    };
    let full = reduce(BLOATED, PASSES, &mut Refuses(Vec::new()), &patient).unwrap();
    assert_eq!(full.rounds, 2);
    let judged =
        |r: &scrub_reducers::Reduction| r.passes.iter().map(|p| p.candidates).sum::<usize>();
    assert!(
        judged(&out) > judged(&full),
        "the patient round judges everything once more"
    );
}

#[test]
fn the_fine_passes_wait_until_the_others_change_nothing() {
    use scrub_reducers::passes::{DeleteStatements, HoistExpressions};
    use scrub_reducers::python::Script;
    use std::sync::Mutex;
    /// Hoists, and records every script it was asked about.
    struct Spy(Mutex<Vec<String>>);
    impl scrub_reducers::Pass for Spy {
        fn info(&self) -> scrub_reducers::PassInfo {
            scrub_reducers::PassInfo {
                phase: scrub_reducers::Phase::Fine,
                ..scrub_reducers::PassInfo::new("spy")
            }
        }
        fn candidates(&self, script: &Script) -> Vec<Candidate> {
            self.0.lock().unwrap().push(script.text().to_string());
            HoistExpressions.candidates(script)
        }
    }
    let spy = Spy(Mutex::new(Vec::new()));
    let text = "x = f(g(1))\ny = h(2)\nraise KeyError(str('calibration'))\n";
    let passes: &[&dyn scrub_reducers::Pass] = &[&spy, &DeleteStatements];
    let out = reduce(text, passes, &mut Contains(&["calibration"]), &exhaustive()).unwrap();
    assert_eq!(out.text, "raise 'calibration'\n");
    let seen = spy.0.into_inner().unwrap();
    assert_eq!(
        seen[0], "raise KeyError(str('calibration'))\n",
        "the fine pass first sees the script deletion left"
    );
}

#[test]
fn a_respelling_pass_names_only_what_deletion_left() {
    use scrub_reducers::passes::{DeleteArguments, DeleteStatements, PublicNames};
    /// Like `Contains`, needs an argument to `g`, and `= 1` while `g` takes two: the deletion
    /// of `arg0_1 = 1` waits for a fine pass.
    struct Guarded(Contains);
    impl Oracle for Guarded {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            let needs = |t: &String| !t.contains("g()") && (!t.contains(", ") || t.contains("= 1"));
            let found = self.0.judge(texts)?;
            Ok(texts
                .iter()
                .zip(found)
                .map(|(t, f)| f && needs(t))
                .collect())
        }
    }
    // Renamed before the deletion, `arg1_1` would be `y`: the first plain name would go to
    // `arg0_1`, which deletion drops once a fine pass dropped its argument.
    let text = "import torch\narg0_1 = 1\narg1_1 = 2\nraise KeyError(g(arg0_1, arg1_1))\n";
    let passes: &[&dyn scrub_reducers::Pass] = &[&PublicNames, &DeleteStatements, &DeleteArguments];
    let mut oracle = Guarded(Contains(&["import torch", "= 2", "KeyError(g("]));
    let out = reduce(text, passes, &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.text, "import torch\nx = 2\nraise KeyError(g(x))\n");
    assert_eq!(out.stop, StopReason::Fixpoint);
}

#[test]
fn the_pumps_carry_a_value_through_a_helper_and_main_to_its_use() {
    // With every pass, a textual oracle lets delete_statements drop the calls, since the
    // needles survive that; a real run would no longer fail. The two pumps alone show that
    // the indirection collapses into the one line that fails.
    use scrub_reducers::passes::{InlineCalls, PropagateValues};
    let text = "def helper(x):\n    return {}[x]\ndef main():\n    key = 'calibration'\n    helper(key)\nmain()\n";
    let mut oracle = Contains(&["]", "'calibration'"]);
    let pumps: &[&dyn scrub_reducers::Pass] = &[&InlineCalls, &PropagateValues];
    let out = reduce(text, pumps, &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.text, "{}['calibration']\n");
}

#[test]
fn a_pass_that_may_grow_the_script_steps_down_its_ladder_once() {
    // The backend rung makes the text longer; the loop takes it because the pass may grow it,
    // and ends because it never goes back to a script it accepted before.
    let text = "import torch\nf = torch.compile(g, backend=\"inductor\")\nf(1)\n";
    // Only scripts on the ladder's lower rungs count (a stand-in for a failure that needs
    // a working backend).
    let needles = &["torch.compile", "eager\"", "f(1)"];
    let out = reduce(text, PASSES, &mut Contains(needles), &exhaustive()).unwrap();
    assert_eq!(out.stop, StopReason::Fixpoint);
    assert!(out.text.contains("backend=\"eager\""), "{}", out.text);
}

/// A pump for the tests: doubles the `x = 1` line it finds, growing the script.
struct Doubler;

impl scrub_reducers::Pass for Doubler {
    fn info(&self) -> scrub_reducers::PassInfo {
        scrub_reducers::PassInfo {
            growth: scrub_reducers::Growth::Pump,
            ..scrub_reducers::PassInfo::new("doubler")
        }
    }

    fn candidates(&self, script: &scrub_reducers::python::Script) -> Vec<Candidate> {
        let text = script.text();
        match text.find("x = 1\n") {
            Some(at) if !text.contains("x = 1\nx = 1\n") => vec![Candidate::new(
                "double",
                vec![Edit::replace(at..at + 6, "x = 1\nx = 1\n")],
            )],
            _ => Vec::new(),
        }
    }
}

fn pump_stats(out: &scrub_reducers::Reduction) -> (usize, usize) {
    let s = out.passes.iter().find(|p| p.name == "doubler").unwrap();
    (s.pumps_kept, s.pumps_rolled_back)
}

#[test]
fn a_pump_that_deletion_cannot_make_up_for_is_rolled_back() {
    use scrub_reducers::passes::DeleteStatements;
    let text = "x = 1\ny = 2\n";
    let passes: &[&dyn scrub_reducers::Pass] = &[&Doubler, &DeleteStatements];
    // Both lines are needed: the doubled script cannot shrink back below the original.
    let out = reduce(
        text,
        passes,
        &mut Contains(&["x = 1", "y = 2"]),
        &exhaustive(),
    )
    .unwrap();
    assert_eq!(out.text, text);
    assert_eq!(pump_stats(&out), (0, 1));
    assert_eq!(out.stop, StopReason::Fixpoint);
}

#[test]
fn a_pump_after_which_deletion_goes_further_is_kept() {
    use scrub_reducers::passes::DeleteStatements;
    let text = "x = 1\ny = 2\nz = 3\n";
    let passes: &[&dyn scrub_reducers::Pass] = &[&Doubler, &DeleteStatements];
    // The oracle wants the doubled line (a stand-in for code only a rewrite exposes).
    let out = reduce(
        text,
        passes,
        &mut Contains(&["x = 1\nx = 1"]),
        &exhaustive(),
    )
    .unwrap();
    assert_eq!(out.text, "x = 1\nx = 1\n");
    assert_eq!(pump_stats(&out), (1, 0));
}

#[test]
fn tensor_subclass_dunders_do_not_count_toward_the_target() {
    let text = "import torch\nclass T(torch.Tensor):\n    def __new__(cls, x):\n        return x\n    def __torch_dispatch__(cls, f, t, a, k):\n        return f(*a)\n    def helper(self):\n        return 1\nT(1)\n";
    let script = scrub_reducers::Script::parse(text, scrub_reducers::PythonVersion::PY311).unwrap();
    // class line, helper (2 lines), the call: the dunders and the import are left out.
    assert_eq!(scrub_reducers::reduce::code_lines(&script), 4);
}

/// Fails when the text holds "calibration"; reports the crash at the line that holds it, with
/// its `key` a literal, and counts how often it was asked.
struct Crashing(usize);

impl Oracle for Crashing {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        Ok(texts
            .iter()
            .map(|t| t.contains("['calibration']"))
            .collect())
    }

    fn crash(&mut self, text: &str) -> Option<scrub_reducers::Crash> {
        self.0 += 1;
        let line = text.lines().position(|l| l.contains("[key]"))? + 1;
        Some(scrub_reducers::Crash {
            frames: vec![scrub_reducers::Frame {
                line,
                in_function: true,
                locals: vec!["key".into(), "self".into()],
                values: vec![
                    ("key".into(), "'calibration'".into()),
                    ("self.values".into(), "{}".into()),
                ],
            }],
            computed: Vec::new(),
        })
    }
}

#[test]
fn the_jump_to_the_failing_statement_takes_the_values_it_read() {
    let text = "class C:\n    def __init__(self):\n        self.values = {}\n    def get(self, key):\n        return self.values[key]\ndef main():\n    C().get('calibration')\nmain()\n";
    let mut oracle = Crashing(0);
    let out = reduce(text, PASSES, &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.text.trim(), "{}['calibration']", "{}", out.text);
    let jump = out
        .passes
        .iter()
        .find(|p| p.name == "jump_to_crash")
        .unwrap();
    assert!(jump.accepted >= 1);
    // Once the failing statement is all there is, the probe brings nothing new: it is asked
    // for three rounds more at most.
    assert!(
        oracle.0 <= out.rounds + 1,
        "{} probes in {} rounds",
        oracle.0,
        out.rounds
    );
}

#[test]
fn the_failure_is_asked_for_once_a_round_and_three_rounds_of_every_pass_without_a_gain_at_most() {
    // The probe never finds a traceback.
    struct Unhelpful(usize);
    impl Oracle for Unhelpful {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            let needles = ["parse_args", "cfg.get(", "class Config"];
            Ok(texts
                .iter()
                .map(|t| needles.iter().all(|n| t.contains(n)))
                .collect())
        }
        fn crash(&mut self, _text: &str) -> Option<scrub_reducers::Crash> {
            self.0 += 1;
            None
        }
    }
    let mut oracle = Unhelpful(0);
    let out = reduce(BLOATED, PASSES, &mut oracle, &exhaustive()).unwrap();
    // Patience counts only the rounds of every pass; the last rounds no longer ask.
    assert!(
        (3..out.rounds).contains(&oracle.0),
        "{} probes in {} rounds",
        oracle.0,
        out.rounds
    );
}

#[test]
fn stopping_at_the_target_still_drops_unused_imports() {
    let text = "import os\nimport sys\nimport json\n\nx = {}\nx['calibration']\n";
    let mut oracle = Contains(&["['calibration']"]);
    let out = reduce(text, PASSES, &mut oracle, &Options::default()).unwrap();
    assert_eq!(out.stop, StopReason::TargetReached);
    assert!(!out.text.contains("import"), "{}", out.text);
    assert!(
        out.text.contains("x = {}"),
        "the target stopped the rest: {}",
        out.text
    );
}

#[test]
fn an_assert_never_becomes_a_check_of_constants() {
    // An oracle that looks at the message only, as a signature does: without the rule the
    // check would end as `assert 0, f"…"`.
    let text = "def total(items):\n    return round(sum(items))\n\nitems = [1.25, 2.5]\nexpected = 4\ngot = total(items)\nassert got == expected, f\"total mismatch: expected {expected}, got {got}\"\n";
    let out = reduce(
        text,
        PASSES,
        &mut Contains(&["assert", "total mismatch"]),
        &exhaustive(),
    )
    .unwrap();
    let script = scrub_reducers::Script::parse(out.text.as_str(), Default::default()).unwrap();
    assert_eq!(
        scrub_reducers::tautology::constant_asserts(&script),
        0,
        "{}",
        out.text
    );
    assert!(out.text.contains("assert"), "{}", out.text);
}

#[test]
fn no_candidate_reads_a_name_it_no_longer_binds() {
    // The oracle would accept a script that reads `helper` without defining it; Python would
    // not: such candidates are refused unseen.
    struct Sees(Vec<String>);
    impl Oracle for Sees {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            self.0.extend(texts.iter().cloned());
            Ok(texts.iter().map(|t| t.contains("helper(")).collect())
        }
    }
    let text = "import os\n\ndef helper(x):\n    y = x * 2\n    return y\n\ndef unused():\n    return os.getcwd()\n\nprint(helper(os.sep))\n";
    let mut oracle = Sees(Vec::new());
    let out = reduce(text, PASSES, &mut oracle, &exhaustive()).unwrap();
    for seen in &oracle.0 {
        let script = scrub_reducers::Script::parse(seen.as_str(), Default::default()).unwrap();
        let scopes = scrub_reducers::scopes::Scopes::of(script.body());
        let unbound: Vec<&str> = scopes.unbound_reads().collect();
        assert!(
            !unbound.contains(&"helper") && !unbound.contains(&"os") && !unbound.contains(&"y"),
            "{seen}"
        );
    }
    assert!(out.text.contains("def helper"), "{}", out.text);
}

#[test]
fn a_generic_pass_never_turns_a_backend_into_a_module() {
    // Dynamo fails before it calls the backend, so an oracle that only sees the compile would
    // take any value there.
    let text = "import argparse\nimport torch\nparser = argparse.ArgumentParser()\nparser.add_argument(\"--backend\", default=\"eager\")\nargs = parser.parse_args()\nf = torch.compile(g, backend=args.backend, fullgraph=True)\n";
    let out = reduce(
        text,
        PASSES,
        &mut Contains(&["import torch", "torch.compile(", "backend="]),
        &exhaustive(),
    )
    .unwrap();
    let backend = out
        .text
        .split("backend=")
        .nth(1)
        .and_then(|rest| rest.split([',', ')']).next())
        .unwrap();
    assert!(
        backend == "\"eager\"" || backend == "args.backend",
        "{}",
        out.text
    );
}

#[test]
fn the_failures_message_is_never_cut_inside_its_literal() {
    // Every cut into the message would only be judged a near miss, and there are dozens of
    // them per round (a compile each, on a torch repro).
    struct Seen(Vec<String>);
    impl Oracle for Seen {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            self.0.extend(texts.iter().cloned());
            Ok(texts
                .iter()
                .map(|t| t.contains("total mismatch") && t.contains("sum("))
                .collect())
        }
    }
    let text =
        "cents = sum([1, 2, 3])\nassert cents == 7, \"invoice total mismatch: expected 7 cents\"\n";
    let run = |message: Option<&str>| {
        let mut seen = Seen(Vec::new());
        let options = Options {
            message: message.map(str::to_string),
            ..exhaustive()
        };
        let out = reduce(text, PASSES, &mut seen, &options).unwrap();
        (out.text, seen.0)
    };
    let (free, free_seen) = run(None);
    let (kept, kept_seen) = run(Some("total mismatch"));
    assert!(kept.contains("total mismatch"), "{kept}");
    assert!(
        free_seen
            .iter()
            .any(|t| t.contains("mismatch") && !t.contains("total mismatch")),
        "without the rule the message is cut"
    );
    let cut: Vec<&String> = kept_seen
        .iter()
        .filter(|t| {
            (t.contains("mismatch") || t.contains("total ")) && !t.contains("total mismatch")
        })
        .collect();
    assert!(cut.is_empty(), "{cut:?}");
    assert!(kept_seen.len() < free_seen.len());
    assert_eq!(count_lines(&kept), count_lines(&free), "{kept}\n{free}");
}

#[test]
fn a_pump_whose_values_change_from_run_to_run_is_not_tried_for_ever() {
    // The probe reports a new value for `g(x)` every time it runs (an unseeded draw): each
    // freeze is a text never seen before, and none pays off.
    struct Drifting(usize);
    impl Oracle for Drifting {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            Ok(texts
                .iter()
                .map(|t| {
                    ["import torch", "x = f(1)"].iter().all(|n| t.contains(n))
                        && (t.contains("y = g(x)") || t.contains("y = torch.tensor(["))
                })
                .collect())
        }
        fn crash(&mut self, text: &str) -> Option<scrub_reducers::Crash> {
            self.0 += 1;
            let line = text.lines().position(|l| l.starts_with("y = g(x)"))? + 1;
            Some(scrub_reducers::Crash {
                frames: vec![scrub_reducers::Frame {
                    line,
                    ..Default::default()
                }],
                computed: vec![scrub_reducers::Computed {
                    start: (line, 4),
                    end: (line, 8),
                    code: format!("torch.tensor([{}.5])", self.0),
                }],
            })
        }
    }
    let text = "import torch\nx = f(1)\ny = g(x)\n";
    let mut oracle = Drifting(0);
    let out = reduce(text, PASSES, &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.stop, StopReason::Fixpoint);
    assert_eq!(out.text, text);
    assert!(oracle.0 < 20, "{} probes", oracle.0);
}

#[test]
fn an_edit_refused_on_an_earlier_script_is_asked_again_only_before_the_fixpoint() {
    /// One candidate per line: delete it.
    struct DeleteLines;
    impl scrub_reducers::pass::Pass for DeleteLines {
        fn info(&self) -> scrub_reducers::PassInfo {
            scrub_reducers::PassInfo::new("delete_lines")
        }
        fn candidates(&self, script: &scrub_reducers::Script) -> Vec<Candidate> {
            let mut out = Vec::new();
            let mut at = 0;
            for line in script.text().split_inclusive('\n') {
                out.push(Candidate::new(
                    format!("delete {}", line.trim()),
                    vec![Edit::delete(at..at + line.len())],
                ));
                at += line.len();
            }
            out
        }
    }
    /// Refuses every text without all four `s` lines, and counts how often each was asked
    /// to lose one.
    struct KeepsS(Vec<usize>);
    impl Oracle for KeepsS {
        fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
            Ok(texts
                .iter()
                .map(|t| {
                    let lost: Vec<usize> = (0..4)
                        .filter(|i| !t.contains(&format!("s{i} = {i}\n")))
                        .collect();
                    lost.iter().for_each(|&i| self.0[i] += 1);
                    lost.is_empty()
                })
                .collect())
        }
    }
    let text = "d0 = 0\ns0 = 0\nd1 = 1\ns1 = 1\nd2 = 2\ns2 = 2\nd3 = 3\ns3 = 3\n";
    let mut oracle = KeepsS(vec![0; 4]);
    let out = reduce(text, &[&DeleteLines], &mut oracle, &exhaustive()).unwrap();
    assert_eq!(out.text, "s0 = 0\ns1 = 1\ns2 = 2\ns3 = 3\n");
    assert_eq!(out.stop, StopReason::Fixpoint);
    // Once on the start, where the window's first win came before it; once on the result,
    // in the round that forgets what was refused, which the fixpoint needs.
    assert_eq!(oracle.0, [2, 2, 2, 2]);
}

#[test]
fn a_script_of_comments_alone_has_nothing_to_delete() {
    let text = "# calibration drifts\n";
    let out = reduce(text, PASSES, &mut Contains(&["calibration"]), &exhaustive()).unwrap();
    assert_eq!(out.text, text);
}
