//! The docs hold together: every local link leads to a file, and to a heading of it when it
//! names one, and the README stays a page.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The most non-blank lines README.md may have: past that, it is a manual, and belongs in docs/.
const README_LINES: usize = 250;

/// README.md, ARCHITECTURE.md, CHANGELOG.md and docs/*.md, relative to `root`.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map(|dir| {
            dir.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    docs.sort();
    files.extend(docs);
    files
}

/// Whether each line of `text` is part of a fenced code block (its fences included): a run
/// of three or more backticks or tildes opens one (unless backticks follow a backtick run: that
/// is inline code), and a run of as many or more of the same character closes it.
fn in_fence(text: &str) -> Vec<bool> {
    let mut open: Option<(char, usize)> = None;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            let kind = trimmed.chars().next().filter(|&c| c == '`' || c == '~');
            let run = kind.map_or(0, |k| trimmed.chars().take_while(|&c| c == k).count());
            match (open, kind) {
                (Some((k, n)), Some(c)) if c == k && run >= n => open = None,
                (Some(_), _) => {}
                (None, Some(c)) if run >= 3 && !(c == '`' && trimmed[run..].contains('`')) => {
                    open = Some((c, run))
                }
                (None, _) => return false,
            }
            true
        })
        .collect()
}

/// The text outside fenced code blocks, line by line, with inline code spans blanked out:
/// neither holds links.
fn prose_lines(text: &str) -> Vec<String> {
    text.lines()
        .zip(in_fence(text))
        .map(|(line, fenced)| {
            if fenced {
                String::new()
            } else {
                blank_code_spans(line)
            }
        })
        .collect()
}

/// `line` with every `` `code` `` span replaced by spaces (a span opened by n backticks is
/// closed by n backticks).
fn blank_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = chars[i..].iter().take_while(|&&c| c == '`').count();
        let close = (i + n..chars.len()).find(|&j| {
            chars[j..].iter().take_while(|&&c| c == '`').count() == n
                && (j == 0 || chars[j - 1] != '`')
        });
        match close {
            Some(j) => {
                out.extend(std::iter::repeat_n(' ', j + n - i));
                i = j + n;
            }
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The targets of the inline links and images `[text](target)` of `text`, with their line
/// numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose_lines(text).iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let mut depth = 0;
            let end = after.char_indices().find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => return true,
                    ')' => depth -= 1,
                    _ => {}
                }
                false
            });
            let Some((end, _)) = end else { break };
            let inner = after[..end].trim();
            // A title (`[a](b "title")`) follows the target after a space.
            let target = inner.split_whitespace().next().unwrap_or("");
            let target = target.trim_start_matches('<').trim_end_matches('>');
            found.push((n + 1, target.to_string()));
            rest = &after[end..];
        }
    }
    found
}

