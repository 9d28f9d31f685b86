//! Drop the parameters that no code reads, with what the calls pass for them.
//!
//! ## What it removes
//! A parameter of a module-level function, or of the `__init__` or `forward` of a module-level
//! class, that the body never reads, goes from the `def`, and what each call passes for it goes
//! too (by position or by keyword). For a function, the calls are those of its name and of what
//! `torch.compile` makes of it (`torch.compile(f)(x)`), or `vmap` without `in_dims`
//! (`vmap(f)(x)`); for
//! `__init__`, those of the class's name (`Stage(cfg)`, read nowhere else); for `forward`,
//! those of the class's instances: `C(…)(…)`, and `m(…)` or `m.forward(…)` for a name bound
//! once to `C(…)` (or to `torch.compile` of it, or to `.eval()`, `.to(…)` and the like of
//! it); and the example inputs that `torch.export.export` and `torch.jit.trace` take for it:
//! the element of the arguments tuple, and the `dynamic_shapes` entry named after the
//! parameter (or at its place). First all of a function's unread parameters at once, then each
//! alone. The lists an edit touches are written again on one line.
//!
//! ## Example
//! ```python
//! class Model(torch.nn.Module):                         # before
//!     def forward(self, x, y, z):
//!         return z[:, ::2]
//! torch.export.export(Model(), (a, b, c), dynamic_shapes={"x": {0: n}, "y": {0: n}, "z": {1: d}})
//!
//! class Model(torch.nn.Module):                         # after
//!     def forward(self, z):
//!         return z[:, ::2]
//! torch.export.export(Model(), (c,), dynamic_shapes={"z": {1: d}})
//! ```
//!
//! ## When it cannot apply
//! A `def` that is decorated or `async`, or has positional-only, keyword-only, `*args` or
//! `**kwargs` parameters; a body that calls `locals()`, `vars()`, `eval` or `exec`; a name of
//! the function, class or instance bound again or read anywhere but in the uses above (handed
//! to another function, say); a call with `*` or `**` arguments; example inputs or dynamic
//! shapes that are not displays.

use std::ops::Range;

use crate::edit::{Candidate, Edit};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, span};
use crate::scopes::Scopes;

pub struct DropParameters;

impl Pass for DropParameters {
    fn info(&self) -> PassInfo {
        PassInfo::new("drop_parameters")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let found = Found {
            script,
            scopes: Scopes::of(script.body()),
            exprs: all_exprs(script.body()),
        };
        let mut candidates = Vec::new();
        for stmt in script.body() {
            match stmt {
                Stmt::FunctionDef(f) => {
                    if let Some(uses) = found.function_uses(f.name.as_str(), span(stmt)) {
                        candidates.extend(found.drops(f, stmt, 0, &uses));
                    }
                }
                Stmt::ClassDef(class) => {
                    if let Some(init @ Stmt::FunctionDef(f)) = method(class, "__init__")
                        && let Some(uses) = found.calls_of(class.name.as_str(), span(stmt))
                    {
                        candidates.extend(found.drops(f, init, 1, &uses));
                    }
                    if let Some(forward @ Stmt::FunctionDef(f)) = method(class, "forward")
                        && let Some(uses) = found.instance_uses(class.name.as_str(), span(stmt))
                    {
                        candidates.extend(found.drops(f, forward, 1, &uses));
                    }
                }
                _ => {}
            }
        }
        candidates
    }
}

/// The method `name` defined in `class`'s body.
fn method<'a>(class: &'a ast::StmtClassDef, name: &str) -> Option<&'a Stmt> {
    class
        .body
        .iter()
        .find(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == name))
}

/// Where a function's parameters get their values.
enum Use<'a> {
    /// A call: positional argument `i` is parameter `i` (after `self`).
    Call(&'a ast::Arguments),
    /// The example inputs of `torch.export.export` or `torch.jit.trace`: a tuple with an
    /// element per parameter, and the dynamic shapes, by name or by place.
    Example {
        inputs: &'a ast::ExprTuple,
        shapes: Option<&'a Expr>,
    },
}

