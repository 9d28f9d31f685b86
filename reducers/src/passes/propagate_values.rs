//! Replace names, attributes and table lookups by the values they stand for.
//!
//! ## What it removes
//! - A variable bound once, by `NAME = value` at module level or in a function (the same name
//!   in another function is another variable): every use becomes the value (in parentheses when it is not atomic) and the
//!   assignment goes. One candidate per name, the most used first. A value that calls
//!   something or builds a list, dict or set only goes to a single use that runs once, in
//!   the same function and outside any loop the assignment is not in.
//! - `self.attr = value` in `__init__`, when the attribute is assigned nowhere else and the
//!   value is a literal, a module-level name bound once, a tuple of them, or `C()`, an
//!   instance of a plain config class (a module-level class bound once, undecorated, with no
//!   base but `object` and no `__init__`, `__new__`, `__getattr__` or `__getattribute__`):
//!   `self.attr` in the methods of the class becomes the value, and the assignment goes when
//!   nothing else names the attribute.
//! - `attr = constant` (a literal, a module-level name bound once, or a tuple of them) in the
//!   body of a module-level class `C`, when no code sets `.attr`: `C.attr` becomes the
//!   constant, and so does `C().attr` when `C` is a plain config class as above; the
//!   assignment goes when nothing else reads it.
//! - `d = {…}` directly followed by `d[k] = v`: the entry goes into the display.
//! - `NAME[key]` with a string or integer literal key, when `NAME = {...}` or `[...]` is a
//!   module-level literal bound once that is only ever read by subscripts, `in`, `len` and
//!   loops: the lookup becomes the entry. One candidate per lookup.
//! - `{…}[key]` and `[…][i]`, a display looked up by a literal key in place (as propagating
//!   a table leaves it): the lookup becomes the entry.
//!
//! ## Example
//! ```python
//! key = "calibration"              # before
//! table[key]
//!
//! table["calibration"]             # after
//! ```
//!
//! A config object that bind_arguments moved into a module's `__init__` reaches the code that
//! reads it in two steps:
//! ```python
//! class ExportConfig:                          # before
//!     min_points = 2
//! class PointScorer(torch.nn.Module):
//!     def __init__(self):
//!         self.cfg = ExportConfig()
//!     def forward(self, points):
//!         if points.shape[0] > self.cfg.min_points: ...
//!
//!         if points.shape[0] > ExportConfig().min_points: ...   # after the first
//!         if points.shape[0] > 2: ...                           # after the second
//! ```
//!
//! ## When it cannot apply
//! A name bound more than once in any way (augmented assignment, `for`, `with`, `del`,
//! `global`, import, parameter), a dunder name, a class attribute; a use that refers to
//! another binding (a local of another function); a value that yields, awaits or binds a
//! name with `:=`, or that reads a name bound more than once or meaning something else
//! where it would be used; a use inside an f-string when the value holds quotes, braces or
//! other characters that an f-string's field cannot take. `C()` as a value, and `C().attr` as
//! a read, when `C` has an `__init__`, `__new__`, `__getattr__` or `__getattribute__`, a
//! decorator, a base other than `object` or a metaclass, or is bound more than once; a
//! class attribute that any code sets through an instance (`c.attr = 3`).

use super::helpers::{delete_stmt, first_param, short};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::is_atomic;
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, span};
use crate::scopes::{Occurrence, ScopeKind, Scopes};
use std::collections::{HashMap, HashSet};
use std::ops::Range;

pub struct PropagateValues;

impl Pass for PropagateValues {
    fn info(&self) -> PassInfo {
        PassInfo::new("propagate_values")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let facts = Facts::of(script);
        let mut names = propagate_names(&facts);
        // The most uses first; ties keep source order.
        names.sort_by_key(|(uses, _)| std::cmp::Reverse(*uses));
        let mut out: Vec<Candidate> = names.into_iter().map(|(_, c)| c).collect();
        out.extend(propagate_attributes(&facts));
        out.extend(propagate_class_constants(&facts));
        out.extend(fold_entries(script));
        out.extend(look_up_entries(&facts));
        out.extend(look_up_displays(script));
        out
    }
}

/// What the three kinds of candidates look up in the script.
struct Facts<'a> {
    script: &'a Script,
    scopes: Scopes<'a>,
    /// How many times each name is bound, in any way, anywhere.
    bindings: HashMap<&'a str, usize>,
    /// The names some function declares `global` or `nonlocal`.
    declared: HashSet<&'a str>,
    exprs: Vec<&'a Expr>,
    /// The ranges of the f-strings.
    f_strings: Vec<Range<usize>>,
}

