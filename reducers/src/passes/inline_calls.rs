//! Inline functions and methods called once, `main()` and its `__name__` guard included.
//!
//! ## What it removes
//! A module-level function, or a method of a module-level class, that is called exactly once
//! (its name occurs once in the whole script) is inlined at its call and its `def` is
//! deleted; one whose name occurs a few times is inlined at one call at a time (the first
//! four), and its `def` stays for the others. The call must be
//! - a statement of its own: `f(a, b=1)`, also as `sys.exit(f())` or `raise SystemExit(f())`;
//! - the whole right side of a simple assignment: `x = f(a)` or `x, y = f(a)`;
//! - the value of a `return` in another function: `return f(a)`;
//! - the context manager of a `with` statement, for a `@contextmanager` generator:
//!   `with repo.session() as conn: body` becomes the generator's body with its one
//!   `yield v` replaced by `conn = v` and the `with` body, so that its `try`/`finally`
//!   still closes the connection after the body.
//!
//! A function that only hands its parameters, in order, to another callable
//! (`def forward(a): return torch.ops.aten.relu(a)`) is that callable wherever its name is
//! read, called or passed (`torch.compile(forward)` → `torch.compile(torch.ops.aten.relu)`),
//! and its `def` goes.
//!
//! The call becomes assignments of the arguments to the parameters (positional ones in order,
//! keywords by name, defaults for the rest; `p = p` is left out), then the body re-indented
//! to the call. A trailing `return e` becomes `x = e` for an assignment, stays for a
//! `return`, and stays as the statement `e` for a call on its own unless `e` is a name or a
//! literal. A method's receiver is bound first, as in `self = cfg`. When the call is all
//! that a `__name__` guard holds, the guard goes too. (A guard on its own is replaced by its
//! body by unwrap_blocks, which runs first.)
//!
//! ## Example
//! ```python
//! def load(path, mode="r"):        # before
//!     return open(path, mode)
//! def main():
//!     f = load("data.csv")
//!     f.read()
//! if __name__ == "__main__":
//!     main()
//!
//! def main():                      # after the first candidate
//!     path = "data.csv"
//!     mode = "r"
//!     f = open(path, mode)
//!     f.read()
//! if __name__ == "__main__":
//!     main()
//! ```
//!
//! ## When it cannot apply
//! - The function: `async`, decorated (but by `contextmanager` for a `with`), a coroutine (`await`), a generator other than one
//!   whose one `yield e` is its last statement (that call hands back `[e]`), with a
//!   `return` other than its last statement, or with `global` or `nonlocal`. A method that
//!   uses `super` or `__class__`, or whose name is defined more than once in the script.
//! - The call: with `**kwargs` or more than one `*args` (one `*pair` is bound as
//!   `a, b = pair` to the positional parameters the other arguments leave), an argument the function cannot take, one that
//!   its `*args` or `**kwargs` would receive, or a required parameter left without one; a
//!   method's receiver that is not `self` in its own class nor a name assigned an instance
//!   of the class (`x = Config()`); a call sharing its line with other code; a call in a
//!   class body or in a function nested in another; `x, y = f()` when `f` returns nothing.
//! - The names: a parameter or local of the function that the scope of the call also uses,
//!   or a name the function reads that the calling function binds (both would now mean one
//!   variable); a parameter assigned before an argument that reads it; private `__names`
//!   moved in or out of a class.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::Range;

use super::helpers::{
    body_at_indent, body_at_indent_with, delete_stmts, first_param, match_arguments,
};
use crate::edit::{
    Candidate, Edit, apply_edits_within, deletion_range, ends_line, indent_at, line_end,
    line_start, lines_label, starts_line,
};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{
    Expr, Script, SourceOrderVisitor, Stmt, all_exprs, ast, child_bodies, is_atomic,
    referenced_names, source_order, span,
};
use crate::scopes::Scopes;

pub struct InlineCalls;

/// The most calls of one function inlined one at a time.
const MAX_SITES: usize = 4;

impl Pass for InlineCalls {
    /// Inlining may grow the script (a body moved before a statement, its parameters bound):
    /// it is kept when deletion then gets further.
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("inline_calls")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let names = referenced_names(script.body());
        let uses = |name: &str| names.iter().filter(|n| **n == name).count();
        let scopes = Scopes::of(script.body());
        let mut out = Vec::new();
        // A function called once is inlined and its `def` goes; one called a few times is
        // inlined at one call at a time, and keeps its `def` for the others.
        let mut inline_each = |stmt, def: &ast::StmtFunctionDef, class| {
            let n = uses(def.name.as_str());
            let target = Target {
                stmt,
                def,
                class,
                shared: n > 1,
            };
            if n > 0 {
                let sites = find_sites(script.body(), &target);
                for site in sites.iter().take(MAX_SITES).flatten() {
                    out.extend(inline(script, &scopes, &target, site));
                }
            }
            n
        };
        let mut expressions = Vec::new();
        for stmt in script.body() {
            match stmt {
                Stmt::FunctionDef(def) => {
                    expressions.extend(forwarding(script, &scopes, stmt, def));
                    // Both: `sys.exit(main())` loses its status when `main` is inlined as a
                    // statement, and keeps it when `main`'s one expression takes its place.
                    let uses = inline_each(stmt, def, None);
                    if uses == 1 {
                        expressions.extend(inline_expression(script, &scopes, stmt, def));
                    }
                }
                Stmt::ClassDef(class) => {
                    for stmt in &class.body {
                        let Stmt::FunctionDef(def) = stmt else {
                            continue;
                        };
                        if defined_once(script, def.name.as_str()) {
                            inline_each(stmt, def, Some(class));
                        }
                    }
                }
                _ => {}
            }
        }
        out.extend(expressions);
        // The two ways of inlining a function agree when its call stands alone.
        let mut seen = HashSet::new();
        out.retain(|c| seen.insert(c.apply(script.text())));
        out
    }
}

