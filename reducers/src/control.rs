//! The control of a PyTorch repro: the same script with its suspect replaced by the
//! reference, which must *pass* for a failure to be the suspect's.
//!
//! The suspect, in the order looked for:
//! - [`Suspect::Compile`]: `torch.compile(f, …)` becomes `f` (eager), and `@torch.compile`
//!   decorators go;
//! - [`Suspect::Transform`]: a transform that calls back into the script and has a plain
//!   counterpart runs without it: `vmap(f)(x)` applies `f` to each sample and stacks the
//!   results, `grad(f)`, `jacrev(f)`, `jacfwd(f)` and `hessian(f)` become `f`, and
//!   `torch.jit.script(m)`, `torch.jit.trace(m, …)` and `torch.fx.symbolic_trace(m)` become
//!   `m` (their decorators go). The
//!   same message raised by the untransformed code is a user's mistake, not the transform's
//!   bug (`autograd.grad` of a tensor that never required grad);
//! - [`Suspect::Custom`]: in a comparison (`torch.allclose(a, b)`, `torch.equal`,
//!   `torch.testing.assert_close`), the side computed by the script's own code (a call of a
//!   function or class it defines) becomes the other side, the library's reference;
//! - [`Suspect::Device`]: CUDA becomes the CPU (the `cpu` rung, see [`crate::rungs`]): last,
//!   since a script written for "CUDA when there is one" stands on it wherever it runs.
//!
//! The binary reads the suspect off the original and builds the control of every candidate
//! that fails the same way with that suspect: a candidate without one (the compile gone, the
//! comparison gone) has lost the bug.

use std::collections::HashSet;

use crate::edit::line_of;
use crate::edit::{Edit, apply_edits, line_end, line_start};
use crate::python::{
    Expr, PythonVersion, Script, Stmt, all_bodies, all_exprs, ast, is_atomic, span,
};
use crate::rungs::Rung;
use crate::scopes::single_bindings;
use crate::torch::{compared_sides, torch_imports, torch_path};

pub use crate::torch::compares_tensors;

/// What a control replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspect {
    Compile,
    Transform,
    Device,
    Custom,
    Repeat,
}

impl Suspect {
    pub fn as_str(self) -> &'static str {
        match self {
            Suspect::Compile => "torch.compile → eager",
            Suspect::Transform => "a transform → the code it transforms, run plainly",
            Suspect::Device => "CUDA → CPU",
            Suspect::Custom => "the script's own computation → the reference it is compared with",
            Suspect::Repeat => "the check's second side → its first side computed again",
        }
    }

    /// The suspects `script` has, by the order above, each with its control.
    pub fn all_of(script: &Script, version: PythonVersion) -> Vec<(Suspect, String)> {
        [
            Suspect::Compile,
            Suspect::Transform,
            Suspect::Custom,
            Suspect::Device,
            Suspect::Repeat,
        ]
        .into_iter()
        .filter_map(|s| Some((s, s.control(script, version)?)))
        .collect()
    }

    /// `script` with this suspect replaced by its reference; `None` when it has no such
    /// suspect.
    pub fn control(self, script: &Script, version: PythonVersion) -> Option<String> {
        let text = match self {
            Suspect::Compile => eager(script)?,
            Suspect::Transform => untransformed(script)?,
            Suspect::Device => {
                if !Rung::Cpu.stands_on(script) {
                    return None;
                }
                Rung::Cpu.step_off(script, version).ok()?
            }
            Suspect::Custom => reference(script)?,
            Suspect::Repeat => repeated(script)?,
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
    outermost(text, edits)
}

/// Every check of two computations (see [`crate::differential`]) with its second side
/// replaced by its first computed again (a name the module binds once, by its value; a check
/// whose first side is a name of no known value has none):
/// `allclose(out1, out3)` becomes `allclose(out1, (transformer(src, tgt, mask)))`. It passes
/// where the first side's computation gives the same result each time; a mismatch whose
/// control fails is a draw that differs from run to run (dropout left on, an unseeded
/// `randn`), not the report's two computations. Scripts that import torch only.
fn repeated(script: &Script) -> Option<String> {
    if torch_imports(script).is_empty() {
        return None;
    }
    let bindings = crate::differential::module_bindings(script);
    let text = script.text();
    let edits: Vec<Edit> = crate::differential::checks(script)
        .into_iter()
        .filter_map(|(a, b)| {
            // A side that is a name of no known computation would be compared with itself.
            let again = match a {
                Expr::Name(n) => bindings.get(n.id.as_str())?.clone(),
                _ => text[span(a)].to_string(),
            };
            Some(Edit::replace(span(b), format!("({again})")))
        })
        .collect();
    outermost(text, edits)
}

/// `text` with `edits` made, an edit inside another's range (a compile or transform inside
/// another's argument) left to the outer one; `None` when there are none.
fn outermost(text: &str, mut edits: Vec<Edit>) -> Option<String> {
    if edits.is_empty() {
        return None;
    }
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

/// The transforms with a plain counterpart, by their torch path, and what a call of each
/// becomes (`{f}` for its first argument; `None`: the argument itself).
const TRANSFORMS: &[(&str, Option<&str>)] = &[
    ("torch.vmap", Some(VMAP)),
    ("torch.func.vmap", Some(VMAP)),
    ("torch.func.grad", None),
    ("torch.func.jacrev", None),
    ("torch.func.jacfwd", None),
    ("torch.func.hessian", None),
    ("torch.jit.script", None),
    ("torch.jit.trace", None),
    ("torch.fx.symbolic_trace", None),
];

/// `vmap(f)` run plainly: `f` applied to each sample of its arguments (the first dimension
/// of each tensor in them, followed into dicts, lists and tuples as `vmap` does), the
/// results' tensors stacked.
const VMAP: &str = "(lambda *a: (lambda P, T: (lambda l, d: (lambda r: P.tree_map(lambda *x: T.stack(x) if all(isinstance(t, T.Tensor) for t in x) else list(x), *r) if r else r)([({f})(*P.tree_unflatten(list(s), d)) for s in zip(*l)]))(*P.tree_flatten(a)))(__import__('torch.utils._pytree').utils._pytree, __import__('torch')))";

/// Every call of a transform of [`TRANSFORMS`] replaced by its plain counterpart, every such
/// decorator dropped; `None` when the script has none. A `vmap` with more than the function
/// (`in_dims`, `out_dims`) has no plain counterpart here, and neither has the script then.
fn untransformed(script: &Script) -> Option<String> {
    let imports = torch_imports(script);
    if imports.is_empty() {
        return None;
    }
    let text = script.text();
    let transform = |e: &Expr| {
        let path = torch_path(&imports, e)?;
        TRANSFORMS.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
    };
    let mut edits = Vec::new();
    let mut decorators = HashSet::new();
    for body in all_bodies(script.body()) {
        for stmt in body {
            let Stmt::FunctionDef(f) = stmt else { continue };
            for decorator in &f.decorator_list {
                if transform(&decorator.expression) == Some(None) {
                    let at = span(decorator);
                    decorators.insert(span(&decorator.expression));
                    edits.push(Edit::delete(
                        line_start(text, at.start)..line_end(text, at.end),
                    ));
                }
            }
        }
    }
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        let Some(counterpart) = transform(&call.func) else {
            continue;
        };
        if decorators.contains(&span(expr)) {
            continue;
        }
        let args = &call.arguments;
        let f = script.slice(args.args.first()?);
        let replacement = match counterpart {
            Some(_) if args.args.len() > 1 || !args.keywords.is_empty() => return None,
            Some(template) => template.replace("{f}", f),
            None => format!("({f})"),
        };
        edits.push(Edit::replace(span(expr), replacement));
    }
    outermost(text, edits)
}

/// How many of the callables given to `torch.compile` the script also calls eagerly
/// (`expected = forward(x)` beside `torch.compile(forward)(x)`): the eager references of an
/// accuracy repro. A candidate with fewer than its original compares the compiled result
/// with something else (`zip(torch.compile(forward)(x), x)` passes its control whenever
/// `relu(x)` happens to be `x`), however its control runs. A name that is ever bound to the
/// compiled callable (`model = torch.compile(model)`, `model = compiled`) is not one: its
/// calls may run the compiled code.
pub fn eager_references(script: &Script) -> usize {
    let imports = torch_imports(script);
    if imports.is_empty() {
        return 0;
    }
    let is_compile = |e: &Expr| torch_path(&imports, e).as_deref() == Some("torch.compile");
    let exprs = all_exprs(script.body());
    let rebound = bound_to_compiled(script, &is_compile);
    let compiled: HashSet<&str> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call(c) if is_compile(&c.func) => {
                c.arguments.args.first().map(|f| script.slice(f))
            }
            _ => None,
        })
        .filter(|f| !rebound.contains(f))
        .collect();
    let called: HashSet<&str> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call(c) => Some(script.slice(&*c.func)),
            _ => None,
        })
        .filter(|callee| compiled.contains(callee))
        .collect();
    called.len()
}

