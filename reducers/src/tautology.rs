//! Checks that check nothing: an `assert` whose test reads nothing the script computes, and a
//! `raise` that no such test guards.
//!
//! A failing `assert total == expected` is a repro of a wrong computation only while the test
//! reads that computation. Once a rewrite has put constants in its place (`assert 0`,
//! `assert 18830 == 18831`, `assert x == 3` with `x = 2` the only binding of `x`) the assert
//! fails for any program: it is a tautology, not a reduction. So is an assert whose message
//! shows the computation while its test no longer reads it (`assert Fraction(), f"got
//! {total}"`: a call of a library class reads nothing computed either, but is not judged a
//! constant, since a library's own computation may be the bug). The loop refuses every candidate
//! that has more such asserts than the script the reduction started from, whatever the
//! signature; values may still be put into the statements before the check.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::python::{Expr, Script, Stmt, all_bodies, child_bodies, exprs_of, is_literal, span};
use crate::scopes::Scopes;

/// How many `assert` statements of `script`, and calls of torch's own asserts (see
/// [`torch_checks`]), check nothing: those that test only constants
/// (literals, names whose every binding assigns a constant or defines a function or class or
/// imports a module (and builtins), calls of functions that return only constants, and
/// attributes, operators, comparisons, subscripts and displays of those), and those whose
/// message shows computed names of which the test reads none (`assert Fraction(), f"got
/// {total}"`: the message shows the computation, the test no longer checks it).
pub fn constant_asserts(script: &Script) -> usize {
    let mut asserts: Vec<(&Expr, Option<&Expr>)> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Assert(a) => Some((&*a.test, a.msg.as_deref())),
            _ => None,
        })
        .collect();
    asserts.extend(torch_checks(script));
    if asserts.is_empty() {
        return 0;
    }
    let constants = constants(script);
    asserts
        .into_iter()
        .filter(|(test, msg)| {
            is_constant(test, &constants)
                || msg.is_some_and(|msg| {
                    let shown = computed_names(msg, &constants);
                    !shown.is_empty() && computed_names(test, &constants).is_disjoint(&shown)
                })
        })
        .count()
}

/// The test and message of each of torch's own asserts (`torch._check(x.numel() > 0, lambda:
/// "…")`, `torch._assert`): an `assert` by another name, whose constant test
/// (`torch._check(0, …)`) checks nothing either.
fn torch_checks(script: &Script) -> Vec<(&Expr, Option<&Expr>)> {
    const CHECKS: [&str; 6] = [
        "torch._check",
        "torch._check_index",
        "torch._check_value",
        "torch._check_type",
        "torch._check_not_implemented",
        "torch._assert",
    ];
    // Run for every candidate: most scripts name none, and the text says so at once.
    let text = script.text();
    if !text.contains("_check") && !text.contains("_assert") {
        return Vec::new();
    }
    let imports = crate::torch::torch_imports(script);
    if imports.is_empty() {
        return Vec::new();
    }
    crate::python::all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| {
            let Expr::Call(call) = expr else { return None };
            let path = crate::torch::torch_path(&imports, &call.func)?;
            let [test, rest @ ..] = call.arguments.args.as_ref() else {
                return None;
            };
            CHECKS
                .contains(&path.as_str())
                .then_some((test, rest.first()))
        })
        .collect()
}

/// How many checks of `script` check nothing: asserts on constants (see [`constant_asserts`]),
/// asserts that expect an instance of a class nothing else names (see
/// [`unmet_expectations`]), raises that no check guards (see [`unguarded_raises`]), calls of values that cannot be
/// called (see [`uncallable_calls`]) and divisions by zero (see
/// [`crate::zeros::zero_divisions`]).
pub fn empty_checks(script: &Script) -> usize {
    constant_asserts(script)
        + unmet_expectations(script)
        + unguarded_raises(script)
        + uncallable_calls(script)
        + crate::zeros::zero_divisions(script)
}

