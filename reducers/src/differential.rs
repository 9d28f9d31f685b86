//! A check of two computations that differ in one setting keeps that difference, and only it.
//!
//! `assert (np.histogram(np.asarray(v, dtype=object)) == np.histogram(np.asarray(v,
//! dtype=float))).all()` says that `object` and `float` should bin alike. Shrink the data on
//! one side only, or drop the `dtype` from both, and the two sides still differ: the same
//! `AssertionError`, comparing two unrelated histograms. Where the two sides of a check read
//! the same (through names bound once) but for one or two words swapped (`object` for
//! `float`, `'eager'` for `'inductor'`), a candidate keeps a check whose sides differ by the
//! same swaps and nothing else: what the sides share shrinks on both sides at once, or not at
//! all.
//!
//! Sides that read the same with nothing swapped compare one computation made twice, or a
//! value with what it was before (`old = m.p`, a call that should leave it alone, `assert m.p
//! is old`): a candidate keeps a check whose sides read the same, not `assert m.p is m`.
//!
//! Sides that read otherwise but are built from the same data (`torch.gcd(x, y)` against
//! `np.gcd(x_np, y_np)`, each from the list `[124, -128, -126]`) compare two implementations
//! on one input: that check's sides still share their data in a candidate, not `gcd` of `[1]`
//! against `gcd` of `[126]`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

use crate::python::{Expr, Script, Stmt, all_bodies, ast, span};
use crate::scopes::Scopes;

/// The words swapped between the two sides of a check (`("object", "float")`), each pair in
/// the order the sides have them.
pub type Swaps = BTreeSet<(String, String)>;

/// At most this many words swapped per place, and places swapped.
const MOST_WORDS: usize = 3;
const MOST_PLACES: usize = 2;
/// At most this many words one side wraps around what both share (`torch . jit . script (`).
const MOST_WRAPPING: usize = 8;

/// The swaps of every check of `script` whose sides read alike but for them; none for sides
/// that read the same.
pub fn differentials(script: &Script) -> Vec<Swaps> {
    let effects = crate::established::effects(script);
    let mut out: Vec<Swaps> = expanded_sides(script)
        .into_iter()
        .zip(checks(script))
        .filter_map(|((a, b), sides)| match a == b {
            true => repeats(sides, &effects).then(Swaps::new),
            false => swaps(&a, &b),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether two sides that read the same compare something that may differ: a computation
/// made twice (a call on a side: `f(x)` against `f(x)`), or a value with what it was before a
/// call that should have left it alone (`m.p is old` after `m.load_state_dict(sd)`). Two
/// slices of one tensor with nothing done between (`x1[:, 2:]` against `x2 = x1[:, 2:]`)
/// are a sanity check that passes, not the failure.
fn repeats(
    (a, b): (&Expr, &Expr),
    effects: &std::collections::BTreeMap<&str, BTreeSet<&str>>,
) -> bool {
    let exprs: Vec<&Expr> = [a, b]
        .into_iter()
        .flat_map(crate::python::exprs_of)
        .collect();
    exprs.iter().any(|e| matches!(e, Expr::Call(_)))
        || exprs
            .iter()
            .any(|e| matches!(e, Expr::Name(n) if effects.contains_key(n.id.as_str())))
}

/// The words of the two sides of each check of `script`, in order, each name the module binds
/// once read as its value.
fn expanded_sides(script: &Script) -> Vec<(Vec<String>, Vec<String>)> {
    let bindings = module_bindings(script);
    checks(script)
        .into_iter()
        .map(|(a, b)| {
            (
                expand(script.slice(a), &bindings, 0),
                expand(script.slice(b), &bindings, 0),
            )
        })
        .collect()
}

/// The words of the two sides of each check of `script`, as [`expanded_sides`] gives them but
/// for the names both sides read (at any depth), left as names: what they share is one value,
/// not two settings alike.
fn sides_apart(script: &Script) -> Vec<(Vec<String>, Vec<String>)> {
    let bindings = module_bindings(script);
    checks(script)
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (script.slice(a), script.slice(b));
            let (read_a, read_b) = (reads(a, &bindings), reads(b, &bindings));
            let apart: HashMap<&str, String> = bindings
                .iter()
                .filter(|(name, _)| !(read_a.contains(**name) && read_b.contains(**name)))
                .map(|(name, value)| (*name, value.clone()))
                .collect();
            (expand(a, &apart, 0), expand(b, &apart, 0))
        })
        .collect()
}

/// The names of `bindings` that `code` reads, through their values.
fn reads(code: &str, bindings: &HashMap<&str, String>) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut pending = vec![code.to_string()];
    while let Some(code) = pending.pop() {
        let words = words(&code);
        for (i, word) in words.iter().enumerate() {
            let attribute = i > 0 && words[i - 1] == ".";
            if let Some(value) = bindings.get(word.as_str())
                && !attribute
                && out.insert(word.clone())
            {
                pending.push(value.clone());
            }
        }
    }
    out
}

