//! Put an index that is out of range back in range.
//!
//! ## What it removes
//! An integer index into a list or tuple display that deletion left shorter than the index:
//! `stack[1]` where `stack = [self.submod]`. Where the failure comes before the index is used
//! (at compile time, in a traced or scripted function), any index fails the same way, and a
//! reader stops at one that would raise `IndexError`. The index becomes that of the last
//! element (`-1` for a negative one), the element deletion most likely moved there.
//!
//! ## Example
//! ```python
//! stack = [self.submod]              # before
//! for module in stack[1].mods:
//!
//! stack = [self.submod]              # after
//! for module in stack[0].mods:
//! ```
//!
//! ## When it cannot apply
//! A name bound more than once, or to anything but a list or tuple display without a starred
//! element; a name read anywhere but as the value of a subscript (it may be passed on and
//! grown, `stack.append(…)`); an index that is not an integer literal, or already in range.

use crate::edit::{Candidate, Edit, lines_label};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, all_exprs, span};
use crate::scopes::single_bindings;

pub struct ValidIndices;

impl Pass for ValidIndices {
    fn info(&self) -> PassInfo {
        PassInfo::new("valid_indices")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let exprs = all_exprs(script.body());
        let mut candidates = Vec::new();
        for (name, value) in single_bindings(script) {
            let Some(len) = display_len(value) else {
                continue;
            };
            let reads = reads_of(&exprs, name);
            let subscripts = subscripts_of(&exprs, name);
            if subscripts.len() != reads {
                continue;
            }
            for (index, at) in subscripts {
                let Some(valid) = in_range(index, len) else {
                    continue;
                };
                candidates.push(Candidate::new(
                    format!(
                        "index {name}[{valid}] in place of {name}[{index}] at {}",
                        lines_label(script.text(), &at)
                    ),
                    vec![Edit::replace(at, valid.to_string())],
                ));
            }
        }
        candidates
    }
}

/// The number of elements of a list or tuple display without a starred one.
fn display_len(value: &Expr) -> Option<usize> {
    let elts = match value {
        Expr::List(l) => &l.elts,
        Expr::Tuple(t) => &t.elts,
        _ => return None,
    };
    (!elts.iter().any(Expr::is_starred_expr)).then_some(elts.len())
}

/// How many times `name` is read.
fn reads_of(exprs: &[&Expr], name: &str) -> usize {
    exprs
        .iter()
        .filter(|e| matches!(e, Expr::Name(n) if n.id.as_str() == name && n.ctx.is_load()))
        .count()
}

/// The integer indices of `name[i]` reads, with the range of each index literal (a negative
/// one with its sign).
fn subscripts_of(exprs: &[&Expr], name: &str) -> Vec<(i64, std::ops::Range<usize>)> {
    exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Subscript(s)
                if s.ctx.is_load()
                    && matches!(s.value.as_ref(), Expr::Name(n) if n.id.as_str() == name) =>
            {
                integer(&s.slice).map(|i| (i, span(s.slice.as_ref())))
            }
            _ => None,
        })
        .collect()
}

fn integer(expr: &Expr) -> Option<i64> {
    match expr {
        Expr::NumberLiteral(n) => n.value.as_int()?.as_i64(),
        Expr::UnaryOp(u) if u.op.is_u_sub() => integer(&u.operand).map(|i| -i),
        _ => None,
    }
}

/// The index to use in place of `index` into `len` elements, when it is out of range.
fn in_range(index: i64, len: usize) -> Option<i64> {
    let len = i64::try_from(len).ok().filter(|&l| l > 0)?;
    match index {
        i if i >= len => Some(len - 1),
        i if i < -len => Some(-1),
        _ => None,
    }
}
