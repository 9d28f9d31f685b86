//! Tensors built with the same shape keep building them alike.
//!
//! `masked_tensor(torch.ones((10, 20, 30)), torch.ones((10, 20, 30), dtype=torch.bool))` pairs
//! data with a mask of its shape; the report's failure comes later, in a reduction over it.
//! Shrink one `20` alone and the constructor raises the same message itself: a mask that does
//! not fit its data, the user's mistake, not the bug. Where the script builds tensors or
//! arrays with factories (`ones`, `zeros`, `empty`, `rand`, `randn`, `full`) of sizes written
//! the same, a candidate may not build them with more distinct sizes than it did: sizes shrink
//! together (as `shrink_dims` shrinks them) or one call goes, never one call's size alone.

use std::collections::HashSet;

use crate::passes::helpers::callee_name;
use crate::python::{Expr, Script, all_exprs, ast};

/// The factories whose positional arguments are the size (`full`: its first).
const FACTORIES: &[&str] = &["ones", "zeros", "empty", "rand", "randn", "full"];

/// How many distinct sizes the factory calls of `script` build with.
pub fn distinct_sizes(script: &Script) -> usize {
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| size(script, e.as_call_expr()?))
        .collect::<HashSet<_>>()
        .len()
}

/// The size a factory call builds with, as its dimensions written out (`(10, 20)` and `10, 20`
/// alike); `None` for another call.
fn size(script: &Script, call: &ast::ExprCall) -> Option<Vec<String>> {
    let callee = callee_name(&call.func)?;
    if !FACTORIES.contains(&callee) {
        return None;
    }
    let args = &call.arguments.args;
    let args = if callee == "full" {
        &args[..1.min(args.len())]
    } else {
        &args[..]
    };
    let dims: Vec<String> = match args {
        [Expr::Tuple(t)] => t.elts.iter().map(|e| script.slice(e).to_string()).collect(),
        [Expr::List(l)] => l.elts.iter().map(|e| script.slice(e).to_string()).collect(),
        _ => args.iter().map(|e| script.slice(e).to_string()).collect(),
    };
    (!dims.is_empty()).then_some(dims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn sizes(text: &str) -> usize {
        distinct_sizes(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_mask_built_like_its_data_counts_one_size() {
        let original =
            "m = masked_tensor(torch.ones((10, 20)), torch.ones(10, 20, dtype=torch.bool))\n";
        assert_eq!(sizes(original), 1);
        // One shrunk alone: two sizes, refused; both: one.
        assert_eq!(sizes(&original.replacen("20", "2", 1)), 2);
        assert_eq!(sizes(&original.replace("20", "2")), 1);
    }

    #[test]
    fn only_factories_count() {
        assert_eq!(
            sizes("torch.tensor([1, 2])\nnp.full((2, 3), 7)\ntorch.randn(2, 3)\n"),
            1
        );
        assert_eq!(sizes("f(1)\ntorch.ones()\n"), 0);
    }
}