/// The names assigned a compiled callable: `torch.compile(…)`, or a name assigned one.
fn bound_to_compiled<'a>(
    script: &'a Script,
    is_compile: &impl Fn(&Expr) -> bool,
) -> HashSet<&'a str> {
    let assigns: Vec<(&str, &Expr)> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Assign(a) => match &a.targets[..] {
                [Expr::Name(n)] => Some((n.id.as_str(), &*a.value)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut names = HashSet::new();
    loop {
        let before = names.len();
        for (name, value) in &assigns {
            let compiled = match value {
                Expr::Call(c) => is_compile(&c.func),
                Expr::Name(n) => names.contains(n.id.as_str()),
                _ => false,
            };
            if compiled {
                names.insert(*name);
            }
        }
        if names.len() == before {
            return names;
        }
    }
}

/// The library calls and arithmetic operators of the reference sides of the script's
/// comparisons (see [`Suspect::Custom`]), sorted: `torch.nn.functional.rms_norm`, `operator
/// /` (each operator as often as written). A candidate whose reference lost one of the
/// original's compares the custom code with something else: `torch.softmax(x)` is not the
/// reference of a tempered softmax, `torch.softmax(x / t)` is.
pub fn reference_calls(script: &Script) -> Vec<String> {
    let calls = LibraryCalls {
        instances: true,
        operators: true,
        ..LibraryCalls::of(script)
    };
    let out: Vec<String> = comparisons(script)
        .into_iter()
        .flat_map(|(_, reference)| calls.of_expr(reference))
        .collect();
    each_call_once(out)
}

/// `calls` sorted, each call once and each operator as often as written (a softmax divides
/// twice).
fn each_call_once(mut calls: Vec<String>) -> Vec<String> {
    calls.sort();
    calls.dedup_by(|a, b| a == b && !is_operator(a));
    calls
}

/// Whether a name of [`custom_calls`]' is an arithmetic operator's (see [`operator`]).
pub fn is_operator(call: &str) -> bool {
    call.starts_with("operator ")
}

/// How often each of `calls` is made.
pub fn counted(
    calls: impl IntoIterator<Item = String>,
) -> std::collections::HashMap<String, usize> {
    let mut out = std::collections::HashMap::new();
    for call in calls {
        *out.entry(call).or_insert(0) += 1;
    }
    out
}

/// What the custom sides of the script's comparisons run (see [`Suspect::Custom`]): the torch
/// calls, the methods (`.mean`) and the arithmetic operators (`operator /`: the division of a
/// written-out softmax) of the script's own code they call, followed down, sorted.
/// When no control passes on the original, nothing tells a candidate that still compares the
/// custom code from one that compares the reference with something else; a candidate must
/// then still make each of these calls somewhere outside the reference (see [`calls_made`]),
/// each operator as often: the code that is the bug stays, inlined or not.
pub fn custom_calls(script: &Script) -> Vec<String> {
    let calls = LibraryCalls {
        methods: true,
        operators: true,
        ..LibraryCalls::of(script)
    };
    let out: Vec<String> = comparisons(script)
        .into_iter()
        .flat_map(|(custom, _)| calls.of_expr(custom))
        .collect();
    each_call_once(out)
}

/// How [`custom_calls`] names an arithmetic operator.
fn operator(op: ast::Operator) -> String {
    format!("operator {}", op.as_str())
}

/// Every torch call, method call and operator the script makes outside the reference sides of
/// its comparisons, in [`custom_calls`]'s terms, with how often each is written: a division
/// moved into the reference (`torch.softmax(x / t)`) is no longer the custom code's.
pub fn calls_made(script: &Script) -> std::collections::HashMap<String, usize> {
    let compared = compared(script);
    let references: Vec<std::ops::Range<usize>> = compared
        .own
        .iter()
        .chain(&compared.inlined)
        .map(|(_, reference)| span(*reference))
        .collect();
    let imports = torch_imports(script);
    counted(all_exprs(script.body()).into_iter().filter_map(|e| {
        let at = span(e);
        let in_reference = references
            .iter()
            .any(|r| r.start <= at.start && at.end <= r.end);
        (!in_reference).then(|| call_name(&imports, e)).flatten()
    }))
}

/// Of the `needed` calls (see [`custom_calls`]), the first that `made` (see [`calls_made`])
/// lacks, or holds fewer times.
pub fn missing_call<'a>(
    needed: &'a [String],
    made: &std::collections::HashMap<String, usize>,
) -> Option<&'a str> {
    needed
        .iter()
        .find(|c| {
            let times = needed.iter().filter(|n| n == c).count();
            made.get(c.as_str()).copied().unwrap_or(0) < times
        })
        .map(String::as_str)
}

/// The calls of [`calls_made`] on the lines (1-based) that a run of the script ran: the
/// custom code's calls still run, not only still written (in a class nothing builds any
/// more, a function nothing calls).
pub fn calls_run(script: &Script, lines: &HashSet<usize>) -> HashSet<String> {
    let text = script.text();
    calls_where(script, |call| {
        let range = span(call);
        let (first, last) = (line_of(text, range.start), line_of(text, range.end));
        (first..=last).any(|line| lines.contains(&line))
    })
}

