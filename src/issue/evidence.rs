//! The failure a thread reports, read as a maintainer reads it, and the signature it gives.
//!
//! A report shows its failure in many forms: a Python traceback, a Jupyter/IPython traceback
//! (`SomeError   Traceback (most recent call last)`, `Cell In[3], line 2`, `----> 2 …`), a
//! C++ abort (`terminate called after throwing an instance of 'c10::Error'`, `what():`,
//! `Aborted (core dumped)`), a fatal signal (`Floating point exception`, `Segmentation
//! fault`), a sanitizer report (`ERROR: AddressSanitizer: …`), a mark inside the script
//! (`f(x)  # fails`, `# raises RuntimeError: …`), a script whose point is a comparison
//! (`assert torch.allclose(…)`, `torch.testing.assert_close(…)`), or prose in the title or
//! the body ("fails to compile", "numerical mismatch", "hangs"). [`find`] returns the
//! strongest one, in that order, with the signature `reduce` can match when the form gives
//! one: a traceback gives `SomeError: message`, an abort `signal:SIGABRT`, a floating point
//! exception `signal:SIGFPE`. A sanitizer report, a comparison or a sentence gives none: the
//! run decides (with no signature named, any failure of the repro is the reported one).

use serde::Serialize;

use super::extract::{Block, Choice, Kind, Post, is_bot, is_disclaimed};
use super::fetch::Issue;
use crate::engine::exception::final_exception;
use crate::engine::verdict::{Names, Signature, stable_part};

/// The form the failure was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    Traceback,
    Jupyter,
    Abort,
    FatalSignal,
    Sanitizer,
    MarkedInScript,
    Comparison,
    Prose,
}

/// What kind of failure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum What {
    /// An exception, with its class and message.
    Exception,
    /// A fatal signal or an abort.
    Signal,
    /// A memory error that a sanitizer build reports.
    Sanitizer,
    /// A result that differs from the expected one (accuracy, NaN, eager against compiled).
    Mismatch,
    Hang,
    /// A failure described in words only.
    Described,
}

/// The failure the thread shows.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub form: Form,
    pub kind: What,
    /// `title`, `body`, `comment:K` (counted from 1) or `script`.
    pub source: String,
    /// The line or the sentence that shows it.
    pub text: String,
    /// The signature to match, when the form gives one.
    pub signature: Option<String>,
    #[serde(skip)]
    pub parsed: Option<Signature>,
}

impl Evidence {
    fn new(form: Form, kind: What, source: String, text: &str, sig: Option<Signature>) -> Self {
        Evidence {
            form,
            kind,
            source,
            text: one_line(text),
            signature: sig.as_ref().map(ToString::to_string),
            parsed: sig,
        }
    }
}

/// The strongest evidence of a failure in the thread, if any.
pub fn find(issue: &Issue, blocks: &[Block], choice: Option<&Choice>) -> Option<Evidence> {
    traceback(blocks, choice)
        .or_else(|| crash(issue, choice))
        .or_else(|| choice.and_then(|c| marked(&blocks[c.block].text)))
        .or_else(|| choice.and_then(|c| comparison(&blocks[c.block].text)))
        .or_else(|| prose(issue))
}

/// A Python or Jupyter traceback: the one in the chosen repro's post, else the body's, else
/// the last one posted; tracebacks the poster disclaims are left out.
fn traceback(blocks: &[Block], choice: Option<&Choice>) -> Option<Evidence> {
    let post = choice.map(|c| c.source);
    let tracebacks: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.kind == Kind::Traceback && !is_disclaimed(&b.lead))
        .collect();
    let pick = tracebacks
        .iter()
        .rev()
        .find(|b| Some(b.post) == post)
        .or_else(|| tracebacks.iter().rev().find(|b| b.post == Post::Body))
        .or_else(|| tracebacks.last())?;
    let source = pick.post.name();
    if let Some((class, message)) = jupyter_exception(&pick.text) {
        let sig = exception_signature(&class, &message);
        let line = format!("{class}: {}", message.lines().next().unwrap_or(""));
        return Some(Evidence::new(
            Form::Jupyter,
            What::Exception,
            source,
            &line,
            Some(sig),
        ));
    }
    let exc = final_exception(&pick.text)?;
    let sig = exception_signature(&exc.class, &exc.message);
    Some(Evidence::new(
        Form::Traceback,
        What::Exception,
        source,
        &exc.header,
        Some(sig),
    ))
}

