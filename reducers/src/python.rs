//! The one door to Ruff's parser and AST: a parser bump touches this file only.

pub use ruff_python_ast::visitor::source_order::{self, SourceOrderVisitor};
pub use ruff_python_ast::{self as ast, Expr, PythonVersion, Stmt};
pub use ruff_text_size::{Ranged, TextRange};

use ruff_python_ast::ModModule;
use ruff_python_parser::{Mode, ParseOptions, Parsed};
use std::collections::HashSet;

/// A script that parsed without errors, with its text and the Python version it was parsed as.
pub struct Script {
    text: String,
    parsed: Parsed<ModModule>,
    version: PythonVersion,
}

impl Script {
    /// Parses `text` as the given Python version would; `None` when it has any syntax error,
    /// including syntax that this version does not support.
    pub fn parse(text: impl Into<String>, version: PythonVersion) -> Option<Script> {
        let text = text.into();
        let options = ParseOptions::from(Mode::Module).with_target_version(version);
        let parsed = ruff_python_parser::parse_unchecked(&text, options).try_into_module()?;
        if !parsed.errors().is_empty() || !parsed.unsupported_syntax_errors().is_empty() {
            return None;
        }
        Some(Script {
            text,
            parsed,
            version,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The Python version the script parsed as: a pass checks against it what it builds
    /// where the versions differ (an f-string's replacement fields).
    pub fn version(&self) -> PythonVersion {
        self.version
    }

    /// The module's top-level statements.
    pub fn body(&self) -> &[Stmt] {
        &self.parsed.syntax().body
    }

    /// The byte ranges of every comment (from `#` to the end of its line).
    pub fn comments(&self) -> Vec<std::ops::Range<usize>> {
        self.parsed
            .tokens()
            .iter()
            .filter(|t| t.kind() == ruff_python_ast::token::TokenKind::Comment)
            .map(span)
            .collect()
    }

    /// The byte ranges no pass may touch: each line carrying a `# scrub: keep` comment, and
    /// the lines from `# scrub: keep-begin` to `# scrub: keep-end` (to the end of the script
    /// when the end is missing). For values that matter to the bug but not to the signature.
    pub fn protected(&self) -> Vec<std::ops::Range<usize>> {
        let text = self.text.as_str();
        let mut out = Vec::new();
        let mut begin = None;
        for comment in self.comments() {
            let directive = text[comment.clone()].trim_start_matches('#').trim();
            let Some(what) = directive.strip_prefix("scrub:") else {
                continue;
            };
            let line = crate::edit::line_start(text, comment.start)
                ..crate::edit::line_end(text, comment.end);
            match what.trim() {
                "keep" => out.push(line),
                "keep-begin" => begin = begin.or(Some(line.start)),
                "keep-end" => {
                    if let Some(start) = begin.take() {
                        out.push(start..line.end);
                    }
                }
                _ => {}
            }
        }
        if let Some(start) = begin {
            out.push(start..text.len());
        }
        out
    }

    /// The text without its `# scrub:` directives (see [`Script::protected`]), which mean
    /// nothing to a reader of the result: a line that holds only a directive goes whole, a
    /// directive after code goes with the blanks before it.
    pub fn unmarked(&self) -> String {
        let text = self.text.as_str();
        let mut edits = Vec::new();
        for comment in self.comments() {
            let directive = text[comment.clone()].trim_start_matches('#').trim_start();
            if !directive.starts_with("scrub:") {
                continue;
            }
            let start = crate::edit::line_start(text, comment.start);
            let range = if text[start..comment.start].trim().is_empty() {
                start..crate::edit::line_end(text, comment.end)
            } else {
                text[..comment.start].trim_end_matches([' ', '\t']).len()..comment.end
            };
            edits.push(crate::edit::Edit::delete(range));
        }
        crate::edit::apply_edits(text, &edits).unwrap_or_else(|| text.to_string())
    }

    /// The source text of a node.
    pub fn slice(&self, node: &impl Ranged) -> &str {
        &self.text[node.range().start().to_usize()..node.range().end().to_usize()]
    }

    /// Whether the code of `node` breaks a line outside the brackets it opens itself
    /// (`a +⏎ b` as it stood inside a call's parentheses): moved where no bracket holds
    /// it, it needs parentheses of its own.
    pub fn breaks_line(&self, node: &impl Ranged) -> bool {
        use ruff_python_ast::token::TokenKind;
        let mut depth = 0usize;
        for token in self.parsed.tokens().in_range(node.range()) {
            match token.kind() {
                TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace => depth += 1,
                TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace => {
                    depth = depth.saturating_sub(1)
                }
                TokenKind::NonLogicalNewline | TokenKind::Comment if depth == 0 => return true,
                _ => {}
            }
        }
        false
    }

    /// The code of a simple statement written on one line: the line breaks inside its
    /// brackets (and a trailing comma before a closing bracket) dropped, others as one space;
    /// `None` when it holds a comment or a string that spans lines, or when the one line is
    /// not the same statement (a tuple of one element needs its comma).
    pub fn one_line(&self, stmt: &Stmt) -> Option<String> {
        let out = self.joined(stmt)?;
        let joined = Script::parse(out.as_str(), self.version)?;
        let same = match joined.body() {
            [one] => {
                ruff_python_ast::comparable::ComparableStmt::from(one)
                    == ruff_python_ast::comparable::ComparableStmt::from(stmt)
            }
            _ => false,
        };
        same.then_some(out)
    }

    /// The code of an expression written on one line, as [`Script::one_line`] writes a
    /// statement; `None` when it cannot be, or when the one line is not the same expression.
    pub fn one_line_expr(&self, expr: &Expr) -> Option<String> {
        let out = self.joined(expr)?;
        let joined = Script::parse(format!("({out})"), self.version)?;
        let same = match joined.body() {
            [Stmt::Expr(one)] => {
                ruff_python_ast::comparable::ComparableExpr::from(&*one.value)
                    == ruff_python_ast::comparable::ComparableExpr::from(expr)
            }
            _ => false,
        };
        same.then_some(out)
    }

    /// The tokens of `node` on one line (see [`Script::one_line`]), not checked.
    fn joined(&self, node: &impl Ranged) -> Option<String> {
        use ruff_python_ast::token::TokenKind;
        let text = self.text.as_str();
        let mut out = String::new();
        let mut previous: Option<TokenKind> = None;
        let mut at = node.range().start().to_usize();
        for token in self.parsed.tokens().in_range(node.range()) {
            let kind = token.kind();
            let range = span(token);
            match kind {
                TokenKind::Comment => return None,
                TokenKind::NonLogicalNewline | TokenKind::Newline => continue,
                _ if text[range.clone()].contains('\n') => return None,
                _ => {}
            }
            let gap = &text[at..range.start];
            let closing = matches!(kind, TokenKind::Rpar | TokenKind::Rsqb | TokenKind::Rbrace);
            if gap.contains('\n') {
                let opened = matches!(
                    previous,
                    Some(TokenKind::Lpar | TokenKind::Lsqb | TokenKind::Lbrace)
                );
                if closing && previous == Some(TokenKind::Comma) {
                    out.pop();
                } else if !opened && !closing {
                    out.push(' ');
                }
            } else {
                out.push_str(gap);
            }
            out.push_str(&text[range.clone()]);
            previous = Some(kind);
            at = range.end;
        }
        Some(out)
    }

    /// The source text of `expr` as it may stand in a tuple, as an argument or in place of
    /// a name: parenthesized unless atomic.
    pub fn operand(&self, expr: &Expr) -> String {
        let code = self.slice(expr);
        if is_atomic(expr) {
            code.to_string()
        } else {
            format!("({code})")
        }
    }
}

/// The first syntax error of `text` under `version`: its 1-based line and a message.
pub fn syntax_error(text: &str, version: PythonVersion) -> Option<(usize, String)> {
    let options = ParseOptions::from(Mode::Module).with_target_version(version);
    let parsed = ruff_python_parser::parse_unchecked(text, options);
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    if let Some(e) = parsed.errors().first() {
        return Some((line_of(e.location.start().to_usize()), e.error.to_string()));
    }
    let e = parsed.unsupported_syntax_errors().first()?;
    Some((line_of(e.range.start().to_usize()), e.to_string()))
}

/// Whether `text` parses without errors under `version`.
pub fn is_valid(text: &str, version: PythonVersion) -> bool {
    Script::parse(text, version).is_some()
}

/// Byte range of a node.
pub fn span(node: &impl Ranged) -> std::ops::Range<usize> {
    node.range().start().to_usize()..node.range().end().to_usize()
}

/// The statement lists nested directly in `stmt` (bodies, branches, handlers), in source order.
pub fn child_bodies(stmt: &Stmt) -> Vec<&[Stmt]> {
    match stmt {
        Stmt::FunctionDef(s) => vec![&s.body[..]],
        Stmt::ClassDef(s) => vec![&s.body[..]],
        Stmt::If(s) => std::iter::once(&s.body[..])
            .chain(s.elif_else_clauses.iter().map(|c| &c.body[..]))
            .collect(),
        Stmt::For(s) => [&s.body[..], &s.orelse[..]]
            .into_iter()
            .filter(|b| !b.is_empty())
            .collect(),
        Stmt::While(s) => [&s.body[..], &s.orelse[..]]
            .into_iter()
            .filter(|b| !b.is_empty())
            .collect(),
        Stmt::With(s) => vec![&s.body[..]],
        Stmt::Try(s) => std::iter::once(&s.body[..])
            .chain(s.handlers.iter().map(|h| match h {
                ast::ExceptHandler::ExceptHandler(h) => &h.body[..],
            }))
            .chain([&s.orelse[..], &s.finalbody[..]])
            .filter(|b| !b.is_empty())
            .collect(),
        Stmt::Match(s) => s.cases.iter().map(|c| &c.body[..]).collect(),
        _ => Vec::new(),
    }
}

/// The bodies of `script` that can run: all but those of a function nothing names (a smoke
/// test left behind, a test method whose runner is gone), which may go with their checks.
pub fn live_bodies(script: &Script) -> Vec<&[Stmt]> {
    let named: HashSet<&str> = referenced_names(script.body()).into_iter().collect();
    let mut out = vec![script.body()];
    let mut i = 0;
    while i < out.len() {
        for stmt in out[i] {
            if matches!(stmt, Stmt::FunctionDef(f) if !named.contains(f.name.as_str())) {
                continue;
            }
            out.extend(child_bodies(stmt));
        }
        i += 1;
    }
    out
}

/// Statements at every level of `text` (0 when it does not parse): the size measure of
/// delta debugging's bounds.
pub fn count_statements(text: &str, version: PythonVersion) -> usize {
    Script::parse(text, version).map_or(0, |s| all_bodies(s.body()).iter().map(|b| b.len()).sum())
}

/// Every statement list of the script, outermost first (breadth-first), the module body first.
pub fn all_bodies(body: &[Stmt]) -> Vec<&[Stmt]> {
    let mut out = vec![body];
    let mut i = 0;
    while i < out.len() {
        let current = out[i];
        for stmt in current {
            out.extend(child_bodies(stmt));
        }
        i += 1;
    }
    out
}

/// Collects every expression it walks, in source order.
struct Collect<'a>(Vec<&'a Expr>);

impl<'a> SourceOrderVisitor<'a> for Collect<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        self.0.push(expr);
        source_order::walk_expr(self, expr);
    }
}

