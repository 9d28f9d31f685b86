//! Step 2: the fenced blocks of an issue, what each one is, and which one is the repro.
//!
//! Only fenced blocks count: code pasted into prose is not a repro. A block is code, a
//! traceback, an environment dump (`collect_env` output), a shell transcript or a log; a
//! fenced block holding code and then its traceback is split in two, and a REPL session
//! (`>>> `) becomes the code it typed.

use std::collections::HashSet;

use scrub_reducers::python::{
    Expr, PythonVersion, Script, SourceOrderVisitor, Stmt, ast, source_order,
};
use serde::Serialize;

use super::fetch::Issue;
use crate::engine::exception::final_exception;

/// What a fenced block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Code,
    Traceback,
    /// `python -m torch.utils.collect_env` output and the like.
    Environment,
    Shell,
    Log,
}

/// Where a block was posted: the issue's body, or the K-th comment (0-based here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Post {
    Body,
    Comment(usize),
}

impl Post {
    /// `body`, or `comment:K` with K counted from 1, as the report names it.
    pub fn name(self) -> String {
        match self {
            Post::Body => "body".into(),
            Post::Comment(k) => format!("comment:{}", k + 1),
        }
    }
}

/// One classified block.
#[derive(Debug, Clone)]
pub struct Block {
    pub post: Post,
    /// The login of whoever posted it.
    pub author: String,
    pub kind: Kind,
    /// The fence's info string, lower-cased (`python`, `py`, `` for untagged).
    pub lang: String,
    pub text: String,
    /// The prose of the same post between the previous block (or the start) and this one.
    pub lead: String,
    /// The fence was never closed (the rest of the post is the block).
    pub unterminated: bool,
}

/// A fenced block as written, before classification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fenced {
    pub lang: String,
    pub text: String,
    pub lead: String,
    pub unterminated: bool,
}

/// Every fenced block of a Markdown text: ```` ``` ````, ```` ```` ```` (any run of three or
/// more backticks or tildes, closed by a run at least as long); an unterminated last fence
/// runs to the end.
pub fn fenced_blocks(markdown: &str) -> Vec<Fenced> {
    let text = markdown.replace("\r\n", "\n");
    let mut out = Vec::new();
    let mut lead = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((fence_char, fence_len, info)) = opening_fence(line) else {
            lead.push_str(line);
            lead.push('\n');
            continue;
        };
        let mut body = String::new();
        let mut closed = false;
        for inner in lines.by_ref() {
            if is_closing_fence(inner, fence_char, fence_len) {
                closed = true;
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        let indent = line.len() - line.trim_start().len();
        out.push(Fenced {
            lang: info
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_start_matches('{')
                .trim_end_matches('}')
                .to_ascii_lowercase(),
            text: dedent(&body, indent),
            lead: std::mem::take(&mut lead),
            unterminated: !closed,
        });
    }
    out
}

/// `(char, length, info string)` when `line` opens a fence.
fn opening_fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start();
    let c = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|x| *x == c).count();
    let info = trimmed[len..].trim();
    // A backtick fence's info string may not hold backticks (that is inline code).
    (len >= 3 && !(c == '`' && info.contains('`'))).then_some((c, len, info))
}

fn is_closing_fence(line: &str, c: char, len: usize) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= len && trimmed.chars().all(|x| x == c)
}

/// Removes up to `indent` leading spaces from every line (fences inside list items).
fn dedent(text: &str, indent: usize) -> String {
    if indent == 0 {
        return text.to_string();
    }
    text.lines()
        .map(|l| {
            let strip = l.len() - l.trim_start_matches(' ').len();
            format!("{}\n", &l[strip.min(indent)..])
        })
        .collect()
}

const TRACEBACK: &str = "Traceback (most recent call last):";