fn calls_where(script: &Script, keep: impl Fn(&Expr) -> bool) -> HashSet<String> {
    let imports = torch_imports(script);
    all_exprs(script.body())
        .into_iter()
        .filter(|e| keep(e))
        .filter_map(|e| call_name(&imports, e))
        .collect()
}

/// How [`custom_calls`] names what `e` calls: a torch path, `.method`, `operator /`.
fn call_name(imports: &std::collections::HashMap<String, String>, e: &Expr) -> Option<String> {
    if let Expr::BinOp(b) = e {
        return Some(operator(b.op));
    }
    let Expr::Call(c) = e else { return None };
    match (torch_path(imports, &c.func), &*c.func) {
        (Some(path), _) => Some(path),
        (None, Expr::Attribute(a)) => Some(format!(".{}", a.attr)),
        _ => None,
    }
}

/// The torch calls an expression makes, with those of the script's own functions and methods
/// it calls (see [`callee`]), followed down: `reference_layer_norm(x, w, b)` calls
/// `torch.nn.functional.layer_norm` when its body does.
pub(crate) struct LibraryCalls<'a> {
    imports: std::collections::HashMap<String, String>,
    stmts: Vec<&'a Stmt>,
    bindings: Vec<(&'a str, &'a Expr)>,
    /// Whether the methods called on other values count too, as `.mean`.
    methods: bool,
    /// Whether, of those, a method named like a function the script defines counts too (a
    /// method of the script's own classes, which a reduction may inline).
    own_methods: bool,
    /// Whether the arithmetic operators count too, as `operator /`, each time written.
    operators: bool,
    /// Whether the call of a name bound once to a library object makes that object's calls:
    /// `ref(x)` with `ref = nn.LayerNorm(8).to(device)` calls `torch.nn.LayerNorm`.
    instances: bool,
    /// Whether a name bound once that is read stands for its value: `c` with `c =
    /// json.dumps(d)` calls `json.dumps`.
    values: bool,
    /// Whether a function of the script handed over (`torch.compile(inner_fn)`) makes the
    /// calls of its body, as a call of it does.
    handed: bool,
}

impl<'a> LibraryCalls<'a> {
    pub(crate) fn of(script: &'a Script) -> LibraryCalls<'a> {
        LibraryCalls {
            imports: torch_imports(script),
            stmts: all_bodies(script.body()).into_iter().flatten().collect(),
            bindings: single_bindings(script),
            methods: false,
            own_methods: true,
            operators: false,
            instances: false,
            values: false,
            handed: false,
        }
    }

    /// The calls of any module's, a name bound once read as its value (see
    /// [`crate::compared`]).
    pub(crate) fn of_any_library(script: &'a Script) -> LibraryCalls<'a> {
        LibraryCalls {
            imports: crate::torch::imports(script, |_| true),
            values: true,
            ..LibraryCalls::of(script)
        }
    }

    /// [`LibraryCalls::of_any_library`], a call of a name bound once to a library object
    /// making that object's calls too, a function of the script handed over the calls of
    /// its body, and the methods called that the script does not define (`.step`,
    /// `.get_last_lr`).
    pub(crate) fn of_any_library_and_instances(script: &'a Script) -> LibraryCalls<'a> {
        LibraryCalls {
            instances: true,
            handed: true,
            methods: true,
            own_methods: false,
            ..LibraryCalls::of_any_library(script)
        }
    }

    /// Whether the script defines a function or method named `name`.
    fn defines(&self, name: &str) -> bool {
        self.stmts
            .iter()
            .any(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == name))
    }

    /// [`LibraryCalls::of_expr`], each call once.
    pub(crate) fn set_of_expr(&self, expr: &'a Expr) -> std::collections::BTreeSet<String> {
        self.of_expr(expr).into_iter().collect()
    }

    pub(crate) fn of_expr(&self, expr: &'a Expr) -> Vec<String> {
        let mut out = Vec::new();
        // A class or function passed as an argument (see `passed_suspect`): the library's
        // is what the reference side calls, the script's runs the code of its body.
        if let Some(path) = torch_path(&self.imports, expr) {
            return vec![path];
        }
        if let Expr::Name(n) = expr
            && let Some(body) = self.stmts.iter().find_map(|s| match s {
                Stmt::ClassDef(c) if c.name.as_str() == n.id.as_str() => Some(&c.body),
                Stmt::FunctionDef(f) if f.name.as_str() == n.id.as_str() => Some(&f.body),
                _ => None,
            })
        {
            self.collect(all_exprs(body), &mut HashSet::new(), &mut out);
            return out;
        }
        self.collect(crate::python::exprs_of(expr), &mut HashSet::new(), &mut out);
        out
    }

    /// The calls among `exprs`, and those of the functions they call that `seen` (their
    /// starts) does not hold yet.
    fn collect(&self, exprs: Vec<&'a Expr>, seen: &mut HashSet<usize>, out: &mut Vec<String>) {
        for e in exprs {
            if let (true, Expr::Name(n)) = (self.values, e)
                && let Some((_, value)) = self.bindings.iter().find(|(b, _)| *b == n.id.as_str())
                && seen.insert(span(*value).start)
            {
                self.collect(crate::python::exprs_of(value), seen, out);
            }
            if let (true, Expr::Name(n)) = (self.handed, e)
                && let Some(f) = self.stmts.iter().find_map(|s| match s {
                    Stmt::FunctionDef(f) if f.name.as_str() == n.id.as_str() => Some(f),
                    _ => None,
                })
                && seen.insert(span(f).start)
            {
                self.collect(all_exprs(&f.body), seen, out);
            }
            if let (true, Expr::BinOp(b)) = (self.operators, e) {
                out.push(operator(b.op));
            }
            let Expr::Call(c) = e else { continue };
            if let Some(path) = torch_path(&self.imports, &c.func) {
                out.push(path);
            } else if let Some((f, _)) = callee(&c.func, &self.stmts, &self.bindings) {
                if seen.insert(span(f).start) {
                    self.collect(all_exprs(&f.body), seen, out);
                }
            } else if let (true, Expr::Attribute(a)) = (self.methods, &*c.func)
                && (self.own_methods || !self.defines(a.attr.as_str()))
            {
                out.push(format!(".{}", a.attr));
            } else if let (true, Expr::Name(n)) = (self.instances, &*c.func)
                && let Some((_, value)) = self.bindings.iter().find(|(b, _)| *b == n.id.as_str())
                && seen.insert(span(*value).start)
            {
                self.collect(crate::python::exprs_of(value), seen, out);
            }
        }
    }
}

/// The (custom, reference) sides of every comparison whose custom computation was inlined:
/// neither side calls the script's own code, one is a library call (the reference), the other
/// computes something else (`(x - x.mean()) / x.var().sqrt()`, or a name bound once to that).
/// Only a fix's control (see [`crate::fix`]) follows such a comparison, and only when the
/// script has none of [`comparisons`]'s.
pub(crate) fn inlined_comparisons(script: &Script) -> Vec<(&Expr, &Expr)> {
    let compared = compared(script);
    if compared.own.is_empty() {
        compared.inlined
    } else {
        Vec::new()
    }
}

/// The library calls that the script's comparisons read on either side, a name bound once
/// standing for its value, sorted. Under a fix's control the script's own computation may be
/// inlined into the comparison, where [`reference_calls`] no longer sees a side computed by
/// the script's own code: the fix still has to turn the failure into a pass, so the suspect
/// is still compared, and the comparison must still read the original's reference calls.
pub fn compared_calls(script: &Script) -> Vec<String> {
    let calls = LibraryCalls {
        instances: true,
        ..LibraryCalls::of(script)
    };
    let mut out: Vec<String> = compared_sides(script, &calls.imports)
        .into_iter()
        .flat_map(|(a, b)| [a, b])
        .flat_map(|side| calls.of_expr(side))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The comparisons of a script, each as its (custom, reference) sides, by how the custom
/// side is computed.
struct Compared<'a> {
    /// By a call of the script's own code (not one that only wraps the library).
    own: Vec<(&'a Expr, &'a Expr)>,
    /// Otherwise, against a side that is a library call.
    inlined: Vec<(&'a Expr, &'a Expr)>,
}

fn compared(script: &Script) -> Compared<'_> {
    let mut out = Compared {
        own: Vec::new(),
        inlined: Vec::new(),
    };
    let imports = torch_imports(script);
    if imports.is_empty() {
        return out;
    }
    let own = own_names(script);
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let custom = |e: &Expr| calls_own(e, &own) && !wraps_library(e, &stmts, &imports);
    let library = |e: &Expr| matches!(e, Expr::Call(c) if torch_path(&imports, &c.func).is_some());
    let bindings = single_bindings(script);
    for (a, b) in compared_sides(script, &imports) {
        match (custom(a), custom(b)) {
            (true, false) => out.own.push((a, b)),
            (false, true) => out.own.push((b, a)),
            (true, true) => {
                let library = |e: &Expr| torch_path(&imports, e).is_some();
                out.own.extend(
                    passed_suspect(script, a, b, &own, &library, &bindings)
                        .or_else(|| twin_calls(script, &own, &library)),
                );
            }
            _ if calls_own(a, &own) || calls_own(b, &own) => {}
            _ => match (library(a), library(b)) {
                (false, true) => out.inlined.push((a, b)),
                (true, false) => out.inlined.push((b, a)),
                _ => {}
            },
        }
    }
    out
}

/// The suspect of a comparison whose two sides run the same code of the script's, one given a
/// class or function of the script's where the other is given the library's:
/// `Block(d, FastLayerNorm)(x)` against `Block(d, nn.LayerNorm)(x)`, or names bound once to
/// those. The (custom, reference) pair is then that argument on each side: the control passes
/// the library's to both.
fn passed_suspect<'a>(
    script: &Script,
    a: &'a Expr,
    b: &'a Expr,
    own: &HashSet<String>,
    library: &dyn Fn(&Expr) -> bool,
    bindings: &[(&'a str, &'a Expr)],
) -> Option<(&'a Expr, &'a Expr)> {
    let (x, y) = only_difference(script, a, b, bindings, 8)?;
    own_against_library(x, y, own, library)
}

