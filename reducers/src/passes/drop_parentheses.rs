//! Drop the parentheses that group nothing any more: `if (x):`, `f((a))`, `return (a + b)`.
//!
//! ## What it removes
//! Parentheses left behind by rewrites: propagation parenthesizes the value it puts in place
//! of a name (`(x * 2) > 0`), and hoisting may then keep only an operand of it (`(x)`). A
//! pair goes when what it encloses is atomic (a name, a call, an attribute, a subscript, a
//! literal, a display), or stands alone where it is: the whole test of an `if`, `elif` or
//! `while`, the whole value of a `return`, an assignment or an expression statement, an
//! argument of a call (`f((1 - a))`), an element of a list, set or tuple display or a
//! subscript's index. A parenthesis that touches a keyword (`if(x)`) becomes a space. One
//! candidate, for every pair at once.
//!
//! ## Example
//! ```python
//! if (x):                  # before
//!     return (y.sum() + 1)
//!
//! if x:                    # after
//!     return y.sum() + 1
//! ```
//!
//! ## When it cannot apply
//! - What the pair encloses spans lines, is a number before a `.` (`(1).real`), a `yield`,
//!   an `await`, a `:=`, or a `lambda` where it stands alone but as a call's argument, or is the pair's own tuple or
//!   generator.
//! - The pair is a call's or a class's argument list.
//! - The script without them would not parse.

use std::collections::HashSet;

use crate::edit::{Candidate, Edit};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Expr, Ranged, Script, Stmt, all_bodies, all_exprs, is_atomic, span};

pub struct DropParentheses;

impl Pass for DropParentheses {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Cosmetic,
            ..PassInfo::new("drop_parentheses")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let exprs = all_exprs(script.body());
        let lists = argument_lists(script, &exprs);
        let alone = standing_alone(script.body(), &exprs);
        let protected = script.protected();
        let mut edits = Vec::new();
        let mut taken: Vec<std::ops::Range<usize>> = Vec::new();
        for &expr in &exprs {
            let range = span(expr);
            let droppable = is_atomic(expr) || alone.contains(&range.start);
            if !droppable || text[range.clone()].contains('\n') || own_brackets(expr) {
                continue;
            }
            let Some((open, close)) = enclosing_pair(text, &range) else {
                continue;
            };
            if lists.contains(&open)
                || (is_number(expr) && text[close + 1..].starts_with('.'))
                || taken
                    .iter()
                    .any(|t| t.contains(&open) || t.contains(&close))
                || protected
                    .iter()
                    .any(|p| p.contains(&open) || p.contains(&close))
            {
                continue;
            }
            taken.push(open..close + 1);
            edits.push(Edit::replace(
                open..open + 1,
                spacer(text[..open].chars().next_back()),
            ));
            edits.push(Edit::replace(
                close..close + 1,
                spacer(text[close + 1..].chars().next()),
            ));
        }
        if edits.is_empty() {
            return Vec::new();
        }
        let candidate = Candidate::new(
            format!("drop {} pair(s) of parentheses", edits.len() / 2),
            edits,
        );
        let parses = candidate
            .apply(text)
            .is_some_and(|t| crate::python::is_valid(&t, crate::python::PythonVersion::PY313));
        if parses { vec![candidate] } else { Vec::new() }
    }
}

/// What a dropped parenthesis leaves: a space where it kept a word from the next one.
fn spacer(neighbour: Option<char>) -> &'static str {
    match neighbour {
        Some(c) if c.is_alphanumeric() || c == '_' => " ",
        _ => "",
    }
}

/// The `(` and `)` directly around `range` (spaces between allowed), on its line.
fn enclosing_pair(text: &str, range: &std::ops::Range<usize>) -> Option<(usize, usize)> {
    let before = text[..range.start].trim_end_matches([' ', '\t']);
    let after = &text[range.end..];
    let after_trimmed = after.trim_start_matches([' ', '\t']);
    if !before.ends_with('(') || !after_trimmed.starts_with(')') {
        return None;
    }
    let open = before.len() - 1;
    let close = range.end + (after.len() - after_trimmed.len());
    Some((open, close))
}

/// Whether the expression's range holds its own brackets: a parenthesized tuple or generator.
fn own_brackets(expr: &Expr) -> bool {
    matches!(expr, Expr::Tuple(t) if t.parenthesized)
        || matches!(expr, Expr::Generator(g) if g.parenthesized)
}

