//! Shrink literal values: integers toward 0 and 1, strings toward the empty string, lists,
//! tuples and dicts to empty ones.
//!
//! ## What it removes
//! Size that a value does not need: an integer `n` other than 0 or 1 becomes `0`, `1` or
//! `n / 2` (so `range(100)` gets to `range(1)` by halving), a float becomes `0.0`, or `1.0`
//! when it is larger (a tolerance of `1e-5` never becomes `1.0`), a string becomes empty, its first half or its second half — and,
//! round after round, the part the failure needs. A list, parenthesized tuple or dict display
//! becomes `[]`, `()` or `{}`. The name of a module-level function or class used as a value
//! rather than called (a dict key, an argument) becomes `0`, so that its definition can go.
//! `bool(x)` becomes `True` or `False`.
//!
//! ## Example
//! ```python
//! for i in range(args.samples * 64):   # before
//! for i in range(args.samples * 1):    # after
//! ```
//!
//! ## When it cannot apply
//! Byte strings, f-strings and implicitly concatenated strings are left alone, and so are
//! docstrings' neighbours' meanings: the oracle judges every change.

use super::{largest_first, line_of};
use crate::edit::{Candidate, Edit};
use crate::pass::Pass;
use std::collections::HashSet;

use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, span};

pub struct ShrinkValues;

impl Pass for ShrinkValues {
    fn name(&self) -> &'static str {
        "shrink_values"
    }

    fn is_fine(&self) -> bool {
        true
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        let defined: HashSet<&str> = script
            .body()
            .iter()
            .filter_map(|s| match s {
                Stmt::FunctionDef(f) => Some(f.name.as_str()),
                Stmt::ClassDef(c) => Some(c.name.as_str()),
                _ => None,
            })
            .collect();
        let exprs = all_exprs(script.body());
        // Names in call position, decorators and bases are uses, not values.
        let called: HashSet<usize> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Call(c) => Some(span(&*c.func).start),
                _ => None,
            })
            .chain(
                all_bodies(script.body())
                    .into_iter()
                    .flatten()
                    .flat_map(|s| match s {
                        Stmt::FunctionDef(f) => f
                            .decorator_list
                            .iter()
                            .map(|d| span(&d.expression).start)
                            .collect(),
                        Stmt::ClassDef(c) => c
                            .decorator_list
                            .iter()
                            .map(|d| span(&d.expression).start)
                            .chain(c.bases().iter().map(|b| span(b).start))
                            .collect(),
                        _ => Vec::new(),
                    }),
            )
            .collect();
        for expr in exprs {
            let range = span(expr);
            let code = &text[range.clone()];
            let line = line_of(text, range.start);
            let mut smaller: Vec<String> = match expr {
                Expr::NumberLiteral(n) => match &n.value {
                    ast::Number::Int(i) => match i.as_u64() {
                        Some(0 | 1) => Vec::new(),
                        // `1` and `v / 2` coincide for 2 and 3; `dedup` below drops the repeat.
                        Some(v) => vec!["0".into(), "1".into(), (v / 2).to_string()],
                        None => vec!["0".into(), "1".into()],
                    },
                    // Only ever smaller: a tolerance of `1e-5` may become `0.0`, never `1.0`.
                    ast::Number::Float(f) if f.abs() > 1.0 => vec!["0.0".into(), "1.0".into()],
                    ast::Number::Float(f) if *f != 0.0 && f.abs() < 1.0 => vec!["0.0".into()],
                    _ => Vec::new(),
                },
                Expr::StringLiteral(s) if !s.value.is_implicit_concatenated() => {
                    shorter_strings(code)
                }
                // A function or class of the script handed around as a value (a dict key, an
                // argument) rather than called: `0` lets its definition go.
                Expr::Name(n)
                    if n.ctx == ast::ExprContext::Load
                        && defined.contains(n.id.as_str())
                        && !called.contains(&range.start) =>
                {
                    vec!["0".into()]
                }
                // A conversion of something computed to a bool is a flag: `True` or `False`,
                // what a person writes (`set_detect_anomaly(bool(args.anomaly))`).
                Expr::Call(c)
                    if matches!(&*c.func, Expr::Name(f) if f.id.as_str() == "bool")
                        && c.arguments.len() == 1 =>
                {
                    vec!["True".into(), "False".into()]
                }
                // Deleting elements stops at one; the empty display is one step further.
                Expr::List(l) if !l.elts.is_empty() => vec!["[]".into()],
                Expr::Tuple(t) if !t.elts.is_empty() && t.parenthesized => vec!["()".into()],
                Expr::Dict(d) if !d.items.is_empty() => vec!["{}".into()],
                _ => Vec::new(),
            };
            smaller.dedup();
            for value in smaller {
                if value != code {
                    out.push(Candidate::new(
                        format!("shrink `{}` to `{value}` at line {line}", first_line(code)),
                        vec![Edit::replace(range.clone(), value)],
                    ));
                }
            }
        }
        largest_first(&mut out);
        out
    }
}

/// The empty string, and the two halves of the contents, with the literal's own prefix and
/// quotes.
fn shorter_strings(literal: &str) -> Vec<String> {
    let prefix_len = literal.find(['\'', '"']).unwrap_or(0);
    let (prefix, rest) = literal.split_at(prefix_len);
    let quote = if rest.starts_with("\"\"\"") || rest.starts_with("'''") {
        &rest[..3]
    } else {
        &rest[..1.min(rest.len())]
    };
    if rest.len() < 2 * quote.len() {
        return Vec::new();
    }
    let body = &rest[quote.len()..rest.len() - quote.len()];
    if body.is_empty() {
        return Vec::new();
    }
    let mut mid = body.len() / 2;
    while !body.is_char_boundary(mid) {
        mid += 1;
    }
    let mut out = vec![format!("{prefix}{quote}{quote}")];
    for half in [&body[..mid], &body[mid..]] {
        if !half.is_empty() && half.len() < body.len() {
            out.push(format!("{prefix}{quote}{half}{quote}"));
        }
    }
    out
}

fn first_line(code: &str) -> String {
    let line = code.lines().next().unwrap_or("");
    let cut: String = line.chars().take(30).collect();
    if cut.len() < code.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_shrink_to_empty_and_to_halves_keeping_prefix_and_quotes() {
        assert_eq!(shorter_strings("'abcd'"), ["''", "'ab'", "'cd'"]);
        assert_eq!(
            shorter_strings("r\"\"\"xy\"\"\""),
            ["r\"\"\"\"\"\"", "r\"\"\"x\"\"\"", "r\"\"\"y\"\"\""]
        );
        assert!(shorter_strings("''").is_empty());
    }

    #[test]
    fn displays_shrink_to_empty() {
        let texts = crate::passes::candidate_texts(&ShrinkValues, "{'a': 0}['k']\n");
        assert!(texts.contains(&"{}['k']\n".to_string()), "{texts:?}");
        assert!(crate::passes::candidate_texts(&ShrinkValues, "x = {}, []\n").is_empty());
    }

    #[test]
    fn integers_shrink_toward_zero_one_and_half() {
        let texts = crate::passes::candidate_texts(&ShrinkValues, "range(64)\n");
        assert_eq!(texts, ["range(0)\n", "range(1)\n", "range(32)\n"]);
        assert!(crate::passes::candidate_texts(&ShrinkValues, "f(1, 0)\n").is_empty());
    }
}
