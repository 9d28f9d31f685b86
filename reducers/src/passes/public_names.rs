//! Write graph code as a person writes it: public calls for `torch.ops.aten`, plain names for
//! the FX graph's.
//!
//! ## What it removes
//! The spellings that PyTorch's minifier and FX graphs leave in a repro. A call through the
//! operator registry, `torch.ops.aten.NAME.OVERLOAD(args)` or `torch.ops.aten.NAME(args)`,
//! becomes `torch.NAME(args)`, or else a method of its first argument, `args0.NAME(rest)`
//! (all calls in the `torch.` form at once, then each call in either form).
//!
//! The names the graph generated become `x`, `y`, `z`, `w`, then `a`, `b`, … (skipping any
//! name the script already uses), in order of first appearance: all of them at once, then
//! each alone. A name counts as generated when it is a graph input's name, `argN_M`,
//! `primals_N`, `tangents_N` or `l_NAME_` / `L_NAME_` (dynamo's names for the locals it
//! lifts); or, in a graph script (one that calls through `torch.ops.aten` or uses one of
//! those names), exactly the stem of an aten op with an optional `_N` suffix (`addmm`,
//! `relu_1`, `convolution_2`, `getitem_3`), the stems being the ops the script calls through
//! `torch.ops.aten` and a list of common ones. A name is renamed everywhere the script uses it
//! as a variable, in every scope (so the new name, unused anywhere, captures nothing), and as
//! a keyword argument of a call that is not a library's (`f(addmm=…)` for the script's own
//! `f`); strings and comments are left alone. The pass runs once nothing else changes the
//! script (its phase is `Respell`), so that the names handed out are those of what is left.
//!
//! ## Example
//! ```python
//! def forward(arg0_1, arg1_1):                              # before
//!     mm = torch.ops.aten.mm.default(arg0_1, arg1_1)
//!     relu_1 = torch.ops.aten.relu.default(mm)
//!     return relu_1
//!
//! def forward(x, y):                                        # after
//!     z = torch.mm(x, y)
//!     w = torch.relu(z)
//!     return w
//! ```
//!
//! ## When it cannot apply
//! A script that imports nothing from torch; a name bound by an import or in a class body (it
//! is then an attribute too); any name where the script calls `locals()`, `vars()`,
//! `globals()`, `eval` or `exec`; a call with only keyword arguments, or a starred first one,
//! for the method form; a registry call reached through a name that no import binds
//! (`aten = torch.ops.aten`). The oracle decides whether the public spelling keeps the bug: a
//! wrong guess fails with another error and is refused.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::edit::{Candidate, Edit};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Expr, Script, all_exprs, ast, imported_names, span};
use crate::scopes::{ScopeKind, Scopes};
use crate::torch::{torch_imports, torch_path};

use super::helpers::combine;

pub struct PublicNames;

impl Pass for PublicNames {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Respell,
            ..PassInfo::new("public_names")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let imports = torch_imports(script);
        if imports.is_empty() {
            return Vec::new();
        }
        let calls = registry_calls(script, &imports);
        let mut candidates = renames(script, !calls.is_empty(), &calls);
        candidates.extend(public_calls(script, &imports, &calls));
        candidates
    }
}

/// Aten ops whose stems FX graphs commonly name their nodes after, besides the ones a script
/// still calls through `torch.ops.aten` (once those are public, their names stay generated).
const COMMON_OPS: &[&str] = &[
    "_log_softmax",
    "_softmax",
    "_to_copy",
    "_unsafe_view",
    "abs",
    "add",
    "addmm",
    "alias",
    "amax",
    "arange",
    "as_strided",
    "baddbmm",
    "bmm",
    "cat",
    "clamp",
    "clamp_min",
    "clone",
    "constant_pad_nd",
    "convolution",
    "cumsum",
    "detach",
    "div",
    "embedding",
    "eq",
    "erf",
    "exp",
    "expand",
    "full",
    "gather",
    "gelu",
    "getitem",
    "index",
    "index_select",
    "le",
    "log",
    "logical_not",
    "lt",
    "masked_fill",
    "matmul",
    "mean",
    "mm",
    "mul",
    "native_batch_norm",
    "native_dropout",
    "native_layer_norm",
    "neg",
    "permute",
    "pow",
    "reciprocal",
    "relu",
    "rsqrt",
    "scatter",
    "select",
    "sigmoid",
    "silu",
    "slice",
    "split",
    "sqrt",
    "squeeze",
    "sub",
    "sum",
    "sym_size",
    "tanh",
    "unsqueeze",
    "view",
    "where",
];