impl<'a> Facts<'a> {
    fn of(script: &'a Script) -> Facts<'a> {
        let scopes = Scopes::of(script.body());
        let mut bindings = HashMap::new();
        for o in scopes.occurrences.iter().filter(|o| o.binds) {
            *bindings.entry(o.name).or_default() += 1;
        }
        let declared = all_bodies(script.body())
            .into_iter()
            .flatten()
            .flat_map(|s| match s {
                Stmt::Global(g) => g.names.iter().map(|n| n.as_str()).collect(),
                Stmt::Nonlocal(n) => n.names.iter().map(|n| n.as_str()).collect(),
                _ => Vec::new(),
            })
            .collect();
        let exprs = all_exprs(script.body());
        let f_strings = exprs
            .iter()
            .filter(|e| matches!(e, Expr::FString(_)))
            .map(|e| span(*e))
            .collect();
        Facts {
            script,
            scopes,
            bindings,
            declared,
            exprs,
            f_strings,
        }
    }

    /// Every `x.attr` of the script, read or written.
    fn attributes_named(&self, attr: &str) -> Vec<&'a ast::ExprAttribute> {
        self.exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Attribute(a) if a.attr.as_str() == attr => Some(a),
                _ => None,
            })
            .collect()
    }

    fn bound(&self, name: &str) -> usize {
        self.bindings.get(name).copied().unwrap_or(0)
    }

    /// The variable occurrences inside `range`.
    fn occurrences_in(&self, range: &Range<usize>) -> impl Iterator<Item = &Occurrence<'a>> {
        let range = range.clone();
        self.scopes
            .occurrences
            .iter()
            .filter(move |o| range.contains(&o.range.start))
    }

    /// Whether `value` means the same at each of `places` (scope and byte range) as where it
    /// is: no `yield`, `await` or `:=` in it, and every name it reads is bound at most once
    /// and refers to the same binding there.
    fn value_moves_to(&self, value: &Expr, places: &[(Option<usize>, Range<usize>)]) -> bool {
        let range = span(value);
        let forbidden = crate::python::exprs_of(value).iter().any(|e| {
            matches!(
                e,
                Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) | Expr::Named(_)
            )
        });
        if forbidden {
            return false;
        }
        let text = self.script.slice(value);
        let fits_f_string = !text.contains(['\'', '"', '\\', '\n', '{', '}', '#', ':', '!']);
        if !fits_f_string
            && places
                .iter()
                .any(|(_, at)| self.f_strings.iter().any(|f| f.contains(&at.start)))
        {
            return false;
        }
        self.occurrences_in(&range).filter(|o| !o.binds).all(|o| {
            let here = self.scopes.resolve_occurrence(o);
            // A name bound inside the value itself (a comprehension's) moves with it.
            if here.is_some_and(|s| range.contains(&self.scopes.scopes[s].range.start)) {
                return true;
            }
            // Bound once where it is read (a parameter of the same name as a module-level
            // variable is another variable), and read there at each place.
            let bindings_here = self
                .scopes
                .occurrences
                .iter()
                .filter(|b| {
                    b.binds && b.name == o.name && self.scopes.resolve_occurrence(b) == here
                })
                .count();
            bindings_here <= 1
                && places
                    .iter()
                    .all(|(scope, _)| self.scopes.resolve(o.name, *scope) == here)
        })
    }

    /// The text that stands for `value` at `at`: in parentheses unless it is atomic, on one
    /// line where it can be (a value written over lines keeps no continuation lines indented
    /// for the statement it came from).
    fn replacement(&self, value: &Expr, at: &Range<usize>) -> String {
        let text = self.script.text();
        let slice = self.script.slice(value);
        let joined = slice
            .contains('\n')
            .then(|| self.script.one_line_expr(value))
            .flatten();
        let inner = joined.as_deref().unwrap_or(slice);
        let concatenated = match value {
            Expr::StringLiteral(s) => s.value.is_implicit_concatenated(),
            Expr::BytesLiteral(b) => b.value.is_implicit_concatenated(),
            Expr::FString(f) => f.value.is_implicit_concatenated(),
            _ => false,
        };
        // `1.real` reads as the number `1.` and a name.
        let before_dot = matches!(value, Expr::NumberLiteral(_)) && text[at.end..].starts_with('.');
        if is_atomic(value) && !concatenated && !before_dot {
            inner.to_string()
        } else {
            format!("({inner})")
        }
    }
}

