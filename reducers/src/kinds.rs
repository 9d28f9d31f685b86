//! Values keep their kind: the arguments the PyTorch passes own are changed by those passes
//! only, and by any other pass only into a value of their kind.
//!
//! `torch.compile(f, backend=args.backend)` must not become `torch.compile(f, backend=a)`
//! with `a = argparse`: dynamo fails before it calls the backend, so a signature alone
//! accepts it, and the ladder can no longer step the backend down. The loop refuses a
//! candidate of any pass but [`TORCH_PASSES`] in which an owned argument's value became
//! something new that is neither a literal nor a `torch.` path (`"eager"`, `False`,
//! `torch.float32`, `torch.device("cpu")`); delete_arguments leaves them alone.

use std::collections::{HashMap, HashSet};

use crate::python::{Expr, Script, all_exprs, is_literal};
use crate::torch::torch_imports;

/// The passes that own the arguments below.
pub const TORCH_PASSES: &[&str] = &["simpler_backend", "cpu_float32"];

/// The keywords of `torch.compile` that simpler_backend owns.
const COMPILE: &[&str] = &["backend", "mode", "fullgraph", "dynamic"];
/// The keywords of any call in a torch script that cpu_float32 owns.
const ANY_CALL: &[&str] = &["dtype", "device"];

/// Whether the keyword `arg` is owned by a torch pass, in a call of `torch.compile` (by its
/// name: owned even where torch is imported in a way the passes do not follow) or not, in a
/// script that imports torch or not.
pub fn owned(arg: &str, compile: bool, torch: bool) -> bool {
    (compile && COMPILE.contains(&arg)) || (torch && ANY_CALL.contains(&arg))
}

/// The values of the owned arguments of `script`, by keyword.
pub fn owned_values(script: &Script) -> HashMap<String, HashSet<String>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    let torch = !torch_imports(script).is_empty();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        let callee = script.slice(&*call.func);
        let compile = callee.ends_with(".compile") || (torch && callee == "compile");
        for keyword in &call.arguments.keywords {
            let Some(arg) = keyword.arg.as_ref().map(|a| a.as_str()) else {
                continue;
            };
            if owned(arg, compile, torch) {
                out.entry(arg.to_string())
                    .or_default()
                    .insert(script.slice(&keyword.value).to_string());
            }
        }
    }
    out
}

/// Whether every owned argument of `after` has a value it had in `before` (see
/// [`owned_values`]) or one of its kind: a literal or a `torch.` path.
pub fn keeps_kinds(before: &HashMap<String, HashSet<String>>, after: &Script) -> bool {
    if before.is_empty() {
        return true;
    }
    owned_values(after).iter().all(|(arg, values)| {
        values.iter().all(|value| {
            before.get(arg).is_some_and(|b| b.contains(value))
                || value.starts_with("torch.")
                || Script::parse(value.as_str(), Default::default()).is_some_and(|s| {
                    matches!(s.body(), [crate::python::Stmt::Expr(e)] if is_literal(&e.value)
                        || matches!(&*e.value, Expr::UnaryOp(u) if is_literal(&u.operand)))
                })
        })
    })
}

/// How many times `script` uses a module bound by `import m` (or `import m as n`) as a value:
/// its name read anywhere but as the object of an attribute (`bool(argparse)`,
/// `a = argparse`, and `F(x)`, which raises at once: a module is not callable). A candidate
/// of any pass may not use modules so more often than the script it comes from: a module is
/// never what a value of another kind (a flag, a string, a backend, a function) was replaced
/// by.
pub fn module_values(script: &Script) -> usize {
    let modules = crate::python::imported_names(script.body(), false);
    if modules.is_empty() {
        return 0;
    }
    let exprs = all_exprs(script.body());
    let bases: HashSet<usize> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Attribute(a) => Some(crate::python::span(&*a.value).start),
            _ => None,
        })
        .collect();
    exprs
        .iter()
        .filter(|e| {
            matches!(e, Expr::Name(n) if modules.contains(n.id.as_str())
                && !bases.contains(&crate::python::span(n).start))
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> Script {
        Script::parse(text, Default::default()).unwrap()
    }

    #[test]
    fn a_backend_may_become_a_literal_but_not_a_module() {
        let before = owned_values(&script(
            "import torch\nimport argparse\nf = torch.compile(g, backend=args.backend, fullgraph=args.fullgraph)\n",
        ));
        assert!(keeps_kinds(
            &before,
            &script("import torch\nf = torch.compile(g, backend=\"eager\", fullgraph=True)\n")
        ));
        assert!(!keeps_kinds(
            &before,
            &script(
                "import torch\nimport argparse\na = argparse\nf = torch.compile(g, backend=a, fullgraph=a)\n"
            )
        ));
        assert!(keeps_kinds(
            &before,
            &script("import torch\nf = torch.compile(g, backend=args.backend)\n")
        ));
    }

    #[test]
    fn dtypes_keep_torch_paths() {
        let before = owned_values(&script(
            "import torch\nDT = torch.float64\nx = torch.ones(2, dtype=DT)\n",
        ));
        assert!(keeps_kinds(
            &before,
            &script("import torch\nx = torch.ones(2, dtype=torch.float64)\n")
        ));
        assert!(!keeps_kinds(
            &before,
            &script(
                "import torch\nx = torch.ones(2, dtype=torch)\nimport os\ny = torch.ones(2, device=os)\n"
            )
        ));
    }

    #[test]
    fn a_module_read_as_a_value_is_counted() {
        let count = |text: &str| module_values(&script(text));
        assert_eq!(count("import argparse\nx = bool(argparse)\n"), 1);
        assert_eq!(
            count("import argparse as ap\na = ap\nf(a, backend=ap)\n"),
            2
        );
        assert_eq!(
            count(
                "import argparse\nimport torch.nn\np = argparse.ArgumentParser()\ntorch.nn.Linear(1, 1)\n"
            ),
            0
        );
        assert_eq!(count("from os import path\nf(path)\n"), 0);
        // `F.layer_norm(x)` hoisted to `F(x)`.
        assert_eq!(count("import torch.nn.functional as F\nF(x)\n"), 1);
    }

    #[test]
    fn scripts_without_torch_are_left_alone() {
        let before = owned_values(&script("open(p, mode=m)\n"));
        assert!(keeps_kinds(
            &before,
            &script("import os\nopen(p, mode=os)\n")
        ));
    }
}
