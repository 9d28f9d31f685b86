//! Fold the instances of a dataclass into the values they were built from.
//!
//! ## What it removes
//! The instance between a value and the code that reads it, for a module-level dataclass
//! `C` whose body holds only fields (annotated names) and
//! methods, with no `__init__` or `__post_init__`:
//! - `C(args).f` becomes the argument given for the field `f` (or its default);
//! - `v.f`, where `v` is bound once, by `v = C(args)` at module level, and read only as
//!   `v.f`, becomes that argument when `v.f` is read once at module level, or the argument
//!   is a literal or a name;
//! - `C(args).m()`, where the method `m` is `def m(self): return e`, becomes `e` (in
//!   parentheses) with each `self.f` replaced by the argument for `f`.
//!
//! Once no code reads it, the class goes with `delete_definitions`: how a list of data
//! records unrolled into its uses leaves its class behind.
//!
//! ## Example
//! ```python
//! @dataclass                                   # before
//! class Line:
//!     qty: int
//!     price: Decimal
//!     def net(self):
//!         return self.price * self.qty
//! total = Line(3, Decimal("12.45")).net()
//!
//! @dataclass                                   # after
//! class Line:
//!     qty: int
//!     price: Decimal
//!     def net(self):
//!         return self.price * self.qty
//! total = (Decimal("12.45") * 3)
//! ```
//!
//! ## When it cannot apply
//! - The class: decorated other than with a plain `dataclass` (or with `init=False`), with
//!   bases, or with a body holding anything but fields, methods and a docstring; a field
//!   left to a default that is not a literal or a name (`field(default_factory=list)`).
//! - The reads: an argument read more than once that is not a literal or a name (it would be
//!   computed twice); a call with `*` or `**` arguments; a method with parameters besides
//!   `self`, with more than its `return`, or that reads `self` other than as `self.f` for a
//!   field; `v.f` inside a function or class; an instance read other than as `v.f` (handed
//!   to a call, it may change), and a field of it that is assigned or is the object of an
//!   attribute or subscript (`v.lines.append(x)` changes it).
//! - A value that an f-string's field cannot hold under the script's Python version (before
//!   3.12, the f-string's own quotes: `f"{inv.number}"` with `number="A-1"`).

use std::collections::HashMap;
use std::ops::Range;

use super::helpers::{f_strings, first_param, fits_f_strings, match_arguments};
use crate::edit::{Candidate, Edit, apply_edits_within, line_of};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, exprs_of, is_literal, span};

pub struct FoldDataclasses;

impl Pass for FoldDataclasses {
    /// A method's expression may be longer than its call (`Line(3, p).gross()`): it is kept
    /// when deletion then gets further (the class, once nothing builds it).
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("fold_dataclasses")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let classes: HashMap<&str, Record> = script
            .body()
            .iter()
            .filter_map(|s| match s {
                Stmt::ClassDef(c) => Some((c.name.as_str(), Record::of(script, c)?)),
                _ => None,
            })
            .collect();
        if classes.is_empty() {
            return Vec::new();
        }
        let text = script.text();
        let mut out = Vec::new();
        // `C(args).f` and `C(args).m()`.
        for expr in all_exprs(script.body()) {
            let (attribute, method) = match expr {
                Expr::Attribute(a) => (a, false),
                Expr::Call(c) if c.arguments.is_empty() => match c.func.as_ref() {
                    Expr::Attribute(a) => (a, true),
                    _ => continue,
                },
                _ => continue,
            };
            let Expr::Call(built) = attribute.value.as_ref() else {
                continue;
            };
            let Some((record, given)) = record_of(script, &classes, built) else {
                continue;
            };
            let name = attribute.attr.as_str();
            let folded = if method {
                record.method_value(script, name, &given)
            } else {
                given.get(name).map(|v| v.text.clone())
            };
            if let Some(value) = folded {
                out.push(Candidate::new(
                    format!(
                        "fold `.{name}{}` of a `{}` built at line {}",
                        if method { "()" } else { "" },
                        record.name,
                        line_of(text, span(expr).start)
                    ),
                    vec![Edit::replace(span(expr), value)],
                ));
            }
        }
        out.extend(bound_instances(script, &classes));
        // A value folded into an f-string's field must fit there (its quotes, before 3.12).
        let f_strings = f_strings(script);
        out.retain(|c| fits_f_strings(script, &f_strings, &c.edits));
        out
    }
}

