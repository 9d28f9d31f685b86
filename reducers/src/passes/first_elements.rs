//! Fold `[*ITER][0]`, the first element that an unrolled loop binds, into that element.
//!
//! ## What it removes
//! The iteration that `unroll_loops` leaves behind when it cannot name the first element
//! itself, for whatever `ITER` says how to get it without iterating:
//! - a list or tuple display: its first element (`[-1]`: its last); a dict display: its first
//!   key, with `.items()` its first key and value, with `.values()` its first value;
//! - `enumerate(xs)` → `(0, [*xs][0])` (the `start` when given); `zip(a, b)` →
//!   `([*a][0], [*b][0])`, and so does `itertools.product(a, b)`; `map(f, xs)` →
//!   `f([*xs][0])`; `iter(xs)` → `[*xs][0]`; `range(a, …)` → `a`, `range(n)` → `0`;
//! - a comprehension with one `for n in xs` and no condition: its element with `n` replaced by
//!   `[*xs][0]` (`{c: c for c in (a,)}.items()` → `([*(a,)][0], [*(a,)][0])`, which the next
//!   round folds to `(a, a)`);
//! - `DataLoader(TensorDataset(x, y), batch_size=b)` (any other keyword ignored, shuffling
//!   included) → `[x[:b], y[:b]]`, its first batch without a shuffle; `TensorDataset(x, y)`
//!   → `(x[0], y[0])`.
//!
//! `*[a, b]` unpacked into a call's arguments becomes `a, b` (what an unrolled comprehension
//! leaves in `nn.Sequential(*[…])`), and `nn.Sequential(m)`, a container of one module, `m`.
//!
//! `next(iter(xs))` becomes `[*xs][0]` first. All the folds at once come first, then each
//! one. A fold may be longer than what it replaces (`zip` of two names), so the pass is a
//! pump: kept when the names it exposes then go.
//!
//! ## Example
//! ```python
//! step, (xb, yb) = [*enumerate(DataLoader(TensorDataset(x, y), batch_size=4))][0]  # before
//! step, (xb, yb) = (0, [*DataLoader(TensorDataset(x, y), batch_size=4)][0])         # after
//! step, (xb, yb) = (0, [x[:4], y[:4]])                                              # next round
//! ```
//!
//! ## When it cannot apply
//! An empty display, a starred element or argument, a comprehension with a condition, more
//! than one `for`, a target other than a name, or a lambda, comprehension or f-string in its
//! element; a subscript that is assigned to.

use super::helpers::{combine, is_target, short};
use crate::edit::{Candidate, Edit, lines_label};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, all_exprs, ast, exprs_of, is_atomic, span};

pub struct FirstElements;

impl Pass for FirstElements {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            ..PassInfo::new("first_elements")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut singles = Vec::new();
        for expr in all_exprs(script.body()) {
            singles.extend(unpacked_displays(script, expr));
            singles.extend(lone_sequential(script, expr));
            let Some(folded) = fold(script, expr) else {
                continue;
            };
            let range = span(expr);
            singles.push(Candidate::new(
                format!(
                    "fold `{}` at {} into `{}`",
                    short(script.slice(expr)),
                    lines_label(text, &range),
                    short(&folded)
                ),
                vec![Edit::replace(range, folded)],
            ));
        }
        let mut out: Vec<Candidate> = combine("fold every first element", &singles)
            .into_iter()
            .collect();
        out.extend(singles);
        out
    }
}

/// What `expr` folds to, when it is `[*ITER][0]` (or `[-1]`) with a foldable `ITER`, or
/// `next(iter(ITER))`.
fn fold(script: &Script, expr: &Expr) -> Option<String> {
    if let Expr::Call(call) = expr
        && is_builtin_call(call, "next", 1)
        && let Expr::Call(inner) = &call.arguments.args[0]
        && is_builtin_call(inner, "iter", 1)
    {
        return Some(first_of(script.slice(&inner.arguments.args[0])));
    }
    let Expr::Subscript(subscript) = expr else {
        return None;
    };
    if is_target(expr) {
        return None;
    }
    let Expr::List(list) = &*subscript.value else {
        return None;
    };
    let [Expr::Starred(starred)] = &list.elts[..] else {
        return None;
    };
    let iter = &*starred.value;
    match index(&subscript.slice)? {
        0 => first(script, iter),
        _ => last(script, iter),
    }
}

