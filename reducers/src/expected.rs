//! A check against a figure the reporter worked out keeps the inputs it was worked out from.
//!
//! `assert len(data[index]) == 2, "masked values are not ignored"`, with `data` three numbers
//! and `index` a masked array of three with one masked, expects 2 of those inputs. Shrunk to
//! one number and no mask, it fails with the same message and shows nothing: 1 is not 2 on
//! any version. Where an `assert` compares a computation with a literal (or each of an `and`
//! of comparisons does), a candidate keeps that comparison with its message, and every
//! literal the computation reads (in it, or in the one binding of a name it reads, at any
//! depth) is still there: the values may move, not change or go. A message that shows the
//! computed value (`assert res[3] == 2, res`) does not show why the figure is right:
//! `searchsorted` of 4 into `[1, 3, 5]` expects 2; of 1 into `[1]`, with the half that failed
//! dropped, `res[1] == 1` fails by design.
//!
//! A figure is a literal, or a library's value built from literals (`np.datetime64('-292277022657-01-27T08:29')`);
//! a library's values the computation reads (`np.iinfo(np.int64).min`) count as its inputs,
//! and a string of the figure that names something of the script (`{"name"}`, the key of a
//! `TypedDict` whose field is `name`) keeps that name in the script.

use std::collections::{HashMap, HashSet};

use crate::python::{
    Expr, Script, Stmt, all_bodies, ast, exprs_of, imported_names, is_plain_literal,
    single_bindings, span,
};

/// An `assert COMPUTED OP LITERAL` the failure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The literal side and the message, as written: the assert a candidate keeps.
    written: (String, Option<String>),
    /// Whether the library writes the failure's message (`torch.testing.assert_close`).
    by_library: bool,
    /// Whether the assert's message shows a value when it fails (not written out).
    shown: bool,
    /// The literals and the library's values the computed side reads, as written, each as
    /// often as it reads it.
    inputs: Vec<String>,
    /// The strings of the figure that name something the script defines or reads.
    named: Vec<String>,
    /// The f-strings of the script whose text the figure is written from, as written: their
    /// fields are what filled it (see [`templates`]).
    quoted: Vec<String>,
}

/// The asserts of `script` that compare a computation with a literal and that the failure may
/// come from: its `message` is theirs (none or empty for one without), or, where the failing
/// assert's message shows a value (`shown`), theirs does.
pub fn expected(script: &Script, message: Option<&str>, shown: bool) -> Vec<Expected> {
    let message = message.map(str::trim).unwrap_or_default();
    against_literals(script)
        .into_iter()
        .filter(|e| {
            e.by_library
                || (shown && e.shown)
                || (!e.shown && e.written.1.as_deref().unwrap_or_default().trim() == message)
        })
        .collect()
}

/// Whether `candidate` keeps each of `checks`: the same literal side and message, its
/// computed side reading every literal it read (as often).
pub fn keeps(checks: &[Expected], candidate: &Script) -> bool {
    if checks.is_empty() {
        return true;
    }
    let now = against_literals(candidate);
    let names = identifiers(candidate);
    let templates = templates(candidate);
    checks.iter().all(|check| {
        check.named.iter().all(|n| names.contains(n.as_str()))
            && check
                .quoted
                .iter()
                .all(|q| templates.iter().any(|(t, _)| t == q))
            && now
                .iter()
                .any(|got| got.written == check.written && holds(&got.inputs, &check.inputs))
    })
}

/// An `assert` of one value that no control guards, by its message, and the literals and
/// library values it reads (see [`inputs`]): nothing else says what it tests. `assert not
/// torch.isfinite(compiled(target)).all()` with `target = torch.ones(4, 4) * 1.5`, a target
/// out of range, tests a finite loss for any target in range.
pub type Unguarded = (Option<String>, Vec<String>);

/// The `assert`s of one value in `script` (see [`Unguarded`]).
pub fn unguarded(script: &Script) -> Vec<Unguarded> {
    let bindings = single_bindings(script.body());
    let imported = imported_names(script.body(), true);
    crate::differential::one_sided(script)
        .into_iter()
        .map(|(test, msg)| {
            let msg = msg.map(|m| script.slice(m).to_string());
            (msg, inputs(script, test, &bindings, &imported))
        })
        .filter(|(_, inputs)| !inputs.is_empty())
        .collect()
}

