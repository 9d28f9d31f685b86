//! Write an `nn.Module` subclass whose `forward` reads nothing of `self` as a function.
//!
//! ## What it removes
//! A class kept around a computation that needs no module: its `forward` reads no member,
//! calls no method and hands `self` to nothing, so every instance computes the same function
//! of its input (or, when `forward` ignores its input too, the same value). A person writes
//! that function and calls it, or hands it to `torch.compile`. In one candidate per class,
//! the class becomes its `forward` as a module-level function without `self`, named
//! `forward` (the name the script gave it), or after the class in snake case when the script
//! already uses that name; each construction `C(args)` becomes the function's name, with the
//! module methods called on the new instance (`.half()`, `.eval()`, `.to(…)`, `.cuda()` and
//! the like) dropped, since a module without state has nothing for them to convert. What
//! `__init__` did goes with it: `forward` read none of it.
//!
//! `torch.jit.script`, `torch.jit.trace` and `torch.export` handle a function otherwise than a
//! module, and an instance read otherwise than by calling it (`m.parameters()`) has no
//! function to stand for it: the oracle judges, and the class stays when the failure changes.
//!
//! ## Example
//! ```python
//! class L(nn.Module):                             # before
//!     def __init__(self, n):
//!         super().__init__()
//!         self.n = n
//!
//!     def forward(self, x):
//!         return torch.cat([x, x]).sum(0)
//!
//! m = L(8).half()
//! m = torch.compile(m)
//!
//! def forward(x):                                 # after
//!     return torch.cat([x, x]).sum(0)
//!
//! m = forward
//! m = torch.compile(m)
//! ```
//!
//! ## When it cannot apply
//! - The class: nested, decorated, generic, with a keyword in its bases or a base other than
//!   one `Module`; a body holding anything but a docstring, `__init__` and `forward`.
//! - `forward`: missing, defined twice, `async` or decorated; without a first parameter, or
//!   with a positional-only one; reading its `self`, `super` or `__class__`.
//! - The uses: the class name bound anywhere but by its definition, never called, or read
//!   anywhere but as the callee of a call; a call inside the arguments of another.
//! - The name: both `forward` and the snake-case name already occurring in the script.

use super::helpers::{first_param, multi_line_strings, snake_case};
use super::unwrap_modules::{constructions, is_docstring, is_module};
use crate::edit::{Candidate, Edit, apply_edits_within, lines_label, reindent};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, span};
use crate::scopes::Scopes;

pub struct StatelessModules;

impl Pass for StatelessModules {
    fn info(&self) -> PassInfo {
        PassInfo::new("stateless_modules")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let exprs = all_exprs(script.body());
        script
            .body()
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(class) => as_function(script, &scopes, &exprs, stmt, class),
                _ => None,
            })
            .collect()
    }
}

/// The module methods that only convert or switch an instance, which a function drops.
const CONVERSIONS: &[&str] = &[
    "half",
    "float",
    "double",
    "bfloat16",
    "to",
    "cuda",
    "cpu",
    "eval",
    "train",
    "requires_grad_",
    "zero_grad",
];

/// The candidate writing class `class` as its `forward`.
fn as_function(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    stmt: &Stmt,
    class: &ast::StmtClassDef,
) -> Option<Candidate> {
    let text = script.text();
    let forward = stateless_forward(scopes, class)?;
    let class_range = span(stmt);
    let calls = constructions(scopes, exprs, class.name.as_str(), &class_range)?;
    let name = function_name(scopes, class.name.as_str(), &class_range)?;
    let mut edits: Vec<Edit> = calls
        .iter()
        .map(|(call, _)| Edit::replace(converted(exprs, span(*call)), name.clone()))
        .collect();
    edits.push(Edit::replace(
        class_range.clone(),
        function_text(script, forward, &name)?,
    ));
    Some(Candidate::new(
        format!(
            "write module {} at {} as a function {name}",
            class.name,
            lines_label(text, &class_range)
        ),
        edits,
    ))
}

/// The class's `forward`, when the class is an undecorated `Module` subclass of at most a
/// docstring, `__init__` and `forward`, and `forward` reads neither `self`, `super` nor
/// `__class__`.
fn stateless_forward<'a>(
    scopes: &Scopes,
    class: &'a ast::StmtClassDef,
) -> Option<&'a ast::StmtFunctionDef> {
    let bases = class.arguments.as_deref()?;
    if !class.decorator_list.is_empty()
        || class.type_params.is_some()
        || !bases.keywords.is_empty()
        || !matches!(bases.args.as_ref(), [base] if is_module(base))
    {
        return None;
    }
    let mut forward = None;
    for (i, s) in class.body.iter().enumerate() {
        match s {
            s if i == 0 && is_docstring(s) => {}
            Stmt::FunctionDef(f) if f.name.as_str() == "__init__" => {}
            Stmt::FunctionDef(f) if f.name.as_str() == "forward" && forward.is_none() => {
                forward = Some(f);
            }
            _ => return None,
        }
    }
    let forward = forward?;
    let this = first_param(forward)?;
    if forward.is_async
        || !forward.decorator_list.is_empty()
        || !forward.parameters.posonlyargs.is_empty()
    {
        return None;
    }
    let body = span(forward).start..span(forward).end;
    let reads_self = scopes.occurrences.iter().any(|o| {
        !o.binds
            && body.start <= o.range.start
            && o.range.end <= body.end
            && matches!(o.name, n if n == this || n == "super" || n == "__class__")
    });
    (!reads_self).then_some(forward)
}

