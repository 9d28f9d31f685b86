//! A check that compares two computations keeps comparing them.
//!
//! `if c_version != py_version: raise …` with `c_version = json.dumps(d)` before the C
//! encoder is switched off and `py_version = json.dumps(d)` after it compares the two
//! encoders. A rewrite to `if py_version: raise …` (truthiness), or to `if d != py_version`
//! (a dict against a string), still fails with the same message, and checks nothing. For each
//! check whose two sides each reach a library call, a candidate keeps a check whose sides
//! reach those calls, each side its own.

use std::collections::BTreeSet;

use crate::control::LibraryCalls;
use crate::python::{Expr, Script, Stmt, all_bodies};

/// The library calls (dotted paths) each side of a check reaches.
pub type Sides = [BTreeSet<String>; 2];

/// A check that compares two computations.
#[derive(Debug, Clone)]
pub struct Check {
    pub sides: Sides,
    /// For an `assert` without a message, the libraries (top-level modules) its sides reach:
    /// a candidate's check reaches each of them still. Nothing else tells what such an assert
    /// compares (no message shows its values), and one that no longer reaches a library its
    /// original did (`functools`, in `signature(wraps(f)(g)) == signature(f)`) compares
    /// something else. Empty for other checks.
    pub libraries: BTreeSet<String>,
}

/// The checks of `script` that compare two computations: an `if A OP B:` over a `raise`, or
/// with no `message`, an `assert A OP B` without one, whose sides each reach a library call,
/// through names bound once and the script's own functions and methods called (see
/// [`LibraryCalls`]). (What an `assert` with a message compares is kept by the anchor of its
/// failure: the numbers its message shows stay computed, its figures written; a side of it
/// may become the literal figure it was expected to equal.)
///
/// With the failure's `message`, only the checks whose `raise` writes its head (the text
/// before the first value it shows): a check the failure does not come from may go.
pub fn compared(script: &Script, message: Option<&str>) -> Vec<Check> {
    let calls = LibraryCalls::of_any_library(script);
    let reach = |side| calls.set_of_expr(side);
    let head = message.map(head).filter(|h| h.len() >= 4);
    let mut out = Vec::new();
    let bare = message.is_none_or(|m| m.trim().is_empty());
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let (test, bare_assert) = match stmt {
            Stmt::If(i) if raises(script, &i.body, head) => (&*i.test, false),
            Stmt::Assert(a) if bare && a.msg.is_none() => (&*a.test, true),
            _ => continue,
        };
        let Expr::Compare(c) = test else { continue };
        let [right] = &c.comparators[..] else {
            continue;
        };
        let sides = [reach(&c.left), reach(right)];
        if sides.iter().all(|s| !s.is_empty()) {
            let libraries = match bare_assert {
                true => libraries(&sides),
                false => BTreeSet::new(),
            };
            out.push(Check { sides, libraries });
        }
    }
    out
}

/// The top-level modules of the calls either side reaches.
fn libraries(sides: &Sides) -> BTreeSet<String> {
    sides
        .iter()
        .flatten()
        .map(|path| path.split('.').next().unwrap_or(path).to_string())
        .collect()
}

/// Whether `candidate` still has, for each of `checks`, a check whose sides each reach one
/// of the calls of a side of it, either way round. A side may lose calls (a computation
/// shrinks); it may not lose them all, nor become the other side's; an `assert` without a
/// message may not lose a library.
pub fn keeps(checks: &[Check], candidate: &Script, message: Option<&str>) -> bool {
    if checks.is_empty() {
        return true;
    }
    let now = compared(candidate, message);
    let meets = |x: &BTreeSet<String>, y: &BTreeSet<String>| !x.is_disjoint(y);
    checks.iter().all(|check| {
        let [a, b] = &check.sides;
        now.iter().any(|got| {
            let [c, d] = &got.sides;
            ((meets(a, c) && meets(b, d)) || (meets(a, d) && meets(b, c)))
                && (check.libraries.is_empty() || check.libraries.is_subset(&libraries(&got.sides)))
        })
    })
}