/// For each check of `script`, in order, whether its sides are built from the same data:
/// the same numbers of list literals, in order and some (through names bound once).
pub fn shared_inputs(script: &Script) -> Vec<bool> {
    data_of_sides(script)
        .into_iter()
        .map(|(a, b)| !a.is_empty() && a == b)
        .collect()
}

/// Whether each check of `shared` (see [`shared_inputs`]) still has sides built from the same
/// data in `candidate` (the same check by its place among the checks, where none was added or
/// deleted; else as many such checks): data shared by both sides shrinks on both at once. A
/// check whose sides were not (a side in a function's body, unread) is free.
pub fn keeps_shared(shared: &[bool], candidate: &Script) -> bool {
    if !shared.contains(&true) {
        return true;
    }
    let now = data_of_sides(candidate);
    match now.len() == shared.len() {
        true => shared.iter().zip(&now).all(|(was, (a, b))| !was || a == b),
        false => {
            let still = now.iter().filter(|(a, b)| !a.is_empty() && a == b).count();
            still >= shared.iter().filter(|s| **s).count()
        }
    }
}

/// For each check of `script`, in order, how many string literals both its sides hand to a
/// call (through names bound once that only one side reads; a value both read is one value
/// already): `ip_address("::ffff:6440:0").is_global == ip_network("::ffff:6440:0").is_global`
/// asks two functions about one address.
pub fn shared_strings(script: &Script) -> Vec<usize> {
    sides_apart(script)
        .iter()
        .map(|(a, b)| common_strings(a, b))
        .collect()
}

/// Whether each check of `shared` (see [`shared_strings`]) still has as many strings both its
/// sides read (the same check by its place among the checks, where none was added or deleted;
/// else, of the checks that shared some, as many as were not deleted): a string shrunk on one
/// side only compares two inputs, which differ by design.
pub fn keeps_strings(shared: &[usize], candidate: &Script) -> bool {
    if shared.iter().all(|&n| n == 0) {
        return true;
    }
    let now = shared_strings(candidate);
    match now.len() == shared.len() {
        true => shared.iter().zip(&now).all(|(was, now)| now >= was),
        false => {
            let sharing = |counts: &[usize]| counts.iter().filter(|&&n| n > 0).count();
            let deleted = shared.len().saturating_sub(now.len());
            sharing(&now) >= sharing(shared).saturating_sub(deleted)
        }
    }
}

/// How many of the strings `a`'s words hand to calls are among those of `b`'s (each once).
fn common_strings(a: &[String], b: &[String]) -> usize {
    let mut rest = argument_strings(b);
    argument_strings(a)
        .into_iter()
        .filter(|w| {
            rest.iter()
                .position(|r| r == w)
                .map(|i| rest.swap_remove(i))
                .is_some()
        })
        .count()
}

/// The string literals among `words` that are arguments of a call, positional or keyword
/// (not a dict's key, a subscript or an element of a list).
fn argument_strings(words: &[String]) -> Vec<&String> {
    let mut open: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        match w.as_str() {
            "(" | "[" | "{" => open.push(w),
            ")" | "]" | "}" => {
                open.pop();
            }
            _ if w.starts_with(['\'', '"'])
                && open.last() == Some(&"(")
                && i > 0
                && matches!(words[i - 1].as_str(), "(" | "," | "=") =>
            {
                out.push(w)
            }
            _ => {}
        }
    }
    out
}

/// For each check of `script`, in order, the keywords both its sides pass with the same
/// literal values (`lr=0.1` to the optimizer behind each of two schedulers compared).
pub fn shared_settings(script: &Script) -> Vec<BTreeSet<String>> {
    sides_apart(script)
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (settings(&a), settings(&b));
            a.iter()
                .filter(|(name, values)| b.get(*name) == Some(values))
                .map(|(name, _)| name.clone())
                .collect()
        })
        .collect()
}

/// Whether each check of `shared` (see [`shared_settings`]) still passes those keywords the
/// same values on both sides, or on neither (the same check by its place among the checks,
/// where none was added or deleted; else some check): a learning rate shrunk on one side
/// only compares two schedules that differ by design.
pub fn keeps_settings(shared: &[BTreeSet<String>], candidate: &Script) -> bool {
    if shared.iter().all(BTreeSet::is_empty) {
        return true;
    }
    let now: Vec<_> = sides_apart(candidate)
        .into_iter()
        .map(|(a, b)| (settings(&a), settings(&b)))
        .collect();
    let alike = |names: &BTreeSet<String>, (a, b): &(Settings, Settings)| {
        names.iter().all(|n| a.get(n) == b.get(n))
    };
    match now.len() == shared.len() {
        true => shared
            .iter()
            .zip(&now)
            .all(|(names, sides)| alike(names, sides)),
        false => shared
            .iter()
            .all(|names| names.is_empty() || now.iter().any(|sides| alike(names, sides))),
    }
}