/// `Class: stable part of the message`; a short message without volatile parts is kept
/// whole (`KeyError: 'c'`).
fn exception_signature(class: &str, message: &str) -> Signature {
    let first = message.lines().next().unwrap_or("").trim();
    let whole = (!first.is_empty() && !first.contains(|c: char| c.is_ascii_digit()))
        .then(|| first.to_string());
    Signature::Exception {
        class: class.to_string(),
        substring: stable_part(message).or(whole),
        names: Names::default(),
    }
}

/// Whether `text` is a Jupyter/IPython traceback: a header `SomeError   Traceback (most
/// recent call last)`, or `Cell In[…]` / `<ipython-input-…>` frames with `---->` arrows.
pub fn is_jupyter_traceback(text: &str) -> bool {
    jupyter_header(text).is_some()
        || ((text.contains("Cell In[") || text.contains("<ipython-input-"))
            && (text.contains("---->") || text.contains("----> ")))
}

/// The class on a Jupyter header line.
fn jupyter_header(text: &str) -> Option<&str> {
    text.lines().find_map(|l| {
        let (class, rest) = l.trim().split_once(char::is_whitespace)?;
        (rest.trim() == "Traceback (most recent call last)" && is_class(class)).then_some(class)
    })
}

/// The class and message of a Jupyter traceback: the last line that starts with the header's
/// class (or, without a header, the last line that looks like an exception header), and the
/// lines after it.
fn jupyter_exception(text: &str) -> Option<(String, String)> {
    if !is_jupyter_traceback(text) || text.contains("Traceback (most recent call last):") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let header = jupyter_header(text);
    let at = lines.iter().rposition(|l| {
        let Some((class, _)) = l.split_once(':') else {
            return false;
        };
        match header {
            Some(h) => class == h || class.rsplit('.').next() == Some(h),
            None => !l.starts_with(' ') && is_class(class),
        }
    });
    match at {
        Some(at) => {
            let (class, first) = lines[at].split_once(':').expect("found with a colon");
            let mut message = first.trim().to_string();
            for l in &lines[at + 1..] {
                message.push('\n');
                message.push_str(l);
            }
            Some((class.to_string(), message))
        }
        None => header.map(|h| (h.to_string(), String::new())),
    }
}

/// A dotted identifier whose last part names an exception.
fn is_class(word: &str) -> bool {
    let last = word.rsplit('.').next().unwrap_or("");
    !word.is_empty()
        && word
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
        && [
            "Error",
            "Exception",
            "Interrupt",
            "Exit",
            "Warning",
            "Unsupported",
        ]
        .iter()
        .any(|s| last.ends_with(s))
}

/// Lines a crashing process prints, and what they mean.
const CRASHES: &[(&str, Form, i32)] = &[
    (
        "terminate called after throwing an instance of",
        Form::Abort,
        libc::SIGABRT,
    ),
    ("terminate called recursively", Form::Abort, libc::SIGABRT),
    ("Aborted (core dumped)", Form::Abort, libc::SIGABRT),
    ("IOT instruction (core dumped)", Form::Abort, libc::SIGABRT),
    ("Fatal Python error: Aborted", Form::Abort, libc::SIGABRT),
    ("free(): invalid pointer", Form::Abort, libc::SIGABRT),
    ("double free or corruption", Form::Abort, libc::SIGABRT),
    ("SIGABRT", Form::Abort, libc::SIGABRT),
    ("Floating point exception", Form::FatalSignal, libc::SIGFPE),
    ("floating point exception", Form::FatalSignal, libc::SIGFPE),
    ("SIGFPE", Form::FatalSignal, libc::SIGFPE),
    ("Segmentation fault", Form::FatalSignal, libc::SIGSEGV),
    ("segmentation fault", Form::FatalSignal, libc::SIGSEGV),
    ("SIGSEGV", Form::FatalSignal, libc::SIGSEGV),
    ("Bus error", Form::FatalSignal, libc::SIGBUS),
    ("Illegal instruction", Form::FatalSignal, libc::SIGILL),
];

