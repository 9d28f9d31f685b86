//! Shrink the sizes a PyTorch repro builds tensors and layers with, consistently.
//!
//! ## What it removes
//! Large integer sizes where torch takes a shape or a width: the sizes of `torch.randn`,
//! `rand`, `zeros`, `ones`, `empty`, the size of `full` and `randint`, the end of `arange`, the
//! shapes of `.view(...)`, `.reshape(...)` and `.expand(...)`, and the widths of `nn.Linear`,
//! `nn.Conv1d/2d/3d` (with the kernel size), `nn.Embedding`, `nn.LayerNorm`, `nn.RMSNorm`,
//! the normalized shape of `nn.functional.layer_norm` and `rms_norm`, and
//! `nn.BatchNorm1d/2d/3d`, as arguments, as the items of a tuple or list shape
//! (`torch.zeros((4, 1024))`), as keywords (`size=`, `in_features=`, ...) or as factors of a
//! product (`x.view(B * T, C)`). Each size is tried at 1 and at the largest of 2, 4 and 8
//! below its value; once that holds, the next try goes on down from there. In a script that
//! compares tensors (an accuracy check) sizes stop at 2: over a dimension of 1 a mean is its
//! input and a variance is undefined, and computations that differ agree there by accident
//! (`layer_norm` of one element is its bias, and so is a broken normalization). So do they in
//! a script that marks sizes dynamic (`torch.export`'s `dynamic_shapes`, `mark_dynamic`,
//! `torch.compile(dynamic=True)`): torch specializes a size of 1, and a dimension marked
//! dynamic that shrank to 1 fails for that misuse, whatever the original's bug was.
//!
//! Sizes that must agree are changed together, before any one of them alone:
//! - when one value sits in several size positions (1024 in `torch.randn(8, 1024)` and in
//!   `nn.Linear(1024, 10)`), one candidate per target changes all of them, including the
//!   module-level bindings of that value that feed a size (`HIDDEN = 1024`);
//! - a size given by a name bound once, at module level, to an integer (`HIDDEN = 1024`)
//!   is changed at its binding, which every use follows;
//! - then each literal size alone.
//!
//! ## Example
//! ```python
//! x = torch.randn(8, 1024)   # before
//! lin = nn.Linear(1024, 10)
//! x = torch.randn(8, 1)      # after: both 1024s together
//! lin = nn.Linear(1, 10)
//! ```
//!
//! ## When it cannot apply
//! Scripts that import nothing from torch. Sizes that are not integer literals or such
//! names (`x.size(0)`, `-1`, which `view` and `reshape` infer and so stays, arguments after a
//! `*shape`), names bound more than once or not at module level, and sizes of 1 or less.

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

use super::helpers::{dedup, short};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, span};
use crate::scopes::Scopes;
use crate::torch::{torch_imports, torch_path};

pub struct ShrinkDims;

/// The sizes tried, smallest first; a size only ever shrinks, and never to 0 (an empty
/// tensor takes another kernel).
const TARGETS: [u64; 4] = [1, 2, 4, 8];

/// One integer literal that sets a size, directly or through the name it is bound to.
struct Literal {
    range: Range<usize>,
    value: u64,
    /// What it is, for descriptions: the call it sizes, or the name it binds.
    role: Role,
}

enum Role {
    SizeOf(String),
    BindingOf(String),
}

impl Pass for ShrinkDims {
    fn info(&self) -> PassInfo {
        PassInfo::new("shrink_dims")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let imports = torch_imports(script);
        if imports.is_empty() {
            return Vec::new();
        }
        let text = script.text();
        let smallest =
            if crate::torch::compares_tensors(script) || crate::torch::marks_dynamic(script) {
                2
            } else {
                1
            };
        let mut sizes = Vec::new();
        let mut names = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Call(call) = expr else { continue };
            let callee = short(script.slice(&*call.func));
            let mut leaves = Vec::new();
            for argument in size_arguments(call, torch_path(&imports, &call.func).as_deref()) {
                size_leaves(argument, &mut leaves);
            }
            for leaf in leaves {
                match leaf {
                    Expr::NumberLiteral(n) => {
                        if let Some(value) = int_value(n) {
                            sizes.push(Literal {
                                range: span(leaf),
                                value,
                                role: Role::SizeOf(callee.clone()),
                            });
                        }
                    }
                    Expr::Name(n) if !names.contains(&n.id.as_str()) => names.push(n.id.as_str()),
                    _ => {}
                }
            }
        }
        let bindings = module_bindings(script, &names);

