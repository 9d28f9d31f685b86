//! Put a statement that fits on one line on one line.
//!
//! ## What it removes
//! The line breaks of a simple statement spread over several lines (a call whose arguments
//! were each on a line of their own, until they shrank to `[1]` and `fill_value=1.0`), when
//! the statement, written on one line, is the same statement and fits in 88 columns with its
//! indentation: breaks inside brackets go, a trailing comma before a closing bracket with
//! them. Formatting elsewhere is left as the script wrote it. All such statements in one
//! candidate, then each alone.
//!
//! ## Example
//! ```python
//! x = torch.full(      # before
//!     [1],
//!     fill_value=1.0,
//! )
//!
//! x = torch.full([1], fill_value=1.0)      # after
//! ```
//!
//! ## When it cannot apply
//! Compound statements (`def`, `if`, `with` …); a statement that holds a comment or a string
//! spanning lines, that is longer than 88 columns on one line, or whose comma makes a tuple of
//! one element; code marked `# scrub: keep`.

use crate::edit::{Candidate, Edit, line_start};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Script, all_bodies, span};

pub struct JoinLines;

/// The longest line a joined statement may make, its indentation included.
pub(crate) const WIDTH: usize = 88;

impl Pass for JoinLines {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Cosmetic,
            ..PassInfo::new("join_lines")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let protected = script.protected();
        let mut joins = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let range = span(stmt);
                if ruff_python_ast::helpers::is_compound_statement(stmt)
                    || !text[range.clone()].contains('\n')
                    || protected
                        .iter()
                        .any(|p| p.start < range.end && range.start < p.end)
                {
                    continue;
                }
                let indent = range.start - line_start(text, range.start);
                match script.one_line(stmt) {
                    Some(line) if indent + line.chars().count() <= WIDTH => {
                        joins.push(Edit::replace(range, line));
                    }
                    _ => {}
                }
            }
        }
        let mut candidates = Vec::new();
        if joins.len() > 1 {
            candidates.push(Candidate::new(
                format!("put {} statements on one line each", joins.len()),
                joins.clone(),
            ));
        }
        candidates.extend(joins.into_iter().map(|edit| {
            let line = text[..edit.range.start].matches('\n').count() + 1;
            Candidate::new(
                format!("put the statement at line {line} on one line"),
                vec![edit],
            )
        }));
        candidates
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&JoinLines, text)
    }

    #[test]
    fn a_call_that_fits_goes_on_one_line() {
        let text = "x = torch.full(\n    [1],\n    fill_value=1.0,\n)\nif x:\n    f(a,\n      b)\n";
        assert_eq!(
            results(text),
            [
                "x = torch.full([1], fill_value=1.0)\nif x:\n    f(a, b)\n",
                "x = torch.full([1], fill_value=1.0)\nif x:\n    f(a,\n      b)\n",
                "x = torch.full(\n    [1],\n    fill_value=1.0,\n)\nif x:\n    f(a, b)\n",
            ]
        );
    }

    #[test]
    fn comments_long_lines_one_tuples_and_compound_statements_stay() {
        assert!(results("f(\n    a,  # the input\n)\n").is_empty());
        assert!(results(&format!("f(\n    {},\n)\n", "a".repeat(90))).is_empty());
        assert!(results("x = (\n    1,\n)\n").is_empty());
        assert!(results("def f(\n    a,\n):\n    pass\n").is_empty());
        assert!(results("s = f('''a\nb''')\n").is_empty());
    }

    #[test]
    fn a_break_outside_brackets_becomes_a_space() {
        assert_eq!(results("x = 1 + \\\n    2\n"), ["x = 1 + 2\n"]);
    }
}
