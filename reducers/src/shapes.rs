//! Tensors handed together, built with the same size, keep building them alike.
//!
//! `masked_tensor(torch.ones((10, 20, 30)), torch.ones((10, 20, 30), dtype=torch.bool))` pairs
//! data with a mask of its shape; the report's failure comes later, in a reduction over it.
//! Shrink one `20` alone and the constructor raises the same message itself: a mask that does
//! not fit its data, the user's mistake, not the bug. Where one call is handed two or more
//! tensors or arrays built by factories (`ones`, `zeros`, `empty`, `rand`, `randn`, `full`),
//! directly or through names bound once, a candidate may not have more such calls whose
//! factories build with different sizes: the sizes shrink together (as `shrink_dims` shrinks
//! them) or not at all. Tensors built apart stay free.

use std::collections::HashSet;

use crate::passes::helpers::callee_name;
use crate::python::{Expr, Script, all_exprs, ast, single_bindings};

/// The factories whose positional arguments are the size (`full`: its first).
const FACTORIES: &[&str] = &["ones", "zeros", "empty", "rand", "randn", "full"];

/// How many calls of `script` are handed factory-built tensors of different sizes.
pub fn misfits(script: &Script) -> usize {
    let bound = single_bindings(script.body());
    let built = |arg: &Expr| -> Option<Vec<String>> {
        let arg = match arg {
            Expr::Name(n) => *bound.get(n.id.as_str())?,
            _ => arg,
        };
        size(script, arg.as_call_expr()?)
    };
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| e.as_call_expr())
        .filter(|call| {
            let keywords = call.arguments.keywords.iter().map(|k| &k.value);
            let sizes: HashSet<Vec<String>> = call
                .arguments
                .args
                .iter()
                .chain(keywords)
                .filter_map(built)
                .collect();
            sizes.len() > 1
        })
        .count()
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

    fn count(text: &str) -> usize {
        misfits(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_mask_handed_with_its_data_keeps_its_size() {
        let original =
            "m = masked_tensor(torch.ones((10, 20)), torch.ones(10, 20, dtype=torch.bool))\n";
        assert_eq!(count(original), 0);
        // One shrunk alone: a misfit; both: none.
        assert_eq!(count(&original.replacen("20", "2", 1)), 1);
        assert_eq!(count(&original.replace("20", "2")), 0);
        // Through names bound once.
        assert_eq!(
            count("d = torch.ones(2)\nm = torch.ones(3)\nf(d, mask=m)\n"),
            1
        );
    }

    #[test]
    fn tensors_built_apart_and_other_calls_are_free() {
        assert_eq!(
            count("a = torch.randn(2, 3)\nb = torch.zeros(4)\nf(a)\ng(b)\n"),
            0
        );
        assert_eq!(
            count("f(torch.tensor([1, 2]), torch.randn(3), np.full((2, 3), 7))\n"),
            1
        );
        assert_eq!(count("f(torch.tensor([1, 2]), torch.randn(3))\n"), 0);
    }
}
