//! Divisions by zero that a rewrite put in: `x / 0.0`, or `logits / self.temperature` once the
//! temperature shrank from `0.3` to `0.0`.
//!
//! No person writes a division by zero, and a value shrunk to one makes infinities (or a
//! `ZeroDivisionError`) of any input: the result then fails for any program, as a call of
//! `None` does. [`zero_divisions`] counts them, with the checks that check nothing (see
//! [`crate::tautology::empty_checks`]): the loop refuses a candidate with more than the script
//! it started from.
//!
//! A divisor counts when it is a literal zero, or a name or attribute whose every binding in
//! the script gives zero. Bindings are matched by identifier, not by object: `temperature`
//! in `cfg.temperature`, `self.temperature = temperature`, a parameter `temperature` and a
//! class attribute `temperature = 0.0` are one. That is coarse on purpose, on the side of
//! caution: any binding of the identifier that is not zero, or that the script does not show
//! (a loop target, `+=`, a parameter of a function called nowhere in the script, an instance
//! called as a function), keeps it from counting.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, span};
use crate::scopes::Scopes;

/// How many divisions (`/`, `//`, `%`) of `script` divide by zero: a literal, or a name or
/// attribute every binding of which gives zero (see the module's documentation).
pub fn zero_divisions(script: &Script) -> usize {
    let divisors: Vec<&Expr> = all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::BinOp(b)
                if matches!(
                    b.op,
                    ast::Operator::Div | ast::Operator::FloorDiv | ast::Operator::Mod
                ) =>
            {
                Some(&*b.right)
            }
            _ => None,
        })
        .collect();
    if divisors.is_empty() {
        return 0;
    }
    let zeros = zero_identifiers(script);
    divisors.into_iter().filter(|d| is_zero(d, &zeros)).count()
}

/// Whether `e` is zero: a number literal of zero (`0`, `0.0`, `-0.0`), or a name or attribute
/// whose identifier is among `zeros`.
fn is_zero(e: &Expr, zeros: &HashSet<&str>) -> bool {
    match e {
        Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => i.as_u64() == Some(0),
            ast::Number::Float(f) => *f == 0.0,
            ast::Number::Complex { real, imag } => *real == 0.0 && *imag == 0.0,
        },
        Expr::UnaryOp(u) => is_zero(&u.operand, zeros),
        Expr::Name(n) => zeros.contains(n.id.as_str()),
        Expr::Attribute(a) => zeros.contains(a.attr.as_str()),
        _ => false,
    }
}

/// What one binding of an identifier gives: `Some(value)`, or `None` where the script does
/// not show it.
type Binding<'a> = (&'a str, Option<&'a Expr>);

/// The identifiers every binding of which gives zero: the largest such set (an identifier
/// bound to itself through a parameter, `self.t = t`, stays in it while its other bindings
/// are zero).
fn zero_identifiers(script: &Script) -> HashSet<&str> {
    let bindings = bindings(script);
    let mut zeros: HashSet<&str> = bindings.iter().map(|(id, _)| *id).collect();
    loop {
        let mut next = zeros.clone();
        for (id, value) in &bindings {
            if !value.is_some_and(|v| is_zero(v, &zeros)) {
                next.remove(id);
            }
        }
        if next == zeros {
            return zeros;
        }
        zeros = next;
    }
}

/// Every binding of a name or attribute in `script`: assignments (their value when the target
/// is the whole of it), parameters (the arguments the script's calls pass, or their default),
/// keyword arguments, and every other binding (loop targets, imports, `+=`, …) as unknown.
fn bindings(script: &Script) -> Vec<Binding<'_>> {
    let stmts: Vec<&Stmt> = all_bodies(script.body()).into_iter().flatten().collect();
    let mut assigned: HashMap<Range<usize>, &Expr> = HashMap::new();
    for stmt in &stmts {
        let (targets, value): (&[Expr], &Expr) = match stmt {
            Stmt::Assign(a) => (&a.targets, &a.value),
            Stmt::AnnAssign(a) => match a.value.as_deref() {
                Some(value) => (std::slice::from_ref(&*a.target), value),
                None => continue,
            },
            _ => continue,
        };
        for target in targets {
            assigned.insert(span(target), value);
        }
    }
    let parameters = parameter_values(script, &stmts);
    let mut out: Vec<Binding> = Scopes::of(script.body())
        .occurrences
        .into_iter()
        .filter(|o| o.binds)
        .flat_map(|o| match parameters.get(&o.range) {
            Some(values) => values.clone(),
            None => vec![(o.name, assigned.get(&o.range).copied())],
        })
        .collect();
    for e in all_exprs(script.body()) {
        match e {
            Expr::Attribute(a) if !a.ctx.is_load() => {
                out.push((a.attr.as_str(), assigned.get(&span(a)).copied()));
            }
            Expr::Call(c) => out.extend(
                c.arguments
                    .keywords
                    .iter()
                    .filter_map(|k| Some((k.arg.as_ref()?.as_str(), Some(&k.value)))),
            ),
            _ => {}
        }
    }
    out
}

