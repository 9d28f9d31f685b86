//! Signatures, and what an outcome means for one: the oracle knows nothing about processes.

use std::fmt;

use crate::engine::exception::{FinalException, cause, final_exception};
use crate::engine::memory::human;
use crate::engine::naming::{first_line, naming_lines, shown_lines};
use crate::engine::process::{Outcome, Status, signal_name, signal_number};
use scrub_reducers::{PythonVersion, Script};

/// How a failure must look to count as the same failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature {
    /// The final exception's class, and a substring of its message; derived from a run, also
    /// what else names the failure.
    Exception {
        class: String,
        substring: Option<String>,
        names: Names,
    },
    /// Killed by this signal.
    Signal(i32),
    /// Exited with this status.
    Exit(i32),
}

/// What names a failure besides its class and first line (see [`crate::engine::naming`]):
/// empty for a `--sig`, which says itself what it keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// The whole first line, abstracted, which a candidate's must equal: the substring alone
    /// may leave out the names it quotes (`Could not run 'aten::foo' with arguments from the
    /// 'CPU' backend…`, whose longest stable run holds neither). `None` when it is empty.
    pub first: Option<String>,
    /// The message's later lines that name it (inner errors, detail lines), abstracted.
    pub lines: Vec<String>,
    /// The exception it was raised `from`: its class, and its first line and naming lines,
    /// abstracted.
    pub cause: Option<(String, Vec<String>)>,
}

impl Names {
    /// The names of a final exception in `stderr`.
    fn of(exc: &FinalException, stderr: &str) -> Names {
        let first = first_line(&exc.message);
        Names {
            first: (!first.is_empty()).then_some(first),
            lines: naming_lines(&exc.message),
            cause: cause(stderr).map(|c| {
                let mut lines = vec![first_line(&c.message)];
                lines.extend(naming_lines(&c.message));
                (c.class, lines)
            }),
        }
    }

    /// What a failure that matched the class and first line lacks of these names: `None`
    /// when it shows every one.
    fn missing(&self, exc: &FinalException, stderr: &str) -> Option<String> {
        if let Some(first) = &self.first {
            let got = first_line(&exc.message);
            if got != *first {
                return Some(format!(
                    "{:?} where the original had {:?}",
                    short(&got),
                    short(first)
                ));
            }
        }
        let shown = shown_lines(&exc.message);
        if let Some(line) = self.lines.iter().find(|l| !shown.contains(l)) {
            let instead = naming_lines(&exc.message)
                .into_iter()
                .find(|g| !self.lines.contains(g))
                .map_or("nothing".to_string(), |g| format!("{:?}", short(&g)));
            return Some(format!(
                "{instead} where the original had {:?}",
                short(line)
            ));
        }
        let (class, lines) = self.cause.as_ref()?;
        let Some(got) = cause(stderr) else {
            return Some(format!("no longer raised from {class}"));
        };
        let mut shown = shown_lines(&got.message);
        shown.push(first_line(&got.message));
        if !class_matches(class, &got.class) || lines.iter().any(|l| !shown.contains(l)) {
            return Some(format!(
                "raised from {}, not from {class}: {}",
                got.class,
                short(&lines[0])
            ));
        }
        None
    }

