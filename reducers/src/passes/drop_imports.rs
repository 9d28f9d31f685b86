//! Drop unused imports, then any import.
//!
//! ## What it removes
//! First every import whose bound name is never used, all at once; then each unused one
//! alone (a name out of `from m import a, b`, or the whole statement when none of its names
//! is used); then each import statement, used or not — an import the failure needs for its
//! side effects stays because the oracle says so.
//!
//! ## Example
//! ```python
//! import json, os      # before, with only os used
//! import os            # after
//! ```
//!
//! ## When it cannot apply
//! Star imports bind nothing visible and are only tried as whole statements.

use std::collections::HashSet;

use super::{combine, lines_label};
use crate::edit::{Candidate, Edit, deletion_range};
use crate::pass::Pass;
use crate::python::{Script, Stmt, all_bodies, ast, referenced_names, span};

pub struct DropImports;

impl Pass for DropImports {
    fn name(&self) -> &'static str {
        "drop_imports"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let used: HashSet<&str> = referenced_names(script.body()).into_iter().collect();
        let mut unused = Vec::new();
        let mut whole = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let aliases: &[ast::Alias] = match stmt {
                    Stmt::Import(s) => &s.names,
                    Stmt::ImportFrom(s) => &s.names,
                    _ => continue,
                };
                let label = lines_label(text, &span(stmt));
                let stmt_edit = || Edit::delete(deletion_range(text, span(stmt)));
                whole.push(Candidate::new(
                    format!("drop import at {label}"),
                    vec![stmt_edit()],
                ));
                let dead: Vec<usize> = (0..aliases.len())
                    .filter(|&i| {
                        aliases[i].name.as_str() != "*" && !used.contains(bound_name(&aliases[i]))
                    })
                    .collect();
                if dead.len() == aliases.len() {
                    unused.push(Candidate::new(
                        format!("drop unused import at {label}"),
                        vec![stmt_edit()],
                    ));
                } else {
                    for i in dead {
                        let name = bound_name(&aliases[i]);
                        unused.push(Candidate::new(
                            format!("drop unused name {name} from import at {label}"),
                            vec![Edit::delete(alias_range(aliases, i))],
                        ));
                    }
                }
            }
        }
        let mut out: Vec<Candidate> = combine("drop all unused imports", &unused)
            .into_iter()
            .collect();
        out.extend(unused);
        out.extend(whole);
        out
    }
}

/// The name an import binds: `b` for `import a as b`, `a` for `import a.b.c`.
fn bound_name(alias: &ast::Alias) -> &str {
    match &alias.asname {
        Some(asname) => asname.as_str(),
        None => alias.name.as_str().split('.').next().unwrap_or(""),
    }
}

/// The range that removes alias `i` and one comma next to it.
fn alias_range(aliases: &[ast::Alias], i: usize) -> std::ops::Range<usize> {
    let this = span(&aliases[i]);
    if i + 1 < aliases.len() {
        this.start..span(&aliases[i + 1]).start
    } else {
        span(&aliases[i - 1]).end..this.end
    }
}