/// The candidate that replaces the one call of `def f(params): return e`, wherever it
/// stands in an expression, by `e` with the arguments in place of the parameters.
fn inline_expression(
    script: &Script,
    scopes: &Scopes,
    stmt: &Stmt,
    def: &ast::StmtFunctionDef,
) -> Option<Candidate> {
    let text = script.text();
    let value = plain_return(def)?;
    let params = &def.parameters;
    let name = def.name.as_str();
    let call = all_exprs(script.body()).into_iter().find_map(|e| match e {
        Expr::Call(c) if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == name) => {
            Some(c)
        }
        _ => None,
    })?;
    let own = scopes.scope_at(&span(def))?;
    let at_call = scopes.innermost_at(span(call).start);
    if span(def).contains(&span(call).start) {
        return None;
    }
    // Slots in parameter order, bound to the arguments or the defaults.
    let slots: Vec<&ast::ParameterWithDefault> = params
        .posonlyargs
        .iter()
        .chain(&params.args)
        .chain(&params.kwonlyargs)
        .collect();
    let positional = params.posonlyargs.len() + params.args.len();
    let names: Vec<&str> = slots.iter().map(|p| p.parameter.name.as_str()).collect();
    let given = match_arguments(&names, positional, &call.arguments)?;
    let values: Vec<&Expr> = slots
        .iter()
        .zip(given)
        .map(|(p, g)| g.or(p.default.as_deref()))
        .collect::<Option<_>>()?;

    // Every name `e` reads: a parameter, replaced, or a name that means the same at the call.
    let range = span(value);
    if scopes.scopes.iter().any(|s| range.contains(&s.range.start)) {
        return None;
    }
    let mut edits = Vec::new();
    for o in scopes
        .occurrences
        .iter()
        .filter(|o| range.contains(&o.range.start))
    {
        if scopes.resolve_occurrence(o) == Some(own) {
            let i = slots
                .iter()
                .position(|p| p.parameter.name.as_str() == o.name)?;
            let arg = values[i];
            let uses = scopes
                .occurrences
                .iter()
                .filter(|u| u.name == o.name && range.contains(&u.range.start))
                .count();
            if uses > 1 && !matches!(arg, Expr::Name(_)) && !crate::python::is_literal(arg) {
                return None;
            }
            edits.push(Edit::replace(o.range.clone(), script.operand(arg)));
        } else if scopes.resolve(o.name, at_call) != scopes.resolve_occurrence(o) {
            return None;
        }
    }
    let body = apply_edits_within(text, range.clone(), &edits)?;
    let body = if is_atomic(value) {
        body
    } else {
        format!("({body})")
    };
    Some(Candidate::new(
        format!("inline {name}() at {}", lines_label(text, &span(call))),
        vec![
            Edit::replace(span(call), body),
            Edit::delete(deletion_range(text, span(stmt))),
        ],
    ))
}

/// The value of the one statement of `def`, a `return`, when `def` is neither async nor
/// decorated and takes no `*args` or `**kwargs`.
fn plain_return(def: &ast::StmtFunctionDef) -> Option<&Expr> {
    let [Stmt::Return(ret)] = &def.body[..] else {
        return None;
    };
    let params = &def.parameters;
    if def.is_async
        || !def.decorator_list.is_empty()
        || params.vararg.is_some()
        || params.kwarg.is_some()
    {
        return None;
    }
    ret.value.as_deref()
}

/// The candidate that replaces a function that only hands its parameters, in order, to
/// another callable (`def forward(a): return torch.ops.aten.relu(a)`) by that callable
/// wherever its name is read, called or not (`torch.compile(forward)` →
/// `torch.compile(torch.ops.aten.relu)`), and deletes its `def`.
fn forwarding(
    script: &Script,
    scopes: &Scopes,
    stmt: &Stmt,
    def: &ast::StmtFunctionDef,
) -> Option<Candidate> {
    let text = script.text();
    let Some(Expr::Call(call)) = plain_return(def) else {
        return None;
    };
    let params = &def.parameters;
    let positional: Vec<&ast::ParameterWithDefault> =
        params.posonlyargs.iter().chain(&params.args).collect();
    if !params.kwonlyargs.is_empty()
        || positional.iter().any(|p| p.default.is_some())
        || !call.arguments.keywords.is_empty()
    {
        return None;
    }
    let names: Vec<&str> = positional
        .iter()
        .map(|p| p.parameter.name.as_str())
        .collect();
    let passed: Vec<&str> = call
        .arguments
        .args
        .iter()
        .map(|a| match a {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect::<Option<_>>()?;
    // The callee is a dotted path that reads none of the parameters and means the same at
    // module level.
    let mut callee = &*call.func;
    while let Expr::Attribute(a) = callee {
        callee = &a.value;
    }
    let Expr::Name(root) = callee else {
        return None;
    };
    let own = scopes.scope_at(&span(def))?;
    let root_at = scopes
        .occurrences
        .iter()
        .find(|o| o.range == span(callee))?;
    if passed != names
        || names.contains(&root.id.as_str())
        || scopes.resolve_occurrence(root_at) == Some(own)
    {
        return None;
    }
    let name = def.name.as_str();
    let def_range = span(stmt);
    let mut edits = vec![Edit::delete(deletion_range(text, def_range.clone()))];
    for o in scopes.occurrences.iter().filter(|o| o.name == name) {
        if def_range.contains(&o.range.start) {
            continue;
        }
        // Read as the module-level function, nowhere bound again.
        if o.binds || scopes.resolve_occurrence(o).is_some() {
            return None;
        }
        // The callee's root must mean the same where the name is read.
        if scopes
            .resolve(root.id.as_str(), scopes.innermost_at(o.range.start))
            .is_some()
        {
            return None;
        }
        edits.push(Edit::replace(
            o.range.clone(),
            script.slice(&*call.func).to_string(),
        ));
    }
    if edits.len() == 1 {
        return None;
    }
    Some(Candidate::new(
        format!(
            "replace {name}, which only calls {}, by it at {} use(s)",
            script.slice(&*call.func),
            edits.len() - 1
        ),
        edits,
    ))
}

/// What is inlined: a module-level function, or a method of a module-level class.
struct Target<'a> {
    stmt: &'a Stmt,
    def: &'a ast::StmtFunctionDef,
    class: Option<&'a ast::StmtClassDef>,
    /// Whether other code still uses the function, so that its `def` stays.
    shared: bool,
}

/// How the call stands in its statement.
#[derive(Clone, Copy)]
enum Form<'a> {
    /// `f()`, `sys.exit(f())`, `raise SystemExit(f())`.
    Alone,
    /// `target = f()`.
    Assign(&'a Expr),
    /// `return f()`.
    Return,
    /// `with f() as target: body`, for a `@contextmanager` generator.
    With(&'a ast::StmtWith),
    /// Anywhere else in a simple statement: `x = g(**f(a))`. The body goes before the
    /// statement, its value bound to the function's name, which takes the call's place.
    Nested,
}

/// The one call of a target, and where it stands.
struct Site<'a> {
    stmt: &'a Stmt,
    call: &'a ast::ExprCall,
    form: Form<'a>,
    /// The name before `.m(...)` for a method.
    receiver: Option<&'a str>,
    /// The `__name__` guard the statement is in, if any.
    guard: Option<&'a ast::StmtIf>,
    /// The function the statement is in (`None` at module level), and its class when it is
    /// a method.
    function: Option<&'a ast::StmtFunctionDef>,
    class: Option<&'a ast::StmtClassDef>,
    /// Whether the statement is the last of its function's body.
    last: bool,
}

/// Where the search for a call stands.
#[derive(Clone, Copy)]
struct Context<'a> {
    guard: Option<&'a ast::StmtIf>,
    function: Option<&'a ast::StmtFunctionDef>,
    class: Option<&'a ast::StmtClassDef>,
    /// Whether the body searched is a function's own body, not a block in it.
    top: bool,
}