/// The plain names, in the order they are handed out; after them `x1`, `x2`, ….
const PLAIN: &[&str] = &[
    "x", "y", "z", "w", "a", "b", "c", "d", "e", "f", "g", "h", "k", "m", "n", "p", "q", "r", "s",
    "u", "v",
];

/// A call through the operator registry: the call and the op's name.
struct RegistryCall<'a> {
    call: &'a ast::ExprCall,
    op: &'a str,
}

/// Every call of `torch.ops.aten.NAME` or `torch.ops.aten.NAME.OVERLOAD`, in source order.
fn registry_calls<'a>(
    script: &'a Script,
    imports: &HashMap<String, String>,
) -> Vec<RegistryCall<'a>> {
    all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| {
            let Expr::Call(call) = expr else { return None };
            let path = torch_path(imports, &call.func)?;
            let rest = path.strip_prefix("torch.ops.aten.")?;
            if rest.split('.').count() > 2 {
                return None;
            }
            // The op's name as the script spells it, to borrow from the script's text.
            let op = op_name(&call.func, rest.contains('.'))?;
            Some(RegistryCall { call, op })
        })
        .collect()
}

/// The attribute naming the op in a registry callee: the last one, or the one before the
/// overload.
fn op_name(func: &Expr, overload: bool) -> Option<&str> {
    let Expr::Attribute(last) = func else {
        return None;
    };
    if !overload {
        return Some(last.attr.as_str());
    }
    match last.value.as_ref() {
        Expr::Attribute(op) => Some(op.attr.as_str()),
        _ => None,
    }
}

/// Whether `name` is one of the names FX graphs give their inputs: `argN_M`, `primals_N`,
/// `tangents_N`, `l_NAME_` and `L_NAME_`.
fn is_graph_input(name: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = name.strip_prefix("arg")
        && let Some((n, m)) = rest.split_once('_')
    {
        return digits(n) && digits(m);
    }
    if let Some(n) = name
        .strip_prefix("primals_")
        .or_else(|| name.strip_prefix("tangents_"))
    {
        return digits(n);
    }
    let lifted = name
        .strip_prefix("l_")
        .or_else(|| name.strip_prefix("L_"))
        .and_then(|rest| rest.strip_suffix('_'));
    lifted.is_some_and(|inner| !inner.is_empty() && !inner.starts_with('_'))
}

/// Whether `name` is an op's stem, with an optional `_N` suffix, for an op among `stems`.
fn is_op_node(name: &str, stems: &HashSet<&str>) -> bool {
    let stem = match name.rsplit_once('_') {
        Some((stem, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => name,
    };
    stems.contains(stem)
}

/// The candidates that rename the generated names: all at once, then each alone.
/// `spells_aten` says whether the script calls through `torch.ops.aten`.
fn renames(script: &Script, spells_aten: bool, calls: &[RegistryCall]) -> Vec<Candidate> {
    let scopes = Scopes::of(script.body());
    if scopes
        .occurrences
        .iter()
        .any(|o| !o.binds && ["locals", "vars", "globals", "eval", "exec"].contains(&o.name))
    {
        return Vec::new();
    }
    let graph = spells_aten || scopes.occurrences.iter().any(|o| is_graph_input(o.name));
    let mut stems: HashSet<&str> = COMMON_OPS.iter().copied().collect();
    stems.extend(calls.iter().map(|c| c.op));
    let generated = |name: &str| is_graph_input(name) || (graph && is_op_node(name, &stems));
    let names = renamable(script, &scopes, generated);
    let used: HashSet<&str> = scopes.occurrences.iter().map(|o| o.name).collect();
    let plain = plain_names(names.len(), &used);
    let keywords = own_keywords(script);
    let parts: Vec<Candidate> = names
        .iter()
        .zip(&plain)
        .map(|(name, new)| rename(&scopes, &keywords, name, new))
        .collect();
    let mut candidates: Vec<Candidate> = combine(
        "rename the names the FX graph generated to plain names",
        &parts,
    )
    .into_iter()
    .collect();
    candidates.extend(parts);
    candidates
}

/// The generated names that the script binds and that can be renamed, in order of first
/// appearance.
fn renamable<'a>(
    script: &'a Script,
    scopes: &Scopes<'a>,
    generated: impl Fn(&str) -> bool,
) -> Vec<&'a str> {
    let imported = imported_names(script.body(), true);
    let in_class = |o: &crate::scopes::Occurrence| {
        o.binds
            && o.scope
                .is_some_and(|s| scopes.scopes[s].kind == ScopeKind::Class)
    };
    let mut names: Vec<&str> = Vec::new();
    for o in &scopes.occurrences {
        if names.contains(&o.name) || !generated(o.name) || imported.contains(o.name) {
            continue;
        }
        let all = || scopes.occurrences.iter().filter(|p| p.name == o.name);
        if all().any(|p| p.binds) && !all().any(in_class) {
            names.push(o.name);
        }
    }
    names
}

