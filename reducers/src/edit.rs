//! Candidates as byte-range edits over the current text, so kept code keeps its formatting.

use std::ops::Range;

/// Replace the bytes in `range` by `replacement`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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

    /// Whether the edit overlaps one of `ranges` (code marked `# scrub: keep`, say).
    pub fn touches(&self, ranges: &[Range<usize>]) -> bool {
        overlaps(&self.range, ranges)
    }
}

/// Whether `range` shares a byte with one of `ranges`.
pub fn overlaps(range: &Range<usize>, ranges: &[Range<usize>]) -> bool {
    ranges
        .iter()
        .any(|r| range.start < r.end && r.start < range.end)
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

/// The range to delete to remove the statements in `range` cleanly: whole lines when they
/// stand on lines of their own, together with the comment lines directly above them, which
/// describe them; otherwise the statements with the `;` that separates them from their
/// neighbours on the line.
pub fn deletion_range(text: &str, range: Range<usize>) -> Range<usize> {
    match whole_lines(text, range) {
        (lines, true) => comments_above(text, lines.start)..lines.end,
        (range, false) => range,
    }
}

/// Like [`deletion_range`], without the comment lines above: for code, such as a decorator,
/// whose comments describe what follows it.
pub fn own_lines(text: &str, range: Range<usize>) -> Range<usize> {
    whole_lines(text, range).0
}

/// The whole lines of `range` and `true` when it stands on lines of its own (after taking a
/// `;` next to it), else the range with its `;` and `false`.
fn whole_lines(text: &str, range: Range<usize>) -> (Range<usize>, bool) {
    let range = with_separator(text, range);
    if starts_line(text, range.start) && ends_line(text, range.end) {
        (
            line_start(text, range.start)..line_end(text, range.end),
            true,
        )
    } else {
        (range, false)
    }
}

/// `range` widened by the `;` after it and the blanks that follow that, or else by the `;`
/// before it and the blanks that precede that; unchanged when no `;` is next to it.
fn with_separator(text: &str, range: Range<usize>) -> Range<usize> {
    let blanks = [' ', '\t'];
    let after = text[range.end..].trim_start_matches(blanks);
    if let Some(rest) = after.strip_prefix(';') {
        let end = text.len() - rest.trim_start_matches(blanks).len();
        return range.start..end;
    }
    let before = text[..range.start].trim_end_matches(blanks);
    if let Some(rest) = before.strip_suffix(';') {
        return rest.trim_end_matches(blanks).len()..range.end;
    }
    range
}

/// The start of the run of comment lines directly above the line starting at `start`
/// (`start` itself when there is none).
pub fn comments_above(text: &str, mut start: usize) -> usize {
    while start > 0 {
        let prev = line_start(text, start - 1);
        let line = text[prev..start].trim_start();
        // A `# scrub:` directive belongs to the code it marks, not to what follows it.
        if line.starts_with('#')
            && !line
                .trim_start_matches('#')
                .trim_start()
                .starts_with("scrub:")
        {
            start = prev;
        } else {
            break;
        }
    }
    start
}

/// The range that removes item `i` of a comma-separated list (arguments, imported names),
/// given every item's range, with one comma next to it. An item that stands on lines of its
/// own, with its comma and its own trailing comment, takes those lines, so that the comments
/// of its neighbours stay; otherwise the item goes with the comma after it, or, for the last
/// item, with the comma before it.
pub fn list_item_range(text: &str, items: &[Range<usize>], i: usize) -> Range<usize> {
    let item = items[i].clone();
    if starts_line(text, item.start) {
        let after = text[item.end..].trim_start_matches([' ', '\t']);
        let after = after.strip_prefix(',').unwrap_or(after);
        let end = text.len() - after.len();
        if ends_line(text, end) {
            return line_start(text, item.start)..line_end(text, end);
        }
    }
    if i + 1 < items.len() {
        item.start..items[i + 1].start
    } else if i > 0 {
        items[i - 1].end..item.end
    } else {
        item
    }
}

/// Edits that move the whole lines in `lines` from indentation `from` to `to`. Blank lines,
/// lines that do not start with `from` (continuation lines) and lines that begin inside one
/// of `frozen` (multi-line strings, whose every byte is part of a value) are left alone.
pub fn reindent(
    text: &str,
    lines: Range<usize>,
    from: &str,
    to: &str,
    frozen: &[Range<usize>],
) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut at = lines.start;
    for line in text[lines].split_inclusive('\n') {
        let inside_string = frozen.iter().any(|r| r.start < at && at < r.end);
        if !inside_string && !line.trim().is_empty() && line.starts_with(from) {
            edits.push(Edit::replace(at..at + from.len(), to));
        }
        at += line.len();
    }
    edits
}

