//! A recursion keeps its way out.
//!
//! On 3.12, a `@functools.cache` function recursing 500 deep raises `RecursionError` under
//! `sys.setrecursionlimit(2000)`: the cache's C wrapper counts against a limit the call does
//! not raise. `def fib(n): return fib(1)` raises the same error for any limit: a recursion
//! with no way out, the script's own mistake; so does `fib(3)` inside `fib`, past a way out it
//! never takes, and `fib(n - 2)` from an even `n` once `if n < 1: return 0` is gone. A
//! function that calls itself (by name, or as `self.name`) keeps every `return` and `raise`
//! that does not, a path that leaves before it calls itself, and a call of itself with
//! something that moves (not only literals, nor its own parameters as received).
//!
//! The rule holds where the original's `RecursionError` came short of the recursion limit
//! ([`crate::Options::bounded_recursion`]); one that ran up to it (a dependency cycle walked
//! for ever) is an endless recursion itself, and may become `def visit(n): visit(n)`.

use std::collections::BTreeMap;

use crate::python::{
    Expr, Script, Stmt, all_bodies, all_exprs, ast, child_bodies, exprs_of, literal_only, span,
};

/// The recursions of a script: how many never end, and the ways out of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recursions {
    /// How many functions call themselves on every path through their body, or with
    /// nothing that moves.
    pub endless: usize,
    /// For each function that calls itself, by name, how many of its `return` and `raise`
    /// statements do not.
    pub ways_out: BTreeMap<String, usize>,
}

impl Recursions {
    pub fn of(script: &Script) -> Recursions {
        let mut out = Recursions::default();
        for def in functions(script) {
            let name = def.name.as_str();
            if !calls_anywhere(&def.body, name) {
                continue;
            }
            if always_calls(&def.body, name) || stalls(def) {
                out.endless += 1;
            }
            *out.ways_out.entry(name.to_string()).or_default() += ways_out(&def.body, name);
        }
        out
    }

    /// Whether `candidate` has no more endless recursions than these, and each function that
    /// still calls itself has as many ways out: with `if n < 1: return 0` deleted,
    /// `fib(n - 2)` from an even `n` steps past `if n == 1: return 1` for ever.
    pub fn keeps(&self, candidate: &Script) -> bool {
        let now = Recursions::of(candidate);
        now.endless <= self.endless
            && now
                .ways_out
                .iter()
                .all(|(name, n)| self.ways_out.get(name).is_none_or(|before| n >= before))
    }
}

fn functions(script: &Script) -> impl Iterator<Item = &ast::StmtFunctionDef> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(def) => Some(def),
            _ => None,
        })
}

/// Whether `body` calls `name` anywhere (conditionally or not).
fn calls_anywhere(body: &[Stmt], name: &str) -> bool {
    all_exprs(body)
        .into_iter()
        .any(|e| matches!(e, Expr::Call(c) if is_itself(&c.func, name)))
}

/// How many `return` and `raise` statements of `body` do not call `name`.
fn ways_out(body: &[Stmt], name: &str) -> usize {
    all_bodies(body)
        .into_iter()
        .flatten()
        .filter(|stmt| {
            matches!(stmt, Stmt::Return(_) | Stmt::Raise(_))
                && !all_exprs(std::slice::from_ref(*stmt))
                    .into_iter()
                    .any(|e| matches!(e, Expr::Call(c) if is_itself(&c.func, name)))
        })
        .count()
}

/// Whether `func` names the function `name` itself (or `self.name`).
fn is_itself(func: &Expr, name: &str) -> bool {
    match func {
        Expr::Name(n) => n.id.as_str() == name,
        Expr::Attribute(a) => {
            a.attr.as_str() == name && matches!(&*a.value, Expr::Name(n) if n.id.as_str() == "self")
        }
        _ => false,
    }
}

