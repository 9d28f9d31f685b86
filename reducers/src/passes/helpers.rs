//! What several passes share: matching arguments to parameters, deleting statements, moving a
//! body to another indentation, ordering and combining candidates.

use std::collections::HashSet;
use std::ops::Range;

use crate::edit::{
    Candidate, Edit, apply_edits_within, comments_above, deletion_range, indent_at, line_end,
    line_start, reindent, starts_line,
};
use crate::python::{
    Expr, Ranged, Script, SourceOrderVisitor, Stmt, all_exprs, ast, is_valid, source_order, span,
};

/// The name of the first parameter of a method: its `self`.
pub(crate) fn first_param(f: &ast::StmtFunctionDef) -> Option<&str> {
    let params = &f.parameters;
    let first = params.posonlyargs.first().or(params.args.first())?;
    Some(first.parameter.name.as_str())
}

/// The argument each of the slots `names` receives from a call: the positional arguments in
/// order to the first `positional` slots, the keywords by name; `None` for a slot left to its
/// default. `None` overall for a `*` or `**` argument, too many positional arguments, or a
/// keyword that names no slot or one already given.
pub(crate) fn match_arguments<'a>(
    names: &[&str],
    positional: usize,
    arguments: &'a ast::Arguments,
) -> Option<Vec<Option<&'a Expr>>> {
    if arguments.args.len() > positional
        || arguments.args.iter().any(|a| matches!(a, Expr::Starred(_)))
    {
        return None;
    }
    let mut given: Vec<Option<&Expr>> = vec![None; names.len()];
    for (slot, arg) in given.iter_mut().zip(&arguments.args) {
        *slot = Some(arg);
    }
    for keyword in &arguments.keywords {
        let name = keyword.arg.as_deref()?;
        let i = names.iter().position(|n| *n == name)?;
        if given[i].replace(&keyword.value).is_some() {
            return None;
        }
    }
    Some(given)
}

/// Whether `expr` is assigned to or deleted.
pub(crate) fn is_target(expr: &Expr) -> bool {
    let ctx = match expr {
        Expr::Name(e) => e.ctx,
        Expr::Attribute(e) => e.ctx,
        Expr::Subscript(e) => e.ctx,
        Expr::Tuple(e) => e.ctx,
        Expr::List(e) => e.ctx,
        Expr::Starred(e) => e.ctx,
        _ => return false,
    };
    matches!(ctx, ast::ExprContext::Store | ast::ExprContext::Del)
}

/// The last name of a callee: `randn` for `torch.randn`, `normal_` for `x.normal_`.
pub(crate) fn callee_name(func: &Expr) -> Option<&str> {
    match func {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

/// `SegHead` as `seg_head`, `ConstantLR` as `constant_lr`, `HTTPServer` as `http_server`: a
/// run of capitals is one word.
pub(crate) fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let after_word = i > 0 && !chars[i - 1].is_uppercase();
            let acronym_ends = i > 0
                && chars[i - 1].is_uppercase()
                && chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if (after_word || acronym_ends) && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `s` can name a variable, a keyword argument or an attribute.
pub(crate) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The edit that removes the statements `stmts` (consecutive, from one block); when they are
/// the whole body of a compound statement, the body becomes `pass` so that it still parses.
/// Either way the comment lines directly above the statements go with them.
pub(crate) fn delete_stmts(script: &Script, stmts: &[Stmt], whole_body: bool) -> Edit {
    if !whole_body {
        let range = stmts[0].start().to_usize()..stmts[stmts.len() - 1].end().to_usize();
        return Edit::delete(deletion_range(script.text(), range));
    }
    replace_stmts(script, stmts, "pass")
}

/// The edit that puts the one statement `filler` in place of `stmts` (and the comments
/// above them).
pub(crate) fn replace_stmts(script: &Script, stmts: &[Stmt], filler: &str) -> Edit {
    let text = script.text();
    let range = stmts[0].start().to_usize()..stmts[stmts.len() - 1].end().to_usize();
    if starts_line(text, range.start) {
        let indent = indent_at(text, range.start);
        let lines = comments_above(text, line_start(text, range.start))..line_end(text, range.end);
        Edit::replace(lines, format!("{indent}{filler}\n"))
    } else {
        Edit::replace(range, filler)
    }
}

/// Whether `body` yields outside nested functions, classes and lambdas: the function it
/// belongs to is a generator.
pub(crate) fn yields(body: &[Stmt]) -> bool {
    suspends(body, false)
}

/// Whether `body` yields, or with `awaits` awaits, outside nested functions, classes and
/// lambdas.
pub(crate) fn suspends(body: &[Stmt], awaits: bool) -> bool {
    struct Finds {
        awaits: bool,
        found: bool,
    }
    impl<'a> SourceOrderVisitor<'a> for Finds {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                source_order::walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Yield(_) | Expr::YieldFrom(_) => self.found = true,
                Expr::Await(_) if self.awaits => self.found = true,
                Expr::Lambda(_) => {}
                _ => source_order::walk_expr(self, expr),
            }
        }
    }
    let mut finds = Finds {
        awaits,
        found: false,
    };
    finds.visit_body(body);
    finds.found
}