/// `NAME = value` bound once: its uses become the value. Each candidate with its use count.
fn propagate_names(facts: &Facts) -> Vec<(usize, Candidate)> {
    let script = facts.script;
    let mut out = Vec::new();
    for body in all_bodies(script.body()) {
        let is_module = std::ptr::eq(body, script.body());
        for (i, stmt) in body.iter().enumerate() {
            for (target, value, removal) in bound_names(script, body, i, is_module) {
                out.extend(propagate_name(facts, stmt, target, value, removal));
            }
        }
    }
    out
}

/// The candidate that puts `value`, bound to `target` by `stmt`, in place of every use of the
/// variable and takes the binding out with `removal`; with the number of uses.
fn propagate_name(
    facts: &Facts,
    stmt: &Stmt,
    target: &ast::ExprName,
    value: &Expr,
    removal: Edit,
) -> Option<(usize, Candidate)> {
    let script = facts.script;
    let name = target.id.as_str();
    if facts.declared.contains(name) || (name.starts_with("__") && name.ends_with("__")) {
        return None;
    }
    let scope = facts.scopes.innermost_at(span(target).start);
    if scope.is_some_and(|s| facts.scopes.scopes[s].kind != ScopeKind::Function) {
        return None;
    }
    // The variable this assignment binds: the same name in other functions (a method's
    // `self` beside a module-level `self = obj`) is another one.
    let refers_here =
        |o: &&Occurrence| o.name == name && facts.scopes.resolve_occurrence(o) == scope;
    let bindings = facts.scopes.occurrences.iter().filter(refers_here);
    if bindings.filter(|o| o.binds).count() != 1 {
        return None;
    }
    let uses: Vec<&Occurrence> = facts
        .scopes
        .occurrences
        .iter()
        .filter(refers_here)
        .filter(|o| !o.binds)
        .collect();
    let all_refer_here = uses.iter().all(|u| {
        facts.scopes.resolve_occurrence(u) == scope && !span(stmt).contains(&u.range.start)
    });
    if uses.is_empty() || !all_refer_here {
        return None;
    }
    // A value that makes a new object or calls something is evaluated once, as before.
    let evaluated_once = is_pure(value)
        || (uses.len() == 1
            && uses[0].scope == scope
            && !in_loop_without(facts, &uses[0].range, &span(stmt)));
    if !evaluated_once {
        return None;
    }
    // A value written over several lines is written once: put in two places, it reads twice.
    if uses.len() > 1 && script.slice(value).contains('\n') {
        return None;
    }
    let places: Vec<_> = uses.iter().map(|u| (u.scope, u.range.clone())).collect();
    if !facts.value_moves_to(value, &places) {
        return None;
    }
    let mut edits: Vec<Edit> = uses
        .iter()
        .map(|u| Edit::replace(u.range.clone(), facts.replacement(value, &u.range)))
        .collect();
    edits.push(removal);
    let description = format!(
        "propagate `{}` at line {} into {} use{}",
        short(&format!("{} = {}", target.id, script.slice(value))),
        line_of(script.text(), span(stmt).start),
        uses.len(),
        if uses.len() == 1 { "" } else { "s" }
    );
    Some((uses.len(), Candidate::new(description, edits)))
}

