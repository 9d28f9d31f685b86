//! Move a module's `.double()`, `.to(…)` or `.eval()` into its class, so that the class can
//! be flattened.
//!
//! ## What it removes
//! The second binding in `model = Net(…)` then `model = model.double()` (or
//! `model = Net(…).double()`, or the statement `model.eval()`), which keeps
//! `flatten_classes` away, since it wants the instance bound once and used only through its
//! members. The move goes where `Module._apply` would have taken it: to each member that
//! `__init__` sets to a module (`self.fc = nn.Linear(…)` → `nn.Linear(…).double()`, also a
//! module class of the script) and to the value of each `nn.Parameter(…)` member
//! (`nn.Parameter(torch.randn(4).double())`); `.eval()` and `.train()` go to the modules only.
//! Plain tensor members stay as they are, as `Module.double()` leaves them.
//!
//! ## Example
//! ```python
//! class Net(nn.Module):                       # before
//!     def __init__(self):
//!         super().__init__()
//!         self.fc = nn.Linear(4, 3)
//! model = Net()
//! model = model.double()
//!
//! class Net(nn.Module):                       # after
//!     def __init__(self):
//!         super().__init__()
//!         self.fc = nn.Linear(4, 3).double()
//! model = Net()
//! ```
//!
//! ## When it cannot apply
//! A class read more than once, without `__init__`, or whose `__init__` sets no module or
//! parameter member directly in its body; a move other than `double`, `float`, `half`,
//! `bfloat16`, `to`, `cpu`, `cuda`, `eval` and `train`; a move whose arguments read a name
//! that `__init__` binds or that call something; a move not at module level.

use std::collections::HashSet;

use super::helpers::first_param;
use crate::edit::{Candidate, Edit, deletion_range};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, exprs_of, span};
use crate::scopes::Scopes;
use crate::torch::{torch_imports, torch_path};

pub struct ModuleMoves;

const MOVES: &[&str] = &[
    "double", "float", "half", "bfloat16", "to", "cpu", "cuda", "eval", "train",
];

impl Pass for ModuleMoves {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("module_moves")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let imports = torch_imports(script);
        if imports.is_empty() {
            return Vec::new();
        }
        let scopes = Scopes::of(script.body());
        let classes: HashSet<&str> = script
            .body()
            .iter()
            .filter_map(|s| match s {
                Stmt::ClassDef(c) => Some(c.name.as_str()),
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        for stmt in script.body() {
            let Stmt::ClassDef(class) = stmt else {
                continue;
            };
            let name = class.name.as_str();
            let reads: Vec<_> = scopes
                .occurrences
                .iter()
                .filter(|o| o.name == name && !o.binds)
                .collect();
            let [read] = reads[..] else { continue };
            let Some(init) = class.body.iter().find_map(|s| match s {
                Stmt::FunctionDef(f) if f.name.as_str() == "__init__" => Some(f),
                _ => None,
            }) else {
                continue;
            };
            let Some((instantiation, moves)) = find_moves(script, &read.range) else {
                continue;
            };
            let locals: HashSet<&str> = scopes
                .occurrences
                .iter()
                .filter(|o| {
                    o.binds && span(init).start <= o.range.start && o.range.end <= span(init).end
                })
                .map(|o| o.name)
                .collect();
            let mut edits = instantiation;
            let mut label = Vec::new();
            let mut moved = false;
            for call in &moves {
                let method = method_of(call);
                let reads_local_or_calls = call
                    .arguments
                    .args
                    .iter()
                    .chain(call.arguments.keywords.iter().map(|k| &k.value))
                    .flat_map(exprs_of)
                    .any(|e| {
                        matches!(e, Expr::Call(_))
                            || matches!(e, Expr::Name(n) if locals.contains(n.id.as_str()))
                    });
                if !MOVES.contains(&method) || reads_local_or_calls {
                    moved = false;
                    break;
                }
                let suffix =
                    &script.text()[span(&*call.func).end - method.len() - 1..span(call).end];
                label.push(suffix.to_string());
                let Some(member_edits) = member_edits(init, &imports, &classes, method, suffix)
                else {
                    moved = false;
                    break;
                };
                moved |= !member_edits.is_empty();
                edits.extend(member_edits);
            }
            if !moved {
                continue;
            }
            // Two moves of one member would overlap; such a candidate is not offered.
            let candidate = Candidate::new(
                format!(
                    "move `{}` of the {name} instance into its class",
                    label.join("")
                ),
                merge(edits),
            );
            if candidate.apply(script.text()).is_some() {
                out.push(candidate);
            }
        }
        out
    }
}

/// The name of the method a move calls: `double` for `model.double()`.
fn method_of(call: &ast::ExprCall) -> &str {
    match &*call.func {
        Expr::Attribute(a) => a.attr.as_str(),
        _ => "",
    }
}

/// Edits that touch one range with several replacements appended, merged into one: each
/// member may take several moves (`.double().eval()`).
fn merge(edits: Vec<Edit>) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    for edit in edits {
        match out
            .iter_mut()
            .find(|e| e.range == edit.range && e.range.is_empty())
        {
            Some(same) => same.replacement.push_str(&edit.replacement),
            None => out.push(edit),
        }
    }
    out
}

