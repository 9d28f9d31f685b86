//! A property a check tests keeps the call that set it.
//!
//! `g = torch.sparse_coo_tensor(…)._coalesced_(True)` returned from `backward`, then `assert
//! w.grad.is_coalesced()`: the report is that the flag the script set is lost on the way to
//! the gradient. Drop `._coalesced_(True)` and the gradient is still not coalesced, the same
//! `AssertionError` for a tensor that never was: the script's own mistake, not the bug. Where
//! an `assert` tests a predicate `is_WORD` and the script calls a method named for that word
//! (`_WORD_`, `WORD_`, `set_WORD`), a candidate still calls it.
//!
//! Likewise a value an `assert` reads through a method keeps the calls that made its state:
//! `scheduler.load_state_dict(sd)` and `scheduler.step()` before `assert
//! scheduler.get_last_lr()[0] == 0.1`, where the report is that a scheduler restored and
//! stepped reports the wrong rate. A fresh scheduler, never stepped, fails the same check by
//! design. Where an `assert` reads `NAME.method(…)`, the methods the script calls on `NAME`
//! in statements of their own (for their effect) are still so called on the name a check
//! reading `method` reads, in a candidate that still has such a check.

use std::collections::{BTreeMap, BTreeSet};

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

/// Per method an `assert` reads the result of on a name (`get_last_lr`), the methods the
/// script calls for their effect on the names it is read on (`load_state_dict`, `step`).
pub fn histories(script: &Script) -> BTreeMap<String, BTreeSet<String>> {
    let effects = effects(script);
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, method) in checked_reads(script).into_iter().flatten() {
        if let Some(made) = name.and_then(|n| effects.get(n))
            && !made.is_empty()
        {
            out.entry(method.to_string())
                .or_default()
                .extend(made.iter().map(|m| m.to_string()));
        }
    }
    out
}

/// Whether each check of `candidate` that reads a method of `histories` reads it on a name
/// that the methods recorded for it are called on.
pub fn keeps_histories(histories: &BTreeMap<String, BTreeSet<String>>, candidate: &Script) -> bool {
    if histories.is_empty() {
        return true;
    }
    let effects = effects(candidate);
    checked_reads(candidate)
        .into_iter()
        .flatten()
        .all(|(name, method)| match histories.get(method) {
            None => true,
            Some(made) => name
                .and_then(|n| effects.get(n))
                .is_some_and(|called| made.iter().all(|m| called.contains(m.as_str()))),
        })
}

/// For each `assert`, the methods whose results it reads, each with the name it is read on
/// (`None`: on something else, a call or an attribute).
fn checked_reads(script: &Script) -> Vec<Vec<(Option<&str>, &str)>> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) => Some(
                exprs_of(&a.test)
                    .into_iter()
                    .filter_map(|e| match e {
                        Expr::Call(call) => match &*call.func {
                            Expr::Attribute(m) => Some((
                                m.value.as_name_expr().map(|n| n.id.as_str()),
                                m.attr.as_str(),
                            )),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// The methods called on each name in statements of their own (`scheduler.step()`).
pub(crate) fn effects(script: &Script) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        if let Stmt::Expr(e) = stmt
            && let Expr::Call(call) = &*e.value
            && let Expr::Attribute(m) = &*call.func
            && let Some(name) = m.value.as_name_expr()
        {
            out.entry(name.id.as_str())
                .or_default()
                .insert(m.attr.as_str());
        }
    }
    out
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

    #[test]
    fn a_value_checked_through_a_method_keeps_the_calls_that_made_its_state() {
        let text = "import torch\nopt = torch.optim.SGD(ps, lr=1)\nscheduler = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[5])\nscheduler.load_state_dict(sd)\nfor i in range(5):\n    opt.step()\n    scheduler.step()\nassert scheduler.get_last_lr()[0] == 0.1\n";
        let h = histories(&parse(text));
        assert_eq!(h.len(), 1);
        assert_eq!(
            h["get_last_lr"],
            BTreeSet::from(["load_state_dict".to_string(), "step".to_string()])
        );
        let fresh = "import torch\nopt = torch.optim.SGD(ps, lr=1)\nassert torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[5]).get_last_lr()[0] == 0.1\n";
        assert!(!keeps_histories(&h, &parse(fresh)));
        let unloaded = text.replace("scheduler.load_state_dict(sd)\n", "");
        assert!(!keeps_histories(&h, &parse(&unloaded)));
        let once = text.replace(
            "for i in range(5):\n    opt.step()\n    scheduler.step()\n",
            "scheduler.step()\n",
        );
        assert!(keeps_histories(&h, &parse(&once)));
        // The check gone, the rule has nothing to keep.
        assert!(keeps_histories(&h, &parse("import torch\nassert x == 1\n")));
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