/// `(x, y)` as (the script's class or function, the library's), in either order.
fn own_against_library<'a>(
    x: &'a Expr,
    y: &'a Expr,
    own: &HashSet<String>,
    library: &dyn Fn(&Expr) -> bool,
) -> Option<(&'a Expr, &'a Expr)> {
    let own_name = |e: &Expr| matches!(e, Expr::Name(n) if own.contains(n.id.as_str()));
    match (own_name(x) && library(y), own_name(y) && library(x)) {
        (true, false) => Some((x, y)),
        (false, true) => Some((y, x)),
        _ => None,
    }
}

/// Where the sides' data flow cannot be followed (built by a helper that returns both, names
/// bound more than once), two calls of the same callee anywhere in the script that differ in
/// one argument only, the script's class or function in one and the library's in the other:
/// `Block(cfg, FastLayerNorm)` and `Block(cfg, nn.LayerNorm)`.
fn twin_calls<'a>(
    script: &'a Script,
    own: &HashSet<String>,
    library: &dyn Fn(&Expr) -> bool,
) -> Option<(&'a Expr, &'a Expr)> {
    let calls: Vec<&ast::ExprCall> = all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(c) if !c.arguments.is_empty() => Some(c),
            _ => None,
        })
        .collect();
    let slice = |e: &Expr| script.slice(e);
    for (i, x) in calls.iter().enumerate() {
        for y in &calls[i + 1..] {
            if slice(&x.func) != slice(&y.func)
                || x.arguments.args.len() != y.arguments.args.len()
                || x.arguments.keywords.len() != y.arguments.keywords.len()
            {
                continue;
            }
            let pairs: Vec<(&Expr, &Expr)> = x
                .arguments
                .args
                .iter()
                .zip(&y.arguments.args)
                .chain(
                    x.arguments
                        .keywords
                        .iter()
                        .zip(&y.arguments.keywords)
                        .filter(|(k, l)| k.arg == l.arg)
                        .map(|(k, l)| (&k.value, &l.value)),
                )
                .collect();
            let differing: Vec<_> = pairs
                .into_iter()
                .filter(|(a, b)| slice(a) != slice(b))
                .collect();
            if let [(a, b)] = differing.as_slice()
                && let Some(pair) = own_against_library(a, b, own, library)
            {
                return Some(pair);
            }
        }
    }
    None
}

/// Where two expressions of the same shape differ, when they differ in one place only: calls
/// with the same number of arguments and keywords, attributes of the same name, a name bound
/// once followed to its value. `None` when they are the same or differ in several places.
fn only_difference<'a>(
    script: &Script,
    a: &'a Expr,
    b: &'a Expr,
    bindings: &[(&'a str, &'a Expr)],
    depth: usize,
) -> Option<(&'a Expr, &'a Expr)> {
    if script.slice(a) == script.slice(b) || depth == 0 {
        return None;
    }
    let bound = |e: &'a Expr| match e {
        Expr::Name(n) => bindings
            .iter()
            .find(|(name, _)| *name == n.id.as_str())
            .map(|b| b.1),
        _ => None,
    };
    let parts: Vec<(&'a Expr, &'a Expr)> = match (a, b) {
        (Expr::Call(x), Expr::Call(y))
            if x.arguments.args.len() == y.arguments.args.len()
                && x.arguments.keywords.len() == y.arguments.keywords.len()
                && x.arguments
                    .keywords
                    .iter()
                    .zip(&y.arguments.keywords)
                    .all(|(k, l)| k.arg == l.arg) =>
        {
            std::iter::once((&*x.func, &*y.func))
                .chain(x.arguments.args.iter().zip(y.arguments.args.iter()))
                .chain(
                    x.arguments
                        .keywords
                        .iter()
                        .zip(&y.arguments.keywords)
                        .map(|(k, l)| (&k.value, &l.value)),
                )
                .collect()
        }
        (Expr::Attribute(x), Expr::Attribute(y)) if x.attr == y.attr => {
            vec![(&*x.value, &*y.value)]
        }
        (Expr::Name(_), Expr::Name(_)) => match (bound(a), bound(b)) {
            (Some(x), Some(y)) => {
                return only_difference(script, x, y, bindings, depth - 1).or(Some((a, b)));
            }
            _ => return Some((a, b)),
        },
        _ => return Some((a, b)),
    };
    let differing: Vec<_> = parts
        .into_iter()
        .filter(|(x, y)| script.slice(*x) != script.slice(*y))
        .collect();
    match differing.as_slice() {
        [(x, y)] => only_difference(script, x, y, bindings, depth - 1).or(Some((*x, *y))),
        _ => None,
    }
}

