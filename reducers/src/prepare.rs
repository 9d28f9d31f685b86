//! Rewrites made once, before a reduction starts; the binary keeps each only if the script
//! still fails the same way after it.

use std::collections::HashMap;

use crate::edit::{Candidate, Edit, apply_edits, indent_at, line_start, starts_line};
use crate::pass::Pass;
use crate::passes::ShrinkDims;
use crate::python::{Expr, Script, Stmt, all_exprs, child_bodies, span};
use crate::torch::{torch_imports, torch_path};

/// A repro that compiles more than once (`torch.compile` in two statements, or in one that
/// runs in a loop or a function), with `torch._dynamo.reset()` inserted before every compile
/// but a first one that runs once, so that one compile's caches and guards do not leak into
/// the next; and how many were inserted. `None` when it compiles once, already resets, or
/// does not `import torch`.
pub fn dynamo_resets(script: &Script) -> Option<(String, usize)> {
    let imports = torch_imports(script);
    let text = script.text();
    if imports.get("torch").map(String::as_str) != Some("torch") || text.contains("_dynamo.reset(")
    {
        return None;
    }
    let mut sites = Vec::new();
    compile_sites(script.body(), &imports, false, &mut sites);
    sites.retain(|(start, _)| starts_line(text, *start));
    let repeated = sites.len() >= 2 || sites.iter().any(|(_, again)| *again);
    if !repeated {
        return None;
    }
    let edits: Vec<Edit> = sites
        .iter()
        .enumerate()
        .filter(|(i, (_, again))| *i > 0 || *again)
        .map(|(_, (start, _))| {
            let at = line_start(text, *start);
            Edit::replace(
                at..at,
                format!("{}torch._dynamo.reset()\n", indent_at(text, *start)),
            )
        })
        .collect();
    Some((apply_edits(text, &edits)?, edits.len()))
}

/// The starts of the simple statements that call `torch.compile`, in source order, and
/// whether each may run more than once (in a loop or a function body).
fn compile_sites(
    body: &[Stmt],
    imports: &HashMap<String, String>,
    again: bool,
    out: &mut Vec<(usize, bool)>,
) {
    for stmt in body {
        let children = child_bodies(stmt);
        if children.is_empty() {
            let compiles = all_exprs(std::slice::from_ref(stmt)).into_iter().any(|e| {
                matches!(e, Expr::Call(c)
                    if torch_path(imports, &c.func).as_deref() == Some("torch.compile"))
            });
            if compiles {
                out.push((span(stmt).start, again));
            }
            continue;
        }
        let again = again || matches!(stmt, Stmt::For(_) | Stmt::While(_) | Stmt::FunctionDef(_));
        for child in children {
            compile_sites(child, imports, again, out);
        }
    }
}

/// The line [`seeded`] inserts.
pub const SEED_LINE: &str = "torch.manual_seed(0)  # scrub: keep";

/// The script with `torch.manual_seed(0)` after its top-level imports, marked `# scrub: keep`
/// so that no pass removes it: for a flaky repro, whose failure may depend on random values,
/// and for one that seeds its random numbers itself, whose reduction would turn flaky once
/// its own seed is deleted. `None` when the script does not `import torch` or already has
/// the line.
pub fn seeded(script: &Script) -> Option<String> {
    let imports = torch_imports(script);
    let text = script.text();
    if imports.get("torch").map(String::as_str) != Some("torch") || text.contains(SEED_LINE) {
        return None;
    }
    let at = script
        .body()
        .iter()
        .find(|s| !matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_)) && !is_docstring(s))
        .map_or(text.len(), |s| line_start(text, span(s).start));
    let line = format!("{SEED_LINE}\n");
    let glue = if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        "\n"
    } else {
        ""
    };
    apply_edits(text, &[Edit::replace(at..at, format!("{glue}{line}"))])
}

/// Whether the seed that [`seeded`] inserted is superseded: a module-level
/// `torch.manual_seed(…)` of the script's own comes after it, and nothing between them can draw
/// a random number (imports, undecorated functions whose defaults call nothing, and
/// statements that call nothing). Without the inserted seed, every draw is then the same.
pub fn superseded_seed(script: &Script) -> bool {
    let imports = torch_imports(script);
    let text = script.text();
    let body = script.body();
    let Some(at) = body
        .iter()
        .position(|s| text[line_start(text, span(s).start)..].starts_with(SEED_LINE))
    else {
        return false;
    };
    for stmt in &body[at + 1..] {
        if is_torch_seed(&imports, stmt) {
            return true;
        }
        if !calls_nothing(stmt) {
            return false;
        }
    }
    false
}

/// A statement that seeds torch's generator on every device.
fn is_torch_seed(imports: &HashMap<String, String>, stmt: &Stmt) -> bool {
    let Stmt::Expr(e) = stmt else { return false };
    let Expr::Call(call) = e.value.as_ref() else {
        return false;
    };
    torch_path(imports, &call.func)
        .is_some_and(|f| f == "torch.manual_seed" || f == "torch.random.manual_seed")
}