/// Whether `candidate` has, for each of `checks`, an `assert` of one value with the same
/// message that reads each of its inputs as often.
pub fn keeps_unguarded(checks: &[Unguarded], candidate: &Script) -> bool {
    if checks.is_empty() {
        return true;
    }
    let now = unguarded(candidate);
    checks
        .iter()
        .all(|(msg, inputs)| now.iter().any(|(m, got)| m == msg && holds(got, inputs)))
}

/// Every name `script` defines or reads: its variables, attributes, functions and classes.
fn identifiers(script: &Script) -> HashSet<&str> {
    let mut names: HashSet<&str> = crate::python::referenced_names(script.body())
        .into_iter()
        .collect();
    names.extend(crate::python::defined_names(script.body()));
    names
}

/// Every `assert COMPUTED OP LITERAL` of `script` (each comparison of an `and` of them one),
/// and every comparing call of a library's against a figure.
fn against_literals<'a>(script: &'a Script) -> Vec<Expected> {
    let bindings = single_bindings(script.body());
    let imported = imported_names(script.body(), true);
    let names = identifiers(script);
    let templates = templates(script);
    // A message that shows a value matches a failure it may come from: a check that runs
    // (the bodies that do, found once, and only for such a message).
    let live = std::cell::OnceCell::new();
    let runs = |stmt: &Stmt| {
        live.get_or_init(|| {
            crate::python::live_bodies(script)
                .into_iter()
                .flatten()
                .map(span)
                .collect::<HashSet<_>>()
        })
        .contains(&span(stmt))
    };
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .flat_map(|stmt| {
            let pairs = compared_pairs(script, stmt);
            let shown = pairs
                .iter()
                .any(|(_, msg)| matches!(msg, Some(Message::Shown(_))));
            match shown && !runs(stmt) {
                true => Vec::new(),
                false => pairs,
            }
        })
        .filter_map(|(sides, msg)| {
            // A comparison call's figure may be a name bound once to it (`expected =
            // torch.tensor(144.0)`); an `assert`'s is written in it.
            let by_library = msg.is_none();
            let shown = matches!(msg, Some(Message::Shown(_)));
            let resolve = |e: &'a Expr| match by_library {
                true => resolved(e, &bindings),
                false => e,
            };
            let figure = |e: &'a Expr| self::figure(resolve(e), &imported, &bindings);
            let (computed, figure) = match (figure(sides.0), figure(sides.1)) {
                (false, true) => (sides.0, resolve(sides.1)),
                (true, false) => (sides.1, resolve(sides.0)),
                _ => return None,
            };
            let strings: Vec<&str> = exprs_of(figure)
                .into_iter()
                .filter_map(|e| match e {
                    Expr::StringLiteral(s) => Some(s.value.to_str()),
                    _ => None,
                })
                .collect();
            let msg = msg.and_then(|m| match m {
                Message::None => None,
                Message::Written(text) | Message::Shown(text) => Some(text),
            });
            Some(Expected {
                written: (script.slice(figure).to_string(), msg),
                by_library,
                shown,
                inputs: inputs(script, computed, &bindings, &imported),
                named: strings
                    .iter()
                    .filter(|s| names.contains(*s))
                    .map(|s| s.to_string())
                    .collect(),
                quoted: templates
                    .iter()
                    .filter(|(_, parts)| strings.iter().any(|s| writes(s, parts)))
                    .map(|(text, _)| text.to_string())
                    .collect(),
            })
        })
        .collect()
}

/// Whether the statement of `script` starting with the line `line` (the failing one) is an
/// `assert` whose message shows a value (see [`shows`]).
pub fn shows_a_value(script: &Script, line: &str) -> bool {
    matches!(
        crate::producers::statement_at(script, line),
        Some(Stmt::Assert(a)) if a.msg.as_deref().is_some_and(shows)
    )
}

/// Whether an `assert`'s message shows values and writes no text (`res`, `(a, b)`), unlike
/// `"softplus mismatch: " + summarize(…)` or `f"got {x}"`, whose text names the check.
pub fn shows(msg: &Expr) -> bool {
    !exprs_of(msg)
        .into_iter()
        .any(|e| matches!(e, Expr::StringLiteral(_) | Expr::FString(_)))
}

