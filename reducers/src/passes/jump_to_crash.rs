//! Jump to the failing statement, with the values it read.
//!
//! ## What it removes
//! Everything that only leads to the failure: `main()`, drivers, the classes and calls the
//! failing value travels through. The oracle reports where the script fails (a [`Crash`]): for
//! each frame of the script on the traceback, the line it ran and the values of the names,
//! attributes and subscripts that line read, and of the arguments of its calls, as code that
//! rebuilds them: literals, module-level classes and functions, values whose repr rebuilds an
//! equal one from the script's classes (`Line(qty=3, price=Decimal('12.45'))`), and constructors of torch and
//! numpy values (`torch.randn(8, 400, dtype=torch.float64)`, `torch.tensor([3, 12])`,
//! `torch.nn.Linear(400, 1024).double()`, `torch.float16`, `np.array([1.5])`), which
//! rebuild an equivalent value, not the same one: the oracle decides whether the statement
//! still fails with it. The statement on that line, with those expressions replaced by their
//! values, is put after (a) the imports, (b) the module-level definitions, (c) all the
//! module-level code before the statement that led to the failure; for each frame from the
//! innermost out, smallest script first. A name the statement reads more than once whose value
//! is a call (`torch.randn(2)`) is bound once before it (`x, w = torch.randn(2), torch.randn(2)`),
//! and what reads it stays as it is (`x.shape`): rebuilt at each read it would be several
//! values, and `f(x)` and `g(x)` would no longer be compared on one input. Deletion then
//! removes what the statement does not need.
//!
//! Last, for each frame, the failing statement stays where it is and only takes the values
//! it read in place of the expressions (`self.visit(dep, seen)` → `self.visit('perl', set())`;
//! a name read more than once whose value is a call keeps reading what its code computed),
//! so that the names it read, and the code computing them, can go: a recursion keeps
//! recursing without the data that led it there. That candidate may grow the script; it is a
//! pump, kept only if the rounds after it make the script smaller than before.
//!
//! The statement moves as it is, but `return e` becomes `e`, the header of an `if` or `while`
//! its test, the header of a `for` the loop with `pass` for a body, and an assignment whose
//! target reads a local no value rebuilds (`self.attn = nn.MultiheadAttention(d, h)`) its
//! value alone, which runs before anything is stored. A `raise … from exc`
//! whose cause was a local loses its cause.
//!
//! ## Example
//! ```python
//! class SettingsBlock:                          # before: `section` fails with
//!     def __init__(self, raw):                  # KeyError: 'calibration'
//!         self._raw = raw
//!     def section(self, name):
//!         return self._raw[name]
//! def main():
//!     SettingsBlock({"factory": {}}).section("calibration")
//! main()
//!
//! {'factory': {}}['calibration']                # after
//! ```
//!
//! ## When it cannot apply
//! Failures without a traceback (signals, exit statuses), failures in another thread or
//! process, statements that still read a local whose value the probe cannot rebuild (an
//! instance of the script's own class, an open connection, a tensor of a script that binds
//! no name to `torch`), and statements other than those above (`with`, `elif`, `except`
//! headers).

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::helpers::{delete_stmt, is_identifier, is_target};
use crate::crash::{Crash, Frame};
use crate::edit::{Candidate, Edit, apply_edits_within, line_of, overlaps};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{
    Expr, Ranged, Script, Stmt, all_exprs, assignment, child_bodies, exprs_of, span,
};

pub struct JumpToCrash;

