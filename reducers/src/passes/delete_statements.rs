//! Delete statements at every block level, largest chunks first.
//!
//! ## What it removes
//! Runs of consecutive statements from one block (the module, a function body, a branch…):
//! for a block of n statements, the whole block, then halves, quarters, … down to single
//! statements, across all blocks, biggest first — hierarchical delta debugging without
//! ddmin's complement tests. A comment block directly above a deleted statement goes with it;
//! a statement that shares its line goes with the `;` next to it.
//!
//! ## Example
//! ```python
//! logging.basicConfig(level=logging.INFO)   # removed
//! run()
//! ```
//!
//! ## When it cannot apply
//! A block emptied completely becomes `pass`, unless it is `pass` already; the module itself
//! is never emptied (the empty script is checked once before reducing). A block that yields
//! may also become `yield from ()`: its function stays a generator that yields nothing
//! (`__iter__` of a collection whose filter never holds), where `pass` would make it return
//! `None`.

use super::helpers::{dedup, delete_stmts, is_no_op, largest_first, replace_stmts, short, yields};
use crate::edit::{Candidate, ends_line, lines_label, starts_line};
use crate::pass::{Pass, PassInfo};
use crate::python::{Script, all_bodies, span};

pub struct DeleteStatements;

impl Pass for DeleteStatements {
    fn info(&self) -> PassInfo {
        PassInfo::new("delete_statements")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for (i, body) in all_bodies(script.body()).into_iter().enumerate() {
            let is_module = i == 0;
            let n = body.len();
            // A module of comments alone has no statement to delete.
            if n == 0 {
                continue;
            }
            let mut size = n;
            loop {
                for chunk in body.chunks(size) {
                    let whole = chunk.len() == n;
                    if whole && is_module {
                        continue;
                    }
                    let edit = delete_stmts(script, chunk, whole);
                    // A body that is `pass` already.
                    if is_no_op(text, &edit) {
                        continue;
                    }
                    let range = span(&chunk[0]).start..span(&chunk[chunk.len() - 1]).end;
                    let label = lines_label(text, &range);
                    let what = if starts_line(text, range.start) && ends_line(text, range.end) {
                        label
                    } else {
                        format!("`{}` at {label}", short(&text[range]))
                    };
                    let description = if whole {
                        format!("replace {what} by pass")
                    } else {
                        format!("delete {what}")
                    };
                    out.push(Candidate::new(description, vec![edit]));
                    if whole && yields(chunk) {
                        let edit = replace_stmts(script, chunk, "yield from ()");
                        let description = format!("replace {what} by `yield from ()`");
                        out.push(Candidate::new(description, vec![edit]));
                    }
                }
                if size == 1 {
                    break;
                }
                size = size.div_ceil(2);
            }
        }
        // Halving a block of odd length meets the same chunk at several sizes.
        dedup(&mut out);
        largest_first(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn candidates(text: &str) -> Vec<Candidate> {
        DeleteStatements.candidates(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn a_chunk_met_at_two_sizes_is_proposed_once() {
        let all = candidates("a = 1\nb = 2\nc = 3\n");
        let texts: Vec<String> = all
            .iter()
            .map(|c| c.apply("a = 1\nb = 2\nc = 3\n").unwrap())
            .collect();
        let unique: std::collections::HashSet<&String> = texts.iter().collect();
        assert_eq!(unique.len(), texts.len(), "{texts:?}");
    }

    #[test]
    fn a_body_that_yields_may_become_a_generator_that_yields_nothing() {
        let text = "def f(s):\n    if s:\n        yield 0\nx = f(0)\n";
        let texts: Vec<String> = candidates(text)
            .iter()
            .map(|c| c.apply(text).unwrap())
            .collect();
        assert!(
            texts.contains(&"def f(s):\n    yield from ()\nx = f(0)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"def f(s):\n    pass\nx = f(0)\n".to_string()),
            "{texts:?}"
        );
        let plain = "def f(s):\n    return s\n";
        assert!(
            candidates(plain)
                .iter()
                .all(|c| !c.description.contains("yield"))
        );
    }

    #[test]
    fn a_body_that_is_pass_already_is_not_replaced_by_pass() {
        let text = "class C: pass\nx = C()\n";
        assert!(
            candidates(text)
                .iter()
                .all(|c| c.apply(text).unwrap() != text)
        );
    }

    #[test]
    fn statements_sharing_a_line_are_deleted_with_their_semicolon() {
        let text = "if x: a(); b()\n";
        let texts: Vec<String> = candidates(text)
            .iter()
            .map(|c| c.apply(text).unwrap())
            .collect();
        assert!(texts.contains(&"if x: b()\n".to_string()), "{texts:?}");
        assert!(texts.contains(&"if x: a()\n".to_string()), "{texts:?}");
    }
}
