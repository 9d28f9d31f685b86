//! A line too long to paste gets its values named, as the original script named them.
//!
//! ## What it changes
//! Propagation and inlining put values where they are used, which can leave one statement of
//! 200 columns where the report had three short lines. In a simple statement with a line over
//! [`LIMIT`] columns, each innermost call that takes arguments (none of its arguments calls
//! something that takes arguments) and that runs whenever the statement does (not in a
//! lambda, a comprehension, a conditional expression, a boolean operator or an assert's
//! message) is a candidate: it moves to an assignment on the line before, and the statement
//! reads the name. The name is the one the original script bound a call of the same function
//! to (`X = torch.stft(…)` names the `torch.stft` call `X` again), else the function's own
//! name (`x` for a tensor or array factory). One candidate per call, left to right, so that
//! the values run in the order they did; the loop takes them until every line fits.
//!
//! It runs once the passes are done, outside their rounds (propagation would put the value
//! back), and it grows the script: each step is still judged by the oracle.
//!
//! ## Example
//! ```python
//! # before (the original had `x = torch.randn(L)` and `X = torch.stft(x, …)`)
//! torch.istft(torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)
//!
//! # after two steps
//! x = torch.randn(1408)
//! X = torch.stft(x, 1024, 256, window=w, center=False, return_complex=True)
//! torch.istft(X, 1024, 256, window=w, center=False)
//! ```
//!
//! ## When it cannot apply
//! A statement whose lines all fit; a compound statement (its header's expressions are left
//! as they are); a statement that does not start its line (after `;` or a header's colon); the
//! statement's whole value (naming it only moves the line); a call that takes no arguments.

use std::collections::{HashMap, HashSet};

use crate::passes::helpers::{callee_name, is_identifier, short};
use crate::edit::{Candidate, Edit, indent_at, line_of, line_start, starts_line};
use crate::pass::{Growth, Pass, PassInfo, Phase};
use crate::python::{Expr, Script, SourceOrderVisitor, Stmt, all_bodies, ast, source_order, span};

/// The widest line a maintainer pastes as it is: PyTorch's own lint allows 120 columns.
pub const LIMIT: usize = 120;

/// Functions whose result a person calls `x`: the tensor and array factories.
const FACTORIES: &[&str] = &[
    "arange", "array", "asarray", "empty", "full", "linspace", "ones", "ones_like", "rand",
    "rand_like", "randint", "randn", "randn_like", "tensor", "zeros", "zeros_like",
];

/// Names a value must not take: Python's builtins that scripts call.
const BUILTINS: &[&str] = &[
    "abs", "all", "any", "bool", "bytes", "dict", "enumerate", "filter", "float", "format",
    "frozenset", "getattr", "hash", "id", "int", "isinstance", "iter", "len", "list", "map",
    "max", "min", "next", "object", "open", "print", "range", "repr", "reversed", "round", "set",
    "slice", "sorted", "str", "sum", "super", "tuple", "type", "vars", "zip",
];

/// The pass, with the names the original script gave the results of its calls.
pub struct NameLongValues {
    /// A callee's last name (`stft`) → the name the original bound its first call to (`X`).
    names: HashMap<String, String>,
}

impl NameLongValues {
    /// The pass for a reduction of `original`.
    pub fn of(original: &Script) -> NameLongValues {
        let mut names = HashMap::new();
        for body in all_bodies(original.body()) {
            for stmt in body {
                let (target, value) = match stmt {
                    Stmt::Assign(a) if a.targets.len() == 1 => (&a.targets[0], &*a.value),
                    Stmt::AnnAssign(a) => match &a.value {
                        Some(value) => (&*a.target, &**value),
                        None => continue,
                    },
                    _ => continue,
                };
                if let (Expr::Name(name), Expr::Call(call)) = (target, value)
                    && let Some(callee) = callee_name(&call.func)
                {
                    names
                        .entry(callee.to_string())
                        .or_insert_with(|| name.id.to_string());
                }
            }
        }
        NameLongValues { names }
    }

    /// The name for the value of `call` in a script whose words are `taken`.
    fn name_for(&self, call: &ast::ExprCall, taken: &HashSet<&str>) -> String {
        let callee = callee_name(&call.func).unwrap_or("value");
        let own = if FACTORIES.contains(&callee) {
            "x"
        } else if is_identifier(callee.trim_end_matches('_')) && !BUILTINS.contains(&callee) {
            callee.trim_end_matches('_')
        } else {
            "value"
        };
        let preferred = self.names.get(callee).map(String::as_str);
        let free = |name: &str| !taken.contains(name) && !is_keyword(name);
        if let Some(name) = preferred.into_iter().chain([own]).find(|n| free(n)) {
            return name.to_string();
        }
        (2..)
            .map(|i| format!("{own}{i}"))
            .find(|n| free(n))
            .expect("a free name")
    }
}

impl Pass for NameLongValues {
    fn info(&self) -> PassInfo {
        PassInfo {
            name: "name_long_values",
            phase: Phase::Main,
            growth: Growth::Ladder,
            reads_crash: false,
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let taken = words(text);
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let range = span(stmt);
                let lines = line_start(text, range.start)..range.end;
                let too_long = text[lines].lines().any(|l| l.chars().count() > LIMIT);
                if !too_long || !starts_line(text, range.start) {
                    continue;
                }
                let indent = indent_at(text, range.start);
                for call in innermost_calls(stmt) {
                    let name = self.name_for(call, &taken);
                    let value = script
                        .one_line_expr(&Expr::Call(call.clone()))
                        .unwrap_or_else(|| script.slice(call).to_string());
                    let at = line_start(text, range.start);
                    out.push(Candidate::new(
                        format!(
                            "name `{}` `{name}` before line {}",
                            short(&value),
                            line_of(text, range.start)
                        ),
                        vec![
                            Edit::replace(at..at, format!("{indent}{name} = {value}\n")),
                            Edit::replace(span(call), name),
                        ],
                    ));
                }
            }
        }
        out
    }
}