/// Sanitizer reports: the failure shows only in a sanitizer build.
const SANITIZERS: &[&str] = &[
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "WARNING: ThreadSanitizer",
    "ERROR: MemorySanitizer",
];

/// An UndefinedBehaviorSanitizer line: `file.cpp:12:3: runtime error: …`.
fn ubsan(line: &str) -> bool {
    line.contains(": runtime error: ")
        && [".cpp:", ".h:", ".cu:", ".c:", ".cc:"]
            .iter()
            .any(|ext| line.contains(ext))
}

/// An abort, a fatal signal or a sanitizer report in the posts' text (fenced or not): the
/// chosen repro's post first, then the body, then the comments in order.
fn crash(issue: &Issue, choice: Option<&Choice>) -> Option<Evidence> {
    let mut posts: Vec<(Post, &str)> = vec![(Post::Body, issue.body.as_str())];
    for (k, c) in issue.comments.iter().enumerate() {
        if !is_bot(c.login()) {
            posts.push((Post::Comment(k), c.body.as_str()));
        }
    }
    if let Some(c) = choice
        && let Some(at) = posts.iter().position(|(p, _)| *p == c.source)
    {
        let first = posts.remove(at);
        posts.insert(0, first);
    }
    for (post, text) in posts {
        if let Some(line) = text
            .lines()
            .find(|l| ubsan(l) || SANITIZERS.iter().any(|s| l.contains(s)))
        {
            let line = line
                .trim()
                .trim_start_matches('=')
                .trim_start_matches(|c: char| c.is_ascii_digit() || c == '=');
            return Some(Evidence::new(
                Form::Sanitizer,
                What::Sanitizer,
                post.name(),
                line,
                None,
            ));
        }
        for (needle, form, sig) in CRASHES {
            let Some(line) = text.lines().find(|l| l.contains(needle)) else {
                continue;
            };
            let mut shown = line.trim().to_string();
            if *form == Form::Abort
                && let Some(what) = text.lines().find(|l| l.trim_start().starts_with("what():"))
            {
                shown = format!("{shown} — {}", what.trim());
            }
            return Some(Evidence::new(
                *form,
                What::Signal,
                post.name(),
                &shown,
                Some(Signature::Signal(*sig)),
            ));
        }
    }
    None
}

/// Words that, in a comment on a line of the script, say that the line fails.
const MARKS: &[&str] = &[
    "fails",
    "fail",
    "failed",
    "failure",
    "error",
    "errors",
    "raises",
    "throws",
    "crash",
    "crashes",
    "segfault",
    "segfaults",
    "hangs",
    "wrong",
    "incorrect",
    "nan",
    "breaks",
    "bug",
    "boom",
];