/// The names that statement `i` of `body` binds to a value of their own, each with its value
/// and the edit that takes the binding out: `NAME = value` (the statement goes), and each
/// `a` of `a, b = x, y` (the statement becomes `b = y`).
fn bound_names<'a>(
    script: &Script,
    body: &'a [Stmt],
    i: usize,
    is_module: bool,
) -> Vec<(&'a ast::ExprName, &'a Expr, Edit)> {
    let Stmt::Assign(assign) = &body[i] else {
        return Vec::new();
    };
    match (&*assign.targets, &*assign.value) {
        ([Expr::Name(target)], value) => {
            vec![(target, value, delete_stmt(script, body, i, is_module))]
        }
        ([Expr::Tuple(names)], Expr::Tuple(values)) if names.elts.len() == values.elts.len() => {
            let plain = |e: &Expr| !matches!(e, Expr::Starred(_));
            if !names.elts.iter().all(|e| matches!(e, Expr::Name(_)))
                || !values.elts.iter().all(plain)
            {
                return Vec::new();
            }
            let n = names.elts.len();
            (0..n)
                .filter_map(|k| {
                    let Expr::Name(target) = &names.elts[k] else {
                        return None;
                    };
                    let rest = |elts: &[Expr]| {
                        let kept: Vec<&str> = (0..n)
                            .filter(|&j| j != k)
                            .map(|j| script.slice(&elts[j]))
                            .collect();
                        kept.join(", ")
                    };
                    let rewritten = format!("{} = {}", rest(&names.elts), rest(&values.elts));
                    Some((
                        target,
                        &values.elts[k],
                        Edit::replace(span(&body[i]), rewritten),
                    ))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// `self.attr = value` set once in `__init__`: `self.attr` in the class's methods becomes the
/// value.
fn propagate_attributes(facts: &Facts) -> Vec<Candidate> {
    let script = facts.script;
    let mut out = Vec::new();
    for stmt in script.body() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        let Some(class_scope) = facts.scopes.scope_at(&span(class)) else {
            continue;
        };
        let methods: Vec<(&ast::StmtFunctionDef, &str)> = class
            .body
            .iter()
            .filter_map(|s| match s {
                Stmt::FunctionDef(f) if is_instance_method(f) => Some((f, first_param(f)?)),
                _ => None,
            })
            .collect();
        let Some(&(init, init_self)) = methods.iter().find(|(f, _)| f.name.as_str() == "__init__")
        else {
            continue;
        };
        for (i, assign_stmt) in init.body.iter().enumerate() {
            let Stmt::Assign(assign) = assign_stmt else {
                continue;
            };
            let [Expr::Attribute(target)] = &*assign.targets else {
                continue;
            };
            if !matches!(&*target.value, Expr::Name(n) if n.id.as_str() == init_self) {
                continue;
            }
            let attr = target.attr.as_str();
            let value = &*assign.value;
            if !is_constant(facts, value) && !is_plain_instance(facts, value) {
                continue;
            }
            // Set nowhere else: no other store, `del` or augmented assignment of `.attr`,
            // and no class attribute of that name.
            let attributes = facts.attributes_named(attr);
            let stores = attributes
                .iter()
                .filter(|a| a.ctx != ast::ExprContext::Load)
                .count();
            let class_binds = facts
                .scopes
                .occurrences
                .iter()
                .any(|o| o.binds && o.name == attr && o.scope == Some(class_scope));
            if stores != 1 || class_binds {
                continue;
            }
            let mut reads = Vec::new();
            for (method, own_self) in &methods {
                let Some(scope) = facts.scopes.scope_at(&span(*method)) else {
                    continue;
                };
                // `self` rebound in the method is something else.
                let self_bound = facts
                    .scopes
                    .occurrences
                    .iter()
                    .filter(|o| o.binds && o.name == *own_self && o.scope == Some(scope))
                    .count();
                if self_bound != 1 {
                    continue;
                }
                for a in &attributes {
                    let r = span(*a);
                    let reads_self =
                        matches!(&*a.value, Expr::Name(n) if n.id.as_str() == *own_self);
                    let after = !std::ptr::eq(*method, init) || r.start > span(assign_stmt).end;
                    if a.ctx == ast::ExprContext::Load
                        && reads_self
                        && span(*method).contains(&r.start)
                        && after
                    {
                        let at = facts.scopes.innermost_at(r.start);
                        reads.push((at, r));
                    }
                }
            }
            if reads.is_empty() || !facts.value_moves_to(value, &reads) {
                continue;
            }
            let unused = reads.len() + 1 == attributes.len();
            out.push(into_reads(
                facts,
                short(script.slice(assign_stmt)),
                assign_stmt,
                value,
                &reads,
                unused.then(|| delete_stmt(script, &init.body, i, false)),
            ));
        }
    }
    out
}

/// `attr = constant` in the body of a module-level class `C`, never set anywhere else:
/// `C.attr` becomes the constant.
fn propagate_class_constants(facts: &Facts) -> Vec<Candidate> {
    let script = facts.script;
    let mut out = Vec::new();
    for stmt in script.body() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        let name = class.name.as_str();
        if facts.bound(name) != 1 {
            continue;
        }
        let Some(class_scope) = facts.scopes.scope_at(&span(class)) else {
            continue;
        };
        for (i, assign_stmt) in class.body.iter().enumerate() {
            let Stmt::Assign(assign) = assign_stmt else {
                continue;
            };
            let [Expr::Name(target)] = &*assign.targets else {
                continue;
            };
            let attr = target.id.as_str();
            let value = &*assign.value;
            if !is_constant(facts, value) || attr.starts_with("__") {
                continue;
            }
            let in_class = |o: &&Occurrence| o.name == attr && o.scope == Some(class_scope);
            let occurrences: Vec<&Occurrence> =
                facts.scopes.occurrences.iter().filter(in_class).collect();
            if occurrences.iter().filter(|o| o.binds).count() != 1 {
                continue;
            }
            let attributes = facts.attributes_named(attr);
            if attributes.iter().any(|a| a.ctx != ast::ExprContext::Load) {
                continue;
            }
            let plain = is_plain_class(facts, class);
            let of_class = |e: &Expr| match e {
                Expr::Name(n) => n.id.as_str() == name,
                // `C().attr` of a plain class reads the class attribute.
                Expr::Call(call) => {
                    plain && call.arguments.is_empty() && of_class_name(&call.func, name)
                }
                _ => false,
            };
            let reads: Vec<(Option<usize>, Range<usize>)> = attributes
                .iter()
                .filter(|a| of_class(&a.value))
                .map(|a| (facts.scopes.innermost_at(span(*a).start), span(*a)))
                .collect();
            if reads.is_empty() || !facts.value_moves_to(value, &reads) {
                continue;
            }
            let unused = reads.len() == attributes.len() && occurrences.len() == 1;
            out.push(into_reads(
                facts,
                format!("{name}.{attr} = {}", short(script.slice(value))),
                assign_stmt,
                value,
                &reads,
                unused.then(|| delete_stmt(script, &class.body, i, false)),
            ));
        }
    }
    out
}

/// The candidate that puts `value`, assigned by `assignment` (`what`, in words), in place of
/// the attribute `reads`, and deletes the assignment with `delete` when nothing else reads it.
fn into_reads(
    facts: &Facts,
    what: String,
    assignment: &Stmt,
    value: &Expr,
    reads: &[(Option<usize>, Range<usize>)],
    delete: Option<Edit>,
) -> Candidate {
    let mut edits: Vec<Edit> = reads
        .iter()
        .map(|(_, r)| Edit::replace(r.clone(), facts.replacement(value, r)))
        .collect();
    edits.extend(delete);
    let line = line_of(facts.script.text(), span(assignment).start);
    let n = reads.len();
    Candidate::new(
        format!(
            "propagate `{what}` at line {line} into {n} read{}",
            if n == 1 { "" } else { "s" }
        ),
        edits,
    )
}

/// `d = {…}` directly followed by `d[k] = v`: the entry goes into the display,
/// `d = {…, k: v}`.
fn fold_entries(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for body in all_bodies(script.body()) {
        for pair in body.windows(2) {
            let [Stmt::Assign(first), Stmt::Assign(second)] = pair else {
                continue;
            };
            let ([Expr::Name(name)], Expr::Dict(dict)) = (&*first.targets, &*first.value) else {
                continue;
            };
            let [Expr::Subscript(entry)] = &*second.targets else {
                continue;
            };
            if !matches!(entry.value.as_ref(), Expr::Name(n) if n.id == name.id) {
                continue;
            }
            // The key and value must not read the dict they go into.
            let reads_dict = |e: &Expr| {
                crate::python::exprs_of(e)
                    .iter()
                    .any(|x| matches!(x, Expr::Name(n) if n.id == name.id))
            };
            if reads_dict(&entry.slice) || reads_dict(&second.value) {
                continue;
            }
            // `**mapping` entries are left alone.
            let Some(mut items) = dict
                .items
                .iter()
                .map(|item| Some(&text[span(item.key.as_ref()?).start..span(&item.value).end]))
                .collect::<Option<Vec<&str>>>()
            else {
                continue;
            };
            let added = format!(
                "{}: {}",
                script.slice(&*entry.slice),
                script.slice(&*second.value)
            );
            items.push(&added);
            let folded = format!("{} = {{{}}}", name.id, items.join(", "));
            out.push(Candidate::new(
                format!(
                    "fold `{}` into the dict at line {}",
                    short(script.slice(&pair[1])),
                    line_of(text, span(&pair[0]).start)
                ),
                vec![Edit::replace(
                    span(&pair[0]).start..span(&pair[1]).end,
                    folded,
                )],
            ));
        }
    }
    out
}

/// `NAME[key]` of a module-level literal table that is never changed: the lookup becomes the
/// entry.
fn look_up_entries(facts: &Facts) -> Vec<Candidate> {
    let script = facts.script;
    let text = script.text();
    let mut out = Vec::new();
    for stmt in script.body() {
        let Stmt::Assign(assign) = stmt else {
            continue;
        };
        let [Expr::Name(target)] = &*assign.targets else {
            continue;
        };
        let name = target.id.as_str();
        let table = &*assign.value;
        if facts.bound(name) != 1 || !matches!(table, Expr::Dict(_) | Expr::List(_)) {
            continue;
        }
        let uses: Vec<&Occurrence> = facts
            .scopes
            .occurrences
            .iter()
            .filter(|o| o.name == name && !o.binds)
            .collect();
        if uses
            .iter()
            .any(|u| facts.scopes.resolve_occurrence(u).is_some())
        {
            continue;
        }
        let (lookups, readers) = readers_of(facts, name);
        if readers != uses.len() {
            continue;
        }
        for lookup in lookups {
            let Some(entry) = entry(table, &lookup.slice) else {
                continue;
            };
            let at = span(lookup);
            let place = (facts.scopes.innermost_at(at.start), at.clone());
            if !facts.value_moves_to(entry, &[place]) {
                continue;
            }
            out.push(Candidate::new(
                format!(
                    "replace `{}` by its entry `{}` at line {}",
                    short(script.slice(lookup)),
                    short(script.slice(entry)),
                    line_of(text, at.start)
                ),
                vec![Edit::replace(at.clone(), facts.replacement(entry, &at))],
            ));
        }
    }
    out
}

/// `{…}[key]` and `[…][i]`: the lookup of a display by a literal key becomes the entry.
fn look_up_displays(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        let Expr::Subscript(lookup) = expr else {
            continue;
        };
        if lookup.ctx != ast::ExprContext::Load {
            continue;
        }
        let Some(entry) = entry(&lookup.value, &lookup.slice) else {
            continue;
        };
        let at = span(expr);
        let value = script.operand(entry);
        out.push(Candidate::new(
            format!(
                "replace `{}` by its entry `{}` at line {}",
                short(script.slice(expr)),
                short(script.slice(entry)),
                line_of(text, at.start)
            ),
            vec![Edit::replace(at, value)],
        ));
    }
    out
}

/// The subscripts `name[...]` that read, and how many uses of `name` only read the table:
/// those subscripts, `in` tests, `len(name)` and loops over it.
fn readers_of<'a>(facts: &Facts<'a>, name: &str) -> (Vec<&'a ast::ExprSubscript>, usize) {
    let is_it = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
    let mut lookups = Vec::new();
    let mut others = 0;
    for expr in &facts.exprs {
        match expr {
            Expr::Subscript(s) if s.ctx == ast::ExprContext::Load && is_it(&s.value) => {
                lookups.push(s);
            }
            Expr::Compare(c) => {
                others += c
                    .ops
                    .iter()
                    .zip(&c.comparators)
                    .filter(|(op, e)| matches!(op, ast::CmpOp::In | ast::CmpOp::NotIn) && is_it(e))
                    .count();
            }
            Expr::Call(c)
                if matches!(&*c.func, Expr::Name(f) if f.id.as_str() == "len")
                    && c.arguments.keywords.is_empty()
                    && matches!(&*c.arguments.args, [a] if is_it(a)) =>
            {
                others += 1;
            }
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                others += generators.iter().filter(|g| is_it(&g.iter)).count();
            }
            _ => {}
        }
    }
    for body in all_bodies(facts.script.body()) {
        others += body
            .iter()
            .filter(|s| matches!(s, Stmt::For(f) if is_it(&f.iter)))
            .count();
    }
    let readers = lookups.len() + others;
    (lookups, readers)
}

