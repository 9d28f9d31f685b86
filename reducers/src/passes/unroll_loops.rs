//! Unroll a `for` loop to one pass of its body.
//!
//! ## What it removes
//! The loop around a body: `for x in ITER: body` becomes `x = <one element>` followed by the
//! body, re-indented. The element tried first is the first, then the last, then for a
//! literal list, tuple or set the six after the first: for a literal that element itself, for
//! `range(n)` `0` and `n - 1`, for `range(a, …)` `a`, and otherwise `[*ITER][0]` and
//! `[*ITER][-1]`.
//!
//! ## Example
//! ```python
//! for board in ["imu-01", "thermal-07"]:     # before
//!     check(board)
//! board = "thermal-07"                       # after (the last element reaches the failure)
//! check(board)
//! ```
//!
//! A loop whose variable the body never reads (`for _ in itertools.count():`) may also
//! become two passes of its body, for a failure that the second pass meets over the state the
//! first left (a dict changed while it is iterated). That candidate grows the script: the
//! pass is a pump.
//!
//! A comprehension with one `for` and no `if` over a literal list, tuple or set of at most
//! eight elements (or `for a, b in` over `zip` of such literals, or over a literal of pairs)
//! becomes the display of its element for each of them, a generator a tuple, a dict
//! comprehension a dict display: `sum(line.gross() for line in [a, b])` →
//! `sum((a.gross(), b.gross()))`, `{k: f(k) for k in ["a"]}` → `{"a": f("a")}`, so that each
//! element meets the code that reads it. The element must read the variable once, or every
//! item be a literal or a name (an item is never computed twice). Over a display of one
//! element this is the display of one: `[torch.nn.ModuleList() for ch in (1,)]` (a config's
//! one channel, propagated) becomes `[torch.nn.ModuleList()]`. A `range(n)` of a literal
//! count counts as the display `(0, …, n - 1)`: `[nn.Linear(2, 1) for _ in range(1)]` becomes
//! `[nn.Linear(2, 1)]`.
//!
//! ## When it cannot apply
//! Loops with an `else`, `async for`, and bodies with a `break` or `continue` of this loop;
//! comprehensions that are `async`, nested, filtered, over anything but a display, or whose
//! element binds names of its own (a lambda, a comprehension, `:=`); one whose items would go
//! into an f-string's fields that cannot hold them under the script's Python version (before
//! 3.12, the f-string's own quotes).

use std::ops::Range;

use super::helpers::{body_at_indent, f_strings, fits_f_strings, largest_first};
use crate::edit::{Candidate, Edit, indent_at, line_end, line_start, lines_label, starts_line};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, span};

pub struct UnrollLoops;

impl Pass for UnrollLoops {
    /// Two passes of a body are longer than the loop; they are kept when deletion then gets
    /// further.
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("unroll_loops")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let Stmt::For(for_) = stmt else { continue };
                let range = span(stmt);
                if for_.is_async || !for_.orelse.is_empty() || !starts_line(text, range.start) {
                    continue;
                }
                if for_.body.iter().any(super::unwrap_blocks::leaves_loop) {
                    continue;
                }
                let indent = indent_at(text, range.start);
                let Some(body_text) = body_at_indent(script, &for_.body, indent) else {
                    continue;
                };
                let target = script.slice(&*for_.target);
                let label = lines_label(text, &range);
                let lines = line_start(text, range.start)..line_end(text, range.end);
                for (which, value) in elements(script, &for_.iter) {
                    out.push(Candidate::new(
                        format!("unroll the loop at {label} with its {which}"),
                        vec![Edit::replace(
                            lines.clone(),
                            format!("{indent}{target} = {value}\n{body_text}"),
                        )],
                    ));
                }
                // A loop whose variable the body never reads (`for _ in itertools.count()`)
                // may fail only on its second pass, over state the first one left.
                if !reads_name(&for_.body, target) {
                    out.push(Candidate::new(
                        format!("unroll the loop at {label} to two passes of its body"),
                        vec![Edit::replace(
                            lines.clone(),
                            format!("{body_text}{body_text}"),
                        )],
                    ));
                }
            }
        }
        out.extend(comprehensions(script));
        largest_first(&mut out);
        out
    }
}