/// An `assert`'s message: none, written out, or an expression that shows a value when the
/// check fails (`assert res[3] == 2, res`, see [`shows`]), each as written.
#[derive(Clone)]
enum Message {
    None,
    Written(String),
    Shown(String),
}

/// The comparisons `stmt` checks, each with its `assert`'s message (`None` where a library
/// writes the message): an `assert` of one comparison, of each comparison of an `and`, of a
/// text's start or end, or of a comparing call; a statement that calls a comparing check.
fn compared_pairs<'a>(
    script: &'a Script,
    stmt: &'a Stmt,
) -> Vec<((&'a Expr, &'a Expr), Option<Message>)> {
    let a = match stmt {
        Stmt::Assert(a) => a,
        // `torch.testing.assert_close(actual, expected)`: the library's message.
        Stmt::Expr(e) => {
            return crate::differential::sides(&e.value)
                .map(|sides| vec![(sides, None)])
                .unwrap_or_default();
        }
        _ => return Vec::new(),
    };
    let msg = match a.msg.as_deref() {
        None => Message::None,
        Some(Expr::StringLiteral(s)) => Message::Written(s.value.to_str().to_string()),
        Some(e) if shows(e) => Message::Shown(script.slice(e).to_string()),
        // A text with values: the failure's message is neither.
        Some(_) => return Vec::new(),
    };
    let tests: Vec<&Expr> = match &*a.test {
        Expr::BoolOp(b) if b.op == ast::BoolOp::And => b.values.iter().collect(),
        test => vec![test],
    };
    tests
        .into_iter()
        .filter_map(|test| {
            let asserted = match test {
                Expr::Compare(c) => match &c.comparators[..] {
                    [right] => Some((&*c.left, right)),
                    _ => return None,
                },
                Expr::Call(call) => text_end(call),
                _ => None,
            };
            match asserted {
                Some(sides) => Some((sides, Some(msg.clone()))),
                // `assert torch.allclose(a, b)`: the library's message.
                None => Some((crate::differential::sides(test)?, None)),
            }
        })
        .collect()
}

/// `assert source.startswith("@(")`: the text and what it starts (or ends) with.
fn text_end(call: &ast::ExprCall) -> Option<(&Expr, &Expr)> {
    let Expr::Attribute(f) = &*call.func else {
        return None;
    };
    let [arg] = &call.arguments.args[..] else {
        return None;
    };
    (matches!(f.attr.as_str(), "startswith" | "endswith") && call.arguments.keywords.is_empty())
        .then_some((&*f.value, arg))
}

/// The value each name bound by one unpacking only (`_, actual = jvp(…)`) is unpacked from.
fn unpacked(script: &Script) -> HashMap<&str, &Expr> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    let mut out = HashMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Some((targets, value)) = crate::python::assignment(stmt) else {
            continue;
        };
        for target in targets {
            let tuple = matches!(target, Expr::Tuple(_) | Expr::List(_));
            for name in exprs_of(target)
                .into_iter()
                .filter_map(|e| e.as_name_expr())
            {
                *count.entry(name.id.as_str()).or_default() += 1;
                if tuple {
                    out.insert(name.id.as_str(), value);
                }
            }
        }
    }
    out.retain(|name, _| count[name] == 1);
    out
}

/// Each f-string of `script` with a field, as written and by its text outside the fields:
/// `f"{arg} is a {type(arg)}"` and `[" is a "]`.
fn templates(script: &Script) -> Vec<(&str, Vec<String>)> {
    use crate::python::ast::{FStringPart, InterpolatedStringElement};
    crate::python::all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::FString(f) => Some(f),
            _ => None,
        })
        .filter(|f| {
            f.value.iter().any(|part| {
                matches!(part, FStringPart::FString(p) if p.elements.interpolations().next().is_some())
            })
        })
        .map(|f| {
            let mut parts = Vec::new();
            for part in f.value.iter() {
                match part {
                    FStringPart::Literal(l) => parts.push(l.value.to_string()),
                    FStringPart::FString(p) => {
                        for element in p.elements.iter() {
                            if let InterpolatedStringElement::Literal(l) = element {
                                parts.push(l.value.to_string());
                            }
                        }
                    }
                }
            }
            parts.retain(|p| !p.is_empty());
            (script.slice(f), parts)
        })
        .collect()
}