/// The edit that removes statement `i` of `body`: `pass` takes its place when it is all that
/// a block other than the module holds.
pub(crate) fn delete_stmt(script: &Script, body: &[Stmt], i: usize, is_module: bool) -> Edit {
    delete_stmts(script, &body[i..=i], body.len() == 1 && !is_module)
}

/// The width, in characters, of the line holding `range` once `range` reads `replacement`.
pub(crate) fn width_with(text: &str, range: &Range<usize>, replacement: &str) -> usize {
    let start = line_start(text, range.start);
    let end = text[range.end..]
        .find('\n')
        .map_or(text.len(), |i| range.end + i);
    text[start..range.start].chars().count()
        + replacement.chars().count()
        + text[range.end..end].chars().count()
}

/// Whether `edit` leaves the text as it is.
pub(crate) fn is_no_op(text: &str, edit: &Edit) -> bool {
    text.get(edit.range.clone()) == Some(edit.replacement.as_str())
}

/// Drops every candidate whose edits an earlier one already has.
pub(crate) fn dedup(candidates: &mut Vec<Candidate>) {
    let mut seen = HashSet::new();
    candidates.retain(|c| seen.insert(c.edits.clone()));
}

/// Orders candidates by how many bytes they remove, most first; ties keep source order.
pub(crate) fn largest_first(candidates: &mut [Candidate]) {
    candidates.sort_by_key(|c| std::cmp::Reverse(removed(c)));
}

/// The bytes a candidate removes (negative when it grows the script).
pub(crate) fn removed(c: &Candidate) -> isize {
    c.edits
        .iter()
        .map(|e| e.range.len() as isize - e.replacement.len() as isize)
        .sum()
}

/// The text of the whole lines a body spans, with the comment lines directly above its first
/// statement, moved from its own indentation to `to`; the insides of multi-line strings keep
/// theirs. `None` when the body shares a line with its header and has more than one line.
pub(crate) fn body_at_indent(script: &Script, body: &[Stmt], to: &str) -> Option<String> {
    body_at_indent_with(script, body, to, Vec::new())
}

/// [`body_at_indent`] with `edits`, which lie inside the body, applied too.
pub(crate) fn body_at_indent_with(
    script: &Script,
    body: &[Stmt],
    to: &str,
    mut edits: Vec<Edit>,
) -> Option<String> {
    let text = script.text();
    let first = span(&body[0]);
    let last = span(&body[body.len() - 1]);
    if starts_line(text, first.start) {
        let from = indent_at(text, first.start);
        let lines = comments_above(text, line_start(text, first.start))..line_end(text, last.end);
        edits.extend(reindent(
            text,
            lines.clone(),
            from,
            to,
            &multi_line_strings(script, body),
        ));
        let mut out = apply_edits_within(text, lines, &edits)?;
        if !out.ends_with('\n') {
            out.push('\n');
        }
        Some(out)
    } else {
        let one = first.start..last.end;
        if text[one.clone()].contains('\n') {
            return None;
        }
        Some(format!("{to}{}\n", apply_edits_within(text, one, &edits)?))
    }
}

/// The ranges of the string literals in `body` that span several lines.
pub(crate) fn multi_line_strings(script: &Script, body: &[Stmt]) -> Vec<Range<usize>> {
    all_exprs(body)
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_)
            ) && script.slice(*e).contains('\n')
        })
        .map(span)
        .collect()
}

/// The ranges of the f-strings of `script`.
pub(crate) fn f_strings(script: &Script) -> Vec<Range<usize>> {
    all_exprs(script.body())
        .into_iter()
        .filter(|e| matches!(e, Expr::FString(_)))
        .map(span)
        .collect()
}

/// Whether `edits`, when one of them reaches into one of `f_strings` (see [`f_strings`]),
/// leave a script that parses as the version `script` was parsed as: before Python 3.12 a
/// replacement field cannot hold the f-string's own quote, a backslash or a comment, so what
/// a field takes depends on the version. Edits that touch no f-string are taken as they are.
pub(crate) fn fits_f_strings(script: &Script, f_strings: &[Range<usize>], edits: &[Edit]) -> bool {
    let touches = |e: &Edit| {
        f_strings
            .iter()
            .any(|f| f.start < e.range.end && e.range.start < f.end)
    };
    !edits.iter().any(touches)
        || crate::edit::apply_edits(script.text(), edits)
            .is_some_and(|text| is_valid(&text, script.version()))
}

