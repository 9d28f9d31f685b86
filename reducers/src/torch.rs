//! What a script says about PyTorch, for the torch passes and for the modules that reason about
//! torch repros (`control`, `kinds`, `rungs`, `prepare`): which names its imports bind to torch,
//! the torch path an expression stands for, whether it compares tensors.

use std::collections::HashMap;

use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs};
use crate::scopes::single_bindings;

/// The names a script's imports bind to torch and its submodules and objects, with the dotted
/// path each stands for: `torch` → `torch`, `nn` → `torch.nn` (from `import torch.nn as nn`
/// or `from torch import nn`), `Linear` → `torch.nn.Linear`. Empty when the script imports
/// nothing from torch, which is how the torch passes know to propose nothing.
pub fn torch_imports(script: &Script) -> HashMap<String, String> {
    imports(script, |module| {
        module == "torch" || module.starts_with("torch.")
    })
}

/// The names that imports of the modules `keep` admits bind, each with the dotted path it
/// stands for (see [`torch_imports`]); any module's with `|_| true`.
pub fn imports(script: &Script, keep: impl Fn(&str) -> bool) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for body in all_bodies(script.body()) {
        for stmt in body {
            match stmt {
                Stmt::Import(import) => {
                    for alias in &import.names {
                        let module = alias.name.as_str();
                        if !keep(module) {
                            continue;
                        }
                        match &alias.asname {
                            Some(asname) => out.insert(asname.to_string(), module.to_string()),
                            // `import torch.nn` binds `torch`, not `torch.nn`.
                            None => {
                                let top = module.split('.').next().unwrap_or(module);
                                out.insert(top.to_string(), top.to_string())
                            }
                        };
                    }
                }
                Stmt::ImportFrom(from) if from.level == 0 => {
                    let Some(module) = from.module.as_ref().map(|m| m.as_str()) else {
                        continue;
                    };
                    if !keep(module) {
                        continue;
                    }
                    for alias in &from.names {
                        let name = alias.name.as_str();
                        if name != "*" {
                            let bound = alias.asname.as_ref().map_or(name, |a| a.as_str());
                            out.insert(bound.to_string(), format!("{module}.{name}"));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The dotted torch path a name or attribute chain stands for under `imports` (see
/// [`torch_imports`]): `nn.Linear` → `torch.nn.Linear`; `None` when it does not start with a
/// name bound by a torch import.
pub fn torch_path(imports: &HashMap<String, String>, expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => imports.get(name.id.as_str()).cloned(),
        Expr::Attribute(attribute) => Some(format!(
            "{}.{}",
            torch_path(imports, &attribute.value)?,
            attribute.attr
        )),
        _ => None,
    }
}

/// The two sides of every comparison of tensors (`torch.allclose(a, b)`, `torch.equal`,
/// `torch.testing.assert_close`), a name bound once standing for its value.
pub(crate) fn compared_sides<'a>(
    script: &'a Script,
    imports: &HashMap<String, String>,
) -> Vec<(&'a Expr, &'a Expr)> {
    let bindings = single_bindings(script);
    all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| {
            let Expr::Call(call) = expr else { return None };
            let [a, b, ..] = call.arguments.args.as_ref() else {
                return None;
            };
            is_comparison(torch_path(imports, &call.func).as_deref())
                .then(|| (side(a, &bindings), side(b, &bindings)))
        })
        .collect()
}

/// Whether the script compares tensors (`torch.allclose(a, b)`, …): an accuracy check.
pub fn compares_tensors(script: &Script) -> bool {
    !compared_sides(script, &torch_imports(script)).is_empty()
}

/// Whether a call of `path` compares two tensors.
fn is_comparison(path: Option<&str>) -> bool {
    matches!(
        path,
        Some(
            "torch.allclose"
                | "torch.equal"
                | "torch.testing.assert_close"
                | "torch.testing.assert_allclose"
        )
    )
}

/// A side of a comparison: a name bound once stands for its value.
fn side<'a>(e: &'a Expr, bindings: &[(&str, &'a Expr)]) -> &'a Expr {
    match e {
        Expr::Name(n) => bindings
            .iter()
            .find(|(name, _)| *name == n.id.as_str())
            .map_or(e, |b| b.1),
        _ => e,
    }
}

/// Whether the script marks sizes dynamic (`torch.export`'s `dynamic_shapes` and `Dim`,
/// `torch._dynamo.mark_dynamic`, `torch.compile(dynamic=True)`): torch takes a size of 0 or 1
/// as the constant it is (0/1 specialization), so a dimension marked dynamic that shrank to 1
/// fails with "specialized it to be a constant", a misuse the original did not make.
pub fn marks_dynamic(script: &Script) -> bool {
    let imports = torch_imports(script);
    !imports.is_empty() && marks_dynamic_in(&imports, &all_exprs(script.body()))
}

/// [`marks_dynamic`] over a script's torch `imports` and its expressions, `exprs`.
pub(crate) fn marks_dynamic_in(imports: &HashMap<String, String>, exprs: &[&Expr]) -> bool {
    exprs.iter().any(|expr| match expr {
        Expr::Call(call) => {
            call.arguments.keywords.iter().any(|k| {
                k.arg.as_ref().is_some_and(|arg| {
                    arg.as_str() == "dynamic_shapes"
                        || (arg.as_str() == "dynamic"
                            && matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
                })
            }) || torch_path(imports, &call.func).is_some_and(|path| {
                path.ends_with("mark_dynamic") || path.ends_with(".Dim") || path.ends_with(".dims")
            })
        }
        _ => false,
    })
}
