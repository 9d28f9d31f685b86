//! Shrink literal values: integers toward 1, floats toward 1.0 or 0.0, strings toward a
//! character.
//!
//! ## What it removes
//! Size that a value does not need: an integer `n` above 1 becomes `1` or `n / 2` (so
//! `range(100)` gets to `range(1)` by halving), a float above 1 in size becomes `1.0` and one
//! below it `0.0` (a tolerance of `1e-5` never becomes `1.0`), a qualified name (`'aten::add.Tensor'`)
//! loses its last part or its first, a string becomes its first half
//! or its second half — and, round after round, the part the failure needs.
//! The name of a module-level function or class used as a value rather than called (a dict
//! key, an argument) becomes `0`, so that its definition can go. `bool(x)` becomes `True` or
//! `False`. A tensor written out as float literals, as a probe freezes a small one
//! (`torch.tensor([[[0.0]], [[1.0]]])`), becomes `torch.zeros(2, 1, 1)` or `torch.ones(…)`;
//! one of integers keeps its dtype (`torch.ones(16, dtype=torch.int64)`).
//!
//! A tolerance keyword's value (`rtol=1e-3`) and an annotation do not shrink: a tolerance
//! goes whole or not at all (`delete_arguments`), an annotation stays a type.
//!
//! Nor does data written as a dict display: the literals of its keys (`"line_items"`,
//! `1008`, `("tsv", 2)`), and the strings among its values and inside the lists, tuples and
//! sets of its values (`"sku": "reed-diffuser"`). Data that is read as a whole (serialized,
//! hashed, counted, walked generically) keeps entries no code names, and
//! `{"": 0, "li": [{"s": "reed"}]}` is no data a person writes: an entry goes whole or not
//! at all (`delete_elements`), and the entries that stay read as they were written. Numbers
//! among the values are sizes and counts, and shrink.
//!
//! An exponent halves down to 2 and no further: `x ** 1` is no power a person writes.
//!
//! A size goes to 1, never on to 0: an integer is never made `0`, a float above 1 only `1.0`,
//! a string never empty, a display never emptied (`delete_elements` takes it down to one
//! element). A count of 0, an empty string or an empty display changes which code runs (a
//! loop that never runs, an empty tensor's kernel), so a failure that survives it is often
//! another bug that merely ends the same way: `torch.tensor([[1.0]])` must not drift to
//! `torch.tensor([[]])`, nor a size mismatch between `Linear(1, 2)` and `Linear(1, 1)` to one
//! with `Linear(1, 0)`. Halving stops at 2, then 1: a failure that needs 0 had it already.
//!
//! ## Example
//! ```python
//! for i in range(args.samples * 64):   # before
//! for i in range(args.samples * 1):    # after
//! ```
//!
//! ## When it cannot apply
//! Integers that are already 0 or 1, floats that are 0.0 or 1.0 in size, strings of one
//! character or none, byte strings, f-strings and implicitly concatenated strings, and
//! displays of any size; tolerances, annotations, and the keys and strings of dict displays.
//! A string's half that ends inside an escape (`r"C:\data"` → `r"C:\"`) is no literal and is
//! not proposed.

use super::helpers::removed;
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo, Phase};
use std::collections::HashSet;

use crate::python::{
    Expr, Script, Stmt, all_bodies, all_exprs, ast, exprs_of, is_literal, is_valid, span,
};

pub struct ShrinkValues;