/// A parameter bound to the value of an argument, a default or the receiver.
struct Binding<'a> {
    /// The parameter, or several (`a, b`) that a starred argument fills.
    name: Cow<'a, str>,
    value: String,
    /// The names the value reads.
    reads: Vec<&'a str>,
    /// Whether the value is the parameter's own name, so that no assignment is needed.
    same: bool,
}

/// The candidate that inlines `target` at its one call.
fn inline(script: &Script, scopes: &Scopes, target: &Target, site: &Site) -> Option<Candidate> {
    let text = script.text();
    let def = target.def;
    let range = replaced_range(script, target, site)?;
    let bindings = bind(script, target, site)?;
    if !names_stay_apart(scopes, target, site, &bindings) {
        return None;
    }

    if let Form::With(with) = site.form {
        return inline_with(script, target, with, &bindings, range);
    }
    let indent = indent_at(text, range.start);
    let (body, edits, tail) = inlined_body(script, target, site, indent)?;
    let mut replacement = bound(&bindings, indent);
    if !body.is_empty() {
        replacement.push_str(&body_at_indent_with(script, body, indent, edits)?);
    }
    replacement.push_str(&tail);
    if replacement.is_empty() {
        replacement = format!("{indent}pass\n");
    }
    let what = match target.class {
        Some(class) => format!("{}.{}", class.name, def.name),
        None => def.name.to_string(),
    };
    let description = format!("inline {what}() at {}", lines_label(text, &range));
    Some(inlined(script, target, range, replacement, description))
}

/// The lines the inlined body replaces: the call's statement, or the whole guard when the
/// call is all it holds; `None` when a check refuses to inline `target` there.
fn replaced_range(script: &Script, target: &Target, site: &Site) -> Option<Range<usize>> {
    let text = script.text();
    let def = target.def;
    if def.is_async {
        return None;
    }
    let with = match site.form {
        Form::With(with) => Some(with),
        _ => None,
    };
    // Only a context manager made of a generator may be decorated: by what makes it one.
    let decorated_as_needed = match (&*def.decorator_list, with) {
        ([], None) => true,
        ([d], Some(_)) => is_contextmanager(&d.expression),
        _ => false,
    };
    if !decorated_as_needed {
        return None;
    }
    // The site to replace: the whole guard when the call is all it holds.
    let range = match site.guard {
        Some(g) if g.body.len() == 1 && g.elif_else_clauses.is_empty() => span(g),
        _ => span(site.stmt),
    };
    if !starts_line(text, range.start)
        || !ends_line(text, range.end)
        || span(target.stmt).contains(&range.start)
    {
        return None;
    }
    if def.body.iter().any(declares_scope) {
        return None;
    }
    if target.class.is_some() && uses_class_cell(&def.body) {
        return None;
    }
    let same_class = match (target.class, site.class) {
        (Some(a), Some(b)) => std::ptr::eq(a, b),
        (None, None) => true,
        _ => false,
    };
    if !same_class && mentions_private_name(&def.body) {
        return None;
    }
    Some(range)
}

/// The trailing `return` (or a generator's one trailing `yield`) of a function, and the body
/// before it; the whole body and `None` when there is neither.
fn trailing<'a>(text: &str, def: &'a ast::StmtFunctionDef) -> (&'a [Stmt], Option<Tail<'a>>) {
    match def.body.split_last() {
        Some((Stmt::Return(ret), rest)) => (rest, Some(Tail::of_return(text, ret))),
        Some((Stmt::Expr(e), rest)) => match e.value.as_ref() {
            Expr::Yield(y) if y.value.is_some() && !is_generator(rest) => {
                (rest, Some(Tail::of_yield(y)))
            }
            _ => (&def.body[..], None),
        },
        _ => (&def.body[..], None),
    }
}