/// The bindings of each parameter of the script's functions, by the range of its name: what
/// each call of the function in the script passes it, or its default; unknown where a call
/// cannot be read (`*args`, `**kwargs`) or nothing calls it. A function is called by its name,
/// a method by `.name(…)`, `__init__` by its class's name.
fn parameter_values<'a>(
    script: &'a Script,
    stmts: &[&'a Stmt],
) -> HashMap<Range<usize>, Vec<Binding<'a>>> {
    let calls: Vec<&ast::ExprCall> = all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(c) => Some(c),
            _ => None,
        })
        .collect();
    let mut out = HashMap::new();
    let mut methods = HashSet::new();
    for stmt in stmts {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        for s in &class.body {
            if let Stmt::FunctionDef(f) = s {
                methods.insert(span(f).start);
                add_parameters(&mut out, f, Some(class.name.as_str()), &calls);
            }
        }
    }
    for stmt in stmts {
        if let Stmt::FunctionDef(f) = stmt
            && !methods.contains(&span(f).start)
        {
            add_parameters(&mut out, f, None, &calls);
        }
    }
    out
}

/// The bindings of `f`'s parameters (see [`parameter_values`]); `class` is the class `f` is a
/// method of.
fn add_parameters<'a>(
    out: &mut HashMap<Range<usize>, Vec<Binding<'a>>>,
    f: &'a ast::StmtFunctionDef,
    class: Option<&str>,
    calls: &[&'a ast::ExprCall],
) {
    let name = f.name.as_str();
    let (calls, skip): (Vec<&ast::ExprCall>, usize) = match class {
        Some(class) if name == "__init__" => (called(calls, |e| is_name(e, class)), 1),
        Some(_) => (
            called(
                calls,
                |e| matches!(e, Expr::Attribute(a) if a.attr.as_str() == name),
            ),
            1,
        ),
        None => (called(calls, |e| is_name(e, name)), 0),
    };
    let positional: Vec<&ast::ParameterWithDefault> = f
        .parameters
        .posonlyargs
        .iter()
        .chain(&f.parameters.args)
        .collect();
    let all = positional
        .iter()
        .enumerate()
        .map(|(i, p)| (Some(i), *p))
        .chain(f.parameters.kwonlyargs.iter().map(|p| (None, p)));
    for (position, p) in all {
        let id = p.parameter.name.as_str();
        let mut values: Vec<Binding> = calls
            .iter()
            .map(|c| {
                (
                    id,
                    passed(c, position.and_then(|i| i.checked_sub(skip)), id),
                )
            })
            .map(|(id, value)| (id, value.or(p.default.as_deref())))
            .collect();
        if calls.is_empty() || calls.iter().any(|c| unreadable(c)) {
            values.push((id, None));
        }
        out.insert(span(&p.parameter.name), values);
    }
    for variadic in [&f.parameters.vararg, &f.parameters.kwarg]
        .into_iter()
        .flatten()
    {
        out.insert(span(&variadic.name), vec![(variadic.name.as_str(), None)]);
    }
}

fn called<'a>(
    calls: &[&'a ast::ExprCall],
    callee: impl Fn(&Expr) -> bool,
) -> Vec<&'a ast::ExprCall> {
    calls.iter().copied().filter(|c| callee(&c.func)).collect()
}

fn is_name(e: &Expr, name: &str) -> bool {
    matches!(e, Expr::Name(n) if n.id.as_str() == name)
}

/// What call `c` passes the parameter `id` at `position` (among the arguments it is given).
fn passed<'a>(c: &'a ast::ExprCall, position: Option<usize>, id: &str) -> Option<&'a Expr> {
    position.and_then(|i| c.arguments.args.get(i)).or_else(|| {
        c.arguments
            .keywords
            .iter()
            .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == id))
            .map(|k| &k.value)
    })
}

/// Whether `c` passes arguments that cannot be matched with parameters: `*args`, `**kwargs`.
fn unreadable(c: &ast::ExprCall) -> bool {
    c.arguments
        .args
        .iter()
        .any(|a| matches!(a, Expr::Starred(_)))
        || c.arguments.keywords.iter().any(|k| k.arg.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn zeros(text: &str) -> usize {
        zero_divisions(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_division_by_a_literal_zero_counts() {
        assert_eq!(zeros("y = x / 0.0\nz = x // 0\nw = x % -0.0\n"), 3);
        assert_eq!(zeros("y = x / 0.3\nz = x * 0.0\nw = 0.0 / x\n"), 0);
    }

    #[test]
    fn a_temperature_shrunk_to_zero_counts_through_an_instance() {
        let class = "class Config:\n    temperature = T\nclass Soft:\n    def __init__(self, temperature):\n        self.temperature = temperature\n    def forward(self, x):\n        return x / self.temperature\ncfg = Config()\ns = Soft(cfg.temperature)\n";
        assert_eq!(zeros(&class.replace('T', "0.0")), 1);
        assert_eq!(zeros(&class.replace('T', "0.3")), 0);
        assert_eq!(zeros("t = 0\nt += 1\ny = x / t\n"), 0);
        assert_eq!(zeros("t = 0\ny = x / t\n"), 1);
        assert_eq!(zeros("def f(x, t=0.0):\n    return x / t\nf(1.0)\n"), 1);
        assert_eq!(
            zeros("def f(x, t=0.0):\n    return x / t\nf(1.0, 0.5)\n"),
            0
        );
        assert_eq!(zeros("def f(x, t):\n    return x / t\n"), 0);
        assert_eq!(zeros("def f(x, t):\n    return x / t\nf(*a)\n"), 0);
        assert_eq!(zeros("for t in [0, 1]:\n    y = x / t\n"), 0);
        assert_eq!(
            zeros("c = Config(temperature=0.0)\ny = x / c.temperature\n"),
            1
        );
        assert_eq!(
            zeros("c = Config(temperature=0.0)\nc.temperature = 2.0\ny = x / c.temperature\n"),
            0
        );
    }
}