/// A line of the script marked as the failing one: `f(x)  # fails`, `# raises RuntimeError:
/// expected …`, `# RuntimeError: …`.
fn marked(code: &str) -> Option<Evidence> {
    for line in code.lines() {
        let Some(at) = comment_start(line) else {
            continue;
        };
        let comment = line[at + 1..].trim();
        let lower = comment.to_ascii_lowercase();
        let first = lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| !w.is_empty())
            .unwrap_or("");
        // `# raises RuntimeError: msg`, `# RuntimeError: msg`, `# error: RuntimeError: msg`.
        let named = comment
            .split_whitespace()
            .map(|w| w.trim_end_matches(':'))
            .position(is_class)
            .map(|i| {
                let words: Vec<&str> = comment.split_whitespace().collect();
                words[i..].join(" ")
            });
        if let Some(named) = named
            && (MARKS.contains(&first) || is_class(first_word(comment)))
        {
            let (class, message) = named.split_once(':').unwrap_or((named.as_str(), ""));
            let class = class.trim();
            let sig = if message.trim().is_empty() {
                Signature::Exception {
                    class: class.to_string(),
                    substring: None,
                    names: Names::default(),
                }
            } else {
                exception_signature(class, message.trim())
            };
            return Some(Evidence::new(
                Form::MarkedInScript,
                What::Exception,
                "script".into(),
                line.trim(),
                Some(sig),
            ));
        }
        if MARKS.contains(&first) && !line[..at].trim().is_empty() {
            return Some(Evidence::new(
                Form::MarkedInScript,
                What::Described,
                "script".into(),
                line.trim(),
                None,
            ));
        }
    }
    None
}

fn first_word(text: &str) -> &str {
    text.split_whitespace()
        .next()
        .unwrap_or("")
        .trim_end_matches(':')
}

/// Where a `#` comment starts on `line`, outside string literals (quotes are counted, which is
/// enough for one line of a repro).
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => return Some(i),
            None => {}
        }
    }
    None
}

/// A script whose point is a comparison of results: `assert torch.allclose(…)`,
/// `torch.testing.assert_close(…)`, `np.testing.assert_allclose(…)`, or an `allclose` whose
/// result decides a `raise`. It gives no signature: the bug may stop the script before the
/// comparison (a compile error), so the run decides what the failure is.
fn comparison(code: &str) -> Option<Evidence> {
    let asserting = [
        "assert_close(",
        "assert_allclose(",
        "assert torch.allclose(",
        "assert torch.equal(",
        "assert np.allclose(",
        "assert numpy.allclose(",
        "np.testing.assert_",
        "numpy.testing.assert_",
        ".assertEqual(",
        ".assertTrue(torch.allclose(",
    ];
    if let Some(line) = code
        .lines()
        .find(|l| asserting.iter().any(|a| l.contains(a)))
    {
        return Some(Evidence::new(
            Form::Comparison,
            What::Mismatch,
            "script".into(),
            line.trim(),
            None,
        ));
    }
    let checks = code.contains("allclose(") || code.contains("torch.equal(");
    if checks && code.contains("raise ") {
        let line = code
            .lines()
            .find(|l| l.contains("allclose(") || l.contains("torch.equal("))
            .unwrap_or("");
        return Some(Evidence::new(
            Form::Comparison,
            What::Mismatch,
            "script".into(),
            line.trim(),
            None,
        ));
    }
    None
}

/// Phrases that say a result is wrong.
const MISMATCH: &[&str] = &[
    "mismatch",
    "inconsisten",
    "divergence",
    "different result",
    "different output",
    "differs from",
    "wrong result",
    "wrong output",
    "wrong answer",
    "wrong value",
    "incorrect result",
    "incorrect output",
    "incorrect value",
    "incorrect gradient",
    "returns incorrect",
    "produces incorrect",
    "silently incorrect",
    "worse result",
    "not close",
    "returns nan",
    "nan gradient",
    "nan values",
    "gives nan",
    "produces nan",
    "nan loss",
    " nans",
    "accuracy",
];

/// Phrases that say something never finishes.
const HANG: &[&str] = &[
    "hangs",
    "hang ",
    "hung",
    "gets stuck",
    "get stuck",
    "got stuck",
    "is stuck",
    "deadlock",
    "freezes",
    "never returns",
    "never finishes",
    "never ends",
];