/// What stands at the call site in `target`'s place, at `indent`: the statements of its body,
/// the edits to them that turn its trailing `return` into what the call's form needs, and the
/// text after them.
fn inlined_body<'a>(
    script: &Script,
    target: &Target<'a>,
    site: &Site,
    indent: &str,
) -> Option<(&'a [Stmt], Vec<Edit>, String)> {
    let text = script.text();
    let def = target.def;
    // The trailing `return` (or a generator's one trailing `yield`), and what it turns into.
    let (mut body, ret) = trailing(text, def);
    // A generator called on its own runs nothing.
    let lazy = ret.as_ref().is_some_and(|r| r.list) && matches!(site.form, Form::Alone);
    if body.iter().any(has_return) || is_generator(body) || lazy {
        return None;
    }
    let mut edits = Vec::new();
    let mut tail = String::new();
    let value = ret.as_ref().and_then(|r| r.value);
    match (site.form, value) {
        (Form::Alone, Some(value)) if !is_inert(value) => {
            edits.push(Edit::delete(ret?.keyword));
            body = &def.body;
        }
        (Form::Alone, _) => {}
        (Form::Assign(assigned), Some(_)) => {
            let prefix = format!("{} = ", script.slice(assigned));
            edits.extend(ret?.into(prefix));
            body = &def.body;
        }
        (Form::Assign(assigned), None) => {
            let Expr::Name(name) = assigned else {
                return None;
            };
            tail = format!("{indent}{} = None\n", name.id);
        }
        (Form::With(_), _) => return None,
        (Form::Nested, value) => {
            let stmt = span(site.stmt);
            let call = span(site.call);
            // The function's own name is free once its `def` goes; else a name of its own.
            let name = match target.shared {
                false => def.name.to_string(),
                true => format!("{}_result", def.name),
            };
            let stand_in = match value {
                Some(_) => {
                    edits.extend(ret?.into(format!("{name} = ")));
                    body = &def.body;
                    name.as_str()
                }
                None => "None",
            };
            tail = format!(
                "{indent}{}{stand_in}{}\n",
                &text[stmt.start..call.start],
                &text[call.end..stmt.end]
            );
        }
        (Form::Return, _) => {
            body = &def.body;
            match ret {
                Some(ret) if ret.list => edits.extend(ret.into("return ".to_string())),
                Some(_) => {}
                None if !site.last => tail = format!("{indent}return\n"),
                None => {}
            }
        }
    }
    Some((body, edits, tail))
}

/// The assignments of the parameters that need one, at `indent`.
fn bound(bindings: &[Binding], indent: &str) -> String {
    bindings
        .iter()
        .filter(|b| !b.same)
        .map(|b| format!("{indent}{} = {}\n", b.name, b.value))
        .collect()
}

/// The candidate that puts `replacement` in place of the lines of the call site `range`, and
/// deletes the target's `def` unless other code still uses it.
fn inlined(
    script: &Script,
    target: &Target,
    range: Range<usize>,
    replacement: String,
    description: String,
) -> Candidate {
    let text = script.text();
    let site_lines = line_start(text, range.start)..line_end(text, range.end);
    let mut edits = vec![Edit::replace(site_lines, replacement)];
    edits.extend(delete_def(script, target));
    Candidate::new(description, edits)
}

/// The candidate that inlines a `@contextmanager` generator at `with f() as x: body`: its body
/// with its one `yield v` replaced by `x = v` and the `with` body, so that what the generator
/// does around the `yield` (a `try`/`finally` that closes a connection) runs around it.
fn inline_with(
    script: &Script,
    target: &Target,
    with: &ast::StmtWith,
    bindings: &[Binding],
    range: Range<usize>,
) -> Option<Candidate> {
    let text = script.text();
    let def = target.def;
    let [yielded] = &*yield_statements(&def.body) else {
        return None;
    };
    if def.body.iter().any(has_return) || with.body.is_empty() {
        return None;
    }
    let Stmt::Expr(expr) = yielded else {
        return None;
    };
    let Expr::Yield(y) = expr.value.as_ref() else {
        return None;
    };
    let indent = indent_at(text, range.start);
    // Where the `yield` will stand once the body moved from its indentation to the `with`'s.
    let from = indent_at(text, span(&def.body[0]).start);
    let at = indent_at(text, span(yielded).start);
    let moved_indent = format!("{indent}{}", at.strip_prefix(from)?);
    let mut lines = String::new();
    if let Some(var) = &with.items[0].optional_vars {
        let value = y.value.as_deref().map_or("None", |v| script.slice(v));
        lines.push_str(&format!(
            "{moved_indent}{} = {value}\n",
            script.slice(&**var)
        ));
    }
    lines.push_str(&body_at_indent(script, &with.body, &moved_indent)?);
    let replacement = lines.trim_start_matches([' ', '\t']).trim_end_matches('\n');
    let yield_edit = Edit::replace(span(yielded), replacement);
    let mut text_out = bound(bindings, indent);
    text_out.push_str(&body_at_indent_with(
        script,
        &def.body,
        indent,
        vec![yield_edit],
    )?);
    let description = format!(
        "inline the context manager {}() at {}",
        def.name,
        lines_label(text, &range)
    );
    Some(inlined(script, target, range, text_out, description))
}

/// The edit that deletes the target's `def`, unless other code still uses it.
fn delete_def(script: &Script, target: &Target) -> Option<Edit> {
    if target.shared {
        return None;
    }
    Some(match target.class {
        Some(class) => delete_stmts(
            script,
            std::slice::from_ref(target.stmt),
            class.body.len() == 1,
        ),
        None => Edit::delete(deletion_range(script.text(), span(target.stmt))),
    })
}

/// `contextmanager` or `contextlib.contextmanager`.
fn is_contextmanager(decorator: &Expr) -> bool {
    match decorator {
        Expr::Name(n) => n.id.as_str() == "contextmanager",
        Expr::Attribute(a) => a.attr.as_str() == "contextmanager",
        _ => false,
    }
}

/// The statements of `body` that yield, at any depth outside nested functions and classes;
/// a `yield` inside another statement's expression counts as that statement.
fn yield_statements(body: &[Stmt]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => {
                let nested = child_bodies(stmt);
                if nested.is_empty() {
                    if is_generator(std::slice::from_ref(stmt)) {
                        out.push(stmt);
                    }
                } else {
                    // The header (a `with`'s items, an `if`'s test) must not yield.
                    out.extend(nested.into_iter().flat_map(yield_statements));
                }
            }
        }
    }
    out
}