/// The first line of a code snippet, cut to 40 characters, for descriptions.
pub(crate) fn short(code: &str) -> String {
    let line = code.lines().next().unwrap_or("");
    let cut: String = line.chars().take(40).collect();
    if cut.len() < code.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

/// One candidate made of all of `parts` that do not overlap an earlier one, when that is
/// at least two of them: the "everything of this kind at once" try that precedes the singles.
pub(crate) fn combine(description: &str, parts: &[Candidate]) -> Option<Candidate> {
    let mut taken: Vec<&Candidate> = Vec::new();
    for part in parts {
        if taken.iter().all(|t| t.is_disjoint(part)) {
            taken.push(part);
        }
    }
    (taken.len() > 1).then(|| {
        Candidate::new(
            description,
            taken.iter().flat_map(|c| c.edits.iter().cloned()).collect(),
        )
    })
}

/// The text after each candidate of `pass` on `text` (parsed as Python 3.11), for tests.
/// The string literals a library call is given as a token (at most 16 characters, no
/// whitespace: `sqlite3.connect(":memory:")`, `np.dtype("float32")`; a builtin's are not
/// counted): a name the library looks up, a mode, a sentinel. Shrunk, it is
/// another request (`":"` is a file on disk), not a smaller one; the value passes leave them.
pub(crate) fn library_tokens(script: &Script) -> Vec<Range<usize>> {
    let imports = crate::torch::imports(script, |_| true);
    let token = |e: &Expr| match e {
        Expr::StringLiteral(s) => {
            let value = s.value.to_str();
            !value.is_empty() && value.chars().count() <= 16 && !value.contains(char::is_whitespace)
        }
        _ => false,
    };
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        if crate::torch::torch_path(&imports, &call.func).is_none() {
            continue;
        }
        let args = call.arguments.args.iter();
        let keywords = call.arguments.keywords.iter().map(|k| &k.value);
        out.extend(args.chain(keywords).filter(|a| token(a)).map(span));
    }
    out
}

/// Whether a function of that name draws random numbers (`randn`, `uniform_`, `rand_like`,
/// `random.choice`).
pub(crate) fn is_random_function(name: &str) -> bool {
    const DRAWS: &[&str] = &[
        "randn",
        "rand",
        "randint",
        "randperm",
        "normal",
        "bernoulli",
        "multinomial",
        "random",
        "uniform",
        "choice",
        "choices",
        "shuffle",
        "sample",
        "gauss",
        "randrange",
    ];
    let name = name.trim_end_matches('_');
    let name = name.strip_suffix("_like").unwrap_or(name);
    DRAWS.contains(&name)
}

/// Whether `call` calls something other than a function or class the script defines (one
/// of `defined`, see [`crate::python::defined_names`]): a library's.
pub(crate) fn calls_library(call: &ast::ExprCall, defined: &HashSet<&str>) -> bool {
    !callee_name(&call.func).is_some_and(|n| defined.contains(n))
}

/// The parts of `body` when it is a name of two or more parts joined by `.`, `:` or `::`
/// (`torch.nn.Linear`, `aten::add.Tensor`, `pkg.mod:func`), as ranges.
pub fn qualified_parts(body: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in body.char_indices() {
        if c == '.' || c == ':' {
            if start < i {
                parts.push(start..i);
            }
            start = i + 1;
        } else if !(c.is_alphanumeric() || c == '_') {
            return None;
        }
    }
    if start < body.len() {
        parts.push(start..body.len());
    }
    let joined = parts.len() >= 2
        && parts.first().is_some_and(|p| p.start == 0)
        && parts.last().is_some_and(|p| p.end == body.len())
        && parts
            .windows(2)
            .all(|w| matches!(&body[w[0].end..w[1].start], "." | ":" | "::"));
    joined.then_some(parts)
}

#[cfg(test)]
pub(crate) fn candidate_texts(pass: &dyn crate::pass::Pass, text: &str) -> Vec<String> {
    let script = Script::parse(text, crate::python::PythonVersion::PY311).expect("fixture parses");
    pass.candidates(&script)
        .iter()
        .map(|c| c.apply(text).expect("edits apply"))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn snake_case_keeps_acronyms_whole() {
        for (name, snake) in [
            ("SegHead", "seg_head"),
            ("ConstantLR", "constant_lr"),
            ("HTTPServer", "http_server"),
            ("conv2d", "conv2d"),
            ("Conv2d", "conv2d"),
            ("_Private", "_private"),
        ] {
            assert_eq!(super::snake_case(name), snake);
        }
    }
}
