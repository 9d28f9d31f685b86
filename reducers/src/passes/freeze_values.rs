//! Put the value that code computed in place of the code that computed it.
//!
//! ## What it removes
//! The computation that only produced a failing call's input: the layers, concatenations
//! and arithmetic before the call that fails. The probe runs a script that imports torch or
//! numpy with each call, operator and subscript keeping the last tensor, module or numpy
//! array it computed (of module-level code only when a function may be compiled, traced or
//! transformed: instrumented code would trace differently), and reports them as
//! constructors (see [`Computed`]): a tensor of at most 16 elements by its values (floats to
//! four significant digits), a larger one by its shape and kind, a standard `torch.nn`
//! module by its constructor. Each candidate replaces one expression that reads a variable
//! by its constructor, the largest expression first (at most 24 a round), or a random draw
//! by the values it drew (`torch.randn(1)` → `torch.tensor([-0.5])`, so that the seed can
//! go); the oracle decides whether the failing call still fails with an equivalent value in
//! place of the computed one. Deletion then removes what only fed the expression.
//!
//! A candidate may grow the script (sixteen numbers are longer than `lin(x)`): it is a
//! pump, kept only if the rounds after it make the script smaller than before.
//!
//! ## Example
//! ```python
//! torch.autograd.set_detect_anomaly(True)      # before: RuntimeError: Function
//! x = torch.rand(1, 1)                          # 'SqrtBackward0' returned nan values
//! t = torch.rand(1, 1)
//! xt = torch.cat([x, t], dim=1)
//! torch.sqrt(nn.Linear(2, 1)(xt)).backward()
//!
//! torch.autograd.set_detect_anomaly(True)      # after (then deletion)
//! torch.sqrt(torch.tensor([[-0.9609]]).requires_grad_().clone()).backward()
//! ```
//!
//! ## When it cannot apply
//! Failures without a traceback, an `AssertionError` (a check fed computed values compares
//! constants, not the computation it checks; its inputs drawn at random are frozen, as
//! `x.uniform_(-7, -3)` → `torch.tensor([-5.2, …])`), code inside functions and classes of a script
//! that mentions `compile`, `dynamo`, `torch.jit`, `torch.export`, `torch.func` and the like,
//! and values other than tensors, standard modules and arrays. A value computed in a
//! function called many times is its last one, the one of the failing call.

use std::ops::Range;

use super::helpers::{callee_name, is_random_function};
use crate::crash::{Computed, Crash};
use crate::edit::{Candidate, Edit};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, all_exprs, exprs_of, imported_names, span};

pub struct FreezeValues;

/// The most candidates a round offers: each costs a run, and the largest expressions,
/// offered first, are the ones worth most.
const MAX_CANDIDATES: usize = 24;

impl Pass for FreezeValues {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            reads_crash: true,
            ..PassInfo::new("freeze_values")
        }
    }

    fn candidates(&self, _script: &Script) -> Vec<Candidate> {
        Vec::new()
    }

    fn candidates_at(&self, script: &Script, crash: &Crash) -> Vec<Candidate> {
        let text = script.text();
        // Every candidate removes a read of a variable, or else a random draw whose values
        // the probe gives (`torch.randn(1)` → `torch.tensor([-0.5])`, so that the seed and the
        // draws before it may go): a constructor already (`torch.zeros(4)`) is left alone, and
        // values that change from run to run cannot take turns for ever.
        let imported = imported_names(script.body(), true);
        let exprs = all_exprs(script.body());
        let variables: Vec<Range<usize>> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Name(n) if !imported.contains(n.id.as_str()) => Some(span(n)),
                _ => None,
            })
            .collect();
        let reads_variable = |r: &Range<usize>| {
            variables
                .iter()
                .any(|n| r.start <= n.start && n.end <= r.end)
        };
        // A draw: the expression there calls a random function, and its values are written out.
        let drawn = |r: &Range<usize>, code: &str| {
            (code.contains(".tensor(") || code.contains(".array("))
                && exprs.iter().filter(|e| span(**e) == *r).any(|e| {
                    exprs_of(e).into_iter().any(|x| {
                        matches!(x, Expr::Call(c) if callee_name(&c.func).is_some_and(is_random_function))
                    })
                })
        };
        let mut places: Vec<(Range<usize>, &Computed)> = crash
            .computed
            .iter()
            .filter_map(|c| Some((range(text, c)?, c)))
            .filter(|(r, c)| text[r.clone()] != c.code && (reads_variable(r) || drawn(r, &c.code)))
            .collect();
        places.sort_by_key(|(r, _)| std::cmp::Reverse(r.len()));
        places.dedup_by(|a, b| a.0 == b.0);
        places
            .into_iter()
            .take(MAX_CANDIDATES)
            .map(|(range, computed)| {
                Candidate::new(
                    format!(
                        "put the value `{}` computed on line {} in its place",
                        &text[range.clone()],
                        computed.start.0
                    ),
                    vec![Edit::replace(range, computed.code.clone())],
                )
            })
            .collect()
    }
}

