//! The generic passes, one per file; each file's doc comment is the pass's manual.

mod argparse_defaults;
mod bind_arguments;
mod cpu_float32;
mod delete_arguments;
mod delete_definitions;
mod delete_elements;
mod delete_statements;
mod drop_annotations;
mod drop_empty_classes;
mod drop_imports;
mod drop_parentheses;
mod drop_setup;
mod first_elements;
mod flatten_classes;
mod fold_aliases;
mod fold_dataclasses;
mod freeze_values;
mod hoist_expressions;
mod inline_calls;
mod jump_to_crash;
mod lambda_functions;
mod module_moves;
mod propagate_values;
mod reseed;
mod serial_maps;
mod shrink_dims;
mod shrink_literals;
mod shrink_values;
mod simpler_backend;
mod strip_comments;
mod tidy_blank_lines;
mod unroll_loops;
mod unwrap_blocks;
mod unwrap_modules;

pub use argparse_defaults::ArgparseDefaults;
pub use bind_arguments::BindArguments;
pub use cpu_float32::CpuFloat32;
pub use delete_arguments::DeleteArguments;
pub use delete_definitions::DeleteDefinitions;
pub use delete_elements::DeleteElements;
pub use delete_statements::DeleteStatements;
pub use drop_annotations::DropAnnotations;
pub use drop_empty_classes::DropEmptyClasses;
pub use drop_imports::DropImports;
pub use drop_parentheses::DropParentheses;
pub use drop_setup::DropSetup;
pub use first_elements::FirstElements;
pub use flatten_classes::FlattenClasses;
pub use fold_aliases::FoldAliases;
pub use fold_dataclasses::FoldDataclasses;
pub(crate) use fold_dataclasses::misfit_constructions;
pub use freeze_values::FreezeValues;
pub use hoist_expressions::HoistExpressions;
pub use inline_calls::InlineCalls;
pub use jump_to_crash::JumpToCrash;
pub use lambda_functions::LambdaFunctions;
pub use module_moves::ModuleMoves;
pub use propagate_values::PropagateValues;
pub use reseed::Reseed;
pub use serial_maps::SerialMaps;
pub use shrink_dims::ShrinkDims;
pub use shrink_literals::ShrinkLiterals;
pub use shrink_values::ShrinkValues;
pub use simpler_backend::SimplerBackend;
pub use strip_comments::StripComments;
pub use tidy_blank_lines::TidyBlankLines;
pub use unroll_loops::UnrollLoops;
pub use unwrap_blocks::UnwrapBlocks;
pub use unwrap_modules::UnwrapModules;

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::edit::{
    Candidate, Edit, apply_edits_within, comments_above, deletion_range, indent_at, line_end,
    line_start, reindent, starts_line,
};
use crate::python::{Expr, Ranged, Script, Stmt, all_bodies, all_exprs, ast, span};

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

/// Whether `s` can name a variable, a keyword argument or an attribute.
pub(crate) fn is_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].bytes().filter(|&b| b == b'\n').count() + 1
}

/// "line 4" or "lines 4-9" for a byte range.
pub(crate) fn lines_label(text: &str, range: &std::ops::Range<usize>) -> String {
    let first = line_of(text, range.start);
    let last = line_of(text, range.end.saturating_sub(1).max(range.start));
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// The edit that removes the statements `stmts` (consecutive, from one block); when they are
/// the whole body of a compound statement, the body becomes `pass` so that it still parses.
/// Either way the comment lines directly above the statements go with them.
pub(crate) fn delete_stmts(script: &Script, stmts: &[Stmt], whole_body: bool) -> Edit {
    let text = script.text();
    let range = stmts[0].start().to_usize()..stmts[stmts.len() - 1].end().to_usize();
    if !whole_body {
        return Edit::delete(deletion_range(text, range));
    }
    if starts_line(text, range.start) {
        let indent = indent_at(text, range.start);
        let lines = comments_above(text, line_start(text, range.start))..line_end(text, range.end);
        Edit::replace(lines, format!("{indent}pass\n"))
    } else {
        Edit::replace(range, "pass")
    }
}

/// The edit that removes statement `i` of `body`: `pass` takes its place when it is all that
/// a block other than the module holds.
pub(crate) fn delete_stmt(script: &Script, body: &[Stmt], i: usize, is_module: bool) -> Edit {
    delete_stmts(script, &body[i..=i], body.len() == 1 && !is_module)
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

/// The names a script's imports bind to torch and its submodules and objects, with the dotted
/// path each stands for: `torch` → `torch`, `nn` → `torch.nn` (from `import torch.nn as nn`
/// or `from torch import nn`), `Linear` → `torch.nn.Linear`. Empty when the script imports
/// nothing from torch, which is how the torch passes know to propose nothing.
pub(crate) fn torch_imports(script: &Script) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let is_torch = |module: &str| module == "torch" || module.starts_with("torch.");
    for body in all_bodies(script.body()) {
        for stmt in body {
            match stmt {
                Stmt::Import(import) => {
                    for alias in &import.names {
                        let module = alias.name.as_str();
                        if !is_torch(module) {
                            continue;
                        }
                        match &alias.asname {
                            Some(asname) => out.insert(asname.to_string(), module.to_string()),
                            // `import torch.nn` binds `torch`, not `torch.nn`.
                            None => out.insert("torch".to_string(), "torch".to_string()),
                        };
                    }
                }
                Stmt::ImportFrom(from) if from.level == 0 => {
                    let Some(module) = from.module.as_ref().map(|m| m.as_str()) else {
                        continue;
                    };
                    if !is_torch(module) {
                        continue;
                    }
                    for alias in &from.names {
                        let name = alias.name.as_str();
                        if name != "*" {
                            let bound = alias.asname.as_ref().map_or(name, |a| a.as_str());
                            out.insert(bound.to_string(), format!("{module}.{name}"));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// The dotted torch path a name or attribute chain stands for under `imports` (see
/// [`torch_imports`]): `nn.Linear` → `torch.nn.Linear`; `None` when it does not start with a
/// name bound by a torch import.
pub(crate) fn torch_path(imports: &HashMap<String, String>, expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(name) => imports.get(name.id.as_str()).cloned(),
        Expr::Attribute(attribute) => Some(format!(
            "{}.{}",
            torch_path(imports, &attribute.value)?,
            attribute.attr
        )),
        _ => None,
    }
}

/// The text after each candidate of `pass` on `text` (parsed as Python 3.11), for tests.
#[cfg(test)]
pub(crate) fn candidate_texts(pass: &dyn crate::pass::Pass, text: &str) -> Vec<String> {
    let script = Script::parse(text, crate::python::PythonVersion::PY311).expect("fixture parses");
    pass.candidates(&script)
        .iter()
        .map(|c| c.apply(text).expect("edits apply"))
        .collect()
}