impl Pass for JumpToCrash {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Pump,
            reads_crash: true,
            ..PassInfo::new("jump_to_crash")
        }
    }

    fn candidates(&self, _script: &Script) -> Vec<Candidate> {
        Vec::new()
    }

    fn candidates_at(&self, script: &Script, crash: &Crash) -> Vec<Candidate> {
        let text = script.text();
        let body = script.body();
        // The module-level statement through which the failure was reached: what the jump
        // replaces, and where a module frame's code stops.
        let driver = crash
            .frames
            .last()
            .filter(|f| !f.in_function)
            .and_then(|f| body.iter().position(|s| holds_line(text, s, f.line)))
            .unwrap_or(body.len());
        let keeps: [(&str, Keep); 3] = [
            ("after the imports", &is_import),
            ("after the definitions", &|s| {
                is_import(s) || is_definition(s)
            }),
            ("after the code before it", &|_| true),
        ];
        let mut jumps: Vec<(String, Candidate)> = Vec::new();
        let mut in_place = Vec::new();
        for failing in crash.frames.iter().filter_map(|f| Failing::of(script, f)) {
            for snippet in failing.snippets() {
                for (label, keep) in keeps {
                    let description = format!("jump to line {} {label}", failing.frame.line);
                    let candidate = jump(script, driver, keep, &snippet, description);
                    // A jump only ever shrinks the script.
                    if let Some(after) = candidate.apply(text).filter(|a| a.len() < text.len()) {
                        jumps.push((after, candidate));
                    }
                }
            }
            in_place.extend(failing.in_place().and_then(|c| Some((c.apply(text)?, c))));
        }
        jumps.sort_by_key(|(after, _)| after.len());
        // Values in place, innermost frame first, after every jump: they may grow the script.
        jumps.extend(in_place);
        let mut seen = HashSet::new();
        jumps
            .into_iter()
            .filter(|(after, _)| seen.insert(after.clone()))
            .map(|(_, c)| c)
            .collect()
    }
}

/// Whether the script raises an exception whose message it builds from what it computed
/// (`raise Exception(f"… {got} != {expected}")`): the script's own check of a result, whose
/// message is the evidence. With the values in place of the names, the message would read
/// the same while nothing computes it any more, and the check would fail for any program.
fn shows_computed(raise: &ruff_python_ast::StmtRaise) -> bool {
    raise.exc.as_deref().is_some_and(|exc| {
        exprs_of(exc).into_iter().any(|e| {
            matches!(e, Expr::FString(_))
                && exprs_of(e).iter().any(|part| matches!(part, Expr::Name(_)))
        })
    })
}

/// Whether `value` (code the probe reported) is a call, which may build a new value each time
/// it runs: `torch.randn(4)`, `Decimal('1')`, not `(4,)` nor `torch.float32`.
fn is_call(value: &str) -> bool {
    value.starts_with(|c: char| c.is_alphabetic() || c == '_') && value.ends_with(')')
}

/// Which module-level statements before the failure a candidate keeps.
type Keep<'a> = &'a dyn Fn(&Stmt) -> bool;

/// The script cut down to the module-level statements before `driver` that `keep` keeps, the
/// functions and classes after it and the code marked `# scrub: keep`, with `snippet` at the
/// end.
fn jump(
    script: &Script,
    driver: usize,
    keep: Keep,
    snippet: &str,
    description: String,
) -> Candidate {
    let text = script.text();
    let body = script.body();
    let protected = script.protected();
    let mut edits: Vec<Edit> = body
        .iter()
        .enumerate()
        .filter(|&(i, stmt)| match i.cmp(&driver) {
            std::cmp::Ordering::Less => !keep(stmt),
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Greater => {
                !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_))
            }
        })
        .filter(|(_, stmt)| !overlaps(&span(*stmt), &protected))
        .map(|(i, _)| delete_stmt(script, body, i, true))
        .collect();
    let newline = if text.ends_with('\n') || text.is_empty() {
        ""
    } else {
        "\n"
    };
    edits.push(Edit::replace(
        text.len()..text.len(),
        format!("{newline}{snippet}\n"),
    ));
    Candidate::new(description, edits)
}

fn is_import(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Import(_) | Stmt::ImportFrom(_))
}

fn is_definition(stmt: &Stmt) -> bool {
    matches!(
        stmt,
        Stmt::FunctionDef(_)
            | Stmt::ClassDef(_)
            | Stmt::Assign(_)
            | Stmt::AnnAssign(_)
            | Stmt::TypeAlias(_)
    )
}

/// Whether `stmt` spans the 1-based `line`.
fn holds_line(text: &str, stmt: &Stmt, line: usize) -> bool {
    let range = span(stmt);
    let last = line_of(text, range.end.saturating_sub(1).max(range.start));
    (line_of(text, range.start)..=last).contains(&line)
}

/// The statement running on `line` in `body`, at any depth, and whether only its header does
/// (a compound statement whose header holds the line).
fn statement_at<'a>(text: &str, body: &'a [Stmt], line: usize) -> Option<(&'a Stmt, bool)> {
    let stmt = body.iter().find(|s| holds_line(text, s, line))?;
    let bodies = child_bodies(stmt);
    let Some(first) = bodies.first().and_then(|b| b.first()) else {
        return Some((stmt, false));
    };
    if line < line_of(text, first.start().to_usize()) {
        return Some((stmt, true));
    }
    bodies.iter().find_map(|b| statement_at(text, b, line))
}