/// The instance's moves, outermost last, and the edits that take them out of the module-level
/// code: `v = C(…).double()` loses its `.double()`, `v = v.double()` and `v.eval()` go.
fn find_moves<'a>(
    script: &'a Script,
    class_read: &std::ops::Range<usize>,
) -> Option<(Vec<Edit>, Vec<&'a ast::ExprCall>)> {
    let text = script.text();
    let body = script.body();
    let (i, assign) = body.iter().enumerate().find_map(|(i, s)| match s {
        Stmt::Assign(a) if span(s).contains(&class_read.start) => Some((i, a)),
        _ => None,
    })?;
    let [Expr::Name(target)] = &assign.targets[..] else {
        return None;
    };
    let v = target.id.as_str();
    let mut edits = Vec::new();
    let mut moves = Vec::new();
    // `v = C(…).double().eval()`: the calls around the instantiation.
    let mut value = &*assign.value;
    let mut chained = Vec::new();
    while let Expr::Call(call) = value
        && let Expr::Attribute(a) = &*call.func
    {
        chained.push(call);
        value = &a.value;
    }
    let Expr::Call(instantiation) = value else {
        return None;
    };
    if span(&*instantiation.func) != *class_read {
        return None;
    }
    if !chained.is_empty() {
        edits.push(Edit::delete(
            span(instantiation).end..span(&*assign.value).end,
        ));
        moves.extend(chained.into_iter().rev());
    }
    // Later module-level statements `v = v.double()` and `v.eval()`.
    let mut gone = Vec::new();
    for stmt in &body[i + 1..] {
        let call = match stmt {
            Stmt::Assign(a) if matches!(&a.targets[..], [Expr::Name(n)] if n.id.as_str() == v) => {
                &*a.value
            }
            Stmt::Expr(e) => &*e.value,
            _ => continue,
        };
        let Expr::Call(call) = call else { continue };
        let Expr::Attribute(a) = &*call.func else {
            continue;
        };
        if !matches!(&*a.value, Expr::Name(n) if n.id.as_str() == v)
            || !MOVES.contains(&a.attr.as_str())
        {
            continue;
        }
        edits.push(Edit::delete(deletion_range(text, span(stmt))));
        gone.push(span(stmt));
        moves.push(call);
    }
    // Anything else that binds `v` again keeps the instance apart.
    let bound_again = all_exprs(body).iter().any(|e| {
        matches!(e, Expr::Name(n) if n.id.as_str() == v)
            && super::helpers::is_target(e)
            && span(*e) != span(target)
            && !gone.iter().any(|g| g.contains(&span(*e).start))
    });
    if moves.is_empty() || bound_again {
        return None;
    }
    Some((edits, moves))
}

/// The edits that apply `suffix` (`.double()`) to the members `__init__` sets, directly in its
/// body, to a module or a parameter; `None` when `__init__` has no `self`.
fn member_edits(
    init: &ast::StmtFunctionDef,
    imports: &std::collections::HashMap<String, String>,
    classes: &HashSet<&str>,
    method: &str,
    suffix: &str,
) -> Option<Vec<Edit>> {
    let this = first_param(init)?;
    let mut out = Vec::new();
    for stmt in &init.body {
        let Stmt::Assign(assign) = stmt else { continue };
        let [Expr::Attribute(target)] = &assign.targets[..] else {
            continue;
        };
        if !matches!(&*target.value, Expr::Name(n) if n.id.as_str() == this) {
            continue;
        }
        let Expr::Call(call) = &*assign.value else {
            continue;
        };
        let path = torch_path(imports, &call.func);
        let is_class = matches!(&*call.func, Expr::Name(n) if classes.contains(n.id.as_str()));
        if path.as_deref() == Some("torch.nn.Parameter") {
            if matches!(method, "eval" | "train") {
                continue;
            }
            let Some(data) = call.arguments.args.first() else {
                continue;
            };
            if !crate::python::is_atomic(data) {
                continue;
            }
            out.push(Edit::replace(span(data).end..span(data).end, suffix));
        } else if is_class || path.is_some_and(|p| p.starts_with("torch.nn.")) {
            let end = span(call).end;
            out.push(Edit::replace(end..end, suffix));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    const NET: &str = "import torch\nfrom torch import nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n        self.w = nn.Parameter(torch.randn(3))\n        self.k = torch.zeros(1)\n";

    #[test]
    fn a_rebinding_move_goes_to_the_modules_and_parameters() {
        let text = format!("{NET}model = Net()\nmodel = model.double()\nmodel(x)\n");
        assert_eq!(
            candidate_texts(&ModuleMoves, &text),
            [format!(
                "{}model = Net()\nmodel(x)\n",
                NET.replace("nn.Linear(4, 3)", "nn.Linear(4, 3).double()")
                    .replace("torch.randn(3))", "torch.randn(3).double())")
            )]
        );
    }

    #[test]
    fn chained_moves_and_eval_go_in_order_and_eval_skips_parameters() {
        let text = format!("{NET}model = Net().to(torch.float64)\nmodel.eval()\n");
        assert_eq!(
            candidate_texts(&ModuleMoves, &text),
            [format!(
                "{}model = Net()\n",
                NET.replace(
                    "nn.Linear(4, 3)",
                    "nn.Linear(4, 3).to(torch.float64).eval()"
                )
                .replace("torch.randn(3))", "torch.randn(3).to(torch.float64))")
            )]
        );
    }

    #[test]
    fn an_instance_bound_again_otherwise_stays() {
        let text = format!("{NET}model = Net()\nmodel = model.double()\nmodel = other\n");
        assert!(candidate_texts(&ModuleMoves, &text).is_empty());
    }

    #[test]
    fn a_move_that_reads_a_local_of_init_or_calls_stays() {
        let text = format!("{NET}model = Net()\nmodel = model.to(dev())\n");
        assert!(candidate_texts(&ModuleMoves, &text).is_empty());
        let text = format!("{NET}model = Net()\nmodel = model.fc\n");
        assert!(candidate_texts(&ModuleMoves, &text).is_empty());
    }
}