    /// One line each, for the run log, `--json` and the issue comment: `first line: …` for
    /// the whole first line, `with: …` for a naming line, `cause: …` for the cause.
    pub fn describe(&self) -> Vec<String> {
        let first = self.first.iter().map(|l| format!("first line: {l}"));
        let with = self.lines.iter().map(|l| format!("with: {l}"));
        let mut out: Vec<String> = first.chain(with).collect();
        if let Some((class, lines)) = &self.cause {
            out.push(format!("cause: {class}: {}", lines.join(" / ")));
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Fails the same way.
    Same,
    /// The same exception class with another message: logged, not accepted.
    NearMiss(String),
    Other,
}

/// Whether a run ran out of memory (CUDA's or the CPU allocator's): its final exception is an
/// `OutOfMemoryError` or says "out of memory" or "can't allocate memory", or it was killed over
/// `--max-memory`.
pub fn out_of_memory(outcome: &Outcome) -> bool {
    outcome.status == Status::OutOfMemory
        || crate::engine::exception::final_exception(&outcome.stderr).is_some_and(|e| {
            e.class.ends_with("OutOfMemoryError")
                || e.message.contains("out of memory")
                || e.message.contains("can't allocate memory")
        })
}

impl Signature {
    /// Whether the signature is itself about running out of memory.
    pub fn is_out_of_memory(&self) -> bool {
        match self {
            Signature::Exception {
                class, substring, ..
            } => {
                class.ends_with("OutOfMemoryError")
                    || substring.as_deref().is_some_and(|s| {
                        s.contains("out of memory") || s.contains("can't allocate memory")
                    })
            }
            _ => false,
        }
    }

    /// Parses `--sig`: `Class: substring`, `Class`, `pkg.mod.Class: substring`, `signal:NAME`,
    /// `exit:N`.
    pub fn parse(text: &str) -> Result<Signature, String> {
        let text = text.trim();
        if let Some(name) = text.strip_prefix("signal:") {
            return signal_number(name)
                .map(Signature::Signal)
                .ok_or_else(|| format!("unknown signal {:?}", name.trim()));
        }
        if let Some(code) = text.strip_prefix("exit:") {
            return match code.trim().parse::<i32>() {
                Ok(0) => Err("exit:0 is success, not a failure".into()),
                Ok(n) if (1..=255).contains(&n) => Ok(Signature::Exit(n)),
                _ => Err(format!("exit status must be 1-255, got {:?}", code.trim())),
            };
        }
        let (class, substring) = match text.split_once(':') {
            Some((c, s)) => (c.trim(), Some(s.trim())),
            None => (text, None),
        };
        let valid_part = |p: &str| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        if class.is_empty() || !class.split('.').all(valid_part) {
            return Err("expected \"ExceptionClass: message substring\", \"ExceptionClass\", \"signal:NAME\" or \"exit:N\"".into());
        }
        let substring = substring.filter(|s| !s.is_empty()).map(str::to_string);
        Ok(Signature::Exception {
            class: class.to_string(),
            substring,
            names: Names::default(),
        })
    }

    /// What `outcome` means for this signature.
    pub fn judge(&self, outcome: &Outcome) -> Verdict {
        match (self, outcome.status) {
            (Signature::Signal(want), Status::Signaled(got)) if *want == got => Verdict::Same,
            (Signature::Exit(want), Status::Exited(got)) if *want == got => Verdict::Same,
            (
                Signature::Exception {
                    class,
                    substring,
                    names,
                },
                Status::Exited(code),
            ) if code != 0 => {
                let Some(exc) = final_exception(&outcome.stderr) else {
                    return Verdict::Other;
                };
                if !class_matches(class, &exc.class) {
                    return Verdict::Other;
                }
                if substring
                    .as_ref()
                    .is_some_and(|s| !exc.message.contains(s.as_str()))
                {
                    return Verdict::NearMiss(exc.header);
                }
                match names.missing(&exc, &outcome.stderr) {
                    Some(why) => Verdict::NearMiss(format!("{}: {why}", exc.class)),
                    None => Verdict::Same,
                }
            }
            _ => Verdict::Other,
        }
    }

    /// The signature of a failing outcome: its final exception's class, the most distinctive
    /// stable part of its first line and what else names it (see [`Names`]); else its signal;
    /// else its exit status. `None` for a run that passed or timed out.
    pub fn derive(outcome: &Outcome) -> Option<Signature> {
        match outcome.status {
            Status::Signaled(sig) => Some(Signature::Signal(sig)),
            Status::TimedOut | Status::OutOfMemory | Status::Exited(0) => None,
            Status::Exited(code) => Some(match final_exception(&outcome.stderr) {
                Some(exc) => Signature::Exception {
                    substring: stable_part(&exc.message),
                    names: Names::of(&exc, &outcome.stderr),
                    class: exc.class,
                },
                None => Signature::Exit(code),
            }),
        }
    }

    /// A `--sig` that `outcome` (the original's run, which matched it) shows, with the lines
    /// of its message that name the failure under the first (see
    /// [`crate::engine::naming`]): a substring of a header (`Constraints violated (dz)!`)
    /// would also match the header over another failure's detail, a user's mistake the
    /// reduction made (`You marked dz as dynamic but your code specialized it to be a
    /// constant (1)` where the original showed the guard its code generated). The first line
    /// stays the substring's to keep.
    pub fn with_detail(self, outcome: &Outcome) -> Signature {
        let Signature::Exception {
            class,
            substring,
            names,
        } = self
        else {
            return self;
        };
        let lines = match final_exception(&outcome.stderr) {
            Some(exc) if names.lines.is_empty() => naming_lines(&exc.message),
            _ => names.lines.clone(),
        };
        Signature::Exception {
            class,
            substring,
            names: Names { lines, ..names },
        }
    }

    /// What the signature keeps besides its first line, one line each (see
    /// [`Names::describe`]); empty for a `--sig`.
    pub fn names(&self) -> Vec<String> {
        match self {
            Signature::Exception {
                names, substring, ..
            } => {
                // The first line goes without saying when the substring is all of it.
                let whole = names.first.is_some() && names.first == *substring;
                names
                    .describe()
                    .into_iter()
                    .skip(usize::from(whole))
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signature::Exception {
                class,
                substring: Some(s),
                ..
            } => write!(f, "{class}: {s}"),
            Signature::Exception {
                class,
                substring: None,
                ..
            } => write!(f, "{class}"),
            Signature::Signal(sig) => write!(f, "signal:{}", signal_name(*sig)),
            Signature::Exit(code) => write!(f, "exit:{code}"),
        }
    }
}

/// What a failure must keep besides its signature, read off the original's run: where it was
/// raised outside the script (see [`crate::engine::exception::site`]), and for an assertion that no
/// control guards, the values it computed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Anchor {
    /// `torch/_dynamo/exc.py:unimplemented`; `None` when the script raised it itself.
    pub site: Option<String>,
    /// The public library function the failing line called, where the failure was raised
    /// further in the same file (`torch/autograd/gradcheck.py:gradgradcheck`, raised in that
    /// file's `_raise`): the file's other public functions reach the same raise for other
    /// reasons (`gradcheck` for a first-order mismatch), so a candidate must come in the same
    /// way (see [`crate::engine::exception::entry`]). Not a private or special one (`__call__`
    /// of a compiled module, `_fn`): those are how an object is called, whichever the object.
    pub entry: Option<String>,
    /// The library functions that called back into the script on the way to a failure raised
    /// in a library (`torch/_functorch/apis.py:wrapped`: a `vmap`), which a candidate's stack
    /// must still show: the same message reached without them is another bug (see
    /// [`crate::engine::exception::callbacks`]).
    pub through: Vec<String>,
    /// The numbers of the assertion's message that the script does not write: what the wrong
    /// computation gave (`got 18830 cents`). A candidate's message must still show each, and
    /// its text must not write them: they stay computed.
    pub computed: Vec<String>,
    /// The numbers of that message that the script writes as number literals: the figures
    /// the check compares with (`expected 18831`). A candidate's message must still show
    /// each, so that the check still compares the computation with them, not with whatever
    /// a rewrite left in their place.
    pub figures: Vec<String>,
    /// The first line of that message: a candidate's must show each of those numbers as it
    /// did, between the same characters (`expected 18831 cents`, not `expected {'': 18831}
    /// cents`), so that what the check compares keeps its kind.
    pub message: String,
    /// The expression a compile error points at in the script (see
    /// [`crate::engine::pointed`]), which a candidate's must point at too.
    pub pointed: Option<String>,
    /// The script's tests that refine what that expression reads, which a candidate keeps.
    pub refined: Vec<String>,
    /// The string literals the failing `assert` of the script compares with (`assert 'code:
    /// return x' in text`): the text it expected, which the candidate's failing line keeps.
    pub expected: Vec<String>,
}

impl Anchor {
    /// The anchor of `text`, whose run `outcome` failed with the signature; `values` says
    /// whether its computed values are kept (an assertion without a control).
    pub fn of(text: &str, outcome: &Outcome, values: bool) -> Anchor {
        let site = crate::engine::exception::site(&outcome.stderr);
        let entry = site.as_deref().and_then(|site| {
            let entry = crate::engine::exception::entry(&outcome.stderr)?;
            let (file, function) = entry.rsplit_once(':')?;
            let in_site_file = site.rsplit_once(':').is_some_and(|(f, _)| f == file);
            (!function.starts_with('_') && entry != site && in_site_file).then_some(entry)
        });
        let through = match site {
            Some(_) => crate::engine::exception::callbacks(&outcome.stderr, &methods(text)),
            None => Vec::new(),
        };
        let mut message = String::new();
        let (computed, figures) = match final_exception(&outcome.stderr) {
            Some(e) if values && e.class.ends_with("AssertionError") => {
                let first = e.message.lines().next().unwrap_or("");
                let written = numbers(text);
                let literals = number_literals(text, true);
                let (mut computed, mut figures): (Vec<String>, Vec<String>) = numbers(first)
                    .into_iter()
                    .filter(|n| !written.contains(n) || literals.contains(n))
                    .partition(|n| !written.contains(n));
                computed.sort();
                computed.dedup();
                figures.sort();
                figures.dedup();
                message = first.to_string();
                (computed, figures)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let pointed = crate::engine::pointed::pointed(&outcome.stderr);
        let refined = pointed
            .as_deref()
            .map(|code| crate::engine::pointed::refinements(text, code))
            .unwrap_or_default();
        let expected = match &site {
            None => crate::engine::exception::raising_line(&outcome.stderr)
                .map(|line| expected_texts(&line))
                .unwrap_or_default(),
            Some(_) => Vec::new(),
        };
        Anchor {
            expected,
            site,
            entry,
            through,
            computed,
            figures,
            message,
            pointed,
            refined,
        }
    }

    /// What moved, when a run of `text` that failed with the signature does not keep the
    /// anchor: the failure was raised elsewhere, a computed value is gone or written, or a
    /// figure is gone or written only in a message.
    pub fn moved(&self, text: &str, outcome: &Outcome) -> Option<String> {
        // A failure the script raised itself stays the script's: the same message raised
        // inside a library (an `assert` of torch's own) is another check.
        let got = crate::engine::exception::site(&outcome.stderr);
        if got != self.site {
            return Some(format!(
                "raised at {}, not at {}",
                got.as_deref().unwrap_or("the script itself"),
                self.site.as_deref().unwrap_or("the script itself")
            ));
        }
        if let Some(entry) = &self.entry {
            let got = crate::engine::exception::entry(&outcome.stderr);
            if got.as_ref() != Some(entry) {
                return Some(format!(
                    "entered the library at {}, not at {entry}",
                    got.as_deref().unwrap_or("no library function")
                ));
            }
        }
        if let Some(code) = &self.pointed {
            let got = crate::engine::pointed::pointed(&outcome.stderr);
            if got.as_ref() != Some(code) {
                return Some(format!(
                    "the error points at {}, not at {code}",
                    got.as_deref().unwrap_or("no code")
                ));
            }
            if let Some(lost) = crate::engine::pointed::lost(text, &self.refined) {
                return Some(format!(
                    "the test {lost} of what the error points at is gone"
                ));
            }
        }
        if !self.expected.is_empty() {
            let line = crate::engine::exception::raising_line(&outcome.stderr).unwrap_or_default();
            if let Some(gone) = self.expected.iter().find(|t| !line.contains(t.as_str())) {
                return Some(format!("the failing assert no longer compares with {gone}"));
            }
        }
        if !self.through.is_empty() {
            let frames = crate::engine::exception::library_frames(&outcome.stderr);
            if let Some(gone) = self.through.iter().find(|f| !frames.contains(f)) {
                return Some(format!("no longer called through {gone}"));
            }
        }
        if self.computed.is_empty() && self.figures.is_empty() {
            return None;
        }
        let message = final_exception(&outcome.stderr)
            .map(|e| e.message.lines().next().unwrap_or("").to_string())
            .unwrap_or_default();
        let numbers_shown = numbers(&message);
        let shown = |n: &String| {
            numbers_shown.contains(n)
                && windows(&self.message, n)
                    .iter()
                    .any(|w| message.contains(w.as_str()))
        };
        let written = numbers(text);
        let computed = self.computed.iter().find_map(|n| {
            if !shown(n) {
                Some(format!("the message no longer shows the computed {n}"))
            } else if written.contains(n) {
                Some(format!("the script writes the computed {n} itself"))
            } else {
                None
            }
        });
        if computed.is_some() || self.figures.is_empty() {
            return computed;
        }
        // A figure pasted into the message alone no longer takes part in the check.
        let checked = number_literals(text, false);
        self.figures.iter().find_map(|n| {
            if !shown(n) {
                Some(format!("the message no longer shows the figure {n}"))
            } else if !checked.contains(n) {
                Some(format!(
                    "the script writes the figure {n} only in a message"
                ))
            } else {
                None
            }
        })
    }
}

/// `line` cut to 80 characters, for a log line.
fn short(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// The names of the functions that `text` defines in a class body: what an object's class
/// dispatches to (`forward`, `__getitem__`), not functions handed to a library.
fn methods(text: &str) -> Vec<String> {
    use scrub_reducers::python::{Stmt, all_bodies};
    let Some(script) = Script::parse(text, PythonVersion::latest()) else {
        return Vec::new();
    };
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::ClassDef(c) => Some(c.body.iter()),
            _ => None,
        })
        .flatten()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => Some(f.name.to_string()),
            _ => None,
        })
        .collect()
}

/// The numbers that `text` writes as number literals (not inside strings), with those in
/// the messages of its `assert`s or not; none when it does not parse.
fn number_literals(text: &str, in_messages: bool) -> Vec<String> {
    use scrub_reducers::python::{Expr, Stmt, all_bodies, all_exprs, span};
    let Some(script) = Script::parse(text, PythonVersion::latest()) else {
        return Vec::new();
    };
    let messages: Vec<std::ops::Range<usize>> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Assert(a) if !in_messages => a.msg.as_deref().map(span),
            _ => None,
        })
        .collect();
    all_exprs(script.body())
        .into_iter()
        .filter(|e| matches!(e, Expr::NumberLiteral(_)))
        .filter(|e| {
            let r = span(*e);
            !messages
                .iter()
                .any(|m| m.start <= r.start && r.end <= m.end)
        })
        .flat_map(|e| numbers(script.slice(e)))
        .collect()
}

