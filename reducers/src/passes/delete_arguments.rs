//! Delete call arguments and keyword arguments.
//!
//! ## What it removes
//! For every call, first all of its arguments at once, then each positional or keyword
//! argument alone with its comma, the longest first.
//!
//! ## Example
//! ```python
//! parse(text, strict=True, encoding="utf-8")   # before
//! parse(text, strict=True)                     # after
//! ```
//!
//! ## When it cannot apply
//! Calls without arguments.

use super::{largest_first, line_of};
use crate::edit::{Candidate, Edit};
use crate::pass::Pass;
use crate::python::{Expr, Ranged, Script, all_exprs, span};

pub struct DeleteArguments;

impl Pass for DeleteArguments {
    fn name(&self) -> &'static str {
        "delete_arguments"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Call(call) = expr else { continue };
            let items: Vec<_> = call
                .arguments
                .iter_source_order()
                .map(|a| span(&a.range()))
                .collect();
            let line = line_of(text, span(expr).start);
            let callee = script.slice(&*call.func);
            if items.len() > 1 {
                out.push(Candidate::new(
                    format!("delete all arguments of {callee}() at line {line}"),
                    vec![Edit::replace(span(&call.arguments), "()")],
                ));
            }
            for (i, item) in items.iter().enumerate() {
                let range = if i + 1 < items.len() {
                    item.start..items[i + 1].start
                } else if i > 0 {
                    items[i - 1].end..item.end
                } else {
                    item.clone()
                };
                out.push(Candidate::new(
                    format!("delete argument {} of {callee}() at line {line}", i + 1),
                    vec![Edit::delete(range)],
                ));
            }
        }
        largest_first(&mut out);
        out
    }
}