/// The parameters of the target bound to the receiver, the arguments and the defaults, in
/// the order the parameters come; `None` when the call does not fit the parameters.
fn bind<'a>(script: &'a Script, target: &Target<'a>, site: &Site<'a>) -> Option<Vec<Binding<'a>>> {
    let params = &target.def.parameters;
    let arguments = &site.call.arguments;
    if arguments.keywords.iter().any(|k| k.arg.is_none()) {
        return None;
    }
    let mut positional: Vec<&ast::ParameterWithDefault> =
        params.posonlyargs.iter().chain(&params.args).collect();
    let mut out = Vec::new();
    if target.class.is_some() {
        let receiver = site.receiver?;
        let first = positional.first()?.parameter.name.as_str();
        positional.remove(0);
        let name = first;
        out.push(Binding {
            name: Cow::Borrowed(name),
            value: receiver.to_string(),
            reads: vec![receiver],
            same: receiver == name,
        });
    }
    // `f(*pair, c)`: the starred value fills the positional parameters the others leave.
    let starred: Vec<usize> = (0..arguments.args.len())
        .filter(|&i| matches!(arguments.args[i], Expr::Starred(_)))
        .collect();
    let spread = match starred[..] {
        [] => None,
        [i] if params.vararg.is_none() && positional.len() >= arguments.args.len() => {
            let Expr::Starred(star) = &arguments.args[i] else {
                return None;
            };
            Some((i, positional.len() + 1 - arguments.args.len(), &*star.value))
        }
        _ => return None,
    };
    if arguments.args.len() > positional.len() + usize::from(spread.is_some()) {
        return None;
    }
    let mut given: Vec<Option<&Expr>> = vec![None; positional.len() + params.kwonlyargs.len()];
    let mut slot = 0;
    for (i, arg) in arguments.args.iter().enumerate() {
        match spread {
            Some((at, width, value)) if at == i => {
                given[slot..slot + width].fill(Some(value));
                slot += width;
            }
            _ => {
                given[slot] = Some(arg);
                slot += 1;
            }
        }
    }
    // A method's receiver may have been the first positional-only parameter.
    let posonly = params
        .posonlyargs
        .len()
        .saturating_sub(usize::from(target.class.is_some()));
    let slots: Vec<&ast::ParameterWithDefault> = positional
        .iter()
        .copied()
        .chain(&params.kwonlyargs)
        .collect();
    for keyword in &arguments.keywords {
        let name = keyword.arg.as_ref()?.as_str();
        let index = slots
            .iter()
            .position(|p| p.parameter.name.as_str() == name)?;
        if index < posonly || given[index].is_some() {
            return None;
        }
        given[index] = Some(&keyword.value);
    }
    for (i, (p, value)) in slots.iter().zip(&given).enumerate() {
        let value = value.or(p.default.as_deref())?;
        let name = p.parameter.name.as_str();
        match spread {
            // The parameters the starred value fills take it together: `a, b = pair`.
            Some((at, width, star)) if std::ptr::eq(value, star) => {
                if i == at {
                    let names = slots[at..at + width]
                        .iter()
                        .map(|p| p.parameter.name.as_str());
                    out.push(Binding {
                        name: Cow::Owned(names.collect::<Vec<_>>().join(", ")),
                        value: script.slice(value).to_string(),
                        reads: read_names(value),
                        same: false,
                    });
                }
            }
            _ => out.push(Binding {
                name: Cow::Borrowed(name),
                value: script.slice(value).to_string(),
                reads: read_names(value),
                same: matches!(value, Expr::Name(n) if n.id.as_str() == name),
            }),
        }
    }
    for (p, empty) in [(&params.vararg, "()"), (&params.kwarg, "{}")] {
        if let Some(p) = p {
            out.push(Binding {
                name: Cow::Borrowed(p.name.as_str()),
                value: empty.to_string(),
                reads: Vec::new(),
                same: false,
            });
        }
    }
    // `a = b` then `b = a` would swap nothing.
    for (i, b) in out.iter().enumerate() {
        if !b.same
            && out[i + 1..]
                .iter()
                .any(|later| later.reads.iter().any(|r| *r == b.name))
        {
            return None;
        }
    }
    Some(out)
}

/// Whether the target's names and those around the call stay apart once the body is moved:
/// the target's parameters and locals must not be used in the scope of the call (except a
/// parameter passed its own name that the body never rebinds), and the names it reads from
/// outside must not be bound in the calling function.
fn names_stay_apart(scopes: &Scopes, target: &Target, site: &Site, bindings: &[Binding]) -> bool {
    let Some(own) = scopes.scope_at(&span(target.def)) else {
        return false;
    };
    let caller = match site.function {
        Some(f) => match scopes.scope_at(&span(f)) {
            Some(id) => Some(id),
            None => return false,
        },
        None => None,
    };
    let params = span(&*target.def.parameters);
    // The target's own names, those it rebinds in its body, and those it reads from outside.
    let mut locals = HashSet::new();
    let mut rebound = HashSet::new();
    let mut outside = HashSet::new();
    for o in &scopes.occurrences {
        if !scopes.is_within(o.scope, Some(own)) {
            continue;
        }
        match scopes.resolve_occurrence(o) {
            Some(r) if r == own => {
                locals.insert(o.name);
                if o.binds && !params.contains(&o.range.start) {
                    rebound.insert(o.name);
                }
            }
            Some(r) if scopes.is_within(Some(r), Some(own)) => {}
            _ => {
                outside.insert(o.name);
            }
        }
    }
    // A parameter passed its own name (`p = p` left out) is the caller's variable; the body
    // may rebind it only where the caller ends with the call (`return f(x)`): nothing of the
    // caller reads it after.
    let shared: HashSet<&str> = bindings
        .iter()
        .filter(|b| b.same && (!rebound.contains(&*b.name) || matches!(site.form, Form::Return)))
        .map(|b| &*b.name)
        .collect();
    // The names the scope of the call sees, and those it binds itself.
    let site_range = span(site.stmt);
    let mut around = HashSet::new();
    let mut caller_locals = HashSet::new();
    for o in &scopes.occurrences {
        if site_range.contains(&o.range.start) || scopes.is_within(o.scope, Some(own)) {
            continue;
        }
        let resolved = scopes.resolve_occurrence(o);
        let seen_by_caller = match resolved {
            None => true,
            Some(r) => scopes.is_within(caller, Some(r)),
        };
        if !seen_by_caller {
            continue;
        }
        around.insert(o.name);
        if caller.is_some() && resolved == caller {
            caller_locals.insert(o.name);
        }
    }
    // `x, y = f()` where `f` computes its own `x` and `y` and returns them: the names the
    // call assigns are overwritten by it anyway.
    let assigned: Vec<&str> = match site.form {
        Form::Assign(target) => read_names(target),
        _ => Vec::new(),
    };
    let clash = locals
        .iter()
        .any(|n| !shared.contains(n) && !assigned.contains(n) && around.contains(n))
        || outside.iter().any(|n| caller_locals.contains(n));
    !clash
}

