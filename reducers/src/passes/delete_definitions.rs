//! Delete unused functions and classes, and decorators.
//!
//! ## What it removes
//! First all functions and classes whose name is never used, at once; then each alone; then
//! each decorator line.
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

use std::collections::HashSet;

use super::{combine, lines_label};
use crate::edit::{Candidate, Edit, deletion_range};
use crate::pass::Pass;
use crate::python::{Script, Stmt, all_bodies, ast, referenced_names, span};

pub struct DeleteDefinitions;

impl Pass for DeleteDefinitions {
    fn name(&self) -> &'static str {
        "delete_definitions"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let used: HashSet<&str> = referenced_names(script.body()).into_iter().collect();
        let mut unused = Vec::new();
        let mut decorators = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let (name, decorator_list): (&str, &[ast::Decorator]) = match stmt {
                    Stmt::FunctionDef(d) => (d.name.as_str(), &d.decorator_list),
                    Stmt::ClassDef(d) => (d.name.as_str(), &d.decorator_list),
                    _ => continue,
                };
                let label = lines_label(text, &span(stmt));
                // A body of one statement is left to delete_statements, which puts `pass` there.
                if !used.contains(name) && body.len() > 1 {
                    unused.push(Candidate::new(
                        format!("delete unused {name} at {label}"),
                        vec![Edit::delete(deletion_range(text, span(stmt)))],
                    ));
                }
                for d in decorator_list {
                    decorators.push(Candidate::new(
                        format!(
                            "delete decorator of {name} at {}",
                            lines_label(text, &span(d))
                        ),
                        vec![Edit::delete(deletion_range(text, span(d)))],
                    ));
                }
            }
        }
        let mut out: Vec<Candidate> = combine("delete all unused definitions", &unused)
            .into_iter()
            .collect();
        out.extend(unused);
        out.extend(decorators);
        out
    }
}