/// The byte range of `computed` in `text`; `None` when it lies outside it or off a
/// character boundary (the script changed since the probe ran).
fn range(text: &str, computed: &Computed) -> Option<Range<usize>> {
    let offset = |(line, column): (usize, usize)| -> Option<usize> {
        let start = if line == 1 {
            0
        } else {
            text.match_indices('\n').nth(line - 2)?.0 + 1
        };
        let at = start + column;
        let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
        (at <= end && text.is_char_boundary(at)).then_some(at)
    };
    let range = offset(computed.start)?..offset(computed.end)?;
    (range.start < range.end).then_some(range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn results(text: &str, computed: Vec<Computed>) -> Vec<String> {
        let script = Script::parse(text, PythonVersion::PY311).expect("fixture parses");
        let crash = Crash {
            frames: Vec::new(),
            computed,
        };
        FreezeValues
            .candidates_at(&script, &crash)
            .iter()
            .map(|c| c.apply(text).expect("edits apply"))
            .collect()
    }

    fn computed(start: (usize, usize), end: (usize, usize), code: &str) -> Computed {
        Computed {
            start,
            end,
            code: code.to_string(),
        }
    }

    #[test]
    fn the_largest_expression_goes_first() {
        let text = "import torch\nxt = torch.cat([x, t])\ny = torch.sqrt(lin(xt))\ny.backward()\n";
        let texts = results(
            text,
            vec![
                computed((2, 5), (2, 22), "torch.tensor([0.5, 0.25])"),
                computed((3, 15), (3, 22), "torch.tensor([-0.9609])"),
                computed((3, 4), (3, 23), "torch.tensor([float('nan')])"),
            ],
        );
        assert_eq!(
            texts,
            [
                "import torch\nxt = torch.cat([x, t])\ny = torch.tensor([float('nan')])\ny.backward()\n",
                "import torch\nxt = torch.tensor([0.5, 0.25])\ny = torch.sqrt(lin(xt))\ny.backward()\n",
                "import torch\nxt = torch.cat([x, t])\ny = torch.sqrt(torch.tensor([-0.9609]))\ny.backward()\n",
            ]
        );
    }

    #[test]
    fn a_constructor_a_place_the_script_no_longer_has_or_a_value_already_there_is_skipped() {
        let text = "import torch\nx = torch.zeros(2)\ny = torch.rand(9, dtype=torch.float64)\n";
        let texts = results(
            text,
            vec![
                computed((2, 4), (2, 18), "torch.zeros(2)"),
                computed((3, 4), (3, 38), "torch.rand(9, dtype=torch.float64)"),
                computed((5, 0), (5, 3), "torch.ones(1)"),
                computed((2, 4), (2, 90), "torch.ones(1)"),
            ],
        );
        assert!(texts.is_empty(), "{texts:?}");
    }

    #[test]
    fn a_random_draw_takes_the_values_it_drew() {
        let text = "import torch\nx = torch.randn(1)\ny = torch.randn(1).requires_grad_()\n";
        let texts = results(
            text,
            vec![
                computed((2, 4), (2, 18), "torch.tensor([-0.5])"),
                computed((3, 4), (3, 18), "torch.tensor([0.25])"),
                computed((3, 4), (3, 35), "torch.tensor([0.25], requires_grad=True)"),
            ],
        );
        assert_eq!(
            texts,
            [
                "import torch\nx = torch.randn(1)\ny = torch.tensor([0.25], requires_grad=True)\n",
                "import torch\nx = torch.tensor([-0.5])\ny = torch.randn(1).requires_grad_()\n",
                "import torch\nx = torch.randn(1)\ny = torch.tensor([0.25]).requires_grad_()\n",
            ]
        );
        let text = "import torch\nangle = torch.zeros(2).uniform_(-7, -3)\n";
        let texts = results(
            text,
            vec![computed((2, 8), (2, 39), "torch.tensor([-5.25, -3.5])")],
        );
        assert_eq!(
            texts,
            ["import torch\nangle = torch.tensor([-5.25, -3.5])\n"]
        );
    }
}