/// Phrases that say something fails.
const FAILS: &[&str] = &[
    "fails",
    "fail to",
    "failed",
    "failure",
    "crash",
    "segfault",
    "seg fault",
    "segmentation fault",
    "core dumped",
    "error",
    "raises",
    "throws",
    "exception",
    "not supported",
    "unsupported",
    "doesn't work",
    "does not work",
    "not working",
    "stopped working",
    "breaks",
    "broken",
    "graph break",
    "unable to",
    "cannot",
    "can't",
    "regression",
    "leak",
];

/// Phrases that take a sentence back: it says what works.
const FINE: &[&str] = &[
    "works fine",
    "work fine",
    "works as expected",
    "no error",
    "without error",
    "without any error",
    "does not fail",
    "doesn't fail",
    "runs fine",
    "passes",
    "expected behavior",
    "expected behaviour",
    // Issue-template text, not the reporter's words.
    "error messages and stack traces",
    "error messages and/or stack traces",
    "stack traces are also helpful",
    "please try to provide",
];

/// A sentence of the title or of the body's prose (fenced blocks and headings left out) that
/// describes a failure: a mismatch, a hang, or a failure in words.
fn prose(issue: &Issue) -> Option<Evidence> {
    let body = prose_of(&issue.body);
    let texts = [("title", issue.title.as_str()), ("body", body.as_str())];
    for (source, text) in texts {
        for sentence in sentences(text) {
            let lower = format!(" {} ", sentence.to_ascii_lowercase());
            if FINE.iter().any(|f| lower.contains(f)) {
                continue;
            }
            let kind = if MISMATCH.iter().any(|m| lower.contains(m)) {
                What::Mismatch
            } else if HANG.iter().any(|h| lower.contains(h)) {
                What::Hang
            } else if FAILS.iter().any(|f| lower.contains(f)) {
                What::Described
            } else {
                continue;
            };
            return Some(Evidence::new(
                Form::Prose,
                kind,
                source.into(),
                sentence,
                None,
            ));
        }
    }
    None
}