/// A dataclass this pass can see through.
struct Record<'a> {
    name: &'a str,
    /// The fields in order, with the text of their default.
    fields: Vec<(&'a str, Option<&'a str>)>,
    /// The methods that only return an expression, by name: `self`'s name and the expression.
    methods: HashMap<&'a str, (&'a str, &'a Expr)>,
}

/// An argument of a construction: its text in parentheses where needed, and whether it may
/// be written more than once.
struct Given {
    text: String,
    simple: bool,
}

impl<'a> Record<'a> {
    fn of(script: &'a Script, class: &'a ast::StmtClassDef) -> Option<Record<'a>> {
        let [decorator] = class.decorator_list.as_slice() else {
            return None;
        };
        if !is_plain_dataclass(&decorator.expression) || class.arguments.is_some() {
            return None;
        }
        let mut record = Record {
            name: class.name.as_str(),
            fields: Vec::new(),
            methods: HashMap::new(),
        };
        for (i, stmt) in class.body.iter().enumerate() {
            match stmt {
                Stmt::Expr(e) if i == 0 && matches!(e.value.as_ref(), Expr::StringLiteral(_)) => {}
                Stmt::AnnAssign(a) => {
                    let Expr::Name(n) = a.target.as_ref() else {
                        return None;
                    };
                    // A default that is no literal or name (`field(...)`) is never folded.
                    let default = a
                        .value
                        .as_deref()
                        .filter(|v| is_literal(v) || matches!(v, Expr::Name(_)))
                        .map(|v| script.slice(v));
                    record.fields.push((n.id.as_str(), default));
                }
                Stmt::FunctionDef(f) => {
                    if matches!(f.name.as_str(), "__init__" | "__post_init__") {
                        return None;
                    }
                    let params = &f.parameters;
                    let only_self = params.posonlyargs.len() + params.args.len() == 1
                        && params.kwonlyargs.is_empty()
                        && params.vararg.is_none()
                        && params.kwarg.is_none();
                    if let (true, false, [Stmt::Return(r)]) =
                        (only_self, f.is_async, f.body.as_slice())
                        && f.decorator_list.is_empty()
                        && let (Some(value), Some(this)) = (r.value.as_deref(), first_param(f))
                    {
                        record.methods.insert(f.name.as_str(), (this, value));
                    }
                }
                _ => return None,
            }
        }
        Some(record)
    }

    /// The arguments of `call` by field, defaults included; `None` when they do not bind.
    fn given(&self, script: &Script, call: &ast::ExprCall) -> Option<HashMap<&'a str, Given>> {
        let names: Vec<&str> = self.fields.iter().map(|(n, _)| *n).collect();
        let args = match_arguments(&names, names.len(), &call.arguments)?;
        let mut out = HashMap::new();
        for ((name, default), arg) in self.fields.iter().zip(args) {
            let given = match (arg, default) {
                (Some(arg), _) => Given {
                    text: script.operand(arg),
                    simple: is_literal(arg) || matches!(arg, Expr::Name(_)),
                },
                (None, Some(default)) => Given {
                    text: default.to_string(),
                    simple: true,
                },
                (None, None) => continue,
            };
            out.insert(*name, given);
        }
        Some(out)
    }

    /// The value of the method `name` on an instance built from `given`: its expression with
    /// `self.f` replaced by the arguments.
    fn method_value(
        &self,
        script: &Script,
        name: &str,
        given: &HashMap<&str, Given>,
    ) -> Option<String> {
        let (this, value) = self.methods.get(name)?;
        let inner = exprs_of(value);
        let mut edits = Vec::new();
        let mut uses: HashMap<&str, usize> = HashMap::new();
        let mut covered: Vec<Range<usize>> = Vec::new();
        for e in &inner {
            match e {
                Expr::Attribute(a) if matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == *this) =>
                {
                    let field = given.get(a.attr.as_str())?;
                    *uses.entry(a.attr.as_str()).or_default() += 1;
                    if uses[a.attr.as_str()] > 1 && !field.simple {
                        return None;
                    }
                    edits.push(Edit::replace(span(*e), field.text.clone()));
                    covered.push(span(&*a.value));
                }
                // `self` other than as `self.f`: the instance itself is needed.
                Expr::Name(n) if n.id.as_str() == *this && !covered.contains(&span(*e)) => {
                    return None;
                }
                Expr::Lambda(_) | Expr::Named(_) => return None,
                _ => {}
            }
        }
        let code = apply_edits_within(script.text(), span(*value), &edits)?;
        Some(format!("({code})"))
    }
}

