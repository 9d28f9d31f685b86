//! A check against a figure the reporter worked out keeps the inputs it was worked out from.
//!
//! `assert len(data[index]) == 2, "masked values are not ignored"`, with `data` three numbers
//! and `index` a masked array of three with one masked, expects 2 of those inputs. Shrunk to
//! one number and no mask, it fails with the same message and shows nothing: 1 is not 2 on
//! any version. Where an `assert` compares a computation with a literal, and nothing of the
//! computation shows in its failure (no message, or a message written out), a candidate
//! keeps that assert, and every literal the computation reads (in it, or in the one binding
//! of a name it reads, at any depth) is still there: the values may move, not change or go.
//!
//! A figure is a literal, or a library's value built from literals (`np.datetime64('-292277022657-01-27T08:29')`);
//! a library's values the computation reads (`np.iinfo(np.int64).min`) count as its inputs,
//! and a string of the figure that names something of the script (`{"name"}`, the key of a
//! `TypedDict` whose field is `name`) keeps that name in the script.

use std::collections::{HashMap, HashSet};

use crate::python::{
    Expr, Script, Stmt, all_bodies, exprs_of, imported_names, is_plain_literal, single_bindings,
    span,
};

/// An `assert COMPUTED OP LITERAL` the failure comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The literal side and the message, as written: the assert a candidate keeps.
    written: (String, Option<String>),
    /// The literals and the library's values the computed side reads, as written, each as
    /// often as it reads it.
    inputs: Vec<String>,
    /// The strings of the figure that name something the script defines or reads.
    named: Vec<String>,
}

/// The asserts of `script` that compare a computation with a literal and show nothing of it
/// when they fail (no message, or a written-out one) and that the failure comes from: its
/// `message` is theirs (none or empty for one without).
pub fn expected(script: &Script, message: Option<&str>) -> Vec<Expected> {
    let message = message.map(str::trim).unwrap_or_default();
    against_literals(script)
        .into_iter()
        .filter(|e| e.written.1.as_deref().unwrap_or_default().trim() == message)
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
    checks.iter().all(|check| {
        check.named.iter().all(|n| names.contains(n.as_str()))
            && now
                .iter()
                .any(|got| got.written == check.written && holds(&got.inputs, &check.inputs))
    })
}

/// Every name `script` defines or reads: its variables, attributes, functions and classes.
fn identifiers(script: &Script) -> HashSet<&str> {
    let mut names: HashSet<&str> = crate::python::referenced_names(script.body())
        .into_iter()
        .collect();
    names.extend(crate::python::defined_names(script.body()));
    names
}

/// Every `assert COMPUTED OP LITERAL` of `script` without a message or with a written-out one.
fn against_literals(script: &Script) -> Vec<Expected> {
    let bindings = single_bindings(script.body());
    let imported = imported_names(script.body(), true);
    let names = identifiers(script);
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| {
            let Stmt::Assert(a) = stmt else { return None };
            let msg = match a.msg.as_deref() {
                None => None,
                Some(Expr::StringLiteral(s)) => Some(s.value.to_str().to_string()),
                Some(_) => return None,
            };
            let Expr::Compare(c) = &*a.test else {
                return None;
            };
            let [right] = &c.comparators[..] else {
                return None;
            };
            let figure = |e: &Expr| self::figure(e, &imported);
            let (computed, figure) = match (figure(&c.left), figure(right)) {
                (false, true) => (&*c.left, right),
                (true, false) => (right, &*c.left),
                _ => return None,
            };
            Some(Expected {
                written: (script.slice(figure).to_string(), msg),
                inputs: inputs(script, computed, &bindings, &imported),
                named: exprs_of(figure)
                    .into_iter()
                    .filter_map(|e| match e {
                        Expr::StringLiteral(s) => Some(s.value.to_str()),
                        _ => None,
                    })
                    .filter(|s| names.contains(s))
                    .map(str::to_string)
                    .collect(),
            })
        })
        .collect()
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

/// A figure written out: a literal, or a call of an import's function with literals and the
/// import's values alone (`np.datetime64('2000-01-01')`, `np.array([1, 2], dtype=np.int8)`).
fn figure(expr: &Expr, imported: &HashSet<&str>) -> bool {
    let setting = |e: &Expr| literal(e) || dotted(e, imported);
    match expr {
        Expr::Call(call) => {
            dotted(&call.func, imported)
                && call.arguments.args.iter().all(setting)
                && call.arguments.keywords.iter().all(|k| setting(&k.value))
        }
        e => literal(e),
    }
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
            Expr::Call(call) => figure(&a.value, imported) && dotted(&call.func, imported),
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
    let mut out = Vec::new();
    let mut visited = HashSet::new();
    let mut pending = vec![expr];
    while let Some(expr) = pending.pop() {
        let exprs = exprs_of(expr);
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
                Expr::Name(n) => {
                    if let Some(value) = bindings.get(n.id.as_str())
                        && visited.insert(n.id.as_str())
                    {
                        pending.push(value);
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
        let checks = expected(&original, Some(MESSAGE));
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
    fn a_library_figure_keeps_the_library_values_it_was_worked_out_from() {
        let text = "import numpy as np\ndt = np.datetime64(np.iinfo(np.int64).min + 1, 's')\nassert dt.astype('M8[m]') == np.datetime64('-292277022657-01-27T08:29')\n";
        let checks = expected(&parse(text), Some(""));
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
        let checks = expected(&parse(built), Some(""));
        let inlined = "import numpy as np\nassert np.ma.array([1], dtype=np.dtype([('v', int)]), fill_value=(2,)).fill_value['v'].tolist() == 2\n";
        assert!(keeps(&checks, &parse(inlined)));
        assert!(keeps(&expected(&parse(inlined), Some("")), &parse(built)));
    }

    #[test]
    fn a_figure_naming_a_field_keeps_the_field() {
        let text = "from typing import NotRequired, TypedDict\nclass Dog(TypedDict):\n    name: str\n    owner: NotRequired[str]\nassert Dog.__required_keys__ == {'name'}\n";
        let checks = expected(&parse(text), Some(""));
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
    fn only_an_assert_that_shows_nothing_and_that_fails_counts() {
        let shown = parse("x = len([1, 2])\nassert x == 3, f'got {x}'\n");
        assert!(expected(&shown, Some("got 2")).is_empty());
        let two = parse("x = 1\nassert x == 1, 'first'\nassert x == 2, 'second'\n");
        let checks = expected(&two, Some("second"));
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].inputs, ["1"]);
        let computed = parse("import math\nassert math.sqrt(4) == math.sqrt(5)\n");
        assert!(expected(&computed, Some("")).is_empty());
    }
}