        // Every literal that feeds a size, by value, in source order.
        let mut by_value: BTreeMap<u64, Vec<&Literal>> = BTreeMap::new();
        let mut all: Vec<&Literal> = sizes.iter().chain(&bindings).collect();
        all.sort_by_key(|l| l.range.start);
        for literal in &all {
            by_value.entry(literal.value).or_default().push(literal);
        }
        let mut groups: Vec<&Vec<&Literal>> = by_value.values().filter(|g| g.len() > 1).collect();
        groups.sort_by_key(|g| g[0].range.start);

        let mut out = Vec::new();
        for group in groups {
            let value = group[0].value;
            let mut lines: Vec<usize> =
                group.iter().map(|l| line_of(text, l.range.start)).collect();
            lines.dedup();
            let list = lines
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            let lines = if lines.len() == 1 {
                format!("line {list}")
            } else {
                format!("lines {list}")
            };
            for target in smaller_targets(value, smallest) {
                out.push(Candidate::new(
                    format!(
                        "shrink every size {value} to {target} ({} places, {lines})",
                        group.len()
                    ),
                    group
                        .iter()
                        .map(|l| Edit::replace(l.range.clone(), target.to_string()))
                        .collect(),
                ));
            }
        }
        for literal in bindings.iter().chain(&sizes) {
            let line = line_of(text, literal.range.start);
            let value = literal.value;
            for target in smaller_targets(value, smallest) {
                let description = match &literal.role {
                    Role::BindingOf(name) => {
                        format!("shrink `{name} = {value}` to {target} at line {line}")
                    }
                    Role::SizeOf(callee) => {
                        format!("shrink size {value} of {callee}() to {target} at line {line}")
                    }
                };
                out.push(Candidate::new(
                    description,
                    vec![Edit::replace(literal.range.clone(), target.to_string())],
                ));
            }
        }
        dedup(&mut out);
        out
    }
}

/// In a script that marks sizes dynamic (see [`crate::torch::marks_dynamic`]), how many
/// sizes torch builds tensors and layers with are literals of 0 or 1: a candidate may not have
/// more (any pass's: `shrink_values` may make a `2` a `1` too), since torch takes those as
/// constants and fails for that misuse whatever the original's bug was. 0 elsewhere.
pub(crate) fn unit_sizes(script: &Script) -> usize {
    let imports = torch_imports(script);
    if imports.is_empty() {
        return 0;
    }
    let exprs = all_exprs(script.body());
    if !crate::torch::marks_dynamic_in(&imports, &exprs) {
        return 0;
    }
    let mut count = 0;
    for expr in exprs {
        let Expr::Call(call) = expr else { continue };
        let mut leaves = Vec::new();
        for argument in size_arguments(call, torch_path(&imports, &call.func).as_deref()) {
            size_leaves(argument, &mut leaves);
        }
        count += leaves
            .iter()
            .filter(|leaf| {
                matches!(leaf, Expr::NumberLiteral(n)
                    if matches!(&n.value, ast::Number::Int(i) if i.as_u64().is_some_and(|v| v <= 1)))
            })
            .count();
    }
    count
}

/// The targets tried for `value`: `smallest`, and the largest of the others below it. Once
/// that one holds, the next try goes on from it (32 → 8, then 4, then 2): two candidates a
/// size where trying every target would cost four, most of them refused together when the
/// failure needs a size above 8.
fn smaller_targets(value: u64, smallest: u64) -> impl Iterator<Item = u64> {
    let below = move || {
        TARGETS
            .into_iter()
            .filter(move |&t| smallest <= t && t < value)
    };
    let largest = below().next_back();
    below().filter(move |&t| t == smallest || Some(t) == largest)
}

/// The value of an integer literal larger than 1, the only ones worth shrinking.
fn int_value(n: &ast::ExprNumberLiteral) -> Option<u64> {
    match &n.value {
        ast::Number::Int(i) => i.as_u64().filter(|&v| v > 1),
        _ => None,
    }
}

