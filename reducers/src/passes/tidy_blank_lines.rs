//! Collapse runs of blank lines left behind by deletions.
//!
//! ## What it removes
//! Blank lines at the start and end of the script, and every blank line that follows
//! another one, except inside multi-line strings, where blank lines are part of a value.
//! One candidate.
//!
//! ## Example
//! ```python
//! x = 1          # before: three blank lines follow
//!
//!
//!
//! f(x)
//! ```
//! becomes `x = 1`, one blank line, `f(x)`.
//!
//! ## When it cannot apply
//! A script without two blank lines in a row outside strings, nor blank lines at either end.

use super::multi_line_strings;
use crate::edit::{Candidate, Edit};
use crate::pass::Pass;
use crate::python::Script;

pub struct TidyBlankLines;

impl Pass for TidyBlankLines {
    fn name(&self) -> &'static str {
        "tidy_blank_lines"
    }

    fn is_cosmetic(&self) -> bool {
        true
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let strings = multi_line_strings(script, script.body());
        let protected = script.protected();
        // One edit per run of extra blank lines, so that a run beside code marked
        // `# scrub: keep` still goes.
        let mut edits = Vec::new();
        let mut previous_blank = true;
        let mut run: Option<usize> = None;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let in_string = strings.iter().any(|r| r.start < at && at < r.end);
            let blank = !in_string && line.trim().is_empty();
            if blank && previous_blank {
                run.get_or_insert(at);
            } else if let Some(start) = run.take() {
                edits.push(Edit::delete(start..at));
            }
            // A blank line that is not empty becomes empty.
            if blank && !(previous_blank) && line != "\n" {
                edits.push(Edit::replace(at..at + line.len(), "\n"));
            }
            previous_blank = blank;
            at += line.len();
        }
        if let Some(start) = run {
            edits.push(Edit::delete(start..text.len()));
        }
        // Trailing blank lines: the text ends with a single newline.
        let trimmed = text.trim_end_matches(['\n', ' ', '\t']).len();
        let end = (trimmed + 1).min(text.len());
        if end < text.len() {
            edits.retain(|e| e.range.end <= end);
            edits.push(Edit::delete(end..text.len()));
        }
        edits.retain(|e| !e.touches(&protected));
        if edits.is_empty() {
            return Vec::new();
        }
        vec![Candidate::new("collapse blank lines", edits)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    #[test]
    fn blank_lines_beside_kept_code_collapse_too() {
        let text = "import torch\ntorch.manual_seed(0)  # scrub: keep\n\n\n\nx = 1\n\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let out = TidyBlankLines.candidates(&script)[0].apply(text).unwrap();
        assert_eq!(
            out,
            "import torch\ntorch.manual_seed(0)  # scrub: keep\n\nx = 1\n"
        );
    }

    #[test]
    fn blank_lines_inside_a_string_are_part_of_its_value() {
        let text = "x = 1\n\n\ns = \"\"\"a\n\n\nb\"\"\"\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let tidy = TidyBlankLines.candidates(&script)[0].apply(text).unwrap();
        assert_eq!(tidy, "x = 1\n\ns = \"\"\"a\n\n\nb\"\"\"\n");
    }
}
