//! Remove `if __name__ == "__main__":` guards and `main()` indirection.
//!
//! ## What it removes
//! A module-level function without required parameters that is called exactly once, as a
//! statement of its own outside any function (`main()`, `sys.exit(main())`,
//! `raise SystemExit(main())`), is inlined: the call becomes the function's body (parameters
//! with defaults become assignments; a trailing `return` goes, and the value it returns stays
//! as a statement unless it is a name or a literal) and the `def` is deleted. When the call is
//! all that a `__name__` guard holds, the guard goes too. (A guard on its own is replaced by
//! its body by unwrap_blocks, which runs first.)
//!
//! ## Example
//! ```python
//! def main():                      # before
//!     run(load())
//! if __name__ == "__main__":
//!     main()
//!
//! run(load())                      # after
//! ```
//!
//! ## When it cannot apply
//! A function with a `return` other than its last statement, a required parameter, more than
//! one reference to its name, or a `yield` or `await` (a generator's body does not run when
//! it is called); a call that shares its line with the header of its block.

use super::lines_label;
use crate::edit::{Candidate, Edit, deletion_range, indent_at, line_end, line_start, starts_line};
use crate::pass::Pass;
use crate::python::{
    Expr, Script, SourceOrderVisitor, Stmt, ast, child_bodies, referenced_names, source_order, span,
};

pub struct InlineMain;

impl Pass for InlineMain {
    fn name(&self) -> &'static str {
        "inline_main"
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let mut out = Vec::new();
        let names = referenced_names(script.body());
        for stmt in script.body() {
            let Stmt::FunctionDef(def) = stmt else {
                continue;
            };
            if def.is_async || names.iter().filter(|n| **n == def.name.as_str()).count() != 1 {
                continue;
            }
            if let Some(candidate) = inline(script, def) {
                out.push(candidate);
            }
        }
        out
    }
}

/// The candidate that inlines `def` at its one call statement.
fn inline(script: &Script, def: &ast::StmtFunctionDef) -> Option<Candidate> {
    let text = script.text();
    let name = def.name.as_str();
    let (call_stmt, guard) = find_call_statement(script.body(), name, None)?;
    // The site to replace: the whole guard when the call is all it holds.
    let site = match guard {
        Some(g) if g.body.len() == 1 && g.elif_else_clauses.is_empty() => span(g),
        _ => span(call_stmt),
    };
    if !starts_line(text, site.start) || span(def).contains(&site.start) {
        return None;
    }
    // A trailing `return` goes; the value it returns is still computed, unless computing
    // it cannot do anything.
    let mut body: &[Stmt] = &def.body;
    let mut edits = Vec::new();
    if let Some(Stmt::Return(ret)) = body.last() {
        if body[..body.len() - 1].iter().any(has_return) {
            return None;
        }
        match ret.value.as_deref() {
            Some(value) if !is_inert(value) => {
                edits.push(Edit::delete(span(ret).start..span(value).start));
            }
            _ => body = &body[..body.len() - 1],
        }
    } else if body.iter().any(has_return) {
        return None;
    }
    if is_generator(body) {
        return None;
    }
    let indent = indent_at(text, site.start);
    let mut replacement = String::new();
    let params = &def.parameters;
    let default = |p: &ast::ParameterWithDefault| {
        let value = p.default.as_deref()?;
        Some(format!(
            "{indent}{} = {}\n",
            p.parameter.name,
            script.slice(value)
        ))
    };
    for p in params.posonlyargs.iter().chain(&params.args) {
        replacement.push_str(&default(p)?);
    }
    if let Some(p) = &params.vararg {
        replacement.push_str(&format!("{indent}{} = ()\n", p.name));
    }
    for p in &params.kwonlyargs {
        replacement.push_str(&default(p)?);
    }
    if let Some(p) = &params.kwarg {
        replacement.push_str(&format!("{indent}{} = {{}}\n", p.name));
    }
    if body.is_empty() {
        replacement.push_str(&format!("{indent}pass\n"));
    } else {
        replacement.push_str(&super::body_at_indent_with(script, body, indent, edits)?);
    }
    let site_lines = line_start(text, site.start)..line_end(text, site.end);
    Some(Candidate::new(
        format!("inline {name}() at {}", lines_label(text, &site)),
        vec![
            Edit::replace(site_lines, replacement),
            Edit::delete(deletion_range(text, span(def))),
        ],
    ))
}