/// The entry of a dict or list literal that a literal key selects.
fn entry<'a>(table: &'a Expr, key: &Expr) -> Option<&'a Expr> {
    match (table, key) {
        (Expr::Dict(dict), _) => {
            // Only tables whose keys are all strings or integers, so that equal means equal.
            let keys: Vec<Key> = dict
                .items
                .iter()
                .map(|item| key_of(item.key.as_ref()?))
                .collect::<Option<_>>()?;
            let wanted = key_of(key)?;
            let i = keys.iter().rposition(|k| *k == wanted)?;
            Some(&dict.items[i].value)
        }
        (Expr::List(list), Expr::NumberLiteral(n)) => {
            if list.elts.iter().any(|e| matches!(e, Expr::Starred(_))) {
                return None;
            }
            let ast::Number::Int(i) = &n.value else {
                return None;
            };
            list.elts.get(i.as_usize()?)
        }
        _ => None,
    }
}

#[derive(PartialEq)]
enum Key {
    Str(String),
    Int(i64),
}

fn key_of(expr: &Expr) -> Option<Key> {
    match expr {
        Expr::StringLiteral(s) => Some(Key::Str(s.value.to_str().to_string())),
        Expr::NumberLiteral(ast::ExprNumberLiteral {
            value: ast::Number::Int(i),
            ..
        }) => Some(Key::Int(i.as_i64()?)),
        _ => None,
    }
}

