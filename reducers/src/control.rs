//! The control of a PyTorch repro: the same script with its suspect replaced by the
//! reference, which must *pass* for a failure to be the suspect's.
//!
//! The suspect, in the order looked for:
//! - [`Suspect::Compile`]: `torch.compile(f, …)` becomes `f` (eager), and `@torch.compile`
//!   decorators go;
//! - [`Suspect::Device`]: CUDA becomes the CPU (the `cpu` rung, see [`crate::rungs`]);
//! - [`Suspect::Custom`]: in a comparison (`torch.allclose(a, b)`, `torch.equal`,
//!   `torch.testing.assert_close`), the side computed by the script's own code (a call of a
//!   function or class it defines) becomes the other side, the library's reference.
//!
//! The binary reads the suspect off the original and builds the control of every candidate
//! that fails the same way with that suspect: a candidate without one (the compile gone, the
//! comparison gone) has lost the bug.

use std::collections::HashSet;

use crate::edit::{Edit, apply_edits, line_end, line_start};
use crate::passes::{torch_imports, torch_path};
use crate::python::{
    Expr, PythonVersion, Ranged, Script, Stmt, all_bodies, all_exprs, is_atomic, span,
};
use crate::rungs::Rung;

/// What a control replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspect {
    Compile,
    Device,
    Custom,
}

impl Suspect {
    pub fn as_str(self) -> &'static str {
        match self {
            Suspect::Compile => "torch.compile → eager",
            Suspect::Device => "CUDA → CPU",
            Suspect::Custom => "the script's own computation → the reference it is compared with",
        }
    }

    /// The suspects `script` has, by the order above, each with its control.
    pub fn all_of(script: &Script, version: PythonVersion) -> Vec<(Suspect, String)> {
        [Suspect::Compile, Suspect::Device, Suspect::Custom]
            .into_iter()
            .filter_map(|s| Some((s, s.control(script, version)?)))
            .collect()
    }

    /// `script` with this suspect replaced by its reference; `None` when it has no such
    /// suspect.
    pub fn control(self, script: &Script, version: PythonVersion) -> Option<String> {
        let text = match self {
            Suspect::Compile => eager(script)?,
            Suspect::Device => {
                if !Rung::Cpu.stands_on(script) {
                    return None;
                }
                Rung::Cpu.step_off(script, version).ok()?
            }
            Suspect::Custom => reference(script)?,
        };
        Script::parse(text.as_str(), version).map(|_| text)
    }
}

/// Every `torch.compile(f, …)` replaced by `f`, every `@torch.compile` decorator dropped.
fn eager(script: &Script) -> Option<String> {
    let imports = torch_imports(script);
    if imports.is_empty() {
        return None;
    }
    let text = script.text();
    let is_compile = |e: &Expr| torch_path(&imports, e).as_deref() == Some("torch.compile");
    let mut edits = Vec::new();
    let mut decorators = HashSet::new();
    for body in all_bodies(script.body()) {
        for stmt in body {
            let list = match stmt {
                Stmt::FunctionDef(f) => &f.decorator_list,
                Stmt::ClassDef(c) => &c.decorator_list,
                _ => continue,
            };
            for decorator in list {
                let expression = &decorator.expression;
                let compiles = is_compile(expression)
                    || matches!(expression, Expr::Call(c) if is_compile(&c.func));
                if compiles {
                    let at = span(decorator);
                    decorators.insert(span(expression));
                    edits.push(Edit::delete(
                        line_start(text, at.start)..line_end(text, at.end),
                    ));
                }
            }
        }
    }
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        if !is_compile(&call.func) || decorators.contains(&span(expr)) {
            continue;
        }
        let replacement = match call.arguments.args.first() {
            Some(f) if is_atomic(f) => script.slice(f).to_string(),
            Some(f) => format!("({})", script.slice(f)),
            // `torch.compile(backend=…)` used as a decorator factory elsewhere.
            None => "(lambda f: f)".to_string(),
        };
        edits.push(Edit::replace(span(expr), replacement));
    }
    if edits.is_empty() {
        return None;
    }
    // A compile inside another compile's argument: the outer edit covers it.
    edits.sort_by_key(|e| (e.range.start, std::cmp::Reverse(e.range.end)));
    let mut kept: Vec<Edit> = Vec::new();
    for edit in edits {
        if kept.last().is_some_and(|k| edit.range.end <= k.range.end) {
            continue;
        }
        kept.push(edit);
    }
    apply_edits(text, &kept)
}

