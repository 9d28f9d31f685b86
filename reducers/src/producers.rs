//! A failure the script raised on a library's value keeps the call that made that value.
//!
//! `data = np.genfromtxt(StringIO("1 2 3"), names="a, b, c", usecols=("a", "c"))`, then `for
//! i in data['a']` raises `TypeError: iteration over a 0-d array`: the report is that one row
//! gives a 0-d array. `[*numpy.array(1.0)]` raises the same error from the script's own line,
//! and is the user's mistake, not the bug. Where the script's own line raised the failure, the
//! library functions whose results it reads (through names bound once, at any depth) are still
//! read by a statement of a candidate. Only for a line that calls nothing (Python itself
//! raised: iterating, indexing, an attribute), and not an `assert`: a call may have raised in
//! its callee, a torch method without a Python frame (`param.mul_(factor)` of a leaf, whatever
//! `factor` came from). A line that calls a library function keeps what that function's own
//! module made for it (`ast.parse(new_code)` with `new_code = ast.unparse(tree)`: parsing a
//! string written by hand is the user's mistake), but not torch's or numpy's data (a tensor,
//! a device), nor what a tensor or array factory made.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::python::{Expr, Script, Stmt, all_bodies, exprs_of, single_bindings};
use crate::torch::{imports, torch_path};

/// The library functions (dotted paths: `numpy.genfromtxt`) whose results the statement of
/// `script` that starts with the line `line` reads, or calls on it; `raised_here` where that
/// line raised the failure itself, else it called the library that did.
pub fn producers(script: &Script, line: &str, raised_here: bool) -> BTreeSet<String> {
    let Some(stmt) = statement_at(script, line) else {
        return BTreeSet::new();
    };
    // A line that calls something may have raised in the callee (a torch method raises
    // without a Python frame); an `assert` has rules of its own.
    if matches!(stmt, Stmt::Assert(_)) {
        return BTreeSet::new();
    }
    let reach = Reach::of(script);
    let calls: Vec<&Expr> = heads(stmt)
        .into_iter()
        .flat_map(exprs_of)
        .filter(|e| matches!(e, Expr::Call(_)))
        .collect();
    if calls.is_empty() {
        return match raised_here {
            true => reach.reached(stmt),
            false => BTreeSet::new(),
        };
    }
    // A library function that reads what its own module made (`ast.parse` of `ast.unparse`'s
    // source): the maker stays, unless it makes data (a tensor or array factory).
    let callees: HashSet<String> = calls
        .into_iter()
        .filter_map(|e| match e {
            Expr::Call(call) => torch_path(&reach.imported, &call.func),
            _ => None,
        })
        .collect();
    let modules: HashSet<&str> = callees
        .iter()
        .filter_map(|path| Some(path.rsplit_once('.')?.0))
        .collect();
    // The line's own calls are no makers of what it reads.
    reach
        .reached(stmt)
        .into_iter()
        .filter(|path| !callees.contains(path))
        .filter(|path| {
            path.rsplit_once('.').is_some_and(|(module, name)| {
                modules.contains(module) && !crate::long_lines::is_factory(name) && !data(module)
            })
        })
        .collect()
}

/// The statement of `script` whose first line is `line` (trimmed), which may end in a comment
/// the statement does not hold, as a traceback shows the line.
pub(crate) fn statement_at<'s>(script: &'s Script, line: &str) -> Option<&'s Stmt> {
    let line = line.trim();
    let written = |first: &str| {
        line.strip_prefix(first)
            .is_some_and(|rest| rest.is_empty() || rest.trim_start().starts_with('#'))
    };
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .find(|s| first_line(script, s).is_some_and(written))
}

/// Whether a statement of `candidate` reads the results of each of `producers`: a call of
/// one whose result the statement drops or only binds (`numpy.genfromtxt(…)` on a line of its
/// own, beside `[*numpy.array(1.0)]`) does not count.
pub fn keeps<'a>(producers: &BTreeSet<String>, candidate: &'a Script) -> bool {
    if producers.is_empty() {
        return true;
    }
    let reach = Reach::of(candidate);
    let modules: HashSet<&str> = producers
        .iter()
        .filter_map(|p| Some(p.rsplit_once('.')?.0))
        .collect();
    // A statement that calls: only a call of the producers' own module counts, as the line
    // that raised did (`print(ast.unparse(…))` beside `ast.parse("…")` does not).
    let reads = |stmt: &'a Stmt| match heads(stmt).first() {
        Some(Expr::Call(call)) => torch_path(&reach.imported, &call.func)
            .and_then(|path| Some(path.rsplit_once('.')?.0.to_string()))
            .is_some_and(|module| modules.contains(module.as_str())),
        _ => true,
    };
    all_bodies(candidate.body())
        .into_iter()
        .flatten()
        .any(|stmt| reads(stmt) && producers.is_subset(&reach.reached(stmt)))
}

/// Where a call is written, as Python's `co_positions` gives it: its first line (from 1), its
/// column, its last line and the column after it (columns in bytes).
pub type Place = [usize; 4];