/// Whether evaluating `value` more than once, or later, gives equal values and does nothing
/// else: no call, no new mutable object.
fn is_pure(value: &Expr) -> bool {
    crate::python::exprs_of(value).iter().all(|e| {
        crate::python::is_literal(e)
            || matches!(
                e,
                Expr::Name(_)
                    | Expr::Attribute(_)
                    | Expr::Subscript(_)
                    | Expr::Slice(_)
                    | Expr::UnaryOp(_)
                    | Expr::BinOp(_)
                    | Expr::BoolOp(_)
                    | Expr::Compare(_)
                    | Expr::Tuple(_)
                    | Expr::If(_)
            )
    })
}

/// Whether a loop holds `at` but not `outside`: the code at `at` may run more than once.
fn in_loop_without(facts: &Facts, at: &Range<usize>, outside: &Range<usize>) -> bool {
    all_bodies(facts.script.body())
        .iter()
        .flat_map(|b| b.iter())
        .filter(|s| matches!(s, Stmt::For(_) | Stmt::While(_)))
        .any(|s| {
            let r = span(s);
            r.contains(&at.start) && !r.contains(&outside.start)
        })
}

/// A literal, a name bound once at module level, or a tuple of them.
fn is_constant(facts: &Facts, value: &Expr) -> bool {
    match value {
        Expr::Tuple(t) => t.elts.iter().all(|e| is_constant(facts, e)),
        Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => true,
        Expr::UnaryOp(u) => {
            matches!(u.op, ast::UnaryOp::USub | ast::UnaryOp::UAdd)
                && matches!(&*u.operand, Expr::NumberLiteral(_))
        }
        Expr::Name(n) => {
            let name = n.id.as_str();
            facts.bound(name) == 1
                && facts
                    .scopes
                    .occurrences
                    .iter()
                    .any(|o| o.binds && o.name == name && o.scope.is_none())
        }
        _ => false,
    }
}