/// `forward`, or the class name in snake case, whichever the script does not use yet outside
/// the class (over `class_range`).
fn function_name(
    scopes: &Scopes,
    class: &str,
    class_range: &std::ops::Range<usize>,
) -> Option<String> {
    let outside =
        |r: &std::ops::Range<usize>| r.end <= class_range.start || class_range.end <= r.start;
    let used = |name: &str| {
        scopes
            .occurrences
            .iter()
            .any(|o| o.name == name && outside(&o.range))
    };
    ["forward".to_string(), snake_case(class)]
        .into_iter()
        .find(|n| !used(n))
}

/// The range of a construction with the conversions called on the new instance.
fn converted(exprs: &[&Expr], mut range: std::ops::Range<usize>) -> std::ops::Range<usize> {
    while let Some(outer) = exprs.iter().find_map(|e| match e {
        Expr::Call(c) => match c.func.as_ref() {
            Expr::Attribute(a)
                if span(a.value.as_ref()) == range && CONVERSIONS.contains(&a.attr.as_str()) =>
            {
                Some(span(c))
            }
            _ => None,
        },
        _ => None,
    }) {
        range = outer;
    }
    range
}

/// `forward` at module level as `def NAME(params):`, without its first parameter.
fn function_text(script: &Script, forward: &ast::StmtFunctionDef, name: &str) -> Option<String> {
    let text = script.text();
    let range = span(forward);
    let indent = &text[crate::edit::line_start(text, range.start)..range.start];
    let params: Vec<&ast::ParameterWithDefault> = forward.parameters.args.iter().collect();
    let this = span(&params[0].parameter);
    let after_this = match forward.parameters.iter().nth(1) {
        Some(next) => span(&next).start,
        None => this.end,
    };
    let mut edits = vec![
        Edit::replace(span(&forward.name), name),
        Edit::delete(this.start..after_this),
    ];
    edits.extend(reindent(
        text,
        range.clone(),
        indent,
        "",
        &multi_line_strings(script, &forward.body),
    ));
    apply_edits_within(text, range, &edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&StatelessModules, text)
    }

    #[test]
    fn a_module_without_state_handed_to_torch_compile_becomes_a_function() {
        let text = "\
class L(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x, y=1):
        return torch.cat([x, x]).sum(0) * y
m = L(8).half().eval()
m = torch.compile(m)
";
        assert_eq!(
            results(text),
            [
                "def forward(x, y=1):\n    return torch.cat([x, x]).sum(0) * y\nm = forward\nm = torch.compile(m)\n"
            ]
        );
    }

    #[test]
    fn a_forward_that_ignores_its_input_keeps_it_and_the_name_avoids_one_in_use() {
        let text = "\
class BadView(torch.nn.Module):
    def forward(self, x):
        \"\"\"Ignores x.\"\"\"
        return torch.ones(6).view(4, -1)
forward = 1
torch.jit.trace(BadView(), torch.ones(1))
";
        assert_eq!(
            results(text),
            [
                "def bad_view(x):\n    \"\"\"Ignores x.\"\"\"\n    return torch.ones(6).view(4, -1)\nforward = 1\ntorch.jit.trace(bad_view, torch.ones(1))\n"
            ]
        );
    }

    #[test]
    fn modules_with_state_or_other_uses_stay() {
        let class = |forward: &str| {
            format!(
                "class C(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.ReLU()\n    def forward(self, x):\n        return {forward}\n"
            )
        };
        // The control: this one is written as a function.
        assert_eq!(results(&(class("x.relu()") + "C()(x)\n")).len(), 1);
        for text in [
            class("self.f(x)") + "C()(x)\n",
            class("helper(self, x)") + "C()(x)\n",
            class("super().forward(x)") + "C()(x)\n",
            class("x.relu()") + "m = C()\nassert isinstance(m, C)\n",
            class("x.relu()"),
            class("x.relu()").replace("    def forward", "    @staticmethod\n    def forward")
                + "C()(x)\n",
            class("x.relu()").replace("nn.Module", "Base") + "C()(x)\n",
            class("x.relu()") + "C()(x)\nforward = c_ = 1\nc = 2\n",
        ] {
            assert!(results(&text).is_empty(), "{text}");
        }
    }
}
