//! The fix of a custom implementation's bug, found on the original and kept as a control.
//!
//! A custom implementation compared with a library reference fails for any wrong value, so the
//! reference control ([`crate::control::Suspect::Custom`]) cannot tell the original bug from
//! another one a reduction puts in its place (`forward` reduced to `return x` still differs
//! from `F.rms_norm`). When one small edit of the custom code makes the original pass, that
//! edit names the bug: `d - 1` → `d`. Every candidate must still have the code the edit
//! changes, and pass once it is made: then the failure is still that bug, wherever the
//! reduction moved or renamed it.
//!
//! The edits tried drop a numeric term of an arithmetic operation (`n - 1` → `n`, `x * 2` →
//! `x`, `total / 100` → `total`), flip a boolean keyword argument (`unbiased=True` →
//! `False`) or move a reduction to the last axis (`dim=0` → `dim=-1`, and `dim=-1` →
//! `dim=0`; `axis=` alike), or shift an exponent by its maximum (`torch.exp(x)` →
//! `torch.exp(x - x.max())`, which a written-out softmax does not overflow with): the
//! off-by-ones, wrong factors, wrong flags, wrong axes and overflows of real reports. They are
//! made only inside the code the comparison's custom side runs: the function it calls and the
//! script's functions and methods that one calls, transitively.

use std::collections::HashSet;

use crate::control::{callee, comparisons, inlined_comparisons};
use crate::edit::{Edit, apply_edits};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, is_atomic, span};
use crate::scopes::single_bindings;

/// One edit, made wherever it applies in the custom code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fix {
    /// Every `X op LITERAL` (or, not `right`, `LITERAL op X`) becomes `X`.
    DropTerm {
        op: ast::Operator,
        literal: String,
        right: bool,
    },
    /// Every `keyword=VALUE` (a `True` or `False`) becomes the other boolean: a wrong flag
    /// (`unbiased=True`).
    FlipFlag { keyword: String, value: bool },
    /// Every `keyword=FROM` (`dim` or `axis`, an integer) becomes `keyword=TO`: a reduction
    /// over the wrong axis (`x.mean(dim=0)` for the features of a batch).
    Axis {
        keyword: String,
        from: String,
        to: String,
    },
    /// Every `torch.exp(X)` becomes `torch.exp(X - X.max())` (`X.exp()` alike): an exponent
    /// that overflows to `inf` where a shift by its maximum would not (`inf / inf` is the
    /// `nan` of a written-out softmax that `torch.softmax` does not give).
    ShiftExp,
}

impl Fix {
    /// The edits to try on `script`, in source order, each once.
    pub fn candidates(script: &Script) -> Vec<Fix> {
        let mut out: Vec<Fix> = Vec::new();
        for (_, fix) in sites(script) {
            if !out.contains(&fix) {
                out.push(fix);
            }
        }
        out
    }

    /// `script` with this edit made wherever it applies in the custom code; `None` when the
    /// custom code no longer has it.
    pub fn apply(&self, script: &Script) -> Option<String> {
        let text = script.text();
        let mut edits: Vec<Edit> = Vec::new();
        for (site, fix) in sites(script) {
            if fix != *self {
                continue;
            }
            let (range, replacement) = match (site, self) {
                (Site::Term(binop), Fix::DropTerm { right, .. }) => {
                    let kept = if *right { &binop.left } else { &binop.right };
                    let mut replacement = text[span(&**kept)].to_string();
                    if !is_atomic(kept) {
                        replacement = format!("({replacement})");
                    }
                    (span(binop), replacement)
                }
                (Site::Value(value), Fix::FlipFlag { value: was, .. }) => {
                    (span(value), if *was { "False" } else { "True" }.to_string())
                }
                (Site::Value(value), Fix::Axis { to, .. }) => (span(value), to.clone()),
                (Site::Exp { call, exponent }, Fix::ShiftExp) => {
                    let x = &text[span(exponent)];
                    let shifted = format!("{x} - ({x}).max()");
                    let replacement = match &*call.func {
                        Expr::Attribute(a) if call.arguments.is_empty() => {
                            format!("({shifted}).{}()", a.attr)
                        }
                        func => format!("{}({shifted})", &text[span(func)]),
                    };
                    (span(call), replacement)
                }
                _ => continue,
            };
            // An operation inside one already edited goes with it.
            if edits
                .iter()
                .any(|e| e.range.start <= range.start && range.end <= e.range.end)
            {
                continue;
            }
            edits.retain(|e| !(range.start <= e.range.start && e.range.end <= range.end));
            edits.push(Edit::replace(range, replacement));
        }
        if edits.is_empty() {
            return None;
        }
        edits.sort_by_key(|e| e.range.start);
        apply_edits(text, &edits)
    }

