//! Flatten a class instantiated once into module-level code: `nn.Module` wrappers, plain
//! classes that carry data and call their own methods, and dataclasses.
//!
//! ## What it removes
//! The indirection between the failing line and the code it needs: once a class is flat,
//! `inline_calls` inlines its former methods, `propagate_values` its former attributes, and
//! deletion removes whatever the failure does not use. The candidate itself may be longer
//! than the class it replaces; the loop keeps it only if what follows makes up for it.
//!
//! A module-level class whose name is read once, in `C(args)` at module level, becomes:
//! - at the class's place, its class attributes as assignments and its methods (`__init__`
//!   excepted) as functions without their `self` parameter;
//! - at the instantiation, the arguments bound to `__init__`'s parameters (defaults for the
//!   rest) and `__init__`'s body with `super().__init__()` left out; for a dataclass, the
//!   fields bound to the arguments, then `__post_init__`'s body;
//! - everywhere, `self.x` and `v.x` (for `v = C(args)`) become a module-level name `x`, or
//!   `v_x` when `x` is taken; `v(...)` calls the former `forward` (or `__call__`); names of
//!   members lose their leading and trailing underscores; an instance handed to another
//!   call, as in `torch.compile(net)`, becomes that function.
//!
//! Apart from that, a method that never uses its `self` (nor `super`), called once as
//! `receiver.m(...)`, moves out of its class as a function, and the call becomes `m(...)`:
//! how a test method leaves its `unittest.TestCase` and its test loader behind.
//!
//! ## Example
//! ```python
//! class Net(nn.Module):            # before
//!     def __init__(self, width):
//!         super().__init__()
//!         self.fc = nn.Linear(width, width)
//!     def forward(self, x):
//!         return self.fc(x)
//! net = Net(1024)
//! net(torch.randn(8, 4))
//!
//! def forward(x):                  # after
//!     return fc(x)
//! width = 1024
//! fc = nn.Linear(width, width)
//! forward(torch.randn(8, 4))
//! ```
//!
//! ## When it cannot apply
//! - The class: nested, decorated other than with `dataclass`, with bases other than
//!   `object` or `nn.Module`, with a body holding more than methods, docstrings and
//!   assignments to names; a decorated or `async` method; a dataclass with `__init__` or a
//!   `field(...)` other than with `default=` or `default_factory=` (which gives `f()`).
//! - The uses: the class name read more than once or anywhere but in a call at module level;
//!   the instance used other than as `v.member` or `v(...)`, or bound more than once;
//!   `self` used other than as `self.member`; a member that the class never sets (one it
//!   inherits, such as `self.training`); `super()` other than in `super().__init__()`; a
//!   method other than `__init__` that assigns to `self.x`; `__init__` with `*args` or
//!   `**kwargs`, or a call with `*` or `**` arguments.
//! - The names: a parameter or local of `__init__` that module-level code also uses.

use std::collections::{BTreeMap, HashSet};

use super::helpers::{body_at_indent_with, first_param, match_arguments};
use crate::edit::{
    Candidate, Edit, deletion_range, ends_line, indent_at, line_end, line_start, lines_label,
    starts_line,
};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Ranged, Script, Stmt, all_bodies, all_exprs, ast, span};
use crate::scopes::{Occurrence, ScopeKind, Scopes};

pub struct FlattenClasses;

impl Pass for FlattenClasses {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("flatten_classes")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let exprs = all_exprs(script.body());
        let mut out: Vec<Candidate> = script
            .body()
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(class) => {
                    // Names a flattened member must not take: every variable of the script
                    // but those of this class's body and the members of other classes.
                    let own = scopes.scope_at(&span(stmt));
                    let in_class = |o: &Occurrence| {
                        o.scope
                            .is_some_and(|s| scopes.scopes[s].kind == ScopeKind::Class)
                    };
                    let taken: HashSet<&str> = scopes
                        .occurrences
                        .iter()
                        .filter(|o| o.scope != own || own.is_none())
                        .filter(|o| !(o.binds && in_class(o)))
                        .map(|o| o.name)
                        .collect();
                    flatten(script, &scopes, &exprs, &taken, stmt, class)
                }
                _ => None,
            })
            .collect();
        out.extend(detach_methods(script, &scopes, &exprs));
        out
    }
}

