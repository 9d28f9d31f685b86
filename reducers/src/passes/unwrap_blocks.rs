//! Replace a compound statement by one of its bodies.
//!
//! ## What it removes
//! The header and the other branches of `if`/`elif`/`else`, `for`, `while`, `with`, `try`
//! (body, a handler, `else` or `finally`) and `match`, keeping one body, re-indented to where
//! the statement stood. Functions and classes are left to other passes.
//!
//! ## Example
//! ```python
//! if args.verbose:          # before
//!     check(table)
//! check(table)              # after
//! ```
//!
//! ## When it cannot apply
//! A statement that does not start its own line, or a one-line body with several lines of
//! continuation after its header.

use super::{body_at_indent, largest_first, lines_label};
use crate::edit::{Candidate, Edit, indent_at, line_end, line_start, starts_line};
use crate::pass::Pass;
use crate::python::{Script, Stmt, all_bodies, child_bodies, span};

pub struct UnwrapBlocks;

impl Pass for UnwrapBlocks {
    fn name(&self) -> &'static str {
        "unwrap_blocks"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                if matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                    continue;
                }
                let range = span(stmt);
                if !starts_line(text, range.start) {
                    continue;
                }
                let indent = indent_at(text, range.start);
                let lines = line_start(text, range.start)..line_end(text, range.end);
                let label = lines_label(text, &range);
                for (k, inner) in child_bodies(stmt).into_iter().enumerate() {
                    let Some(replacement) = body_at_indent(script, inner, indent) else {
                        continue;
                    };
                    out.push(Candidate::new(
                        format!("unwrap {} at {label} to body {k}", keyword(stmt)),
                        vec![Edit::replace(lines.clone(), replacement)],
                    ));
                }
            }
        }
        largest_first(&mut out);
        out
    }
}

fn keyword(stmt: &Stmt) -> &'static str {
    match stmt {
        Stmt::If(_) => "if",
        Stmt::For(_) => "for",
        Stmt::While(_) => "while",
        Stmt::With(_) => "with",
        Stmt::Try(_) => "try",
        Stmt::Match(_) => "match",
        _ => "statement",
    }
}