/// The innermost calls with arguments that run whenever `stmt` does, left to right, but not
/// its whole value.
fn innermost_calls(stmt: &Stmt) -> Vec<&ast::ExprCall> {
    let value: &Expr = match stmt {
        Stmt::Expr(s) => &s.value,
        Stmt::Assign(s) => &s.value,
        Stmt::AnnAssign(s) => match &s.value {
            Some(v) => v,
            None => return Vec::new(),
        },
        Stmt::Return(s) => match &s.value {
            Some(v) => v,
            None => return Vec::new(),
        },
        // The message runs only when the assert fails.
        Stmt::Assert(s) => &s.test,
        _ => return Vec::new(),
    };
    let mut calls = Calls::default();
    calls.visit_expr(value);
    calls
        .found
        .into_iter()
        .filter(|(call, innermost)| *innermost && span(*call) != span(value))
        .map(|(call, _)| call)
        .collect()
}

/// The calls with arguments of an expression, outside the parts that may not run, each with
/// whether no such call is inside it.
#[derive(Default)]
struct Calls<'a> {
    found: Vec<(&'a ast::ExprCall, bool)>,
    /// The indices in `found` of the calls being visited.
    open: Vec<usize>,
}

impl<'a> SourceOrderVisitor<'a> for Calls<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_)
            | Expr::If(_)
            | Expr::BoolOp(_) => {}
            Expr::Call(call) if !call.arguments.is_empty() => {
                for &open in &self.open {
                    self.found[open].1 = false;
                }
                self.open.push(self.found.len());
                self.found.push((call, true));
                source_order::walk_expr(self, expr);
                self.open.pop();
            }
            _ => source_order::walk_expr(self, expr),
        }
    }
}

/// Every word of `text` that could be a variable's name: not an attribute's (after a dot).
fn words(text: &str) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (c.is_alphanumeric() || c == '_', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if !text[..s].trim_end().ends_with('.') {
                    out.insert(&text[s..i]);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "False" | "None" | "True" | "and" | "as" | "assert" | "async" | "await" | "break"
            | "class" | "continue" | "def" | "del" | "elif" | "else" | "except" | "finally"
            | "for" | "from" | "global" | "if" | "import" | "in" | "is" | "lambda" | "nonlocal"
            | "not" | "or" | "pass" | "raise" | "return" | "try" | "while" | "with" | "yield"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn named(original: &str, text: &str) -> Vec<String> {
        let original = Script::parse(original, PythonVersion::PY311).unwrap();
        let pass = NameLongValues::of(&original);
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        pass.candidates(&script)
            .iter()
            .map(|c| c.apply(text).unwrap())
            .collect()
    }

    const LONG: &str = "torch.istft(torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)\n";

    #[test]
    fn the_innermost_call_of_a_long_line_takes_the_original_name() {
        let original = "x = torch.randn(L)\nX = torch.stft(x, n)\n";
        assert_eq!(
            named(original, LONG),
            ["x = torch.randn(1408)\ntorch.istft(torch.stft(x, 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)\n"]
        );
        let next = "x = torch.randn(1408)\ntorch.istft(torch.stft(x, 1024, 256, window=w, center=False, return_complex=True, onesided=True), 1024, 256, window=w, center=False)\n";
        assert_eq!(
            named(original, next),
            ["x = torch.randn(1408)\nX = torch.stft(x, 1024, 256, window=w, center=False, return_complex=True, onesided=True)\ntorch.istft(X, 1024, 256, window=w, center=False)\n"]
        );
    }

    #[test]
    fn without_an_original_name_a_value_is_named_after_its_function() {
        let out = named("", LONG);
        assert!(out[0].starts_with("x = torch.randn(1408)\n"), "{out:?}");
        let taken = format!("x = 1\n{LONG}");
        assert!(named("", &taken)[0].starts_with("x = 1\nx2 = torch.randn(1408)\n"));
        // An attribute of the same name is no variable.
        let attribute = LONG.replace("torch.randn(1408)", "torch.randn(1408).x");
        assert!(named("", &attribute)[0].starts_with("x = torch.randn(1408)\n"));
    }

    #[test]
    fn a_line_that_fits_is_left_alone() {
        assert!(named("", "torch.istft(torch.stft(torch.randn(8), 4), 4)\n").is_empty());
    }

    #[test]
    fn what_may_not_run_and_the_whole_value_stay() {
        let lambda = format!("f = lambda p: {}", LONG);
        assert!(named("", &lambda).is_empty());
        let message = format!("assert ok, str({})", LONG.trim_end());
        assert!(named("", &format!("{message}\n")).is_empty());
        let whole = format!("y = torch.randn({})\n", "1, ".repeat(40));
        assert!(named("", &whole).is_empty());
    }

    #[test]
    fn a_value_in_a_function_is_named_at_the_statement_s_indentation() {
        let text = format!("def f(w):\n    return {}", LONG);
        let out = named("", &text);
        assert!(out[0].starts_with("def f(w):\n    x = torch.randn(1408)\n    return torch.istft("), "{out:?}");
    }
}