/// What a class body holds, sorted out.
struct Shape<'a> {
    /// Every method but `__init__` and `__post_init__`, with its statement.
    methods: Vec<(&'a Stmt, &'a ast::StmtFunctionDef)>,
    /// `__init__`, or a dataclass's `__post_init__`.
    init: Option<&'a ast::StmtFunctionDef>,
    /// Class attributes: the name and the value.
    attributes: Vec<(&'a str, &'a Expr)>,
    /// A dataclass's fields: the name and the default's text.
    fields: Option<Vec<(&'a str, Option<String>)>>,
}

/// How the one instance is reached.
#[derive(Clone, Copy)]
enum Instance<'a> {
    /// `v = C(args)`.
    Named(&'a str),
    /// `C(args).member` or `C(args)(...)` inside a statement.
    Anonymous,
}

/// The one instantiation of a class: the call, the range of the statement it stands in, and
/// how the instance is reached.
struct Instantiation<'a> {
    call: &'a ast::ExprCall,
    site: std::ops::Range<usize>,
    instance: Instance<'a>,
}

/// The candidate flattening one module-level class instantiated once.
fn flatten(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    taken: &HashSet<&str>,
    stmt: &Stmt,
    class: &ast::StmtClassDef,
) -> Option<Candidate> {
    let text = script.text();
    let shape = shape(script, class)?;
    let class_name = class.name.as_str();
    let at = instantiation(script, scopes, exprs, stmt, class_name)?;
    let prefix = match at.instance {
        Instance::Named(v) => v.to_string(),
        Instance::Anonymous => class_name.to_lowercase(),
    };
    let init_names = init_names(script, scopes, &shape, at.call)?;
    let members = member_names(&shape, taken, &init_names, &prefix)?;
    let mut edits = instance_edits(scopes, exprs, &at, &members)?;
    edits.push(instantiation_edit(script, &shape, class, &at, &members)?);
    let class_lines = deletion_range(text, span(stmt));
    edits.push(Edit::replace(
        class_lines,
        flat_class(script, &shape, &members)?,
    ));
    Some(Candidate::new(
        format!(
            "flatten class {class_name} at {}",
            lines_label(text, &span(stmt))
        ),
        edits,
    ))
}

/// The occurrences of `name` that bind it (`binds`) or read it.
fn occurrences<'s, 'a>(scopes: &'s Scopes<'a>, name: &str, binds: bool) -> Vec<&'s Occurrence<'a>> {
    scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name && o.binds == binds)
        .collect()
}

/// The one instantiation of class `class_name` (defined by `stmt`): a call at module level,
/// in a statement on lines of its own.
fn instantiation<'a>(
    script: &'a Script,
    scopes: &Scopes,
    exprs: &[&'a Expr],
    stmt: &Stmt,
    class_name: &str,
) -> Option<Instantiation<'a>> {
    let text = script.text();
    let [read] = occurrences(scopes, class_name, false)[..] else {
        return None;
    };
    if read.scope.is_some() || occurrences(scopes, class_name, true).len() != 1 {
        return None;
    }
    let call = exprs.iter().find_map(|e| match e {
        Expr::Call(c) if span(c.func.as_ref()) == read.range => Some(c),
        _ => None,
    })?;
    let site = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter(|s| span(*s).contains(&call.start().to_usize()))
        .min_by_key(|s| span(*s).len())?;
    let site_range = span(site);
    if span(stmt).contains(&site_range.start)
        || !starts_line(text, site_range.start)
        || !ends_line(text, site_range.end)
    {
        return None;
    }
    let instance = match site {
        Stmt::Assign(a) if a.targets.len() == 1 && span(a.value.as_ref()) == span(call) => {
            match &a.targets[0] {
                Expr::Name(n) => Instance::Named(n.id.as_str()),
                _ => return None,
            }
        }
        _ => Instance::Anonymous,
    };
    Some(Instantiation {
        call,
        site: site_range,
        instance,
    })
}