/// The library calls each side of each check of `script` reaches (an `assert` of a comparison
/// or a comparison call, with or without a message, see [`crate::differential`]), through
/// names bound once, the script's own functions and the library objects it calls, with the
/// methods called on the way (`.step()` of a scheduler): where no
/// control guards a mismatch, what each side computes is all that says what the check
/// compares. `allclose(out1, out3)` with `out1 = transformer(src, tgt, mask)` and `out3` the
/// same call under `no_grad` must not become `allclose(x, out3)` with `x` a fresh
/// `torch.randn`: both fail, only one is the report.
///
/// An `assert` of one value (`assert not torch.isfinite(compiled_out).all()`) is a check whose
/// one side reaches its calls and whose other reaches none: a candidate keeps a check with a
/// side that reaches them all.
pub fn reached(script: &Script) -> Vec<Sides> {
    let calls = LibraryCalls::of_any_library_and_instances(script);
    let reach = |side| calls.set_of_expr(side);
    let two_sided = crate::differential::checks(script)
        .into_iter()
        .map(|(a, b)| [reach(a), reach(b)]);
    let one_sided = crate::differential::one_sided(script)
        .into_iter()
        .map(|(test, _)| [reach(test), BTreeSet::new()]);
    two_sided
        .chain(one_sided)
        .filter(|sides| sides.iter().any(|s| !s.is_empty()))
        .collect()
}

/// Whether `candidate` has, for each of `checks` (see [`reached`]), a check whose sides each
/// reach every call of a side of it, either way round.
pub fn keeps_reached(checks: &[Sides], candidate: &Script) -> bool {
    if checks.is_empty() {
        return true;
    }
    let now = reached(candidate);
    checks.iter().all(|[a, b]| {
        now.iter()
            .any(|[c, d]| (a.is_subset(c) && b.is_subset(d)) || (a.is_subset(d) && b.is_subset(c)))
    })
}

/// Whether `body` raises, at any depth, an exception whose code holds `head` when given.
fn raises(script: &Script, body: &[Stmt], head: Option<&str>) -> bool {
    all_bodies(body).into_iter().flatten().any(|s| match s {
        Stmt::Raise(r) => r
            .exc
            .as_ref()
            .is_some_and(|e| head.is_none_or(|h| script.slice(&**e).contains(h))),
        _ => false,
    })
}

