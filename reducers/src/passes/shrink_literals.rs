//! Shrink the inside of string, bytes and display literals by delta debugging.
//!
//! ## What it removes
//! Data that the failure does not need inside one literal: a JSON document in a string, a CSV
//! in a bytes literal, a long list of numbers. Each candidate removes one chunk of the
//! literal's contents and keeps the rest:
//! - a string or bytes literal (each part of an implicit concatenation apart): its lines
//!   first (a real newline or a `\n` escape ends one), in chunks of half the lines, then a
//!   quarter, down to single lines; then its characters the same way, an escape sequence
//!   counting as one character, down to chunks of one character for short contents (of a
//!   hundred-and-twenty-eighth of them for long ones, until they are short);
//! - a list, tuple, set or dict display of four or more elements: chunks of half its
//!   elements, then a quarter, down to two (single elements are `delete_elements`' work);
//! - an f-string: each replacement field alone (`{invoice!r}`), the longest first, so that
//!   a message stops reading what it only printed; one with no field left becomes a plain
//!   string, whose characters the next round shrinks.
//!
//! Candidates come largest first, so a round sweeps the coarse chunks before the fine ones;
//! each is judged by the oracle, which is what keeps the part the failure hangs on.
//!
//! No literal is ever emptied: a chunk is never the whole of it, and two chunks of one literal
//! overlap (a string's chunk rewrites all of its contents; a display's last chunk takes the
//! comma before it), so the loop never merges wins that would together remove everything.
//! An empty string or display takes another code path (a loop that never runs, an empty
//! tensor), and a failure that survives it is often another bug.
//!
//! ## Example
//! ```python
//! json.loads('{"name": "imu", "rates": [1, 2,], "unit": "hz"}')   # before
//! json.loads('[1, 2,]')                                           # after a few rounds
//! ```
//!
//! ## When it cannot apply
//! The literal text of f-strings, docstrings (a string that is a statement of its own), strings of fewer than
//! sixteen characters that hold only letters, digits, spaces and `_-./` (`shrink_values`
//! halves those; a longer one loses only its end, so that what is left reads as its
//! beginning), displays of fewer than four
//! elements or with a starred element or a `**mapping` entry.

use std::ops::Range;

use super::helpers::largest_first;
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::ast::{FStringPart, InterpolatedStringElement};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, span};

pub struct ShrinkLiterals;

/// The finest chunk of a long literal's characters is this fraction of them, so that one
/// round proposes at most about twice as many candidates per literal.
const MAX_CHUNKS: usize = 128;

/// Shorter strings of words are left to `shrink_values` (either half): a key or a
/// name is seldom data, and each would cost about twice its length in candidates a round.
/// A short string with punctuation (`'{"l": "\\P'`) may be data, and is shrunk.
const MIN_UNITS: usize = 16;