/// Each place `line` shows the number `n`, with the character on each side.
fn windows(line: &str, n: &str) -> Vec<String> {
    number_spans(line)
        .into_iter()
        .filter(|r| &line[r.clone()] == n)
        .map(|r| {
            let before = line[..r.start]
                .chars()
                .next_back()
                .map_or(0, char::len_utf8);
            let after = line[r.end..].chars().next().map_or(0, char::len_utf8);
            line[r.start - before..r.end + after].to_string()
        })
        .collect()
}

/// The numbers of `text`: runs of digits, with a decimal part, not inside a name.
fn numbers(text: &str) -> Vec<String> {
    number_spans(text)
        .into_iter()
        .map(|r| text[r].to_string())
        .collect()
}

/// Where the numbers of `text` are.
fn number_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        out.push(start..i);
    }
    out
}

/// `want` without dots also matches the last component of a dotted class.
fn class_matches(want: &str, got: &str) -> bool {
    want == got || (!want.contains('.') && got.rsplit('.').next() == Some(want))
}

/// The longest run of the message's first line between volatile parts (numbers, hex
/// addresses, paths), trimmed; `None` when nothing of substance is left.
pub fn stable_part(message: &str) -> Option<String> {
    let first = message.lines().next().unwrap_or("").trim();
    let mut best = "";
    for piece in first.split(|c: char| c.is_ascii_digit()) {
        for piece in piece
            .split(char::is_whitespace)
            .collect::<Vec<_>>()
            .split(|w| is_volatile_word(w))
        {
            let joined_len: usize = piece.iter().map(|w| w.len() + 1).sum();
            if joined_len > best.len() + 1 {
                // Recover the slice of `first` that these words span.
                let start = piece[0].as_ptr() as usize - first.as_ptr() as usize;
                let last = piece[piece.len() - 1];
                let end = last.as_ptr() as usize - first.as_ptr() as usize + last.len();
                best = &first[start..end];
            }
        }
    }
    let best = best.trim_matches(|c: char| c.is_whitespace() || ",;(=[".contains(c));
    (best.chars().filter(|c| c.is_alphabetic()).count() >= 3).then(|| best.to_string())
}