/// Whether the method `name` is defined once in the whole script.
fn defined_once(script: &Script, name: &str) -> bool {
    crate::python::all_bodies(script.body())
        .iter()
        .flat_map(|b| b.iter())
        .filter(|s| matches!(s, Stmt::FunctionDef(d) if d.name.as_str() == name))
        .count()
        == 1
}

/// The calls of the target in statements of one of the forms, in source order, searched at
/// module level, in module-level functions and in the methods of module-level classes; `None`
/// for a method call whose receiver cannot be bound.
fn find_sites<'a>(body: &'a [Stmt], target: &Target<'a>) -> Vec<Option<Site<'a>>> {
    let context = Context {
        guard: None,
        function: None,
        class: None,
        top: false,
    };
    let mut out = Vec::new();
    search(body, target, body, context, &mut out);
    out
}

fn search<'a>(
    body: &'a [Stmt],
    target: &Target<'a>,
    module: &'a [Stmt],
    context: Context<'a>,
    out: &mut Vec<Option<Site<'a>>>,
) {
    for (i, stmt) in body.iter().enumerate() {
        if let Some((call, form, receiver)) = call_form(stmt, target) {
            let receiver_ok = match target.class {
                None => true,
                Some(class) => receiver.is_some_and(|r| {
                    let own_self = context.class.is_some_and(|c| std::ptr::eq(c, class))
                        && context.function.is_some_and(|f| first_param(f) == Some(r));
                    own_self || holds_instance(module, r, class.name.as_str())
                }),
            };
            out.push(receiver_ok.then_some(Site {
                stmt,
                call,
                form,
                receiver,
                guard: context.guard,
                function: context.function,
                class: context.class,
                last: context.top && i + 1 == body.len(),
            }));
            continue;
        }
        match stmt {
            Stmt::FunctionDef(f) if context.function.is_none() => {
                let function = Context {
                    guard: None,
                    function: Some(f),
                    class: None,
                    top: true,
                };
                search(&f.body, target, module, function, out);
            }
            Stmt::ClassDef(c) if context.function.is_none() => {
                for s in &c.body {
                    let Stmt::FunctionDef(f) = s else {
                        continue;
                    };
                    let method = Context {
                        guard: None,
                        function: Some(f),
                        class: Some(c),
                        top: true,
                    };
                    search(&f.body, target, module, method, out);
                }
            }
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            _ => {
                let guard = match stmt {
                    Stmt::If(s) if is_main_guard(&s.test) => Some(s),
                    _ => None,
                };
                let block = Context {
                    guard,
                    top: false,
                    ..context
                };
                for b in child_bodies(stmt) {
                    search(b, target, module, block, out);
                }
            }
        }
    }
}

/// The call of the target that `stmt` is made of, its form and its receiver.
fn call_form<'a>(
    stmt: &'a Stmt,
    target: &Target,
) -> Option<(&'a ast::ExprCall, Form<'a>, Option<&'a str>)> {
    let (expr, form) = match stmt {
        Stmt::Expr(e) => (unwrap_exit(&e.value), Form::Alone),
        Stmt::Raise(r) if r.cause.is_none() => {
            let exc = r.exc.as_deref()?;
            let inner = unwrap_exit(exc);
            if std::ptr::eq(inner, exc) {
                return None;
            }
            (inner, Form::Alone)
        }
        Stmt::Assign(a) => match &*a.targets {
            [assigned @ (Expr::Name(_) | Expr::Tuple(_))] => (&*a.value, Form::Assign(assigned)),
            _ => return None,
        },
        Stmt::Return(r) => (r.value.as_deref()?, Form::Return),
        Stmt::With(w) if !w.is_async && w.items.len() == 1 => {
            (&w.items[0].context_expr, Form::With(w))
        }
        _ => return None,
    };
    if let Some((call, receiver)) = target_call(expr, target) {
        return Some((call, form, receiver));
    }
    // A call deeper in a simple statement, outside lambdas and comprehensions (which run
    // it later, or many times).
    if !child_bodies(stmt).is_empty() {
        return None;
    }
    let exprs = all_exprs(std::slice::from_ref(stmt));
    let deferred: Vec<Range<usize>> = exprs
        .iter()
        .filter(|e| {
            matches!(
                e,
                Expr::Lambda(_)
                    | Expr::ListComp(_)
                    | Expr::SetComp(_)
                    | Expr::DictComp(_)
                    | Expr::Generator(_)
            )
        })
        .map(|e| span(*e))
        .collect();
    exprs.into_iter().find_map(|e| {
        let (call, receiver) = target_call(e, target)?;
        let at = span(e);
        if deferred.iter().any(|d| d.contains(&at.start)) {
            return None;
        }
        Some((call, Form::Nested, receiver))
    })
}

/// `expr` when it calls the target, with the receiver of a method call.
fn target_call<'a>(
    expr: &'a Expr,
    target: &Target,
) -> Option<(&'a ast::ExprCall, Option<&'a str>)> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let name = target.def.name.as_str();
    match (&*call.func, target.class) {
        (Expr::Name(n), None) if n.id.as_str() == name => Some((call, None)),
        (Expr::Attribute(a), Some(_)) if a.attr.as_str() == name => match &*a.value {
            Expr::Name(r) => Some((call, Some(r.id.as_str()))),
            _ => None,
        },
        _ => None,
    }
}

/// The call inside `sys.exit(...)`, `exit(...)` or `SystemExit(...)`; else `expr` itself.
fn unwrap_exit(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(outer)
            if is_exit(&outer.func)
                && outer.arguments.keywords.is_empty()
                && outer.arguments.args.len() == 1 =>
        {
            &outer.arguments.args[0]
        }
        _ => expr,
    }
}

fn is_exit(func: &Expr) -> bool {
    match func {
        Expr::Name(n) => matches!(n.id.as_str(), "exit" | "quit" | "SystemExit"),
        Expr::Attribute(a) => a.attr.as_str() == "exit",
        _ => false,
    }
}

/// Whether the script assigns `name = Class(...)` somewhere.
fn holds_instance(module: &[Stmt], name: &str, class: &str) -> bool {
    crate::python::all_bodies(module)
        .iter()
        .flat_map(|b| b.iter())
        .any(|s| {
            matches!(s, Stmt::Assign(a)
                if matches!(&*a.targets, [Expr::Name(t)] if t.id.as_str() == name)
                && matches!(&*a.value, Expr::Call(c)
                    if matches!(&*c.func, Expr::Name(f) if f.id.as_str() == class)))
        })
}

