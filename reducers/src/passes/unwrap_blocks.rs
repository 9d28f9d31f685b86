//! Replace a compound statement by one of its bodies.
//!
//! ## What it removes
//! The header and the other branches of `if`/`elif`/`else`, `for`, `while`, `with`, `try`
//! (body, a handler, `else` or `finally`) and `match`, keeping one body, re-indented to where
//! the statement stood; the comment lines directly above the kept body stay with it, and the
//! insides of multi-line strings keep their indentation. Functions and classes are left to
//! other passes.
//!
//! The statement can also become its header expression alone (the test of an `if` or
//! `while`, the iterable of a `for`, a context manager of a `with`), for failures raised
//! while evaluating it.
//!
//! ## Example
//! ```python
//! if args.verbose:          # before
//!     check(table)
//! check(table)              # after
//! args.verbose              # another candidate
//! ```
//!
//! ## When it cannot apply
//! A statement that does not start its own line, a one-line body with several lines of
//! continuation after its header, or a loop body with a `break` or `continue` of that loop.

use super::helpers::{body_at_indent, largest_first};
use crate::edit::{
    Candidate, Edit, indent_at, line_end, line_of, line_start, lines_label, starts_line,
};
use crate::pass::{Pass, PassInfo};
use crate::python::{Script, Stmt, TextRange, all_bodies, ast, child_bodies, span};

pub struct UnwrapBlocks;

impl Pass for UnwrapBlocks {
    fn info(&self) -> PassInfo {
        PassInfo::new("unwrap_blocks")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let range = span(stmt);
                if !starts_line(text, range.start) {
                    continue;
                }
                let indent = indent_at(text, range.start);
                let lines = line_start(text, range.start)..line_end(text, range.end);
                let label = lines_label(text, &range);
                for clause in clauses(text, stmt) {
                    // Out of its loop, a `break` or `continue` does not compile.
                    if clause.is_loop_body && clause.body.iter().any(leaves_loop) {
                        continue;
                    }
                    let Some(replacement) = body_at_indent(script, clause.body, indent) else {
                        continue;
                    };
                    out.push(Candidate::new(
                        format!(
                            "unwrap {} at {label} to its {}",
                            clause.keyword, clause.name
                        ),
                        vec![Edit::replace(lines.clone(), replacement)],
                    ));
                }
                // The header alone: the failure may be in evaluating it, not in the body.
                for expr in header_exprs(stmt) {
                    let code = script.slice(expr);
                    out.push(Candidate::new(
                        format!(
                            "replace {} at {label} by its header expression",
                            keyword(stmt)
                        ),
                        vec![Edit::replace(lines.clone(), format!("{indent}{code}\n"))],
                    ));
                }
            }
        }
        largest_first(&mut out);
        out
    }
}

/// The expressions a compound statement evaluates before its body: the test of `if` and
/// `while`, the iterable of `for`, the context managers of `with`.
fn header_exprs(stmt: &Stmt) -> Vec<&crate::python::Expr> {
    match stmt {
        Stmt::If(s) => vec![&*s.test],
        Stmt::While(s) => vec![&*s.test],
        Stmt::For(s) => vec![&*s.iter],
        Stmt::With(s) => s.items.iter().map(|i| &i.context_expr).collect(),
        _ => Vec::new(),
    }
}

fn keyword(stmt: &Stmt) -> &'static str {
    match stmt {
        Stmt::If(_) => "if",
        Stmt::While(_) => "while",
        Stmt::For(_) => "for",
        Stmt::With(_) => "with",
        _ => "statement",
    }
}

/// One body of a compound statement, named for descriptions.
struct Clause<'a> {
    keyword: &'static str,
    name: String,
    body: &'a [Stmt],
    is_loop_body: bool,
}

/// The bodies of `stmt` that it can be replaced by; none for functions, classes and simple
/// statements.
fn clauses<'a>(text: &str, stmt: &'a Stmt) -> Vec<Clause<'a>> {
    let at = |range: TextRange| line_of(text, range.start().to_usize());
    let clause = |keyword, name: String, body: &'a [Stmt], is_loop_body| Clause {
        keyword,
        name,
        body,
        is_loop_body,
    };
    let mut out = Vec::new();
    match stmt {
        Stmt::If(s) => {
            out.push(clause("if", "body".into(), &s.body, false));
            for c in &s.elif_else_clauses {
                let name = match c.test {
                    Some(_) => format!("elif body at line {}", at(c.range)),
                    None => "else body".into(),
                };
                out.push(clause("if", name, &c.body, false));
            }
        }
        Stmt::For(s) => {
            out.push(clause("for", "body".into(), &s.body, true));
            out.push(clause("for", "else body".into(), &s.orelse, false));
        }
        Stmt::While(s) => {
            out.push(clause("while", "body".into(), &s.body, true));
            out.push(clause("while", "else body".into(), &s.orelse, false));
        }
        Stmt::With(s) => out.push(clause("with", "body".into(), &s.body, false)),
        Stmt::Try(s) => {
            out.push(clause("try", "body".into(), &s.body, false));
            for h in &s.handlers {
                let ast::ExceptHandler::ExceptHandler(h) = h;
                let name = format!("except body at line {}", at(h.range));
                out.push(clause("try", name, &h.body, false));
            }
            out.push(clause("try", "else body".into(), &s.orelse, false));
            out.push(clause("try", "finally body".into(), &s.finalbody, false));
        }
        Stmt::Match(s) => {
            for c in &s.cases {
                let name = format!("case at line {}", at(c.range));
                out.push(clause("match", name, &c.body, false));
            }
        }
        _ => {}
    }
    out.retain(|c| !c.body.is_empty());
    out
}

/// Whether `stmt` holds a `break` or `continue` of the loop around it.
pub(crate) fn leaves_loop(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Break(_) | Stmt::Continue(_) => true,
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => false,
        // Only a loop's `else` body can leave the loop around it.
        Stmt::For(s) => s.orelse.iter().any(leaves_loop),
        Stmt::While(s) => s.orelse.iter().any(leaves_loop),
        _ => child_bodies(stmt).into_iter().flatten().any(leaves_loop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unwrapped(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&UnwrapBlocks, text)
    }

    #[test]
    fn a_loop_body_with_break_or_continue_stays_in_its_loop() {
        let text = "for x in xs:\n    if x:\n        continue\n    use(x)\n";
        assert!(!unwrapped(text).iter().any(|t| t.starts_with("if x:")));
        let nested = "while a:\n    for x in xs:\n        break\n    use(a)\n";
        assert!(
            unwrapped(nested)
                .iter()
                .any(|t| t.starts_with("for x in xs:"))
        );
    }

    #[test]
    fn the_comment_above_the_kept_body_stays() {
        let text = "if a:\n    x = 1\nelse:\n    # why\n    x = 2\n";
        assert!(unwrapped(text).contains(&"# why\nx = 2\n".to_string()));
    }

    #[test]
    fn a_statement_can_become_its_header_expression() {
        assert!(
            unwrapped("for x in load(path):\n    use(x)\n").contains(&"load(path)\n".to_string())
        );
        assert!(unwrapped("with open(p) as f:\n    f.read()\n").contains(&"open(p)\n".to_string()));
    }

    #[test]
    fn the_lines_of_a_multi_line_string_keep_their_indentation() {
        let text = "if a:\n    s = \"\"\"\n    text\n    \"\"\"\n";
        assert!(unwrapped(text).contains(&"s = \"\"\"\n    text\n    \"\"\"\n".to_string()));
    }
}