/// The library functions whose results the call written at `place` reads, in its arguments
/// and the value it is a method of (through names bound once, at any depth); empty when no
/// call is written there. `ast.parse(new_code)` with `new_code = ast.unparse(tree)` reads
/// `ast.unparse`; the inner `ast.parse(" ")` of `ast.parse(ast.unparse(ast.parse(" ")))`,
/// where a shorter source fails before it is unparsed, reads nothing.
pub fn read_by(script: &Script, place: Place) -> BTreeSet<String> {
    let Some(range) = offsets(script.text(), place) else {
        return BTreeSet::new();
    };
    let call = crate::python::all_exprs(script.body())
        .into_iter()
        .find_map(|e| match e {
            Expr::Call(call) if crate::python::span(e) == range => Some(call),
            _ => None,
        });
    let Some(call) = call else {
        return BTreeSet::new();
    };
    let mut pending: Vec<&Expr> = inputs(call).collect();
    if let Expr::Attribute(method) = &*call.func {
        pending.push(&method.value);
    }
    Reach::of(script).reached_from(pending)
}

/// The byte range of `place` in `text`.
fn offsets(text: &str, [line, col, end_line, end_col]: Place) -> Option<std::ops::Range<usize>> {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let start = starts.get(line.checked_sub(1)?)? + col;
    let end = starts.get(end_line.checked_sub(1)?)? + end_col;
    (start <= end && end <= text.len()).then_some(start..end)
}

/// A call's arguments, positional and keyword.
fn inputs<'a>(call: &'a crate::python::ast::ExprCall) -> impl Iterator<Item = &'a Expr> + 'a {
    call.arguments
        .args
        .iter()
        .chain(call.arguments.keywords.iter().map(|k| &k.value))
}

/// What a statement's values come from: the script's imports and its names bound once.
pub(crate) struct Reach<'a> {
    imported: HashMap<String, String>,
    bindings: HashMap<&'a str, &'a Expr>,
}