/// The arguments of `call` that hold sizes, given the torch path its callee stands for
/// (`None` for a method call on a value, such as `x.view(...)`).
fn size_arguments<'a>(call: &'a ast::ExprCall, path: Option<&str>) -> Vec<&'a Expr> {
    let arguments = &call.arguments;
    let positional: Vec<&Expr> = arguments
        .args
        .iter()
        .take_while(|a| !a.is_starred_expr())
        .collect();
    let nth = |indices: &[usize]| -> Vec<&'a Expr> {
        indices
            .iter()
            .filter_map(|&i| positional.get(i).copied())
            .collect()
    };
    let (mut out, keywords): (Vec<&Expr>, &[&str]) = match path {
        None => match &*call.func {
            Expr::Attribute(a) if matches!(a.attr.as_str(), "view" | "reshape" | "expand") => {
                (positional.clone(), &["size", "shape"])
            }
            _ => return Vec::new(),
        },
        Some(path) => match path.strip_prefix("torch.").unwrap_or("") {
            "randn" | "rand" | "zeros" | "ones" | "empty" => (positional.clone(), &["size"]),
            "full" => (nth(&[0]), &["size"]),
            "randint" => (
                positional
                    .iter()
                    .copied()
                    .filter(|a| matches!(a, Expr::Tuple(_) | Expr::List(_)))
                    .collect(),
                &["size"],
            ),
            "arange" if positional.len() == 1 => (nth(&[0]), &["end"]),
            "arange" => (nth(&[1]), &["end"]),
            "reshape" => (nth(&[1]), &["shape"]),
            "nn.Linear" => (nth(&[0, 1]), &["in_features", "out_features"]),
            "nn.Conv1d" | "nn.Conv2d" | "nn.Conv3d" => (
                nth(&[0, 1, 2]),
                &["in_channels", "out_channels", "kernel_size"],
            ),
            "nn.Embedding" => (nth(&[0, 1]), &["num_embeddings", "embedding_dim"]),
            "nn.LayerNorm" | "nn.RMSNorm" => (nth(&[0]), &["normalized_shape"]),
            "nn.functional.layer_norm" | "nn.functional.rms_norm" => {
                (nth(&[1]), &["normalized_shape"])
            }
            "nn.BatchNorm1d" | "nn.BatchNorm2d" | "nn.BatchNorm3d" => {
                (nth(&[0]), &["num_features"])
            }
            _ => return Vec::new(),
        },
    };
    out.extend(
        keywords
            .iter()
            .filter_map(|k| arguments.find_keyword(k).map(|k| &k.value)),
    );
    out
}

/// The integer literals and names a size argument is made of: the argument itself, the items
/// of a tuple or list shape, the operands of a product, sum or floor division.
fn size_leaves<'a>(expr: &'a Expr, out: &mut Vec<&'a Expr>) {
    match expr {
        Expr::Tuple(t) => t.elts.iter().for_each(|e| size_leaves(e, out)),
        Expr::List(l) => l.elts.iter().for_each(|e| size_leaves(e, out)),
        Expr::BinOp(b)
            if matches!(
                b.op,
                ast::Operator::Mult | ast::Operator::Add | ast::Operator::FloorDiv
            ) =>
        {
            size_leaves(&b.left, out);
            size_leaves(&b.right, out);
        }
        Expr::NumberLiteral(_) | Expr::Name(_) => out.push(expr),
        _ => {}
    }
}