/// Whether `def` calls itself with nothing that moves: every argument a literal
/// (`fib(3)` inside `fib`), or its own parameters as it received them (`fib(n)`).
fn stalls(def: &ast::StmtFunctionDef) -> bool {
    let name = def.name.as_str();
    let params: Vec<&str> = def
        .parameters
        .posonlyargs
        .iter()
        .chain(&def.parameters.args)
        .map(|p| p.parameter.name.as_str())
        .filter(|p| *p != "self")
        .collect();
    all_exprs(&def.body).into_iter().any(|e| {
        let Expr::Call(call) = e else { return false };
        let itself = is_itself(&call.func, name);
        let args = &call.arguments;
        let literal = args.keywords.is_empty() && args.args.iter().all(literal_only);
        let unchanged = args.keywords.is_empty()
            && !params.is_empty()
            && args.args.len() == params.len()
            && args
                .args
                .iter()
                .zip(&params)
                .all(|(a, p)| matches!(a, Expr::Name(n) if n.id.as_str() == *p));
        itself && (literal || unchanged)
    })
}

/// Whether every path through `body` reaches a call of `name` before it leaves.
fn always_calls(body: &[Stmt], name: &str) -> bool {
    for stmt in body {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::If(s) => {
                if calls(&s.test, name) {
                    return true;
                }
                let branches: Vec<&[Stmt]> = std::iter::once(&s.body[..])
                    .chain(s.elif_else_clauses.iter().map(|c| &c.body[..]))
                    .collect();
                let has_else = s.elif_else_clauses.last().is_some_and(|c| c.test.is_none());
                if has_else && branches.iter().all(|b| always_calls(b, name)) {
                    return true;
                }
                if branches.iter().any(|b| leaves(b, name)) {
                    return false;
                }
            }
            Stmt::For(s) if calls(&s.iter, name) => return true,
            Stmt::While(s) if calls(&s.test, name) => return true,
            // A loop's body may not run; what follows it decides.
            Stmt::For(_) | Stmt::While(_) => {}
            Stmt::With(s) => {
                if s.items.iter().any(|i| calls(&i.context_expr, name)) {
                    return true;
                }
                if always_calls(&s.body, name) {
                    return true;
                }
                if leaves(&s.body, name) {
                    return false;
                }
            }
            Stmt::Return(_) | Stmt::Raise(_) => return calls_in(&own_exprs(stmt), name),
            _ => {
                if calls_in(&own_exprs(stmt), name) {
                    return true;
                }
                if matches!(stmt, Stmt::Try(_) | Stmt::Match(_)) {
                    // Too many paths to follow: taken as a way out.
                    return false;
                }
            }
        }
    }
    false
}

/// Whether some statement in `body`, at any depth, returns or raises without a call of `name`.
fn leaves(body: &[Stmt], name: &str) -> bool {
    all_bodies(body).into_iter().flatten().any(|stmt| {
        matches!(stmt, Stmt::Return(_) | Stmt::Raise(_)) && !calls_in(&own_exprs(stmt), name)
    })
}

/// The expressions a statement evaluates itself (a compound statement's header's), at every
/// depth.
fn own_exprs(stmt: &Stmt) -> Vec<&Expr> {
    all_exprs(std::slice::from_ref(stmt))
        .into_iter()
        .filter(|e| !inside_nested_body(stmt, e))
        .collect()
}

/// Whether `expr` lies in a statement nested in `stmt`'s bodies (not its header).
fn inside_nested_body(stmt: &Stmt, expr: &Expr) -> bool {
    let r = span(expr);
    child_bodies(stmt)
        .into_iter()
        .flatten()
        .any(|s| span(s).start <= r.start && r.end <= span(s).end)
}

/// Whether evaluating `expr` always calls `name` (see [`calls_in`]).
fn calls(expr: &Expr, name: &str) -> bool {
    calls_in(&exprs_of(expr), name)
}