/// How many comparisons set a reference against a call of the script's own code whose result
/// reads none of the arguments the call gives it: `fast = FusedRMSNorm(8)(x)` with a
/// `forward` that returns its weight. The custom computation, the bug, is gone, and the check
/// compares the reference with a value that does not depend on the input; its control still
/// passes, since it compares the reference with itself. The binary refuses candidates with
/// more of these than the original. Only what the code shows is judged: a callee that cannot
/// be found (inherited, imported) is taken to read its arguments.
pub fn hollow_customs(script: &Script) -> usize {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let bindings = single_bindings(script);
    comparisons(script)
        .into_iter()
        .filter(|(custom, _)| {
            let Expr::Call(call) = custom else {
                return false;
            };
            if call.arguments.args.iter().all(crate::python::is_literal) {
                return false;
            }
            callee(&call.func, &stmts, &bindings)
                .is_some_and(|(f, method)| !reads_inputs(f, method))
        })
        .count()
}

/// The function a call of `func` runs, and whether it is a method (its first parameter the
/// instance): `fused` → `def fused`, `Model(…)(…)`, `model(…)` with `model = Model(…)` →
/// `Model.forward` (or `__call__`), `model.step(…)` → `Model.step`.
pub(crate) fn callee<'a>(
    func: &'a Expr,
    stmts: &[&'a Stmt],
    bindings: &[(&'a str, &'a Expr)],
) -> Option<(&'a ast::StmtFunctionDef, bool)> {
    let function = |name: &str| {
        stmts.iter().find_map(|s| match s {
            Stmt::FunctionDef(f) if f.name.as_str() == name => Some(f),
            _ => None,
        })
    };
    let method = |class: &'a ast::StmtClassDef, names: &[&str]| {
        names.iter().find_map(|name| {
            class.body.iter().find_map(|s| match s {
                Stmt::FunctionDef(f) if f.name.as_str() == *name => Some((f, true)),
                _ => None,
            })
        })
    };
    match func {
        Expr::Name(n) => match function(n.id.as_str()) {
            Some(f) => Some((f, false)),
            None => method(
                instance_of(func, stmts, bindings)?,
                &["forward", "__call__"],
            ),
        },
        Expr::Attribute(a) => match instance_of(&a.value, stmts, bindings) {
            Some(class) => method(class, &[a.attr.as_str()]),
            None => method(held_instance(a, stmts, bindings)?, &["forward", "__call__"]),
        },
        Expr::Call(_) => method(
            instance_of(func, stmts, bindings)?,
            &["forward", "__call__"],
        ),
        _ => None,
    }
}

/// The class of the instance a method's `self.ATTR` holds: `self.norm(x)`, with `self.norm =
/// Norm(…)` in one of the script's methods, calls `Norm`'s `forward`.
fn held_instance<'a>(
    attribute: &ast::ExprAttribute,
    stmts: &[&'a Stmt],
    bindings: &[(&'a str, &'a Expr)],
) -> Option<&'a ast::StmtClassDef> {
    if !matches!(&*attribute.value, Expr::Name(n) if n.id.as_str() == "self") {
        return None;
    }
    stmts.iter().find_map(|s| match s {
        Stmt::Assign(assign) => match assign.targets.as_slice() {
            [Expr::Attribute(t)]
                if t.attr.as_str() == attribute.attr.as_str()
                    && matches!(&*t.value, Expr::Name(n) if n.id.as_str() == "self") =>
            {
                instance_of(&assign.value, stmts, bindings)
            }
            _ => None,
        },
        _ => None,
    })
}

/// The class `expr` is an instance of: `Model(…)`, `Model(…).double()` (a move returns the
/// module itself), or a name bound once to one of those.
fn instance_of<'a>(
    expr: &'a Expr,
    stmts: &[&'a Stmt],
    bindings: &[(&'a str, &'a Expr)],
) -> Option<&'a ast::StmtClassDef> {
    instance_within(expr, stmts, bindings, 8)
}

/// [`instance_of`], through at most `depth` names (`m = m.double()` refers to itself).
fn instance_within<'a>(
    expr: &'a Expr,
    stmts: &[&'a Stmt],
    bindings: &[(&'a str, &'a Expr)],
    depth: usize,
) -> Option<&'a ast::StmtClassDef> {
    let depth = depth.checked_sub(1)?;
    const MOVES: &[&str] = &[
        "to",
        "double",
        "float",
        "half",
        "bfloat16",
        "cuda",
        "cpu",
        "eval",
        "train",
        "requires_grad_",
    ];
    match expr {
        // Bound once, or every time to an instance of the same class (`norm = Norm(…)` in
        // two tests).
        Expr::Name(n) => {
            if let Some((_, value)) = bindings.iter().find(|(name, _)| *name == n.id.as_str()) {
                return instance_within(value, stmts, bindings, depth);
            }
            let mut classes = stmts.iter().filter_map(|s| match s {
                Stmt::Assign(a) => match a.targets.as_slice() {
                    // `m = m.double()` keeps the class `m` had.
                    [Expr::Name(t)] if t.id == n.id && root(&a.value) != Some(t.id.as_str()) => {
                        Some(instance_within(&a.value, stmts, bindings, depth))
                    }
                    _ => None,
                },
                _ => None,
            });
            let first = classes.next()??;
            classes
                .all(|c| c.is_some_and(|c| std::ptr::eq(c, first)))
                .then_some(first)
        }
        Expr::Call(c) => match &*c.func {
            Expr::Name(n) => stmts.iter().find_map(|s| match s {
                Stmt::ClassDef(class) if class.name.as_str() == n.id.as_str() => Some(class),
                _ => None,
            }),
            Expr::Attribute(a) if MOVES.contains(&a.attr.as_str()) => {
                instance_within(&a.value, stmts, bindings, depth)
            }
            _ => None,
        },
        _ => None,
    }
}

