//! A property a check tests keeps the call that set it.
//!
//! `g = torch.sparse_coo_tensor(…)._coalesced_(True)` returned from `backward`, then `assert
//! w.grad.is_coalesced()`: the report is that the flag the script set is lost on the way to
//! the gradient. Drop `._coalesced_(True)` and the gradient is still not coalesced, the same
//! `AssertionError` for a tensor that never was: the script's own mistake, not the bug. Where
//! an `assert` tests a predicate `is_WORD` and the script calls a method named for that word
//! (`_WORD_`, `WORD_`, `set_WORD`), a candidate still calls it.

use std::collections::BTreeSet;

use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, exprs_of};

/// The methods of `script` that set a property one of its `assert`s tests (`_coalesced_`).
pub fn setters(script: &Script) -> BTreeSet<String> {
    let tested: BTreeSet<&str> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) => Some(&*a.test),
            _ => None,
        })
        .flat_map(exprs_of)
        .filter_map(|expr| match expr {
            Expr::Attribute(a) => a.attr.as_str().strip_prefix("is_"),
            _ => None,
        })
        .collect();
    if tested.is_empty() {
        return BTreeSet::new();
    }
    methods_called(script)
        .into_iter()
        .filter(|m| tested.contains(property(m)))
        .map(str::to_string)
        .collect()
}

/// Whether `candidate` still calls each of `setters`.
pub fn keeps(setters: &BTreeSet<String>, candidate: &Script) -> bool {
    if setters.is_empty() {
        return true;
    }
    let called = methods_called(candidate);
    setters.iter().all(|s| called.contains(s.as_str()))
}

/// The names of the methods `script` calls (`x.name(…)`).
fn methods_called(script: &Script) -> BTreeSet<&str> {
    all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| match expr {
            Expr::Call(call) => match &*call.func {
                Expr::Attribute(a) => Some(a.attr.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The property a method named `name` sets: `coalesced` of `_coalesced_`, `set_coalesced` or
/// `coalesced_`.
fn property(name: &str) -> &str {
    let name = name.strip_prefix("set_").unwrap_or(name);
    name.trim_matches('_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    const FLAG: &str = "import torch\ng = torch.sparse_coo_tensor(i, v, (2, 2))._coalesced_(True)\nw.grad = g\nassert w.grad.is_coalesced()\n";

    #[test]
    fn the_call_that_set_a_tested_flag_stays() {
        let s = setters(&parse(FLAG));
        assert_eq!(s, BTreeSet::from(["_coalesced_".to_string()]));
        assert!(keeps(&s, &parse(FLAG)));
        let dropped = FLAG.replace("._coalesced_(True)", "");
        assert!(!keeps(&s, &parse(&dropped)));
        let moved = "import torch\nw.grad = torch.sparse_coo_tensor(i, v, (2, 2))._coalesced_(True)\nassert w.grad.is_coalesced()\n";
        assert!(keeps(&s, &parse(moved)));
    }

    #[test]
    fn calls_of_other_properties_are_free() {
        let text = "import torch\nx = torch.ones(2).t().contiguous()\nassert x.is_leaf\n";
        assert!(setters(&parse(text)).is_empty());
        let untested = FLAG.replace("assert w.grad.is_coalesced()", "assert w.grad is None");
        assert!(setters(&parse(&untested)).is_empty());
    }
}