/// How many `assert`s expect a value of a class the script defines and names nowhere else
/// (`assert type(v) is DisplayName`, `assert isinstance(v, DisplayName)`), or of a literal
/// (`assert type(v) is 0`): no code builds one or hands the class to a library that could, so
/// the check fails for any program. Where
/// another line named it (`Annotated[str, DisplayName("A")]`), the value the check reads
/// could be one, and the failure says it is not.
pub fn unmet_expectations(script: &Script) -> usize {
    let text = script.text();
    if !text.contains("isinstance") && !text.contains(" is ") && !text.contains("type(") {
        return 0;
    }
    let classes: HashSet<&str> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::ClassDef(c) => Some(c.name.as_str()),
            _ => None,
        })
        .collect();
    let mut reads: HashMap<&str, usize> = HashMap::new();
    for expr in crate::python::all_exprs(script.body()) {
        if let Expr::Name(n) = expr {
            *reads.entry(n.id.as_str()).or_default() += 1;
        }
    }
    let unnamed = |e: &Expr| match e {
        Expr::Name(n) => classes.contains(n.id.as_str()) && reads.get(n.id.as_str()) == Some(&1),
        _ => false,
    };
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter(|s| match s {
            Stmt::Assert(a) => expected_class(&a.test).is_some_and(|c| unnamed(c) || is_literal(c)),
            _ => false,
        })
        .count()
}

/// The class an assert's test expects a value to be: `C` of `type(v) is C`, `type(v) == C`,
/// `isinstance(v, C)`, under any `not`.
fn expected_class(test: &Expr) -> Option<&Expr> {
    let builtin = |e: &Expr, name: &str| matches!(e, Expr::Name(n) if n.id.as_str() == name);
    match test {
        Expr::UnaryOp(u) => expected_class(&u.operand),
        Expr::Call(c) if builtin(&c.func, "isinstance") => c.arguments.args.get(1),
        Expr::Compare(c) => {
            let [right] = &c.comparators[..] else {
                return None;
            };
            let is_type = |e: &Expr| matches!(e, Expr::Call(c) if builtin(&c.func, "type"));
            match (is_type(&c.left), is_type(right)) {
                (true, false) => Some(right),
                (false, true) => Some(&*c.left),
                _ => None,
            }
        }
        _ => None,
    }
}

/// How many calls of `script` call a constant that is no function: a literal (`None(1.0)`,
/// `"m"()`), a display, an operator over constants, a name every binding of which assigns
/// such a value, or a call of a function that returns only such values (or nothing). Each
/// fails with `TypeError: '…' object is not callable` for any program (decorators count: each
/// is called with what it decorates), as `assert 0` fails:
/// `convert = get_converter(unit); convert(value)` shows a lookup that missed, `None(1.0)`
/// shows nothing.
pub fn uncallable_calls(script: &Script) -> usize {
    let decorators = all_bodies(script.body())
        .into_iter()
        .flatten()
        .flat_map(|s| match s {
            Stmt::FunctionDef(f) => &f.decorator_list[..],
            Stmt::ClassDef(c) => &c.decorator_list[..],
            _ => &[],
        })
        .map(|d| &d.expression);
    let calls: Vec<&Expr> = crate::python::all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(c) => Some(&*c.func),
            _ => None,
        })
        .chain(decorators)
        .collect();
    if calls.is_empty() {
        return 0;
    }
    let constants = constants(script);
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let scopes = Scopes::of(script.body());
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for stmt in &stmts {
        if let Stmt::FunctionDef(f) = stmt {
            *defined.entry(f.name.as_str()).or_default() += 1;
        }
    }
    let variables: HashMap<Range<usize>, Variable> = scopes
        .occurrences
        .iter()
        .map(|o| (o.range.clone(), (o.name, scopes.resolve_occurrence(o))))
        .collect();
    let mut known = Uncallable {
        constants: &constants,
        variables: &variables,
        names: HashSet::new(),
        functions: HashSet::new(),
        empty_dicts: empty_dicts(script, &stmts, &scopes),
    };
    // Rounds until nothing changes: a name bound to another such name or to a call of such
    // a function, a function returning such a name.
    loop {
        let names = only_bound_to(&stmts, &scopes, |v| known.holds(v));
        let functions: HashSet<&str> = stmts
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::FunctionDef(f)
                    if defined[f.name.as_str()] == 1
                        && !f.is_async
                        && returns_only(&f.body, &|v| known.holds(v)) =>
                {
                    Some(f.name.as_str())
                }
                _ => None,
            })
            .collect();
        if names == known.names && functions == known.functions {
            break;
        }
        known.names = names;
        known.functions = functions;
    }
    calls.into_iter().filter(|f| known.holds(f)).count()
}

