//! Candidates as byte-range edits over the current text, so kept code keeps its formatting.

use std::ops::Range;

/// Replace the bytes in `range` by `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub range: Range<usize>,
    pub replacement: String,
}

impl Edit {
    pub fn delete(range: Range<usize>) -> Edit {
        Edit {
            range,
            replacement: String::new(),
        }
    }

    pub fn replace(range: Range<usize>, replacement: impl Into<String>) -> Edit {
        Edit {
            range,
            replacement: replacement.into(),
        }
    }
}

/// One proposed change of a pass: what it does, in words, and its edits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub description: String,
    pub edits: Vec<Edit>,
}

impl Candidate {
    pub fn new(description: impl Into<String>, edits: Vec<Edit>) -> Candidate {
        Candidate {
            description: description.into(),
            edits,
        }
    }

    /// The text after the edits, or `None` when two edits overlap.
    pub fn apply(&self, text: &str) -> Option<String> {
        apply_edits(text, &self.edits)
    }

    /// Whether no byte touched by `self` is touched by `other`.
    pub fn is_disjoint(&self, other: &Candidate) -> bool {
        self.edits.iter().all(|a| {
            other
                .edits
                .iter()
                .all(|b| a.range.end <= b.range.start || b.range.end <= a.range.start)
        })
    }

    /// Both candidates' edits together.
    pub fn merge(&self, other: &Candidate) -> Candidate {
        let mut edits = self.edits.clone();
        edits.extend(other.edits.iter().cloned());
        Candidate::new(
            format!("{} + {}", self.description, other.description),
            edits,
        )
    }
}

/// Applies edits given over the same original text; `None` when two of them overlap.
pub fn apply_edits(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in sorted {
        if edit.range.start < at || edit.range.end > text.len() {
            return None;
        }
        out.push_str(text.get(at..edit.range.start)?);
        out.push_str(&edit.replacement);
        at = edit.range.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

/// Byte offset of the start of the line holding `offset`.
pub fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just past the newline ending the line holding `offset` (or the end of text).
pub fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}

/// The indentation (leading spaces and tabs) of the line holding `offset`.
pub fn indent_at(text: &str, offset: usize) -> &str {
    let start = line_start(text, offset);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether only whitespace precedes `offset` on its line.
pub fn starts_line(text: &str, offset: usize) -> bool {
    text[line_start(text, offset)..offset].trim().is_empty()
}

/// Whether only whitespace or a comment follows `offset` on its line.
pub fn ends_line(text: &str, offset: usize) -> bool {
    let rest = &text[offset..line_end(text, offset)];
    let rest = rest.trim();
    rest.is_empty() || rest.starts_with('#')
}

/// The range to delete to remove the code in `range` cleanly: whole lines when the code
/// stands on lines of its own, together with the comment lines directly above it, which
/// describe it; otherwise just the range itself.
pub fn deletion_range(text: &str, range: Range<usize>) -> Range<usize> {
    if !(starts_line(text, range.start) && ends_line(text, range.end)) {
        return range;
    }
    let mut start = line_start(text, range.start);
    while start > 0 {
        let prev = line_start(text, start - 1);
        if text[prev..start].trim_start().starts_with('#') {
            start = prev;
        } else {
            break;
        }
    }
    start..line_end(text, range.end)
}

/// Re-indents the whole lines `lines` (a range of full lines) from indentation `from` to `to`.
/// Lines that do not start with `from` (continuation lines, string contents) are left alone.
pub fn reindent(lines: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(lines.len());
    for line in lines.split_inclusive('\n') {
        match line.strip_prefix(from) {
            Some(rest) if !line.trim().is_empty() => {
                out.push_str(to);
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// Non-blank lines of a text: the size measure users see.
pub fn count_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order_of_position_whatever_their_order_in_the_list() {
        let edits = vec![Edit::replace(4..5, "X"), Edit::delete(0..1)];
        assert_eq!(apply_edits("abcdef", &edits).as_deref(), Some("bcdXf"));
    }

    #[test]
    fn overlapping_edits_are_refused() {
        let edits = vec![Edit::delete(0..3), Edit::delete(2..4)];
        assert_eq!(apply_edits("abcdef", &edits), None);
    }

    #[test]
    fn deleting_a_statement_takes_its_line_and_the_comments_above_it() {
        let text = "a = 1\n# set b\n# really\nb = 2  # two\nc = 3\n";
        let start = text.find("b =").unwrap();
        let range = deletion_range(text, start..start + 5);
        assert_eq!(
            apply_edits(text, &[Edit::delete(range)]).unwrap(),
            "a = 1\nc = 3\n"
        );
    }

    #[test]
    fn reindent_leaves_continuation_lines_that_lack_the_indent_alone() {
        let body = "    x = f(\n1)\n    y = 2\n";
        assert_eq!(reindent(body, "    ", ""), "x = f(\n1)\ny = 2\n");
    }
}