/// The most elements of a literal a comprehension is unrolled over.
const MAX_UNROLLED: usize = 8;

/// Each comprehension over a literal display, as the display of its element per item.
fn comprehensions(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for expr in crate::python::all_exprs(script.body()) {
        // The element's parts (a dict's key and value), and where its code lies.
        let (elt, generators, open, close): (Vec<&Expr>, _, _, _) = match expr {
            Expr::ListComp(c) => (vec![&*c.elt], &c.generators, "[", "]"),
            Expr::SetComp(c) => (vec![&*c.elt], &c.generators, "{", "}"),
            Expr::Generator(c) => (vec![&*c.elt], &c.generators, "(", ")"),
            Expr::DictComp(c) => {
                let Some(key) = c.key.as_deref() else {
                    continue;
                };
                (vec![key, &*c.value], &c.generators, "{", "}")
            }
            _ => continue,
        };
        let [generator] = generators.as_slice() else {
            continue;
        };
        if generator.is_async || !generator.ifs.is_empty() {
            continue;
        }
        let Some((names, items)) = rows(script, &generator.target, &generator.iter) else {
            continue;
        };
        if items.is_empty() || items.len() > MAX_UNROLLED {
            continue;
        }
        let inner: Vec<&Expr> = elt
            .iter()
            .flat_map(|e| crate::python::exprs_of(e))
            .collect();
        if inner.iter().any(|e| {
            matches!(
                e,
                Expr::Lambda(_)
                    | Expr::ListComp(_)
                    | Expr::SetComp(_)
                    | Expr::DictComp(_)
                    | Expr::Generator(_)
                    | Expr::Named(_)
            )
        }) {
            continue;
        }
        // Where the element reads each of the names, and whether every value it reads
        // more than once is a literal or a name (an item is never computed twice).
        let reads: Vec<Vec<Range<usize>>> = names
            .iter()
            .map(|name| {
                inner
                    .iter()
                    .filter(|e| matches!(e, Expr::Name(n) if n.id.as_str() == *name))
                    .map(|e| span(*e))
                    .collect()
            })
            .collect();
        if (0..names.len()).any(|i| reads[i].len() > 1 && !items.iter().all(|row| row[i].simple)) {
            continue;
        }
        let elt_range = span(elt[0]).start..span(elt[elt.len() - 1]).end;
        let mut unrolled = Vec::new();
        for row in &items {
            let mut edits = Vec::new();
            for (item, ranges) in row.iter().zip(&reads) {
                edits.extend(
                    ranges
                        .iter()
                        .map(|r| Edit::replace(r.clone(), item.code.clone())),
                );
            }
            let Some(code) = crate::edit::apply_edits_within(text, elt_range.clone(), &edits)
            else {
                continue;
            };
            unrolled.push(code);
        }
        let comma = if open == "(" && unrolled.len() == 1 {
            ","
        } else {
            ""
        };
        let range = span(expr);
        out.push(Candidate::new(
            format!(
                "unroll the comprehension at line {} over its {} elements",
                crate::edit::line_of(text, range.start),
                items.len()
            ),
            vec![Edit::replace(
                range,
                format!("{open}{}{comma}{close}", unrolled.join(", ")),
            )],
        ));
    }
    // An item unrolled into an f-string's field must fit there (its quotes, before 3.12).
    let f_strings = f_strings(script);
    out.retain(|c| fits_f_strings(script, &f_strings, &c.edits));
    out
}

/// A value a comprehension's name takes: its code, and whether it is a literal or a name
/// (which may be written more than once: nothing is computed twice).
struct Item {
    code: String,
    simple: bool,
}

impl Item {
    fn of(script: &Script, e: &Expr) -> Item {
        Item {
            code: script.operand(e),
            simple: crate::python::is_literal(e) || matches!(e, Expr::Name(_)),
        }
    }
}