/// The text of `message` before the first value it may show (a quote, a bracket, a digit),
/// at most 24 characters, trimmed.
fn head(message: &str) -> &str {
    let end = message
        .char_indices()
        .find(|&(i, c)| i >= 24 || "'\"{}[]()<>%".contains(c) || c.is_ascii_digit())
        .map_or(message.len(), |(i, _)| i);
    message[..end].trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    const ENCODERS: &str = "import json\nclass D(dict):\n    def items(self):\n        return [('a', 1)]\nd = D()\nc = json.dumps(d)\njson.encoder.c_make_encoder = None\npy = json.dumps(d)\n";

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    #[test]
    fn a_check_of_two_encoders_keeps_comparing_them() {
        let original = parse(&format!(
            "{ENCODERS}if c != py:\n    raise Exception(f'JSON C encoder disagrees: {{c}} != {{py}}')\n"
        ));
        let message = Some("JSON C encoder disagrees: {} != {\"a\": 1}");
        let checks = compared(&original, message);
        assert_eq!(checks.len(), 1);
        assert_eq!(
            checks[0].sides[0].iter().collect::<Vec<_>>(),
            ["json.dumps"]
        );
        let truthiness = parse(&format!(
            "{ENCODERS}if py:\n    raise Exception(f'JSON C encoder disagrees: {{d}} != {{py}}')\n"
        ));
        assert!(!keeps(&checks, &truthiness, message));
        let against_input = parse(&format!(
            "{ENCODERS}if d != py:\n    raise Exception(f'JSON C encoder disagrees: {{d}} != {{py}}')\n"
        ));
        assert!(!keeps(&checks, &against_input, message));
        let inlined = parse(&format!(
            "{ENCODERS}if json.dumps(d) != py:\n    raise Exception('JSON C encoder disagrees')\n"
        ));
        assert!(keeps(&checks, &inlined, message));
    }

    #[test]
    fn a_check_the_failure_does_not_come_from_may_go() {
        let text = format!(
            "{ENCODERS}if c != py:\n    raise ValueError('channel mismatch')\nraise KeyError('no sha256')\n"
        );
        assert!(compared(&parse(&text), Some("no sha256")).is_empty());
        assert_eq!(compared(&parse(&text), None).len(), 1);
    }

    #[test]
    fn an_assert_without_a_message_keeps_every_library_it_compares() {
        const WRAPPED: &str = "import functools, inspect\ndef decorator(func):\n    @functools.wraps(func)\n    def inner(*args):\n        return func(*args)\n    return inner\nclass Foo:\n    @decorator\n    def bar(self, testarg):\n        pass\nf = Foo()\n";
        let original = parse(&format!(
            "{WRAPPED}baz = decorator(f.bar)\nassert inspect.signature(baz) == inspect.signature(f.bar)\n"
        ));
        let checks = compared(&original, None);
        assert_eq!(checks.len(), 1);
        assert!(checks[0].libraries.contains("functools"));
        let unwrapped = parse(
            "import inspect\ndef bar(testarg):\n    pass\ndef inner(*args):\n    pass\nassert inspect.signature(inner) == inspect.signature(bar)\n",
        );
        assert!(!keeps(&checks, &unwrapped, None));
        let inlined = parse(&format!(
            "{WRAPPED}assert inspect.signature(decorator(f.bar)) == inspect.signature(f.bar)\n"
        ));
        assert!(keeps(&checks, &inlined, None));
        // With a message, the anchor keeps what it shows: no library is required.
        let messaged = parse(&format!(
            "{WRAPPED}assert inspect.signature(decorator(f.bar)) == inspect.signature(f.bar), 'differ'\n"
        ));
        assert!(compared(&messaged, Some("differ")).is_empty());
    }

    #[test]
    fn an_unguarded_check_keeps_every_call_its_sides_reach() {
        let original = parse(
            "import torch\nt = torch.nn.Transformer(d_model=8)\nout1 = t(src, tgt)\nwith torch.no_grad():\n    out3 = t(src, tgt)\nassert torch.allclose(out1, out3), 'differs'\n",
        );
        let checks = reached(&original);
        assert_eq!(checks.len(), 1);
        assert!(checks[0][0].contains("torch.nn.Transformer"), "{checks:?}");
        assert!(keeps_reached(&checks, &original));
        let fresh = parse(
            "import torch\nt = torch.nn.Transformer(d_model=8)\nout3 = t(src, tgt)\nx = torch.randn(1)\nassert torch.allclose(x, out3), 'differs'\n",
        );
        assert!(!keeps_reached(&checks, &fresh));
    }

    #[test]
    fn an_unguarded_assert_of_one_value_keeps_every_call_it_reaches() {
        let text = "import torch\ntarget = torch.ones(4) * 1.5\ndef fn(t):\n    return torch.nn.functional.binary_cross_entropy(torch.ones_like(t), t)\nout = torch.compile(fn)(target)\nassert not torch.isfinite(out).all(), 'accepted'\n";
        let checks = reached(&parse(text));
        assert_eq!(checks.len(), 1);
        assert!(
            checks[0][0].contains("torch.compile")
                && checks[0][0].contains("torch.nn.functional.binary_cross_entropy"),
            "{checks:?}"
        );
        let lost = "import torch\nassert not torch.ones(1), 'accepted'\n";
        assert!(!keeps_reached(&checks, &parse(lost)));
        let inlined = "import torch\ndef fn(t):\n    return torch.nn.functional.binary_cross_entropy(torch.ones_like(t), t)\nassert not torch.isfinite(torch.compile(fn)(torch.ones(4) * 1.5)).all(), 'accepted'\n";
        assert!(keeps_reached(&checks, &parse(inlined)));
    }

    #[test]
    fn a_function_handed_to_the_library_is_reached_without_a_call() {
        let text = "import torch\ndef inner(x):\n    with torch.autocast('cpu', enabled=False):\n        return x @ w\ndef outer(x):\n    return torch.compile(inner)(x)\n    return inner()\nassert torch.equal(outer(h), outer(g))\n";
        let checks = reached(&parse(text));
        assert!(checks[0][0].contains("torch.autocast"), "{checks:?}");
        let dead_call_gone = text.replace("    return inner()\n", "");
        assert!(keeps_reached(&checks, &parse(&dead_call_gone)));
    }

    #[test]
    fn a_check_against_a_constant_is_no_comparison_of_computations() {
        let script =
            parse("import math\nx = math.sqrt(2)\nif x != 1.5:\n    raise ValueError(x)\n");
        assert!(compared(&script, None).is_empty());
    }
}