impl Pass for ShrinkLiterals {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("shrink_literals")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let docstrings: Vec<usize> = all_bodies(script.body())
            .into_iter()
            .flatten()
            .filter_map(|s| match s {
                Stmt::Expr(e) => Some(span(&*e.value).start),
                _ => None,
            })
            .collect();
        let tokens = super::helpers::library_tokens(script);
        let mut out = Vec::new();
        for expr in all_exprs(script.body()) {
            let range = span(expr);
            let line = line_of(text, range.start);
            match expr {
                Expr::StringLiteral(_) | Expr::BytesLiteral(_)
                    if !docstrings.contains(&range.start) && !tokens.contains(&range) =>
                {
                    let parts: Vec<Range<usize>> = match expr {
                        Expr::StringLiteral(s) => s.value.iter().map(span).collect(),
                        Expr::BytesLiteral(b) => b.value.iter().map(span).collect(),
                        _ => Vec::new(),
                    };
                    for part in parts {
                        let contents = contents(text, part);
                        out.extend(string_chunks(text, contents, line));
                    }
                }
                Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) | Expr::Dict(_) => {
                    out.extend(element_chunks(expr, line));
                }
                Expr::FString(f) => {
                    for part in f.value.iter() {
                        let FStringPart::FString(part) = part else {
                            continue;
                        };
                        // No field left (and no `{{` that means `{`): a plain string, whose
                        // characters the next round can shrink.
                        let token = span(part);
                        let code = &text[token.clone()];
                        if part.elements.interpolations().next().is_none()
                            && !code.contains("{{")
                            && !code.contains("}}")
                            && let Some(f) = code.find(['f', 'F'])
                        {
                            out.push(Candidate::new(
                                format!("make the f-string at line {line} a plain string"),
                                vec![Edit::delete(token.start + f..token.start + f + 1)],
                            ));
                        }
                        for element in part.elements.iter() {
                            if let InterpolatedStringElement::Interpolation(field) = element {
                                out.push(Candidate::new(
                                    format!(
                                        "drop `{}` from the f-string at line {line}",
                                        super::helpers::short(script.slice(field))
                                    ),
                                    vec![Edit::delete(span(field))],
                                ));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        largest_first(&mut out);
        super::helpers::dedup(&mut out);
        out
    }
}

/// The range of a string or bytes token's contents, between its prefix and quotes.
fn contents(text: &str, token: Range<usize>) -> Range<usize> {
    let code = &text[token.clone()];
    let prefix = code.len()
        - code
            .trim_start_matches(|c: char| c.is_ascii_alphabetic())
            .len();
    let quotes = &code[prefix..];
    let quote = if quotes.starts_with("\"\"\"") || quotes.starts_with("'''") {
        3
    } else {
        1
    };
    token.start + prefix + quote..token.end - quote
}

/// The units of a literal's contents: characters, with an escape sequence as one; and
/// whether each ends a line.
pub(super) fn units(text: &str, contents: Range<usize>) -> Vec<(Range<usize>, bool)> {
    let body = &text[contents.clone()];
    let mut out = Vec::new();
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let mut end = i + c.len_utf8();
        let mut newline = c == '\n';
        if c == '\\'
            && let Some(&(j, next)) = chars.peek()
        {
            chars.next();
            end = j + next.len_utf8();
            newline = next == 'n';
            let more = match next {
                'x' => 2,
                'u' => 4,
                'U' => 8,
                '0'..='7' => 2,
                'N' => usize::MAX,
                _ => 0,
            };
            let mut taken = 0;
            while taken < more
                && let Some(&(k, d)) = chars.peek()
            {
                let fits = match next {
                    'N' => true,
                    '0'..='7' => ('0'..='7').contains(&d),
                    _ => d.is_ascii_hexdigit(),
                };
                if !fits {
                    break;
                }
                chars.next();
                end = k + d.len_utf8();
                taken += 1;
                if next == 'N' && d == '}' {
                    break;
                }
            }
        }
        out.push((contents.start + i..contents.start + end, newline));
    }
    out
}

/// Candidates that each remove one chunk of `items` (ranges in source order, the gaps between
/// them going with the chunk before them), for chunk sizes from half down to `finest`.
fn chunks(
    items: &[Range<usize>],
    end: usize,
    finest: usize,
    what: &str,
    line: usize,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let n = items.len();
    let mut size = n.div_ceil(2);
    loop {
        if size < finest.max(1) || size >= n {
            break;
        }
        for start in (0..n).step_by(size) {
            let stop = (start + size).min(n);
            let to = items.get(stop).map_or(end, |r| r.start);
            out.push(Candidate::new(
                format!(
                    "remove {what} {}-{} of {n} of the literal at line {line}",
                    start + 1,
                    stop
                ),
                vec![Edit::delete(items[start].start..to)],
            ));
        }
        if size == finest.max(1) {
            break;
        }
        size = size.div_ceil(2);
    }
    out
}

/// The line chunks, then the character chunks, of a string's contents.
fn string_chunks(text: &str, contents: Range<usize>, line: usize) -> Vec<Candidate> {
    let units = units(text, contents.clone());
    // A qualified name (`aten::add.Tensor`) is no data: `shrink_values` takes its parts.
    let structured = text[contents.clone()]
        .chars()
        .any(|c| !(c.is_alphanumeric() || " _-./".contains(c)))
        && super::helpers::qualified_parts(&text[contents.clone()]).is_none();
    if units.len() < 2 || units.len() < MIN_UNITS && !structured {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut start = contents.start;
    for (range, newline) in &units {
        if *newline {
            lines.push(start..range.end);
            start = range.end;
        }
    }
    if start < contents.end {
        lines.push(start..contents.end);
    }
    let mut out = Vec::new();
    if lines.len() > 1 {
        out.extend(chunks(&lines, contents.end, 1, "lines", line));
    }
    let characters: Vec<Range<usize>> = units.into_iter().map(|(r, _)| r).collect();
    let finest = characters.len().div_ceil(MAX_CHUNKS);
    // A string of words (a long option name, a sentence) keeps its beginning: a cut inside
    // it reads as a typo (`--nglonglong` for `--longlonglong`).
    out.extend(
        chunks(&characters, contents.end, finest, "characters", line)
            .into_iter()
            .filter(|c| structured || c.edits.iter().all(|e| e.range.end == contents.end)),
    );
    out.into_iter()
        .map(|c| over_contents(text, &contents, c))
        .collect()
}

/// A chunk's deletion as one edit over all of the literal's contents: two chunks of one
/// literal then overlap, and the loop never merges the two halves of a string into an
/// empty one.
fn over_contents(text: &str, contents: &Range<usize>, chunk: Candidate) -> Candidate {
    // `chunks` makes one deletion a candidate.
    let [edit] = &chunk.edits[..] else {
        return chunk;
    };
    let kept = format!(
        "{}{}",
        &text[contents.start..edit.range.start],
        &text[edit.range.end..contents.end]
    );
    Candidate::new(
        chunk.description,
        vec![Edit::replace(contents.clone(), kept)],
    )
}

/// The element chunks of a display of four or more elements; each chunk takes the commas
/// after its elements, and the last the comma before it.
fn element_chunks(expr: &Expr, line: usize) -> Vec<Candidate> {
    let items: Vec<Range<usize>> = match expr {
        Expr::List(l) => l.elts.iter().map(span).collect(),
        Expr::Tuple(t) => t.elts.iter().map(span).collect(),
        Expr::Set(s) => s.elts.iter().map(span).collect(),
        Expr::Dict(d) => {
            let Some(items) = d
                .items
                .iter()
                .map(|item| Some(span(item.key.as_ref()?).start..span(&item.value).end))
                .collect::<Option<Vec<_>>>()
            else {
                return Vec::new();
            };
            items
        }
        _ => return Vec::new(),
    };
    let starred = match expr {
        Expr::List(l) => l.elts.iter().any(|e| matches!(e, Expr::Starred(_))),
        Expr::Tuple(t) => t.elts.iter().any(|e| matches!(e, Expr::Starred(_))),
        Expr::Set(s) => s.elts.iter().any(|e| matches!(e, Expr::Starred(_))),
        _ => false,
    };
    if items.len() < 4 || starred {
        return Vec::new();
    }
    let n = items.len();
    let mut out = Vec::new();
    let mut size = n.div_ceil(2);
    while size >= 2 && size < n {
        for start in (0..n).step_by(size) {
            let stop = (start + size).min(n);
            // Up to the next element, or for the last chunk from the end of the element
            // before it, so that the commas stay right.
            let range = if stop < n {
                items[start].start..items[stop].start
            } else {
                items[start - 1].end..items[n - 1].end
            };
            out.push(Candidate::new(
                format!(
                    "remove elements {}-{stop} of {n} of the display at line {line}",
                    start + 1
                ),
                vec![Edit::delete(range)],
            ));
        }
        if size == 2 {
            break;
        }
        size = size.div_ceil(2);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    fn results(text: &str) -> Vec<String> {
        candidate_texts(&ShrinkLiterals, text)
    }

    #[test]
    fn a_multi_line_string_loses_lines_before_characters() {
        let texts = results("s = '''a\nb\nc\nd\n'''\n");
        assert_eq!(texts[0], "s = '''c\nd\n'''\n");
        assert_eq!(texts[1], "s = '''a\nb\n'''\n");
        assert!(
            texts.contains(&"s = '''a\nb\nd\n'''\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn a_token_a_library_call_is_given_stays_whole() {
        let text = "import sqlite3\nconn = sqlite3.connect(':memory:')\nconn.executescript('create table t(x)')\n";
        let texts = results(text);
        assert!(texts.iter().all(|t| t.contains("':memory:'")), "{texts:?}");
        assert!(!texts.is_empty(), "the script itself still shrinks");
        let shrink_values = candidate_texts(&super::super::shrink_values::ShrinkValues, text);
        assert!(
            shrink_values.iter().all(|t| t.contains("':memory:'")),
            "{shrink_values:?}"
        );
    }

    #[test]
    fn an_escape_sequence_is_one_character() {
        let texts = results("s = b'\\x41\\n'\n");
        assert_eq!(texts, ["s = b'\\n'\n", "s = b'\\x41'\n"]);
        assert!(results("s = 'eu-west-3'\n").is_empty());
        assert_eq!(results("s = '{1}'\n").len(), 4);
    }

    #[test]
    fn a_long_string_of_words_loses_only_its_end() {
        let texts = results("add_argument('--longlonglonglonglong')\n");
        assert_eq!(
            texts,
            [
                "add_argument('--longlongl')\n",
                "add_argument('--longlonglonglong')\n",
                "add_argument('--longlonglonglonglo')\n",
                "add_argument('--longlonglonglonglon')\n",
            ]
        );
    }

    #[test]
    fn a_display_loses_chunks_of_elements() {
        let texts = results("x = [1, 2, 3, 4]\n");
        assert_eq!(texts, ["x = [3, 4]\n", "x = [1, 2]\n"]);
    }

    #[test]
    fn an_f_string_without_fields_becomes_a_plain_string() {
        assert_eq!(
            results("raise E(f'mismatch for  : ')\n"),
            ["raise E('mismatch for  : ')\n"]
        );
        assert!(results("raise E(f'a {{b}}')\n").is_empty());
        assert_eq!(results("raise E(rf'a {b}')\n"), ["raise E(rf'a ')\n"]);
    }

    #[test]
    fn the_halves_of_a_string_never_merge_into_an_empty_one() {
        let text = "s = '{\"a\": 1}'\n";
        let script = Script::parse(text, crate::python::PythonVersion::PY311).unwrap();
        let candidates = ShrinkLiterals.candidates(&script);
        assert!(candidates.len() > 1);
        for (i, a) in candidates.iter().enumerate() {
            for b in &candidates[i + 1..] {
                assert!(!a.is_disjoint(b), "{} / {}", a.description, b.description);
            }
            assert_ne!(a.apply(text).unwrap(), "s = ''\n");
        }
    }

    #[test]
    fn a_display_s_chunks_never_merge_into_an_empty_one() {
        let text = "x = [1, 2, 3, 4]\n";
        let script = Script::parse(text, crate::python::PythonVersion::PY311).unwrap();
        let candidates = ShrinkLiterals.candidates(&script);
        let merged = candidates[1..].iter().fold(candidates[0].clone(), |m, c| {
            if m.is_disjoint(c) { m.merge(c) } else { m }
        });
        assert_ne!(merged.apply(text).unwrap(), "x = []\n");
    }

    #[test]
    fn a_docstring_and_a_one_character_string_are_left_alone() {
        assert!(results("def f():\n    'doc string long enough'\nx = 'calibration'\n").is_empty());
    }
}