/// Sorts one fenced block into what it holds; code followed by its traceback in the same
/// block becomes two pieces.
pub fn classify(lang: &str, text: &str) -> Vec<(Kind, String)> {
    if is_environment(text) {
        return vec![(Kind::Environment, text.to_string())];
    }
    if super::evidence::is_jupyter_traceback(text) {
        return vec![(Kind::Traceback, text.to_string())];
    }
    if let Some(code) = repl_code(text) {
        let mut out = vec![(Kind::Code, code)];
        if let Some(at) = text.find(TRACEBACK) {
            out.push((Kind::Traceback, text[at..].to_string()));
        }
        return out;
    }
    let shell_lang = matches!(
        lang,
        "bash" | "sh" | "shell" | "console" | "shell-session" | "zsh" | "sh-session" | "cmd"
    );
    if shell_lang || looks_like_shell(text) {
        let mut out = vec![(Kind::Shell, text.to_string())];
        if let Some(code) = python_c(text) {
            out.push((Kind::Code, code));
        }
        return out;
    }
    if let Some(at) = text.find(TRACEBACK) {
        let before = &text[..at];
        let mut out = Vec::new();
        if before.trim().lines().count() >= 1 && parses(before) && has_effect(before) {
            out.push((Kind::Code, before.to_string()));
        }
        out.push((Kind::Traceback, text[at..].to_string()));
        return out;
    }
    if final_exception(text).is_some() && text.contains("File \"") {
        return vec![(Kind::Traceback, text.to_string())];
    }
    let code_lang = matches!(
        lang,
        "python" | "py" | "python3" | "py3" | "" | "ipython" | "pycon"
    );
    if code_lang && parses(text) && has_effect(text) {
        return vec![(Kind::Code, text.to_string())];
    }
    vec![(Kind::Log, text.to_string())]
}

fn is_environment(text: &str) -> bool {
    let marks = [
        "PyTorch version:",
        "Is debug build:",
        "CUDA used to build PyTorch:",
        "Python version:",
        "Versions of relevant libraries:",
        "Collecting environment information",
    ];
    marks.iter().filter(|m| text.contains(*m)).count() >= 2
}

/// The code typed at `>>> ` / `... ` prompts, when the block is a REPL session (a debugger
/// session that starts Python, `(gdb) run` then `>>> …`, is instructions, not a repro).
fn repl_code(text: &str) -> Option<String> {
    if ["(gdb)", "(lldb)", "(Pdb)", "$ gdb"]
        .iter()
        .any(|d| text.contains(d))
    {
        return None;
    }
    let prompts = text
        .lines()
        .filter(|l| l.starts_with(">>> ") || l.trim_end() == ">>>")
        .count();
    if prompts == 0 {
        return None;
    }
    let code: String = text
        .lines()
        .filter_map(|l| {
            l.strip_prefix(">>> ")
                .or_else(|| l.strip_prefix("... "))
                .or_else(|| (l.trim_end() == ">>>" || l.trim_end() == "...").then_some(""))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    Some(code)
}

/// The code of a `python -c '…'` command in a shell transcript: the first one whose output
/// (the lines up to the next command) reports a crash or an error, else the first one.
fn python_c(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found: Vec<(String, bool)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find("python") else {
            continue;
        };
        let rest = line[at..].trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '.');
        let Some(arg) = rest.trim_start().strip_prefix("-c") else {
            continue;
        };
        let arg = arg.trim();
        let Some(q) = arg.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let Some(end) = arg[1..].rfind(q) else {
            continue;
        };
        let code = arg[1..=end].replace("; ", "\n").replace(';', "\n");
        let output = lines[i + 1..]
            .iter()
            .take_while(|l| !l.contains("$ ") && !l.trim_start().starts_with("python"))
            .any(|l| {
                let l = l.to_ascii_lowercase();
                [
                    "fault",
                    "error",
                    "abort",
                    "exception",
                    "core dumped",
                    "traceback",
                ]
                .iter()
                .any(|w| l.contains(w))
            });
        found.push((format!("{code}\n"), output));
    }
    let pick = found
        .iter()
        .find(|(_, failed)| *failed)
        .or_else(|| found.first())?;
    parses(&pick.0).then(|| pick.0.clone())
}

/// A transcript: most non-blank lines are prompts or commands.
fn looks_like_shell(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return false;
    }
    let commands = lines
        .iter()
        .filter(|l| {
            let l = l.trim_start();
            // `(venv) $ cmd`, `user@host:~$ cmd`: a prompt before the command.
            let unprefixed = match l.strip_prefix('(').and_then(|r| r.split_once(") ")) {
                Some((_, rest)) => rest,
                None => l,
            };
            let prompt = unprefixed
                .split_once(' ')
                .is_some_and(|(first, _)| first.ends_with('$'));
            prompt
                || l.starts_with("$ ")
                || l.starts_with("pip install")
                || l.starts_with("conda ")
                || l.starts_with("torchrun ")
                || l.starts_with("python -m ")
                || (l.starts_with("python")
                    && l.split_whitespace()
                        .nth(1)
                        .is_some_and(|a| a.ends_with(".py")))
        })
        .count();
    commands > 0 && !parses(text)
}

