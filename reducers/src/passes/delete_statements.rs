//! Delete statements at every block level, largest chunks first.
//!
//! ## What it removes
//! Runs of consecutive statements from one block (the module, a function body, a branch…):
//! for a block of n statements, the whole block, then halves, quarters, … down to single
//! statements, across all blocks, biggest first — hierarchical delta debugging without
//! ddmin's complement tests. A comment block directly above a deleted statement goes with it.
//!
//! ## Example
//! ```python
//! logging.basicConfig(level=logging.INFO)   # removed
//! run()
//! ```
//!
//! ## When it cannot apply
//! A block emptied completely becomes `pass`; the module itself is never emptied (the empty
//! script is checked once before reducing).

use super::{delete_stmts, largest_first, lines_label};
use crate::edit::Candidate;
use crate::pass::Pass;
use crate::python::{Script, all_bodies, span};

pub struct DeleteStatements;

impl Pass for DeleteStatements {
    fn name(&self) -> &'static str {
        "delete_statements"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let mut out = Vec::new();
        for (i, body) in all_bodies(script.body()).into_iter().enumerate() {
            let is_module = i == 0;
            let n = body.len();
            let mut size = n;
            loop {
                for chunk in body.chunks(size) {
                    let whole = chunk.len() == n;
                    if whole && is_module {
                        continue;
                    }
                    let edit = delete_stmts(script, chunk, whole && !is_module);
                    let range = span(&chunk[0]).start..span(&chunk[chunk.len() - 1]).end;
                    let label = lines_label(script.text(), &range);
                    out.push(Candidate::new(format!("delete {label}"), vec![edit]));
                }
                if size == 1 {
                    break;
                }
                size = size.div_ceil(2);
            }
        }
        out.dedup_by(|a, b| a.edits == b.edits);
        largest_first(&mut out);
        out
    }
}