    /// How the run log names it: `X - 1 → X`, `unbiased=True → False`.
    pub fn describe(&self) -> String {
        match self {
            Fix::DropTerm {
                op,
                literal,
                right: true,
            } => format!("X {} {literal} → X", op.as_str()),
            Fix::DropTerm { op, literal, .. } => format!("{literal} {} X → X", op.as_str()),
            Fix::FlipFlag { keyword, value } => {
                let (from, to) = if *value {
                    ("True", "False")
                } else {
                    ("False", "True")
                };
                format!("{keyword}={from} → {to}")
            }
            Fix::Axis { keyword, from, to } => format!("{keyword}={from} → {to}"),
            Fix::ShiftExp => "exp(X) → exp(X - X.max())".to_string(),
        }
    }
}

/// Where a fix applies: an arithmetic operation, a keyword argument's value, or an
/// exponential and its exponent.
enum Site<'a> {
    Term(&'a ast::ExprBinOp),
    Value(&'a Expr),
    Exp {
        call: &'a ast::ExprCall,
        exponent: &'a Expr,
    },
}

/// Every arithmetic operation with a numeric literal operand, every boolean keyword argument
/// and every integer `dim=`/`axis=`, in the custom code, with its edit.
fn sites(script: &Script) -> Vec<(Site<'_>, Fix)> {
    let text = script.text();
    let imports = crate::torch::torch_imports(script);
    let mut out = Vec::new();
    for expr in custom_code(script) {
        if let Expr::Call(call) = expr
            && let Some(exponent) = exponent(&imports, call)
        {
            out.push((Site::Exp { call, exponent }, Fix::ShiftExp));
        }
        match expr {
            Expr::BinOp(b)
                if matches!(
                    b.op,
                    ast::Operator::Add
                        | ast::Operator::Sub
                        | ast::Operator::Mult
                        | ast::Operator::Div
                        | ast::Operator::FloorDiv
                ) =>
            {
                let number = |e: &Expr| matches!(e, Expr::NumberLiteral(_));
                let (literal, right) = match (number(&b.left), number(&b.right)) {
                    (false, true) => (&b.right, true),
                    (true, false) => (&b.left, false),
                    _ => continue,
                };
                let fix = Fix::DropTerm {
                    op: b.op,
                    literal: text[span(&**literal)].to_string(),
                    right,
                };
                out.push((Site::Term(b), fix));
            }
            Expr::Call(c) => {
                for k in c.arguments.keywords.iter() {
                    let Some(name) = &k.arg else { continue };
                    let fix = match &k.value {
                        Expr::BooleanLiteral(value) => Fix::FlipFlag {
                            keyword: name.to_string(),
                            value: value.value,
                        },
                        value if matches!(name.as_str(), "dim" | "axis") => {
                            let Some(from) = integer(text, value) else {
                                continue;
                            };
                            let to = if from == "-1" { "0" } else { "-1" };
                            Fix::Axis {
                                keyword: name.to_string(),
                                from,
                                to: to.to_string(),
                            }
                        }
                        _ => continue,
                    };
                    out.push((Site::Value(&k.value), fix));
                }
            }
            _ => {}
        }
    }
    out
}

/// The exponent of `torch.exp(X)` or `X.exp()`.
fn exponent<'a>(
    imports: &std::collections::HashMap<String, String>,
    call: &'a ast::ExprCall,
) -> Option<&'a Expr> {
    let args = &call.arguments;
    match (&*call.func, &args.args[..]) {
        (Expr::Attribute(a), []) if a.attr.as_str() == "exp" && args.keywords.is_empty() => {
            match crate::torch::torch_path(imports, &call.func) {
                Some(_) => None,
                None => Some(&a.value),
            }
        }
        (func, [x]) if args.keywords.is_empty() => {
            (crate::torch::torch_path(imports, func).as_deref() == Some("torch.exp")).then_some(x)
        }
        _ => None,
    }
}

/// The text of an integer literal, negated or not (`0`, `-1`).
fn integer(text: &str, expr: &Expr) -> Option<String> {
    let literal = match expr {
        Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => &*u.operand,
        e => e,
    };
    match literal {
        Expr::NumberLiteral(n) if n.value.as_int().is_some() => Some(text[span(expr)].to_string()),
        _ => None,
    }
}