/// Whether `expr` is the name `name`.
fn of_class_name(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Name(n) if n.id.as_str() == name)
}

/// `C()`, an instance of a plain module-level class (see [`is_plain_class`]).
fn is_plain_instance(facts: &Facts, value: &Expr) -> bool {
    let Expr::Call(call) = value else {
        return false;
    };
    let Expr::Name(callee) = &*call.func else {
        return false;
    };
    call.arguments.is_empty()
        && facts.script.body().iter().any(|s| {
            matches!(s, Stmt::ClassDef(c)
                if c.name.as_str() == callee.id.as_str() && is_plain_class(facts, c))
        })
}

/// Whether `class` is a plain module-level class whose instances read its class attributes:
/// bound once, undecorated, with no base but `object`, and no `__init__`, `__new__`,
/// `__getattr__` or `__getattribute__` of its own (a config class: `class Config: size = 2`).
fn is_plain_class(facts: &Facts, class: &ast::StmtClassDef) -> bool {
    let bases_plain = class
        .arguments
        .as_ref()
        .is_none_or(|a| a.keywords.is_empty() && a.args.iter().all(|b| of_class_name(b, "object")));
    let Some(scope) = facts.scopes.scope_at(&span(class)) else {
        return false;
    };
    let special = facts.scopes.occurrences.iter().any(|o| {
        o.binds
            && o.scope == Some(scope)
            && matches!(
                o.name,
                "__init__" | "__new__" | "__getattr__" | "__getattribute__"
            )
    });
    facts.bound(class.name.as_str()) == 1
        && class.decorator_list.is_empty()
        && bases_plain
        && !special
}