/// The parameters and locals of `__init__`, which become module-level names; `None` when
/// something else at module level uses one of them.
fn init_names<'a>(
    script: &Script,
    scopes: &Scopes<'a>,
    shape: &Shape,
    call: &ast::ExprCall,
) -> Option<HashSet<&'a str>> {
    let mut init_names: HashSet<&str> = HashSet::new();
    if let Some(init) = shape.init {
        let this = first_param(init)?;
        let init_span = span(init);
        let own_scope = scopes.scope_at(&init_span);
        let inside =
            |o: &&Occurrence| init_span.start <= o.range.start && o.range.end <= init_span.end;
        for o in scopes.occurrences.iter().filter(|o| inside(o)) {
            if o.binds && o.name != this && o.scope == own_scope {
                init_names.insert(o.name);
            }
        }
        // A parameter passed a module-level name of its own (`device=device`) stays that name.
        let passed_itself: HashSet<String> = match shape.fields {
            Some(_) => HashSet::new(),
            None => bind_params(script, init, &call.arguments)?
                .into_iter()
                .filter(|(name, value)| name == value)
                .map(|(name, _)| name)
                .collect(),
        };
        let clash = scopes.occurrences.iter().any(|o| {
            init_names.contains(o.name)
                && !passed_itself.contains(o.name)
                && !inside(&o)
                && scopes.resolve_occurrence(o).is_none()
        });
        if clash {
            return None;
        }
    }
    Some(init_names)
}

/// Edits turning the uses of the instance into the members' module-level names; `None` when
/// the instance is used in a way that has none.
fn instance_edits(
    scopes: &Scopes,
    exprs: &[&Expr],
    at: &Instantiation,
    members: &BTreeMap<String, String>,
) -> Option<Vec<Edit>> {
    let call = at.call;
    let site_range = &at.site;
    let call_target = members
        .get("forward")
        .or_else(|| members.get("__call__"))
        .cloned();
    let mut edits = Vec::new();
    match at.instance {
        Instance::Named(v) => {
            if occurrences(scopes, v, true).len() != 1 {
                return None;
            }
            let mut seen = 0;
            for e in exprs {
                let edit = match e {
                    Expr::Attribute(a) if is_name(&a.value, v) => {
                        Edit::replace(span(*e), members.get(a.attr.as_str())?.clone())
                    }
                    Expr::Call(c) if is_name(&c.func, v) => {
                        Edit::replace(span(c.func.as_ref()), call_target.clone()?)
                    }
                    // Handed to another call (`torch.compile(model)`): the callable it stands
                    // for.
                    Expr::Call(c) if c.arguments.args.iter().any(|a| is_name(a, v)) => {
                        for arg in c.arguments.args.iter().filter(|a| is_name(a, v)) {
                            let edit = Edit::replace(span(arg), call_target.clone()?);
                            if site_range.contains(&edit.range.start) {
                                return None;
                            }
                            edits.push(edit);
                            seen += 1;
                        }
                        continue;
                    }
                    _ => continue,
                };
                if site_range.contains(&edit.range.start) {
                    return None;
                }
                edits.push(edit);
                seen += 1;
            }
            if seen != occurrences(scopes, v, false).len() {
                return None;
            }
        }
        Instance::Anonymous => {
            let edit = exprs.iter().find_map(|e| match e {
                Expr::Attribute(a) if span(a.value.as_ref()) == span(call) => Some(Edit::replace(
                    span(*e),
                    members.get(a.attr.as_str())?.clone(),
                )),
                Expr::Call(c) if span(c.func.as_ref()) == span(call) => {
                    Some(Edit::replace(span(call), call_target.clone()?))
                }
                Expr::Call(c) if c.arguments.args.iter().any(|a| span(a) == span(call)) => {
                    Some(Edit::replace(span(call), call_target.clone()?))
                }
                _ => None,
            })?;
            edits.push(edit);
        }
    }
    Some(edits)
}