/// For a call, each `*DISPLAY` among its arguments as the display's elements.
fn unpacked_displays(script: &Script, expr: &Expr) -> Vec<Candidate> {
    let Expr::Call(call) = expr else {
        return Vec::new();
    };
    let text = script.text();
    let mut out = Vec::new();
    for arg in &call.arguments.args {
        let Expr::Starred(starred) = arg else {
            continue;
        };
        let Some(elts) = display(&starred.value) else {
            continue;
        };
        let parts: Vec<&str> = elts.iter().map(|e| script.slice(e)).collect();
        let range = span(arg);
        out.push(Candidate::new(
            format!(
                "unpack `{}` at {} into its elements",
                short(script.slice(arg)),
                lines_label(text, &range)
            ),
            vec![Edit::replace(range, parts.join(", "))],
        ));
    }
    out
}

/// `nn.Sequential(m)`, a container of one module, as `m`.
fn lone_sequential(script: &Script, expr: &Expr) -> Option<Candidate> {
    let Expr::Call(call) = expr else {
        return None;
    };
    if !calls(call, "Sequential") || !call.arguments.keywords.is_empty() {
        return None;
    }
    let [module] = &call.arguments.args[..] else {
        return None;
    };
    if matches!(module, Expr::Starred(_)) {
        return None;
    }
    let range = span(expr);
    Some(Candidate::new(
        format!(
            "fold `{}` at {} into its one module",
            short(script.slice(expr)),
            lines_label(script.text(), &range)
        ),
        vec![Edit::replace(range, script.operand(module))],
    ))
}

/// `0` or `-1`, the indices the pass folds.
fn index(slice: &Expr) -> Option<i8> {
    let int = |e: &Expr| match e {
        Expr::NumberLiteral(n) => match &n.value {
            ast::Number::Int(i) => i.as_u64(),
            _ => None,
        },
        _ => None,
    };
    match slice {
        e if int(e) == Some(0) => Some(0),
        Expr::UnaryOp(u) if u.op == ast::UnaryOp::USub && int(&u.operand) == Some(1) => Some(-1),
        _ => None,
    }
}

/// `[*code][0]`, for an iterable that is not folded here.
fn first_of(code: &str) -> String {
    format!("[*{code}][0]")
}