/// Whether `text` is Python that the newest parser accepts.
pub fn parses(text: &str) -> bool {
    Script::parse(text, PythonVersion::latest()).is_some()
}

/// Whether the code does something (a call, a raise, an assert, an import: importing runs
/// the module), not just names a value.
fn has_effect(text: &str) -> bool {
    let Some(script) = Script::parse(text, PythonVersion::latest()) else {
        return false;
    };
    if script
        .body()
        .iter()
        .any(|s| matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_)))
        && script
            .body()
            .iter()
            .all(|s| matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_)))
    {
        return true;
    }
    // Calls inside a function or a class body do nothing until called: a block that only
    // defines things is a fragment.
    let calls = script
        .body()
        .iter()
        .filter(|s| !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        .any(|s| {
            scrub_reducers::python::all_exprs(std::slice::from_ref(s))
                .into_iter()
                .any(|e| matches!(e, Expr::Call(_)))
        });
    let effect = calls
        || script
            .body()
            .iter()
            .any(|s| matches!(s, Stmt::Raise(_) | Stmt::Assert(_)));
    // One bare expression on names from nowhere is printed output (`tensor([1., 2.])`).
    let output = matches!(script.body(), [Stmt::Expr(_)]) && !self_contained(text);
    effect && !output
}

/// Every block of the issue, body first, then the comments in order; bots' comments are left
/// out.
pub fn extract(issue: &Issue) -> Vec<Block> {
    let mut posts = vec![(
        Post::Body,
        issue.author_login().to_string(),
        issue.body.as_str(),
    )];
    for (k, c) in issue.comments.iter().enumerate() {
        if is_bot(c.login()) {
            continue;
        }
        posts.push((Post::Comment(k), c.login().to_string(), c.body.as_str()));
    }
    let mut out = Vec::new();
    for (post, author, text) in posts {
        for fenced in fenced_blocks(text) {
            for (kind, piece) in classify(&fenced.lang, &fenced.text) {
                out.push(Block {
                    post,
                    author: author.clone(),
                    kind,
                    lang: fenced.lang.clone(),
                    text: piece,
                    lead: fenced.lead.clone(),
                    unterminated: fenced.unterminated,
                });
            }
        }
    }
    out
}

/// Whether `login` is a bot's: its comments are not the discussion.
pub fn is_bot(login: &str) -> bool {
    login.ends_with("[bot]") || login == "pytorch-bot" || login == "pytorchmergebot"
}

/// The repro chosen from the blocks, and why.
#[derive(Debug, Clone)]
pub struct Choice {
    /// The index into the blocks.
    pub block: usize,
    pub source: Post,
    pub reason: String,
}

/// Phrases with which a poster says a block does *not* show the bug.
const DISCLAIMERS: &[&str] = &[
    "does not reproduce",
    "doesn't reproduce",
    "does not repro",
    "doesn't repro",
    "can't reproduce",
    "cannot reproduce",
    "could not reproduce",
    "couldn't reproduce",
    "works fine",
    "works as expected",
    "this works",
    "which works",
    "does not fail",
    "doesn't fail",
    "does not error",
    "doesn't error",
    "no error",
    "runs fine",
    "passes",
    "workaround",
];