/// The edit at the instantiation: the arguments bound, then `__init__`'s body.
fn instantiation_edit(
    script: &Script,
    shape: &Shape,
    class: &ast::StmtClassDef,
    at: &Instantiation,
    members: &BTreeMap<String, String>,
) -> Option<Edit> {
    let text = script.text();
    let call = at.call;
    let site_range = &at.site;
    let indent = indent_at(text, site_range.start);
    let mut prelude = String::new();
    let bindings = match &shape.fields {
        Some(fields) => bind_fields(script, fields, &call.arguments)?
            .into_iter()
            .map(|(name, value)| Some((members.get(name)?.clone(), value)))
            .collect::<Option<Vec<_>>>()?,
        None => match shape.init {
            Some(init) => bind_params(script, init, &call.arguments)?,
            None if call.arguments.is_empty() => Vec::new(),
            None => return None,
        },
    };
    for (name, value) in bindings {
        if name != value {
            prelude.push_str(&format!("{indent}{name} = {value}\n"));
        }
    }
    if let Some(init) = shape.init {
        let inner = self_edits(init, members)?;
        let kept: Vec<&Stmt> = init.body.iter().filter(|s| !is_super_init(s)).collect();
        if init.body.len() - kept.len() != count_super(&class.body) {
            return None;
        }
        for stmt in kept {
            let range = span(stmt);
            let own: Vec<Edit> = inner
                .iter()
                .filter(|e| range.start <= e.range.start && e.range.end <= range.end)
                .cloned()
                .collect();
            prelude.push_str(&body_at_indent_with(
                script,
                std::slice::from_ref(stmt),
                indent,
                own,
            )?);
        }
    } else if count_super(&class.body) > 0 {
        return None;
    }
    let site_lines = line_start(text, site_range.start)..line_end(text, site_range.end);
    Some(match at.instance {
        Instance::Named(_) => {
            if prelude.is_empty() {
                prelude = format!("{indent}pass\n");
            }
            Edit::replace(site_lines, prelude)
        }
        Instance::Anonymous => Edit::replace(site_lines.start..site_lines.start, prelude),
    })
}

/// The text at the class's place: its attributes and its methods as module-level code.
fn flat_class(
    script: &Script,
    shape: &Shape,
    members: &BTreeMap<String, String>,
) -> Option<String> {
    let text = script.text();
    let mut flat = String::new();
    for (name, value) in &shape.attributes {
        flat.push_str(&format!("{} = {}\n", members[*name], script.slice(*value)));
    }
    for (stmt, method) in &shape.methods {
        let mut inner = self_edits(method, members)?;
        inner.push(Edit::replace(
            span(&method.name),
            members[method.name.as_str()].clone(),
        ));
        inner.push(Edit::delete(self_param(text, method)?));
        flat.push_str(&body_at_indent_with(
            script,
            std::slice::from_ref(*stmt),
            "",
            inner,
        )?);
    }
    Some(flat)
}

