//! Rewrites of a repro that make its runs say more, applied before reproducing and reported:
//! `torch._dynamo.reset()` between repeated compiles, a fixed seed for runs that disagree,
//! and small sizes after an out-of-memory that the issue is not about.
//!
//! Each works on the text and returns `None` when it does not apply.

use scrub_reducers::python::{self, PythonVersion, Ranged, Script, Stmt};
use scrub_reducers::{Candidate, pass};

/// Inserts `torch._dynamo.reset()` before every statement that calls `torch.compile` when
/// the script compiles more than once (two such statements, or one inside a loop), so that
/// a later compile does not reuse what an earlier one cached. `None` when it compiles once,
/// already resets, or does not `import torch`.
pub fn dynamo_resets(text: &str, version: PythonVersion) -> Option<String> {
    if text.contains("_dynamo.reset()") || !imports_torch(text) {
        return None;
    }
    let script = Script::parse(text, version)?;
    let mut sites = Vec::new();
    collect_compiles(&script, script.body(), false, &mut sites);
    let repeated = sites.len() >= 2 || sites.iter().any(|(_, in_loop)| *in_loop);
    if !repeated {
        return None;
    }
    let mut out = text.to_string();
    // From the end, so that earlier offsets stay valid.
    for (start, _) in sites.iter().rev() {
        let line_start = text[..*start].rfind('\n').map_or(0, |i| i + 1);
        let indent = &text[line_start..*start];
        out.insert_str(line_start, &format!("{indent}torch._dynamo.reset()\n"));
    }
    Some(out)
}

fn imports_torch(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l == "import torch" || l.starts_with("import torch ") || l.starts_with("import torch,")
    })
}

/// The start offsets of simple statements that call `torch.compile`, and whether each sits
/// in a loop.
fn collect_compiles(script: &Script, body: &[Stmt], in_loop: bool, out: &mut Vec<(usize, bool)>) {
    for stmt in body {
        let children = python::child_bodies(stmt);
        if children.is_empty() {
            if script.slice(stmt).contains("torch.compile(") {
                out.push((stmt.range().start().to_usize(), in_loop));
            }
            continue;
        }
        let looping = in_loop || matches!(stmt, Stmt::For(_) | Stmt::While(_));
        // A def's body runs when called, possibly many times: treat it as a loop.
        let looping = looping || matches!(stmt, Stmt::FunctionDef(_));
        for child in children {
            collect_compiles(script, child, looping, out);
        }
    }
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

/// Every tensor and layer size the `shrink_dims` pass would shrink, shrunk together (the
/// first proposal for each, which is its smallest size): a script that ran out of memory
/// gets another chance at the same error. `None` when nothing shrinks.
pub fn small_dims(text: &str, version: PythonVersion) -> Option<String> {
    let script = Script::parse(text, version)?;
    let shrink = pass::by_name("shrink_dims")?;
    let mut merged: Option<Candidate> = None;
    for c in shrink.candidates(&script) {
        merged = Some(match merged {
            None => c,
            Some(m) if m.is_disjoint(&c) => {
                let both = m.merge(&c);
                if both
                    .apply(text)
                    .is_some_and(|t| python::is_valid(&t, version))
                {
                    both
                } else {
                    m
                }
            }
            Some(m) => m,
        });
    }
    merged?
        .apply(text)
        .filter(|t| t != text && python::is_valid(t, version))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: PythonVersion = PythonVersion::PY311;

    #[test]
    fn repeated_compiles_get_a_reset_before_each() {
        let text = "import torch\n\nf = torch.compile(g)\nf(x)\nfor mode in ['default', 'reduce-overhead']:\n    h = torch.compile(g, mode=mode)\n    h(x)\n";
        assert_eq!(
            dynamo_resets(text, V).unwrap(),
            "import torch\n\ntorch._dynamo.reset()\nf = torch.compile(g)\nf(x)\nfor mode in ['default', 'reduce-overhead']:\n    torch._dynamo.reset()\n    h = torch.compile(g, mode=mode)\n    h(x)\n"
        );
    }

    #[test]
    fn a_single_compile_or_an_existing_reset_is_left_alone() {
        assert_eq!(
            dynamo_resets("import torch\nf = torch.compile(g)\n", V),
            None
        );
        assert_eq!(
            dynamo_resets(
                "import torch\nf = torch.compile(g)\ntorch._dynamo.reset()\nh = torch.compile(g)\n",
                V
            ),
            None
        );
        assert_eq!(dynamo_resets("f = compile('1', 'x', 'eval')\n", V), None);
    }

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