/// What the candidates of a script are found in.
struct Found<'a> {
    script: &'a Script,
    scopes: Scopes<'a>,
    exprs: Vec<&'a Expr>,
}

/// Methods of a module that return the module itself.
const SELF_RETURNING: &[&str] = &[
    "eval", "train", "to", "cpu", "cuda", "float", "double", "half", "bfloat16",
];

impl<'a> Found<'a> {
    /// The candidates that drop the unread parameters of `f` (after its first `skip`), all at
    /// once and then each alone, with what `uses` pass for them.
    fn drops(
        &self,
        f: &'a ast::StmtFunctionDef,
        stmt: &'a Stmt,
        skip: usize,
        uses: &[Use<'a>],
    ) -> Vec<Candidate> {
        let params = &f.parameters;
        if f.is_async
            || !f.decorator_list.is_empty()
            || !params.posonlyargs.is_empty()
            || !params.kwonlyargs.is_empty()
            || params.vararg.is_some()
            || params.kwarg.is_some()
            || params.args.len() <= skip
        {
            return Vec::new();
        }
        let range = span(stmt);
        let Some(scope) = self.scopes.scope_at(&range) else {
            return Vec::new();
        };
        let introspects = self.scopes.occurrences.iter().any(|o| {
            range.contains(&o.range.start) && ["locals", "vars", "eval", "exec"].contains(&o.name)
        });
        if introspects {
            return Vec::new();
        }
        let mine = |o: &&crate::scopes::Occurrence, name: &str| {
            o.name == name
                && range.contains(&o.range.start)
                && self.scopes.resolve_occurrence(o) == Some(scope)
        };
        // A parameter the body assigns before anything reads it (`x = torch.randn(1)` first
        // in `forward(self, x)`) is not read either: the value passed for it never is.
        let overwritten = |name: &str| {
            let Some(first) = f.body.iter().find(|s| {
                let at = span(*s);
                self.scopes
                    .occurrences
                    .iter()
                    .any(|o| mine(&o, name) && at.contains(&o.range.start))
            }) else {
                return false;
            };
            let Stmt::Assign(assign) = first else {
                return false;
            };
            let value = span(&*assign.value);
            assign
                .targets
                .iter()
                .any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name))
                && !self
                    .scopes
                    .occurrences
                    .iter()
                    .any(|o| mine(&o, name) && !o.binds && value.contains(&o.range.start))
        };
        let read = |name: &str| {
            self.scopes
                .occurrences
                .iter()
                .any(|o| mine(&o, name) && !o.binds)
                && !overwritten(name)
        };
        let unread: Vec<usize> = (skip..params.args.len())
            .filter(|&i| !read(params.args[i].parameter.name.as_str()))
            .collect();
        let mut sets: Vec<Vec<usize>> = Vec::new();
        if unread.len() > 1 {
            sets.push(unread.clone());
        }
        sets.extend(unread.iter().map(|&i| vec![i]));
        sets.into_iter()
            .filter_map(|drop| self.candidate(f, skip, &drop, uses))
            .collect()
    }

    /// The candidate that drops parameters `drop` (indices into `f`'s) and what `uses` pass
    /// for them.
    fn candidate(
        &self,
        f: &ast::StmtFunctionDef,
        skip: usize,
        drop: &[usize],
        uses: &[Use<'a>],
    ) -> Option<Candidate> {
        let params = &f.parameters.args;
        let names: Vec<&str> = drop
            .iter()
            .map(|&i| params[i].parameter.name.as_str())
            .collect();
        let kept: Vec<&str> = (0..params.len())
            .filter(|i| !drop.contains(i))
            .map(|i| self.script.slice(&params[i]))
            .collect();
        let mut edits = vec![Edit::replace(
            span(f.parameters.as_ref()),
            format!("({})", kept.join(", ")),
        )];
        // Positions among the arguments a call passes: after `self` for a method.
        let places: Vec<usize> = drop.iter().map(|&i| i - skip).collect();
        for used in uses {
            edits.extend(self.use_edits(used, &places, &names)?);
        }
        let label = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        Some(Candidate::new(
            format!(
                "drop the unread parameter(s) {label} of {}() and what its calls pass for them",
                f.name
            ),
            edits,
        ))
    }

    /// The edits of one use: `None` when it passes arguments in a way this cannot follow.
    fn use_edits(&self, used: &Use, places: &[usize], names: &[&str]) -> Option<Vec<Edit>> {
        match used {
            Use::Call(arguments) => {
                if arguments.args.iter().any(|a| matches!(a, Expr::Starred(_)))
                    || arguments.keywords.iter().any(|k| k.arg.is_none())
                {
                    return None;
                }
                let args: Vec<&str> = (0..arguments.args.len())
                    .filter(|i| !places.contains(i))
                    .map(|i| self.script.slice(&arguments.args[i]))
                    .chain(
                        arguments
                            .keywords
                            .iter()
                            .filter(|k| {
                                !k.arg.as_ref().is_some_and(|a| names.contains(&a.as_str()))
                            })
                            .map(|k| self.script.slice(k)),
                    )
                    .collect();
                let edit = Edit::replace(span(*arguments), format!("({})", args.join(", ")));
                Some(vec![edit])
            }
            Use::Example { inputs, shapes } => {
                let kept: Vec<&str> = (0..inputs.elts.len())
                    .filter(|i| !places.contains(i))
                    .map(|i| self.script.slice(&inputs.elts[i]))
                    .collect();
                let mut edits = vec![Edit::replace(span(*inputs), tuple(&kept))];
                if let Some(shapes) = shapes {
                    edits.push(self.shapes_edit(shapes, places, names)?);
                }
                Some(edits)
            }
        }
    }

    /// `dynamic_shapes` without the entries of the dropped parameters: a dict's by name, a
    /// tuple's or list's by place.
    fn shapes_edit(&self, shapes: &Expr, places: &[usize], names: &[&str]) -> Option<Edit> {
        let text = match shapes {
            Expr::Dict(dict) => {
                let mut entries = Vec::new();
                for item in &dict.items {
                    let Some(Expr::StringLiteral(key)) = &item.key else {
                        return None;
                    };
                    if !names.contains(&key.value.to_str()) {
                        entries.push(format!(
                            "{}: {}",
                            self.script.slice(key),
                            self.script.slice(&item.value)
                        ));
                    }
                }
                format!("{{{}}}", entries.join(", "))
            }
            Expr::Tuple(t) => tuple(&self.kept(&t.elts, places)),
            Expr::List(l) => format!("[{}]", self.kept(&l.elts, places).join(", ")),
            _ => return None,
        };
        Some(Edit::replace(span(shapes), text))
    }

    fn kept(&self, elts: &[Expr], places: &[usize]) -> Vec<&str> {
        (0..elts.len())
            .filter(|i| !places.contains(i))
            .map(|i| self.script.slice(&elts[i]))
            .collect()
    }

    /// The calls of the module-level function `name` defined at `def`: `None` when the name
    /// is bound again or read other than as a callee.
    fn calls_of(&self, name: &str, def: Range<usize>) -> Option<Vec<Use<'a>>> {
        let reads = self.reads_of(name, &def)?;
        reads
            .iter()
            .map(|read| match self.parent(read)? {
                Expr::Call(call) if span(call.func.as_ref()) == *read => {
                    Some(Use::Call(&call.arguments))
                }
                _ => None,
            })
            .collect()
    }

    /// Where the function `name` defined at `def` gets its arguments: its calls, and those of
    /// what `torch.compile` makes of it (`torch.compile(f)(x)`, `c = torch.compile(f)`), the
    /// example inputs `torch.jit.trace` takes for it; `None` when it goes where this cannot
    /// follow.
    fn function_uses(&self, name: &str, def: Range<usize>) -> Option<Vec<Use<'a>>> {
        let mut uses = Vec::new();
        for read in self.reads_of(name, &def)? {
            uses.extend(self.uses_of_read(read)?);
        }
        Some(uses)
    }

    /// Where the instances of class `name` defined at `def` get the arguments of `forward`:
    /// `None` when an instance goes where this cannot follow.
    fn instance_uses(&self, name: &str, def: Range<usize>) -> Option<Vec<Use<'a>>> {
        let mut uses = Vec::new();
        for read in self.reads_of(name, &def)? {
            let build = self.parent(&read)?;
            if !matches!(build, Expr::Call(c) if span(c.func.as_ref()) == read) {
                return None;
            }
            uses.extend(self.uses_of_instance(span(build))?);
        }
        Some(uses)
    }

    /// The uses of the instance that the expression at `at` evaluates to.
    fn uses_of_instance(&self, at: Range<usize>) -> Option<Vec<Use<'a>>> {
        if let Some(name) = self.bound_to(&at) {
            let mut uses = Vec::new();
            for read in self.reads_of(name, &at)? {
                uses.extend(self.uses_of_read(read)?);
            }
            return Some(uses);
        }
        match self.parent(&at) {
            None => self.is_statement(&at).then(Vec::new),
            Some(Expr::Call(call)) if span(call.func.as_ref()) == at => {
                Some(vec![Use::Call(&call.arguments)])
            }
            Some(Expr::Call(call)) => self.handed_to(call, &at),
            Some(Expr::Attribute(attr)) => self.attribute_of_instance(attr),
            Some(_) => None,
        }
    }

    /// The uses that a read of an instance's name makes.
    fn uses_of_read(&self, read: Range<usize>) -> Option<Vec<Use<'a>>> {
        match self.parent(&read) {
            None => self.is_statement(&read).then(Vec::new),
            Some(Expr::Call(call)) if span(call.func.as_ref()) == read => {
                Some(vec![Use::Call(&call.arguments)])
            }
            Some(Expr::Call(call)) => self.handed_to(call, &read),
            Some(Expr::Attribute(attr)) => self.attribute_of_instance(attr),
            Some(_) => None,
        }
    }

    /// `m.forward(…)` is a call of it; `m.eval()` and the like return it; any other attribute
    /// (`m.weight`, `m.parameters()`) calls no `forward`.
    fn attribute_of_instance(&self, attr: &'a ast::ExprAttribute) -> Option<Vec<Use<'a>>> {
        let at = span(attr);
        let called = match self.parent(&at) {
            Some(Expr::Call(call)) if span(call.func.as_ref()) == at => Some(call),
            _ => None,
        };
        match (attr.attr.as_str(), called) {
            ("forward" | "__call__", Some(call)) => Some(vec![Use::Call(&call.arguments)]),
            ("forward" | "__call__", None) => None,
            (method, Some(call)) if SELF_RETURNING.contains(&method) => {
                self.uses_of_instance(span(call))
            }
            _ => Some(Vec::new()),
        }
    }

    /// An instance handed to a call as its first argument: `torch.compile` returns what calls
    /// it, `torch.export.export` and `torch.jit.trace` take example inputs for it.
    fn handed_to(&self, call: &'a ast::ExprCall, at: &Range<usize>) -> Option<Vec<Use<'a>>> {
        let first = call.arguments.args.first()?;
        if span(first) != *at {
            return None;
        }
        let callee = self.script.slice(call.func.as_ref());
        let last = callee.rsplit('.').next().unwrap_or(callee);
        match last {
            "compile" => self.uses_of_instance(span(call)),
            // `vmap(f)(a, b)` hands `f` the slices of `a` and `b` at their places; `in_dims`
            // would name places too.
            "vmap"
                if call.arguments.args.len() == 1
                    && call
                        .arguments
                        .keywords
                        .iter()
                        .all(|k| k.arg.as_ref().is_some_and(|a| a.as_str() != "in_dims")) =>
            {
                self.uses_of_instance(span(call))
            }
            "export" | "export_for_training" | "trace" => {
                let Some(Expr::Tuple(inputs)) = call.arguments.args.get(1) else {
                    return None;
                };
                let shapes = call
                    .arguments
                    .keywords
                    .iter()
                    .find(|k| {
                        k.arg
                            .as_ref()
                            .is_some_and(|a| a.as_str() == "dynamic_shapes")
                    })
                    .map(|k| &k.value);
                Some(vec![Use::Example { inputs, shapes }])
            }
            _ => None,
        }
    }

    /// Whether the node at `at` is an expression statement of its own (which calls nothing).
    fn is_statement(&self, at: &Range<usize>) -> bool {
        all_bodies(self.script.body())
            .iter()
            .flat_map(|body| body.iter())
            .any(|stmt| matches!(stmt, Stmt::Expr(e) if span(e.value.as_ref()) == *at))
    }

    /// The module-level name that the statement `NAME = <expression at at>` binds.
    fn bound_to(&self, at: &Range<usize>) -> Option<&'a str> {
        self.script.body().iter().find_map(|stmt| match stmt {
            Stmt::Assign(assign) if span(assign.value.as_ref()) == *at => match &assign.targets[..]
            {
                [Expr::Name(n)] => Some(n.id.as_str()),
                _ => None,
            },
            _ => None,
        })
    }

    /// The reads of module-level `name` bound once, outside the node at `def`: `None` when it
    /// is bound more than once or read from inside that node.
    fn reads_of(&self, name: &str, def: &Range<usize>) -> Option<Vec<Range<usize>>> {
        let occurrences: Vec<_> = self
            .scopes
            .occurrences
            .iter()
            .filter(|o| o.name == name && self.scopes.resolve_occurrence(o).is_none())
            .collect();
        if occurrences.iter().filter(|o| o.binds).count() != 1 {
            return None;
        }
        occurrences
            .iter()
            .filter(|o| !o.binds)
            .map(|o| (!def.contains(&o.range.start)).then(|| o.range.clone()))
            .collect()
    }

    /// The call or attribute whose callee, argument or object is the node at `child`; `None`
    /// when it is part of something else (or a statement of its own).
    fn parent(&self, child: &Range<usize>) -> Option<&'a Expr> {
        self.exprs.iter().copied().find(|e| match e {
            Expr::Call(call) => {
                span(call.func.as_ref()) == *child
                    || call.arguments.args.iter().any(|a| span(a) == *child)
            }
            Expr::Attribute(attr) => span(attr.value.as_ref()) == *child,
            _ => false,
        })
    }
}