fn is_number(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(_))
}

/// Where the argument lists of calls and class definitions open.
fn argument_lists(script: &Script, exprs: &[&Expr]) -> HashSet<usize> {
    let calls = exprs.iter().filter_map(|e| match e {
        Expr::Call(c) => Some(c.arguments.range().start().to_usize()),
        _ => None,
    });
    let classes = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::ClassDef(c) => c.arguments.as_ref().map(|a| a.range().start().to_usize()),
            _ => None,
        });
    calls.chain(classes).collect()
}

/// Where the expressions start that stand alone, which parentheses never need to group (a
/// `yield`, an `await`, a `:=` and a `lambda` aside): a statement's whole test or value, a
/// call's argument, an element of a display, a subscript's index.
fn standing_alone(body: &[Stmt], exprs: &[&Expr]) -> HashSet<usize> {
    let mut alone: Vec<&Expr> = Vec::new();
    for stmt in all_bodies(body).into_iter().flatten() {
        match stmt {
            Stmt::If(s) => alone.extend(
                std::iter::once(&*s.test)
                    .chain(s.elif_else_clauses.iter().filter_map(|c| c.test.as_ref())),
            ),
            Stmt::While(s) => alone.push(&s.test),
            Stmt::Return(s) => alone.extend(s.value.as_deref()),
            Stmt::Assign(s) => alone.push(&s.value),
            Stmt::AugAssign(s) => alone.push(&s.value),
            Stmt::Expr(s) => alone.push(&s.value),
            _ => {}
        }
    }
    // A call's argument ends at its comma or parenthesis, a lambda's body too.
    let mut arguments: Vec<&Expr> = Vec::new();
    for expr in exprs {
        match expr {
            Expr::Call(c) => arguments.extend(
                c.arguments
                    .args
                    .iter()
                    .chain(c.arguments.keywords.iter().map(|k| &k.value)),
            ),
            Expr::List(l) => alone.extend(l.elts.iter()),
            Expr::Set(l) => alone.extend(l.elts.iter()),
            Expr::Tuple(t) if t.parenthesized => alone.extend(t.elts.iter()),
            Expr::Subscript(s) => alone.push(&s.slice),
            _ => {}
        }
    }
    alone
        .into_iter()
        .filter(|e| needs_no_parentheses(e, false))
        .chain(
            arguments
                .into_iter()
                .filter(|e| needs_no_parentheses(e, true)),
        )
        .map(|e| e.start().to_usize())
        .collect()
}

/// Whether `e`, standing alone, reads the same without parentheses: not a `yield`, an
/// `await`, a `:=` or a starred expression, nor a `lambda` but as a call's `argument`.
fn needs_no_parentheses(e: &Expr, argument: bool) -> bool {
    !matches!(
        e,
        Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) | Expr::Named(_) | Expr::Starred(_)
    ) && (argument || !matches!(e, Expr::Lambda(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    fn dropped(text: &str) -> Vec<String> {
        candidate_texts(&DropParentheses, text)
    }

    #[test]
    fn parentheses_around_an_operand_or_a_whole_test_go() {
        assert_eq!(
            dropped("if (x):\n    return (y.sum() + 1)\nf((a), (1 - b))\nz = (a + b) * 2\n"),
            ["if x:\n    return y.sum() + 1\nf(a, 1 - b)\nz = (a + b) * 2\n"]
        );
    }

    #[test]
    fn a_lambda_handed_to_a_call_leaves_its_parentheses() {
        assert_eq!(
            dropped("f = jacrev((lambda t: g(t)))\nh = (lambda: 1)\n"),
            ["f = jacrev(lambda t: g(t))\nh = (lambda: 1)\n"]
        );
    }

    #[test]
    fn a_parenthesis_against_a_keyword_becomes_a_space() {
        assert_eq!(dropped("if(x):\n    pass\n"), ["if x:\n    pass\n"]);
        assert_eq!(
            dropped("while(a)and b:\n    pass\n"),
            ["while a and b:\n    pass\n"]
        );
    }

    #[test]
    fn argument_lists_tuples_numbers_and_yields_keep_theirs() {
        assert!(dropped("f(x)\nclass A(B):\n    pass\nt = (1, 2)\nv = (1).real\n").is_empty());
        assert!(dropped("def g():\n    x = (yield)\n    return (yield x)\n").is_empty());
        assert!(dropped("y = (a +\n     b)\n").is_empty());
    }
}
