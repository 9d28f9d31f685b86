//! Drop the names an unpacking binds that no code reads, with the values they took.
//!
//! ## What it removes
//! In an assignment that unpacks a display into names (`a, b = x, y`), a name that nothing in
//! its scope reads goes with the element it took; with one name left, the assignment is a plain
//! one (`a = x`). First all of the statement's unread names at once, then each alone. Where
//! the value is no display (`dtype, offset = fields['age']`), the unread names become `_`.
//!
//! ## Example
//! ```python
//! p, g = (torch.tensor(1.0, requires_grad=True), torch.tensor(0.0))    # before
//! p.backward()
//!
//! p = torch.tensor(1.0, requires_grad=True)                              # after
//! p.backward()
//! ```
//!
//! ## When it cannot apply
//! Targets that are not all plain names (`self.a, b = …`, `*rest`), a display value with a
//! starred element or not as many elements (a value that is no display gets `_`); several targets
//! (`a, b = c, d = …`); a statement whose every name is unread (deleting statements covers
//! it); a script that calls `locals()`, `globals()`, `vars()`, `eval` or `exec`, which may read
//! any name.

use crate::edit::{Candidate, Edit, lines_label};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, ast, span};
use crate::scopes::Scopes;

pub struct DropTargets;

/// Calls that may read any variable of their scope.
const READS_ANY: &[&str] = &["locals(", "globals(", "vars(", "eval(", "exec("];

impl Pass for DropTargets {
    fn info(&self) -> PassInfo {
        PassInfo::new("drop_targets")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        if READS_ANY.iter().any(|call| script.text().contains(call)) {
            return Vec::new();
        }
        let scopes = Scopes::of(script.body());
        let mut candidates = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                if let Some(pairs) = unpacking(stmt) {
                    candidates.extend(drops(script, &scopes, stmt, &pairs));
                } else {
                    candidates.extend(placeholders(script, &scopes, stmt));
                }
            }
        }
        candidates
    }
}

/// The names and the elements they take, for `a, b = x, y` with plain names and as many
/// unstarred elements.
fn unpacking(stmt: &Stmt) -> Option<Vec<(&str, &Expr)>> {
    let Stmt::Assign(assign) = stmt else {
        return None;
    };
    let [target] = &assign.targets[..] else {
        return None;
    };
    let (names, values) = (elements(target)?, elements(&assign.value)?);
    if names.len() != values.len() || values.iter().any(Expr::is_starred_expr) {
        return None;
    }
    names
        .iter()
        .zip(values)
        .map(|(name, value)| match name {
            Expr::Name(n) => Some((n.id.as_str(), value)),
            _ => None,
        })
        .collect()
}

fn elements(expr: &Expr) -> Option<&[Expr]> {
    match expr {
        Expr::Tuple(t) => Some(&t.elts),
        Expr::List(l) => Some(&l.elts),
        _ => None,
    }
}

/// The candidates for one unpacking: its unread names all at once, then each alone.
fn drops(script: &Script, scopes: &Scopes, stmt: &Stmt, pairs: &[(&str, &Expr)]) -> Vec<Candidate> {
    let range = span(stmt);
    let scope = scopes.innermost_at(range.start);
    let unread: Vec<usize> = (0..pairs.len())
        .filter(|&i| !is_read(scopes, pairs[i].0, scope))
        .collect();
    if unread.is_empty() || unread.len() == pairs.len() {
        return Vec::new();
    }
    let mut groups = vec![unread.clone()];
    if unread.len() > 1 {
        groups.extend(unread.iter().map(|&i| vec![i]));
    }
    groups
        .into_iter()
        .map(|dropped| {
            let kept: Vec<&(&str, &Expr)> = pairs
                .iter()
                .enumerate()
                .filter(|(i, _)| !dropped.contains(i))
                .map(|(_, pair)| pair)
                .collect();
            let names: Vec<&str> = dropped.iter().map(|&i| pairs[i].0).collect();
            Candidate::new(
                format!(
                    "drop the unread {} at {}",
                    names.join(", "),
                    lines_label(script.text(), &range)
                ),
                vec![Edit::replace(range.clone(), assignment(script, &kept))],
            )
        })
        .collect()
}

/// For `a, b = f()`, whose value is no display to take elements from: the unread names as
/// `_` (`dtype, _ = x.dtype.fields['age']`), all at once. A name already `_` stays; a
/// statement whose every name is unread is left to the deletion of statements.
fn placeholders(script: &Script, scopes: &Scopes, stmt: &Stmt) -> Option<Candidate> {
    let Stmt::Assign(assign) = stmt else {
        return None;
    };
    let [target] = &assign.targets[..] else {
        return None;
    };
    let names: Vec<&ast::ExprName> = elements(target)?
        .iter()
        .map(|e| e.as_name_expr())
        .collect::<Option<_>>()?;
    let scope = scopes.innermost_at(span(stmt).start);
    let (read, unread): (Vec<&ast::ExprName>, Vec<&ast::ExprName>) = names
        .into_iter()
        .partition(|n| is_read(scopes, n.id.as_str(), scope));
    let unread: Vec<&ast::ExprName> = unread
        .into_iter()
        .filter(|n| !n.id.as_str().starts_with('_'))
        .collect();
    if unread.is_empty() || read.is_empty() {
        return None;
    }
    let dropped: Vec<&str> = unread.iter().map(|n| n.id.as_str()).collect();
    Some(Candidate::new(
        format!(
            "name the unread {} `_` at {}",
            dropped.join(", "),
            lines_label(script.text(), &span(stmt))
        ),
        unread
            .iter()
            .map(|n| Edit::replace(span(*n), "_".to_string()))
            .collect(),
    ))
}

/// `a = x` for one pair, `a, b = x, y` for more.
fn assignment(script: &Script, kept: &[&(&str, &Expr)]) -> String {
    let names: Vec<&str> = kept.iter().map(|(name, _)| *name).collect();
    let values: Vec<&str> = kept.iter().map(|(_, value)| script.slice(*value)).collect();
    format!("{} = {}", names.join(", "), values.join(", "))
}

/// Whether `name`, bound in `scope`, is read anywhere that resolves to that scope.
fn is_read(scopes: &Scopes, name: &str, scope: Option<usize>) -> bool {
    scopes
        .occurrences
        .iter()
        .any(|o| o.name == name && !o.binds && scopes.resolve_occurrence(o) == scope)
}
