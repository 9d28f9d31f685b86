//! The simplification ladder of a PyTorch repro: which simplifications the failure survived.
//!
//! A rung is *held* when a script stepped off it ran and still failed the same way: the
//! result itself when the reduction left the rung, else the result stepped off it in full
//! (see `scrub_reducers::rungs`), run like a candidate. It *did not hold* when that stepped-off
//! script ran and did not fail the same way: only then may it say what the failure needs.
//! It was *not tried* when no such script could be built (a backend that is not a string
//! literal) or run, and then it says why, and nothing about the failure. Scripts that do not
//! mention torch have no ladder.

use scrub_reducers::rungs::{LADDER, Rung as Step};
use scrub_reducers::{PythonVersion, Script};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Held,
    DidNotHold,
    NotTried,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Held => "held",
            State::DidNotHold => "did not hold",
            State::NotTried => "not tried",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rung {
    /// `cpu`, `float32`, `small_dims`, `aot_eager`, `eager`.
    pub rung: String,
    pub state: State,
    /// Whether the failure was seen on this rung (`state` is `held`).
    pub held: bool,
    /// What it tells a triager; for a rung not tried, why it was not.
    pub meaning: String,
}

impl Rung {
    /// Whether the rung ran, so that what it says is about the failure.
    pub fn ran(&self) -> bool {
        self.state != State::NotTried
    }
}

/// The rungs the original stood on, each with what became of it on the result. `run` runs
/// scripts like candidates, all at once: for each, whether it fails the same way; `None` when
/// they could not be run.
pub fn verdict(
    original: &str,
    result: &str,
    version: PythonVersion,
    run: &mut dyn FnMut(&[String]) -> Option<Vec<bool>>,
) -> Vec<Rung> {
    if !original.contains("torch") {
        return Vec::new();
    }
    let (Some(original), Some(result)) = (
        Script::parse(original, version),
        Script::parse(result, version),
    ) else {
        return Vec::new();
    };
    // Each rung the original stood on: held already (the result left it), or the result
    // stepped off it, or why it cannot be.
    let steps: Vec<(Step, Result<Option<String>, String>)> = LADDER
        .into_iter()
        .filter(|step| step.stands_on(&original))
        .map(|step| {
            let stepped = if step.stands_on(&result) {
                step.step_off(&result, version).map(Some)
            } else {
                Ok(None)
            };
            (step, stepped)
        })
        .collect();
    let texts: Vec<String> = steps
        .iter()
        .filter_map(|(_, stepped)| stepped.clone().ok().flatten())
        .collect();
    let mut verdicts = if texts.is_empty() {
        Some(Vec::new())
    } else {
        run(&texts)
    }
    .map(Vec::into_iter);
    steps
        .into_iter()
        .map(|(step, stepped)| {
            let state = match stepped {
                Ok(None) => Ok(true),
                Ok(Some(_)) => verdicts
                    .as_mut()
                    .and_then(Iterator::next)
                    .ok_or_else(|| "the stepped-off script could not be run".to_string()),
                Err(why) => Err(why),
            };
            rung(step, state)
        })
        .collect()
}