/// What holds a constant that is no function, in one script (see [`uncallable_calls`]).
struct Uncallable<'a> {
    constants: &'a Constants<'a>,
    /// The variable each name occurrence is of.
    variables: &'a HashMap<Range<usize>, Variable<'a>>,
    /// Variables every binding of which assigns such a constant.
    names: HashSet<Variable<'a>>,
    /// Functions defined once whose every `return` gives such a constant, or that return
    /// nothing.
    functions: HashSet<&'a str>,
    /// Variables bound only to `{}` and only read by `.get(…)`.
    empty_dicts: HashSet<Variable<'a>>,
}

/// A name and the scope it is bound in (`None`: the module).
type Variable<'a> = (&'a str, Option<usize>);

impl Uncallable<'_> {
    /// Whether `expr` is a constant that is no function: a literal, a display, an operator
    /// over constants, such a name, a call of such a function, or a lookup in an empty dict (`{}.get(key)`).
    fn holds(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Name(n) => self
                .variables
                .get(&span(n))
                .is_some_and(|v| self.names.contains(v)),
            Expr::Call(c) => match &*c.func {
                Expr::Name(f) => self.functions.contains(f.id.as_str()),
                Expr::Attribute(a) if a.attr.as_str() == "get" => {
                    let empty = match &*a.value {
                        Expr::Dict(d) => d.is_empty(),
                        Expr::Name(n) => self
                            .variables
                            .get(&span(n))
                            .is_some_and(|v| self.empty_dicts.contains(v)),
                        _ => false,
                    };
                    let default = c.arguments.args.get(1);
                    empty
                        && c.arguments.keywords.is_empty()
                        && default.is_none_or(|d| self.holds(d))
                }
                _ => false,
            },
            Expr::Attribute(_) | Expr::Subscript(_) | Expr::If(_) | Expr::BoolOp(_) => false,
            e => is_constant(e, self.constants),
        }
    }
}

/// The variables bound at least once, and only by single-target assignments (annotated or
/// not) whose value `holds`.
fn only_bound_to<'a>(
    stmts: &[&Stmt],
    scopes: &Scopes<'a>,
    holds: impl Fn(&Expr) -> bool,
) -> HashSet<Variable<'a>> {
    let targets: HashSet<Range<usize>> = stmts
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::Assign(a) => match a.targets.as_slice() {
                [Expr::Name(target)] if holds(&a.value) => Some(span(target)),
                _ => None,
            },
            Stmt::AnnAssign(a) => match (&*a.target, a.value.as_deref()) {
                (Expr::Name(target), Some(value)) if holds(value) => Some(span(target)),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut bound: HashMap<Variable, bool> = HashMap::new();
    for o in scopes.occurrences.iter().filter(|o| o.binds) {
        let variable = (o.name, scopes.resolve_occurrence(o));
        *bound.entry(variable).or_insert(true) &= targets.contains(&o.range);
    }
    bound
        .into_iter()
        .filter(|(_, all)| *all)
        .map(|(v, _)| v)
        .collect()
}

/// The variables bound only to `{}` whose every read is `NAME.get(…)` (or in a function
/// nothing calls): nothing can fill them.
fn empty_dicts<'a>(script: &Script, stmts: &[&Stmt], scopes: &Scopes<'a>) -> HashSet<Variable<'a>> {
    let gets: HashSet<Range<usize>> = crate::python::all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(c) => match &*c.func {
                Expr::Attribute(a) if a.attr.as_str() == "get" => match &*a.value {
                    Expr::Name(n) => Some(span(n)),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut variables = only_bound_to(
        stmts,
        scopes,
        |v| matches!(v, Expr::Dict(d) if d.is_empty()),
    );
    let dead = dead_functions(stmts, scopes);
    for o in scopes.occurrences.iter().filter(|o| !o.binds) {
        let in_dead = dead.iter().any(|d| scopes.is_within(o.scope, Some(*d)));
        if !gets.contains(&o.range) && !in_dead {
            variables.remove(&(o.name, scopes.resolve_occurrence(o)));
        }
    }
    variables
}

/// The scopes of functions (not methods) whose name nothing reads: their code never runs.
fn dead_functions(stmts: &[&Stmt], scopes: &Scopes) -> Vec<usize> {
    let read: HashSet<&str> = scopes
        .occurrences
        .iter()
        .filter(|o| !o.binds)
        .map(|o| o.name)
        .collect();
    stmts
        .iter()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(f) if !read.contains(f.name.as_str()) => {
                scopes.scope_at(&span(*stmt))
            }
            _ => None,
        })
        .filter(|id| {
            let parent = scopes.scopes[*id].parent;
            parent.is_none_or(|p| scopes.scopes[p].kind != crate::scopes::ScopeKind::Class)
        })
        .collect()
}