/// How many statements of `body`, at any depth, follow a `return`, `raise`, `break` or
/// `continue` in their own block: code that never runs. A candidate that makes more (`if
/// compile: return compiled(x)` unwrapped above `return f(x)`) keeps a call only in name: a
/// rule that counts it (the eager reference of a compiled function) no longer sees it go.
pub fn dead_statements(body: &[Stmt]) -> usize {
    all_bodies(body)
        .into_iter()
        .map(|block| {
            block
                .iter()
                .position(|s| {
                    matches!(
                        s,
                        Stmt::Return(_) | Stmt::Raise(_) | Stmt::Break(_) | Stmt::Continue(_)
                    )
                })
                .map_or(0, |end| block.len() - end - 1)
        })
        .sum()
}

/// Every expression of the script, in source order.
pub fn all_exprs(body: &[Stmt]) -> Vec<&Expr> {
    let mut collect = Collect(Vec::new());
    collect.visit_body(body);
    collect.0
}

/// `expr` and every expression inside it, in source order.
pub fn exprs_of(expr: &Expr) -> Vec<&Expr> {
    let mut collect = Collect(Vec::new());
    collect.visit_expr(expr);
    collect.0
}

/// Whether `expr` is a literal.
pub fn is_literal(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::NumberLiteral(_)
            | Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
            | Expr::FString(_)
    )
}