/// Methods that never use their `self`, called once as `receiver.m(...)`, moved out of their
/// class as module-level functions: the call becomes `m(...)`, whatever built the receiver
/// (a test loader, a registry) goes with it, and `inline_calls` can take it from there.
fn detach_methods(script: &Script, scopes: &Scopes, exprs: &[&Expr]) -> Vec<Candidate> {
    let text = script.text();
    let names = crate::python::referenced_names(script.body());
    // Every variable of the script but the members of classes.
    let taken: HashSet<&str> = scopes
        .occurrences
        .iter()
        .filter(|o| {
            !(o.binds
                && o.scope
                    .is_some_and(|s| scopes.scopes[s].kind == ScopeKind::Class))
        })
        .map(|o| o.name)
        .collect();
    let mut out = Vec::new();
    for stmt in script.body() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        for (i, member) in class.body.iter().enumerate() {
            let Stmt::FunctionDef(method) = member else {
                continue;
            };
            let name = method.name.as_str();
            let Some(this) = first_param(method) else {
                continue;
            };
            let unused_self = !all_exprs(&method.body)
                .into_iter()
                .any(|e| is_name(e, this) || is_name(e, "super") || is_name(e, "__class__"));
            if method.is_async
                || !method.decorator_list.is_empty()
                || (name.starts_with("__") && name.ends_with("__"))
                || !unused_self
                || taken.contains(name)
                || names.iter().filter(|n| **n == name).count() != 1
            {
                continue;
            }
            // The one use: `receiver.m(...)`.
            let Some(call_target) = exprs.iter().find_map(|e| match e {
                Expr::Call(c) => match c.func.as_ref() {
                    Expr::Attribute(a) if a.attr.as_str() == name => Some(span(c.func.as_ref())),
                    _ => None,
                },
                _ => None,
            }) else {
                continue;
            };
            if span(stmt).contains(&call_target.start) {
                continue;
            }
            let Some(param) = self_param(text, method) else {
                continue;
            };
            let Some(function) = body_at_indent_with(
                script,
                std::slice::from_ref(member),
                "",
                vec![Edit::delete(param)],
            ) else {
                continue;
            };
            let after_class = line_end(text, span(stmt).end);
            out.push(Candidate::new(
                format!(
                    "detach {}.{name}() at {}",
                    class.name,
                    lines_label(text, &span(member))
                ),
                vec![
                    super::helpers::delete_stmt(script, &class.body, i, false),
                    Edit::replace(after_class..after_class, function),
                    Edit::replace(call_target, name.to_string()),
                ],
            ));
        }
    }
    out
}

/// Sorts out a class body; `None` when it holds what this pass cannot move.
fn shape<'a>(script: &Script, class: &'a ast::StmtClassDef) -> Option<Shape<'a>> {
    let dataclass = match class.decorator_list.as_slice() {
        [] => false,
        [d] if is_dataclass(&d.expression) => true,
        _ => return None,
    };
    if let Some(arguments) = &class.arguments
        && (!arguments.keywords.is_empty() || !arguments.args.iter().all(is_plain_base))
    {
        return None;
    }
    let mut shape = Shape {
        methods: Vec::new(),
        init: None,
        attributes: Vec::new(),
        fields: dataclass.then(Vec::new),
    };
    for (i, stmt) in class.body.iter().enumerate() {
        match stmt {
            Stmt::Expr(e) if i == 0 && matches!(e.value.as_ref(), Expr::StringLiteral(_)) => {}
            Stmt::Pass(_) => {}
            Stmt::FunctionDef(f) if !f.is_async && f.decorator_list.is_empty() => {
                first_param(f)?;
                match (f.name.as_str(), dataclass) {
                    ("__init__", false) | ("__post_init__", true) => shape.init = Some(f),
                    ("__init__", true) => return None,
                    _ => shape.methods.push((stmt, f)),
                }
            }
            Stmt::Assign(a) => match a.targets.as_slice() {
                [Expr::Name(n)] => shape.attributes.push((n.id.as_str(), &a.value)),
                _ => return None,
            },
            Stmt::AnnAssign(a) => {
                let Expr::Name(n) = a.target.as_ref() else {
                    return None;
                };
                match (&mut shape.fields, a.value.as_deref()) {
                    (Some(fields), value) => {
                        let default = match value {
                            Some(v) if is_field_call(v) => field_default(script, v)?,
                            Some(v) => Some(script.slice(v).to_string()),
                            None => None,
                        };
                        fields.push((n.id.as_str(), default));
                    }
                    (None, Some(value)) => shape.attributes.push((n.id.as_str(), value)),
                    (None, None) => {}
                }
            }
            _ => return None,
        }
    }
    Some(shape)
}

