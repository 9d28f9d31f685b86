//! Replace a line that only shifts the random stream by another seed.
//!
//! ## What it removes
//! Under a seed, a statement that draws random numbers and binds nothing that is read (a
//! layer built and never used, `torch.randn(3)` on a line of its own) still decides what the
//! later draws are, so deleting it can lose a failure that needs particular values: the line
//! stays although no code reads it, and a reader cannot tell why. Such a line goes together
//! with a change of the seed that governs it (the module-level `torch.manual_seed(N)`,
//! `random.seed(N)` or `np.random.seed(N)` last before it, `N` an integer literal) to each of
//! 0 to 9 in turn: one of them often draws values that fail the same way. Since
//! `delete_statements` tries every line alone first, the pass runs with the fine passes,
//! once a round of deletions changed nothing.
//!
//! A statement draws when it calls a random function (`randn`, `rand`, `randint`,
//! `randperm`, `normal`, `bernoulli`, `multinomial`, `random`, `uniform`, `choice`, `shuffle`,
//! `sample`, `gauss`, and their `_like` and in-place forms) or builds a layer
//! (`nn.Linear(…)`, `torch.nn.Conv2d(…)`: a capitalized name under `torch.nn`), whose
//! weights are drawn.
//!
//! ## Example
//! ```python
//! torch.manual_seed(0)                  # before
//! proj = torch.nn.Linear(8, 2)
//! x = torch.randn(4)
//! check(x)
//!
//! torch.manual_seed(3)                  # after, when seed 3 fails the same way
//! x = torch.randn(4)
//! check(x)
//! ```
//!
//! ## When it cannot apply
//! A statement that binds a name read anywhere in the script, or binds anything but names;
//! one inside a function, class or block; one that draws nothing it recognises; one before
//! every seed call, or whose seed is not an integer literal (`torch.manual_seed(args.seed)`).

use std::collections::HashSet;

use super::helpers::{callee_name, delete_stmt, short};
use crate::edit::{Candidate, Edit, lines_label};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Expr, Script, Stmt, all_exprs, assignment, exprs_of, span};
use crate::torch::{torch_imports, torch_path};

pub struct Reseed;

/// The seeds tried in place of the script's own.
const SEEDS: std::ops::RangeInclusive<u64> = 0..=9;

impl Pass for Reseed {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("reseed")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let body = script.body();
        let torch = torch_imports(script);
        let read = names_read(script);
        let mut seed: Option<(&Expr, u64)> = None;
        let mut out = Vec::new();
        for (i, stmt) in body.iter().enumerate() {
            if let Some(found) = seed_call(stmt) {
                seed = found;
                continue;
            }
            let Some((literal, current)) = seed else {
                continue;
            };
            if !binds_only_unread(stmt, &read) || !draws(stmt, &torch) {
                continue;
            }
            for k in SEEDS.filter(|k| *k != current) {
                out.push(Candidate::new(
                    format!(
                        "delete `{}` at {}, which only draws random numbers, and seed with {k}",
                        short(script.slice(stmt)),
                        lines_label(text, &span(stmt))
                    ),
                    vec![
                        Edit::replace(span(literal), k.to_string()),
                        delete_stmt(script, body, i, true),
                    ],
                ));
            }
        }
        out
    }
}

/// For a module-level seed call, `Some` with its literal and value when the seed is an
/// integer literal (`Some(None)` when it is not: the draws after it are not ours to move).
fn seed_call(stmt: &Stmt) -> Option<Option<(&Expr, u64)>> {
    const SEEDERS: &[&str] = &[
        "torch.manual_seed",
        "torch.random.manual_seed",
        "random.seed",
        "np.random.seed",
        "numpy.random.seed",
    ];
    let Stmt::Expr(e) = stmt else { return None };
    let Expr::Call(call) = e.value.as_ref() else {
        return None;
    };
    if !dotted(&call.func).is_some_and(|f| SEEDERS.contains(&f.as_str())) {
        return None;
    }
    let literal = match (&call.arguments.args[..], &call.arguments.keywords[..]) {
        ([arg], []) => arg,
        _ => return Some(None),
    };
    let value = match literal {
        Expr::NumberLiteral(n) => n.value.as_int().and_then(|i| i.as_u64()),
        _ => None,
    };
    Some(value.map(|v| (literal, v)))
}