/// The record `call` builds and its arguments by field.
fn record_of<'s, 'a>(
    script: &Script,
    classes: &'s HashMap<&'a str, Record<'a>>,
    call: &ast::ExprCall,
) -> Option<(&'s Record<'a>, HashMap<&'a str, Given>)> {
    let Expr::Name(class) = call.func.as_ref() else {
        return None;
    };
    let record = classes.get(class.id.as_str())?;
    let given = record.given(script, call)?;
    Some((record, given))
}

/// `v.f` for `v = C(args)` bound once at module level, read at module level.
fn bound_instances(script: &Script, classes: &HashMap<&str, Record>) -> Vec<Candidate> {
    let text = script.text();
    let exprs = all_exprs(script.body());
    let mut stores: HashMap<&str, usize> = HashMap::new();
    for e in &exprs {
        if let Expr::Name(n) = e
            && super::helpers::is_target(e)
        {
            *stores.entry(n.id.as_str()).or_default() += 1;
        }
    }
    // The expressions of module-level code outside functions and classes, and the objects
    // of attributes (`v.lines` in `v.lines.append(x)`).
    let module: Vec<&Expr> = script
        .body()
        .iter()
        .filter(|s| !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        .flat_map(|s| all_exprs(std::slice::from_ref(s)))
        .collect();
    let objects: Vec<Range<usize>> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Attribute(a) => Some(span(&*a.value)),
            Expr::Subscript(s) if super::helpers::is_target(e) => Some(span(&*s.value)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for stmt in script.body() {
        let Stmt::Assign(assign) = stmt else { continue };
        let ([Expr::Name(v)], Expr::Call(call)) = (assign.targets.as_slice(), &*assign.value)
        else {
            continue;
        };
        if stores.get(v.id.as_str()) != Some(&1) {
            continue;
        }
        let Some((record, given)) = record_of(script, classes, call) else {
            continue;
        };
        // The instance must not escape (`check(v)`) nor change (`v.lines.append(x)`,
        // `v.total = 0`): its fields then still hold what it was built from.
        let names = exprs
            .iter()
            .filter(|e| matches!(e, Expr::Name(n) if n.id == v.id))
            .count();
        let reads: Vec<(&ast::ExprAttribute, Range<usize>)> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Attribute(a) if matches!(a.value.as_ref(), Expr::Name(n) if n.id == v.id) => {
                    Some((a, span(*e)))
                }
                _ => None,
            })
            .collect();
        let changed = |attr: &str| {
            reads.iter().any(|(b, r)| {
                b.attr.as_str() == attr && (objects.contains(r) || b.ctx != ast::ExprContext::Load)
            })
        };
        if names != reads.len() + 1 {
            continue;
        }
        for (a, range) in &reads {
            let Some(field) = given.get(a.attr.as_str()) else {
                continue;
            };
            let times = reads.iter().filter(|(b, _)| b.attr == a.attr).count();
            let at_module = module.iter().any(|e| span(*e) == *range);
            if !at_module || changed(a.attr.as_str()) || (times > 1 && !field.simple) {
                continue;
            }
            out.push(Candidate::new(
                format!(
                    "fold `{}.{}` of the `{}` bound at line {}",
                    v.id,
                    a.attr,
                    record.name,
                    line_of(text, span(stmt).start)
                ),
                vec![Edit::replace(range.clone(), field.text.clone())],
            ));
        }
    }
    out
}

