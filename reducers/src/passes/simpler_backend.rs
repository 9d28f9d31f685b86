//! Step `torch.compile` down its backend ladder and drop its tuning keywords.
//!
//! ## What it removes
//! For every `torch.compile(...)` call, decorator calls `@torch.compile(...)` included, and
//! every bare `@torch.compile` decorator:
//! - one rung down the backend ladder `inductor` → `aot_eager` → `eager`: `backend="inductor"`
//!   or no `backend=` at all (the default is inductor) becomes `backend="aot_eager"`, and
//!   `backend="aot_eager"` becomes `backend="eager"`; other backends stay;
//! - then each of the `mode=`, `options=`, `dynamic=` and `fullgraph=` keywords alone, in
//!   source order.
//!
//! The descriptions are a stable format, which tools read to tell on which rung a failure
//! stops:
//! - `backend inductor → aot_eager at line N`
//! - `backend aot_eager → eager at line N`
//! - `drop KEYWORD= from torch.compile at line N`
//!
//! where `N` is the line of the `torch.compile` call (or decorator).
//!
//! ## Example
//! ```python
//! @torch.compile(mode="max-autotune")        # before
//! @torch.compile(mode="max-autotune", backend="aot_eager")   # after the first rung
//! ```
//!
//! ## When it cannot apply
//! Scripts that import nothing from torch; backends given by anything but a string literal.
//! A rung may make the script longer (`"aot_eager"` is longer than `"inductor"`): the pass
//! may grow the script (see `Pass::may_grow`), and each rung is taken at most once.

use std::ops::Range;

use crate::edit::{Candidate, Edit, line_of, list_item_range};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Ranged, Script, Stmt, all_bodies, all_exprs, ast, span};
use crate::torch::{torch_imports, torch_path};

pub struct SimplerBackend;

/// The keywords of `torch.compile` that tune it and may go, in the order tried when they
/// share a line.
const TUNING: &[&str] = &["mode", "options", "dynamic", "fullgraph"];

impl Pass for SimplerBackend {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Ladder,
            ..PassInfo::new("simpler_backend")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let imports = torch_imports(script);
        if imports.is_empty() {
            return Vec::new();
        }
        let text = script.text();
        let is_compile = |e: &Expr| torch_path(&imports, e).as_deref() == Some("torch.compile");
        // Each call's or decorator's candidates, by where it starts.
        let mut groups: Vec<(usize, Vec<Candidate>)> = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Call(call) = expr else { continue };
            if is_compile(&call.func) {
                groups.push((span(expr).start, call_candidates(script, call)));
            }
        }
        for body in all_bodies(script.body()) {
            for stmt in body {
                let decorators = match stmt {
                    Stmt::FunctionDef(f) => &f.decorator_list,
                    Stmt::ClassDef(c) => &c.decorator_list,
                    _ => continue,
                };
                for decorator in decorators {
                    if is_compile(&decorator.expression) {
                        let at = span(&decorator.expression);
                        groups.push((
                            at.start,
                            vec![Candidate::new(
                                format!(
                                    "backend inductor → aot_eager at line {}",
                                    line_of(text, at.start)
                                ),
                                vec![Edit::replace(at.end..at.end, "(backend=\"aot_eager\")")],
                            )],
                        ));
                    }
                }
            }
        }
        groups.sort_by_key(|g| g.0);
        groups.into_iter().flat_map(|g| g.1).collect()
    }
}

