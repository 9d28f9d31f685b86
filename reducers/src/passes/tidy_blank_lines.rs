//! Collapse runs of blank lines left behind by deletions.
//!
//! ## What it removes
//! Blank lines at the start and end of the script, and every blank line that follows
//! another one. One candidate; the oracle still judges it, since a blank line inside a
//! triple-quoted string is part of a value.
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
//! A script without two blank lines in a row, or blank lines at either end.

use crate::edit::{Candidate, Edit};
use crate::pass::Pass;
use crate::python::Script;

pub struct TidyBlankLines;

impl Pass for TidyBlankLines {
    fn name(&self) -> &'static str {
        "tidy_blank_lines"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut tidy = String::with_capacity(text.len());
        let mut previous_blank = true;
        for line in text.split_inclusive('\n') {
            let blank = line.trim().is_empty();
            if !(blank && previous_blank) {
                tidy.push_str(if blank { "\n" } else { line });
            }
            previous_blank = blank;
        }
        while tidy.ends_with("\n\n") {
            tidy.pop();
        }
        if tidy == text {
            return Vec::new();
        }
        vec![Candidate::new(
            "collapse blank lines",
            vec![Edit::replace(0..text.len(), tidy)],
        )]
    }
}