/// Whether `f` is called with its instance first: not a static or class method.
fn is_instance_method(f: &ast::StmtFunctionDef) -> bool {
    f.decorator_list.iter().all(|d| {
        !matches!(&d.expression, Expr::Name(n)
            if matches!(n.id.as_str(), "staticmethod" | "classmethod"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&PropagateValues, text)
    }

    #[test]
    fn a_value_over_several_lines_is_not_written_twice() {
        let text = "source = '''\n1 + 2\n'''\nassert f(source) == source\n";
        assert!(results(text).is_empty(), "{:?}", results(text));
        let once = "source = '''\n1 + 2\n'''\nassert f(source)\n";
        assert_eq!(results(once), ["assert f('''\n1 + 2\n''')\n"]);
    }

    #[test]
    fn a_name_bound_once_becomes_its_value_everywhere() {
        let text = "key = 'k' + s\nf(key)\ng(key.upper())\n";
        assert_eq!(results(text), ["f(('k' + s))\ng(('k' + s).upper())\n"]);
    }

    #[test]
    fn a_name_bound_twice_in_any_way_stays() {
        for text in [
            "x = 1\nx += 1\nf(x)\n",
            "x = 1\nfor x in y: pass\nf(x)\n",
            "x = 1\ndel x\n",
            "x = 1\ndef g():\n    global x\n    f(x)\n",
            "def g(x):\n    x = 1\n    f(x)\n",
        ] {
            assert!(results(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_module_level_name_is_apart_from_the_same_name_in_a_method() {
        let text = "class C:\n    def m(self):\n        return self\nself = c\nself.m()\n";
        assert_eq!(
            results(text),
            ["class C:\n    def m(self):\n        return self\nc.m()\n"]
        );
    }

    #[test]
    fn a_local_is_not_carried_into_another_function() {
        let text = "def g():\n    x = 1\n    f(x)\ndef h():\n    f(x)\n";
        assert_eq!(results(text), ["def g():\n    f(1)\ndef h():\n    f(x)\n"]);
    }

    #[test]
    fn a_value_that_reads_a_rebound_name_stays() {
        let text = "a = 1\nx = a\na = 2\nf(x)\n";
        assert!(results(text).is_empty());
    }

    #[test]
    fn a_parameter_named_like_a_module_variable_is_bound_once_where_it_is_read() {
        // `addmm` is a module-level name and `forward`'s parameter: in `forward`, the call
        // reads the parameter, bound once there, and may move to the `return`.
        let text = "class M:\n    def forward(self, addmm):\n        relu = g(addmm)\n        return relu\naddmm = h()\nM().forward(addmm)\n";
        assert!(
            results(text).contains(
                &"class M:\n    def forward(self, addmm):\n        return g(addmm)\naddmm = h()\nM().forward(addmm)\n"
                    .to_string()
            ),
            "{:?}",
            results(text)
        );
    }

    #[test]
    fn a_value_with_quotes_does_not_go_into_an_f_string() {
        assert!(results("k = 'a'\nf(f\"{k}\")\n").is_empty());
        assert_eq!(results("k = 1\nf(f\"{k}\")\n"), ["f(f\"{1}\")\n"]);
    }

    #[test]
    fn a_number_before_a_dot_is_parenthesized() {
        assert_eq!(results("n = 1\nn.real\n"), ["(1).real\n"]);
    }

    #[test]
    fn a_table_that_is_changed_is_not_looked_up() {
        // Only the folding of the change into the table is offered.
        assert_eq!(
            results("T = {'a': 1}\nT['b'] = 2\nf(T['a'])\n"),
            ["T = {'a': 1, 'b': 2}\nf(T['a'])\n"]
        );
        assert!(results("T = {'a': 1}\ng(T)\nf(T['a'])\n").is_empty());
        let texts = results("T = {True: 1}\nf(T[1])\n");
        assert_eq!(
            texts,
            ["f({True: 1}[1])\n"],
            "the only candidate is the name's"
        );
    }

    #[test]
    fn an_instance_of_a_plain_config_class_goes_to_the_reads_of_its_attribute() {
        let text = "class C:\n    n = 2\nclass M:\n    def __init__(self):\n        self.cfg = C()\n    def f(self):\n        return self.cfg.n\n";
        let texts = results(text);
        assert!(
            texts.contains(&"class C:\n    n = 2\nclass M:\n    def __init__(self):\n        pass\n    def f(self):\n        return C().n\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn an_instance_of_a_class_with_an_init_or_getattr_stays_on_self() {
        for special in ["__init__(self)", "__getattr__(self, k)"] {
            let text = format!(
                "class C:\n    def {special}:\n        pass\nclass M:\n    def __init__(self):\n        self.cfg = C()\n    def f(self):\n        return self.cfg\n"
            );
            assert!(
                results(&text).iter().all(|t| t.contains("self.cfg = C()")),
                "{text}"
            );
        }
    }

    #[test]
    fn a_class_attribute_read_through_an_instance_becomes_its_value() {
        assert_eq!(
            results("class C:\n    n = 2\nf(C().n, C.n)\n"),
            ["class C:\n    pass\nf(2, 2)\n"]
        );
        assert_eq!(
            results("class C:\n    n = (1, 2)\nf(C().n)\n"),
            ["class C:\n    pass\nf((1, 2))\n"]
        );
    }

    #[test]
    fn a_class_attribute_is_not_read_through_an_instance_that_may_differ() {
        // An instance attribute of that name, a class that makes its instances.
        let texts = results("class C:\n    n = 2\nc = C()\nc.n = 3\nf(C().n)\n");
        assert!(texts.iter().all(|t| t.contains("f(C().n)")), "{texts:?}");
        let texts = results(
            "class C:\n    n = 2\n    def __getattr__(self, k):\n        pass\nf(C().n, C.n)\n",
        );
        assert_eq!(
            texts,
            ["class C:\n    n = 2\n    def __getattr__(self, k):\n        pass\nf(C().n, 2)\n"]
        );
    }

    #[test]
    fn the_last_of_two_equal_keys_is_the_entry() {
        let texts = results("T = {'a': 1, 'a': 2}\nf(T['a'])\n");
        assert!(
            texts.contains(&"T = {'a': 1, 'a': 2}\nf(2)\n".to_string()),
            "{texts:?}"
        );
    }
}