/// Whether `figure` is written from the f-string of `parts` (see [`templates`]): it holds
/// each part, in order, and they are at least a word of it.
fn writes(figure: &str, parts: &[String]) -> bool {
    let mut rest = figure;
    for part in parts {
        match rest.find(part.as_str()) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    parts.iter().map(|p| p.trim().len()).sum::<usize>() >= 6
}

/// Whether `got` has each of `wanted`, as often.
fn holds(got: &[String], wanted: &[String]) -> bool {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for value in got {
        *left.entry(value).or_default() += 1;
    }
    wanted.iter().all(|value| {
        left.get_mut(value.as_str()).is_some_and(|n| {
            *n > 0 && {
                *n -= 1;
                true
            }
        })
    })
}

/// A literal, a negative one, or a tuple, list or set of them.
fn literal(expr: &Expr) -> bool {
    match expr {
        Expr::UnaryOp(u) => literal(&u.operand),
        Expr::Tuple(t) => t.elts.iter().all(literal),
        Expr::List(l) => l.elts.iter().all(literal),
        Expr::Set(s) => s.elts.iter().all(literal),
        e => is_plain_literal(e),
    }
}

/// A figure written out: a literal, a display of literals and the imports' values
/// (`[[np.nan, 2.]]`), or a call of an import's function with those alone
/// (`np.datetime64('2000-01-01')`, `np.array([1, 2], dtype=np.int8)`).
fn figure(expr: &Expr, imported: &HashSet<&str>, bindings: &HashMap<&str, &Expr>) -> bool {
    let setting = |e: &Expr| {
        let e = resolved(e, bindings);
        literal(e) || dotted(e, imported) || constants(e, imported)
    };
    match expr {
        Expr::Call(call) => {
            dotted(&call.func, imported)
                && call.arguments.args.iter().all(setting)
                && call.arguments.keywords.iter().all(|k| setting(&k.value))
        }
        e => literal(e) || constants(e, imported),
    }
}

/// A display of literals and the imports' values, at any depth (`[[np.nan, 2.]]`).
fn constants(expr: &Expr, imported: &HashSet<&str>) -> bool {
    let element = |e: &Expr| literal(e) || dotted(e, imported) || constants(e, imported);
    match expr {
        Expr::List(l) => l.elts.iter().all(element),
        Expr::Tuple(t) => t.elts.iter().all(element),
        _ => false,
    }
}

/// What a name bound once stands for (at any depth), else `expr`.
fn resolved<'a>(expr: &'a Expr, bindings: &HashMap<&str, &'a Expr>) -> &'a Expr {
    let mut expr = expr;
    for _ in 0..8 {
        match expr {
            Expr::Name(n) if bindings.contains_key(n.id.as_str()) => expr = bindings[n.id.as_str()],
            _ => break,
        }
    }
    expr
}

/// A dotted name of an import's (`np.int8`, `np.datetime64`).
fn dotted(expr: &Expr, imported: &HashSet<&str>) -> bool {
    match expr {
        Expr::Attribute(a) => match &*a.value {
            Expr::Name(n) => imported.contains(n.id.as_str()),
            value => dotted(value, imported),
        },
        _ => false,
    }
}

/// A constant of an import's: a dotted name (`np.int8`), or an attribute of a call of one
/// with such constants and literals alone (`np.iinfo(np.int64).min`); not an attribute of a
/// value the script builds (`np.ma.array(data, dtype=np.dtype(…)).fill_value`).
fn library_value(expr: &Expr, imported: &HashSet<&str>) -> bool {
    match expr {
        Expr::Attribute(a) => match &*a.value {
            Expr::Call(call) => {
                figure(&a.value, imported, &HashMap::new()) && dotted(&call.func, imported)
            }
            _ => dotted(expr, imported),
        },
        _ => false,
    }
}

/// The literals and the import's values `expr` reads (not the functions it calls), through
/// the names bound once, each as written.
fn inputs(
    script: &Script,
    expr: &Expr,
    bindings: &HashMap<&str, &Expr>,
    imported: &HashSet<&str>,
) -> Vec<String> {
    let functions: HashMap<&str, &[Stmt]> = script
        .body()
        .iter()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => Some((f.name.as_str(), &f.body[..])),
            _ => None,
        })
        .collect();
    let unpacked = unpacked(script);
    let mut out = Vec::new();
    let mut visited = HashSet::new();
    let mut pending = vec![exprs_of(expr)];
    while let Some(exprs) = pending.pop() {
        // Functions called, and the modules an attribute is read from, are no inputs.
        let parts: HashSet<_> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Call(call) => Some(span(&*call.func)),
                Expr::Attribute(a) => Some(span(&*a.value)),
                _ => None,
            })
            .collect();
        for e in exprs {
            match e {
                Expr::Attribute(_) if library_value(e, imported) && !parts.contains(&span(e)) => {
                    out.push(script.slice(e).to_string())
                }
                // A name bound once, unpacked once, or a function of the script's (called or
                // handed over): what it reads.
                Expr::Name(n) if visited.insert(n.id.as_str()) => {
                    let name = n.id.as_str();
                    if let Some(value) = bindings.get(name).or(unpacked.get(name)) {
                        pending.push(exprs_of(value));
                    } else if let Some(body) = functions.get(name) {
                        // Its own names are read where the body binds them.
                        for stmt in all_bodies(body).into_iter().flatten() {
                            for target in crate::python::assignment(stmt)
                                .map(|a| a.0)
                                .unwrap_or_default()
                            {
                                for n in exprs_of(target)
                                    .into_iter()
                                    .filter_map(|e| e.as_name_expr())
                                {
                                    visited.insert(n.id.as_str());
                                }
                            }
                        }
                        pending.push(crate::python::all_exprs(body));
                    }
                }
                e if is_plain_literal(e) => out.push(script.slice(e).to_string()),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    const MESSAGE: &str = "masked values are not ignored.";

    fn masked(data: &str, index: &str) -> Script {
        parse(&format!(
            "import numpy as np\ndata = np.array({data})\nindex = np.ma.masked_array({index})\nprint(data[index])\nassert len(data[index]) == 2, \"{MESSAGE}\"\n"
        ))
    }

    #[test]
    fn a_figure_keeps_the_inputs_it_was_worked_out_from() {
        let original = masked("[1.0, 2.0, 3.0]", "[0, 1, 2], mask=[False, True, False]");
        let checks = expected(&original, Some(MESSAGE), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].inputs.len(), 9, "{:?}", checks[0].inputs);
        // The values moved into the assert: kept.
        let inlined = parse(&format!(
            "import numpy as np\nassert len(np.array([1.0, 2.0, 3.0])[np.ma.masked_array([0, 1, 2], mask=[False, True, False])]) == 2, \"{MESSAGE}\"\n"
        ));
        assert!(keeps(&checks, &inlined));
        // The mask gone, or the data shrunk: refused.
        assert!(!keeps(&checks, &masked("[1.0, 2.0, 3.0]", "[0, 1, 2]")));
        assert!(!keeps(
            &checks,
            &masked("[1.0]", "[0], mask=[False, True, False]")
        ));
        // The computation frozen to its value, or the assert gone: refused.
        let frozen = parse(&format!("assert 3 == 2, \"{MESSAGE}\"\n"));
        assert!(!keeps(&checks, &frozen));
        assert!(!keeps(&checks, &parse("raise AssertionError\n")));
    }

    #[test]
    fn each_figure_of_an_and_keeps_its_inputs_also_where_the_message_shows_the_value() {
        let text = "import numpy as np\narr = np.array([np.nan, 2, np.nan, 4, np.nan], dtype=object)\nbins = np.array([1, 3, 5])\nres = bins.searchsorted(arr)\nassert res[1] == 1 and res[3] == 2, res\n";
        let checks = expected(&parse(text), None, true);
        assert_eq!(checks.len(), 2, "{checks:?}");
        // The failing half dropped, and the inputs shrunk until the other half fails by
        // design: refused.
        let lost = "import numpy as np\nres = np.array([1]).searchsorted(np.array([np.nan, 1, np.nan, 1, np.nan]))\nassert res[1] == 1, res\n";
        assert!(!keeps(&checks, &parse(lost)));
        // The inputs moved into the call: kept.
        let inlined = "import numpy as np\nres = np.array([1, 3, 5]).searchsorted(np.array([np.nan, 2, np.nan, 4, np.nan], dtype=object))\nassert res[1] == 1 and res[3] == 2, res\n";
        assert!(keeps(&checks, &parse(inlined)));
        // A smoke test nothing calls shows its value in vain: it may go.
        let helper = "def smoke(m):\n    y = m()\n    assert y.shape == (2,), y.shape\n";
        assert!(expected(&parse(helper), None, true).is_empty());
        assert_eq!(
            expected(&parse(&format!("{helper}smoke(f)\n")), None, true).len(),
            1
        );
    }

    #[test]
    fn a_display_of_library_constants_is_a_figure() {
        let text = "import numpy as np\na = np.array([[np.nan, 2.], [np.nan, 2.]])\nassert np.array_equal(np.unique(a, axis=0), [[np.nan, 2.]], equal_nan=True)\n";
        let checks = expected(&parse(text), None, false);
        assert_eq!(checks.len(), 1, "{checks:?}");
        let lost = "import numpy as np\nassert np.array_equal(np.unique(np.array([[np.nan, 2.]])), [[2.]], equal_nan=True)\n";
        assert!(!keeps(&checks, &parse(lost)));
        let no_axis = text.replace(", axis=0", "");
        assert!(!keeps(&checks, &parse(&no_axis)));
        let inlined = "import numpy as np\nassert np.array_equal(np.unique(np.array([[np.nan, 2.], [np.nan, 2.]]), axis=0), [[np.nan, 2.]], equal_nan=True)\n";
        assert!(keeps(&checks, &parse(inlined)));
    }

    #[test]
    fn a_library_figure_keeps_the_library_values_it_was_worked_out_from() {
        let text = "import numpy as np\ndt = np.datetime64(np.iinfo(np.int64).min + 1, 's')\nassert dt.astype('M8[m]') == np.datetime64('-292277022657-01-27T08:29')\n";
        let checks = expected(&parse(text), Some(""), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(
            checks[0].inputs,
            ["'M8[m]'", "np.iinfo(np.int64).min", "np.int64", "1", "'s'"],
        );
        let inlined = "import numpy as np\nassert np.datetime64(np.iinfo(np.int64).min + 1, 's').astype('M8[m]') == np.datetime64('-292277022657-01-27T08:29')\n";
        assert!(keeps(&checks, &parse(inlined)));
        let nat = "import numpy as np\nassert np.datetime64().astype('M') == np.datetime64('-292277022657-01-27T08:29')\n";
        assert!(!keeps(&checks, &parse(nat)));
        // An attribute of a value the script builds is no constant of the library's.
        let built = "import numpy as np\nm = np.ma.array([1], dtype=np.dtype([('v', int)]), fill_value=(2,))\nassert m.fill_value['v'].tolist() == 2\n";
        let checks = expected(&parse(built), Some(""), false);
        let inlined = "import numpy as np\nassert np.ma.array([1], dtype=np.dtype([('v', int)]), fill_value=(2,)).fill_value['v'].tolist() == 2\n";
        assert!(keeps(&checks, &parse(inlined)));
        assert!(keeps(
            &expected(&parse(inlined), Some(""), false),
            &parse(built)
        ));
    }

    #[test]
    fn a_figure_naming_a_field_keeps_the_field() {
        let text = "from typing import NotRequired, TypedDict\nclass Dog(TypedDict):\n    name: str\n    owner: NotRequired[str]\nassert Dog.__required_keys__ == {'name'}\n";
        let checks = expected(&parse(text), Some(""), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].named, ["name"]);
        let empty = "from typing import TypedDict\nclass Dog(TypedDict):\n    pass\nassert Dog.__required_keys__ == {'name'}\n";
        assert!(!keeps(&checks, &parse(empty)));
        assert!(keeps(
            &checks,
            &parse(&text.replace("    owner: NotRequired[str]\n", ""))
        ));
    }

    #[test]
    fn a_figure_written_from_an_f_string_keeps_it() {
        let text = "def g(arg):\n    return f\"{arg} is a {type(arg)} (by int)\"\ndef f(arg):\n    return f'{arg} (by str)'\nassert f(1) == \"1 is a <class 'int'> (by int)\"\n";
        let checks = expected(&parse(text), Some(""), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].quoted, ["f\"{arg} is a {type(arg)} (by int)\""]);
        assert!(keeps(&checks, &parse(text)));
        let gone = text.replace("return f\"{arg} is a {type(arg)} (by int)\"", "pass");
        assert!(!keeps(&checks, &parse(&gone)));
        // Its fields filled the figure: they stay.
        assert!(!keeps(
            &checks,
            &parse(&text.replace("{type(arg)}", "{type()}"))
        ));
    }

    #[test]
    fn a_comparison_call_against_a_figure_keeps_what_the_functions_read() {
        let text = "import torch\ndtype = torch.float64\ndef f(t):\n    x = torch.stack((t, t + 1, 2 - t)).reshape(1, 3)\n    return torch.cumprod(x, dim=-1).sum()\ndef jvp1(t):\n    return torch.func.jvp(f, (t,), (torch.ones_like(t),))[1]\nt = torch.tensor(1.0, dtype=dtype)\n_, actual = torch.func.jvp(jvp1, (t,), (torch.ones_like(t),))\nexpected = torch.tensor(144.0, dtype=dtype)\ntorch.testing.assert_close(actual, expected)\n";
        let checks = expected(&parse(text), Some("Scalars are not close!"), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].written.0, "torch.tensor(144.0, dtype=dtype)");
        for input in ["3", "2", "1.0", "torch.float64"] {
            assert!(
                checks[0].inputs.iter().any(|i| i == input),
                "{input}: {checks:?}"
            );
        }
        let trivial = text.replace("torch.cumprod(x, dim=-1).sum()", "x.sum()");
        assert!(!keeps(&checks, &parse(&trivial)));
        let figure_changed = text.replace("144.0", "1.0");
        assert!(!keeps(&checks, &parse(&figure_changed)));
        assert!(keeps(&checks, &parse(text)));
    }

    #[test]
    fn an_unguarded_assert_of_one_value_keeps_its_data() {
        let text = "import torch\ntarget = torch.ones(4, 4) * 1.5\ndef fn(t):\n    return torch.nn.functional.binary_cross_entropy(torch.ones_like(t), t)\nout = torch.compile(fn)(target)\nassert not torch.isfinite(out).all(), 'accepted'\n";
        let checks = unguarded(&parse(text));
        assert_eq!(checks.len(), 1);
        assert!(checks[0].1.contains(&"1.5".to_string()), "{checks:?}");
        let in_range = text.replace(" * 1.5", "");
        assert!(!keeps_unguarded(&checks, &parse(&in_range)));
        let inlined = "import torch\ndef fn(t):\n    return torch.nn.functional.binary_cross_entropy(torch.ones_like(t), t)\nassert not torch.isfinite(torch.compile(fn)(torch.ones(4, 4) * 1.5)).all(), 'accepted'\n";
        assert!(keeps_unguarded(&checks, &parse(inlined)));
    }

    #[test]
    fn the_text_a_value_starts_with_is_a_figure() {
        let text = "import inspect\ndef function():\n    return 'hello'\nassert inspect.getsource(function).startswith('@(')\n";
        let checks = expected(&parse(text), Some(""), false);
        assert_eq!(checks.len(), 1);
        assert!(!keeps(&checks, &parse(&text.replace("'@('", "'@'"))));
        assert!(!keeps(&checks, &parse(&text.replace("'hello'", "None"))));
    }

    #[test]
    fn only_an_assert_that_fails_or_shows_a_value_counts() {
        // A message that shows the value tells nothing of why 3 was expected.
        let shown = parse("x = len([1, 2])\nassert x == 3, x\n");
        assert_eq!(expected(&shown, Some(""), true)[0].inputs, ["1", "2"]);
        // Not where the failing assert's message is written out: it passed before.
        assert!(expected(&shown, Some("mismatch"), false).is_empty());
        // A text with values is no value shown.
        assert!(shows_a_value(
            &shown,
            "assert x == 3, x  # as the report says"
        ));
        assert!(!shows_a_value(&shown, "assert x == 4, x"));
        let texts = parse("x = len([1, 2])\nassert x == 3, f'got {x}'\n");
        assert!(expected(&texts, Some("got 2"), true).is_empty());
        let two = parse("x = 1\nassert x == 1, 'first'\nassert x == 2, 'second'\n");
        let checks = expected(&two, Some("second"), false);
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].inputs, ["1"]);
        let computed = parse("import math\nassert math.sqrt(4) == math.sqrt(5)\n");
        assert!(expected(&computed, Some(""), false).is_empty());
    }
}