/// `count` plain names that `used` does not hold, in the order they are handed out.
fn plain_names(count: usize, used: &HashSet<&str>) -> Vec<String> {
    PLAIN
        .iter()
        .map(|s| s.to_string())
        .chain((1..).map(|i| format!("x{i}")))
        .filter(|name| !used.contains(name.as_str()))
        .take(count)
        .collect()
}

/// The keyword arguments by name, with where their names are, of the calls that are not a
/// library's: those whose callee is not an attribute chain from an imported name.
fn own_keywords(script: &Script) -> Vec<(&str, Range<usize>)> {
    let imported = imported_names(script.body(), true);
    all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| match expr {
            Expr::Call(call) if !root_in(&call.func, &imported) => Some(call),
            _ => None,
        })
        .flat_map(|call| call.arguments.keywords.iter())
        .filter_map(|k| k.arg.as_ref().map(|a| (a.as_str(), span(a))))
        .collect()
}

/// Whether `expr` is an attribute chain (or a name) that starts with one of `names`.
fn root_in(expr: &Expr, names: &HashSet<&str>) -> bool {
    match expr {
        Expr::Name(n) => names.contains(n.id.as_str()),
        Expr::Attribute(a) => root_in(&a.value, names),
        _ => false,
    }
}

/// The candidate that renames `name` to `new` wherever it stands for a variable or is the
/// keyword of a call of the script's own.
fn rename(scopes: &Scopes, keywords: &[(&str, Range<usize>)], name: &str, new: &str) -> Candidate {
    let mut ranges: Vec<Range<usize>> = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name)
        .map(|o| o.range.clone())
        .chain(
            keywords
                .iter()
                .filter(|(k, _)| *k == name)
                .map(|(_, r)| r.clone()),
        )
        .collect();
    // `global NAME` is recorded in two scopes at one place.
    ranges.sort_by_key(|r| (r.start, r.end));
    ranges.dedup();
    let edits = ranges.into_iter().map(|r| Edit::replace(r, new)).collect();
    Candidate::new(format!("rename `{name}` to `{new}`"), edits)
}

/// The candidates that spell the registry calls publicly: all in the `torch.` form at once,
/// then each call in the `torch.` form and as a method of its first argument.
fn public_calls(
    script: &Script,
    imports: &HashMap<String, String>,
    calls: &[RegistryCall],
) -> Vec<Candidate> {
    let torch = torch_name(imports);
    let functions: Vec<Candidate> = match torch {
        Some(torch) => calls
            .iter()
            .map(|c| function_form(script, c, torch))
            .collect(),
        None => Vec::new(),
    };
    let mut candidates: Vec<Candidate> = combine(
        "write every `torch.ops.aten` call as the public `torch.` function",
        &functions,
    )
    .into_iter()
    .collect();
    for (i, call) in calls.iter().enumerate() {
        if torch.is_some() {
            candidates.push(functions[i].clone());
        }
        candidates.extend(method_form(script, call));
    }
    candidates
}

/// The name the script's imports bind to `torch` itself, `torch` first.
fn torch_name(imports: &HashMap<String, String>) -> Option<&str> {
    let mut names: Vec<&str> = imports
        .iter()
        .filter(|(_, path)| path.as_str() == "torch")
        .map(|(name, _)| name.as_str())
        .collect();
    names.sort_by_key(|n| (*n != "torch", *n));
    names.first().copied()
}

/// `torch.ops.aten.NAME.OVERLOAD(args)` as `torch.NAME(args)`.
fn function_form(script: &Script, call: &RegistryCall, torch: &str) -> Candidate {
    let callee = script.slice(call.call.func.as_ref());
    Candidate::new(
        format!("write `{callee}` as `{torch}.{}`", call.op),
        vec![Edit::replace(
            span(call.call.func.as_ref()),
            format!("{torch}.{}", call.op),
        )],
    )
}

