//! Delete unused functions and classes, and decorators.
//!
//! ## What it removes
//! First all functions and classes whose name is never used, at once (a block left empty
//! gets `pass`); then each alone; then each decorator line, leaving the comments above it.
//!
//! ## Example
//! ```python
//! @functools.lru_cache()      # the decorator goes
//! def load(): ...
//! def unused_helper(): ...    # the definition goes
//! ```
//!
//! ## When it cannot apply
//! Names are matched textually: a method used only as `obj.name` counts as used, and a
//! name used only by `getattr(obj, "name")` counts as unused (the oracle then says no).
//! `@staticmethod` and `@classmethod` stay: they say what kind of method it is.

use std::collections::HashSet;

use super::helpers::{combine, delete_stmts};
use crate::edit::{Candidate, Edit, deletion_range, lines_label, own_lines};
use crate::pass::{Pass, PassInfo};
use crate::python::{Script, Stmt, all_bodies, ast, referenced_names, span};

pub struct DeleteDefinitions;

impl Pass for DeleteDefinitions {
    fn info(&self) -> PassInfo {
        PassInfo::new("delete_definitions")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let used: HashSet<&str> = referenced_names(script.body()).into_iter().collect();
        let mut unused = Vec::new();
        let mut all_parts = Vec::new();
        let mut decorators = Vec::new();
        for (b, body) in all_bodies(script.body()).into_iter().enumerate() {
            let mut dead = Vec::new();
            for stmt in body {
                let (name, decorator_list): (&str, &[ast::Decorator]) = match stmt {
                    Stmt::FunctionDef(d) => (d.name.as_str(), &d.decorator_list),
                    Stmt::ClassDef(d) => (d.name.as_str(), &d.decorator_list),
                    _ => continue,
                };
                if !used.contains(name) {
                    dead.push(Candidate::new(
                        format!("delete unused {name} at {}", lines_label(text, &span(stmt))),
                        vec![Edit::delete(deletion_range(text, span(stmt)))],
                    ));
                }
                // `@staticmethod` and `@classmethod` say what kind of method it is: without
                // them, `forward(ctx, x)` of an autograd `Function` reads as a mistake.
                let kind = |d: &&ast::Decorator| matches!(&d.expression, ast::Expr::Name(n) if matches!(n.id.as_str(), "staticmethod" | "classmethod"));
                for d in decorator_list.iter().filter(|d| !kind(d)) {
                    // The comments above a decorator describe what it decorates: they stay.
                    decorators.push(Candidate::new(
                        format!(
                            "delete decorator of {name} at {}",
                            lines_label(text, &span(d))
                        ),
                        vec![Edit::delete(own_lines(text, span(d)))],
                    ));
                }
            }
            // Deleting them all at once must not empty a block: `pass` is left in it.
            if b > 0 && dead.len() == body.len() {
                all_parts.push(Candidate::new("", vec![delete_stmts(script, body, true)]));
            } else {
                all_parts.extend(dead.iter().cloned());
            }
            // A body of one statement is left to delete_statements, which puts `pass` there.
            if body.len() > 1 {
                unused.extend(dead);
            }
        }
        let mut out: Vec<Candidate> = combine("delete all unused definitions", &all_parts)
            .into_iter()
            .collect();
        out.extend(unused);
        out.extend(decorators);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::{PythonVersion, is_valid};

    #[test]
    fn deleting_every_unused_method_of_a_class_leaves_pass() {
        let text = "def f(): pass\nclass C:\n    def a(self): pass\n    def b(self): pass\nC()\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let all = &DeleteDefinitions.candidates(&script)[0];
        assert_eq!(all.description, "delete all unused definitions");
        let after = all.apply(text).unwrap();
        assert!(is_valid(&after, PythonVersion::PY311), "{after}");
    }
}
