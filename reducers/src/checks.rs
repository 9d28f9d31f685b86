//! The checks of one function stay together.
//!
//! `gradcheck(MyFn.apply, x)` passes and `gradgradcheck(MyFn.apply, x)` fails: the report is
//! that the second derivative is wrong where the first is right. Delete the first check and
//! make `backward` wrong at first order, and `gradgradcheck` still fails with the same
//! message: a mistake in the user's `backward`, not the bug reported. Where the script hands
//! one of its own functions to two or more different library checks (a function whose name
//! ends in `check` or starts with `assert`), a candidate still hands it to each of them. That
//! the check before the failing one still passes follows: the failure is still raised through
//! the same library function (the anchor's entry), after it.

use std::collections::{BTreeMap, BTreeSet};

use crate::python::{Expr, Script, all_exprs};
use crate::torch::{imports, torch_path};

/// A library check handed one of the script's functions: `(torch.autograd.gradcheck,
/// MyFn.apply)`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Checked {
    /// The check's dotted path.
    pub check: String,
    /// The code of the function handed to it, as written.
    pub function: String,
}

/// The checks of `script` whose function is handed to another check too.
pub fn checked(script: &Script) -> Vec<Checked> {
    let mut by_function: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in all_checked(script) {
        by_function.entry(c.function).or_default().insert(c.check);
    }
    by_function
        .into_iter()
        .filter(|(_, checks)| checks.len() >= 2)
        .flat_map(|(function, checks)| {
            checks.into_iter().map(move |check| Checked {
                check,
                function: function.clone(),
            })
        })
        .collect()
}

/// Whether `candidate` still hands each function of `checked` to each of its checks.
pub fn keeps(checked: &[Checked], candidate: &Script) -> bool {
    if checked.is_empty() {
        return true;
    }
    let kept = all_checked(candidate);
    checked.iter().all(|c| kept.contains(c))
}

/// Every call of a library check whose first argument is a name or attribute of the script's
/// own (not an import).
fn all_checked(script: &Script) -> BTreeSet<Checked> {
    let imported = imports(script, |_| true);
    all_exprs(script.body())
        .into_iter()
        .filter_map(|expr| {
            let Expr::Call(call) = expr else { return None };
            let check = torch_path(&imported, &call.func)?;
            let last = check.rsplit('.').next().unwrap_or(&check);
            if !(last.ends_with("check") || last.starts_with("assert")) {
                return None;
            }
            let function = call.arguments.args.first()?;
            let root = root_name(function)?;
            (!imported.contains_key(root)).then(|| Checked {
                check,
                function: script.slice(function).to_string(),
            })
        })
        .collect()
}

/// `MyFn` of `MyFn.apply`; `None` for anything but a name or an attribute chain on one.
fn root_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => root_name(&a.value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    const TWO_CHECKS: &str = "from torch.autograd import gradcheck, gradgradcheck\nclass F:\n    pass\nx = 1\ngradcheck(F.apply, x)\ngradgradcheck(F.apply, x)\n";

    #[test]
    fn a_function_handed_to_two_checks_keeps_both() {
        let checked = checked(&parse(TWO_CHECKS));
        assert_eq!(checked.len(), 2);
        assert_eq!(checked[0].check, "torch.autograd.gradcheck");
        assert_eq!(checked[0].function, "F.apply");
        assert!(keeps(&checked, &parse(TWO_CHECKS)));
        let first_gone = TWO_CHECKS.replace("gradcheck(F.apply, x)\ngrad", "grad");
        assert!(!keeps(&checked, &parse(&first_gone)));
        let other_function = TWO_CHECKS.replace("gradcheck(F.apply, x)\n", "gradcheck(g, x)\n");
        assert!(!keeps(&checked, &parse(&other_function)));
    }

    #[test]
    fn one_check_or_a_library_function_is_free() {
        let one = "from torch.autograd import gradcheck\ndef f(x):\n    return x\ngradcheck(f, 1)\ngradcheck(f, 2)\n";
        assert!(checked(&parse(one)).is_empty());
        let library = "import torch\nfrom torch.autograd import gradcheck, gradgradcheck\ngradcheck(torch.sin, 1)\ngradgradcheck(torch.sin, 1)\n";
        assert!(checked(&parse(library)).is_empty());
    }
}
