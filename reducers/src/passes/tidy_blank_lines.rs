//! Collapse runs of blank lines left behind by deletions.
//!
//! ## What it removes
//! Blank lines at the start and end of the script, every blank line that follows another
//! one, and those right after a block's header (`class C:`, once deletion emptied the lines
//! between it and its first statement), and those between two imports at module level
//! (`import torch`, a blank line, `import copy`: the imports read as one block), except inside
//! multi-line strings, where blank lines are part of a value.
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

use super::helpers::multi_line_strings;
use crate::edit::{Candidate, Edit};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Script, Stmt, span};

pub struct TidyBlankLines;

impl Pass for TidyBlankLines {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Cosmetic,
            ..PassInfo::new("tidy_blank_lines")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let strings = multi_line_strings(script, script.body());
        let protected = script.protected();
        // One edit per run of extra blank lines, so that a run beside code marked
        // `# scrub: keep` still goes.
        let mut edits = Vec::new();
        let mut previous_blank = true;
        // A block's header (`class C:`) and its first statement have nothing between them.
        let mut after_header = false;
        let mut run: Option<usize> = None;
        let mut at = 0;
        let gaps = import_gaps(script);
        edits.extend(gaps.iter().map(|g| Edit::delete(g.clone())));
        for line in text.split_inclusive('\n') {
            if gaps.iter().any(|g| g.start <= at && at < g.end) {
                at += line.len();
                continue;
            }
            let in_string = strings.iter().any(|r| r.start < at && at < r.end);
            let blank = !in_string && line.trim().is_empty();
            if blank && (previous_blank || after_header) {
                run.get_or_insert(at);
            } else if let Some(start) = run.take() {
                edits.push(Edit::delete(start..at));
            }
            // A blank line that is not empty becomes empty.
            if blank && !(previous_blank) && line != "\n" {
                edits.push(Edit::replace(at..at + line.len(), "\n"));
            }
            // Spaces at the end of a line of code go (not inside a string).
            let body = line.trim_end_matches('\n');
            let code_end = at + body.trim_end_matches([' ', '\t']).len();
            let line_end = at + body.len();
            if !blank
                && code_end < line_end
                && !strings
                    .iter()
                    .any(|r| r.start < line_end && code_end < r.end)
            {
                edits.push(Edit::delete(code_end..line_end));
            }
            previous_blank = blank;
            if !blank {
                after_header = !in_string && line.trim_end().ends_with(':');
            }
            at += line.len();
        }
        if let Some(start) = run {
            edits.push(Edit::delete(start..text.len()));
        }
        // Trailing blank lines and spaces: the text ends with a single newline.
        let trimmed = text.trim_end_matches(['\n', ' ', '\t']).len();
        if trimmed > 0 && &text[trimmed..] != "\n" {
            edits.retain(|e| e.range.end <= trimmed);
            edits.push(Edit::replace(trimmed..text.len(), "\n"));
        }
        edits.retain(|e| !e.touches(&protected));
        if edits.is_empty() {
            return Vec::new();
        }
        vec![Candidate::new("collapse blank lines", edits)]
    }
}

/// The blank lines between two module-level imports that follow each other, nothing but
/// blank lines between them.
fn import_gaps(script: &Script) -> Vec<std::ops::Range<usize>> {
    let text = script.text();
    let import = |s: &Stmt| matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_));
    script
        .body()
        .windows(2)
        .filter(|w| import(&w[0]) && import(&w[1]))
        .filter_map(|w| {
            let end = span(&w[0]).end;
            let start = text[end..].find('\n')? + end + 1;
            let next = span(&w[1]).start;
            let line_start = text[..next].rfind('\n').map_or(0, |i| i + 1);
            (start < line_start && text[start..line_start].trim().is_empty())
                .then_some(start..line_start)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    #[test]
    fn spaces_at_the_ends_of_lines_go_and_the_last_line_ends() {
        let text = "import torch\nx = '''a  \nb'''  \npred.backward()  ";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let candidates = TidyBlankLines.candidates(&script);
        let out = candidates[0].apply(text).unwrap();
        assert_eq!(out, "import torch\nx = '''a  \nb'''\npred.backward()\n");
    }

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
    fn a_block_s_header_is_followed_by_its_first_statement() {
        let text =
            "class M(nn.Module):\n\n    def forward(self, x):\n\n\n        return x\n\nM()\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let tidy = TidyBlankLines.candidates(&script)[0].apply(text).unwrap();
        assert_eq!(
            tidy,
            "class M(nn.Module):\n    def forward(self, x):\n        return x\n\nM()\n"
        );
    }

    #[test]
    fn the_imports_read_as_one_block() {
        let text = "import torch\n\nimport copy\nfrom os import path\n\n\nx = 1\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let tidy = TidyBlankLines.candidates(&script)[0].apply(text).unwrap();
        assert_eq!(
            tidy,
            "import torch\nimport copy\nfrom os import path\n\nx = 1\n"
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