/// Paths and hex addresses vary between runs and machines.
fn is_volatile_word(word: &str) -> bool {
    word.contains('/') || word.contains('\\') || word.starts_with("0x") || word.contains("at 0x")
}

/// One line on what an outcome was, for "did not reproduce: …" messages.
pub fn describe(outcome: &Outcome) -> String {
    match outcome.status {
        Status::TimedOut => format!("timed out after {:.1} s", outcome.duration.as_secs_f64()),
        Status::Signaled(sig) => format!("killed by {}", signal_name(sig)),
        Status::OutOfMemory => format!(
            "killed over the memory limit (--max-memory), holding {}",
            human(outcome.peak_rss)
        ),
        Status::Exited(0) => "it ran to completion without an error".into(),
        Status::Exited(code) => match final_exception(&outcome.stderr) {
            Some(e) => format!("it raised {}", e.header),
            None => format!("it exited with status {code} without a traceback"),
        },
    }
}

/// The string literals that `line`, an `assert` statement, compares with: the operands of its
/// test's comparisons written as string literals, as written.
fn expected_texts(line: &str) -> Vec<String> {
    use scrub_reducers::python::{Expr, Stmt, exprs_of};
    let Some(script) = scrub_reducers::Script::parse(line, scrub_reducers::PythonVersion::latest())
    else {
        return Vec::new();
    };
    let [Stmt::Assert(assert)] = script.body() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in exprs_of(&assert.test) {
        if let Expr::Compare(c) = e {
            for operand in std::iter::once(&*c.left).chain(c.comparators.iter()) {
                if matches!(operand, Expr::StringLiteral(_)) {
                    out.push(script.slice(operand).to_string());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_text_a_failing_assert_compares_with_is_expected() {
        assert_eq!(
            expected_texts("assert 'code: return x' in gm.print_readable()"),
            ["'code: return x'"]
        );
        assert!(expected_texts("assert total == 3").is_empty());
        assert!(expected_texts("raise ValueError('x')").is_empty());
    }

    use super::*;

    fn traceback(header: &str) -> String {
        format!(
            "Traceback (most recent call last):\n  File \"repro.py\", line 1, in <module>\n    f()\n{header}\n"
        )
    }

    #[test]
    fn a_given_signature_keeps_the_detail_under_the_header_it_matched() {
        let guard = "torch._dynamo.exc.UserError: Constraints violated (dz)!\n  - Not all values of dz satisfy the generated guard ((1 + z.size()[1]) // 2) != 1.";
        let special = "torch._dynamo.exc.UserError: Constraints violated (dz)!\n  - You marked dz as dynamic but your code specialized it to be a constant (1).";
        let given = Signature::parse("UserError: Constraints violated (dz)").unwrap();
        assert_eq!(
            given.judge(&Outcome::exited(1, &traceback(special))),
            Verdict::Same
        );
        let kept = given.with_detail(&Outcome::exited(1, &traceback(guard)));
        assert_eq!(kept.to_string(), "UserError: Constraints violated (dz)");
        assert_eq!(
            kept.judge(&Outcome::exited(1, &traceback(guard))),
            Verdict::Same
        );
        assert!(matches!(
            kept.judge(&Outcome::exited(1, &traceback(special))),
            Verdict::NearMiss(_)
        ));
        // A one-line message has no detail: the signature stays as given.
        let plain = Signature::parse("KeyError").unwrap();
        let one = plain
            .clone()
            .with_detail(&Outcome::exited(1, &traceback("KeyError: 'k'")));
        assert_eq!(one, plain);
    }

    #[test]
    fn every_documented_sig_form_parses() {
        for (text, shown) in [
            (
                "RuntimeError: expected scalar type",
                "RuntimeError: expected scalar type",
            ),
            ("RuntimeError", "RuntimeError"),
            (
                "torch._dynamo.exc.Unsupported: Data-dependent",
                "torch._dynamo.exc.Unsupported: Data-dependent",
            ),
            ("signal:SIGSEGV", "signal:SIGSEGV"),
            ("signal:SIGABRT", "signal:SIGABRT"),
            ("exit:3", "exit:3"),
        ] {
            assert_eq!(Signature::parse(text).unwrap().to_string(), shown);
        }
    }

    #[test]
    fn malformed_sigs_are_refused() {
        for text in [
            "",
            ": message",
            "not a class: x",
            "signal:SIGNOPE",
            "exit:abc",
            "exit:0",
            "exit:300",
            "1Error",
        ] {
            assert!(Signature::parse(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn a_plain_class_matches_the_last_part_of_a_dotted_one() {
        let sig = Signature::parse("Unsupported: Data-dependent").unwrap();
        let out = Outcome::exited(
            1,
            &traceback("torch._dynamo.exc.Unsupported: Data-dependent branching"),
        );
        assert_eq!(sig.judge(&out), Verdict::Same);
        let dotted = Signature::parse("other.Unsupported").unwrap();
        assert_eq!(dotted.judge(&out), Verdict::Other);
    }

    #[test]
    fn same_class_other_message_is_a_near_miss() {
        let sig = Signature::parse("KeyError: 'calibration'").unwrap();
        let out = Outcome::exited(1, &traceback("KeyError: 'gain'"));
        assert_eq!(
            sig.judge(&out),
            Verdict::NearMiss("KeyError: 'gain'".into())
        );
    }

    /// The stderr of a failure whose message is `message` (its header's text and the lines
    /// after it), raised in a library under the script.
    fn failing(class: &str, message: &str) -> Outcome {
        Outcome::exited(
            1,
            &format!(
                "Traceback (most recent call last):\n  File \"/t/repro.py\", line 9, in <module>\n    m(x)\n  File \"/v/site-packages/torch/nn/modules/module.py\", line 1, in _call_impl\n    return f(x)\n{class}: {message}"
            ),
        )
    }

    #[test]
    fn an_interpreter_failure_with_another_inner_error_is_a_near_miss() {
        let wrapper = "The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript (most recent call last):\n  File \"/t/repro.py\", line 7, in forward\n    return self.lin(x)\n           ~~~~~~~~ <--- HERE\n";
        let original = failing(
            "RuntimeError",
            &format!("{wrapper}RuntimeError: Inference tensors cannot be saved for backward.\n"),
        );
        let sig = Signature::derive(&original).unwrap();
        assert_eq!(
            sig.names(),
            ["with: RuntimeError: Inference tensors cannot be saved for backward."]
        );
        assert_eq!(sig.judge(&original), Verdict::Same);
        let other = failing(
            "RuntimeError",
            &format!(
                "{wrapper}RuntimeError: both arguments to linear need to be at least 1D, but they are 0D and 2D\n"
            ),
        );
        assert!(matches!(sig.judge(&other), Verdict::NearMiss(_)));
    }

    #[test]
    fn an_empty_first_line_does_not_let_any_error_of_its_class_match() {
        let original = failing(
            "RuntimeError",
            "\nModule 'M' has no attribute 'blocks' (failed to convert Python type: 'list'):\n  File \"/t/repro.py\", line 7\n        for b in self.blocks[0]:\n                 ~~~~~~~~~~~ <--- HERE\n",
        );
        let sig = Signature::derive(&original).unwrap();
        assert_eq!(sig.to_string(), "RuntimeError");
        assert_eq!(sig.judge(&original), Verdict::Same);
        let other = failing(
            "RuntimeError",
            "\nArguments for call are not valid.\n  File \"/t/repro.py\", line 3\n    len()\n    ~~~ <--- HERE\n",
        );
        assert!(matches!(sig.judge(&other), Verdict::NearMiss(_)));
    }

    #[test]
    fn a_header_with_another_detail_line_is_a_near_miss_and_smaller_sizes_still_match() {
        let detail = |lo: u32, hi: u32| {
            format!(
                "Constraints violated (dz)! For more information, run with TORCH_LOGS=\"+dynamic\".\n  - Not all values of dz = L['x'].size()[0] in the specified range dz <= {hi} satisfy the generated guard {lo} <= L['x'].size()[0] and L['x'].size()[0] <= {hi}\n\nThe error above occurred when calling torch.export.export.\n"
            )
        };
        let sig =
            Signature::derive(&failing("torch._dynamo.exc.UserError", &detail(5, 1024))).unwrap();
        assert_eq!(
            sig.judge(&failing("torch._dynamo.exc.UserError", &detail(3, 64))),
            Verdict::Same
        );
        let specialized = "Constraints violated (dz)! For more information, run with TORCH_LOGS=\"+dynamic\".\n  - You marked dz as dynamic but your code specialized it to be a constant (1).\n";
        assert!(matches!(
            sig.judge(&failing("torch._dynamo.exc.UserError", specialized)),
            Verdict::NearMiss(_)
        ));
    }

    #[test]
    fn an_exception_raised_from_another_cause_is_a_near_miss() {
        let chained = |cause: &str| {
            Outcome::exited(
                1,
                &format!(
                    "Traceback (most recent call last):\n  File \"/t/repro.py\", line 4, in load\n    json.loads(text)\n{cause}\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"/t/repro.py\", line 9, in <module>\n    load()\n  File \"/t/repro.py\", line 6, in load\n    raise SettingsError(\"cannot load settings for 'prod'\") from e\nSettingsError: cannot load settings for 'prod'\n"
                ),
            )
        };
        let original = chained(
            "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 3 column 5 (char 41)",
        );
        let sig = Signature::derive(&original).unwrap();
        assert_eq!(
            sig.names(),
            [
                "cause: json.decoder.JSONDecodeError: Expecting ',' delimiter: line # column # (char #)"
            ]
        );
        assert_eq!(
            sig.judge(&chained(
                "json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 9 (char 8)"
            )),
            Verdict::Same
        );
        assert!(matches!(
            sig.judge(&chained("KeyError: 'prod'")),
            Verdict::NearMiss(_)
        ));
        let unchained = Outcome::exited(
            1,
            "Traceback (most recent call last):\n  File \"/t/repro.py\", line 2, in <module>\n    raise SettingsError(\"cannot load settings for 'prod'\")\nSettingsError: cannot load settings for 'prod'\n",
        );
        assert!(matches!(sig.judge(&unchained), Verdict::NearMiss(_)));
        // A --sig says itself what it keeps.
        let given = Signature::parse("SettingsError: cannot load settings").unwrap();
        assert_eq!(given.judge(&unchained), Verdict::Same);
    }

    #[test]
    fn the_same_message_without_the_transform_that_called_back_has_moved() {
        let grad = "  File \"/v/site-packages/torch/autograd/__init__.py\", line 594, in grad\n    result = _engine_run_backward(\nRuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n";
        let text = "import torch\ndef per_sample(l):\n    return torch.autograd.grad(l, w)\ntorch.func.vmap(per_sample)(losses)\n";
        let original = Outcome::exited(
            1,
            &format!(
                "Traceback (most recent call last):\n  File \"/t/repro.py\", line 4, in <module>\n    torch.func.vmap(per_sample)(losses)\n  File \"/v/site-packages/torch/_functorch/apis.py\", line 246, in wrapped\n    return vmap_impl(\n  File \"/v/site-packages/torch/_functorch/vmap.py\", line 507, in _flat_vmap\n    batched_outputs = func(*batched_inputs, **kwargs)\n  File \"/t/repro.py\", line 3, in per_sample\n    return torch.autograd.grad(l, w)\n{grad}"
            ),
        );
        let anchor = Anchor::of(text, &original, false);
        assert_eq!(anchor.through, ["torch/_functorch/apis.py:wrapped"]);
        assert_eq!(anchor.moved(text, &original), None);
        let plain = Outcome::exited(
            1,
            &format!(
                "Traceback (most recent call last):\n  File \"/t/repro.py\", line 2, in <module>\n    torch.autograd.grad(torch.tensor([]), [[]])\n{grad}"
            ),
        );
        assert_eq!(
            anchor.moved("", &plain).as_deref(),
            Some("no longer called through torch/_functorch/apis.py:wrapped")
        );
    }

    #[test]
    fn a_module_calling_its_forward_is_a_plain_call_not_a_transform() {
        let text = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x @ x\nM()(x)\n";
        let original = Outcome::exited(
            1,
            "Traceback (most recent call last):\n  File \"/t/repro.py\", line 5, in <module>\n    M()(x)\n  File \"/v/site-packages/torch/nn/modules/module.py\", line 1787, in _wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n  File \"/t/repro.py\", line 4, in forward\n    return x @ x\n  File \"/v/site-packages/torch/_tensor.py\", line 9, in __matmul__\n    return f(x)\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 4x3)\n",
        );
        assert!(Anchor::of(text, &original, false).through.is_empty());
    }

    #[test]
    fn a_traceback_printed_by_a_script_that_then_succeeds_is_not_a_failure() {
        let sig = Signature::parse("ValueError").unwrap();
        assert_eq!(
            sig.judge(&Outcome::exited(0, &traceback("ValueError: x"))),
            Verdict::Other
        );
    }

    #[test]
    fn signals_and_exit_statuses_match_exactly() {
        let segv = Outcome {
            status: Status::Signaled(libc::SIGSEGV),
            ..Outcome::exited(0, "")
        };
        assert_eq!(
            Signature::parse("signal:SIGSEGV").unwrap().judge(&segv),
            Verdict::Same
        );
        assert_eq!(
            Signature::parse("signal:SIGABRT").unwrap().judge(&segv),
            Verdict::Other
        );
        assert_eq!(
            Signature::parse("exit:3")
                .unwrap()
                .judge(&Outcome::exited(3, "")),
            Verdict::Same
        );
        assert_eq!(
            Signature::parse("exit:3")
                .unwrap()
                .judge(&Outcome::exited(4, "")),
            Verdict::Other
        );
    }

    #[test]
    fn derived_signatures_leave_out_numbers_paths_and_addresses() {
        let msg = "index 5 is out of bounds for dimension 0 with size 3";
        assert_eq!(
            stable_part(msg).as_deref(),
            Some("is out of bounds for dimension")
        );
        let msg = "cannot open /tmp/abc/data.bin: permission denied";
        assert_eq!(stable_part(msg).as_deref(), Some("permission denied"));
        assert_eq!(
            stable_part("'calibration'").as_deref(),
            Some("'calibration'")
        );
        assert_eq!(stable_part("42"), None);
        let out = Outcome::exited(
            1,
            &traceback("RuntimeError: expected scalar type Float but found Double"),
        );
        assert_eq!(
            Signature::derive(&out).unwrap().to_string(),
            "RuntimeError: expected scalar type Float but found Double"
        );
    }

    #[test]
    fn a_candidate_raised_elsewhere_moved_its_site() {
        let lib = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 1, in <module>\n    f()\n  File \"/v/lib/python3.11/site-packages/torch/nn/functional.py\", line 9, in linear\n    raise RuntimeError('mat1 and mat2 shapes cannot be multiplied')\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n";
        let own = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 1, in <module>\n    raise RuntimeError('mat1 and mat2 shapes cannot be multiplied')\nRuntimeError: mat1 and mat2 shapes cannot be multiplied\n";
        let anchor = Anchor::of("", &Outcome::exited(1, lib), false);
        assert_eq!(
            anchor.site.as_deref(),
            Some("torch/nn/functional.py:linear")
        );
        assert_eq!(anchor.moved("", &Outcome::exited(1, lib)), None);
        assert_eq!(
            anchor.moved("", &Outcome::exited(1, own)).as_deref(),
            Some("raised at the script itself, not at torch/nn/functional.py:linear")
        );
        // A failure the script raised itself may move within the script, not into a library.
        let own_anchor = Anchor::of("", &Outcome::exited(1, own), false);
        assert_eq!(own_anchor.moved("", &Outcome::exited(1, own)), None);
        assert_eq!(
            own_anchor.moved("", &Outcome::exited(1, lib)).as_deref(),
            Some("raised at torch/nn/functional.py:linear, not at the script itself")
        );
    }

    #[test]
    fn the_computed_values_of_an_assertion_stay_computed() {
        let original = "EXPECTED = 18831\ngot = total()\nassert got == EXPECTED, f'expected {EXPECTED}, got {got}'\n";
        let run = |got: &str| {
            Outcome::exited(
                1,
                &traceback(&format!("AssertionError: expected 18831, got {got}")),
            )
        };
        let anchor = Anchor::of(original, &run("18830"), true);
        assert_eq!(anchor.computed, ["18830"]);
        assert_eq!(anchor.moved(original, &run("18830")), None);
        assert_eq!(
            anchor.moved(original, &run("0")).as_deref(),
            Some("the message no longer shows the computed 18830")
        );
        let pasted = "assert 1 == 0, 'expected 18831, got 18830'\n";
        assert_eq!(
            anchor.moved(pasted, &run("18830")).as_deref(),
            Some("the script writes the computed 18830 itself")
        );
        assert!(
            Anchor::of(original, &run("18830"), false)
                .computed
                .is_empty()
        );
    }

    #[test]
    fn the_figure_an_assertion_checks_against_stays_in_the_check() {
        let original = "EXPECTED = {'a': 18831}\ngot = total()\nassert got == EXPECTED['a'], f'expected {EXPECTED[\"a\"]}, got {got}'\n";
        let run = |expected: &str| {
            Outcome::exited(
                1,
                &traceback(&format!("AssertionError: expected {expected}, got 18830")),
            )
        };
        let anchor = Anchor::of(original, &run("18831"), true);
        assert_eq!(anchor.figures, ["18831"]);
        assert_eq!(anchor.moved(original, &run("18831")), None);
        let folded = "got = total()\nassert got == 18831, f'expected {18831}, got {got}'\n";
        assert_eq!(anchor.moved(folded, &run("18831")), None);
        let swapped = "got = total()\nassert got == EXPECTED, f'expected {EXPECTED}, got {got}'\n";
        assert_eq!(
            anchor.moved(swapped, &run("Invoice()")).as_deref(),
            Some("the message no longer shows the figure 18831")
        );
        let wrapped = "got = total()\nassert got == {'a': 18831}, f'expected {18831}, got {got}'\n";
        assert_eq!(
            anchor.moved(wrapped, &run("{'a': 18831}")).as_deref(),
            Some("the message no longer shows the figure 18831")
        );
        let shown_only = "got = total()\nassert got == 0, f'expected {18831}, got {got}'\n";
        assert_eq!(
            anchor.moved(shown_only, &run("18831")).as_deref(),
            Some("the script writes the figure 18831 only in a message")
        );
    }
}