/// The module-level name of every member the class sets: attributes, fields, methods and
/// what `__init__` assigns to `self`. `None` when a method uses `self` other than to reach
/// one of them.
fn member_names(
    shape: &Shape,
    taken: &HashSet<&str>,
    init_names: &HashSet<&str>,
    prefix: &str,
) -> Option<BTreeMap<String, String>> {
    let mut names: Vec<&str> = shape.attributes.iter().map(|(n, _)| *n).collect();
    if let Some(fields) = &shape.fields {
        names.extend(fields.iter().map(|(n, _)| *n));
    }
    names.extend(shape.methods.iter().map(|(_, m)| m.name.as_str()));
    let methods = shape.methods.iter().map(|(_, m)| *m);
    for method in methods.clone().chain(shape.init) {
        let is_init = shape.init.is_some_and(|i| std::ptr::eq(i, method));
        let this = first_param(method)?;
        for e in all_exprs(&method.body) {
            if let Expr::Attribute(a) = e
                && is_name(&a.value, this)
                && a.ctx != ast::ExprContext::Load
            {
                if !is_init {
                    return None;
                }
                names.push(a.attr.as_str());
            }
        }
    }
    let mut used: HashSet<String> = taken
        .iter()
        .chain(init_names)
        .map(|s| s.to_string())
        .collect();
    let mut out = BTreeMap::new();
    for name in names {
        if out.contains_key(name) {
            continue;
        }
        let base = match name.trim_matches('_') {
            "" => "member",
            base => base,
        };
        let mut new = base.to_string();
        let mut n = 1;
        while used.contains(&new) || is_builtin_or_keyword(&new) {
            new = match n {
                1 => format!("{prefix}_{base}"),
                _ => format!("{prefix}_{base}{n}"),
            };
            n += 1;
        }
        used.insert(new.clone());
        out.insert(name.to_string(), new);
    }
    Some(out)
}

/// Edits turning every `self.member` in `method` into the member's module-level name;
/// `None` when `self` stands anywhere else or names a member the class does not set.
fn self_edits(
    method: &ast::StmtFunctionDef,
    members: &BTreeMap<String, String>,
) -> Option<Vec<Edit>> {
    let this = first_param(method)?;
    let exprs = all_exprs(&method.body);
    let mut edits = Vec::new();
    for e in &exprs {
        if let Expr::Attribute(a) = e
            && is_name(&a.value, this)
        {
            edits.push(Edit::replace(
                span(*e),
                members.get(a.attr.as_str())?.clone(),
            ));
        }
    }
    let uses = exprs.iter().filter(|e| is_name(e, this)).count();
    (uses == edits.len()).then_some(edits)
}

/// The range to delete to drop a method's `self` parameter, with the comma after it.
fn self_param(text: &str, method: &ast::StmtFunctionDef) -> Option<std::ops::Range<usize>> {
    let params = &method.parameters;
    if !params.posonlyargs.is_empty() {
        return None;
    }
    let first = span(params.args.first()?);
    let mut starts: Vec<usize> = params
        .args
        .iter()
        .skip(1)
        .chain(&params.kwonlyargs)
        .map(|p| p.start().to_usize())
        .chain(params.vararg.iter().map(|p| p.start().to_usize()))
        .chain(params.kwarg.iter().map(|p| p.start().to_usize()))
        .collect();
    starts.sort_unstable();
    match starts.first() {
        // `self, *, x` keeps its `*`: delete up to the next marker or parameter.
        Some(_) => {
            let comma = first.end + text[first.end..].find(',')?;
            let next = comma + 1 + text[comma + 1..].len() - text[comma + 1..].trim_start().len();
            Some(first.start..next)
        }
        None => {
            let rest = &text[first.end..];
            let trimmed = rest.trim_start();
            let end = if trimmed.starts_with(',') {
                first.end + rest.len() - trimmed.len() + 1
            } else {
                first.end
            };
            Some(first.start..end)
        }
    }
}

/// `__init__`'s parameters (its `self` left out) bound to a call's arguments and the
/// defaults, as `(name, value)` texts in parameter order.
fn bind_params(
    script: &Script,
    init: &ast::StmtFunctionDef,
    arguments: &ast::Arguments,
) -> Option<Vec<(String, String)>> {
    let params = &init.parameters;
    if params.vararg.is_some() || params.kwarg.is_some() {
        return None;
    }
    let slots: Vec<(&str, Option<String>)> = params
        .posonlyargs
        .iter()
        .chain(&params.args)
        .skip(1)
        .chain(&params.kwonlyargs)
        .map(|p| {
            let default = p.default.as_deref().map(|d| script.slice(d).to_string());
            (p.parameter.name.as_str(), default)
        })
        .collect();
    let positional = params.posonlyargs.len() + params.args.len() - 1;
    bind(script, &slots, positional, arguments)
}