/// The rung down and the keyword drops of one `torch.compile(...)` call.
fn call_candidates(script: &Script, call: &ast::ExprCall) -> Vec<Candidate> {
    let text = script.text();
    let line = line_of(text, call.range().start().to_usize());
    let arguments = &call.arguments;
    let items: Vec<Range<usize>> = arguments
        .iter_source_order()
        .map(|a| span(&a.range()))
        .collect();
    let mut out = Vec::new();
    match arguments.find_keyword("backend").map(|k| &k.value) {
        Some(Expr::StringLiteral(s)) if !s.value.is_implicit_concatenated() => {
            let (from, to) = match s.value.to_str() {
                "inductor" => ("inductor", "aot_eager"),
                "aot_eager" => ("aot_eager", "eager"),
                _ => ("", ""),
            };
            if !from.is_empty() {
                out.push(Candidate::new(
                    format!("backend {from} → {to} at line {line}"),
                    vec![Edit::replace(
                        span(s),
                        script.slice(s).replacen(from, to, 1),
                    )],
                ));
            }
        }
        Some(_) => {}
        None => {
            // Inductor by default: name the next rung after the last argument, or alone.
            let edit = match items.last() {
                Some(last) => Edit::replace(last.end..last.end, ", backend=\"aot_eager\""),
                None => {
                    let open = span(arguments).start + 1;
                    Edit::replace(open..open, "backend=\"aot_eager\"")
                }
            };
            out.push(Candidate::new(
                format!("backend inductor → aot_eager at line {line}"),
                vec![edit],
            ));
        }
    }
    for keyword in &arguments.keywords {
        let Some(arg) = keyword.arg.as_ref().map(|a| a.as_str()) else {
            continue;
        };
        if !TUNING.contains(&arg) {
            continue;
        }
        let index = items
            .iter()
            .position(|i| *i == span(keyword))
            .expect("keyword is an item");
        let edit = if items.len() == 1 {
            Edit::replace(span(arguments), "()")
        } else {
            Edit::delete(list_item_range(text, &items, index))
        };
        out.push(Candidate::new(
            format!("drop {arg}= from torch.compile at line {line}"),
            vec![edit],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&SimplerBackend, text)
    }

    fn descriptions(text: &str) -> Vec<String> {
        let script = Script::parse(text, crate::python::PythonVersion::PY311).unwrap();
        SimplerBackend
            .candidates(&script)
            .into_iter()
            .map(|c| c.description)
            .collect()
    }

    #[test]
    fn the_default_backend_is_inductor_and_steps_to_aot_eager() {
        let text = "import torch\ng = torch.compile(f)\n";
        assert_eq!(
            results(text),
            ["import torch\ng = torch.compile(f, backend=\"aot_eager\")\n"]
        );
        assert_eq!(
            descriptions(text),
            ["backend inductor → aot_eager at line 2"]
        );
    }

    #[test]
    fn aot_eager_steps_to_eager_keeping_the_quotes() {
        let text = "import torch\ng = torch.compile(f, backend='aot_eager')\n";
        assert_eq!(
            results(text),
            ["import torch\ng = torch.compile(f, backend='eager')\n"]
        );
    }

    #[test]
    fn eager_and_custom_backends_have_no_rung_below() {
        assert!(results("import torch\ng = torch.compile(f, backend=\"eager\")\n").is_empty());
        assert!(results("import torch\ng = torch.compile(f, backend=my_backend)\n").is_empty());
    }

    #[test]
    fn a_bare_decorator_gets_the_next_rung_as_its_argument() {
        let text = "import torch\n@torch.compile\ndef f(x):\n    return x\n";
        assert_eq!(
            results(text),
            ["import torch\n@torch.compile(backend=\"aot_eager\")\ndef f(x):\n    return x\n"]
        );
    }

    #[test]
    fn tuning_keywords_go_one_at_a_time_and_a_lone_one_leaves_empty_parentheses() {
        let text = "from torch import compile\n@compile(fullgraph=True)\ndef f(x):\n    return x\n";
        assert_eq!(
            descriptions(text),
            [
                "backend inductor → aot_eager at line 2",
                "drop fullgraph= from torch.compile at line 2"
            ]
        );
        assert_eq!(
            results(text)[1],
            "from torch import compile\n@compile()\ndef f(x):\n    return x\n"
        );
    }

    #[test]
    fn nothing_is_proposed_on_a_script_without_torch() {
        let plain = include_str!("../../tests/fixtures/inline_calls/calls_and_methods.py");
        assert!(results(plain).is_empty());
        assert!(results("import re\np = re.compile(\"x\", backend=\"inductor\")\n").is_empty());
    }
}
