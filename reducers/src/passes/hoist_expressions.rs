//! Replace an expression by one of its sub-expressions.
//!
//! ## What it removes
//! The operator, call or container around a sub-expression: `f(g(x))` → `g(x)`,
//! `a.b.c` → `a.b`, `x + y` → `x`, `[x, y]` → `x`, `s if c else t` → `s`. A sub-expression that
//! is not atomic is wrapped in parentheses so that it binds as the whole did.
//!
//! ## Example
//! ```python
//! total = sum(normalize(w) for w in weights) / len(weights)   # before
//! total = len(weights)                                         # one candidate after
//! ```
//!
//! ## When it cannot apply
//! Names and literals have no sub-expressions; starred sub-expressions are skipped.

use super::{largest_first, line_of};
use crate::edit::{Candidate, Edit};
use crate::pass::Pass;
use crate::python::{Expr, Script, SourceOrderVisitor, all_exprs, source_order, span};

pub struct HoistExpressions;

impl Pass for HoistExpressions {
    fn name(&self) -> &'static str {
        "hoist_expressions"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for expr in all_exprs(script.body()) {
            let outer = span(expr);
            for child in children(expr) {
                if matches!(child, Expr::Starred(_)) {
                    continue;
                }
                let inner = script.slice(child);
                if inner.len() >= outer.len() {
                    continue;
                }
                let replacement = if is_atomic(child) {
                    inner.to_string()
                } else {
                    format!("({inner})")
                };
                out.push(Candidate::new(
                    format!(
                        "replace `{}` by `{}` at line {}",
                        short(script.slice(expr)),
                        short(inner),
                        line_of(text, outer.start)
                    ),
                    vec![Edit::replace(outer.clone(), replacement)],
                ));
            }
        }
        largest_first(&mut out);
        out
    }
}

/// The direct sub-expressions of `expr`.
fn children(expr: &Expr) -> Vec<&Expr> {
    struct Direct<'a>(Vec<&'a Expr>);
    impl<'a> SourceOrderVisitor<'a> for Direct<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            self.0.push(expr);
        }
    }
    let mut direct = Direct(Vec::new());
    source_order::walk_expr(&mut direct, expr);
    direct.0
}

/// Whether `expr` can stand anywhere an expression can without parentheses.
fn is_atomic(expr: &Expr) -> bool {
    match expr {
        Expr::Tuple(t) => t.parenthesized,
        Expr::Generator(g) => g.parenthesized,
        Expr::Name(_)
        | Expr::Attribute(_)
        | Expr::Call(_)
        | Expr::Subscript(_)
        | Expr::NumberLiteral(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_)
        | Expr::FString(_)
        | Expr::List(_)
        | Expr::Dict(_)
        | Expr::Set(_)
        | Expr::ListComp(_)
        | Expr::SetComp(_)
        | Expr::DictComp(_) => true,
        _ => false,
    }
}

/// The first line of a code snippet, cut to 40 characters, for descriptions.
fn short(code: &str) -> String {
    let line = code.lines().next().unwrap_or("");
    let cut: String = line.chars().take(40).collect();
    if cut.len() < code.len() {
        format!("{cut}…")
    } else {
        cut
    }
}