/// The literal values passed to each keyword among `words` (`lr = 0.1`), each value once.
type Settings = HashMap<String, BTreeSet<String>>;

fn settings(words: &[String]) -> Settings {
    let mut out = Settings::new();
    for (i, w) in words.iter().enumerate() {
        if i == 0
            || !matches!(words[i - 1].as_str(), "(" | ",")
            || words.get(i + 1).is_none_or(|eq| eq != "=")
            || !w.starts_with(|c: char| c.is_alphabetic() || c == '_')
        {
            continue;
        }
        let value = match words.get(i + 2).map(String::as_str) {
            Some("-") => words.get(i + 3).map(|v| format!("-{v}")),
            v => v.map(str::to_string),
        };
        if let Some(value) = value.filter(|v| {
            v.trim_start_matches('-')
                .starts_with(|c: char| c.is_ascii_digit() || c == '\'' || c == '"')
                || matches!(v.as_str(), "True" | "False" | "None")
        }) {
            out.entry(w.clone()).or_default().insert(value);
        }
    }
    out
}

/// The numbers of the list literals each side of each check reads (see [`numbers`]).
fn data_of_sides(script: &Script) -> Vec<(Vec<String>, Vec<String>)> {
    expanded_sides(script)
        .into_iter()
        .map(|(a, b)| (numbers(&a), numbers(&b)))
        .collect()
}

/// The numbers in list literals among `words` (data, not the sizes or settings of a call), a
/// minus sign that negates one kept with it.
fn numbers(words: &[String]) -> Vec<String> {
    let value = |w: &str| {
        w.ends_with([')', ']']) || w.starts_with(|c: char| c.is_alphanumeric() || c == '_')
    };
    // How deep each word is in brackets, innermost last: `[` of a list, or `(`/`[` of a call
    // or subscript.
    let mut open: Vec<bool> = Vec::new();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        match w.as_str() {
            "[" => open.push(i == 0 || !value(&words[i - 1])),
            "(" | "{" => open.push(false),
            "]" | ")" | "}" => {
                open.pop();
            }
            _ if w.starts_with(|c: char| c.is_ascii_digit()) && open.last() == Some(&true) => {
                let negated = i > 0 && words[i - 1] == "-" && (i < 2 || !value(&words[i - 2]));
                out.push(match negated {
                    true => format!("-{w}"),
                    false => w.clone(),
                });
            }
            _ => {}
        }
    }
    out
}

/// Whether `candidate` has, for each of `differentials`, a check whose sides differ by the
/// same swaps (either way round) and nothing else.
pub fn keeps(differentials: &[Swaps], candidate: &Script) -> bool {
    if differentials.is_empty() {
        return true;
    }
    let now = self::differentials(candidate);
    let flipped = |s: &Swaps| -> Swaps { s.iter().map(|(a, b)| (b.clone(), a.clone())).collect() };
    differentials
        .iter()
        .all(|d| now.iter().any(|n| n == d || flipped(n) == *d))
}

/// The code of each side of each `assert` of a comparison in `script`: a candidate may not
/// assert one of them alone (see [`keeps_comparing`]).
pub fn asserted_sides(script: &Script) -> HashSet<String> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) => sides(&a.test),
            _ => None,
        })
        .flat_map(|(a, b)| [script.slice(a).to_string(), script.slice(b).to_string()])
        .collect()
}

/// Whether no `assert` of `candidate` tests the truth of what was a side of a comparison
/// (`compared`, see [`asserted_sides`]): `assert outputs.equal(outputs_jit)` that became `assert
/// outputs_jit` fails for a traced module that returns zeros, and no longer compares it with
/// the module it traced.
pub fn keeps_comparing(compared: &HashSet<String>, candidate: &Script) -> bool {
    compared.is_empty()
        || all_bodies(candidate.body())
            .into_iter()
            .flatten()
            .all(|stmt| match stmt {
                Stmt::Assert(a) => {
                    sides(&a.test).is_some() || !compared.contains(candidate.slice(&*a.test))
                }
                _ => true,
            })
}

/// The two sides of each check: an `assert` of a comparison (`a == b`, `(a == b).all()`,
/// `not …`, `np.array_equal(a, b)`, `torch.allclose(a, b)`, `a.equal(b)`), or a call of an `assert…`
/// comparison (`torch.testing.assert_close(a, b)`).
pub(crate) fn checks(script: &Script) -> Vec<(&Expr, &Expr)> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) => sides(&a.test),
            Stmt::Expr(e) => match &*e.value {
                Expr::Call(call) if callee(&call.func).is_some_and(|c| c.starts_with("assert")) => {
                    sides(&e.value)
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The test and message of each `assert` of `script` that is not of a comparison (see
/// [`checks`]).
pub(crate) fn one_sided(script: &Script) -> Vec<(&Expr, Option<&Expr>)> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) if sides(&a.test).is_none() => Some((&*a.test, a.msg.as_deref())),
            _ => None,
        })
        .collect()
}

