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
        let mut tidy = String::with_capacity(text.len());
        let mut previous_blank = true;
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let in_string = strings.iter().any(|r| r.start < at && at < r.end);
            let blank = !in_string && line.trim().is_empty();
            if !(blank && previous_blank) {
                tidy.push_str(if blank { "\n" } else { line });
            }
            previous_blank = blank;
            at += line.len();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    #[test]
    fn blank_lines_inside_a_string_are_part_of_its_value() {
        let text = "x = 1\n\n\ns = \"\"\"a\n\n\nb\"\"\"\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let tidy = TidyBlankLines.candidates(&script)[0].apply(text).unwrap();
        assert_eq!(tidy, "x = 1\n\ns = \"\"\"a\n\n\nb\"\"\"\n");
    }
}