/// Whether `expr` is made of literals and operators alone (`2**63 - 1`, `(3, [1.0])`).
pub fn literal_only(expr: &Expr) -> bool {
    exprs_of(expr).into_iter().all(|e| {
        is_plain_literal(e)
            || matches!(
                e,
                Expr::BinOp(_) | Expr::UnaryOp(_) | Expr::Tuple(_) | Expr::List(_)
            )
    })
}

/// Whether `expr` is a literal that evaluates nothing (an f-string evaluates its fields).
pub fn is_plain_literal(expr: &Expr) -> bool {
    is_literal(expr) && !matches!(expr, Expr::FString(_))
}

/// The value of each name that `body` binds exactly once, at any depth, by `name = value`
/// (a name also bound in any other assignment, an unpacking included, is left out).
pub fn single_bindings(body: &[Stmt]) -> std::collections::HashMap<&str, &Expr> {
    let mut seen: std::collections::HashMap<&str, Option<&Expr>> = std::collections::HashMap::new();
    for stmt in all_bodies(body).into_iter().flatten() {
        let Some((targets, value)) = assignment(stmt) else {
            continue;
        };
        for target in targets {
            let simple = matches!(target, Expr::Name(_)) && matches!(stmt, Stmt::Assign(_));
            for name in exprs_of(target)
                .into_iter()
                .filter_map(|e| e.as_name_expr())
            {
                seen.entry(name.id.as_str())
                    .and_modify(|v| *v = None)
                    .or_insert(simple.then_some(value));
            }
        }
    }
    seen.into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect()
}

