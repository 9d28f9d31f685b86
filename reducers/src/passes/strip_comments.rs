//! Remove every comment outside the kept code.
//!
//! ## What it removes
//! Comment lines, and comments at the end of code lines, all at once: they count as lines
//! but never change what the script does. One candidate, judged like any other (a script
//! that reads its own source could tell the difference). The comments on lines marked
//! `# scrub: keep` and between `# scrub: keep-begin` and `# scrub: keep-end` stay, markers
//! included, so that a kept seed line does not make the loop refuse the candidate and keep
//! every comment of the script.
//!
//! ## Example
//! ```python
//! # v3 moved calibration under "settings.factory"      # removed
//! table = load()  # cached                             # becomes `table = load()`
//! ```
//!
//! ## When it cannot apply
//! A script without comments outside its kept code.

use crate::edit::{Candidate, Edit, line_end, line_start, starts_line};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::Script;

pub struct StripComments;

impl Pass for StripComments {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Cosmetic,
            ..PassInfo::new("strip_comments")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let protected = script.protected();
        let edits: Vec<Edit> = script
            .comments()
            .into_iter()
            .map(|range| {
                if starts_line(text, range.start) {
                    // A comment line goes whole, newline included.
                    Edit::delete(line_start(text, range.start)..line_end(text, range.end))
                } else {
                    // A trailing comment goes with the spaces before it.
                    let code_end = text[..range.start].trim_end_matches([' ', '\t']).len();
                    Edit::delete(code_end..range.end)
                }
            })
            .filter(|edit| !edit.touches(&protected))
            .collect();
        if edits.is_empty() {
            return Vec::new();
        }
        vec![Candidate::new(
            format!("remove {} comments", edits.len()),
            edits,
        )]
    }
}