impl<'a> Reach<'a> {
    pub(crate) fn of(script: &'a Script) -> Reach<'a> {
        Reach {
            imported: imports(script, |_| true),
            bindings: single_bindings(script.body()),
        }
    }

    /// The library functions whose results the first line of `stmt` reads (through names
    /// bound once, at any depth); not a call whose result the statement drops or binds.
    fn reached(&self, stmt: &'a Stmt) -> BTreeSet<String> {
        let mut pending: Vec<&Expr> = Vec::new();
        for head in heads(stmt) {
            match (stmt, head) {
                (Stmt::Expr(_) | Stmt::Assign(_) | Stmt::AnnAssign(_), Expr::Call(call)) => {
                    pending.extend(inputs(call));
                }
                _ => pending.push(head),
            }
        }
        self.reached_from(pending)
    }

    /// What the first line of `stmt` evaluates, and the values of the names bound once that
    /// it reads, at any depth.
    pub(crate) fn read_exprs(&self, stmt: &'a Stmt) -> Vec<&'a Expr> {
        let mut out: Vec<&Expr> = heads(stmt);
        let mut seen = HashSet::new();
        let mut i = 0;
        while i < out.len() {
            for e in exprs_of(out[i]) {
                if let Expr::Name(n) = e
                    && let Some(value) = self.bindings.get(n.id.as_str())
                    && seen.insert(n.id.as_str())
                {
                    out.push(value);
                }
            }
            i += 1;
        }
        out
    }

    /// The library functions whose results `pending` read, through names bound once.
    fn reached_from(&self, mut pending: Vec<&'a Expr>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let mut seen = HashSet::new();
        while let Some(expr) = pending.pop() {
            for e in exprs_of(expr) {
                match e {
                    Expr::Call(call) => {
                        if let Some(path) = torch_path(&self.imported, &call.func) {
                            out.insert(path);
                        }
                    }
                    Expr::Name(n) => {
                        if let Some(value) = self.bindings.get(n.id.as_str())
                            && seen.insert(n.id.as_str())
                        {
                            pending.push(value);
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

/// Whether `module` is torch's or numpy's: what they make is data (a tensor, a dtype, a
/// device), which the torch passes shrink and the runtime kinds check.
fn data(module: &str) -> bool {
    let top = module.split('.').next().unwrap_or(module);
    matches!(top, "torch" | "numpy")
}

/// The first line of `stmt`, trimmed.
fn first_line<'s>(script: &'s Script, stmt: &Stmt) -> Option<&'s str> {
    script.slice(stmt).lines().next().map(str::trim)
}

/// What the first line of `stmt` evaluates: a loop's iterable, a branch's test, a value.
fn heads(stmt: &Stmt) -> Vec<&Expr> {
    match stmt {
        Stmt::For(s) => vec![&*s.iter],
        Stmt::If(s) => vec![&*s.test],
        Stmt::While(s) => vec![&*s.test],
        Stmt::With(s) => s.items.iter().map(|i| &i.context_expr).collect(),
        Stmt::Expr(s) => vec![&*s.value],
        Stmt::Assign(s) => vec![&*s.value],
        Stmt::AugAssign(s) => vec![&*s.value, &*s.target],
        Stmt::AnnAssign(s) => s.value.as_deref().into_iter().collect(),
        Stmt::Return(s) => s.value.as_deref().into_iter().collect(),
        Stmt::Assert(s) => vec![&*s.test],
        Stmt::Raise(s) => s.exc.as_deref().into_iter().collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    const ONE_ROW: &str = "from io import StringIO\nimport numpy as np\ndef show(text):\n    data = np.genfromtxt(StringIO(text), names='a, b, c', usecols=('a', 'c'))\n    for i in data['a']:\n        print(i)\nshow('1 2 3')\n";

    #[test]
    fn the_call_that_made_the_value_stays() {
        let p = producers(&parse(ONE_ROW), "    for i in data['a']:", true);
        assert_eq!(
            p,
            BTreeSet::from(["io.StringIO".to_string(), "numpy.genfromtxt".to_string()])
        );
        assert!(keeps(&p, &parse(ONE_ROW)));
        assert!(!keeps(&p, &parse("import numpy\n[*numpy.array(1.0)]\n")));
        let aside =
            "import io\nimport numpy\nnumpy.genfromtxt(io.StringIO('1'))\n[*numpy.array(1.0)]\n";
        assert!(!keeps(&p, &parse(aside)));
        let bound = "import io\nimport numpy\nd = numpy.genfromtxt(io.StringIO('1'))\n[*numpy.array(1.0)]\n";
        assert!(!keeps(&p, &parse(bound)));
        let inlined = "import io\nimport numpy\nfor i in numpy.genfromtxt(io.StringIO('1 2 3'), names='a, b, c')['a']:\n    pass\n";
        assert!(keeps(&p, &parse(inlined)));
        // A traceback shows the line with its comment.
        let commented = ONE_ROW.replace("['a']:", "['a']:  # the first column");
        let line = "    for i in data['a']:  # the first column";
        assert_eq!(producers(&parse(&commented), line, true), p);
    }

    #[test]
    fn a_line_that_calls_keeps_only_what_the_callees_module_made() {
        let text = "import math\nfactor = 2 / math.sqrt(4)\nfor p in params:\n    p.mul_(factor)\n";
        assert!(producers(&parse(text), "p.mul_(factor)", true).is_empty());
        let round_trip = "import ast\ntree = ast.parse(code)\nnew_code = ast.unparse(tree)\nprint(new_code)\nast.parse(new_code)\n";
        let made = producers(&parse(round_trip), "ast.parse(new_code)", true);
        assert_eq!(made, BTreeSet::from(["ast.unparse".to_string()]));
        let returned = "import xml.dom.minidom\ndef pretty(text):\n    return xml.dom.minidom.parseString(text)\npretty('</')\n";
        let line = "return xml.dom.minidom.parseString(text)";
        assert!(producers(&parse(returned), line, false).is_empty());
        let frozen = "import ast\nast.parse(\"f'{something:'}'\")\n";
        assert!(!keeps(&made, &parse(frozen)));
        let inlined = "import ast\nast.parse(ast.unparse(ast.parse(code)))\n";
        assert!(keeps(&made, &parse(inlined)));
        let printed = "import ast\nprint(ast.unparse(ast.parse(' ')))\nast.parse(\"f'{x:'}'\")\n";
        assert!(!keeps(&made, &parse(printed)));
        // Data a factory made is no output of the library's.
        let data =
            "import torch\na = torch.randn(2, 2).to(torch.device('cpu'))\ntorch.matmul(a, a)\n";
        assert!(producers(&parse(data), "torch.matmul(a, a)", true).is_empty());
    }

    #[test]
    fn the_call_that_failed_reads_what_the_library_made_or_not() {
        let round_trip = "import ast\ntree = ast.parse(code)\nnew_code = ast.unparse(tree)\nast.parse(new_code)\n";
        let read = read_by(&parse(round_trip), [4, 0, 4, 19]);
        assert_eq!(
            read,
            BTreeSet::from(["ast.parse".into(), "ast.unparse".into()])
        );
        // The inner call of a nested round trip failed: its source was written by hand.
        let nested = "import ast\nast.parse(ast.unparse(ast.parse(\" \")))\n";
        assert!(read_by(&parse(nested), [2, 22, 2, 36]).is_empty());
        let outer = read_by(&parse(nested), [2, 0, 2, 38]);
        assert!(outer.contains("ast.unparse"), "{outer:?}");
        // A method reads the value it is called on; no call written there reads nothing.
        let method = "import json\ns = json.dumps(1)\ns.encode()\n";
        assert_eq!(
            read_by(&parse(method), [3, 0, 3, 10]),
            BTreeSet::from(["json.dumps".into()])
        );
        assert!(read_by(&parse(method), [3, 0, 3, 9]).is_empty());
        assert!(read_by(&parse(method), [9, 0, 9, 1]).is_empty());
    }

    #[test]
    fn a_line_not_found_or_reading_no_library_keeps_nothing() {
        assert!(producers(&parse(ONE_ROW), "print(x)", true).is_empty());
        let own = parse("def f():\n    return None\nx = f()\nx()\n");
        assert!(producers(&own, "x()", true).is_empty());
    }
}