/// The library calls of the reference sides of the script's comparisons (see
/// [`Suspect::Custom`]), sorted: `torch.nn.functional.rms_norm`. A candidate whose reference
/// lost one of the original's compares the custom code with something else.
pub fn reference_calls(script: &Script) -> Vec<String> {
    let imports = torch_imports(script);
    let mut out: Vec<String> = comparisons(script)
        .into_iter()
        .flat_map(|(_, reference)| {
            crate::python::exprs_of(reference)
                .into_iter()
                .filter_map(|e| match e {
                    Expr::Call(c) => torch_path(&imports, &c.func),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The comparisons whose one side the script computes with its own code: that side replaced
/// by the other.
fn reference(script: &Script) -> Option<String> {
    let text = script.text();
    let edits: Vec<Edit> = comparisons(script)
        .into_iter()
        .map(|(custom, reference)| {
            Edit::replace(span(custom), format!("({})", &text[span(reference)]))
        })
        .collect();
    if edits.is_empty() {
        return None;
    }
    apply_edits(text, &edits)
}

/// The (custom, reference) sides of every comparison with exactly one side computed by the
/// script's own code; a side that is a name bound once stands for its value.
fn comparisons(script: &Script) -> Vec<(&Expr, &Expr)> {
    let imports = torch_imports(script);
    if imports.is_empty() {
        return Vec::new();
    }
    let own = own_names(script);
    let bindings = single_bindings(script);
    fn side<'a>(e: &'a Expr, bindings: &[(&str, &'a Expr)]) -> &'a Expr {
        match e {
            Expr::Name(n) => bindings
                .iter()
                .find(|(name, _)| *name == n.id.as_str())
                .map_or(e, |b| b.1),
            _ => e,
        }
    }
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        let compares = matches!(
            torch_path(&imports, &call.func).as_deref(),
            Some(
                "torch.allclose"
                    | "torch.equal"
                    | "torch.testing.assert_close"
                    | "torch.testing.assert_allclose"
            )
        );
        let [a, b, ..] = call.arguments.args.as_ref() else {
            continue;
        };
        if !compares {
            continue;
        }
        let (a, b) = (side(a, &bindings), side(b, &bindings));
        match (calls_own(a, &own), calls_own(b, &own)) {
            (true, false) => out.push((a, b)),
            (false, true) => out.push((b, a)),
            _ => {}
        }
    }
    out
}

/// The functions and classes the script defines, and the names bound to what they return
/// (`model = Model()`, `fast = fused(x)`), to a fixpoint.
fn own_names(script: &Script) -> HashSet<String> {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let mut own: HashSet<String> = HashSet::new();
    for stmt in &stmts {
        match stmt {
            Stmt::FunctionDef(f) => {
                own.insert(f.name.to_string());
            }
            Stmt::ClassDef(c) => {
                own.insert(c.name.to_string());
            }
            _ => {}
        }
    }
    loop {
        let before = own.len();
        for stmt in &stmts {
            if let Stmt::Assign(a) = stmt
                && calls_own(&a.value, &own)
            {
                for target in &a.targets {
                    if let Expr::Name(n) = target {
                        own.insert(n.id.to_string());
                    }
                }
            }
        }
        if own.len() == before {
            return own;
        }
    }
}

/// Whether `expr` calls something in `own` (`fused(x)`, `model(x)`, `Model()(x)`,
/// `model.forward(x)`).
fn calls_own(expr: &Expr, own: &HashSet<String>) -> bool {
    crate::python::exprs_of(expr).into_iter().any(|e| match e {
        Expr::Call(c) => root(&c.func).is_some_and(|r| own.contains(r)),
        _ => false,
    })
}

/// The name an attribute chain or call chain starts from.
fn root(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => root(&a.value),
        Expr::Call(c) => root(&c.func),
        _ => None,
    }
}

/// The names bound exactly once in the script, by `name = value`, with their values.
fn single_bindings(script: &Script) -> Vec<(&str, &Expr)> {
    let scopes = crate::scopes::Scopes::of(script.body());
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for o in scopes.occurrences.iter().filter(|o| o.binds) {
        *count.entry(o.name).or_default() += 1;
    }
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Assign(a) => match a.targets.as_slice() {
                [Expr::Name(n)] if count.get(n.id.as_str()) == Some(&1) => {
                    Some((n.id.as_str(), &*a.value))
                }
                _ => None,
            },
            _ => None,
        })
        .filter(|(_, v)| v.range().len() > 0.into())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(text: &str) -> Option<(Suspect, String)> {
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        Suspect::all_of(&script, PythonVersion::PY311)
            .into_iter()
            .next()
    }

    #[test]
    fn a_compiled_call_becomes_the_eager_one() {
        let (suspect, text) = control(
            "import torch\ndef f(x):\n    return x + 1\ncf = torch.compile(f, backend='inductor')\ntorch.testing.assert_close(cf(x), f(x))\n",
        )
        .unwrap();
        assert_eq!(suspect, Suspect::Compile);
        assert_eq!(
            text,
            "import torch\ndef f(x):\n    return x + 1\ncf = f\ntorch.testing.assert_close(cf(x), f(x))\n"
        );
        let (_, text) = control(
            "import torch\n@torch.compile(fullgraph=True)\ndef f(x):\n    return x\nf(1)\n",
        )
        .unwrap();
        assert_eq!(text, "import torch\ndef f(x):\n    return x\nf(1)\n");
        let (_, text) = control("import torch\nout = torch.compile(lambda x: x)(1)\n").unwrap();
        assert_eq!(text, "import torch\nout = (lambda x: x)(1)\n");
    }

    #[test]
    fn a_custom_implementation_becomes_the_reference_it_is_compared_with() {
        let text = "import torch\nfrom torch import nn\ndef fused(x):\n    return x * 2\nx = torch.randn(4)\nref = nn.LayerNorm(4)(x)\nfast = fused(x)\nassert torch.allclose(ref, fast)\n";
        let (suspect, control) = control(text).unwrap();
        assert_eq!(suspect, Suspect::Custom);
        assert_eq!(
            control,
            "import torch\nfrom torch import nn\ndef fused(x):\n    return x * 2\nx = torch.randn(4)\nref = nn.LayerNorm(4)(x)\nfast = (nn.LayerNorm(4)(x))\nassert torch.allclose(ref, fast)\n"
        );
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(reference_calls(&script), ["torch.nn.LayerNorm"]);
    }

    #[test]
    fn without_a_suspect_there_is_no_control() {
        // The comparison is gone, or compares two library results.
        assert_eq!(
            control(
                "import torch\nfrom torch import nn\nx = torch.randn(1)\nassert nn.LayerNorm(1)(x)\n"
            ),
            None
        );
        assert_eq!(
            control("import torch\nassert torch.allclose(torch.randn(1), torch.randn(1))\n"),
            None
        );
        assert_eq!(control("x = 1\nassert x == 2\n"), None);
    }

    #[test]
    fn cuda_becomes_the_cpu() {
        let (suspect, text) = control(
            "import torch\nx = torch.ones(2, device='cuda')\nassert torch.equal(x.sum(), x.cpu().sum())\n",
        )
        .unwrap();
        assert_eq!(suspect, Suspect::Device);
        assert!(!text.contains("cuda"), "{text}");
    }
}