/// A tuple display of `items`, with the comma that one element needs.
fn tuple(items: &[&str]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DropParameters, text)
    }

    #[test]
    fn an_unread_parameter_goes_with_its_arguments() {
        let text = "def f(a, b, c=1):\n    return b\nf(1, 2, c=3)\nf(4, b=5)\n";
        assert_eq!(
            results(text),
            [
                "def f(b):\n    return b\nf(2)\nf(b=5)\n",
                "def f(b, c=1):\n    return b\nf(2, c=3)\nf(b=5)\n",
                "def f(a, b):\n    return b\nf(1, 2)\nf(4, b=5)\n",
            ]
        );
    }

    #[test]
    fn a_compiled_function_loses_its_unread_parameter_with_the_compiled_calls_argument() {
        let text = "import torch\ndef f(x):\n    return torch.ones(2)\ntorch.compile(f, backend=\"inductor\")(torch.zeros(1))\n";
        assert_eq!(
            results(text),
            [
                "import torch\ndef f():\n    return torch.ones(2)\ntorch.compile(f, backend=\"inductor\")()\n"
            ]
        );
        let bound = "import torch\ndef f(x, y):\n    return y\nc = torch.compile(f)\nc(1, 2)\n";
        assert_eq!(
            results(bound),
            ["import torch\ndef f(y):\n    return y\nc = torch.compile(f)\nc(2)\n"]
        );
        let handed = "import torch\ndef f(x):\n    return 1\nrun(f, 2)\n";
        assert!(results(handed).is_empty());
    }

    #[test]
    fn a_function_handed_to_vmap_loses_its_unread_parameter_with_the_mapped_calls_argument() {
        let texts = results("def loss(p, x, t):\n    return x[:, 0]\nvmap(loss)(p, x, t)\n");
        assert!(
            texts.contains(&"def loss(x):\n    return x[:, 0]\nvmap(loss)(x)\n".to_string()),
            "{texts:?}"
        );
        let dims = "def loss(p, x):\n    return x\nvmap(loss, in_dims=(None, 0))(p, x)\n";
        assert!(results(dims).is_empty());
    }

    #[test]
    fn a_parameter_the_body_overwrites_before_reading_it_goes() {
        let text = "def f(a, b):\n    a = b * 2\n    return a\nf(1, 2)\n";
        assert_eq!(
            results(text),
            ["def f(b):\n    a = b * 2\n    return a\nf(2)\n"]
        );
        let module = "import torch\nclass T(torch.nn.Module):\n    def forward(self, x):\n        x = torch.randn(1)\n        self.exp = x\n\nmodel = T()\nmodel(1)\n";
        assert_eq!(results(module).len(), 1, "{:?}", results(module));
        let reads_first = "def f(a):\n    a = a * 2\n    return a\nf(1)\n";
        assert!(results(reads_first).is_empty());
    }

    #[test]
    fn forward_drops_its_example_inputs_and_dynamic_shapes() {
        let text = "\
class M(torch.nn.Module):
    def forward(self, x, y, z):
        return z[:, ::2]

n = torch.export.Dim('n')
torch.export.export(
    M(),
    (a, b, c),
    dynamic_shapes={
        'x': {0: n},
        'y': {0: n},
        'z': {1: d},
    },
)
";
        let all = &results(text)[0];
        assert_eq!(
            all,
            "\
class M(torch.nn.Module):
    def forward(self, z):
        return z[:, ::2]

n = torch.export.Dim('n')
torch.export.export(
    M(),
    (c,),
    dynamic_shapes={'z': {1: d}},
)
"
        );
    }

    #[test]
    fn instances_are_followed_through_names_compile_and_eval() {
        let text = "\
class M(nn.Module):
    def forward(self, x, mask):
        return x.relu()
m = M().eval()
f = torch.compile(m)
f(t, None)
m.forward(t, mask=None)
print(m.weight)
";
        assert_eq!(
            results(text),
            [
                "class M(nn.Module):\n    def forward(self, x):\n        return x.relu()\nm = M().eval()\nf = torch.compile(m)\nf(t)\nm.forward(t)\nprint(m.weight)\n"
            ]
        );
    }

    #[test]
    fn nothing_when_an_instance_or_the_function_goes_elsewhere() {
        assert!(results("def f(a, b):\n    return b\nrun(f)\n").is_empty());
        assert!(results("def f(a, *rest):\n    return rest\nf(1)\n").is_empty());
        assert!(results("def f(a, b):\n    return locals()\nf(1, 2)\n").is_empty());
        let handed = "class M(nn.Module):\n    def forward(self, x):\n        return 1\nrun(M())\n";
        assert!(results(handed).is_empty());
        assert!(results("def f(a, b):\n    return b\nf(*xs)\n").is_empty());
        let kept = "class M(nn.Module):\n    def forward(self, x):\n        return 1\nm = M()\nrun(model=[m])\n";
        assert!(results(kept).is_empty());
    }
}