impl Pass for ShrinkValues {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("shrink_values")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
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
        // A tolerance goes whole or not at all (`delete_arguments`), and an annotation stays
        // a type: no value inside either shrinks.
        let mut kept = kept_whole(script, &exprs);
        kept.extend(super::helpers::library_tokens(script));
        let exponents = exponents(&exprs);
        // One group per value, in the order its candidates are to be tried.
        let mut groups: Vec<Vec<Candidate>> = Vec::new();
        for expr in exprs {
            let range = span(expr);
            if kept
                .iter()
                .any(|k| k.start <= range.start && range.end <= k.end)
            {
                continue;
            }
            let code = &text[range.clone()];
            let line = line_of(text, range.start);
            let mut smaller: Vec<String> = match expr {
                // A power stays one: halving an exponent stops at 2 (`x ** 1` is no
                // operation a person writes; deletion drops the power where it is not needed).
                Expr::NumberLiteral(n) if exponents.contains(&range.start) => match &n.value {
                    ast::Number::Int(i) => match i.as_u64() {
                        Some(v) if v > 3 => vec![(v / 2).to_string()],
                        _ => Vec::new(),
                    },
                    _ => Vec::new(),
                },
                Expr::NumberLiteral(n) => match &n.value {
                    ast::Number::Int(i) => match i.as_u64() {
                        Some(0 | 1) => Vec::new(),
                        // A size goes to 1, never on to 0 (an empty loop, an empty tensor).
                        // `1` and `v / 2` coincide for 2 and 3; `dedup` drops the repeat.
                        Some(v) => vec!["1".into(), (v / 2).to_string()],
                        None => vec!["1".into()],
                    },
                    // Only ever smaller: a float above 1 goes to `1.0` as a size goes to 1,
                    // and a tolerance of `1e-5` may become `0.0`, never `1.0`.
                    ast::Number::Float(f) if f.abs() > 1.0 => vec!["1.0".into()],
                    ast::Number::Float(f) if *f != 0.0 && f.abs() < 1.0 => vec!["0.0".into()],
                    _ => Vec::new(),
                },
                // A half that ends inside an escape (`r"C:\"`, `"\x4"`) is no literal.
                Expr::StringLiteral(s) if !s.value.is_implicit_concatenated() => {
                    shorter_strings(code)
                        .into_iter()
                        .filter(|half| is_valid(half, script.version()))
                        .collect()
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
                // A tensor written out as nested float literals (what a probe froze) is
                // filled instead, as a person writes it: `torch.zeros(2, 1)`.
                Expr::Call(c) => filled_tensors(script, c),
                _ => Vec::new(),
            };
            smaller.dedup();
            groups.push(
                smaller
                    .into_iter()
                    .filter(|value| value != code)
                    .map(|value| {
                        Candidate::new(
                            format!("shrink `{}` to `{value}` at line {line}", first_line(code)),
                            vec![Edit::replace(range.clone(), value)],
                        )
                    })
                    .collect(),
            );
        }
        // Largest values first, each value's candidates in their own order.
        groups.sort_by_key(|g| std::cmp::Reverse(g.iter().map(removed).max()));
        groups.into_iter().flatten().collect()
    }
}

/// Where the exponents of the powers among `exprs` start.
fn exponents(exprs: &[&Expr]) -> HashSet<usize> {
    exprs
        .iter()
        .filter_map(|e| match e {
            Expr::BinOp(b) if b.op == ast::Operator::Pow => Some(span(&*b.right).start),
            _ => None,
        })
        .collect()
}

/// `torch.zeros(SHAPE)` and `torch.ones(SHAPE)` for `torch.tensor(LIST)` of a rectangular
/// nested list of number literals (keywords carried over; a list of integers alone keeps its
/// dtype, `dtype=torch.int64`, where no keyword gives one); nothing for any other call.
fn filled_tensors(script: &Script, call: &ast::ExprCall) -> Vec<String> {
    let Expr::Attribute(func) = &*call.func else {
        return Vec::new();
    };
    let ([list @ Expr::List(_)], "tensor") = (&*call.arguments.args, func.attr.as_str()) else {
        return Vec::new();
    };
    let Some((shape, floats)) = number_shape(list) else {
        return Vec::new();
    };
    let module = script.slice(&*func.value);
    let mut arguments: Vec<String> = shape.iter().map(usize::to_string).collect();
    let keywords = &call.arguments.keywords;
    arguments.extend(keywords.iter().map(|k| script.slice(k).to_string()));
    let typed = keywords
        .iter()
        .any(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == "dtype"));
    if !floats && !typed {
        arguments.push(format!("dtype={module}.int64"));
    }
    ["zeros", "ones"]
        .iter()
        .map(|fill| format!("{module}.{fill}({})", arguments.join(", ")))
        .collect()
}