/// The settings of each comparison call among the checks of `script` (`1e-3, 1e-3,
/// equal_nan=True` of `torch.allclose(output, c_output, 1e-3, 1e-3, equal_nan=True)`): what
/// it counts as a mismatch. Without them, inductor's rounding of `cdist` fails the default
/// tolerance of `allclose` where the report's error was a thousand times that.
pub fn tolerances(script: &Script) -> Tolerances {
    let calls: Vec<&ast::ExprCall> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) => comparison_call(&a.test),
            Stmt::Expr(e) => comparison_call(&e.value),
            _ => None,
        })
        .collect();
    let checks = calls.len();
    let mut each: Vec<String> = calls
        .into_iter()
        .filter_map(|call| {
            let args = &call.arguments;
            // Written as literals: a value read from the script's config may move.
            let literal = |e: &Expr| {
                crate::python::is_plain_literal(e)
                    || matches!(e, Expr::UnaryOp(u) if crate::python::is_plain_literal(&u.operand))
            };
            let settings: Vec<&str> = args
                .args
                .iter()
                .skip(2)
                .filter(|a| literal(a))
                .map(|a| script.slice(a))
                .chain(
                    args.keywords
                        .iter()
                        .filter(|k| literal(&k.value))
                        .map(|k| script.slice(k)),
                )
                .collect();
            (!settings.is_empty()).then(|| settings.join(", "))
        })
        .collect();
    each.sort();
    Tolerances { each, checks }
}

/// The literal settings of a script's comparison calls (see [`tolerances`]), and how many
/// comparison calls it makes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tolerances {
    each: Vec<String>,
    checks: usize,
}

/// Whether `candidate` still has each of `tolerances`, as often, but for as many as it has
/// fewer comparison calls: a check deleted whole (the failure raised before it) takes its
/// tolerance with it, a check that stays keeps its own.
pub fn keeps_tolerances(tolerances: &Tolerances, candidate: &Script) -> bool {
    if tolerances.each.is_empty() {
        return true;
    }
    let mut now = self::tolerances(candidate);
    let missing = tolerances
        .each
        .iter()
        .filter(|t| match now.each.iter().position(|n| n == *t) {
            Some(i) => {
                now.each.remove(i);
                false
            }
            None => true,
        })
        .count();
    missing <= tolerances.checks.saturating_sub(now.checks)
}

/// The comparison call (`torch.allclose(a, b, …)`) a check's test makes, under a `not` too.
fn comparison_call(test: &Expr) -> Option<&ast::ExprCall> {
    match test {
        Expr::UnaryOp(u) => comparison_call(&u.operand),
        Expr::Call(call)
            if call.arguments.args.len() >= 2
                && callee(&call.func).is_some_and(|c| COMPARISONS.contains(&c)) =>
        {
            Some(call)
        }
        _ => None,
    }
}

/// The functions that compare their first two arguments.
const COMPARISONS: &[&str] = &[
    "allclose",
    "isclose",
    "equal",
    "array_equal",
    "array_equiv",
    "assert_close",
    "assert_allclose",
    "assert_equal",
    "assert_array_equal",
    "assert_array_almost_equal",
    "assert_almost_equal",
];