/// Whether the prose leading to a block says the block does not show the bug.
pub fn is_disclaimed(lead: &str) -> bool {
    // Only the last paragraph before the block speaks about it.
    let last = lead
        .trim_end()
        .rsplit("\n\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
        .replace('’', "'");
    DISCLAIMERS.iter().any(|d| last.contains(d))
}

/// Chooses the repro: the original poster's most recent runnable code block that they do
/// not disclaim, unless a commenter posted a strictly shorter one that is self-contained
/// (needs nothing from the description). `None` when there is no such block.
pub fn choose(blocks: &[Block], op: &str) -> Option<Choice> {
    let runnable = |b: &Block| b.kind == Kind::Code && !is_disclaimed(&b.lead);
    // The poster's most recent self-contained block; else their most recent block at all.
    let by_op = |b: &Block| runnable(b) && (b.author == op || b.post == Post::Body);
    let op_pick = blocks
        .iter()
        .enumerate()
        .rev()
        .find(|(_, b)| by_op(b) && self_contained(&b.text))
        .or_else(|| blocks.iter().enumerate().rev().find(|(_, b)| by_op(b)));
    let other_pick = blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| runnable(b) && b.author != op && b.post != Post::Body)
        .filter(|(_, b)| self_contained(&b.text))
        .min_by_key(|(i, b)| (lines(&b.text), std::cmp::Reverse(*i)));
    match (op_pick, other_pick) {
        (Some((_, ob)), Some((ci, cb))) if lines(&cb.text) < lines(&ob.text) => Some(Choice {
            block: ci,
            source: cb.post,
            reason: format!(
                "@{} posted a shorter self-contained repro ({} lines against the original poster's {})",
                cb.author,
                lines(&cb.text),
                lines(&ob.text)
            ),
        }),
        (Some((oi, ob)), _) => {
            let earlier = blocks[..oi]
                .iter()
                .filter(|b| b.kind == Kind::Code && (b.author == op || b.post == Post::Body))
                .count();
            let mut reason = match ob.post {
                Post::Body => "the original poster's repro in the issue body".to_string(),
                p => format!("the original poster's most recent repro ({})", p.name()),
            };
            if earlier > 0 {
                reason.push_str(&format!(
                    "; {earlier} earlier code block(s) set aside as older or disclaimed"
                ));
            }
            let later_disclaimed = blocks[oi + 1..]
                .iter()
                .filter(|b| b.kind == Kind::Code && is_disclaimed(&b.lead))
                .count();
            if later_disclaimed > 0 {
                reason.push_str(&format!(
                    "; {later_disclaimed} later block(s) the poster says do not reproduce left out"
                ));
            }
            let later_fragments = blocks[oi + 1..]
                .iter()
                .filter(|b| by_op(b) && !self_contained(&b.text))
                .count();
            if later_fragments > 0 {
                reason.push_str(&format!(
                    "; {later_fragments} later fragment(s) that are not self-contained set aside"
                ));
            }
            if ob.unterminated {
                reason.push_str(" (its fence is never closed)");
            }
            Some(Choice {
                block: oi,
                source: ob.post,
                reason,
            })
        }
        (None, Some((ci, cb))) => Some(Choice {
            block: ci,
            source: cb.post,
            reason: format!(
                "the original poster gave no runnable repro; @{} posted a self-contained one",
                cb.author
            ),
        }),
        (None, None) => None,
    }
}

/// Non-blank lines.
pub fn lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Whether every name the code reads is defined in it, imported by it, or a builtin.
pub fn self_contained(text: &str) -> bool {
    unresolved_names(text).is_some_and(|names| names.is_empty())
}

/// The names `text` reads but never defines, imports or gets from builtins; `None` when it
/// does not parse.
pub fn unresolved_names(text: &str) -> Option<Vec<String>> {
    let script = Script::parse(text, PythonVersion::latest())?;
    let mut names = Names::default();
    names.visit_body(script.body());
    let mut missing: Vec<String> = names
        .loaded
        .into_iter()
        .filter(|n| !names.defined.contains(n) && !BUILTINS.contains(&n.as_str()))
        .collect();
    missing.sort();
    missing.dedup();
    Some(missing)
}

#[derive(Default)]
struct Names {
    defined: HashSet<String>,
    loaded: Vec<String>,
}

impl<'a> SourceOrderVisitor<'a> for Names {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.defined.insert(f.name.to_string());
            }
            Stmt::ClassDef(c) => {
                self.defined.insert(c.name.to_string());
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    let name = a.asname.as_ref().unwrap_or(&a.name).as_str();
                    self.defined
                        .insert(name.split('.').next().unwrap_or(name).to_string());
                }
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    if a.name.as_str() == "*" {
                        // A star import may define anything.
                        self.defined.insert("*".into());
                    }
                    self.defined
                        .insert(a.asname.as_ref().unwrap_or(&a.name).to_string());
                }
            }
            Stmt::Global(g) => self.defined.extend(g.names.iter().map(|n| n.to_string())),
            Stmt::Nonlocal(g) => self.defined.extend(g.names.iter().map(|n| n.to_string())),
            _ => {}
        }
        source_order::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Name(n) = expr {
            match n.ctx {
                ast::ExprContext::Load => self.loaded.push(n.id.to_string()),
                _ => {
                    self.defined.insert(n.id.to_string());
                }
            }
        }
        source_order::walk_expr(self, expr);
    }

    fn visit_parameter(&mut self, p: &'a ast::Parameter) {
        self.defined.insert(p.name.to_string());
        source_order::walk_parameter(self, p);
    }

    fn visit_except_handler(&mut self, h: &'a ast::ExceptHandler) {
        let ast::ExceptHandler::ExceptHandler(handler) = h;
        if let Some(name) = &handler.name {
            self.defined.insert(name.to_string());
        }
        source_order::walk_except_handler(self, h);
    }

    fn visit_pattern(&mut self, p: &'a ast::Pattern) {
        match p {
            ast::Pattern::MatchAs(m) => {
                if let Some(n) = &m.name {
                    self.defined.insert(n.to_string());
                }
            }
            ast::Pattern::MatchStar(m) => {
                if let Some(n) = &m.name {
                    self.defined.insert(n.to_string());
                }
            }
            ast::Pattern::MatchMapping(m) => {
                if let Some(n) = &m.rest {
                    self.defined.insert(n.to_string());
                }
            }
            _ => {}
        }
        source_order::walk_pattern(self, p);
    }
}