/// The shape of a rectangular, non-empty nested list of number literals, and whether one of
/// them is a float.
fn number_shape(expr: &Expr) -> Option<(Vec<usize>, bool)> {
    match expr {
        Expr::NumberLiteral(n) => match n.value {
            ast::Number::Float(_) => Some((Vec::new(), true)),
            ast::Number::Int(_) => Some((Vec::new(), false)),
            ast::Number::Complex { .. } => None,
        },
        Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub => number_shape(&u.operand),
        Expr::List(l) if !l.elts.is_empty() => {
            let (inner, mut floats) = number_shape(&l.elts[0])?;
            for e in &l.elts[1..] {
                let (shape, float) = number_shape(e)?;
                if shape != inner {
                    return None;
                }
                floats |= float;
            }
            Some(([vec![l.elts.len()], inner].concat(), floats))
        }
        _ => None,
    }
}

/// The keyword arguments that are tolerances.
pub(crate) const TOLERANCES: &[&str] = &[
    "rtol",
    "atol",
    "rel_tol",
    "abs_tol",
    "tol",
    "tolerance",
    "places",
    "delta",
    "decimal",
];

/// The ranges whose values do not shrink: the value of a tolerance keyword (`rtol=1e-3`),
/// every annotation (`lines: List[Line]`), and the data of dict displays (see [`dict_data`]).
fn kept_whole(script: &Script, exprs: &[&Expr]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call(c) => Some(&c.arguments.keywords),
            _ => None,
        })
        .flatten()
        .filter(|k| {
            k.arg
                .as_ref()
                .is_some_and(|a| TOLERANCES.contains(&a.as_str()))
        })
        .map(|k| span(&k.value))
        .collect();
    for expr in exprs {
        if let Expr::Dict(d) = expr {
            dict_data(d, &mut out);
        }
    }
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        match stmt {
            Stmt::AnnAssign(a) => out.push(span(&*a.annotation)),
            Stmt::FunctionDef(f) => {
                let p = &f.parameters;
                let annotations = p
                    .posonlyargs
                    .iter()
                    .chain(&p.args)
                    .chain(&p.kwonlyargs)
                    .filter_map(|a| a.parameter.annotation.as_deref())
                    .chain(
                        p.vararg
                            .iter()
                            .chain(&p.kwarg)
                            .filter_map(|a| a.annotation.as_deref()),
                    )
                    .chain(f.returns.as_deref());
                out.extend(annotations.map(span));
            }
            _ => {}
        }
    }
    out
}

/// The ranges of a dict display's data: each literal in a key, and each string among its
/// values, through the lists, tuples and sets that hold them (a nested dict display is one
/// of the script's expressions, and has its own turn). A key that names a class or function
/// of the script may still become `0`, as any such name handed around as a value.
fn dict_data(dict: &ast::ExprDict, out: &mut Vec<std::ops::Range<usize>>) {
    fn strings(expr: &Expr, out: &mut Vec<std::ops::Range<usize>>) {
        match expr {
            Expr::StringLiteral(_) => out.push(span(expr)),
            Expr::List(l) => l.elts.iter().for_each(|e| strings(e, out)),
            Expr::Tuple(t) => t.elts.iter().for_each(|e| strings(e, out)),
            Expr::Set(s) => s.elts.iter().for_each(|e| strings(e, out)),
            _ => {}
        }
    }
    for item in &dict.items {
        if let Some(key) = &item.key {
            out.extend(
                exprs_of(key)
                    .into_iter()
                    .filter(|e| is_literal(e))
                    .map(span),
            );
        }
        strings(&item.value, out);
    }
}