/// The names a comprehension's `target` binds and, for each item of `iter`, the value each
/// takes: a name over a display or over `range(n)` of a literal `n` (at most
/// [`MAX_UNROLLED`]), or names over `zip` of displays (up to the shortest) or over a display
/// of tuples of as many elements.
fn rows<'a>(
    script: &Script,
    target: &'a Expr,
    iter: &'a Expr,
) -> Option<(Vec<&'a str>, Vec<Vec<Item>>)> {
    let display = |e: &'a Expr| -> Option<&'a [Expr]> {
        let elts = match e {
            Expr::List(l) => &l.elts[..],
            Expr::Tuple(t) => &t.elts[..],
            Expr::Set(s) => &s.elts[..],
            _ => return None,
        };
        (!elts.iter().any(|i| matches!(i, Expr::Starred(_)))).then_some(elts)
    };
    if let Expr::Name(name) = target {
        let items: Vec<Item> = match range_count(iter) {
            Some(n) => (0..n)
                .map(|i| Item {
                    code: i.to_string(),
                    simple: true,
                })
                .collect(),
            None => display(iter)?.iter().map(|i| Item::of(script, i)).collect(),
        };
        return Some((
            vec![name.id.as_str()],
            items.into_iter().map(|i| vec![i]).collect(),
        ));
    }
    let Expr::Tuple(tuple) = target else {
        return None;
    };
    let names = tuple
        .elts
        .iter()
        .map(|e| match e {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let columns: Vec<&[Expr]> = match iter {
        Expr::Call(call)
            if matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "zip")
                && call.arguments.keywords.is_empty()
                && call.arguments.args.len() == names.len() =>
        {
            call.arguments
                .args
                .iter()
                .map(|a| match a {
                    Expr::List(_) | Expr::Tuple(_) => display(a),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?
        }
        _ => {
            let rows = display(iter)?
                .iter()
                .map(|item| match item {
                    Expr::Tuple(t) if t.elts.len() == names.len() => display(item),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            let rows = rows
                .iter()
                .map(|r| r.iter().map(|e| Item::of(script, e)).collect())
                .collect();
            return Some((names, rows));
        }
    };
    let len = columns.iter().map(|c| c.len()).min()?;
    let rows = (0..len)
        .map(|i| columns.iter().map(|c| Item::of(script, &c[i])).collect())
        .collect();
    Some((names, rows))
}

/// `n` of `range(n)` with a literal `n` from 1 to [`MAX_UNROLLED`].
fn range_count(iter: &Expr) -> Option<usize> {
    let Expr::Call(call) = iter else { return None };
    let is_range = matches!(&*call.func, Expr::Name(f) if f.id.as_str() == "range");
    let [Expr::NumberLiteral(n)] = call.arguments.args.as_ref() else {
        return None;
    };
    if !is_range || !call.arguments.keywords.is_empty() {
        return None;
    }
    let n = n.value.as_int()?.as_usize()?;
    (1..=MAX_UNROLLED).contains(&n).then_some(n)
}

/// How many elements between the first and the last of a literal are tried.
const MAX_MIDDLE: usize = 6;

/// Whether `body` reads the name `name`.
fn reads_name(body: &[Stmt], name: &str) -> bool {
    crate::python::all_exprs(body)
        .iter()
        .any(|e| matches!(e, Expr::Name(n) if n.id.as_str() == name))
}

/// The first and last elements of an iterable, as code.
fn elements(script: &Script, iter: &Expr) -> Vec<(String, String)> {
    let literal = match iter {
        Expr::List(l) => Some(&l.elts[..]),
        Expr::Tuple(t) => Some(&t.elts[..]),
        Expr::Set(s) => Some(&s.elts[..]),
        _ => None,
    };
    if let Some(elts) = literal {
        let mut out = Vec::new();
        if let Some(first) = elts.first() {
            out.push(("first element".into(), script.slice(first).to_string()));
        }
        if elts.len() > 1 {
            out.push((
                "last element".into(),
                script.slice(&elts[elts.len() - 1]).to_string(),
            ));
        }
        // Then the others, for a failure that only a middle element reaches.
        let middle = elts.len().saturating_sub(1).min(MAX_MIDDLE + 1);
        for (i, e) in elts.iter().enumerate().take(middle).skip(1) {
            out.push((format!("element {}", i + 1), script.slice(e).to_string()));
        }
        return out;
    }
    if let Expr::Call(call) = iter
        && matches!(&*call.func, Expr::Name(n) if n.id.as_str() == "range")
        && call.arguments.keywords.is_empty()
    {
        match &*call.arguments.args {
            [n] => {
                return vec![
                    ("first element".into(), "0".into()),
                    ("last element".into(), format!("{} - 1", script.slice(n))),
                ];
            }
            [a, ..] => return vec![("first element".into(), script.slice(a).to_string())],
            [] => {}
        }
    }
    let code = script.slice(iter);
    vec![
        ("first element".into(), format!("[*{code}][0]")),
        ("last element".into(), format!("[*{code}][-1]")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    #[test]
    fn a_literal_loop_unrolls_to_its_first_and_last_element() {
        let texts = candidate_texts(&UnrollLoops, "for b in ['a', 'bb']:\n    check(b)\n");
        assert!(
            texts.contains(&"b = 'a'\ncheck(b)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"b = 'bb'\ncheck(b)\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn a_range_loop_binds_zero_and_a_generic_one_indexes() {
        let texts = candidate_texts(
            &UnrollLoops,
            "for i in range(n):\n    f(i)\nfor k, v in d.items():\n    g(k)\n",
        );
        assert!(
            texts.iter().any(|t| t.starts_with("i = 0\nf(i)\n")),
            "{texts:?}"
        );
        assert!(
            texts
                .iter()
                .any(|t| t.contains("k, v = [*d.items()][0]\ng(k)\n")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_loop_over_an_unread_variable_may_run_its_body_twice() {
        let texts = candidate_texts(&UnrollLoops, "for _ in count():\n    step()\n");
        assert!(texts.contains(&"step()\nstep()\n".to_string()), "{texts:?}");
        let texts = candidate_texts(&UnrollLoops, "for i in count():\n    step(i)\n");
        assert!(
            !texts.contains(&"step(i)\nstep(i)\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn a_literal_loop_tries_its_middle_elements_last() {
        let texts = candidate_texts(&UnrollLoops, "for b in [1, 2, 3]:\n    check(b)\n");
        assert_eq!(
            texts,
            [
                "b = 1\ncheck(b)\n",
                "b = 3\ncheck(b)\n",
                "b = 2\ncheck(b)\n"
            ]
        );
    }

    #[test]
    fn a_comprehension_over_one_element_becomes_a_display_of_one() {
        let texts = candidate_texts(&UnrollLoops, "b = [\n    M()\n    for ch in (1,)\n]\n");
        assert_eq!(texts, ["b = [M()]\n"]);
        let texts = candidate_texts(&UnrollLoops, "b = [f(x) for x in [a]]\n");
        assert_eq!(texts, ["b = [f(a)]\n"]);
        let texts = candidate_texts(&UnrollLoops, "s = sum(x for x in (a,))\n");
        assert_eq!(texts, ["s = sum((a,))\n"]);
        let texts = candidate_texts(&UnrollLoops, "ms = [nn.Linear(2, i) for i in range(2)]\n");
        assert_eq!(texts, ["ms = [nn.Linear(2, 0), nn.Linear(2, 1)]\n"]);
        let texts = candidate_texts(&UnrollLoops, "ms = [M() for _ in range(1)]\n");
        assert_eq!(texts, ["ms = [M()]\n"]);
        assert!(candidate_texts(&UnrollLoops, "ms = [M() for _ in range(n)]\n").is_empty());
    }

    #[test]
    fn a_dict_comprehension_over_a_display_becomes_a_dict_display() {
        let texts = candidate_texts(&UnrollLoops, "d = {k: f(k) for k in ['a', 'b']}\n");
        assert_eq!(texts, ["d = {'a': f('a'), 'b': f('b')}\n"]);
        let texts = candidate_texts(&UnrollLoops, "d = {k: v for k, v in [(a, 1)]}\n");
        assert_eq!(texts, ["d = {a: 1}\n"]);
    }

    #[test]
    fn a_loop_with_break_is_not_unrolled() {
        assert!(candidate_texts(&UnrollLoops, "for i in x:\n    break\n").is_empty());
    }
}
