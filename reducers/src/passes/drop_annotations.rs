//! Drop type annotations.
//!
//! ## What it removes
//! The annotations of parameters, of return values and of assignments: `def f(a: int = 1) -> str`
//! becomes `def f(a = 1)`, and `x: Dict = {}` becomes `x = {}`, a plain assignment that the
//! other passes know how to propagate. The `typing` imports they used then go as unused. All
//! annotations at once first, then those of each function and each assignment alone.
//!
//! ## Example
//! ```python
//! TAGS: Dict[str, Callable] = {"if": tag_if}     # before
//! def render(tokens: List[Token]) -> str:
//!
//! TAGS = {"if": tag_if}                          # after
//! def render(tokens):
//! ```
//!
//! ## When it cannot apply
//! An annotation without a value (`x: int`, a dataclass field's declaration) stays: it is
//! what declares the name.

use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::{Ranged, Script, Stmt, all_bodies, ast, span};

pub struct DropAnnotations;

impl Pass for DropAnnotations {
    fn info(&self) -> PassInfo {
        PassInfo::new("drop_annotations")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut each = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let edits = match stmt {
                    Stmt::FunctionDef(f) => function_edits(f),
                    Stmt::AnnAssign(a) => match &a.value {
                        Some(value) => vec![Edit::replace(
                            a.target.end().to_usize()..value.start().to_usize(),
                            " = ",
                        )],
                        None => Vec::new(),
                    },
                    _ => Vec::new(),
                };
                if !edits.is_empty() {
                    let line = line_of(text, span(stmt).start);
                    each.push(Candidate::new(
                        format!("drop the annotations at line {line}"),
                        edits,
                    ));
                }
            }
        }
        let mut out = Vec::new();
        if each.len() > 1 {
            let all = each.iter().flat_map(|c| c.edits.iter().cloned()).collect();
            out.push(Candidate::new("drop every annotation", all));
        }
        out.extend(each);
        out
    }
}

/// The edits that remove the annotations of a function's parameters and return value.
fn function_edits(f: &ast::StmtFunctionDef) -> Vec<Edit> {
    let params = &f.parameters;
    let mut edits: Vec<Edit> = params
        .iter()
        .filter_map(|p| {
            let parameter = p.as_parameter();
            let annotation = parameter.annotation.as_deref()?;
            Some(Edit::delete(
                parameter.name.end().to_usize()..annotation.end().to_usize(),
            ))
        })
        .collect();
    if let Some(returns) = &f.returns {
        edits.push(Edit::delete(
            params.end().to_usize()..returns.end().to_usize(),
        ));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DropAnnotations, text)
    }

    #[test]
    fn drops_parameter_return_and_assignment_annotations() {
        let texts = results(
            "def f(a: int, b: str = 'x', *c: int, **d: int) -> str:\n    v: int = a\n    w: int\n",
        );
        assert_eq!(
            texts[0], "def f(a, b = 'x', *c, **d):\n    v = a\n    w: int\n",
            "{texts:?}"
        );
        assert_eq!(texts.len(), 3, "{texts:?}");
    }

    #[test]
    fn a_script_without_annotations_has_no_candidates() {
        assert!(results("def f(a, b=1):\n    return a\n").is_empty());
    }
}
