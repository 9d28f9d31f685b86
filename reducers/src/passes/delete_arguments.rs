//! Delete call arguments and keyword arguments.
//!
//! ## What it removes
//! For every call, first all of its arguments at once, then each positional or keyword
//! argument alone with its comma, the longest first. An argument on lines of its own goes
//! with those lines, its trailing comment included, and leaves its neighbours' comments.
//!
//! ## Example
//! ```python
//! parse(text, strict=True, encoding="utf-8")   # before
//! parse(text, strict=True)                     # after
//! ```
//!
//! ## When it cannot apply
//! Calls without arguments.

use super::{largest_first, line_of, short};
use crate::edit::{Candidate, Edit, list_item_range};
use crate::pass::Pass;
use crate::python::{Expr, Ranged, Script, all_exprs, span};

pub struct DeleteArguments;

impl Pass for DeleteArguments {
    fn name(&self) -> &'static str {
        "delete_arguments"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Call(call) = expr else { continue };
            let items: Vec<_> = call
                .arguments
                .iter_source_order()
                .map(|a| span(&a.range()))
                .collect();
            let line = line_of(text, span(expr).start);
            let callee = short(script.slice(&*call.func));
            let no_arguments = || Edit::replace(span(&call.arguments), "()");
            match items.len() {
                0 => {}
                // A lone argument may have a trailing comma, which cannot stay alone.
                1 => out.push(Candidate::new(
                    format!("delete the argument of {callee}() at line {line}"),
                    vec![no_arguments()],
                )),
                n => {
                    out.push(Candidate::new(
                        format!("delete all arguments of {callee}() at line {line}"),
                        vec![no_arguments()],
                    ));
                    for i in 0..n {
                        out.push(Candidate::new(
                            format!("delete argument {} of {callee}() at line {line}", i + 1),
                            vec![Edit::delete(list_item_range(text, &items, i))],
                        ));
                    }
                }
            }
        }
        largest_first(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn results(text: &str) -> Vec<String> {
        crate::passes::candidate_texts(&DeleteArguments, text)
    }

    #[test]
    fn a_lone_argument_goes_with_its_trailing_comma() {
        assert_eq!(results("f(a,)\n"), ["f()\n"]);
    }

    #[test]
    fn an_argument_on_its_own_line_leaves_the_comment_of_the_one_above() {
        let text = "f(\n    a,  # why a\n    b,\n)\n";
        assert!(results(text).contains(&"f(\n    a,  # why a\n)\n".to_string()));
    }

    #[test]
    fn a_multi_line_callee_is_described_by_its_first_line() {
        let text = "g(\n    x\n).h(a, b)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        for c in DeleteArguments.candidates(&script) {
            assert!(!c.description.contains('\n'), "{}", c.description);
        }
    }
}