/// Whether some `return` of `f` reads one of its parameters (the instance of a method only
/// once the method has stored an input in it), through the assignments in between.
fn reads_inputs(f: &ast::StmtFunctionDef, method: bool) -> bool {
    let p = &f.parameters;
    let mut inputs: HashSet<&str> = p
        .posonlyargs
        .iter()
        .chain(&p.args)
        .chain(&p.kwonlyargs)
        .map(|a| a.parameter.name.as_str())
        .chain(p.vararg.iter().chain(&p.kwarg).map(|a| a.name.as_str()))
        .collect();
    let first = p.posonlyargs.iter().chain(&p.args).next();
    if let (true, Some(instance)) = (method, first) {
        inputs.remove(instance.parameter.name.as_str());
    }
    let reads = |e: &Expr, inputs: &HashSet<&str>| {
        crate::python::exprs_of(e)
            .into_iter()
            .any(|e| matches!(e, Expr::Name(n) if inputs.contains(n.id.as_str())))
    };
    let stmts: Vec<&Stmt> = all_bodies(&f.body).into_iter().flatten().collect();
    loop {
        let before = inputs.len();
        for stmt in &stmts {
            let (targets, value): (Vec<&Expr>, &Expr) = match stmt {
                Stmt::For(l) => (vec![&*l.target], &l.iter),
                _ => match crate::python::assignment(stmt) {
                    Some(assignment) => assignment,
                    None => continue,
                },
            };
            if !reads(value, &inputs) {
                continue;
            }
            for target in targets {
                for e in crate::python::exprs_of(target) {
                    if let Expr::Name(n) = e {
                        inputs.insert(n.id.as_str());
                    }
                }
            }
        }
        if inputs.len() == before {
            break;
        }
    }
    stmts.iter().any(|s| match s {
        Stmt::Return(r) => r.value.as_ref().is_some_and(|v| reads(v, &inputs)),
        Stmt::Expr(e) => matches!(&*e.value, Expr::Yield(_) | Expr::YieldFrom(_)),
        _ => false,
    })
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
pub(crate) fn comparisons(script: &Script) -> Vec<(&Expr, &Expr)> {
    compared(script).own
}

/// The statements of the computation each comparison's custom side runs, with their
/// whitespace removed: the body of the function it calls, or of the `forward` (`__call__`) of
/// the class it builds or is passed. Where no control tells the custom code's bug from
/// another, the code itself is the bug: every candidate keeps these statements as they are
/// (see [`keeps_code`]).
pub fn custom_code(script: &Script) -> Vec<String> {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let bindings = single_bindings(script);
    let class_body = |name: &str| {
        stmts.iter().find_map(|s| match s {
            Stmt::ClassDef(c) if c.name.as_str() == name => c.body.iter().find_map(|m| match m {
                Stmt::FunctionDef(f) if ["forward", "__call__"].contains(&f.name.as_str()) => {
                    Some(&f.body[..])
                }
                _ => None,
            }),
            Stmt::FunctionDef(f) if f.name.as_str() == name => Some(&f.body[..]),
            _ => None,
        })
    };
    let mut seen = HashSet::new();
    let mut out: Vec<String> = comparisons(script)
        .into_iter()
        .filter_map(|(custom, _)| match custom {
            Expr::Name(n) => class_body(n.id.as_str()),
            Expr::Call(c) => callee(&c.func, &stmts, &bindings).map(|(f, _)| &f.body[..]),
            _ => None,
        })
        .flat_map(|body| followed(body, &stmts, &bindings, &mut seen))
        .flatten()
        .filter(|s| !matches!(s, Stmt::Expr(e) if crate::python::is_literal(&e.value)))
        .map(|s| squeezed(script.slice(s)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `body` and the bodies of the script's functions and methods it calls, followed down (each
/// once: `seen` holds their starts): `return self.softmax(x)` runs the `forward` of the module
/// `self.softmax` holds.
fn followed<'a>(
    body: &'a [Stmt],
    stmts: &[&'a Stmt],
    bindings: &[(&'a str, &'a Expr)],
    seen: &mut HashSet<usize>,
) -> Vec<&'a [Stmt]> {
    let mut out = vec![body];
    for e in all_exprs(body) {
        if let Expr::Call(c) = e
            && let Some((f, _)) = callee(&c.func, stmts, bindings)
            && seen.insert(span(f).start)
        {
            out.extend(followed(&f.body, stmts, bindings, seen));
        }
    }
    out
}

/// Whether `script` still holds each of `code` (see [`custom_code`]); the first it lost.
pub fn keeps_code<'a>(script: &Script, code: &'a [String]) -> Result<(), &'a str> {
    let text = squeezed(script.text());
    match code.iter().find(|c| !text.contains(c.as_str())) {
        Some(lost) => Err(lost),
        None => Ok(()),
    }
}

/// `text` without its whitespace.
pub fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether `expr` is a call of a function the script defines only to call the library, the
/// reference of a test (`def reference(x, w, b): return F.layer_norm(x, …)`): its body is one
/// `return` of a torch call whose arguments call nothing.
fn wraps_library(
    expr: &Expr,
    stmts: &[&Stmt],
    imports: &std::collections::HashMap<String, String>,
) -> bool {
    let Expr::Call(call) = expr else {
        return false;
    };
    let Expr::Name(name) = &*call.func else {
        return false;
    };
    let Some(f) = stmts.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == name.id.as_str() => Some(f),
        _ => None,
    }) else {
        return false;
    };
    let body: Vec<&Stmt> = f
        .body
        .iter()
        .filter(|s| !matches!(s, Stmt::Expr(e) if matches!(&*e.value, Expr::StringLiteral(_))))
        .collect();
    let [Stmt::Return(ret)] = body.as_slice() else {
        return false;
    };
    let Some(Expr::Call(inner)) = ret.value.as_deref() else {
        return false;
    };
    // Its arguments are the parameters as they come (attributes, slices, literals): a
    // nested call would be a computation of the script's own.
    torch_path(imports, &inner.func).is_some()
        && crate::python::exprs_of(&inner.func)
            .into_iter()
            .chain(
                inner
                    .arguments
                    .args
                    .iter()
                    .chain(inner.arguments.keywords.iter().map(|k| &k.value))
                    .flat_map(crate::python::exprs_of),
            )
            .all(|e| !matches!(e, Expr::Call(_)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_class_passed_as_an_argument_is_the_suspect() {
        let text = "import torch\nimport torch.nn as nn\nclass FastLN(nn.Module):\n    def forward(self, x):\n        return (x - x.mean(-1, keepdim=True)) * torch.rsqrt(x.var(-1) + 1e-5)\nclass Block(nn.Module):\n    def __init__(self, d, norm):\n        super().__init__()\n        self.norm = norm(d)\n    def forward(self, x):\n        return self.norm(x)\nfast = Block(4, FastLN)\nref = Block(4, nn.LayerNorm)\nassert torch.allclose(fast(x), ref(x))\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let [(custom, reference)] = comparisons(&script)[..] else {
            panic!("one comparison");
        };
        assert_eq!(script.slice(custom), "FastLN");
        assert_eq!(script.slice(reference), "nn.LayerNorm");
        let control = Suspect::Custom
            .control(&script, PythonVersion::PY311)
            .unwrap();
        assert!(
            control.contains("fast = Block(4, (nn.LayerNorm))"),
            "{control}"
        );
        assert_eq!(reference_calls(&script), ["torch.nn.LayerNorm"]);
        assert_eq!(
            custom_calls(&script),
            [
                ".mean",
                ".var",
                "operator *",
                "operator +",
                "operator -",
                "torch.rsqrt"
            ],
            "the custom class's own code"
        );
    }

    #[test]
    fn a_module_held_by_an_attribute_is_followed_into_its_forward() {
        let text = "import torch\nimport torch.nn as nn\nclass Tempered(nn.Module):\n    def forward(self, x):\n        e = torch.exp(x)\n        return e / e.sum(-1, keepdim=True)\nclass Sampler(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.softmax = Tempered()\n    def probabilities(self, x):\n        return self.softmax(x)\ns = Sampler()\nassert torch.allclose(s.probabilities(x), torch.softmax(x, -1))\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(custom_calls(&script), [".sum", "operator /", "torch.exp"]);
        assert_eq!(
            custom_code(&script),
            [
                "e=torch.exp(x)",
                "returne/e.sum(-1,keepdim=True)",
                "returnself.softmax(x)"
            ]
        );
    }

    #[test]
    fn a_class_passed_to_twin_calls_is_the_suspect_where_the_sides_come_from_a_helper() {
        let text = "import torch\nimport torch.nn as nn\nclass FastLN(nn.Module):\n    def forward(self, x):\n        m = x.mean(-1, keepdim=True)\n        return x - m\nclass Block(nn.Module):\n    def __init__(self, d, norm):\n        super().__init__()\n        self.norm = norm(d)\n    def forward(self, x):\n        return self.norm(x)\ndef pair():\n    fast = Block(4, FastLN)\n    ref = Block(4, nn.LayerNorm)\n    return fast, ref\nfast, ref = pair()\nassert torch.allclose(fast(x), ref(x))\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let [(custom, reference)] = comparisons(&script)[..] else {
            panic!("one comparison");
        };
        assert_eq!(script.slice(custom), "FastLN");
        assert_eq!(script.slice(reference), "nn.LayerNorm");
        let code = custom_code(&script);
        assert_eq!(code, ["m=x.mean(-1,keepdim=True)", "returnx-m"]);
        assert_eq!(keeps_code(&script, &code), Ok(()));
        let cut = Script::parse(
            text.replace("        return x - m\n", "        return x\n"),
            PythonVersion::PY311,
        )
        .unwrap();
        assert_eq!(keeps_code(&cut, &code), Err("returnx-m"));
        let lines: HashSet<usize> = [5, 17, 18].into();
        let ran = calls_run(&script, &lines);
        assert!(
            ran.contains(".mean") && !ran.contains("torch.nn.LayerNorm"),
            "{ran:?}"
        );
    }

    #[test]
    fn a_transform_runs_plainly_in_its_control() {
        let control = |text: &str| {
            Suspect::Transform.control(
                &Script::parse(text, PythonVersion::PY311).unwrap(),
                PythonVersion::PY311,
            )
        };
        let vmapped = control(
            "import torch\nfrom torch.func import vmap\ny = vmap(lambda l: torch.autograd.grad(l, w))(x)\n",
        )
        .unwrap();
        assert!(
            vmapped.contains("[(lambda l: torch.autograd.grad(l, w))(*P.tree_unflatten(list(s), d)) for s in zip(*l)]"),
            "{vmapped}"
        );
        assert_eq!(
            control("import torch\n@torch.jit.script\ndef f(x):\n    return x\ng = torch.jit.trace(m, (x,))\nh = torch.func.grad(f)(x)\nt = torch.fx.symbolic_trace(m)\n")
                .as_deref(),
            Some("import torch\ndef f(x):\n    return x\ng = (m)\nh = (f)(x)\nt = (m)\n")
        );
        // A vmap over chosen dimensions has no plain counterpart here.
        assert_eq!(
            control("import torch\ny = torch.vmap(f, in_dims=(0, None))(x, w)\n"),
            None
        );
        assert_eq!(control("import torch\ny = f(x)\n"), None);
    }

    #[test]
    fn an_inlined_custom_side_is_still_compared_with_its_reference() {
        let inlined = "import torch\nimport torch.nn.functional as F\ny = (x - x.mean()) / torch.sqrt(x.var(unbiased=True))\nfused = y * w\ntorch.testing.assert_close(fused, F.layer_norm(x, x.shape, w))\n";
        let script = Script::parse(inlined, PythonVersion::PY311).unwrap();
        assert!(reference_calls(&script).is_empty());
        assert_eq!(compared_calls(&script), ["torch.nn.functional.layer_norm"]);
        let [(custom, reference)] = inlined_comparisons(&script)[..] else {
            panic!("one comparison");
        };
        assert_eq!(script.slice(custom), "y * w");
        assert_eq!(script.slice(reference), "F.layer_norm(x, x.shape, w)");
    }

    #[test]
    fn the_custom_code_a_comparison_runs_is_still_made_when_inlined_and_missed_when_gone() {
        let parse = |text: &str| Script::parse(text, PythonVersion::PY311).unwrap();
        let original = parse(
            "import torch
class Norm(torch.nn.Module):
    def forward(self, x):
        m = x.mean(-1, keepdim=True)
        return (x - m) / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)
x = torch.randn(2, 8)
torch.testing.assert_close(Norm()(x), torch.nn.LayerNorm(8)(x))
",
        );
        let calls = custom_calls(&original);
        assert_eq!(
            calls,
            [
                ".mean",
                ".var",
                "operator +",
                "operator -",
                "operator /",
                "torch.sqrt"
            ]
        );
        let kept = |text: &str| missing_call(&calls, &calls_made(&parse(text))).is_none();
        assert!(kept(
            "import torch
x = torch.randn(8)
torch.testing.assert_close((x - x.mean()) / torch.sqrt(x.var() + 1e-5), torch.nn.LayerNorm(8)(x))
"
        ));
        assert!(!kept(
            "import torch
x = torch.randn(2)
torch.testing.assert_close(torch.nn.LayerNorm(2)(x), x)
"
        ));
    }

    #[test]
    fn a_custom_comparison_is_tried_before_the_device_it_may_run_on() {
        let script = Script::parse(
            "import torch
device = 'cuda' if torch.cuda.is_available() else 'cpu'
def norm(x):
    return x / x.sum()
x = torch.rand(4, device=device)
torch.testing.assert_close(norm(x), torch.nn.functional.normalize(x, p=1, dim=0))
",
            PythonVersion::PY311,
        )
        .unwrap();
        let suspects: Vec<Suspect> = Suspect::all_of(&script, PythonVersion::PY311)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(suspects.first(), Some(&Suspect::Custom), "{suspects:?}");
    }

    #[test]
    fn a_compiled_function_called_eagerly_too_is_an_eager_reference() {
        let count =
            |text: &str| eager_references(&Script::parse(text, PythonVersion::PY311).unwrap());
        let original = "import torch\ndef forward(a):\n    return torch.relu(a)\nx = torch.randn(1)\nexpected = forward(x)\nassert torch.allclose(torch.compile(forward)(x), expected)\n";
        assert_eq!(count(original), 1);
        // Folded into the check, or the function inlined at both places: still there.
        assert_eq!(
            count(
                "import torch\nx = torch.randn(1)\nassert torch.allclose(torch.compile(torch.relu)(x), torch.relu(x))\n"
            ),
            1
        );
        // The reference replaced by the input, or by a call of something else: gone.
        assert_eq!(
            count(
                "import torch\ndef forward(a):\n    return torch.relu(a)\nx = torch.randn(1)\nassert torch.allclose(torch.compile(forward)(x), x)\n"
            ),
            0
        );
        assert_eq!(
            count(
                "import torch\nx = torch.randn(1)\nassert torch.allclose(torch.compile(torch.relu)(x), torch.abs(x))\n"
            ),
            0
        );
        assert_eq!(count("x = 1\n"), 0);
        // Calls of a name bound to the compiled module run compiled code.
        assert_eq!(
            count("import torch\nm = M()\nc = torch.compile(m)\nm = c\nm(x)\n"),
            0
        );
        assert_eq!(
            count("import torch\nm = M()\nm = torch.compile(m)\nm(x)\n"),
            0
        );
    }

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
    fn a_compared_reference_module_bound_to_a_name_is_called_where_it_is_called() {
        // What a fix's control keeps compared must hold on the original itself: a candidate
        // that keeps `ref(x)` still compares with `nn.LayerNorm`.
        let text = "import torch\nimport torch.nn as nn\ndef norm(x):\n    return (x - x.mean(dim=0)) * torch.rsqrt(x.var(-1) + 1e-5)\nref = nn.LayerNorm(8).to('cpu')\nx = torch.randn(2, 8)\ngot = norm(x)\nwant = ref(x)\ntorch.testing.assert_close(got, want)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(reference_calls(&script), ["torch.nn.LayerNorm"]);
        assert!(
            compared_calls(&script).contains(&"torch.nn.LayerNorm".to_string()),
            "{:?}",
            compared_calls(&script)
        );
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
    fn the_reference_calls_of_a_function_that_wraps_the_library_are_its_library_calls() {
        let text = "import torch
import torch.nn.functional as F
def fused(x):
    return x * 2
def reference(x):
    return F.layer_norm(x, x.shape)
x = torch.randn(4)
torch.testing.assert_close(fused(x), reference(x))
";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(reference_calls(&script), ["torch.nn.functional.layer_norm"]);
        // Inlined into the comparison, the same call is still compared.
        let inlined = "import torch
import torch.nn.functional as F
x = torch.randn(4)
torch.testing.assert_close(x * 2, F.layer_norm(x, x.shape))
";
        let script = Script::parse(inlined, PythonVersion::PY311).unwrap();
        assert!(compared_calls(&script).contains(&"torch.nn.functional.layer_norm".to_string()));
    }

    #[test]
    fn a_reference_module_bound_to_a_name_is_its_class() {
        let text = "import torch
import torch.nn as nn
class Norm(nn.Module):
    def forward(self, x):
        return x - x.mean(dim=0)
ref = nn.LayerNorm(8).to('cpu')
x = torch.randn(4, 8)
torch.testing.assert_close(Norm()(x), ref(x))
";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(reference_calls(&script), ["torch.nn.LayerNorm"]);
        // Compared with the input instead, the reference is gone.
        let lost = text.replace("ref(x))", "x)");
        let script = Script::parse(&lost, PythonVersion::PY311).unwrap();
        assert!(reference_calls(&script).is_empty());
    }

    #[test]
    fn a_custom_side_that_no_longer_reads_its_input_is_hollow() {
        let count =
            |text: &str| hollow_customs(&Script::parse(text, PythonVersion::PY311).unwrap());
        let head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n";
        // The original: the module computes from x, through a helper.
        let computes = format!(
            "{head}def fused(x, w):\n    d = x.shape[-1]\n    ms = x.pow(2).sum(-1) / (d - 1)\n    return x * torch.rsqrt(ms) * w\nclass Norm(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.weight = torch.ones(dim)\n    def forward(self, x):\n        return fused(x, self.weight)\nx = torch.randn(2, 8)\nfast = Norm(8).double()(x)\nref = F.rms_norm(x, (8,))\nassert torch.allclose(ref, fast)\n"
        );
        assert_eq!(count(&computes), 0);
        // Reduced until the module returns its weight: the computation is gone.
        let hollow = format!(
            "{head}class Norm(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n        self.weight = torch.ones(dim)\n    def forward(self, x):\n        weight = self.weight\n        return weight\nx = torch.randn(2)\nfast = Norm(1)(x)\nref = F.rms_norm(x, (2,))\nassert torch.allclose(ref, fast)\n"
        );
        assert_eq!(count(&hollow), 1);
        // A function that ignores its argument, called through a name bound once.
        assert_eq!(
            count(&format!(
                "{head}def fused(x):\n    y = torch.ones(2)\n    return y\nx = torch.randn(2)\nassert torch.allclose(F.relu(x), fused(x))\n"
            )),
            1
        );
        // An input stored on the instance and read back counts as read; so does a callee
        // scrub cannot see (inherited).
        assert_eq!(
            count(&format!(
                "{head}class M(nn.Module):\n    def forward(self, x):\n        self.seen = x * 2\n        return self.seen\nx = torch.randn(2)\nassert torch.allclose(F.relu(x), M()(x))\n"
            )),
            0
        );
        assert_eq!(
            count(&format!(
                "{head}class M(nn.Linear):\n    pass\nx = torch.randn(2)\nassert torch.allclose(F.relu(x), M(2, 2)(x))\n"
            )),
            0
        );
        // A name bound twice to the same class, once through itself.
        assert_eq!(
            count(&format!(
                "{head}class M(nn.Module):\n    def forward(self, x):\n        return torch.zeros(2)\nm = M()\nm = m.double()\nx = torch.randn(2)\nassert torch.allclose(F.relu(x), m(x))\n"
            )),
            1
        );
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
        assert_eq!(control("x = 1\nassert x == 2\n"), None);
    }

    #[test]
    fn two_computations_compared_are_checked_against_the_first_computed_twice() {
        assert_eq!(
            control("import torch\nassert torch.allclose(torch.randn(1), torch.randn(1))\n"),
            Some((
                Suspect::Repeat,
                "import torch\nassert torch.allclose(torch.randn(1), (torch.randn(1)))\n".into()
            ))
        );
        let unpacked = "import torch\ny1, _ = att(x, need_weights=False)\ny2, w = att(x)\nassert torch.allclose(y1, y2)\n";
        assert_eq!(
            control(unpacked).map(|(_, text)| text),
            Some(unpacked.replace(
                "allclose(y1, y2)",
                "allclose(y1, ((att(x, need_weights=False))[0]))"
            ))
        );
        // A side of no known value would be compared with itself.
        assert_eq!(
            control("import torch\ndef f(a, b):\n    assert torch.equal(a, b)\n"),
            None
        );
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
