//! The simplification ladder of a PyTorch repro: which simplifications the failure survived.
//!
//! Read off the original and the result: a rung the original stood above and the result
//! no longer does *held* (the bug does not need it); one the result still stands on did not
//! (as far as the reduction got). Scripts that do not mention torch have no ladder.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rung {
    /// `cpu`, `float32`, `small_dims`, `aot_eager`, `eager`.
    pub rung: String,
    /// Whether the result still fails on this rung.
    pub held: bool,
    /// What it tells a triager.
    pub meaning: String,
}

/// The rungs the original offered, with whether the result reached them.
pub fn verdict(original: &str, result: &str) -> Vec<Rung> {
    if !original.contains("torch") {
        return Vec::new();
    }
    let mut rungs = Vec::new();
    if uses_cuda(original) {
        rungs.push(rung(
            "cpu",
            !uses_cuda(result),
            "still fails on CPU: not CUDA-specific",
            "needs CUDA",
        ));
    }
    if uses_low_or_double_precision(original) {
        rungs.push(rung(
            "float32",
            !uses_low_or_double_precision(result),
            "still fails in float32: not dtype-specific",
            "needs its dtype",
        ));
    }
    if largest_int(original) > 8 {
        rungs.push(rung(
            "small_dims",
            largest_int(result) <= 8,
            "still fails with sizes of 8 or less",
            "needs sizes above 8",
        ));
    }
    if let Some(before) = backend(original).filter(|b| *b != "eager") {
        let after = backend(result);
        if before == "inductor" {
            rungs.push(rung(
                "aot_eager",
                matches!(after, Some("aot_eager" | "eager") | None),
                "still fails with backend=aot_eager: not inductor-specific",
                "needs inductor",
            ));
        }
        rungs.push(rung(
            "eager",
            matches!(after, Some("eager") | None),
            "still fails with backend=eager: not a compiler bug",
            "needs a compiling backend (aot_eager)",
        ));
    }
    rungs
}

/// A rung, with what it tells whether it held or not.
fn rung(name: &str, held: bool, if_held: &str, if_not: &str) -> Rung {
    Rung {
        rung: name.into(),
        held,
        meaning: if held { if_held } else { if_not }.into(),
    }
}

fn uses_cuda(text: &str) -> bool {
    text.contains("\"cuda") || text.contains("'cuda") || text.contains(".cuda(")
}

fn uses_low_or_double_precision(text: &str) -> bool {
    ["float64", "double", "half", "bfloat16", "float16"]
        .iter()
        .any(|d| text.contains(d))
}

fn largest_int(text: &str) -> u64 {
    text.split(|c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '.')
        .filter_map(|word| word.parse::<u64>().ok())
        .max()
        .unwrap_or(0)
}

/// The backend of the script's `torch.compile`: `inductor` when it is left to the default,
/// `None` when nothing is compiled any more.
fn backend(text: &str) -> Option<&'static str> {
    if !text.contains("torch.compile") && !text.contains("compile(") {
        return None;
    }
    for name in ["aot_eager", "eager", "inductor"] {
        if text.contains(&format!("backend=\"{name}\""))
            || text.contains(&format!("backend='{name}'"))
        {
            return Some(name);
        }
    }
    text.contains("torch.compile").then_some("inductor")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGINAL: &str = "import torch\nx = torch.randn(1024, 1024, dtype=torch.float64).cuda()\nf = torch.compile(g)\nf(x)\n";

    #[test]
    fn every_rung_reached_is_reported_as_held() {
        let result =
            "import torch\nx = torch.randn(4)\nf = torch.compile(g, backend=\"eager\")\nf(x)\n";
        let rungs = verdict(ORIGINAL, result);
        let names: Vec<_> = rungs.iter().map(|r| (r.rung.as_str(), r.held)).collect();
        assert_eq!(
            names,
            [
                ("cpu", true),
                ("float32", true),
                ("small_dims", true),
                ("aot_eager", true),
                ("eager", true)
            ]
        );
        assert_eq!(
            rungs[3].meaning,
            "still fails with backend=aot_eager: not inductor-specific"
        );
    }

    #[test]
    fn a_result_still_on_inductor_needs_inductor() {
        let result = "import torch\nx = torch.randn(4).cuda()\nf = torch.compile(g)\nf(x)\n";
        let rungs = verdict(ORIGINAL, result);
        assert!(
            rungs
                .iter()
                .any(|r| r.rung == "aot_eager" && !r.held && r.meaning == "needs inductor")
        );
        assert!(rungs.iter().any(|r| r.rung == "cpu" && !r.held));
    }

    #[test]
    fn scripts_without_torch_have_no_ladder() {
        assert!(
            verdict(
                "x = [0] * 1024\nraise KeyError('cuda')\n",
                "raise KeyError('cuda')\n"
            )
            .is_empty()
        );
    }
}