/// How a function hands back its value at its end: `return e`, or, for a generator that
/// yields once, as its last statement, `yield e`, which hands back `[e]`.
struct Tail<'a> {
    /// `return` or `yield` and the blanks after it.
    keyword: Range<usize>,
    value: Option<&'a Expr>,
    /// Whether the value is handed back in a one-element list.
    list: bool,
}

impl<'a> Tail<'a> {
    fn of_return(text: &str, ret: &'a ast::StmtReturn) -> Tail<'a> {
        Tail {
            keyword: return_keyword(text, ret),
            value: ret.value.as_deref(),
            list: false,
        }
    }

    fn of_yield(y: &'a ast::ExprYield) -> Tail<'a> {
        let value = y.value.as_deref();
        let start = span(y).start;
        let end = value.map_or(span(y).end, |v| span(v).start);
        Tail {
            keyword: start..end,
            value,
            list: true,
        }
    }

    /// The edits that turn the tail into `prefix` followed by the value.
    fn into(self, prefix: String) -> Vec<Edit> {
        match (self.list, self.value) {
            (true, Some(v)) => {
                let (open, close) = if is_atomic(v) {
                    ("[", "]")
                } else {
                    ("[(", ")]")
                };
                vec![
                    Edit::replace(self.keyword, format!("{prefix}{open}")),
                    Edit::replace(span(v).end..span(v).end, close),
                ]
            }
            _ => vec![Edit::replace(self.keyword, prefix)],
        }
    }
}

/// The `return` keyword of `ret` and the blanks after it.
fn return_keyword(text: &str, ret: &ast::StmtReturn) -> Range<usize> {
    let start = span(ret).start;
    let after = &text[start + "return".len()..];
    let blanks = after.len() - after.trim_start_matches([' ', '\t']).len();
    start..start + "return".len() + blanks
}

/// The names an expression reads.
fn read_names(expr: &Expr) -> Vec<&str> {
    let mut names = Vec::new();
    collect_names(expr, &mut names);
    names
}

fn collect_names<'a>(expr: &'a Expr, names: &mut Vec<&'a str>) {
    struct Collect<'a, 'b>(&'b mut Vec<&'a str>);
    impl<'a> SourceOrderVisitor<'a> for Collect<'a, '_> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            if let Expr::Name(n) = expr {
                self.0.push(n.id.as_str());
            }
            source_order::walk_expr(self, expr);
        }
    }
    Collect(names).visit_expr(expr);
}

/// `__name__ == "__main__"`, either way round.
pub(crate) fn is_main_guard(test: &Expr) -> bool {
    let Expr::Compare(cmp) = test else {
        return false;
    };
    let [ast::CmpOp::Eq] = &*cmp.ops else {
        return false;
    };
    let [right] = &*cmp.comparators else {
        return false;
    };
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main = |e: &Expr| matches!(e, Expr::StringLiteral(s) if s.value.to_str() == "__main__");
    (is_name(&cmp.left) && is_main(right)) || (is_main(&cmp.left) && is_name(right))
}

/// Whether evaluating `expr` can have no effect: a name or a literal.
fn is_inert(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Name(_)
            | Expr::NumberLiteral(_)
            | Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
    )
}

/// Whether `body` yields or awaits outside nested functions, classes and lambdas: calling
/// such a function does not run its body, and the body does not compile at module level.
fn is_generator(body: &[Stmt]) -> bool {
    super::helpers::suspends(body, true)
}

/// Whether a `return` is reached in `stmt` outside nested functions and classes.
fn has_return(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Return(_) => true,
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => false,
        _ => child_bodies(stmt).into_iter().flatten().any(has_return),
    }
}

/// Whether `stmt` holds a `global` or `nonlocal` declaration, at any depth.
fn declares_scope(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Global(_) | Stmt::Nonlocal(_) => true,
        _ => child_bodies(stmt).into_iter().flatten().any(declares_scope),
    }
}

/// Whether a method body uses `super` or `__class__`, which only work inside its class.
fn uses_class_cell(body: &[Stmt]) -> bool {
    all_exprs(body)
        .iter()
        .any(|e| matches!(e, Expr::Name(n) if matches!(n.id.as_str(), "super" | "__class__")))
}