/// A rung, with what it tells for how it went.
fn rung(step: Step, state: Result<bool, String>) -> Rung {
    let (held, needs) = match step {
        Step::Cpu => ("still fails on CPU: not CUDA-specific", "needs CUDA"),
        Step::Float32 => (
            "still fails in float32: not dtype-specific",
            "needs its dtype",
        ),
        Step::SmallDims => ("still fails with sizes of 8 or less", "needs sizes above 8"),
        Step::AotEager => (
            "still fails with backend=aot_eager: not inductor-specific",
            "needs inductor",
        ),
        Step::Eager => (
            "still fails with backend=eager: not a backend bug",
            "needs a compiling backend (aot_eager)",
        ),
    };
    let (state, meaning) = match state {
        Ok(true) => (State::Held, held.to_string()),
        Ok(false) => (State::DidNotHold, needs.to_string()),
        Err(why) => (State::NotTried, format!("not tried: {why}")),
    };
    Rung {
        rung: step.name().into(),
        state,
        held: state == State::Held,
        meaning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "import torch\nx = torch.randn(1024, 1024, dtype=torch.float64).cuda()\nf = torch.compile(g)\nf(x)\n";

    fn states(rungs: &[Rung]) -> Vec<(&str, State)> {
        rungs.iter().map(|r| (r.rung.as_str(), r.state)).collect()
    }

    /// A runner that must not be called: the result left every rung itself.
    fn never(_: &[String]) -> Option<Vec<bool>> {
        panic!("nothing should run")
    }

    #[test]
    fn every_rung_the_result_left_held_without_a_run() {
        let result =
            "import torch\nx = torch.randn(4)\nf = torch.compile(g, backend=\"eager\")\nf(x)\n";
        let rungs = verdict(ORIGINAL, result, PythonVersion::PY311, &mut never);
        assert_eq!(
            states(&rungs),
            [
                ("cpu", State::Held),
                ("float32", State::Held),
                ("small_dims", State::Held),
                ("aot_eager", State::Held),
                ("eager", State::Held)
            ]
        );
        assert_eq!(
            rungs[3].meaning,
            "still fails with backend=aot_eager: not inductor-specific"
        );
    }

    #[test]
    fn a_rung_the_result_stands_on_is_run_stepped_off() {
        let result = "import torch\nx = torch.randn(4).cuda()\nf = torch.compile(g)\nf(x)\n";
        let mut ran = Vec::new();
        // Fails on every rung but the CPU and inductor-free ones.
        let rungs = verdict(
            ORIGINAL,
            result,
            PythonVersion::PY311,
            &mut |texts: &[String]| {
                ran.extend_from_slice(texts);
                let fails = |text: &String| text.contains("cuda") && !text.contains("backend");
                Some(texts.iter().map(fails).collect())
            },
        );
        assert_eq!(
            states(&rungs),
            [
                ("cpu", State::DidNotHold),
                ("float32", State::Held),
                ("small_dims", State::Held),
                ("aot_eager", State::DidNotHold),
                ("eager", State::DidNotHold)
            ]
        );
        assert_eq!(rungs[0].meaning, "needs CUDA");
        assert_eq!(rungs[3].meaning, "needs inductor");
        assert!(ran[0].contains("torch.randn(4)\n"), "{}", ran[0]);
        assert!(ran[2].contains("backend=\"eager\""), "{}", ran[2]);
    }

    #[test]
    fn a_rung_that_cannot_be_stepped_off_is_not_tried_and_says_why() {
        let original =
            "import torch\nimport argparse\nf = torch.compile(g, backend=\"aot_eager\")\nf(1)\n";
        let result =
            "import torch\nimport argparse\na = argparse\nf = torch.compile(g, backend=a)\nf(1)\n";
        let rungs = verdict(original, result, PythonVersion::PY311, &mut never);
        assert_eq!(states(&rungs), [("eager", State::NotTried)]);
        assert!(!rungs[0].held && !rungs[0].ran());
        assert_eq!(
            rungs[0].meaning,
            "not tried: the backend of torch.compile at line 4 is `a`, not a string literal"
        );
    }

    #[test]
    fn a_rung_whose_script_could_not_run_is_not_tried() {
        let result =
            "import torch\nx = torch.randn(4)\nf = torch.compile(g, backend=\"aot_eager\")\nf(x)\n";
        let rungs = verdict(
            ORIGINAL,
            result,
            PythonVersion::PY311,
            &mut |_: &[String]| None,
        );
        let eager = rungs.iter().find(|r| r.rung == "eager").unwrap();
        assert_eq!(eager.state, State::NotTried);
        assert_eq!(
            eager.meaning,
            "not tried: the stepped-off script could not be run"
        );
    }

    #[test]
    fn scripts_without_torch_have_no_ladder() {
        assert!(
            verdict(
                "x = [0] * 1024\nraise KeyError('cuda')\n",
                "raise KeyError('cuda')\n",
                PythonVersion::PY311,
                &mut never
            )
            .is_empty()
        );
    }
}