/// How many `raise` statements of an exception (not a bare re-raise) no check guards: none
/// of the `if` or `while` tests above them reads a name the script computes, and they are not
/// in an `except` handler, a `match` case, or the `else` of a `try` whose body calls into a
/// library (which checks that the call raised). `if ours.isnan().any(): raise AssertionError(…)`
/// checks the computation; the `raise` alone, as a jump to it leaves it, fails for any
/// program, and so does one under `if object():` or `if torch.randn(1):`, which read nothing
/// the script computed.
pub fn unguarded_raises(script: &Script) -> usize {
    let own = Own {
        script,
        constants: constants(script),
        reaching: std::cell::OnceCell::new(),
    };
    raises_in(script.body(), &own, false)
}

/// What a script has of its own: its constants, and, worked out at the first `try … else`
/// that needs them, the names whose definitions reach an import (see [`reaching_imports`]).
struct Own<'a> {
    script: &'a Script,
    constants: Constants<'a>,
    reaching: std::cell::OnceCell<HashSet<&'a str>>,
}

impl Own<'_> {
    fn reaches_import(&self, name: &str) -> bool {
        self.reaching
            .get_or_init(|| reaching_imports(self.script))
            .contains(name)
    }
}

/// The names of `script` that are imports, or whose definitions read one, at any remove:
/// `class Bar(Foo, Protocol)` reaches `typing` through `Protocol`, `class Bar: pass` reaches
/// nothing. A call that reads none of them runs builtins and the script's plain code only.
fn reaching_imports(script: &Script) -> HashSet<&str> {
    fn names(exprs: Vec<&Expr>) -> Vec<&str> {
        exprs
            .into_iter()
            .filter_map(|e| e.as_name_expr().map(|n| n.id.as_str()))
            .collect()
    }
    let mut reached = crate::python::imported_names(script.body(), true);
    let mut reads: HashMap<&str, Vec<&str>> = HashMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let defined = match stmt {
            Stmt::ClassDef(c) => Some(c.name.as_str()),
            Stmt::FunctionDef(f) => Some(f.name.as_str()),
            _ => None,
        };
        if let Some(name) = defined {
            let read = names(crate::python::all_exprs(std::slice::from_ref(stmt)));
            reads.entry(name).or_default().extend(read);
        } else if let Some((targets, value)) = crate::python::assignment(stmt) {
            for n in targets.into_iter().filter_map(|t| t.as_name_expr()) {
                reads
                    .entry(n.id.as_str())
                    .or_default()
                    .extend(names(exprs_of(value)));
            }
        }
    }
    loop {
        let more: Vec<&str> = reads
            .iter()
            .filter(|(name, read)| {
                !reached.contains(*name) && read.iter().any(|r| reached.contains(r))
            })
            .map(|(name, _)| *name)
            .collect();
        if more.is_empty() {
            return reached;
        }
        reached.extend(more);
    }
}

