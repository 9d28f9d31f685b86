//! A library's own check of its input stays on.
//!
//! `torch.sparse_csr_tensor(crow, col, values, size=(2, 2), check_invariants=True)` handed to
//! `torch.add(a, b, out=out)` fails an internal assert: the report's point is that the tensor
//! was valid, and `check_invariants=True` is how it shows it. Without that keyword, the
//! indices shrink to a tensor the library would have refused (`crow` `[0]` for one value), and
//! the same assert then comes from a user's mistake. Where the script turns on such a check
//! (a keyword named `check…` or `validate…`, or ending in `_check`, passed `True` to a library
//! call), a candidate still passes it `True`: a candidate that breaks the input is refused by
//! the library, with another message.

use std::collections::BTreeSet;

use crate::passes::helpers::calls_library;
use crate::python::{Expr, Script, all_exprs, defined_names};

/// The keywords that turn on a library's checks of its input, passed `True` to its calls in
/// `script`.
pub fn validating(script: &Script) -> BTreeSet<String> {
    let defined = defined_names(script.body());
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(call) => Some(call),
            _ => None,
        })
        .filter(|call| calls_library(call, &defined))
        .flat_map(|call| call.arguments.keywords.iter())
        .filter(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        .filter_map(|k| k.arg.as_ref().map(|a| a.id.to_string()))
        .filter(|name| turns_on_checks(name))
        .collect()
}

/// Whether `candidate` still passes each of the `validating` keywords `True` to some call.
pub fn keeps(validating: &BTreeSet<String>, candidate: &Script) -> bool {
    validating.is_empty() || validating.is_subset(&self::validating(candidate))
}

/// `check_invariants`, `validate_args`, `check`, `bounds_check`.
fn turns_on_checks(keyword: &str) -> bool {
    keyword.starts_with("check") || keyword.starts_with("validate") || keyword.ends_with("_check")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    #[test]
    fn a_check_the_script_turns_on_stays_on() {
        let original = parse(
            "import torch\nout = torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.zeros(1), size=(1, 1), check_invariants=True)\ntorch.add(torch.ones(1, 1), torch.ones(1, 1), out=out)\n",
        );
        let kept = validating(&original);
        assert_eq!(kept, BTreeSet::from(["check_invariants".to_string()]));
        let dropped = parse(
            "import torch\nout = torch.sparse_csr_tensor(torch.tensor([0]), torch.tensor([1]), torch.zeros(1))\ntorch.add(torch.ones(1, 1), torch.ones(1, 1), out=out)\n",
        );
        assert!(!keeps(&kept, &dropped));
        let off = parse("import torch\ntorch.sparse_csr_tensor(a, b, c, check_invariants=False)\n");
        assert!(!keeps(&kept, &off));
        assert!(keeps(&kept, &original));
        // The script's own function's keyword, and a keyword that checks nothing, are free.
        let own = parse(
            "def load(path, check=True):\n    pass\nload('x', check=True)\nopen('x', closefd=True)\n",
        );
        assert!(validating(&own).is_empty());
    }
}