/// The two halves of the contents, with the literal's own prefix and quotes; none for one
/// character, which is never made empty.
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
    // Between two characters as written, not inside an escape (`"1 3\n5 7"` halves to
    // `"1 3\n"`, not to `"n5 7"`); a raw string has none.
    let mid = match prefix.contains(['r', 'R']) {
        true => (body.len() / 2..=body.len())
            .find(|&i| body.is_char_boundary(i))
            .unwrap_or(body.len()),
        false => super::shrink_literals::units(body, 0..body.len())
            .into_iter()
            .map(|(unit, _)| unit.end)
            .find(|&end| end >= body.len() / 2)
            .unwrap_or(body.len()),
    };
    // A qualified name loses a whole part: `'aten::summary.create_file_writer'` becomes
    // `'aten::summary'` or `'summary.create_file_writer'`, never `'::su'`.
    if let Some(parts) = super::helpers::qualified_parts(body) {
        let (first, last) = (parts[0].end, parts[parts.len() - 1].start);
        return [&body[..last], &body[first..]]
            .into_iter()
            .map(|half| half.trim_matches([':', '.']))
            .map(|half| format!("{prefix}{quote}{half}{quote}"))
            .collect();
    }
    // Words stay words: `"a, b, c"` halves to `"a, "`, not on to `", "`.
    let worded = |t: &str| t.chars().any(char::is_alphanumeric);
    let mut out = Vec::new();
    for half in [&body[..mid], &body[mid..]] {
        if !half.is_empty() && half.len() < body.len() && (worded(half) || !worded(body)) {
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
    use crate::passes::helpers::candidate_texts;

    #[test]
    fn tolerances_and_annotations_do_not_shrink() {
        let text = "class Line:\n    pass\ndef f(x: Line = 5) -> Line:\n    lines: Line = 3\n    torch.testing.assert_close(x, x, rtol=1e-3, atol=12.5)\n";
        let texts = candidate_texts(&ShrinkValues, text);
        assert!(
            texts
                .iter()
                .all(|t| t.contains("x: Line") && t.contains("-> Line")),
            "{texts:#?}"
        );
        assert!(
            texts.iter().all(|t| t.contains("lines: Line")),
            "{texts:#?}"
        );
        assert!(
            texts.iter().all(|t| t.contains("rtol=1e-3, atol=12.5")),
            "{texts:#?}"
        );
        assert!(
            texts.iter().any(|t| t.contains("x: Line = 1")),
            "{texts:#?}"
        );
    }

    #[test]
    fn an_exponent_halves_down_to_two() {
        let texts = candidate_texts(&ShrinkValues, "y = (x ** 8).sum()\nz = x ** 2\n");
        assert_eq!(texts, ["y = (x ** 4).sum()\nz = x ** 2\n"], "{texts:#?}");
    }

    #[test]
    fn a_dict_keeps_its_keys_and_strings_as_written_and_its_counts_shrink() {
        let text = "json.dumps({\"reed-diffuser\": 2, 1008: 1, \"tags\": [\"fragile\", (\"gift\",)], \"order\": {\"number\": \"A-20417\"}}, sort_keys=True)\n";
        let texts = candidate_texts(&ShrinkValues, text);
        assert_eq!(
            texts,
            [text.replace("\"reed-diffuser\": 2", "\"reed-diffuser\": 1")],
            "{texts:#?}"
        );
    }

    #[test]
    fn a_class_of_the_script_as_a_dict_key_still_becomes_zero() {
        let text = "class Csv:\n    pass\nREADERS = {Csv: \"read_csv\", (\"tsv\", 2): 1}\n";
        let texts = candidate_texts(&ShrinkValues, text);
        assert_eq!(texts, [text.replace("{Csv:", "{0:")], "{texts:#?}");
    }

    #[test]
    fn strings_outside_dict_displays_still_shrink() {
        let texts = candidate_texts(&ShrinkValues, "d = {k: f(\"abcd\")}\nx = [\"wxyz\"]\n");
        assert_eq!(
            texts,
            [
                "d = {k: f(\"ab\")}\nx = [\"wxyz\"]\n",
                "d = {k: f(\"cd\")}\nx = [\"wxyz\"]\n",
                "d = {k: f(\"abcd\")}\nx = [\"wx\"]\n",
                "d = {k: f(\"abcd\")}\nx = [\"yz\"]\n",
            ]
        );
    }

    #[test]
    fn a_qualified_name_loses_whole_parts() {
        assert_eq!(
            shorter_strings("'aten::summary.create_file_writer'"),
            ["'aten::summary'", "'summary.create_file_writer'"]
        );
        assert_eq!(shorter_strings("'torch.nn'"), ["'torch'", "'nn'"]);
        // Not a name: halved as any string.
        assert_eq!(shorter_strings("'a..b'"), ["'a.'", "'.b'"]);
    }

    #[test]
    fn a_string_halves_between_escapes_not_inside_one() {
        assert_eq!(shorter_strings(r#""1 3\n5 7""#), [r#""1 3\n""#, r#""5 7""#]);
    }

    #[test]
    fn strings_shrink_to_halves_keeping_prefix_and_quotes() {
        assert_eq!(shorter_strings("'abcd'"), ["'ab'", "'cd'"]);
        assert_eq!(
            shorter_strings("r\"\"\"xy\"\"\""),
            ["r\"\"\"x\"\"\"", "r\"\"\"y\"\"\""]
        );
        assert!(shorter_strings("''").is_empty());
        assert_eq!(shorter_strings("'a, '"), ["'a'"]);
        assert_eq!(shorter_strings("', ; '"), ["', '", "'; '"]);
    }

    #[test]
    fn a_one_character_string_is_not_emptied() {
        assert!(shorter_strings("'a'").is_empty());
        assert!(candidate_texts(&ShrinkValues, "s.split(',')\n").is_empty());
    }

    #[test]
    fn a_size_goes_to_one_and_never_on_to_zero() {
        let texts = candidate_texts(&ShrinkValues, "range(64)\n");
        assert_eq!(texts, ["range(1)\n", "range(32)\n"]);
        assert_eq!(candidate_texts(&ShrinkValues, "range(3)\n"), ["range(1)\n"]);
        let huge = candidate_texts(&ShrinkValues, "range(123456789012345678901234567890)\n");
        assert_eq!(huge, ["range(1)\n"]);
    }

    #[test]
    fn an_integer_of_one_is_not_shrunk_to_zero() {
        assert!(candidate_texts(&ShrinkValues, "f(1, 0)\n").is_empty());
    }

    #[test]
    fn a_float_above_one_becomes_one_and_a_tolerance_zero() {
        assert_eq!(candidate_texts(&ShrinkValues, "f(2.5)\n"), ["f(1.0)\n"]);
        assert_eq!(candidate_texts(&ShrinkValues, "f(1e-5)\n"), ["f(0.0)\n"]);
        assert!(candidate_texts(&ShrinkValues, "f(1.0, 0.0)\n").is_empty());
    }

    #[test]
    fn a_tensor_of_float_literals_is_filled_instead() {
        let texts = candidate_texts(
            &ShrinkValues,
            "t = torch.tensor([[[0.0]], [[-1.5]]], requires_grad=True)\n",
        );
        assert!(
            texts.contains(&"t = torch.zeros(2, 1, 1, requires_grad=True)\n".to_string()),
            "{texts:#?}"
        );
        assert!(
            texts.contains(&"t = torch.ones(2, 1, 1, requires_grad=True)\n".to_string()),
            "{texts:#?}"
        );
        // Integers keep their dtype.
        let texts = candidate_texts(&ShrinkValues, "x = torch.tensor([1, 1, 1, 1])\n");
        assert!(
            texts.contains(&"x = torch.ones(4, dtype=torch.int64)\n".to_string()),
            "{texts:#?}"
        );
        // Ragged, of booleans or empty: left as written.
        for text in [
            "torch.tensor([[0.0], [1.0, 2.0]])\n",
            "torch.tensor([True, False])\n",
            "torch.tensor([])\n",
        ] {
            let texts = candidate_texts(&ShrinkValues, text);
            assert!(texts.iter().all(|t| !t.contains("zeros")), "{texts:#?}");
        }
    }

    #[test]
    fn a_one_element_list_is_not_emptied() {
        let texts = candidate_texts(&ShrinkValues, "torch.tensor([[x]])\n");
        assert!(texts.is_empty(), "{texts:?}");
        assert!(candidate_texts(&ShrinkValues, "g([[]], (a,), {k: v})\n").is_empty());
    }

    #[test]
    fn a_display_of_several_elements_is_not_emptied_either() {
        let texts = candidate_texts(&ShrinkValues, "{k: v, j: w}[key]\n");
        assert!(texts.is_empty(), "{texts:?}");
    }
}