/// The anchor GitHub gives a heading: lower case, punctuation other than `-` and `_` dropped,
/// each space a `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A heading's text as rendered: links become their text, emphasis and code marks go.
fn heading_text(raw: &str) -> String {
    let raw = raw.trim().trim_end_matches('#').trim_end();
    let mut out = String::new();
    let mut rest = raw;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|mid| {
            after[mid + 2..]
                .find(')')
                .map(|close| (mid, mid + 2 + close))
        }) {
            Some((mid, close)) => {
                out.push_str(&after[..mid]);
                rest = &after[close + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Every anchor the headings of `text` produce; a repeated heading gets `-1`, `-2`, … as on
/// GitHub.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (line, fenced) in text.lines().zip(in_fence(text)) {
        if fenced || line.starts_with("    ") {
            continue;
        }
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let rest = &trimmed[hashes..];
        if !(rest.is_empty() || rest.starts_with(' ')) {
            continue;
        }
        let base = slug(&heading_text(rest));
        let mut anchor = base.clone();
        let mut k = 0;
        while seen.contains(&anchor) {
            k += 1;
            anchor = format!("{base}-{k}");
        }
        seen.insert(anchor);
    }
    seen
}

/// What is wrong with the local links of `files`: one line each, `file:line: target: why`.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    for file in files {
        let name = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) => {
                problems.push(format!("{name}: {e}"));
                continue;
            }
        };
        for (line, target) in links(&text) {
            if target.is_empty() {
                problems.push(format!("{name}:{line}: an empty link target"));
                continue;
            }
            let lower = target.to_lowercase();
            if ["http://", "https://", "mailto:"]
                .iter()
                .any(|s| lower.starts_with(s))
            {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !dest.exists() {
                problems.push(format!("{name}:{line}: {target}: no such file"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if dest.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let dest_text = std::fs::read_to_string(&dest).unwrap_or_default();
            if !anchors(&dest_text).contains(anchor) {
                problems.push(format!(
                    "{name}:{line}: {target}: no heading makes the anchor #{anchor}"
                ));
            }
        }
    }
    problems
}

fn non_blank_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_local_link_in_the_docs_leads_to_a_file_and_heading() {
    let files = doc_files(root());
    for required in ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"] {
        assert!(root().join(required).is_file(), "{required} is missing");
    }
    let problems = broken_links(root(), &files);
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_readme_is_a_page_of_at_most_250_non_blank_lines() {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = non_blank_lines(&text);
    assert!(
        lines <= README_LINES,
        "README.md has {lines} non-blank lines, over {README_LINES}: move the detail to docs/"
    );
}

#[test]
fn the_readme_gives_the_test_command_that_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "scripts/test"));
    assert!(
        readme.lines().any(|l| l.trim() == "scripts/test"),
        "README.md no longer gives `scripts/test`, the command .ci/run runs"
    );
}

#[test]
fn a_missing_file_or_heading_is_reported_and_a_good_link_is_not() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    std::fs::write(
        dir.path().join("docs/usage.md"),
        "# Usage\n\n## Exit codes\n\n## The `--sig` flag: forms\n\n## Exit codes\n",
    )
    .unwrap();
    let readme = "\
# scrub

See [usage](docs/usage.md), [codes](docs/usage.md#exit-codes),
[again](docs/usage.md#exit-codes-1), [sig](docs/usage.md#the---sig-flag-forms),
[top](#scrub), [site](https://example.com/x.md#nothing), [mail](mailto:a@b.c).

Broken: [gone](docs/gone.md), [heading](docs/usage.md#no-such-heading), [here](#nowhere).

```text
[not a link](inside/a/fence.md)
```
and `[not a link](inside/code.md)` either; ```` ``` ```` opens no fence: [x](docs/gone2.md).
";
    std::fs::write(dir.path().join("README.md"), readme).unwrap();
    let problems = broken_links(dir.path(), &doc_files(dir.path()));
    // The two missing top-level files, and the four broken links of the README.
    let expected = [
        "README.md:7: docs/gone.md: no such file",
        "README.md:7: docs/usage.md#no-such-heading: no heading makes the anchor #no-such-heading",
        "README.md:7: #nowhere: no heading makes the anchor #nowhere",
        "README.md:12: docs/gone2.md: no such file",
    ];
    assert_eq!(
        problems
            .iter()
            .filter(|p| p.starts_with("README.md:"))
            .collect::<Vec<_>>(),
        expected.iter().collect::<Vec<_>>(),
        "{problems:#?}"
    );
    assert_eq!(
        problems
            .iter()
            .filter(|p| p.starts_with("ARCHITECTURE.md") || p.starts_with("CHANGELOG.md"))
            .count(),
        2,
        "{problems:#?}"
    );
}

#[test]
fn anchors_follow_githubs_slugs() {
    assert_eq!(
        slug("Triage of an issue: `scrub issue`"),
        "triage-of-an-issue-scrub-issue"
    );
    assert_eq!(
        slug("The compile cases: PyTorch's minifier and scrub"),
        "the-compile-cases-pytorchs-minifier-and-scrub"
    );
    assert_eq!(slug("Past one machine: Ray"), "past-one-machine-ray");
    assert_eq!(slug("snake_case and (parens)"), "snake_case-and-parens");
    let text =
        "# A\n## A\n```\n# not a heading\n```\n#not a heading\n### [Linked](x.md) title ##\n";
    let found = anchors(text);
    let mut found: Vec<_> = found.into_iter().collect();
    found.sort();
    assert_eq!(found, ["a", "a-1", "linked-title"]);
}