/// Whether `body` names a private `__name`, which Python renames inside a class.
fn mentions_private_name(body: &[Stmt]) -> bool {
    let private = |s: &str| s.starts_with("__") && !s.ends_with("__");
    all_exprs(body).iter().any(|e| match e {
        Expr::Name(n) => private(n.id.as_str()),
        Expr::Attribute(a) => private(a.attr.as_str()),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&InlineCalls, text)
    }

    #[test]
    fn a_function_that_only_forwards_its_parameters_is_the_callable_it_calls() {
        let text = "import torch\ndef forward(a):\n    return torch.ops.aten.relu(a)\ntorch.compile(forward)(torch.randn(1))\n";
        assert!(
            results(text).contains(
                &"import torch\ntorch.compile(torch.ops.aten.relu)(torch.randn(1))\n".to_string()
            ),
            "{:?}",
            results(text)
        );
        // Another order of the parameters, or a local callee, is no forwarding.
        for text in [
            "def f(a, b):\n    return g(b, a)\nh(f)\n",
            "def f(g, a):\n    return g(a)\nh(f)\n",
        ] {
            assert!(!results(text).iter().any(|t| t.contains("h(g)")), "{text}");
        }
    }

    #[test]
    fn a_parameter_passed_its_own_name_may_be_rebound_where_the_caller_returns_the_call() {
        let text = "class M:\n    def forward(self, x):\n        return self.func(x)\n\n    def func(self, x):\n        x = x + 1\n        return x\n\nM().forward(1)\n";
        let texts = results(text);
        assert!(
            texts.contains(&"class M:\n    def forward(self, x):\n        x = x + 1\n        return x\n\n\nM().forward(1)\n".to_string()),
            "{texts:?}"
        );
        let after = "def g(x):\n    y = f(x)\n    return x + y\ndef f(x):\n    x = x + 1\n    return x\nprint(g(1))\n";
        assert!(
            results(after).iter().all(|t| t.contains("def f(")),
            "the caller reads x after the call"
        );
    }

    #[test]
    fn a_local_named_like_the_assigned_target_does_not_block_inlining() {
        let text = "def f(a):\n    x = a + 1\n    return x\nx = f(2)\nprint(x)\n";
        assert_eq!(results(text), ["a = 2\nx = a + 1\nx = x\nprint(x)\n"]);
    }

    #[test]
    fn a_generator_that_yields_once_at_its_end_hands_back_a_list() {
        let text = "def batches(n):\n    x = n * 2\n    yield x, n\nfor b in batches(3):\n    pass\nitems = batches(4)\n";
        // `batches` is called twice: the call that can be inlined is, and the `def` stays.
        assert_eq!(
            results(text),
            [
                "def batches(n):\n    x = n * 2\n    yield x, n\nfor b in batches(3):\n    pass\nn = 4\nx = n * 2\nitems = [(x, n)]\n"
            ]
        );
        let text = "def batches(n):\n    x = n * 2\n    yield x, n\nitems = batches(4)\n";
        assert_eq!(results(text), ["n = 4\nx = n * 2\nitems = [(x, n)]\n"]);
    }

    #[test]
    fn a_function_that_returns_an_expression_is_inlined_inside_another() {
        let text = "def lease(owner, k=2):\n    return flat[owner] + k\nflat = [1]\nprint([lease(r) for r in x])\n";
        assert_eq!(
            results(text),
            ["flat = [1]\nprint([(flat[r] + 2) for r in x])\n"]
        );
    }

    #[test]
    fn a_starred_argument_fills_the_parameters_the_others_leave() {
        let text = "def f(a, b, c):\n    return a + b + c\nx = f(*pair, 3)\n";
        assert_eq!(results(text), ["a, b = pair\nc = 3\nx = a + b + c\n"]);
    }

    #[test]
    fn the_value_of_a_trailing_return_is_still_computed() {
        let text = "def main():\n    return run()\nmain()\n";
        assert_eq!(results(text), ["run()\n"]);
    }

    #[test]
    fn a_trailing_return_of_a_name_or_literal_goes_whole() {
        let text = "def main():\n    run()\n    return 0\nmain()\n";
        assert_eq!(results(text), ["run()\n"]);
    }

    #[test]
    fn a_generator_is_not_inlined() {
        assert!(results("def main():\n    yield 1\nmain()\n").is_empty());
    }

    #[test]
    fn the_comment_above_the_first_statement_stays() {
        let text = "def main():\n    # why\n    run()\nmain()\n";
        assert_eq!(results(text), ["# why\nrun()\n"]);
    }

    #[test]
    fn arguments_bind_positionally_then_by_keyword_then_by_default() {
        let text = "def f(a, b, c=3, *, d, e=5):\n    g(a, b, c, d, e)\nf(1, d=4, b=2)\n";
        assert_eq!(
            results(text),
            ["a = 1\nb = 2\nc = 3\nd = 4\ne = 5\ng(a, b, c, d, e)\n"]
        );
    }

    #[test]
    fn a_parameter_passed_its_own_name_is_not_assigned() {
        let text = "key = 'k'\ndef f(key):\n    g(key)\nf(key)\n";
        assert_eq!(results(text), ["key = 'k'\ng(key)\n"]);
    }

    #[test]
    fn the_return_value_goes_to_the_assigned_name() {
        let text = "def f(x):\n    y = x + 1\n    return (y,\n        y)\nt = f(2)\n";
        assert_eq!(results(text), ["x = 2\ny = x + 1\nt = (y,\n    y)\n"]);
    }

    #[test]
    fn a_function_without_return_assigns_none() {
        let text = "def f():\n    g()\nt = f()\n";
        assert_eq!(results(text), ["g()\nt = None\n"]);
        assert!(results("def f():\n    g()\na, b = f()\n").is_empty());
    }

    #[test]
    fn a_return_in_the_middle_of_the_caller_still_returns() {
        let text = "def f():\n    g()\ndef h(x):\n    if x:\n        return f()\n    k()\nh(1)\n";
        let texts = results(text);
        assert!(
            texts.contains(
                &"def h(x):\n    if x:\n        g()\n        return\n    k()\nh(1)\n".to_string()
            ),
            "{texts:?}"
        );
    }

    #[test]
    fn calls_that_do_not_fit_the_parameters_are_skipped() {
        for call in ["f(*xs)", "f(**kw)", "f(1, 2)", "f(b=1)", "f()", "f(1, a=2)"] {
            let text = format!("def f(a, *args):\n    g(a)\n{call}\n");
            assert!(results(&text).is_empty(), "{call}");
        }
    }

    #[test]
    fn swapped_arguments_are_not_assigned_one_over_the_other() {
        assert!(results("def f(a, b):\n    g(a, b)\nb = 1\na = 2\nf(b, a)\n").is_empty());
    }

    #[test]
    fn a_local_of_the_function_that_the_caller_also_uses_is_skipped() {
        let text = "def f():\n    x = 1\n    g(x)\ndef h():\n    x = 2\n    f()\n    k(x)\nh()\n";
        let texts = results(text);
        assert!(texts.iter().all(|t| t.contains("def f")), "{texts:?}");
    }

    #[test]
    fn a_global_the_function_reads_that_the_caller_binds_is_skipped() {
        let text = "def f():\n    g(x)\ndef h():\n    x = 2\n    f()\nh()\n";
        let texts = results(text);
        assert!(texts.iter().all(|t| t.contains("def f")), "{texts:?}");
    }

    #[test]
    fn a_method_binds_its_receiver_first() {
        let text = "class C:\n    def m(self, a):\n        return self.x[a]\nc = C()\nv = c.m(1)\n";
        assert_eq!(
            results(text),
            ["class C:\n    pass\nc = C()\nself = c\na = 1\nv = self.x[a]\n"]
        );
    }

    #[test]
    fn a_method_called_on_something_not_known_to_be_its_instance_is_skipped() {
        let text = "class C:\n    def m(self):\n        g()\nlib.m()\n";
        assert!(results(text).is_empty());
        let text = "class C:\n    def m(self):\n        return super().m()\nc = C()\nc.m()\n";
        assert!(results(text).is_empty());
    }
}