/// The prose of a Markdown text: fenced blocks, headings and HTML comments left out.
pub fn prose_of(markdown: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        let run = |c: char| trimmed.chars().take_while(|x| *x == c).count();
        match fence {
            Some((c, len)) => {
                if trimmed.trim_end().chars().all(|x| x == c) && run(c) >= len {
                    fence = None;
                }
            }
            None => {
                let c = trimmed.chars().next().unwrap_or(' ');
                if (c == '`' || c == '~') && run(c) >= 3 {
                    fence = Some((c, run(c)));
                } else if !trimmed.starts_with('#') && !trimmed.starts_with("<!--") {
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// Sentences: split at line ends and at `.`, `!` or `?` followed by a space.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            let end = matches!(bytes[i], b'.' | b'!' | b'?')
                && bytes.get(i + 1).is_none_or(|b| *b == b' ');
            if end {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() > 200 {
        let cut: String = line.chars().take(200).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::extract::{choose, extract};
    use crate::issue::fetch::Actor;

    fn found(title: &str, body: &str) -> Option<Evidence> {
        let issue = Issue {
            number: 1,
            title: title.into(),
            body: body.into(),
            author: Some(Actor { login: "op".into() }),
            ..Default::default()
        };
        let blocks = extract(&issue);
        let choice = choose(&blocks, "op");
        find(&issue, &blocks, choice.as_ref())
    }

    const SCRIPT: &str = "```python\nimport torch\nx = torch.ones(2)\nprint(x.sum())\n```\n";

    #[test]
    fn a_jupyter_traceback_gives_its_exception() {
        let body = format!(
            "{SCRIPT}```\n---------------------------------------------------------------------------\nInternalTorchDynamoError                  Traceback (most recent call last)\nCell In[7], line 31\n---> 31 compiled_m(torch.randn(3, 4))\n\nFile ~/venv/lib/python3.11/site-packages/torch/nn/modules/module.py:1511, in Module._wrapped_call_impl(self, *args, **kwargs)\n-> 1511     return self._call_impl(*args, **kwargs)\n\nInternalTorchDynamoError: source code not available\n```\n"
        );
        let e = found("compile fails", &body).unwrap();
        assert_eq!(e.form, Form::Jupyter);
        assert_eq!(
            e.signature.as_deref(),
            Some("InternalTorchDynamoError: source code not available")
        );
    }

    #[test]
    fn a_c10_abort_gives_sigabrt_with_its_what_line() {
        let body = format!(
            "{SCRIPT}```\nterminate called after throwing an instance of 'c10::Error'\n  what():  index out of range\nAborted (core dumped)\n```\n"
        );
        let e = found("abort", &body).unwrap();
        assert_eq!(e.form, Form::Abort);
        assert_eq!(e.signature.as_deref(), Some("signal:SIGABRT"));
        assert!(e.text.contains("what():  index out of range"), "{}", e.text);
    }

    #[test]
    fn a_floating_point_exception_gives_sigfpe() {
        let body =
            format!("{SCRIPT}Error messages:\n```\nFloating point exception (core dumped)\n```\n");
        assert_eq!(
            found("x", &body).unwrap().signature.as_deref(),
            Some("signal:SIGFPE")
        );
    }

    #[test]
    fn a_sanitizer_report_is_evidence_without_a_signature() {
        let body = format!(
            "{SCRIPT}```\n==12==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x6020\n```\n"
        );
        let e = found("x", &body).unwrap();
        assert_eq!(e.kind, What::Sanitizer);
        assert!(e.text.starts_with("ERROR: AddressSanitizer"), "{}", e.text);
        assert_eq!(e.signature, None);
    }

    #[test]
    fn a_line_marked_in_the_script_is_evidence() {
        let e = found(
            "x",
            "```python\nimport torch\nx = torch.ones(2)\nx.view(3)  # raises RuntimeError: shape is invalid for input of size 2\n```\n",
        )
        .unwrap();
        assert_eq!(e.form, Form::MarkedInScript);
        assert_eq!(
            e.signature.as_deref(),
            Some("RuntimeError: shape is invalid for input of size")
        );
        let e = found(
            "x",
            "```python\nimport torch\nx = torch.ones(2)\nx.view(3)  # fails\n```\n",
        )
        .unwrap();
        assert_eq!((e.form, e.signature), (Form::MarkedInScript, None));
        // A comment that says the line passes is no mark.
        assert!(
            found(
                "x",
                "```python\nimport torch\nx = torch.ones(2)\nx.view(2)  # passes\n```\n"
            )
            .is_none()
        );
    }

    #[test]
    fn a_comparison_script_is_a_mismatch() {
        let e = found(
            "x",
            "```python\nimport torch\na = torch.ones(2)\ntorch.testing.assert_close(a, a + 1)\n```\n",
        )
        .unwrap();
        assert_eq!((e.form, e.kind), (Form::Comparison, What::Mismatch));
        assert_eq!(e.signature, None, "the run decides");
    }

    #[test]
    fn prose_in_the_title_or_the_body_is_evidence() {
        let e = found(
            "f fails to compile with torch.compile but works in eager",
            SCRIPT,
        )
        .unwrap();
        assert_eq!(
            (e.form, e.kind, e.source.as_str()),
            (Form::Prose, What::Described, "title")
        );
        let e = found("x", &format!("Training hangs after one epoch.\n{SCRIPT}")).unwrap();
        assert_eq!(e.kind, What::Hang);
        let e = found("x", &format!("The model returns NaN on CPU.\n{SCRIPT}")).unwrap();
        assert_eq!(e.kind, What::Mismatch);
        // Headings, sentences about what works and the issue template are not evidence.
        assert!(
            found(
                "x",
                &format!("### 🐛 Describe the bug\n\nThis works fine.\n{SCRIPT}")
            )
            .is_none()
        );
        let template = "## Code example\n\nPlease try to provide a minimal example to repro the bug.\nError messages and stack traces are also helpful.\n";
        assert!(found("x", &format!("{template}{SCRIPT}")).is_none());
    }
}