/// The statement that calls `name` on its own, and the `__name__` guard around it, if any.
fn find_call_statement<'a>(
    body: &'a [Stmt],
    name: &str,
    guard: Option<&'a ast::StmtIf>,
) -> Option<(&'a Stmt, Option<&'a ast::StmtIf>)> {
    for stmt in body {
        if calls_alone(stmt, name) {
            return Some((stmt, guard));
        }
        if let Stmt::FunctionDef(_) | Stmt::ClassDef(_) = stmt {
            continue;
        }
        let inner_guard = match stmt {
            Stmt::If(s) if is_main_guard(&s.test) => Some(s),
            _ => None,
        };
        for inner in child_bodies(stmt) {
            if let Some(found) = find_call_statement(inner, name, inner_guard) {
                return Some(found);
            }
        }
    }
    None
}

/// `name()`, `sys.exit(name())`, `exit(name())` or `raise SystemExit(name())` as a statement.
fn calls_alone(stmt: &Stmt, name: &str) -> bool {
    let expr = match stmt {
        Stmt::Expr(e) => &*e.value,
        Stmt::Raise(r) => match &r.exc {
            Some(e) => &**e,
            None => return false,
        },
        _ => return false,
    };
    is_bare_call(expr, name)
        || matches!(expr, Expr::Call(outer)
            if is_exit(&outer.func)
                && outer.arguments.keywords.is_empty()
                && matches!(&*outer.arguments.args, [inner] if is_bare_call(inner, name)))
}

fn is_bare_call(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Call(call)
        if call.arguments.is_empty()
            && matches!(&*call.func, Expr::Name(n) if n.id.as_str() == name))
}

fn is_exit(func: &Expr) -> bool {
    match func {
        Expr::Name(n) => matches!(n.id.as_str(), "exit" | "quit" | "SystemExit"),
        Expr::Attribute(a) => a.attr.as_str() == "exit",
        _ => false,
    }
}

/// `__name__ == "__main__"`, either way round.
pub(crate) fn is_main_guard(test: &Expr) -> bool {
    let Expr::Compare(cmp) = test else {
        return false;
    };
    let [ast::CmpOp::Eq] = &*cmp.ops else {
        return false;
    };
    let [right] = &*cmp.comparators else {
        return false;
    };
    let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == "__name__");
    let is_main = |e: &Expr| matches!(e, Expr::StringLiteral(s) if s.value.to_str() == "__main__");
    (is_name(&cmp.left) && is_main(right)) || (is_main(&cmp.left) && is_name(right))
}

/// Whether evaluating `expr` can have no effect: a name or a literal.
fn is_inert(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Name(_)
            | Expr::NumberLiteral(_)
            | Expr::StringLiteral(_)
            | Expr::BytesLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::EllipsisLiteral(_)
    )
}

/// Whether `body` yields or awaits outside nested functions, classes and lambdas: calling
/// such a function does not run its body, and the body does not compile at module level.
fn is_generator(body: &[Stmt]) -> bool {
    struct Finds(bool);
    impl<'a> SourceOrderVisitor<'a> for Finds {
        fn visit_stmt(&mut self, stmt: &'a Stmt) {
            if !matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
                source_order::walk_stmt(self, stmt);
            }
        }
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) => self.0 = true,
                Expr::Lambda(_) => {}
                _ => source_order::walk_expr(self, expr),
            }
        }
    }
    let mut finds = Finds(false);
    finds.visit_body(body);
    finds.0
}

/// Whether a `return` is reached in `stmt` outside nested functions and classes.
fn has_return(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Return(_) => true,
        Stmt::FunctionDef(_) | Stmt::ClassDef(_) => false,
        _ => child_bodies(stmt).into_iter().flatten().any(has_return),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::candidate_texts(&InlineMain, text)
    }

    #[test]
    fn the_value_of_a_trailing_return_is_still_computed() {
        let text = "def main():\n    return run()\nmain()\n";
        assert_eq!(results(text), ["run()\n"]);
    }

    #[test]
    fn a_trailing_return_of_a_name_or_literal_goes_whole() {
        let text = "def main():\n    run()\n    return 0\nmain()\n";
        assert_eq!(results(text), ["run()\n"]);
    }

    #[test]
    fn a_generator_is_not_inlined() {
        assert!(results("def main():\n    yield 1\nmain()\n").is_empty());
    }

    #[test]
    fn the_comment_above_the_first_statement_stays() {
        let text = "def main():\n    # why\n    run()\nmain()\n";
        assert_eq!(results(text), ["# why\nrun()\n"]);
    }
}