/// Whether `expr` can stand anywhere an expression can without parentheses.
pub fn is_atomic(expr: &Expr) -> bool {
    match expr {
        Expr::Tuple(t) => t.parenthesized,
        Expr::Generator(g) => g.parenthesized,
        e if is_literal(e) => true,
        Expr::Name(_)
        | Expr::Attribute(_)
        | Expr::Call(_)
        | Expr::Subscript(_)
        | Expr::List(_)
        | Expr::Dict(_)
        | Expr::Set(_)
        | Expr::ListComp(_)
        | Expr::SetComp(_)
        | Expr::DictComp(_) => true,
        _ => false,
    }
}

/// The targets and the value of an assignment (`=`, augmented, or annotated with a value).
pub fn assignment(stmt: &Stmt) -> Option<(Vec<&Expr>, &Expr)> {
    match stmt {
        Stmt::Assign(a) => Some((a.targets.iter().collect(), &a.value)),
        Stmt::AugAssign(a) => Some((vec![&*a.target], &a.value)),
        Stmt::AnnAssign(a) => a.value.as_deref().map(|v| (vec![&*a.target], v)),
        _ => None,
    }
}

/// The names that the imports anywhere in `body` bind: `import a.b` binds `a`, `import m as
/// n` binds `n`; with `from`, also the names that `from m import x` statements bind.
pub fn imported_names(body: &[Stmt], from: bool) -> HashSet<&str> {
    let mut names = HashSet::new();
    for stmt in all_bodies(body).into_iter().flatten() {
        match stmt {
            Stmt::Import(import) => {
                names.extend(import.names.iter().map(|alias| match &alias.asname {
                    Some(name) => name.as_str(),
                    None => alias.name.as_str().split('.').next().unwrap_or_default(),
                }))
            }
            Stmt::ImportFrom(import) if from => names.extend(
                import
                    .names
                    .iter()
                    .map(|alias| alias.asname.as_ref().unwrap_or(&alias.name).as_str()),
            ),
            _ => {}
        }
    }
    names
}

/// Every name that the script reads or writes as an identifier expression or attribute,
/// used to decide whether a definition or an import is referenced.
pub fn referenced_names(body: &[Stmt]) -> Vec<&str> {
    let mut names = Vec::new();
    for expr in all_exprs(body) {
        match expr {
            Expr::Name(n) => names.push(n.id.as_str()),
            Expr::Attribute(a) => names.push(a.attr.as_str()),
            _ => {}
        }
    }
    names
}

/// The names of every function and class the script defines, at any depth.
pub fn defined_names(body: &[Stmt]) -> HashSet<&str> {
    all_bodies(body)
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(f) => Some(f.name.as_str()),
            Stmt::ClassDef(c) => Some(c.name.as_str()),
            _ => None,
        })
        .collect()
}

/// The top-level modules `text` imports (absolute imports only, `__future__` left out), in
/// order of first import.
pub fn imported_modules(text: &str, version: PythonVersion) -> Vec<String> {
    let Some(script) =
        Script::parse(text, version).or_else(|| Script::parse(text, PythonVersion::latest()))
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let top = name.split('.').next().unwrap_or(name).to_string();
        if !top.is_empty() && top != "__future__" && !out.contains(&top) {
            out.push(top);
        }
    };
    for body in all_bodies(script.body()) {
        for stmt in body {
            match stmt {
                Stmt::Import(i) => i.names.iter().for_each(|a| add(a.name.as_str())),
                Stmt::ImportFrom(i) if i.level == 0 => {
                    if let Some(m) = &i.module {
                        add(m.as_str());
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_keeps_its_code_and_loses_the_directives() {
        let text = "import torch\ntorch.manual_seed(0)  # scrub: keep\n# scrub: keep-begin\nx = 1  # why\n    # scrub: keep-end\ny = x # scrub:keep\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(
            script.unmarked(),
            "import torch\ntorch.manual_seed(0)\nx = 1  # why\ny = x\n"
        );
    }

    #[test]
    fn statements_after_a_return_are_dead() {
        let text = "def f(x, compile=False):\n    if compile:\n        return g(x)\n    return x\nfor i in y:\n    continue\n    print(i)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        assert_eq!(dead_statements(script.body()), 1);
        let unwrapped = "def f(x, compile=False):\n    return g(x)\n    return x\n";
        let script = Script::parse(unwrapped, PythonVersion::PY311).unwrap();
        assert_eq!(dead_statements(script.body()), 1);
    }
}