/// A dataclass's fields bound to a call's arguments and the defaults.
fn bind_fields<'a>(
    script: &Script,
    fields: &[(&'a str, Option<String>)],
    arguments: &ast::Arguments,
) -> Option<Vec<(&'a str, String)>> {
    let bound = bind(script, fields, fields.len(), arguments)?;
    Some(
        fields
            .iter()
            .zip(bound)
            .map(|((name, _), (_, value))| (*name, value))
            .collect(),
    )
}

/// Slots (name, default) bound to arguments: the first `positional` take positional
/// arguments in order, any takes a keyword, the rest their default.
fn bind(
    script: &Script,
    slots: &[(&str, Option<String>)],
    positional: usize,
    arguments: &ast::Arguments,
) -> Option<Vec<(String, String)>> {
    let names: Vec<&str> = slots.iter().map(|(n, _)| *n).collect();
    let given = match_arguments(&names, positional, arguments)?;
    slots
        .iter()
        .zip(given)
        .map(|((name, default), value)| {
            let value = value
                .map(|v| script.slice(v).to_string())
                .or(default.clone())?;
            Some((name.to_string(), value))
        })
        .collect()
}

fn is_name(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Name(n) if n.id.as_str() == name)
}

/// `object`, `nn.Module`, `torch.nn.Module` or `Module`.
fn is_plain_base(expr: &Expr) -> bool {
    match expr {
        Expr::Name(n) => matches!(n.id.as_str(), "object" | "Module"),
        Expr::Attribute(a) => {
            a.attr.as_str() == "Module"
                && matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "nn")
                || a.attr.as_str() == "Module"
                    && matches!(a.value.as_ref(), Expr::Attribute(b)
                        if b.attr.as_str() == "nn" && is_name(&b.value, "torch"))
        }
        _ => false,
    }
}

/// `dataclass`, `dataclasses.dataclass`, or either called with options.
fn is_dataclass(expr: &Expr) -> bool {
    match expr {
        Expr::Call(c) => is_dataclass(&c.func),
        Expr::Name(n) => n.id.as_str() == "dataclass",
        Expr::Attribute(a) => a.attr.as_str() == "dataclass" && is_name(&a.value, "dataclasses"),
        _ => false,
    }
}

/// `field(...)` or `dataclasses.field(...)`.
fn is_field_call(expr: &Expr) -> bool {
    matches!(expr, Expr::Call(c) if match c.func.as_ref() {
        Expr::Name(n) => n.id.as_str() == "field",
        Expr::Attribute(a) => a.attr.as_str() == "field",
        _ => false,
    })
}

/// The default a dataclass `field(...)` gives: `default=v` → `v`, `default_factory=f` →
/// `f()`, neither → none (the field is required); `None` when it takes anything else.
fn field_default(script: &Script, call: &Expr) -> Option<Option<String>> {
    let Expr::Call(call) = call else {
        return None;
    };
    if !call.arguments.args.is_empty() {
        return None;
    }
    let mut default = None;
    for keyword in &call.arguments.keywords {
        let value = script.slice(&keyword.value);
        match keyword.arg.as_deref() {
            Some("default") => default = Some(value.to_string()),
            Some("default_factory") => default = Some(format!("{value}()")),
            Some("repr" | "compare" | "hash" | "init" | "kw_only" | "metadata") => {}
            _ => return None,
        }
    }
    Some(default)
}

/// `super().__init__(...)` as a statement.
fn is_super_init(stmt: &Stmt) -> bool {
    let Stmt::Expr(e) = stmt else {
        return false;
    };
    let Expr::Call(call) = e.value.as_ref() else {
        return false;
    };
    matches!(call.func.as_ref(), Expr::Attribute(a)
        if a.attr.as_str() == "__init__"
        && matches!(a.value.as_ref(), Expr::Call(s) if is_name(&s.func, "super")))
}