/// The text of `range` after `edits`, which all lie inside it; `None` when two overlap.
pub fn apply_edits_within(text: &str, range: Range<usize>, edits: &[Edit]) -> Option<String> {
    let shifted: Vec<Edit> = edits
        .iter()
        .map(|e| {
            (range.start <= e.range.start && e.range.end <= range.end).then(|| {
                Edit::replace(
                    e.range.start - range.start..e.range.end - range.start,
                    e.replacement.clone(),
                )
            })
        })
        .collect::<Option<_>>()?;
    apply_edits(&text[range], &shifted)
}

/// 1-based line number of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

/// "line 4" or "lines 4-9" for a byte range.
pub fn lines_label(text: &str, range: &Range<usize>) -> String {
    let first = line_of(text, range.start);
    let last = line_of(text, range.end.saturating_sub(1).max(range.start));
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
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
        let edits = reindent(body, 0..body.len(), "    ", "", &[]);
        assert_eq!(apply_edits(body, &edits).unwrap(), "x = f(\n1)\ny = 2\n");
    }

    #[test]
    fn reindent_leaves_the_lines_inside_a_multi_line_string_alone() {
        let body = "    s = \"\"\"\n    text\n    \"\"\"\n    y = 2\n";
        let string = body.find("\"\"\"").unwrap()..body.rfind("\"\"\"").unwrap() + 3;
        let edits = reindent(body, 0..body.len(), "    ", "", &[string]);
        assert_eq!(
            apply_edits(body, &edits).unwrap(),
            "s = \"\"\"\n    text\n    \"\"\"\ny = 2\n"
        );
    }

    #[test]
    fn deleting_one_of_two_statements_on_a_line_takes_its_semicolon() {
        let text = "a = 1; b = 2\n";
        let a = 0..5;
        let b = 7..12;
        assert_eq!(
            apply_edits(text, &[Edit::delete(deletion_range(text, a))]).unwrap(),
            "b = 2\n"
        );
        assert_eq!(
            apply_edits(text, &[Edit::delete(deletion_range(text, b))]).unwrap(),
            "a = 1\n"
        );
    }

    #[test]
    fn a_statement_with_a_trailing_semicolon_goes_with_its_line() {
        let text = "a = 1\nb = 2;  # two\nc = 3\n";
        let start = text.find("b =").unwrap();
        let range = deletion_range(text, start..start + 5);
        assert_eq!(
            apply_edits(text, &[Edit::delete(range)]).unwrap(),
            "a = 1\nc = 3\n"
        );
    }

    #[test]
    fn a_decorator_leaves_the_comment_above_it_to_what_it_decorates() {
        let text = "# about f\n@cache\ndef f(): pass\n";
        let start = text.find('@').unwrap();
        let range = own_lines(text, start..start + 6);
        assert_eq!(
            apply_edits(text, &[Edit::delete(range)]).unwrap(),
            "# about f\ndef f(): pass\n"
        );
    }

    #[test]
    fn a_list_item_on_its_own_line_leaves_its_neighbours_comments() {
        let text = "f(\n    a,  # about a\n    b,  # about b\n)\n";
        let items = [text.find("a,").unwrap()..text.find("a,").unwrap() + 1, {
            let b = text.find("b,").unwrap();
            b..b + 1
        }];
        let without = |i| apply_edits(text, &[Edit::delete(list_item_range(text, &items, i))]);
        assert_eq!(without(0).unwrap(), "f(\n    b,  # about b\n)\n");
        assert_eq!(without(1).unwrap(), "f(\n    a,  # about a\n)\n");
    }

    #[test]
    fn a_list_item_sharing_its_line_takes_one_comma() {
        let text = "f(a, b, c)";
        let items = [2..3, 5..6, 8..9];
        let without = |i| apply_edits(text, &[Edit::delete(list_item_range(text, &items, i))]);
        assert_eq!(without(0).unwrap(), "f(b, c)");
        assert_eq!(without(1).unwrap(), "f(a, c)");
        assert_eq!(without(2).unwrap(), "f(a, b)");
    }
}