/// The integer literals that `names` are bound to by a module-level `NAME = <int>` (or
/// `NAME: int = <int>`), for the names bound nowhere else, in any scope.
fn module_bindings(script: &Script, names: &[&str]) -> Vec<Literal> {
    if names.is_empty() {
        return Vec::new();
    }
    let scopes = Scopes::of(script.body());
    let mut binds: HashMap<&str, usize> = HashMap::new();
    for occurrence in &scopes.occurrences {
        if occurrence.binds {
            *binds.entry(occurrence.name).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for stmt in script.body() {
        let (target, value) = match stmt {
            Stmt::Assign(a) if a.targets.len() == 1 => (&a.targets[0], &*a.value),
            Stmt::AnnAssign(a) => match &a.value {
                Some(value) => (&*a.target, &**value),
                None => continue,
            },
            _ => continue,
        };
        let (Expr::Name(name), Expr::NumberLiteral(n)) = (target, value) else {
            continue;
        };
        let name = name.id.as_str();
        if names.contains(&name)
            && binds.get(name) == Some(&1)
            && let Some(v) = int_value(n)
        {
            out.push(Literal {
                range: span(value),
                value: v,
                role: Role::BindingOf(name.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&ShrinkDims, text)
    }

    #[test]
    fn a_value_in_several_size_positions_shrinks_everywhere_at_once_first() {
        let text = "import torch\nx = torch.randn(8, 1024)\nlin = torch.nn.Linear(1024, 10)\n";
        let out = results(text);
        assert_eq!(
            out[0],
            "import torch\nx = torch.randn(8, 1)\nlin = torch.nn.Linear(1, 10)\n"
        );
        assert!(out.contains(
            &"import torch\nx = torch.randn(8, 1)\nlin = torch.nn.Linear(1024, 10)\n".to_string()
        ));
    }

    #[test]
    fn sizes_of_an_accuracy_check_stop_at_two() {
        let text = "import torch\nx = torch.randn(1024)\nassert torch.allclose(f(x), g(x))\n";
        let out = results(text);
        assert_eq!(
            out,
            [
                "import torch\nx = torch.randn(2)\nassert torch.allclose(f(x), g(x))\n",
                "import torch\nx = torch.randn(8)\nassert torch.allclose(f(x), g(x))\n"
            ]
        );
    }

    #[test]
    fn sizes_of_a_script_that_marks_them_dynamic_stop_at_two() {
        for marks in [
            "torch.export.export(M(), (x,), dynamic_shapes={\"x\": {0: Dim(\"n\")}})",
            "torch._dynamo.mark_dynamic(x, 0)",
            "torch.compile(f, dynamic=True)(x)",
        ] {
            let text = format!(
                "import torch\nfrom torch.export import Dim\nx = torch.randn(16)\n{marks}\n"
            );
            let sizes: Vec<String> = results(&text)
                .iter()
                .map(|r| r.lines().nth(2).unwrap_or_default().to_string())
                .collect();
            assert_eq!(
                sizes,
                ["x = torch.randn(2)", "x = torch.randn(8)"],
                "{marks}"
            );
        }
        let plain = "import torch\nx = torch.randn(16)\ntorch.compile(f, dynamic=False)(x)\n";
        assert!(results(plain).iter().any(|r| r.contains("torch.randn(1)")));
        let units = |size: &str| {
            let text = format!(
                "import torch\nx = torch.randn({size}, 4)\ntorch._dynamo.mark_dynamic(x, 0)\n"
            );
            unit_sizes(&Script::parse(&text, crate::python::PythonVersion::PY311).unwrap())
        };
        assert_eq!((units("2"), units("1")), (0, 1));
    }

    #[test]
    fn a_name_bound_once_at_module_level_shrinks_at_its_binding() {
        let text = "import torch\nHIDDEN = 64\nx = torch.zeros((4, HIDDEN))\n";
        assert_eq!(
            results(text)[0],
            "import torch\nHIDDEN = 1\nx = torch.zeros((4, HIDDEN))\n"
        );
    }

    #[test]
    fn a_name_bound_twice_is_left_alone() {
        let text = "import torch\nH = 64\nH = 32\nx = torch.zeros(H)\n";
        assert!(results(text).is_empty());
        let text = "import torch\nH = 64\ndef f(H):\n    return torch.zeros(H)\n";
        assert!(results(text).is_empty());
    }

    #[test]
    fn minus_one_in_a_view_stays_and_sizes_only_shrink() {
        let text = "import torch\ny = x.view(-1, 4)\n";
        assert_eq!(
            results(text),
            [
                "import torch\ny = x.view(-1, 1)\n",
                "import torch\ny = x.view(-1, 2)\n"
            ]
        );
    }

    #[test]
    fn a_size_goes_to_one_and_never_to_zero() {
        let text = "import torch\nx = torch.zeros(1, 2)\n";
        assert_eq!(results(text), ["import torch\nx = torch.zeros(1, 1)\n"]);
    }

    #[test]
    fn randint_shrinks_its_size_not_its_bounds() {
        let text = "import torch\nt = torch.randint(100, (16,))\n";
        let out = results(text);
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|t| t.contains("randint(100, (")));
    }

    #[test]
    fn a_normalized_shape_shrinks_with_the_input_it_normalizes() {
        let text =
            "import torch\nx = torch.randn(128)\ny = torch.nn.functional.rms_norm(x, (128,))\n";
        let texts = crate::passes::helpers::candidate_texts(&ShrinkDims, text);
        assert_eq!(
            texts.first().map(String::as_str),
            Some("import torch\nx = torch.randn(1)\ny = torch.nn.functional.rms_norm(x, (1,))\n"),
            "{texts:?}"
        );
    }

    #[test]
    fn aliases_of_torch_nn_are_followed() {
        // 1000 to 1 and 8; 3 to 1 and 2.
        let text = "from torch import nn\nm = nn.Embedding(1000, 3)\n";
        assert_eq!(results(text).len(), 4);
        let text = "from torch.nn import LayerNorm as LN\nm = LN(16)\n";
        assert_eq!(results(text).len(), 2);
    }

    #[test]
    fn nothing_is_proposed_without_torch() {
        assert!(results("x = np.zeros((4, 1024))\ny = x.reshape(2, 2048)\n").is_empty());
    }

    #[test]
    fn nothing_is_proposed_on_a_plain_fixture() {
        let plain = include_str!("../../tests/fixtures/inline_calls/calls_and_methods.py");
        assert!(results(plain).is_empty());
    }
}