fn raises_in(body: &[Stmt], own: &Own, guarded: bool) -> usize {
    let constants = &own.constants;
    let checks = |test: &Expr| guarded || !computed_names(test, constants).is_empty();
    body.iter()
        .map(|stmt| match stmt {
            Stmt::Raise(r) => usize::from(!guarded && r.exc.is_some()),
            Stmt::If(s) => {
                let tests = std::iter::once(&*s.test)
                    .chain(s.elif_else_clauses.iter().filter_map(|c| c.test.as_ref()));
                let guarded = tests.into_iter().any(checks);
                std::iter::once(&s.body[..])
                    .chain(s.elif_else_clauses.iter().map(|c| &c.body[..]))
                    .map(|b| raises_in(b, own, guarded))
                    .sum()
            }
            Stmt::While(w) => {
                raises_in(&w.body, own, checks(&w.test)) + raises_in(&w.orelse, own, guarded)
            }
            Stmt::Try(t) => {
                // `try: isinstance(x, P) except E: pass else: raise …` checks that a call
                // that reaches a library raised (`object()` alone, or `isinstance(x, P)` with
                // `P` a plain class of the script, checks nothing).
                let expects = !t.handlers.is_empty()
                    && !t.orelse.is_empty()
                    && crate::python::all_exprs(&t.body).iter().any(|e| {
                        matches!(e, Expr::Call(_))
                            && exprs_of(e).into_iter().any(
                                |e| matches!(e, Expr::Name(n) if own.reaches_import(n.id.as_str())),
                            )
                    });
                raises_in(&t.body, own, guarded)
                    + raises_in(&t.orelse, own, guarded || expects)
                    + raises_in(&t.finalbody, own, guarded)
            }
            Stmt::Match(_) => 0,
            other => child_bodies(other)
                .into_iter()
                .map(|b| raises_in(b, own, guarded))
                .sum(),
        })
        .sum()
}

/// The names `expr` reads that the script computes.
fn computed_names<'a>(expr: &'a Expr, constants: &Constants) -> HashSet<&'a str> {
    exprs_of(expr)
        .into_iter()
        .filter_map(|e| match e {
            Expr::Name(n) if constants.computed.contains(n.id.as_str()) => Some(n.id.as_str()),
            _ => None,
        })
        .collect()
}

/// What counts as a constant in one script: every name but those with a binding that is
/// not a constant (builtins, classes, functions and modules are fixed objects), and functions
/// defined once whose every `return` gives a constant (or that return nothing).
#[derive(Default)]
struct Constants<'a> {
    computed: HashSet<&'a str>,
    functions: HashSet<&'a str>,
}

/// Whether every part of `expr` is a literal, a constant name, a call of a constant
/// function, or an operator, a comparison, a conditional or a display over those.
fn is_constant(expr: &Expr, constants: &Constants) -> bool {
    match expr {
        Expr::Name(n) => !constants.computed.contains(n.id.as_str()),
        Expr::Attribute(a) => is_constant(&a.value, constants),
        Expr::Call(c) => {
            matches!(&*c.func, Expr::Name(f) if constants.functions.contains(f.id.as_str()))
                // The type of a constant is fixed: `type('A')` is `str` in any program.
                || matches!((&*c.func, &c.arguments.args[..]), (Expr::Name(f), [arg])
                    if f.id.as_str() == "type"
                        && c.arguments.keywords.is_empty()
                        && (is_literal(arg) || is_constant(arg, constants)))
        }
        Expr::UnaryOp(u) => is_constant(&u.operand, constants),
        Expr::Subscript(x) => is_constant(&x.value, constants) && is_constant(&x.slice, constants),
        Expr::BinOp(b) => is_constant(&b.left, constants) && is_constant(&b.right, constants),
        Expr::BoolOp(b) => b.values.iter().all(|v| is_constant(v, constants)),
        Expr::Compare(c) => {
            is_constant(&c.left, constants)
                && c.comparators.iter().all(|v| is_constant(v, constants))
        }
        Expr::If(i) => [&i.test, &i.body, &i.orelse]
            .iter()
            .all(|e| is_constant(e, constants)),
        Expr::Tuple(_) | Expr::List(_) | Expr::Set(_) | Expr::Dict(_) | Expr::FString(_) => {
            exprs_of(expr)
                .into_iter()
                .skip(1)
                .all(|e| is_constant(e, constants) || is_literal(e) || is_part(e))
        }
        e => is_literal(e),
    }
}

/// Whether `e` is a display or an operator, whose parts `is_constant` judges one by one.
fn is_part(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Tuple(_)
            | Expr::List(_)
            | Expr::Set(_)
            | Expr::Dict(_)
            | Expr::UnaryOp(_)
            | Expr::BinOp(_)
            | Expr::BoolOp(_)
            | Expr::Compare(_)
            | Expr::If(_)
    )
}