/// `torch.ops.aten.NAME.OVERLOAD(first, rest)` as `first.NAME(rest)`; `None` for a call
/// without a plain first positional argument.
fn method_form(script: &Script, call: &RegistryCall) -> Option<Candidate> {
    let arguments = &call.call.arguments;
    let first = arguments.args.first()?;
    if matches!(first, Expr::Starred(_)) {
        return None;
    }
    let mut rest: Vec<Range<usize>> = arguments.args[1..]
        .iter()
        .map(span)
        .chain(arguments.keywords.iter().map(span))
        .collect();
    rest.sort_by_key(|r| r.start);
    let rest: Vec<&str> = rest.into_iter().map(|r| &script.text()[r]).collect();
    let callee = script.slice(call.call.func.as_ref());
    Some(Candidate::new(
        format!("write `{callee}` as a method of its first argument"),
        vec![Edit::replace(
            span(call.call),
            format!("{}.{}({})", script.operand(first), call.op, rest.join(", ")),
        )],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&PublicNames, text)
    }

    #[test]
    fn graph_inputs_are_recognised_by_their_shape_alone() {
        for name in [
            "arg0_1",
            "arg12_3",
            "primals_2",
            "tangents_1",
            "l_x_",
            "L_self_w_",
        ] {
            assert!(is_graph_input(name), "{name}");
        }
        for name in [
            "arg", "args_1", "argx_1", "primals", "l_", "l__", "lr_", "x_1",
        ] {
            assert!(!is_graph_input(name), "{name}");
        }
    }

    #[test]
    fn a_person_s_names_stay_in_a_script_without_graph_code() {
        let text = "import torch\nrelu = torch.nn.ReLU()\nview_1 = relu(torch.ones(2))\n";
        assert!(results(text).is_empty());
    }

    #[test]
    fn registry_calls_become_torch_functions_or_methods() {
        let text = "import torch\nx = torch.ones(6)\ny = torch.ops.aten.view.default(x, [2, 3])\n";
        assert_eq!(
            results(text),
            [
                "import torch\nx = torch.ones(6)\ny = torch.view(x, [2, 3])\n",
                "import torch\nx = torch.ones(6)\ny = x.view([2, 3])\n",
            ]
        );
    }

    #[test]
    fn a_lambda_s_generated_parameter_and_its_registry_call() {
        let text = "import torch\ntorch.compile(lambda addmm_1: torch.ops.aten.relu(addmm_1))(torch.tensor(1.0))\n";
        assert_eq!(
            results(text),
            [
                "import torch\ntorch.compile(lambda x: torch.ops.aten.relu(x))(torch.tensor(1.0))\n",
                "import torch\ntorch.compile(lambda addmm_1: torch.relu(addmm_1))(torch.tensor(1.0))\n",
                "import torch\ntorch.compile(lambda addmm_1: addmm_1.relu())(torch.tensor(1.0))\n",
            ]
        );
    }

    #[test]
    fn a_renamed_parameter_is_renamed_in_the_keywords_of_the_script_s_own_calls() {
        let text = "import torch\ndef f(arg0_1):\n    return torch.relu(arg0_1)\nf(arg0_1=torch.ones(1))\ntorch.full((1,), 2, arg0_1=3)\n";
        let renamed = "import torch\ndef f(x):\n    return torch.relu(x)\nf(x=torch.ones(1))\ntorch.full((1,), 2, arg0_1=3)\n";
        assert_eq!(results(text), [renamed]);
    }

    #[test]
    fn new_names_skip_those_the_script_uses_and_strings_stay() {
        let text = "import torch\nx = 1\ndef g(primals_1, w):\n    mm = torch.ops.aten.mm(primals_1, w)\n    return 'mm', mm\n";
        let all = &results(text)[0];
        assert_eq!(
            all,
            "import torch\nx = 1\ndef g(y, w):\n    z = torch.ops.aten.mm(y, w)\n    return 'mm', z\n"
        );
    }

    #[test]
    fn class_attributes_and_imports_keep_their_names() {
        let text = "import torch\nfrom m import relu\nclass C:\n    addmm = 1\ndef f(arg0_1):\n    return relu(arg0_1) + C.addmm\n";
        assert_eq!(
            results(text),
            [
                "import torch\nfrom m import relu\nclass C:\n    addmm = 1\ndef f(x):\n    return relu(x) + C.addmm\n"
            ]
        );
    }
}
