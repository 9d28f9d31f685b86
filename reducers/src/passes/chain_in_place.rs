//! Chain a tensor's in-place method into the next statement's read of the tensor.
//!
//! ## What it removes
//! A statement that only calls an in-place method of a tensor bound to a name, `x.mul_(2)`,
//! when the next statement of its block reads `x`: the call takes the place of that read (an
//! in-place method returns the tensor it changed), and the statement goes. Once `x` is read
//! only once, `propagate_values` puts its value in place: the chain a person writes for a
//! one-line repro. One candidate per statement.
//!
//! ## Example
//! ```python
//! x = torch.ones(1, requires_grad=True).sigmoid()     # before
//! x.mul_(2)
//! x.sum().backward()
//!
//! x = torch.ones(1, requires_grad=True).sigmoid()     # after
//! x.mul_(2).sum().backward()
//! ```
//!
//! ## When it cannot apply
//! A script that imports nothing from torch; a method whose name does not end in one `_`
//! (torch's in-place spelling: `add_`, `zero_`, `requires_grad_`), or called on anything but
//! a name; a next statement that is compound (`if`, `for`, `def` …), that reads `x` only in a
//! nested function or lambda, or that binds `x` before reading it.

use super::helpers::{delete_stmt, short};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, child_bodies, exprs_of, span};
use crate::torch::torch_imports;

pub struct ChainInPlace;

impl Pass for ChainInPlace {
    fn info(&self) -> PassInfo {
        PassInfo::new("chain_in_place")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        if torch_imports(script).is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            let is_module = std::ptr::eq(body, script.body());
            for (i, pair) in body.windows(2).enumerate() {
                let Some((name, call)) = in_place_call(&pair[0]) else {
                    continue;
                };
                let Some(read) = first_read(&pair[1], name) else {
                    continue;
                };
                let code = script.slice(call);
                out.push(Candidate::new(
                    format!(
                        "chain `{}` into line {}",
                        short(code),
                        line_of(script.text(), read.start)
                    ),
                    vec![
                        delete_stmt(script, body, i, is_module),
                        Edit::replace(read, code.to_string()),
                    ],
                ));
            }
        }
        out
    }
}

/// The receiver's name and the call of a statement `name.method_(…)`.
fn in_place_call(stmt: &Stmt) -> Option<(&str, &Expr)> {
    let Stmt::Expr(s) = stmt else { return None };
    let Expr::Call(call) = s.value.as_ref() else {
        return None;
    };
    let Expr::Attribute(a) = call.func.as_ref() else {
        return None;
    };
    let Expr::Name(receiver) = a.value.as_ref() else {
        return None;
    };
    is_in_place(a.attr.as_str()).then_some((receiver.id.as_str(), s.value.as_ref()))
}

/// Whether `method` is spelled as torch spells an in-place method: one `_` at the end.
fn is_in_place(method: &str) -> bool {
    method
        .strip_suffix('_')
        .is_some_and(|stem| !stem.is_empty() && !stem.starts_with('_') && !stem.ends_with('_'))
}

/// The range of the first read of `name` in the simple statement `stmt` (in an assignment, in
/// its value), when no binding of `name` or lambda comes before it.
fn first_read(stmt: &Stmt, name: &str) -> Option<std::ops::Range<usize>> {
    let exprs = match stmt {
        // The value is evaluated before the targets are bound.
        Stmt::Assign(a) => exprs_of(&a.value),
        Stmt::AnnAssign(a) => exprs_of(a.value.as_deref()?),
        _ if !child_bodies(stmt).is_empty() => return None,
        _ => all_exprs(std::slice::from_ref(stmt)),
    };
    for expr in exprs {
        match expr {
            Expr::Lambda(_) | Expr::Named(_) => return None,
            Expr::Name(n) if n.id.as_str() == name => {
                return n.ctx.is_load().then(|| span(expr));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_torchs_in_place_spelling_counts() {
        for method in ["mul_", "requires_grad_", "add_", "index_put_"] {
            assert!(is_in_place(method), "{method}");
        }
        for method in ["mul", "_", "__iadd__", "_private_", "sort", "x__"] {
            assert!(!is_in_place(method), "{method}");
        }
    }
}
