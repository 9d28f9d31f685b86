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

/// The swaps of every check of `script` whose sides read alike but for them; none for sides
/// that read the same.
pub fn differentials(script: &Script) -> Vec<Swaps> {
    let mut out: Vec<Swaps> = expanded_sides(script)
        .into_iter()
        .filter_map(|(a, b)| match a == b {
            true => Some(Swaps::new()),
            false => swaps(&a, &b),
        })
        .collect();
    out.sort();
    out.dedup();
    out
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

fn sides(test: &Expr) -> Option<(&Expr, &Expr)> {
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
/// compares two implementations, which the control of the script's own code guards), and
/// more words alike than swapped.
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
    for (old, new) in &runs {
        if old.is_empty()
            || new.is_empty()
            || old.len() > MOST_WORDS
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
    (!runs.is_empty() && runs.len() <= MOST_PLACES && alike > swapped).then_some(out)
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
        let twice = "import torch\nassert torch.equal(f(x), f(x))\n";
        assert!(keeps(&differentials(&parse(twice)), &parse(twice)));
        assert!(!keeps(
            &differentials(&parse(twice)),
            &parse(&twice.replace("f(x))", "g)"))
        ));
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
        let text = "import torch\nm = M()\nassert torch.allclose(m(x), torch.fx.symbolic_trace(m)(x))\nassert f(x) == g(y, z)\ntorch.testing.assert_close(model(x), ref(x))\nassert y.shape == x.shape\n";
        assert!(differentials(&parse(text)).is_empty());
    }
}
