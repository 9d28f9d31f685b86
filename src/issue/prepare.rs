//! Rewrites of a repro that make its runs say more, applied before reproducing and reported:
//! `torch._dynamo.reset()` between repeated compiles, a fixed seed for runs that disagree,
//! and small sizes after an out-of-memory that the issue is not about.
//!
//! Each works on the text and returns `None` when it does not apply.

use scrub_reducers::python::{PythonVersion, Ranged, Script, Stmt};

/// The repro with `torch._dynamo.reset()` before repeated compiles (see
/// [`scrub_reducers::prepare::dynamo_resets`]).
pub fn dynamo_resets(text: &str, version: PythonVersion) -> Option<String> {
    let script = Script::parse(text, version)?;
    scrub_reducers::prepare::dynamo_resets(&script).map(|(text, _)| text)
}

/// Seeds `random` (and torch and numpy when the script imports them) with 0 at the top of the
/// script, after any `from __future__` import.
pub fn fixed_seed(text: &str, modules: &[String]) -> String {
    let mut prelude = String::from("import random; random.seed(0)  # added by scrub\n");
    if modules.iter().any(|m| m == "torch") {
        prelude.push_str("import torch; torch.manual_seed(0)  # added by scrub\n");
    }
    if modules.iter().any(|m| m == "numpy") {
        prelude.push_str("import numpy; numpy.random.seed(0)  # added by scrub\n");
    }
    let at = Script::parse(text, PythonVersion::latest())
        .and_then(|s| {
            s.body()
                .iter()
                .find(|stmt| match stmt {
                    Stmt::ImportFrom(i) => {
                        i.module.as_ref().is_none_or(|m| m.as_str() != "__future__")
                    }
                    // A module docstring stays first.
                    Stmt::Expr(e) => !e.value.is_string_literal_expr(),
                    _ => true,
                })
                .map(|stmt| stmt.range().start().to_usize())
        })
        .unwrap_or(0);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    format!("{}{prelude}{}", &text[..line_start], &text[line_start..])
}

/// The repro with every tensor and layer size above 8 set to 8 (see
/// [`scrub_reducers::prepare::small_sizes`]): a script that ran out of memory gets another
/// chance at the same error.
pub fn small_dims(text: &str, version: PythonVersion) -> Option<String> {
    let script = Script::parse(text, version)?;
    scrub_reducers::prepare::small_sizes(&script)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: PythonVersion = PythonVersion::PY311;

    #[test]
    fn the_seed_goes_after_future_imports_and_the_docstring() {
        let text = "\"\"\"Repro.\"\"\"\nfrom __future__ import annotations\nimport torch\nx = torch.rand(2)\n";
        let seeded = fixed_seed(text, &["torch".to_string()]);
        assert_eq!(
            seeded,
            "\"\"\"Repro.\"\"\"\nfrom __future__ import annotations\nimport random; random.seed(0)  # added by scrub\nimport torch; torch.manual_seed(0)  # added by scrub\nimport torch\nx = torch.rand(2)\n"
        );
        assert!(
            fixed_seed("import random\nprint(random.random())\n", &[])
                .starts_with("import random; random.seed(0)")
        );
    }

    #[test]
    fn small_dims_shrinks_every_size_at_once() {
        let text = "import torch\nx = torch.randn(4096, 4096, device='cuda')\nlin = torch.nn.Linear(4096, 1000)\ny = lin(x)\n";
        let small = small_dims(text, V).unwrap();
        assert!(!small.contains("4096"), "{small}");
        assert!(small_dims("x = [0] * 4096\n", V).is_none());
    }
}