/// The expressions of the custom code: those of [`custom_bodies`], or where the custom
/// computation was inlined into a comparison (see [`inlined_comparisons`]), the custom side
/// and the values of the names bound once that it reads, transitively, but for the inputs
/// that the reference reads too.
fn custom_code(script: &Script) -> Vec<&Expr> {
    let bodies = custom_bodies(script);
    if !bodies.is_empty() {
        return bodies.into_iter().flat_map(all_exprs).collect();
    }
    let bindings = single_bindings(script);
    let compared = inlined_comparisons(script);
    // What the reference reads too is the input both sides are given, not custom code.
    let inputs: HashSet<&str> = compared
        .iter()
        .flat_map(|(_, reference)| crate::python::exprs_of(reference))
        .filter_map(|e| match e {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect();
    let mut todo: Vec<&Expr> = compared.iter().map(|(custom, _)| *custom).collect();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut out = Vec::new();
    while let Some(root) = todo.pop() {
        if !seen.insert(span(root).start) {
            continue;
        }
        for e in crate::python::exprs_of(root) {
            if let Expr::Name(n) = e
                && !inputs.contains(n.id.as_str())
                && let Some((_, value)) = bindings.iter().find(|(b, _)| *b == n.id.as_str())
            {
                todo.push(value);
            }
            out.push(e);
        }
    }
    out.sort_by_key(|e| span(*e).start);
    out
}

/// The bodies of the functions the comparisons' custom sides run: the callee, and the
/// script's functions and methods it calls by name or through `self`, transitively.
fn custom_bodies(script: &Script) -> Vec<&[Stmt]> {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let bindings = single_bindings(script);
    let functions: Vec<&ast::StmtFunctionDef> = stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => Some(f),
            _ => None,
        })
        .collect();
    let mut todo: Vec<&ast::StmtFunctionDef> = comparisons(script)
        .into_iter()
        .filter_map(|(custom, _)| match custom {
            Expr::Call(c) => callee(&c.func, &stmts, &bindings).map(|(f, _)| f),
            _ => None,
        })
        .collect();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut bodies = Vec::new();
    while let Some(f) = todo.pop() {
        if !seen.insert(span(f).start) {
            continue;
        }
        bodies.push(f.body.as_slice());
        for expr in all_exprs(&f.body) {
            let Expr::Call(c) = expr else { continue };
            // A module held by an attribute runs its class's `forward`: `self.softmax(x)`.
            if let Some((g, _)) = callee(&c.func, &stmts, &bindings) {
                todo.push(g);
                continue;
            }
            let name = match &*c.func {
                Expr::Name(n) => n.id.as_str(),
                Expr::Attribute(a) if matches!(&*a.value, Expr::Name(s) if s.id.as_str() == "self") => {
                    a.attr.as_str()
                }
                _ => continue,
            };
            todo.extend(functions.iter().filter(|g| g.name.as_str() == name));
        }
    }
    bodies.sort_by_key(|b| b.first().map_or(0, |s| span(s).start));
    bodies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    const HEAD: &str = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";

    fn script(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    #[test]
    fn an_inlined_custom_computation_keeps_its_fix() {
        let text = format!(
            "{HEAD}x = torch.randn(2) * 3\ny = (x - x.mean()) / torch.sqrt(x.var(unbiased=True))\nfused = y * 2\ntorch.testing.assert_close(fused, F.layer_norm(x, x.shape, eps=0.0))\n"
        );
        let s = script(&text);
        let described: Vec<String> = Fix::candidates(&s).iter().map(Fix::describe).collect();
        // The input's `* 3` and the reference's arguments are not the custom code.
        assert_eq!(described, ["unbiased=True → False", "X * 2 → X"]);
    }

    #[test]
    fn the_edits_are_made_in_the_custom_code_only() {
        let text = format!(
            "{HEAD}def fused(x, w):\n    d = x.shape[-1]\n    ms = x.pow(2).sum(-1, keepdim=True) / (d - 1)\n    return x * torch.rsqrt(ms + 1e-6) * w\nclass Norm(nn.Module):\n    def forward(self, x):\n        return fused(x, 2 * self.w)\nx = torch.randn(2, 8) * 3\nassert torch.allclose(F.rms_norm(x, (8,)), Norm()(x))\n"
        );
        let s = script(&text);
        let fixes = Fix::candidates(&s);
        let described: Vec<String> = fixes.iter().map(Fix::describe).collect();
        // `* 3` is the test's input, not the custom code; `ms + 1e-6` is a term too.
        assert_eq!(
            described,
            [
                "keepdim=True → False",
                "X - 1 → X",
                "X + 1e-6 → X",
                "2 * X → X"
            ]
        );
        let fixed = fixes[1].apply(&s).unwrap();
        assert!(fixed.contains("/ (d)\n"), "{fixed}");
        assert!(fixed.contains("* 3\n"), "{fixed}");
    }

    #[test]
    fn a_wrong_flag_is_flipped_and_a_reference_wrapper_is_the_reference() {
        let text = format!(
            "{HEAD}def fused(x):\n    var = x.var(dim=-1, keepdim=True, unbiased=True)\n    return x / torch.sqrt(var)\ndef reference(x):\n    return F.layer_norm(x, x.shape[-1:])\nx = torch.randn(4)\ntorch.testing.assert_close(fused(x), reference(x))\n"
        );
        let s = script(&text);
        let described: Vec<String> = Fix::candidates(&s).iter().map(Fix::describe).collect();
        // Only the custom side's code: `reference` wraps the library.
        assert_eq!(
            described,
            [
                "dim=-1 → 0",
                "keepdim=True → False",
                "unbiased=True → False"
            ]
        );
        let fixed = Fix::candidates(&s)[2].apply(&s).unwrap();
        assert!(fixed.contains("keepdim=True, unbiased=False)"), "{fixed}");
    }

    #[test]
    fn an_exponent_held_by_a_module_attribute_is_shifted_by_its_maximum() {
        let text = format!(
            "{HEAD}class Soft(nn.Module):\n    def forward(self, x):\n        e = torch.exp(x / 0.3)\n        return e / e.sum(dim=1, keepdim=True) + x.exp()\nclass Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.soft = Soft()\n    def forward(self, x):\n        return self.soft(x)\nx = torch.randn(4, 8)\ntorch.testing.assert_close(Head()(x), torch.softmax(x / 0.3, dim=1))\n"
        );
        let s = script(&text);
        let fixes = Fix::candidates(&s);
        let described: Vec<String> = fixes.iter().map(Fix::describe).collect();
        assert!(
            described.contains(&"exp(X) → exp(X - X.max())".to_string()),
            "{described:?}"
        );
        let fixed = Fix::ShiftExp.apply(&s).unwrap();
        assert!(
            fixed.contains("e = torch.exp(x / 0.3 - (x / 0.3).max())\n"),
            "{fixed}"
        );
        assert!(fixed.contains("+ (x - (x).max()).exp()\n"), "{fixed}");
        assert!(
            fixed.ends_with("torch.softmax(x / 0.3, dim=1))\n"),
            "{fixed}"
        );
    }

    #[test]
    fn a_reduction_over_the_wrong_axis_moves_to_the_last() {
        let text = format!(
            "{HEAD}def norm(x):\n    return (x - x.mean(dim=0, keepdim=True)) / x.std(dim=-1, keepdim=True)\nx = torch.randn(4, 8)\ntorch.testing.assert_close(norm(x), F.layer_norm(x, (8,)))\n"
        );
        let s = script(&text);
        let fixes = Fix::candidates(&s);
        let described: Vec<String> = fixes.iter().map(Fix::describe).collect();
        assert_eq!(
            described,
            ["dim=0 → -1", "keepdim=True → False", "dim=-1 → 0"]
        );
        let fixed = fixes[0].apply(&s).unwrap();
        assert!(
            fixed.contains("x.mean(dim=-1, keepdim=True)) / x.std(dim=-1,"),
            "{fixed}"
        );
    }

    #[test]
    fn the_edit_follows_the_code_where_the_reduction_moved_it() {
        let original = script(&format!(
            "{HEAD}def fused(x):\n    return x / (x.shape[-1] - 1)\nx = torch.randn(4)\nassert torch.allclose(x / 4, fused(x))\n"
        ));
        let fix = Fix::candidates(&original).remove(0);
        // Inlined into a method, the helper gone.
        let moved = script(&format!(
            "{HEAD}class M(nn.Module):\n    def forward(self, x):\n        n = x.shape[-1] - 1\n        return x / n\nx = torch.randn(4)\nfast = M()(x)\nassert torch.allclose(x / 4, fast)\n"
        ));
        let fixed = fix.apply(&moved).unwrap();
        assert!(fixed.contains("n = x.shape[-1]\n"), "{fixed}");
        // Reduced to `return x`: the code the fix changes is gone.
        let hollow = script(&format!(
            "{HEAD}class M(nn.Module):\n    def forward(self, x):\n        return x\nx = torch.randn(4)\nassert torch.allclose(x / 4, M()(x))\n"
        ));
        assert_eq!(fix.apply(&hollow), None);
    }
}