/// How many constructions of the script's dataclasses raise `TypeError` at once: an argument
/// for no field (`Config(d_model=64)` once the `d_model` field is deleted), too many
/// positional ones, or a field without a default left out. Only module-level dataclasses
/// without bases and without an `__init__` are judged, whose fields the class body shows.
pub(crate) fn misfit_constructions(script: &Script) -> usize {
    let mut classes: HashMap<&str, (Vec<&str>, usize)> = HashMap::new();
    for stmt in script.body() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        if class.arguments.is_some()
            || !class
                .decorator_list
                .iter()
                .any(|d| is_plain_dataclass(&d.expression))
        {
            continue;
        }
        let mut fields = Vec::new();
        let mut required = 0;
        let mut judged = true;
        for stmt in &class.body {
            match stmt {
                Stmt::AnnAssign(a) => {
                    let annotation = script.slice(&*a.annotation);
                    if annotation.contains("KW_ONLY") || annotation.contains("InitVar") {
                        judged = false;
                    }
                    if annotation.contains("ClassVar") {
                        continue;
                    }
                    let Expr::Name(n) = a.target.as_ref() else {
                        continue;
                    };
                    if a.value.is_none() && required == fields.len() {
                        required += 1;
                    }
                    fields.push(n.id.as_str());
                }
                Stmt::FunctionDef(f) if f.name.as_str() == "__init__" => judged = false,
                _ => {}
            }
        }
        if judged {
            classes.insert(class.name.as_str(), (fields, required));
        }
    }
    if classes.is_empty() {
        return 0;
    }
    all_exprs(script.body())
        .into_iter()
        .filter(|e| {
            let Expr::Call(call) = e else { return false };
            let Expr::Name(n) = call.func.as_ref() else {
                return false;
            };
            let Some((fields, required)) = classes.get(n.id.as_str()) else {
                return false;
            };
            match match_arguments(fields, fields.len(), &call.arguments) {
                Some(given) => given[..*required].iter().any(Option::is_none),
                None => true,
            }
        })
        .count()
}

/// `@dataclass`, `@dataclasses.dataclass` or either called without `init=False`.
fn is_plain_dataclass(expr: &Expr) -> bool {
    match expr {
        Expr::Call(c) => {
            c.arguments.args.is_empty()
                && c.arguments
                    .keywords
                    .iter()
                    .all(|k| k.arg.as_deref() != Some("init"))
                && is_plain_dataclass(&c.func)
        }
        Expr::Name(n) => n.id.as_str() == "dataclass",
        Expr::Attribute(a) => {
            a.attr.as_str() == "dataclass"
                && matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "dataclasses")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn misfits(text: &str) -> usize {
        misfit_constructions(&Script::parse(text, Default::default()).unwrap())
    }

    #[test]
    fn a_construction_that_does_not_fit_the_fields_is_counted() {
        let class =
            "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int\n    b: int = 2\n";
        assert_eq!(misfits(&format!("{class}C(1)\nC(a=1, b=3)\n")), 0);
        // A field that is gone, one too many, a required one left out.
        assert_eq!(
            misfits(&format!("{class}C(1, d=4)\nC(1, 2, 3)\nC(b=3)\n")),
            3
        );
        // A class whose fields the body does not show is not judged.
        let custom = "from dataclasses import dataclass\n@dataclass\nclass C(Base):\n    a: int\nC(1, 2, 3)\n";
        assert_eq!(misfits(custom), 0);
    }

    #[test]
    fn a_value_with_the_f_strings_own_quotes_is_folded_into_its_field_from_python_3_12_on() {
        use crate::python::PythonVersion;
        let text = "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: str\nc = C(\"x\")\nprint(f\"{c.a}\")\n";
        let folds = |version| {
            let script = Script::parse(text, version).unwrap();
            FoldDataclasses
                .candidates(&script)
                .iter()
                .map(|c| c.apply(text).unwrap())
                .collect::<Vec<_>>()
        };
        assert!(folds(PythonVersion::PY311).is_empty());
        assert_eq!(
            folds(PythonVersion::PY312),
            [text.replace("{c.a}", "{\"x\"}")]
        );
    }
}