/// The names the script reads anywhere.
fn names_read(script: &Script) -> HashSet<&str> {
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Name(n) if n.ctx.is_load() => Some(n.id.as_str()),
            _ => None,
        })
        .collect()
}

/// Whether the statement is an expression, or an assignment to names none of which is read.
fn binds_only_unread(stmt: &Stmt, read: &HashSet<&str>) -> bool {
    if matches!(stmt, Stmt::Expr(_)) {
        return true;
    }
    let Some((targets, _)) = assignment(stmt) else {
        return false;
    };
    !matches!(stmt, Stmt::AugAssign(_))
        && targets.iter().all(|t| match t {
            Expr::Name(n) => !read.contains(n.id.as_str()),
            _ => false,
        })
}

/// Whether the statement calls a random function or builds a torch layer.
fn draws(stmt: &Stmt, torch: &std::collections::HashMap<String, String>) -> bool {
    let value = match stmt {
        Stmt::Expr(e) => &*e.value,
        _ => match assignment(stmt) {
            Some((_, value)) => value,
            None => return false,
        },
    };
    exprs_of(value).into_iter().any(|e| {
        let Expr::Call(call) = e else { return false };
        let layer = torch_path(torch, &call.func).is_some_and(|p| {
            p.strip_prefix("torch.nn.")
                .is_some_and(|rest| !rest.contains('.') && rest.starts_with(char::is_uppercase))
        });
        layer || callee_name(&call.func).is_some_and(super::helpers::is_random_function)
    })
}

/// `a.b.c` for a chain of names and attributes.
fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&Reseed, text)
    }

    #[test]
    fn an_unread_layer_goes_with_each_other_seed() {
        let text = "import torch\ntorch.manual_seed(0)\nproj = torch.nn.Linear(8, 2)\nx = torch.randn(4)\ncheck(x)\n";
        let out = results(text);
        assert_eq!(out.len(), 9);
        assert_eq!(
            out[2],
            "import torch\ntorch.manual_seed(3)\nx = torch.randn(4)\ncheck(x)\n"
        );
    }

    #[test]
    fn a_draw_on_a_line_of_its_own_goes_and_the_python_seed_moves() {
        let text = "import random\nrandom.seed(7)\nrandom.random()\nitems = random.sample(POOL, 3)\nship(items)\n";
        let out = results(text);
        assert_eq!(out.len(), 9);
        assert!(
            out.contains(
                &"import random\nrandom.seed(0)\nitems = random.sample(POOL, 3)\nship(items)\n"
                    .to_string()
            )
        );
    }

    #[test]
    fn read_names_draws_before_any_seed_and_other_seeds_stay() {
        for text in [
            // `x` is read.
            "import torch\ntorch.manual_seed(0)\nx = torch.randn(4)\ncheck(x)\n",
            // No seed before the draw.
            "import torch\nw = torch.randn(4)\ntorch.manual_seed(0)\n",
            // A seed that is not a literal.
            "import torch\ntorch.manual_seed(args.seed)\nw = torch.randn(4)\n",
            // Not a draw.
            "import torch\ntorch.manual_seed(0)\nw = torch.zeros(4)\n",
            // Inside a function.
            "import torch\ntorch.manual_seed(0)\ndef f():\n    w = torch.randn(4)\n",
        ] {
            assert!(results(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn the_seed_last_before_the_draw_is_the_one_that_moves() {
        let text = "import torch\ntorch.manual_seed(0)\na = f()\ntorch.manual_seed(1)\ntorch.nn.Linear(0, 2)\ncheck(a)\n";
        let out = results(text);
        assert_eq!(out.len(), 9);
        assert!(out.iter().all(|t| {
            t.starts_with("import torch\ntorch.manual_seed(0)\na = f()\ntorch.manual_seed(")
        }));
        assert!(
            out.contains(
                &"import torch\ntorch.manual_seed(0)\na = f()\ntorch.manual_seed(2)\ncheck(a)\n"
                    .to_string()
            )
        );
    }
}