/// `(a, b)`, or `(a,)` for one element.
fn tuple(parts: &[String]) -> String {
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// Whether `call` is `name(…)` with `args` positional arguments, none starred, and no keyword.
fn is_builtin_call(call: &ast::ExprCall, name: &str, args: usize) -> bool {
    matches!(&*call.func, Expr::Name(n) if n.id.as_str() == name)
        && call.arguments.args.len() == args
        && call.arguments.keywords.is_empty()
        && !call
            .arguments
            .args
            .iter()
            .any(|a| matches!(a, Expr::Starred(_)))
}

/// Whether `call` calls something whose name (or last attribute) is `name`.
fn calls(call: &ast::ExprCall, name: &str) -> bool {
    match &*call.func {
        Expr::Name(n) => n.id.as_str() == name,
        Expr::Attribute(a) => a.attr.as_str() == name,
        _ => false,
    }
}

/// The elements of a list or tuple display without starred ones.
fn display(expr: &Expr) -> Option<&[Expr]> {
    let elts = match expr {
        Expr::List(l) => &l.elts[..],
        Expr::Tuple(t) => &t.elts[..],
        _ => return None,
    };
    (!elts.is_empty() && !elts.iter().any(|e| matches!(e, Expr::Starred(_)))).then_some(elts)
}

/// What the dict display `expr` (or `expr.items()`, `.keys()`, `.values()`) yields from the
/// entry `pick` chooses, as code.
fn dict_entry(
    script: &Script,
    expr: &Expr,
    pick: fn(&[ast::DictItem]) -> &ast::DictItem,
) -> Option<String> {
    let (dict, method) = match expr {
        Expr::Dict(d) => (d, "keys"),
        Expr::Call(call)
            if call.arguments.args.is_empty() && call.arguments.keywords.is_empty() =>
        {
            let Expr::Attribute(a) = &*call.func else {
                return None;
            };
            let Expr::Dict(d) = &*a.value else {
                return None;
            };
            (d, a.attr.as_str())
        }
        _ => return None,
    };
    if dict.items.is_empty() || dict.items.iter().any(|i| i.key.is_none()) {
        return None;
    }
    let item = pick(&dict.items);
    let key = script.operand(item.key.as_ref()?);
    let value = script.operand(&item.value);
    match method {
        "keys" => Some(key),
        "values" => Some(value),
        "items" => Some(tuple(&[key, value])),
        _ => None,
    }
}

/// The last element of a display.
fn last(script: &Script, iter: &Expr) -> Option<String> {
    if let Some(elts) = display(iter) {
        return Some(script.operand(&elts[elts.len() - 1]));
    }
    dict_entry(script, iter, |items| &items[items.len() - 1])
}

/// The first element `iter` yields, as code, when it can be written without iterating.
fn first(script: &Script, iter: &Expr) -> Option<String> {
    if let Some(elts) = display(iter) {
        return Some(script.operand(&elts[0]));
    }
    if let Some(entry) = dict_entry(script, iter, |items| &items[0]) {
        return Some(entry);
    }
    if let Some(element) = comprehension(script, iter) {
        return Some(element);
    }
    let Expr::Call(call) = iter else {
        return None;
    };
    let args = &call.arguments.args;
    if args.iter().any(|a| matches!(a, Expr::Starred(_))) {
        return None;
    }
    let keywords = &call.arguments.keywords;
    let name = match &*call.func {
        Expr::Name(n) => n.id.as_str(),
        _ => "",
    };
    match name {
        "iter" if is_builtin_call(call, "iter", 1) => Some(first_of(script.slice(&args[0]))),
        "range" if keywords.is_empty() => match &args[..] {
            [_] => Some("0".to_string()),
            [a, ..] => Some(script.operand(a)),
            [] => None,
        },
        "enumerate" => {
            let start = match (&args[..], &keywords[..]) {
                ([_], []) => "0".to_string(),
                ([_, start], []) => script.operand(start),
                ([_], [k]) if k.arg.as_deref() == Some("start") => script.operand(&k.value),
                _ => return None,
            };
            Some(tuple(&[start, first_of(script.slice(&args[0]))]))
        }
        "zip"
            if !args.is_empty() && keywords.iter().all(|k| k.arg.as_deref() == Some("strict")) =>
        {
            let parts: Vec<String> = args.iter().map(|a| first_of(script.slice(a))).collect();
            Some(tuple(&parts))
        }
        "map" if args.len() >= 2 && keywords.is_empty() => {
            let firsts: Vec<String> = args[1..]
                .iter()
                .map(|a| first_of(script.slice(a)))
                .collect();
            Some(format!(
                "{}({})",
                script.operand(&args[0]),
                firsts.join(", ")
            ))
        }
        _ if calls(call, "product") && !args.is_empty() && keywords.is_empty() => {
            let parts: Vec<String> = args.iter().map(|a| first_of(script.slice(a))).collect();
            Some(tuple(&parts))
        }
        _ if calls(call, "TensorDataset") && !args.is_empty() && keywords.is_empty() => {
            let rows: Vec<String> = args
                .iter()
                .map(|a| format!("{}[0]", script.operand(a)))
                .collect();
            Some(tuple(&rows))
        }
        _ if calls(call, "DataLoader") => first_batch(script, call),
        _ => None,
    }
}

/// The first batch of `DataLoader(TensorDataset(x, y), batch_size=b)`: `[x[:b], y[:b]]`.
fn first_batch(script: &Script, call: &ast::ExprCall) -> Option<String> {
    let args = &call.arguments.args;
    let keyword = |name: &str| {
        call.arguments
            .keywords
            .iter()
            .find(|k| k.arg.as_deref() == Some(name))
            .map(|k| &k.value)
    };
    let dataset = args.first().or_else(|| keyword("dataset"))?;
    let batch = match args.get(1).or_else(|| keyword("batch_size")) {
        Some(b) => script.operand(b),
        None => "1".to_string(),
    };
    let Expr::Call(dataset) = dataset else {
        return None;
    };
    let tensors = &dataset.arguments.args;
    if !calls(dataset, "TensorDataset")
        || tensors.is_empty()
        || !dataset.arguments.keywords.is_empty()
        || tensors.iter().any(|a| matches!(a, Expr::Starred(_)))
    {
        return None;
    }
    let parts: Vec<String> = tensors
        .iter()
        .map(|t| format!("{}[:{batch}]", script.operand(t)))
        .collect();
    Some(format!("[{}]", parts.join(", ")))
}

/// The first element of a comprehension with one `for NAME in xs` and no condition: its
/// element (for a dict comprehension, its key, or with `.items()` its key and value) with
/// `NAME` replaced by `[*xs][0]`.
fn comprehension(script: &Script, iter: &Expr) -> Option<String> {
    let (parts, generators): (Vec<&Expr>, &[ast::Comprehension]) = match iter {
        Expr::ListComp(c) => (vec![&*c.elt], &c.generators),
        Expr::Generator(c) => (vec![&*c.elt], &c.generators),
        Expr::DictComp(c) => (vec![c.key.as_deref()?], &c.generators),
        Expr::Call(call)
            if call.arguments.args.is_empty() && call.arguments.keywords.is_empty() =>
        {
            let Expr::Attribute(a) = &*call.func else {
                return None;
            };
            let Expr::DictComp(c) = &*a.value else {
                return None;
            };
            match a.attr.as_str() {
                "items" => (vec![c.key.as_deref()?, &*c.value], &c.generators),
                "keys" => (vec![c.key.as_deref()?], &c.generators),
                "values" => (vec![&*c.value], &c.generators),
                _ => return None,
            }
        }
        _ => return None,
    };
    let [generator] = generators else {
        return None;
    };
    let Expr::Name(target) = &generator.target else {
        return None;
    };
    if generator.is_async || !generator.ifs.is_empty() {
        return None;
    }
    let first = first_of(script.slice(&generator.iter));
    let mut out = Vec::new();
    for part in parts {
        let inner = exprs_of(part);
        if inner.iter().any(|e| {
            matches!(
                e,
                Expr::Lambda(_)
                    | Expr::ListComp(_)
                    | Expr::SetComp(_)
                    | Expr::DictComp(_)
                    | Expr::Generator(_)
                    | Expr::FString(_)
                    | Expr::Named(_)
            )
        }) {
            return None;
        }
        let uses: Vec<_> = inner
            .iter()
            .filter_map(|e| match e {
                Expr::Name(n) if n.id == target.id => Some(span(*e)),
                _ => None,
            })
            .collect();
        let start = span(part).start;
        let edits: Vec<Edit> = uses
            .into_iter()
            .map(|r| Edit::replace(r.start - start..r.end - start, first.clone()))
            .collect();
        let code = crate::edit::apply_edits(script.slice(part), &edits)?;
        let wrapped = if is_atomic(part) {
            code
        } else {
            format!("({code})")
        };
        out.push(wrapped);
    }
    Some(if out.len() == 1 {
        out.pop()?
    } else {
        tuple(&out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    fn folds(text: &str) -> Vec<String> {
        candidate_texts(&FirstElements, text)
    }

    #[test]
    fn an_enumerate_folds_to_its_start_and_the_first_element() {
        assert_eq!(
            folds("i, x = [*enumerate(xs)][0]\n"),
            ["i, x = (0, [*xs][0])\n"]
        );
        assert_eq!(
            folds("i, x = [*enumerate(xs, start=1)][0]\n"),
            ["i, x = (1, [*xs][0])\n"]
        );
    }

    #[test]
    fn a_zip_folds_to_the_first_element_of_each() {
        assert_eq!(
            folds("p, g = [*zip(ps, gs)][0]\n"),
            ["p, g = ([*ps][0], [*gs][0])\n"]
        );
    }

    #[test]
    fn a_product_folds_to_the_first_element_of_each() {
        assert_eq!(
            folds("s, d = [*itertools.product([1], [t])][0]\n"),
            ["s, d = ([*[1]][0], [*[t]][0])\n"]
        );
    }

    #[test]
    fn displays_fold_to_their_first_or_last_element() {
        assert_eq!(folds("x = [*(a, b)][0]\n"), ["x = a\n"]);
        assert_eq!(folds("x = [*[a + 1, b]][-1]\n"), ["x = b\n"]);
        assert_eq!(folds("x = [*[a + 1, b]][0]\n"), ["x = (a + 1)\n"]);
        assert_eq!(folds("k, v = [*{1: 2}.items()][0]\n"), ["k, v = (1, 2)\n"]);
        assert_eq!(folds("x = [*[]][0]\n"), Vec::<String>::new());
    }

    #[test]
    fn a_comprehension_folds_to_its_element_over_the_first_one() {
        assert_eq!(
            folds("s, c = [*{c: c for c in (a,)}.items()][0]\n"),
            ["s, c = ([*(a,)][0], [*(a,)][0])\n"]
        );
        assert_eq!(
            folds("y = [*[f(v) for v in vs if v]][0]\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_data_loader_over_tensors_folds_to_its_first_batch() {
        assert_eq!(
            folds("xb, yb = [*DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)][0]\n"),
            ["xb, yb = [x[:4], y[:4]]\n"]
        );
        assert_eq!(
            folds("xb, yb = [*DataLoader(ds)][0]\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn next_of_iter_becomes_the_first_element_and_all_folds_come_first() {
        assert_eq!(
            folds("a = next(iter(xs))\nb = [*range(3)][0]\n"),
            [
                "a = [*xs][0]\nb = 0\n",
                "a = [*xs][0]\nb = [*range(3)][0]\n",
                "a = next(iter(xs))\nb = 0\n",
            ]
        );
    }

    #[test]
    fn an_assigned_subscript_is_left_alone() {
        assert!(folds("[*xs][0] = 1\n").is_empty());
    }
}