pub(crate) fn sides(test: &Expr) -> Option<(&Expr, &Expr)> {
    match test {
        Expr::Compare(c) => match &c.comparators[..] {
            [right] => Some((&c.left, right)),
            _ => None,
        },
        Expr::UnaryOp(u) => sides(&u.operand),
        Expr::Call(call) => {
            let name = callee(&call.func)?;
            let args = &call.arguments.args;
            match (name, &args[..]) {
                ("all" | "any", []) => match &*call.func {
                    Expr::Attribute(a) => sides(&a.value),
                    _ => None,
                },
                ("all" | "any", [one]) => sides(one),
                (name, [a, b, ..]) if COMPARISONS.contains(&name) => Some((a, b)),
                // `a.equal(b)`, `a.allclose(b)`
                (name, [b]) if COMPARISONS.contains(&name) => match &*call.func {
                    Expr::Attribute(a) => Some((&*a.value, b)),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// `allclose` of `torch.allclose`, `all` of `x.all`.
fn callee(func: &Expr) -> Option<&str> {
    match func {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

/// The names the module binds once, with the code of their values (a function's variable of
/// the same name is another variable): `out = f(x)` gives `f(x)`, an unpacking `y, w = f(x)`
/// gives `(f(x))[0]` for `y`.
pub(crate) fn module_bindings(script: &Script) -> HashMap<&str, String> {
    let scopes = Scopes::of(script.body());
    let mut count: HashMap<&str, usize> = HashMap::new();
    for o in scopes
        .occurrences
        .iter()
        .filter(|o| o.binds && o.scope.is_none())
    {
        *count.entry(o.name).or_default() += 1;
    }
    let once = |n: &ast::ExprName| count.get(n.id.as_str()) == Some(&1);
    let mut out = HashMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Stmt::Assign(a) = stmt else { continue };
        if scopes.innermost_at(span(stmt).start).is_some() {
            continue;
        }
        let value = script.slice(&*a.value);
        match (a.targets.as_slice(), &*a.value) {
            ([Expr::Name(n)], _) if once(n) => {
                out.insert(n.id.as_str(), value.to_string());
            }
            ([Expr::Tuple(t)], v) if !matches!(v, Expr::Tuple(_) | Expr::List(_)) => {
                for (i, target) in t.elts.iter().enumerate() {
                    if let Expr::Name(n) = target
                        && once(n)
                    {
                        out.insert(n.id.as_str(), format!("({value})[{i}]"));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The words of `code`, each name the module binds once (not an attribute) replaced by the
/// words of its value.
fn expand(code: &str, bindings: &HashMap<&str, String>, depth: usize) -> Vec<String> {
    let words = words(code);
    let mut out = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let attribute = i > 0 && words[i - 1] == ".";
        match bindings.get(word.as_str()) {
            Some(value) if !attribute && depth < 8 => {
                out.extend(expand(value, bindings, depth + 1))
            }
            _ => out.push(word.clone()),
        }
    }
    out
}

/// The swaps that turn `a` into `b`, when that is all that differs: at most [`MOST_PLACES`]
/// places, each at most [`MOST_WORDS`] words on either side, each a setting (a literal, a
/// keyword's value, an attribute) and not a function called (`model(x)` against `ref(x)`
/// compares two implementations, which the control of the script's own code guards), or a
/// wrapper one side adds (`test()` against `torch.jit.script(test)()`, `do(t)` against
/// `do(t.to_sparse())`, see [`wrapping`]), and more words alike than swapped.
fn swaps(a: &[String], b: &[String]) -> Option<Swaps> {
    use similar::{Algorithm, DiffOp, capture_diff_slices};
    // The runs of words that differ, as ranges of `a` and of `b`.
    let mut runs: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    let mut alike = 0;
    let mut open = false;
    for op in capture_diff_slices(Algorithm::Myers, a, b) {
        let (old, new) = match op {
            DiffOp::Equal { len, .. } => {
                alike += len;
                open = false;
                continue;
            }
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        match runs.last_mut() {
            Some(run) if open => {
                run.0.end = run.0.end.max(old.end);
                run.1.end = run.1.end.max(new.end);
            }
            _ => runs.push((old, new)),
        }
        open = true;
    }
    let called = |words: &[String], end: usize| words.get(end).is_some_and(|w| w == "(");
    // A setting: a literal, a keyword's value or an attribute (`'eager'`, `dtype=object`,
    // `torch.float64`), not a variable (`y.shape == x.shape` compares two values).
    let setting = |words: &[String], run: &Range<usize>| {
        let first = &words[run.start];
        let literal =
            first.starts_with(['\'', '"']) || first.starts_with(|c: char| c.is_ascii_digit());
        let after = run.start > 0 && matches!(words[run.start - 1].as_str(), "=" | ".");
        literal || after || matches!(first.as_str(), "True" | "False" | "None")
    };
    let mut out = Swaps::new();
    // Words one side wraps around what both share (`torch.jit.script(` … `)`, `.to_sparse()`),
    // and how many brackets they open and leave open, by side.
    let mut open = [0i32; 2];
    for (old, new) in &runs {
        if old.is_empty() || new.is_empty() {
            let (side, words) = match old.is_empty() {
                true => (1, &b[new.clone()]),
                false => (0, &a[old.clone()]),
            };
            if !wrapping(words) && !added_keyword(words) {
                return None;
            }
            open[side] += words.iter().filter(|w| *w == "(").count() as i32
                - words.iter().filter(|w| *w == ")").count() as i32;
            out.insert((a[old.clone()].join(" "), b[new.clone()].join(" ")));
            continue;
        }
        if old.len() > MOST_WORDS
            || new.len() > MOST_WORDS
            || called(a, old.end)
            || called(b, new.end)
            || !setting(a, old)
            || !setting(b, new)
        {
            return None;
        }
        out.insert((a[old.clone()].join(" "), b[new.clone()].join(" ")));
    }
    let swapped: usize = runs.iter().map(|(old, _)| old.len()).sum();
    (!runs.is_empty() && runs.len() <= MOST_PLACES && alike > swapped && open == [0, 0])
        .then_some(out)
}

/// Whether `words`, added on one side only, pass one more keyword a literal value (`,
/// domain = [ - 1 , 1 ]`): a setting of one side.
fn added_keyword(words: &[String]) -> bool {
    let literal = |w: &String| {
        matches!(
            w.as_str(),
            "[" | "]" | "(" | ")" | "," | "-" | "True" | "False" | "None"
        ) || w.starts_with(|c: char| c.is_ascii_digit() || c == '\'' || c == '"')
    };
    match words {
        [comma, name, eq, value @ ..] => {
            comma == ","
                && eq == "="
                && name.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && !value.is_empty()
                && value.len() <= MOST_WRAPPING
                && value.iter().all(literal)
        }
        _ => false,
    }
}

/// Whether `words`, added on one side only, may wrap what both sides share: names, dots and
/// brackets alone (a call of a transform, a method), at most [`MOST_WRAPPING`] of them.
fn wrapping(words: &[String]) -> bool {
    words.len() <= MOST_WRAPPING
        && words.iter().all(|w| {
            matches!(w.as_str(), "." | "(" | ")")
                || w.starts_with(|c: char| c.is_alphabetic() || c == '_')
        })
}

/// The words of Python code: names, numbers, strings and single punctuation marks; comments
/// and spaces dropped.
fn words(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() || c == '\\' {
            i += 1;
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (c.is_ascii_digit() && chars[i] == '.'))
            {
                i += 1;
            }
        } else if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i = (i + 1).min(chars.len());
        } else {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    const HISTOGRAMS: &str = "import numpy as np\nv = [0., 1., np.nan]\na = np.histogram(np.asarray(v, dtype=object))[0]\nb = np.histogram(np.asarray(v, dtype=float))[0]\nassert (a == b).all()\n";

    #[test]
    fn sides_alike_but_for_a_swap_keep_it() {
        let d = differentials(&parse(HISTOGRAMS));
        assert_eq!(
            d,
            vec![Swaps::from([("object".to_string(), "float".to_string())])]
        );
        assert!(keeps(&d, &parse(HISTOGRAMS)));
        let inlined = "import numpy as np\nassert (np.histogram(np.asarray([np.nan], dtype=object))[0] == np.histogram(np.asarray([np.nan], dtype=float))[0]).all()\n";
        assert!(keeps(&d, &parse(inlined)));
        let one_side = HISTOGRAMS.replace("asarray(v, dtype=float)", "asarray([1.])");
        assert!(!keeps(&d, &parse(&one_side)));
        let no_dtype = HISTOGRAMS
            .replace(", dtype=object", "")
            .replace(", dtype=float", "");
        assert!(!keeps(&d, &parse(&no_dtype)));
    }

    #[test]
    fn a_string_both_sides_read_stays_one_input() {
        let text = "import ipaddress\naddr = ipaddress.ip_address(\"0:0:0:0:0:FFFF:6440:0000\")\nnet = ipaddress.ip_network(\"0:0:0:0:0:FFFF:6440:0000\")\nassert addr.is_global == net.is_global\n";
        let shared = shared_strings(&parse(text));
        assert_eq!(shared, [1]);
        let inlined = "import ipaddress\nassert ipaddress.ip_address(\"::FFFF:6440:0\").is_global == ipaddress.ip_network(\"::FFFF:6440:0\").is_global\n";
        assert!(keeps_strings(&shared, &parse(inlined)));
        let apart = "import ipaddress\nassert ipaddress.ip_address(\"0::FF:6440:0000\").is_global == ipaddress.ip_network(\"::FFFF:440:000\").is_global\n";
        assert!(!keeps_strings(&shared, &parse(apart)));
        // A key both sides look up is one value, not two inputs.
        let keyed = "class Invoice:\n    pass\ninvoice = Invoice(number='INV-7')\ntotal = compute(invoice)\nassert total == {'INV-7': 345}[invoice.number]\n";
        assert_eq!(shared_strings(&parse(keyed)), [0]);
        // Of two such checks, one may go; the other still reads one address.
        let two = format!("{text}assert addr.is_private == net.is_private\n");
        let shared = shared_strings(&parse(&two));
        assert_eq!(shared, [1, 1]);
        assert!(keeps_strings(&shared, &parse(text)));
        assert!(!keeps_strings(&shared, &parse(apart)));
    }

    #[test]
    fn a_backend_swapped_between_two_runs_stays() {
        let text = "def run(m, backend):\n    out = m\n    return out\nout = run(m, 'eager')\nc_out = run(m, 'inductor')\nassert torch.allclose(out, c_out, rtol=1e-3)\n";
        let d = differentials(&parse(text));
        assert_eq!(d.len(), 1, "{d:?}");
        let flipped = text.replace("allclose(out, c_out", "allclose(c_out, out");
        assert!(keeps(&d, &parse(&flipped)));
        let method = text.replace("torch.allclose(out, c_out, rtol=1e-3)", "out.equal(c_out)");
        assert!(keeps(&d, &parse(&method)));
        let literal = text.replace("allclose(out, c_out", "allclose(out, 1.0");
        assert!(!keeps(&d, &parse(&literal)));
    }

    #[test]
    fn a_wrapper_one_side_adds_stays_the_difference() {
        let scripted = "import torch\ndef test():\n    a = torch.zeros(1)\n    a += 1\n    return a\neager = test()\nscripted = torch.jit.script(test)()\nassert torch.equal(eager, scripted)\n";
        let d = differentials(&parse(scripted));
        assert_eq!(d.len(), 1, "{d:?}");
        let frozen = scripted.replace("eager = test()", "eager = torch.ones(1)");
        assert!(!keeps(&d, &parse(&frozen)));
        let inlined = scripted.replace(
            "scripted = torch.jit.script(test)()\nassert torch.equal(eager, scripted)",
            "assert torch.equal(test(), torch.jit.script(test)())",
        );
        assert!(keeps(&d, &parse(&inlined)));
        let sparse = "import torch\ndef do(a, b):\n    return a * b\nT1 = torch.randn(3, 4)\nT2 = torch.randn(3, 4)\ndense = do(T1, T2)\nsparse = do(T1.to_sparse(), T2).to_dense()\nassert torch.allclose(dense, sparse)\n";
        let d = differentials(&parse(sparse));
        assert_eq!(
            d,
            [Swaps::from([
                ("".to_string(), ". to_sparse ( )".to_string()),
                ("".to_string(), ". to_dense ( )".to_string())
            ])]
        );
        let one_side = sparse.replace(
            "sparse = do(T1.to_sparse(), T2)",
            "sparse = do(torch.randn(1), T2)",
        );
        assert!(!keeps(&d, &parse(&one_side)));
        // A keyword one side adds is a setting too.
        let domain = "import numpy as np\nppl = P.fit(x, y, deg=[0, 1, 2, 4]).coef\nppc = P.fit(x, y, deg=[0, 1, 2, 4], domain=[-1, 1]).coef\nassert np.allclose(ppl, ppc)\n";
        let d = differentials(&parse(domain));
        assert_eq!(d.len(), 1, "{d:?}");
        let other_deg = domain.replace("deg=[0, 1, 2, 4])", "deg=[0])");
        assert!(!keeps(&d, &parse(&other_deg)));
        // Not a wrapper: another value, or a bracket left open.
        let other = "x = f(a)\ny = f(g(b))\nassert (x == y).all()\n";
        assert!(differentials(&parse(other)).is_empty());
    }

    #[test]
    fn a_side_of_a_comparison_is_not_asserted_alone() {
        let text = "import torch\nout = m(x)\ntraced = torch.jit.trace(m, (x,))(x)\nassert out.equal(traced)\n";
        let sides = asserted_sides(&parse(text));
        assert!(keeps_comparing(&sides, &parse(text)));
        let truthiness = text.replace("assert out.equal(traced)", "assert traced");
        assert!(!keeps_comparing(&sides, &parse(&truthiness)));
        let other = text.replace(
            "assert out.equal(traced)",
            "assert torch.equal(out, traced)",
        );
        assert!(keeps_comparing(&sides, &parse(&other)));
    }

    #[test]
    fn a_value_checked_against_its_snapshot_stays_so() {
        let text = "import torch\nm = M()\nold = m.p\nm.load_state_dict(sd)\nassert m.p is old, 'replaced'\n";
        let d = differentials(&parse(text));
        assert_eq!(d, vec![Swaps::new()]);
        assert!(keeps(&d, &parse(text)));
        let inlined = text.replace("m = M()\n", "").replace("M()", "m");
        assert!(keeps(&d, &parse(&inlined)), "{inlined}");
        let lost = text.replace("m.p is old", "m.p is m");
        assert!(!keeps(&d, &parse(&lost)));
        // Two slices of one tensor, nothing done between: a sanity check, free to go.
        let sliced = "import torch\nx1 = torch.randn(2, 4)\nx2 = x1[:, 2:]\nassert torch.allclose(x1[:, 2:], x2)\n";
        assert!(differentials(&parse(sliced)).is_empty());
        let twice = "import torch\nassert torch.equal(f(x), f(x))\n";
        assert!(keeps(&differentials(&parse(twice)), &parse(twice)));
        assert!(!keeps(
            &differentials(&parse(twice)),
            &parse(&twice.replace("f(x))", "g)"))
        ));
    }

    #[test]
    fn a_comparison_keeps_its_tolerance() {
        let text = "import torch\nassert torch.allclose(out, c_out, 1e-3, 1e-3, equal_nan=True)\n";
        let t = tolerances(&parse(text));
        assert_eq!(t.each, ["1e-3, 1e-3, equal_nan=True"]);
        let gone = "import torch\nout = f(x)\n";
        assert!(keeps_tolerances(&t, &parse(gone)));
        let default = "import torch\nassert torch.allclose(out, c_out)\n";
        assert!(!keeps_tolerances(&t, &parse(default)));
        let inlined =
            "import torch\nassert torch.allclose(f(x), g(x), 1e-3, 1e-3, equal_nan=True)\n";
        assert!(keeps_tolerances(&t, &parse(inlined)));
        let close = "torch.testing.assert_close(a, b, rtol=0, atol=0)\n";
        assert_eq!(tolerances(&parse(close)).each, ["rtol=0, atol=0"]);
        let config = "assert torch.allclose(a, b, atol=cfg.atol)\n";
        assert!(tolerances(&parse(config)).each.is_empty());
    }

    #[test]
    fn a_setting_both_sides_pass_stays_alike() {
        let text = "import torch\ndef lrs(s):\n    s.step()\n    return s.get_last_lr()\nopt1 = SGD([p], lr=0.1)\nopt2 = SGD([q], lr=0.1)\nassert lrs(Seq(opt1, [Seq(opt1, [C(opt1)])])) == lrs(Seq(opt2, [C(opt2)]))\n";
        let shared = shared_settings(&parse(text));
        assert_eq!(shared, [BTreeSet::from(["lr".to_string()])]);
        let one_side = text.replace("SGD([q], lr=0.1)", "SGD([q], lr=0.0)");
        assert!(!keeps_settings(&shared, &parse(&one_side)));
        let dropped = text.replace("SGD([p], lr=0.1)", "SGD([p])");
        assert!(!keeps_settings(&shared, &parse(&dropped)));
        let both = text.replace(", lr=0.1", "");
        assert!(keeps_settings(&shared, &parse(&both)));
        // Sides that read one value share nothing of it: its settings may go from one side.
        let one = "inv = Invoice(number='A', qty=2)\nassert total(inv) == {'A': 3}[inv.number]\n";
        assert_eq!(shared_settings(&parse(one)), [BTreeSet::new()]);
    }

    #[test]
    fn two_implementations_on_one_input_keep_it_shared() {
        let text = "import torch\nimport numpy as np\nx = torch.tensor([124, -128], dtype=torch.int8)\nx_np = np.array([124, -128], dtype=np.int8)\nassert (torch.gcd(x, x).numpy() == np.gcd(x_np, x_np)).all()\n";
        let shared = shared_inputs(&parse(text));
        assert_eq!(shared, [true]);
        let one_side = text.replace("np.array([124, -128]", "np.array([126]");
        assert!(!keeps_shared(&shared, &parse(&one_side)));
        let both = text.replace("[124, -128]", "[-128]");
        assert!(keeps_shared(&shared, &parse(&both)));
        let gone = text.replace("[124, -128]", "[]");
        assert!(keeps_shared(&shared, &parse(&gone)));
        let minus = text.replace("np.array([124, -128]", "np.array([124, 0 - 128]");
        assert!(!keeps_shared(&shared, &parse(&minus)));
        // Sizes are no data: a module built for 80 features, compared with another.
        let sizes = "import torch\nx = torch.randn(1, 80)\nassert torch.allclose(Plain(80)(x), torch.nn.LayerNorm(80)(x))\n";
        assert_eq!(shared_inputs(&parse(sizes)), [false]);
        // A check whose sides did not share data is free, wherever its code moves.
        let inside = "import torch\ndef f(x):\n    return x * torch.tensor([2.0])\ndef test():\n    x = torch.tensor([1.0])\n    assert torch.allclose(g(x), f(x))\ntest()\n";
        let shared = shared_inputs(&parse(inside));
        assert_eq!(shared, [false]);
        let unwrapped = "import torch\ndef f(x):\n    return x * torch.tensor([2.0])\nx = torch.tensor([1.0])\nassert torch.allclose(g(x), f(x))\n";
        assert!(keeps_shared(&shared, &parse(unwrapped)));
    }

    #[test]
    fn sides_that_differ_in_more_are_free() {
        let text = "import torch\nm = M()\nassert f(x) == g(y, z)\ntorch.testing.assert_close(model(x), ref(x))\nassert y.shape == x.shape\n";
        assert!(differentials(&parse(text)).is_empty());
        // A transform of the same module is a wrapper (see above).
        let traced =
            "import torch\nm = M()\nassert torch.allclose(m(x), torch.fx.symbolic_trace(m)(x))\n";
        assert_eq!(differentials(&parse(traced)).len(), 1);
    }
}