const BUILTINS: &[&str] = &[
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip",
    "__import__",
    "__name__",
    "__file__",
    "__doc__",
    "__builtins__",
    "__debug__",
    "__spec__",
    "__loader__",
    "__package__",
    "__annotations__",
    "NotImplemented",
    "Ellipsis",
    "BaseException",
    "BaseExceptionGroup",
    "Exception",
    "ExceptionGroup",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "ChildProcessError",
    "ConnectionError",
    "EOFError",
    "EnvironmentError",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "NotADirectoryError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "RuntimeError",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "ValueError",
    "ZeroDivisionError",
    "Warning",
    "UserWarning",
    "DeprecationWarning",
    "FutureWarning",
    "RuntimeWarning",
    "SyntaxWarning",
    "ImportWarning",
    "UnicodeWarning",
    "BytesWarning",
    "ResourceWarning",
    "PendingDeprecationWarning",
    "EncodingWarning",
    "PythonFinalizationError",
];

/// Whether the issue shows its code or error only as images.
pub fn screenshot_only(issue: &Issue, blocks: &[Block]) -> bool {
    let has_image = |t: &str| {
        t.contains("![")
            || t.contains("<img")
            || t.contains("user-attachments/assets")
            || t.contains("user-images.githubusercontent.com")
    };
    let posts_with_images = std::iter::once(issue.body.as_str())
        .chain(issue.comments.iter().map(|c| c.body.as_str()))
        .any(has_image);
    posts_with_images
        && !blocks
            .iter()
            .any(|b| matches!(b.kind, Kind::Code | Kind::Traceback))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::fetch::{Actor, Comment};

    fn issue(body: &str, comments: &[(&str, &str)]) -> Issue {
        Issue {
            number: 1,
            body: body.into(),
            author: Some(Actor { login: "op".into() }),
            comments: comments
                .iter()
                .map(|(who, text)| Comment {
                    author: Some(Actor {
                        login: who.to_string(),
                    }),
                    body: text.to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn four_backtick_fences_hold_three_backtick_lines() {
        let md = "intro\n````python\nx = '''\n```\n'''\nprint(x)\n````\nafter\n";
        let blocks = fenced_blocks(md);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].text, "x = '''\n```\n'''\nprint(x)\n");
        assert_eq!(blocks[0].lang, "python");
        assert_eq!(blocks[0].lead, "intro\n");
    }

    #[test]
    fn an_unterminated_last_fence_runs_to_the_end() {
        let blocks = fenced_blocks("see:\r\n```py\r\nimport os\r\nos.getcwd()\r\n");
        assert_eq!(blocks.len(), 1);
        assert!(blocks[0].unterminated);
        assert_eq!(blocks[0].text, "import os\nos.getcwd()\n");
    }

    #[test]
    fn inline_code_and_unfenced_snippets_are_not_blocks() {
        assert!(fenced_blocks("run `x = f()` then\n    y = g()\n").is_empty());
    }

    #[test]
    fn blocks_are_sorted_by_what_they_hold() {
        let kind = |lang: &str, text: &str| {
            classify(lang, text)
                .into_iter()
                .map(|(k, _)| k)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kind("python", "import json\njson.loads('{')\n"),
            [Kind::Code]
        );
        assert_eq!(
            kind(
                "",
                "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nValueError: x\n"
            ),
            [Kind::Traceback]
        );
        assert_eq!(
            kind(
                "",
                "Collecting environment information...\nPyTorch version: 2.3.0\nIs debug build: False\n"
            ),
            [Kind::Environment]
        );
        assert_eq!(
            kind("", "$ python repro.py\nSegmentation fault (core dumped)\n"),
            [Kind::Shell]
        );
        assert_eq!(kind("", "W0101 12:00:00 some warning\n"), [Kind::Log]);
        assert_eq!(
            kind(
                "python",
                "import json\njson.loads('{')\nTraceback (most recent call last):\n  File \"a.py\", line 2, in <module>\njson.decoder.JSONDecodeError: Expecting x\n"
            ),
            [Kind::Code, Kind::Traceback]
        );
        assert_eq!(
            kind(
                "pycon",
                ">>> import math\n>>> math.sqrt(-1)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nValueError: math domain error\n"
            ),
            [Kind::Code, Kind::Traceback]
        );
    }

    #[test]
    fn the_original_posters_latest_repro_wins() {
        let i = issue(
            "```python\nimport math\nmath.sqrt(-1)\n```\n",
            &[(
                "op",
                "Smaller:\n```python\nimport math\nmath.log(-1)\n```\n",
            )],
        );
        let blocks = extract(&i);
        let c = choose(&blocks, "op").unwrap();
        assert_eq!(c.source.name(), "comment:1");
    }

    #[test]
    fn printed_output_and_fragments_do_not_displace_the_repro() {
        let i = issue(
            "```python\nimport math\nprint(math.sqrt(-1))\n```\nI expected:\n```\ntensor([1., 2.])\n```\n",
            &[("op", "I also tried\n```python\ny = model(x.float())\n```\n")],
        );
        let blocks = extract(&i);
        assert_eq!(blocks[1].kind, Kind::Log);
        assert_eq!(blocks[2].kind, Kind::Code);
        let c = choose(&blocks, "op").unwrap();
        assert_eq!(c.source, Post::Body);
        assert!(c.reason.contains("1 later fragment(s)"), "{}", c.reason);
    }

    #[test]
    fn a_later_block_the_poster_disclaims_is_not_the_repro() {
        let i = issue(
            "```python\nimport math\nmath.sqrt(-1)\n```\n",
            &[(
                "op",
                "Note that this variant does not reproduce:\n```python\nimport math\nmath.sqrt(1)\n```\n",
            )],
        );
        let blocks = extract(&i);
        let c = choose(&blocks, "op").unwrap();
        assert_eq!(c.source, Post::Body);
        assert!(c.reason.contains("do not reproduce"), "{}", c.reason);
    }

    #[test]
    fn a_commenters_strictly_shorter_self_contained_repro_wins() {
        let long = "```python\nimport math\nvalues = [1, 2, -3]\nfor v in values:\n    print(math.sqrt(v))\n```\n";
        let i = issue(
            long,
            &[
                (
                    "helper",
                    "Shorter:\n```python\nimport math\nmath.sqrt(-3)\n```\n",
                ),
                // Not self-contained: `values` comes from the description.
                ("other", "```python\nmath.sqrt(values[2])\n```\n"),
            ],
        );
        let blocks = extract(&i);
        let c = choose(&blocks, "op").unwrap();
        assert_eq!(c.source.name(), "comment:1");
        assert!(c.reason.contains("@helper"), "{}", c.reason);
    }

    #[test]
    fn a_commenters_repro_of_equal_length_does_not_win() {
        let i = issue(
            "```python\nimport math\nmath.sqrt(-1)\n```\n",
            &[("helper", "```python\nimport math\nmath.log(-1)\n```\n")],
        );
        assert_eq!(choose(&extract(&i), "op").unwrap().source, Post::Body);
    }

    #[test]
    fn names_from_elsewhere_make_a_block_not_self_contained() {
        assert!(self_contained(
            "import os\ndef f(x):\n    return [y for y in x]\nf(os.listdir('.'))\n"
        ));
        assert_eq!(
            unresolved_names("model(x)\n").unwrap(),
            vec!["model".to_string(), "x".to_string()]
        );
    }

    #[test]
    fn images_without_code_are_screenshot_only() {
        let i = issue(
            "It crashes:\n![error](https://github.com/user-attachments/assets/abc)\n",
            &[],
        );
        assert!(screenshot_only(&i, &extract(&i)));
    }

    #[test]
    fn the_signature_comes_from_the_traceback() {
        let i = issue(
            "```python\nimport math\nmath.sqrt(-1)\n```\n```\nTraceback (most recent call last):\n  File \"r.py\", line 2, in <module>\nValueError: math domain error\n```\n",
            &[],
        );
        let blocks = extract(&i);
        let c = choose(&blocks, "op");
        assert_eq!(
            super::super::evidence::find(&i, &blocks, c.as_ref())
                .unwrap()
                .signature
                .unwrap(),
            "ValueError: math domain error"
        );
    }
}