/// Whether evaluating `exprs` (an expression and all inside it) always calls `name` (or
/// `self.name`): not only in one branch of a conditional expression, after the first operand
/// of `and`/`or`, or in a lambda or a comprehension's body.
fn calls_in(exprs: &[&Expr], name: &str) -> bool {
    let conditional: Vec<std::ops::Range<usize>> = exprs
        .iter()
        .flat_map(|e| match e {
            Expr::If(x) => vec![span(&*x.body), span(&*x.orelse)],
            Expr::BoolOp(x) => x.values[1..].iter().map(span).collect(),
            Expr::Lambda(x) => vec![span(&*x.body)],
            Expr::ListComp(x) => vec![span(&*x.elt)],
            Expr::SetComp(x) => vec![span(&*x.elt)],
            Expr::Generator(x) => vec![span(x)],
            Expr::DictComp(x) => vec![span(x)],
            _ => Vec::new(),
        })
        .collect();
    exprs.iter().any(|e| {
        let Expr::Call(call) = e else { return false };
        let r = span(*e);
        is_itself(&call.func, name)
            && !conditional
                .iter()
                .any(|c| c.start <= r.start && r.end <= c.end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    fn endless_in(text: &str) -> usize {
        Recursions::of(&parse(text)).endless
    }

    #[test]
    fn a_recursion_keeps_its_way_out() {
        let fib = "from functools import cache\n@cache\ndef fib(n):\n    if n < 1: return 0\n    if n == 1: return 1\n    return fib(n - 1) + fib(n - 2)\nfib(500)\n";
        assert_eq!(endless_in(fib), 0);
        assert_eq!(endless_in("def fib(n):\n    return fib(1)\nfib(1)\n"), 1);
        assert_eq!(
            endless_in("def fib(n):\n    x = fib(n - 1)\n    return x\n"),
            1
        );
        assert_eq!(
            endless_in("def fib(n):\n    if n < 1:\n        pass\n    return fib(n - 1)\n"),
            1
        );
        // Ways out: a branch, a conditional expression, a loop that may not run, falling through.
        for text in [
            "def f(n):\n    if n > 0:\n        f(n - 1)\n",
            "def f(n):\n    return 1 if n < 2 else n * f(n - 1)\n",
            "def f(n):\n    return n < 2 or f(n - 1)\n",
            "def walk(node):\n    for child in node.children:\n        walk(child)\n",
            "class V:\n    def visit(self, node):\n        if node is None:\n            raise ValueError(node)\n        return self.visit(node.left)\n",
            "def f():\n    g()\n",
        ] {
            assert_eq!(endless_in(text), 0, "{text}");
        }
        assert_eq!(
            endless_in("class V:\n    def visit(self, node):\n        return self.visit(node)\n"),
            1
        );
        // A call of itself that moves nothing, past a way out.
        assert_eq!(
            endless_in("def fib(n):\n    if n == 1: return 1\n    return fib(3)\nfib(3)\n"),
            1
        );
        assert_eq!(
            endless_in("def fib(n):\n    if n == 1: return 1\n    return fib(n)\n"),
            1
        );
        assert_eq!(
            endless_in("def fib(n):\n    if n == 1: return 1\n    return fib(n - 1)\n"),
            0
        );
    }

    #[test]
    fn a_recursion_keeps_every_way_out() {
        let fib = Recursions::of(&parse(
            "def fib(n):\n    if n < 1: return 0\n    if n == 1: return 1\n    return fib(n - 1) + fib(n - 2)\nfib(500)\n",
        ));
        assert_eq!(fib.ways_out["fib"], 2);
        let one_less =
            parse("def fib(n):\n    if n == 1: return 1\n    return fib(n - 2)\nfib(250)\n");
        assert!(!fib.keeps(&one_less));
        let shorter = parse(
            "def fib(n):\n    if n < 1: return 0\n    if n == 1: return 1\n    return fib(n - 2)\nfib(250)\n",
        );
        assert!(fib.keeps(&shorter));
        // Gone, or no longer recursive: nothing to keep.
        assert!(fib.keeps(&parse("fib = 1\n")));
        assert!(fib.keeps(&parse("def fib(n):\n    return 1\n")));
        assert_eq!(
            endless_in("def f(n):\n    if n:\n        f(n)\n    else:\n        return f(0)\n"),
            1
        );
    }
}