/// The constant names and functions of the script; a function's constancy is settled first,
/// then names, each as far as the other allows.
fn constants(script: &Script) -> Constants<'_> {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let mut constants = Constants::default();
    let mut defined: HashMap<&str, usize> = HashMap::new();
    for stmt in &stmts {
        if let Stmt::FunctionDef(f) = stmt {
            *defined.entry(f.name.as_str()).or_default() += 1;
        }
    }
    let scopes = Scopes::of(script.body());
    // Rounds until nothing changes: a name bound to a constant function's call or to another
    // constant name, a function returning a constant name.
    loop {
        let known = (constants.computed.len(), constants.functions.len());
        for stmt in &stmts {
            let Stmt::FunctionDef(f) = stmt else { continue };
            if defined[f.name.as_str()] == 1
                && !f.is_async
                && returns_constants(&f.body, &constants)
            {
                constants.functions.insert(f.name.as_str());
            }
        }
        // A function, a class or a module is one fixed object, not something computed.
        let mut constant_targets: HashSet<Range<usize>> = HashSet::new();
        let mut imports: Vec<Range<usize>> = Vec::new();
        for stmt in &stmts {
            match stmt {
                Stmt::Assign(a) => {
                    if let [Expr::Name(target)] = a.targets.as_slice()
                        && is_constant(&a.value, &constants)
                    {
                        constant_targets.insert(span(target));
                    }
                }
                Stmt::FunctionDef(f) => {
                    constant_targets.insert(span(&f.name));
                }
                Stmt::ClassDef(c) => {
                    constant_targets.insert(span(&c.name));
                }
                Stmt::Import(_) | Stmt::ImportFrom(_) => imports.push(span(*stmt)),
                _ => {}
            }
        }
        let mut computed: HashSet<&str> = HashSet::new();
        for occurrence in scopes.occurrences.iter().filter(|o| o.binds) {
            let in_import = imports
                .iter()
                .any(|i| i.start <= occurrence.range.start && occurrence.range.end <= i.end);
            if !in_import && !constant_targets.contains(&occurrence.range) {
                computed.insert(occurrence.name);
            }
        }
        constants.computed = computed;
        if (constants.computed.len(), constants.functions.len()) == known {
            break;
        }
    }
    constants
}

/// Whether every `return` of a function body (not of functions nested in it) gives a
/// constant, and it never yields.
fn returns_constants(body: &[Stmt], constants: &Constants) -> bool {
    returns_only(body, &|v| is_constant(v, constants))
}