/// How many times the class body reads `super`.
fn count_super(body: &[Stmt]) -> usize {
    all_exprs(body)
        .into_iter()
        .filter(|e| is_name(e, "super"))
        .count()
}

/// Names that a flattened member must not take, although the script does not use them.
fn is_builtin_or_keyword(name: &str) -> bool {
    matches!(
        name,
        "print"
            | "len"
            | "range"
            | "list"
            | "dict"
            | "set"
            | "tuple"
            | "str"
            | "int"
            | "float"
            | "bool"
            | "type"
            | "id"
            | "input"
            | "object"
            | "super"
            | "iter"
            | "next"
            | "map"
            | "filter"
            | "zip"
            | "min"
            | "max"
            | "sum"
            | "abs"
            | "open"
            | "format"
            | "hash"
            | "vars"
            | "dir"
            | "getattr"
            | "setattr"
            | "hasattr"
            | "isinstance"
            | "call"
            | "None"
            | "True"
            | "False"
            | "class"
            | "def"
            | "return"
            | "lambda"
            | "pass"
            | "import"
            | "from"
            | "global"
            | "del"
            | "with"
            | "yield"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&FlattenClasses, text)
    }

    #[test]
    fn a_module_wrapper_becomes_module_level_code() {
        let text = "\
class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return self.fc(x)
net = Net(1024)
net(torch.randn(8, 4))
";
        assert_eq!(
            results(text),
            ["\
def forward(x):
    return fc(x)
width = 1024
fc = nn.Linear(width, width)
forward(torch.randn(8, 4))
"]
        );
    }

    #[test]
    fn a_dataclass_instance_becomes_its_fields() {
        let text = "\
@dataclass
class Point:
    x: int
    y: int = 0

    def norm(self):
        return self.x + self.y
print(Point(3).norm())
";
        assert_eq!(
            results(text),
            ["\
def norm():
    return x + y
x = 3
y = 0
print(norm())
"]
        );
    }

    #[test]
    fn a_taken_name_gets_the_instance_prefix() {
        let text = "\
class C:
    def __init__(self):
        self.x = 1
x = 2
c = C()
print(c.x, x)
";
        assert_eq!(results(text), ["x = 2\nc_x = 1\nprint(c_x, x)\n"]);
    }

    #[test]
    fn a_method_that_never_uses_self_is_detached_from_its_receiver() {
        let text = "\
class TestNorm(unittest.TestCase):
    def test_close(self):
        check(1)
suite = loader.load(TestNorm)
[*suite][0].test_close()
";
        assert_eq!(
            results(text),
            ["\
class TestNorm(unittest.TestCase):
    pass
def test_close():
    check(1)
suite = loader.load(TestNorm)
test_close()
"]
        );
    }

    #[test]
    fn an_instance_handed_to_a_call_becomes_its_forward() {
        let text = "\
class Net(nn.Module):
    def forward(self, x):
        return x
f = torch.compile(Net(), fullgraph=True)
";
        assert_eq!(
            results(text),
            ["def forward(x):\n    return x\nf = torch.compile(forward, fullgraph=True)\n"]
        );
    }

    #[test]
    fn classes_it_cannot_flatten_stay() {
        for text in [
            // Instantiated twice.
            "class C:\n    pass\na = C()\nb = C()\n",
            // The instance escapes.
            "class C:\n    pass\nc = C()\nf(c)\n",
            // An inherited member.
            "class C(nn.Module):\n    def forward(self, x):\n        return self.training\nC()(1)\n",
            // A method that sets state.
            "class C:\n    def bump(self):\n        self.n = 1\nc = C()\nc.bump()\n",
            // `self` escapes.
            "class C:\n    def me(self):\n        return self\nc = C()\nc.me()\n",
            // Instantiated inside a function.
            "class C:\n    pass\ndef f():\n    return C()\n",
            // Another base.
            "class C(Base):\n    pass\nc = C()\n",
        ] {
            assert!(results(text).is_empty(), "{text}");
        }
    }
}