/// Whether running `stmt` calls nothing, so cannot draw: an import, a function definition
/// whose decorators and defaults call nothing, or a simple statement without a call.
fn calls_nothing(stmt: &Stmt) -> bool {
    let has_call = |exprs: Vec<&Expr>| exprs.iter().any(|e| matches!(e, Expr::Call(_)));
    match stmt {
        Stmt::Import(_) | Stmt::ImportFrom(_) | Stmt::Pass(_) => true,
        Stmt::FunctionDef(f) => {
            f.decorator_list.is_empty()
                && !f
                    .parameters
                    .iter_non_variadic_params()
                    .filter_map(|p| p.default.as_deref())
                    .any(|d| has_call(crate::python::exprs_of(d)))
        }
        Stmt::Assign(_) | Stmt::AnnAssign(_) | Stmt::AugAssign(_) | Stmt::Expr(_) => {
            !has_call(all_exprs(std::slice::from_ref(stmt)))
        }
        _ => false,
    }
}

fn is_docstring(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::StringLiteral(_)))
}

/// The script with every tensor and layer size above 8 set to 8 at once (the candidates of
/// `shrink_dims` at 8, combined): for a repro that runs out of memory on this machine before
/// it reaches the failure it reports. `None` when there is no such size.
pub fn small_sizes(script: &Script) -> Option<String> {
    let eights: Vec<Candidate> = ShrinkDims
        .candidates(script)
        .into_iter()
        .filter(|c| c.edits.iter().all(|e| e.replacement == "8"))
        .collect();
    let mut taken: Vec<&Candidate> = Vec::new();
    for c in &eights {
        if taken.iter().all(|t| t.is_disjoint(c)) {
            taken.push(c);
        }
    }
    let edits: Vec<Edit> = taken.iter().flat_map(|c| c.edits.iter().cloned()).collect();
    (!edits.is_empty()).then(|| apply_edits(script.text(), &edits))?
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn resets(text: &str) -> Option<String> {
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        dynamo_resets(&script).map(|(t, _)| t)
    }

    fn superseded(text: &str) -> bool {
        superseded_seed(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_seed_of_the_scripts_own_before_any_draw_supersedes_the_inserted_one() {
        let head = format!("import torch\n{SEED_LINE}\n");
        assert!(superseded(&format!(
            "{head}import math\nN = 4\ndef f(x=2):\n    return torch.randn(x)\ntorch.manual_seed(6)\nx = torch.randn(N)\n"
        )));
        // A draw, or a call that may draw, before the script's own seed.
        assert!(!superseded(&format!(
            "{head}w = torch.randn(2)\ntorch.manual_seed(6)\n"
        )));
        assert!(!superseded(&format!(
            "{head}@torch.no_grad()\ndef f():\n    pass\ntorch.manual_seed(6)\n"
        )));
        // No seed of its own, or one that seeds only CUDA's generators.
        assert!(!superseded(&format!("{head}x = torch.randn(2)\n")));
        assert!(!superseded(&format!(
            "{head}torch.cuda.manual_seed_all(6)\n"
        )));
    }

    #[test]
    fn a_reset_goes_before_every_compile_but_a_first_that_runs_once() {
        let text = "import torch\nf = torch.compile(g)\nf(1)\nfor m in modes:\n    k = torch.compile(g, mode=m)\n    k(2)\n";
        assert_eq!(
            resets(text).unwrap(),
            "import torch\nf = torch.compile(g)\nf(1)\nfor m in modes:\n    torch._dynamo.reset()\n    k = torch.compile(g, mode=m)\n    k(2)\n"
        );
        let text = "import torch\nfor m in modes:\n    torch.compile(g, mode=m)(1)\n";
        assert_eq!(
            resets(text).unwrap(),
            "import torch\nfor m in modes:\n    torch._dynamo.reset()\n    torch.compile(g, mode=m)(1)\n"
        );
    }

    #[test]
    fn one_compile_or_no_torch_needs_no_reset() {
        assert_eq!(
            resets("import torch\nf = torch.compile(g)\nf(1)\nf(2)\n"),
            None
        );
        assert_eq!(resets("compile(a)\ncompile(b)\n"), None);
        let reset =
            "import torch\nf = torch.compile(g)\ntorch._dynamo.reset()\nh = torch.compile(g)\n";
        assert_eq!(resets(reset), None);
    }

    #[test]
    fn every_size_above_8_becomes_8_at_once() {
        let text = "import torch\nx = torch.randn(100000, 100000)\ny = torch.zeros(4, 2048)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(
            small_sizes(&script).unwrap(),
            "import torch\nx = torch.randn(8, 8)\ny = torch.zeros(4, 8)\n"
        );
    }

    #[test]
    fn the_seed_goes_after_the_imports_and_is_kept() {
        let text = "\"\"\"Doc.\"\"\"\nimport torch\nx = torch.rand(1)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(
            seeded(&script).unwrap(),
            "\"\"\"Doc.\"\"\"\nimport torch\ntorch.manual_seed(0)  # scrub: keep\nx = torch.rand(1)\n"
        );
    }
}