/// Whether every `return` of a function body (not of functions nested in it) gives nothing
/// or a value `ok` accepts, and it never yields.
fn returns_only(body: &[Stmt], ok: &dyn Fn(&Expr) -> bool) -> bool {
    body.iter().all(|stmt| match stmt {
        Stmt::Return(r) => r.value.as_deref().is_none_or(ok),
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => true,
        Stmt::Expr(e) => !matches!(&*e.value, Expr::Yield(_) | Expr::YieldFrom(_)),
        other => crate::python::child_bodies(other)
            .into_iter()
            .all(|inner| returns_only(inner, ok)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn count(text: &str) -> usize {
        constant_asserts(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    fn raises(text: &str) -> usize {
        unguarded_raises(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_raise_counts_unless_a_test_of_something_computed_guards_it() {
        let guarded = "y = f()\nif y.isnan().any():\n    raise AssertionError('nan')\n";
        assert_eq!(raises(guarded), 0);
        assert_eq!(raises("y = f()\nraise AssertionError('nan')\n"), 1);
        assert_eq!(raises("if 1 < 2:\n    raise ValueError('x')\n"), 1);
        assert_eq!(raises("if object():\n    raise ValueError('x')\n"), 1);
        assert_eq!(
            raises("y = f()\nif y:\n    pass\nelse:\n    raise ValueError\n"),
            0
        );
        assert_eq!(raises("q = f()\nwhile q.pop():\n    raise ValueError\n"), 0);
        assert_eq!(
            raises("try:\n    f()\nexcept KeyError:\n    raise ValueError\n"),
            0
        );
        // In the `else` of a `try` that calls something, it checks that the call raised.
        let expected = "from typing import Protocol\nclass P(Protocol):\n    pass\ntry:\n    isinstance(object(), P)\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError('no TypeError')\n";
        assert_eq!(raises(expected), 0);
        assert_eq!(
            raises(
                "try:\n    pass\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError\n"
            ),
            1
        );
        // A bare `raise` re-raises what is being handled.
        assert_eq!(raises("def g():\n    raise\n"), 0);
        assert_eq!(raises("def g():\n    raise NotImplementedError\n"), 1);
    }

    #[test]
    fn an_assert_that_expects_a_class_nothing_else_names_checks_nothing() {
        let count =
            |text: &str| unmet_expectations(&Script::parse(text, PythonVersion::PY311).unwrap());
        let named = "class D(str):\n    pass\nclass F:\n    a: Annotated[str, D('A')]\nm = hints(F)\nassert type(m) is D\n";
        assert_eq!(count(named), 0);
        let unnamed = "class D(str):\n    pass\nm = hints(G)\nassert type(m) is D\n";
        assert_eq!(count(unnamed), 1);
        assert_eq!(count("class D:\n    pass\nassert isinstance(m, D)\n"), 1);
        assert_eq!(
            count("class D:\n    pass\nassert not isinstance(m, D)\n"),
            1
        );
        assert_eq!(count("assert isinstance(m, int)\n"), 0);
        assert_eq!(count("assert type('A') is 0\n"), 1);
        let constant =
            |text: &str| constant_asserts(&Script::parse(text, PythonVersion::PY311).unwrap());
        assert_eq!(
            constant("class D:\n    pass\nm = 0\nassert type(m) is D\n"),
            1
        );
        assert_eq!(
            constant("class D:\n    pass\nm = f()\nassert type(m) is D\n"),
            0
        );
    }

    fn uncallable(text: &str) -> usize {
        uncallable_calls(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_torch_check_of_a_constant_checks_nothing() {
        let check = |test: &str| {
            count(&format!(
                "import torch\ndef f(x):\n    torch._check({test}, lambda: \"x must have elements\")\n"
            ))
        };
        assert_eq!(check("0"), 1);
        assert_eq!(check("False"), 1);
        assert_eq!(check("x.numel() > 0"), 0);
        assert_eq!(count("_check(0)\n"), 0, "not torch's");
    }

    #[test]
    fn a_call_of_a_constant_that_is_no_function_counts() {
        assert_eq!(uncallable("None(1.0)\n"), 1);
        assert_eq!(uncallable("'m'()\nx = (1 + 2)()\n"), 2);
        assert_eq!(uncallable("convert = None\nconvert(1.0)\n"), 1);
        assert_eq!(uncallable("a = None\nb = a\nb(1)\n"), 1);
        assert_eq!(
            uncallable("def get(u):\n    return None\nget('ft')(1.0)\n"),
            1
        );
        assert_eq!(uncallable("def get(u):\n    pass\nget('ft')(1.0)\n"), 1);
        // A decorator is called with what it decorates.
        let decorated = "def register(*units):\n    pass\n@register()\ndef m(v):\n    pass\n";
        assert_eq!(uncallable(decorated), 1);
        // A lookup in a dict nothing fills.
        assert_eq!(uncallable("{}.get('m')(1.0)\n"), 1);
        assert_eq!(uncallable("units = {}\nunits.get('m')(1.0)\n"), 1);
        assert_eq!(uncallable("units = {}\nf = units.get('m')\nf(1.0)\n"), 1);
        let lookup = "units = {}\ndef get(u):\n    return units.get(u)\nget('m')(1.0)\n";
        assert_eq!(uncallable(lookup), 1);
        // Another scope's binding of the same name is another variable.
        let shadowed = "units = {}\ndef add(f):\n    units = f\nunits.get('m')(1.0)\n";
        assert_eq!(uncallable(shadowed), 1);
        // A store that never runs fills nothing.
        let dead = "units = {}\ndef add(f):\n    units['m'] = f\nunits.get('m')(1.0)\n";
        assert_eq!(uncallable(dead), 1);
        assert_eq!(uncallable("units: dict = {}\nunits.get('m')(1.0)\n"), 1);
    }

    #[test]
    fn a_call_of_anything_computed_or_defined_does_not_count() {
        assert_eq!(uncallable("print(1)\nlen([])\n"), 0);
        assert_eq!(uncallable("def f():\n    pass\nf()\n"), 0);
        assert_eq!(uncallable("{'m': abs}.get('m')(1.0)\n"), 0);
        assert_eq!(
            uncallable("units = {}\nunits['m'] = abs\nunits.get('m')(1.0)\n"),
            0
        );
        assert_eq!(uncallable("{}.get('m', abs)(1.0)\n"), 0);
        let called = "units = {}\ndef add(f):\n    units['m'] = f\nadd(abs)\nunits.get('m')(1.0)\n";
        assert_eq!(uncallable(called), 0);
        let method = "units = {}\nclass R:\n    def add(self, f):\n        units['m'] = f\nR().add(abs)\nunits.get('m')(1.0)\n";
        assert_eq!(uncallable(method), 0);
        assert_eq!(
            uncallable("convert = None\nconvert = len\nconvert(1.0)\n"),
            0
        );
        assert_eq!(
            uncallable("def m(v):\n    return v\ndef get(u):\n    return m\nget('m')(1.0)\n"),
            0
        );
        assert_eq!(uncallable("import math\nmath.floor(1.5)\n"), 0);
        assert_eq!(uncallable("class C:\n    pass\nC()\n"), 0);
        assert_eq!(uncallable("def f(g=None):\n    g(1)\n"), 0);
    }

    #[test]
    fn asserts_on_literals_are_constant() {
        assert_eq!(count("assert 0, f\"expected {18831} cents\"\n"), 1);
        assert_eq!(count("assert 18830 == 18831\n"), 1);
        assert_eq!(count("assert not (1 < 2 and 'a')\n"), 1);
        assert_eq!(count("def f():\n    assert False\n"), 1);
    }

    #[test]
    fn names_bound_only_to_constants_are_constant() {
        assert_eq!(count("x = 2\nassert x == 3\n"), 1);
        assert_eq!(count("x = 2\nx = -4\nassert x == (3, 4)\n"), 1);
        assert_eq!(count("class Invoice:\n    pass\nassert 0 == Invoice\n"), 1);
        assert_eq!(count("import math\nassert math is None\n"), 1);
        assert_eq!(count("import math\nassert [math][0] is None\n"), 1);
        assert_eq!(count("d = {}\nassert 0 == d.items\n"), 1);
    }

    #[test]
    fn calls_of_functions_that_return_only_constants_are_constant() {
        assert_eq!(
            count("def total():\n    pass\ngot = total()\nassert got\n"),
            1
        );
        assert_eq!(
            count(
                "def total(xs):\n    if xs:\n        return 2\n    return 3\nassert total([1]) == 4\n"
            ),
            1
        );
        assert_eq!(
            count("def total(xs):\n    return sum(xs)\nassert total([1]) == 4\n"),
            0
        );
        assert_eq!(count("def total():\n    yield 1\nassert total()\n"), 0);
    }

    #[test]
    fn an_assert_whose_test_reads_nothing_its_message_shows_checks_nothing() {
        assert_eq!(count("total = f()\nassert Fraction(), f'got {total}'\n"), 1);
        assert_eq!(count("total = f()\nassert total == 3, f'got {total}'\n"), 0);
        assert_eq!(count("total = f()\nassert total, 'mismatch'\n"), 0);
        assert_eq!(count("a = f()\nb = g(a)\nassert a == 1, f'{a} {b}'\n"), 0);
    }

    #[test]
    fn asserts_that_read_a_computation_are_checks() {
        assert_eq!(count("assert total(items) == 18831\n"), 0);
        assert_eq!(count("x = 2\nx += 1\nassert x == 3\n"), 0);
        assert_eq!(count("x = round(2.5)\nassert x == 3\n"), 0);
        assert_eq!(count("for x in range(3):\n    pass\nassert x == 3\n"), 0);
        assert_eq!(count("def f(x=2):\n    assert x == 3\n"), 0);
        assert_eq!(count("import torch\nassert torch.allclose(a, b)\n"), 0);
        assert_eq!(count("d = load()\nassert d['k'] == 1\n"), 0);
        assert_eq!(count("x = 1\n"), 0);
    }
}