/// The statement a frame was running when the script failed, with the values it read.
struct Failing<'a> {
    script: &'a Script,
    frame: &'a Frame,
    stmt: &'a Stmt,
    /// Whether only the statement's header was running (a compound statement).
    header: bool,
    values: HashMap<&'a str, &'a str>,
}

impl<'a> Failing<'a> {
    fn of(script: &'a Script, frame: &'a Frame) -> Option<Failing<'a>> {
        let (stmt, header) = statement_at(script.text(), script.body(), frame.line)?;
        let values = frame
            .values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Some(Failing {
            script,
            frame,
            stmt,
            header,
            values,
        })
    }

    /// The statement as module-level code, with the values it read in place of the
    /// expressions: none when it cannot stand there, two for a `raise … from` (with and
    /// without its cause).
    fn snippets(&self) -> Vec<String> {
        let stmt = self.stmt;
        let whole = || all_exprs(std::slice::from_ref(stmt));
        let one = match (stmt, self.header) {
            (Stmt::Return(r), false) => r
                .value
                .as_deref()
                .and_then(|value| self.moved(span(value), exprs_of(value))),
            (Stmt::Raise(r), false) if shows_computed(r) => return Vec::new(),
            (Stmt::Raise(r), false) => {
                // Also without its cause, which may have been a local.
                let bare = r
                    .exc
                    .as_deref()
                    .filter(|_| r.cause.is_some())
                    .and_then(|exc| {
                        self.moved_with(span(exc), exprs_of(exc), |e| format!("raise {e}"))
                    });
                return self
                    .moved(span(stmt), whole())
                    .into_iter()
                    .chain(bare)
                    .collect();
            }
            (Stmt::Assign(_) | Stmt::AnnAssign(_), false) => {
                // `self.attn = nn.MultiheadAttention(…)` reads a `self` no value rebuilds:
                // the value alone, which runs before anything is stored.
                self.moved(span(stmt), whole()).or_else(|| {
                    let (_, value) = assignment(stmt)?;
                    self.moved(span(value), exprs_of(value))
                })
            }
            (Stmt::Expr(_) | Stmt::AugAssign(_) | Stmt::Assert(_) | Stmt::Delete(_), false) => {
                self.moved(span(stmt), whole())
            }
            (Stmt::If(s), true) => self.moved(span(&*s.test), exprs_of(&s.test)),
            (Stmt::While(s), true) => self.moved(span(&*s.test), exprs_of(&s.test)),
            (Stmt::For(s), true) if !s.is_async => {
                self.moved_with(span(&*s.iter), exprs_of(&s.iter), |iter| {
                    format!("for {} in {iter}:\n    pass", self.script.slice(&*s.target))
                })
            }
            _ => None,
        };
        one.into_iter().collect()
    }

    /// The statement where it stands, with the values it read in place of the expressions
    /// (`self.visit(dep, seen)` → `self.visit('perl', set())`): the names it no longer reads
    /// can then go, and with them the code that computed them.
    fn in_place(&self) -> Option<Candidate> {
        let exprs = match (self.stmt, self.header) {
            (Stmt::Raise(r), false) if shows_computed(r) => return None,
            (Stmt::If(s), true) => exprs_of(&s.test),
            (Stmt::While(s), true) => exprs_of(&s.test),
            (Stmt::For(s), true) => exprs_of(&s.iter),
            (_, true) => return None,
            (_, false) => all_exprs(std::slice::from_ref(self.stmt)),
        };
        let text = self.script.text();
        // A name read twice keeps reading the value its own code computed.
        let twice = self.read_twice(&exprs).into_iter().collect();
        let (mut edits, _) = self.substitutions(&exprs, &twice);
        edits.retain(|e| text[e.range.clone()] != e.replacement);
        (!edits.is_empty()).then(|| {
            Candidate::new(
                format!(
                    "put the values line {} read in their place",
                    self.frame.line
                ),
                edits,
            )
        })
    }

    /// The code in `range` with the values in place; `None` when it still reads a local of
    /// the frame.
    fn moved(&self, range: Range<usize>, exprs: Vec<&Expr>) -> Option<String> {
        self.moved_with(range, exprs, |code| code)
    }

    /// [`moved`](Failing::moved), the code then made a statement by `statement`. A name read
    /// more than once whose value is a call (`torch.randn(4)`, which builds another value each
    /// time) is bound once before it (`x = torch.randn(4)`): the reads still see one value, as
    /// a comparison of `f(x)` with `g(x)` needs.
    fn moved_with(
        &self,
        range: Range<usize>,
        exprs: Vec<&Expr>,
        statement: impl FnOnce(String) -> String,
    ) -> Option<String> {
        let text = self.script.text();
        let bound = self.read_twice(&exprs);
        let (edits, unresolved) = self.substitutions(&exprs, &bound.iter().copied().collect());
        if unresolved {
            return None;
        }
        let code = statement(apply_edits_within(text, range, &edits)?);
        if bound.is_empty() {
            return Some(code);
        }
        // One line, as `x, w, b = make_inputs()` bound them.
        let values: Vec<&str> = bound.iter().map(|name| self.values[name]).collect();
        Some(format!(
            "{} = {}\n{code}",
            bound.join(", "),
            values.join(", ")
        ))
    }

    /// The names `exprs` read more than once whose value is a call (see [`is_call`]), in the
    /// order they are first read: rebuilt at each read, they would be as many different values.
    fn read_twice(&self, exprs: &[&Expr]) -> Vec<&'a str> {
        let text = self.script.text();
        let (edits, _) = self.substitutions(exprs, &HashSet::new());
        let reads: Vec<&str> = edits
            .iter()
            .filter(|e| is_call(&e.replacement))
            .map(|e| &text[e.range.clone()])
            .filter(|read| is_identifier(read))
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for read in &reads {
            if !names.contains(read) && reads.iter().filter(|r| *r == read).count() > 1 {
                names.push(read);
            }
        }
        names
    }

    /// The edits that replace every outermost name, attribute or subscript of `exprs` whose
    /// value the frame reported by that value, but for what reads a name `bound` before the
    /// statement, and whether a local of the frame is still read.
    fn substitutions(&self, exprs: &[&Expr], bound: &HashSet<&str>) -> (Vec<Edit>, bool) {
        let text = self.script.text();
        let mut edits: Vec<Edit> = Vec::new();
        let mut unresolved = false;
        for expr in exprs {
            let r = span(*expr);
            let inside_replaced = edits
                .iter()
                .any(|e| e.range.start <= r.start && r.end <= e.range.end);
            // Names, attributes and subscripts read, and the arguments of calls that the
            // probe rebuilt (`x @ w.t()`).
            let read = !is_target(expr)
                && (matches!(
                    expr,
                    Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_)
                ) || self.values.contains_key(&text[r.clone()]));
            // What reads a bound name stays as it is (`x.shape[-1:]`): it reads the one value.
            let reads_bound = || {
                exprs_of(expr)
                    .iter()
                    .any(|e| matches!(e, Expr::Name(n) if bound.contains(n.id.as_str())))
            };
            // `2**63 - 1` already rebuilds its value, and reads better than its digits.
            if inside_replaced || !read || reads_bound() || crate::python::literal_only(expr) {
                continue;
            }
            if let Some(&value) = self.values.get(&text[r.clone()]) {
                // `-1 ** 2` and `1.real` would not mean what the names did.
                let number = value.starts_with(|c: char| c.is_ascii_digit());
                let value = if value.starts_with('-') || number && text[r.end..].starts_with('.') {
                    format!("({value})")
                } else {
                    value.to_string()
                };
                edits.push(Edit::replace(r, value));
            } else if let Expr::Name(n) = expr {
                unresolved |= self.frame.locals.iter().any(|l| l == n.id.as_str());
            }
        }
        (edits, unresolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::{PythonVersion, Script};

    fn frame(line: usize, locals: &[&str], values: &[(&str, &str)]) -> Frame {
        Frame {
            line,
            in_function: !locals.is_empty(),
            locals: locals.iter().map(|s| s.to_string()).collect(),
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn results(text: &str, frames: Vec<Frame>) -> Vec<String> {
        let script = Script::parse(text, PythonVersion::PY311).expect("fixture parses");
        JumpToCrash
            .candidates_at(
                &script,
                &Crash {
                    frames,
                    computed: Vec::new(),
                },
            )
            .iter()
            .map(|c| c.apply(text).expect("edits apply"))
            .collect()
    }

    #[test]
    fn an_argument_of_literals_stays_as_written() {
        let text = "import numpy as np\nprint(1)\nassert np.round(2**63-1, -3) == 1\n";
        let frames = vec![frame(3, &[], &[("2**63-1", "9223372036854775807")])];
        let texts = results(text, frames);
        assert!(
            texts.contains(&"import numpy as np\nassert np.round(2**63-1, -3) == 1\n".to_string()),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t.contains("922337")), "{texts:?}");
    }

    #[test]
    fn a_returned_subscript_becomes_the_script() {
        let text = "import os\nclass S:\n    def get(self, name):\n        return self.raw[name]\nS().get('a')\n";
        let frames = vec![frame(
            4,
            &["self", "name"],
            &[("self.raw", "{'b': 1}"), ("name", "'a'")],
        )];
        let texts = results(text, frames);
        assert_eq!(texts[0], "import os\n{'b': 1}['a']\n", "{texts:?}");
    }

    #[test]
    fn values_go_in_place_last() {
        let text = "class P:\n    def visit(self, dep):\n        self.visit(dep)\nP().visit('a')\n";
        let texts = results(text, vec![frame(3, &["self", "dep"], &[("dep", "'perl'")])]);
        assert_eq!(
            texts.last().unwrap(),
            "class P:\n    def visit(self, dep):\n        self.visit('perl')\nP().visit('a')\n",
            "{texts:?}"
        );
    }

    #[test]
    fn a_statement_that_reads_an_unknown_local_stays() {
        let text = "def f(x):\n    return x.y\nf(object())\n";
        assert!(results(text, vec![frame(2, &["x"], &[])]).is_empty());
    }

    #[test]
    fn a_rebuilt_module_and_tensor_make_the_jump_and_so_does_a_rebuilt_argument() {
        let text = "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return self.fc(x * 2)\nNet()(torch.randn(8, 400))\n";
        let frames = vec![frame(
            4,
            &["self", "x"],
            &[
                ("self.fc", "torch.nn.Linear(400, 1024).double()"),
                ("x * 2", "torch.randn(8, 400)"),
            ],
        )];
        let texts = results(text, frames);
        assert_eq!(
            texts[0], "import torch\ntorch.nn.Linear(400, 1024).double()(torch.randn(8, 400))\n",
            "{texts:?}"
        );
    }

    #[test]
    fn a_rebuilt_value_read_twice_is_bound_once() {
        let text = "import torch\ndef check(x, w, b):\n    assert torch.allclose(mine(x) * w + b, ref(x, x.shape[-1:], w) + b)\ncheck(torch.randn(8, 8), 2.0, torch.randn(8))\n";
        let frames = vec![frame(
            3,
            &["x", "w", "b"],
            &[
                ("x", "torch.randn(8, 8)"),
                ("w", "2.0"),
                ("b", "torch.randn(8)"),
                ("x.shape[-1:]", "torch.Size([8])"),
            ],
        )];
        let texts = results(text, frames);
        assert_eq!(
            texts[0],
            "import torch\nx, b = torch.randn(8, 8), torch.randn(8)\nassert torch.allclose(mine(x) * 2.0 + b, ref(x, x.shape[-1:], 2.0) + b)\n",
            "{texts:?}"
        );
    }

    #[test]
    fn an_attribute_of_an_unknown_self_leaves_the_value_alone() {
        let text = "import torch.nn as nn\nclass B(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        self.attn = nn.MultiheadAttention(d, 3)\nB(4)\n";
        let frames = vec![frame(5, &["self", "d"], &[("d", "4"), ("nn", "nn")])];
        let texts = results(text, frames);
        assert_eq!(
            texts[0], "import torch.nn as nn\nnn.MultiheadAttention(4, 3)\n",
            "{texts:?}"
        );
    }

    #[test]
    fn a_local_cause_is_dropped() {
        let text = "class E(Exception): pass\ntry:\n    {}['k']\nexcept KeyError as exc:\n    raise E('no %s' % exc.args[0]) from exc\n";
        let frames = vec![Frame {
            line: 5,
            in_function: false,
            locals: vec![],
            values: vec![
                ("exc.args[0]".into(), "'k'".into()),
                ("E".into(), "E".into()),
            ],
        }];
        let texts = results(text, frames);
        assert!(
            texts.contains(&"class E(Exception): pass\nraise E('no %s' % 'k')\n".to_string()),
            "{texts:?}"
        );
    }
}
