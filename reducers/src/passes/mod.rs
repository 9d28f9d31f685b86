//! The generic passes, one per file; each file's doc comment is the pass's manual.

mod delete_arguments;
mod delete_definitions;
mod delete_statements;
mod drop_imports;
mod hoist_expressions;
mod inline_main;
mod tidy_blank_lines;
mod unwrap_blocks;

pub use delete_arguments::DeleteArguments;
pub use delete_definitions::DeleteDefinitions;
pub use delete_statements::DeleteStatements;
pub use drop_imports::DropImports;
pub use hoist_expressions::HoistExpressions;
pub use inline_main::InlineMain;
pub use tidy_blank_lines::TidyBlankLines;
pub use unwrap_blocks::UnwrapBlocks;

use crate::edit::{Candidate, deletion_range, line_end, line_start, starts_line};
use crate::python::{Ranged, Script, Stmt, span};

/// 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

/// "line 4" or "lines 4-9" for a byte range.
pub(crate) fn lines_label(text: &str, range: &std::ops::Range<usize>) -> String {
    let first = line_of(text, range.start);
    let last = line_of(text, range.end.saturating_sub(1).max(range.start));
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// The edit that removes the statements `stmts` (consecutive, from one block); when they are
/// the whole body of a compound statement, the body becomes `pass` so that it still parses.
pub(crate) fn delete_stmts(script: &Script, stmts: &[Stmt], whole_body: bool) -> crate::edit::Edit {
    let text = script.text();
    let range = stmts[0].start().to_usize()..stmts[stmts.len() - 1].end().to_usize();
    if !whole_body {
        return crate::edit::Edit::delete(deletion_range(text, range));
    }
    if starts_line(text, range.start) {
        let indent = crate::edit::indent_at(text, range.start);
        let lines = line_start(text, range.start)..line_end(text, range.end);
        crate::edit::Edit::replace(lines, format!("{indent}pass\n"))
    } else {
        crate::edit::Edit::replace(range, "pass")
    }
}

/// Orders candidates by how many bytes they remove, most first; ties keep source order.
pub(crate) fn largest_first(candidates: &mut [Candidate]) {
    candidates.sort_by_key(|c| {
        let removed: isize = c
            .edits
            .iter()
            .map(|e| e.range.len() as isize - e.replacement.len() as isize)
            .sum();
        std::cmp::Reverse(removed)
    });
}

/// The text of the whole lines a body spans, moved from its own indentation to `to`.
/// `None` when the body shares a line with its header and has more than one line.
pub(crate) fn body_at_indent(script: &Script, body: &[Stmt], to: &str) -> Option<String> {
    let text = script.text();
    let first = span(&body[0]);
    let last = span(&body[body.len() - 1]);
    if starts_line(text, first.start) {
        let from = crate::edit::indent_at(text, first.start);
        let lines = &text[line_start(text, first.start)..line_end(text, last.end)];
        let mut out = crate::edit::reindent(lines, from, to);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        Some(out)
    } else {
        let one = &text[first.start..last.end];
        (!one.contains('\n')).then(|| format!("{to}{one}\n"))
    }
}

/// One candidate made of all of `parts` that do not overlap an earlier one, when that is
/// at least two of them: the "everything of this kind at once" try that precedes the singles.
pub(crate) fn combine(description: &str, parts: &[Candidate]) -> Option<Candidate> {
    let mut taken: Vec<&Candidate> = Vec::new();
    for part in parts {
        if taken.iter().all(|t| t.is_disjoint(part)) {
            taken.push(part);
        }
    }
    (taken.len() > 1).then(|| {
        Candidate::new(
            description,
            taken.iter().flat_map(|c| c.edits.iter().cloned()).collect(),
        )
    })
}
