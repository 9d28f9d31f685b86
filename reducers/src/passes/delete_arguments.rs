//! Delete call arguments and keyword arguments, and class bases.
//!
//! ## What it removes
//! For every call, first all of its arguments at once, then all of its keyword arguments at
//! once when it has positional ones too (`rtol=` and `atol=` can only go together), `rtol=`
//! and `atol=` together whatever else the call has (a tolerance goes whole), then
//! each positional or keyword argument alone with its comma, the longest first. An argument on lines of its own goes
//! with those lines, its trailing comment included, and leaves its neighbours' comments.
//! The bases and keywords of a class statement go the same way; and a base that is a
//! module-level class may be replaced by that class's own bases (`class ManifestError(ReleaseError)`
//! becomes `class ManifestError(Exception)`), so that the class in between can go.
//! `f(**{"a": 1})` becomes `f(a=1)`, and a parameter with a default may go, each alone.
//! The arguments the PyTorch passes own stay (see `crate::kinds::OWNED`): the `backend=`,
//! `mode=`, `fullgraph=` and `dynamic=` of `torch.compile` (simpler_backend steps the backend
//! down its ladder, deleting it would make it inductor again, and drops the others), and, in
//! a script that imports torch, every `dtype=` and `device=` (cpu_float32's).
//!
//! ## Example
//! ```python
//! parse(text, strict=True, encoding="utf-8")   # before
//! parse(text, strict=True)                     # after
//! ```
//!
//! ## When it cannot apply
//! Calls without arguments; the one argument of a call that is a string literal (a value built
//! from a string keeps it: `np.datetime64('2019-01-02')`, never `np.datetime64()`, NaT);
//! bases other than plain names of module-level classes.

use super::helpers::{is_identifier, largest_first, short};
use crate::edit::{Candidate, Edit, line_of, list_item_range};
use crate::pass::{Pass, PassInfo, Phase};
use std::collections::HashMap;
use std::ops::Range;

use crate::python::{Expr, Ranged, Script, Stmt, all_bodies, all_exprs, ast, span};

pub struct DeleteArguments;

impl Pass for DeleteArguments {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("delete_arguments")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let torch = !crate::torch::torch_imports(script).is_empty();
        let mut out = Vec::new();
        let calls = all_exprs(script.body())
            .into_iter()
            .filter_map(|e| match e {
                // A value built from a string keeps it: `np.datetime64('2019-01-02')` is a
                // date, `np.datetime64()` a NaT no one writes (shrink_literals may still
                // shorten the string).
                Expr::Call(call) if lone_string(&call.arguments) => None,
                Expr::Call(call) => Some((
                    &call.arguments,
                    format!("{}()", short(script.slice(&*call.func))),
                    "()",
                )),
                _ => None,
            });
        let classes = all_bodies(script.body())
            .into_iter()
            .flatten()
            .filter_map(|s| match s {
                // `class C:` rather than `class C():`.
                Stmt::ClassDef(c) => {
                    Some((c.arguments.as_deref()?, format!("class {}", c.name), ""))
                }
                _ => None,
            });
        for (arguments, callee, none) in calls.chain(classes) {
            let items: Vec<_> = arguments
                .iter_source_order()
                .map(|a| span(&a.range()))
                .collect();
            // The arguments the torch passes own are theirs to change.
            let owned: Vec<Range<usize>> = arguments
                .keywords
                .iter()
                .filter(|k| {
                    k.arg.as_ref().is_some_and(|a| {
                        crate::kinds::owned(a.as_str(), callee.ends_with("compile()"), torch)
                    })
                })
                .map(span)
                .collect();
            let line = line_of(text, span(arguments).start);
            let n = items.len();
            if owned.is_empty() && n > 0 {
                // A lone argument may have a trailing comma, which cannot stay alone.
                let what = if n == 1 {
                    "the argument"
                } else {
                    "all arguments"
                };
                out.push(Candidate::new(
                    format!("delete {what} of {callee} at line {line}"),
                    vec![Edit::replace(span(arguments), none)],
                ));
            }
            // The keywords after the positional arguments, together: some go only in pairs.
            let keywords = arguments.keywords.len();
            let first = n.saturating_sub(keywords);
            let trailing = arguments
                .keywords
                .iter()
                .all(|k| items[first..].contains(&span(k)));
            if owned.is_empty() && keywords > 1 && keywords < n && trailing {
                out.push(Candidate::new(
                    format!("delete the keyword arguments of {callee} at line {line}"),
                    vec![Edit::delete(items[first - 1].end..items[n - 1].end)],
                ));
            }
            // A tolerance goes whole: `rtol=` and `atol=` together (`rel_tol=` and `abs_tol=`
            // for `math.isclose`), whatever else the call has.
            let position = |name: &str| {
                let k = arguments
                    .keywords
                    .iter()
                    .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))?;
                items.iter().position(|i| *i == span(k))
            };
            for (relative, absolute) in [("rtol", "atol"), ("rel_tol", "abs_tol")] {
                let (Some(a), Some(b)) = (position(relative), position(absolute)) else {
                    continue;
                };
                if keywords == 2 && keywords < n && trailing {
                    continue;
                }
                let (i, j) = (a.min(b), a.max(b));
                let edits = if j == i + 1 {
                    let range = if j + 1 < n {
                        items[i].start..items[j + 1].start
                    } else if i > 0 {
                        items[i - 1].end..items[j].end
                    } else {
                        span(arguments).start + 1..span(arguments).end - 1
                    };
                    vec![Edit::delete(range)]
                } else {
                    vec![
                        Edit::delete(list_item_range(text, &items, i)),
                        Edit::delete(list_item_range(text, &items, j)),
                    ]
                };
                out.push(Candidate::new(
                    format!("delete the tolerances of {callee} at line {line}"),
                    edits,
                ));
            }
            if n > 1 || !owned.is_empty() {
                for i in (0..n).filter(|&i| !owned.contains(&items[i])) {
                    out.push(Candidate::new(
                        format!("delete argument {} of {callee} at line {line}", i + 1),
                        vec![Edit::delete(list_item_range(text, &items, i))],
                    ));
                }
            }
        }
        out.extend(skipped_bases(script));
        out.extend(spread_keywords(script));
        out.extend(defaulted_parameters(script));
        largest_first(&mut out);
        out
    }
}

/// `f(**{"a": 1, "b": x})` → `f(a=1, b=x)`: keywords that deletion can take one by one.
fn spread_keywords(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        for keyword in call.arguments.keywords.iter().filter(|k| k.arg.is_none()) {
            let Expr::Dict(dict) = &keyword.value else {
                continue;
            };
            let spread: Option<Vec<String>> = dict
                .items
                .iter()
                .map(|item| match item.key.as_ref()? {
                    Expr::StringLiteral(k) if is_identifier(k.value.to_str()) => Some(format!(
                        "{}={}",
                        k.value.to_str(),
                        script.slice(&item.value)
                    )),
                    _ => None,
                })
                .collect();
            let Some(spread) = spread else { continue };
            let line = line_of(text, span(keyword).start);
            out.push(Candidate::new(
                format!("spread the keywords of `**{{…}}` at line {line}"),
                vec![Edit::replace(span(keyword), spread.join(", "))],
            ));
        }
    }
    out
}

/// `def f(a, b=1)` → `def f(a)`: a parameter with a default that no call needs.
fn defaulted_parameters(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Stmt::FunctionDef(def) = stmt else {
            continue;
        };
        let params = &def.parameters;
        let all: Vec<Range<usize>> = params.iter().map(|p| span(&p.range())).collect();
        for p in params.iter_non_variadic_params() {
            if p.default.is_none() {
                continue;
            }
            let Some(i) = all.iter().position(|r| *r == span(p)) else {
                continue;
            };
            out.push(Candidate::new(
                format!(
                    "delete parameter `{}` of {}() at line {}",
                    p.parameter.name,
                    def.name,
                    line_of(text, span(stmt).start)
                ),
                vec![Edit::delete(list_item_range(text, &all, i))],
            ));
        }
    }
    out
}

/// `class C(B)` → `class C(A)` where `class B(A)` is a module-level class: `C` skips a base
/// that only stands between it and one it needs (an exception hierarchy, an abstract base).
fn skipped_bases(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    let module_classes: HashMap<&str, &ast::StmtClassDef> = script
        .body()
        .iter()
        .filter_map(|s| match s {
            Stmt::ClassDef(c) => Some((c.name.as_str(), c)),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        for base in class.bases() {
            let Expr::Name(name) = base else { continue };
            let Some(parent) = module_classes.get(name.id.as_str()) else {
                continue;
            };
            if parent.name == class.name {
                continue;
            }
            // A base without bases leaves `class C`, or `class C(, D)`, which does not parse
            // and is never tried.
            let grand: Vec<&str> = parent.bases().iter().map(|b| script.slice(b)).collect();
            let line = line_of(text, span(stmt).start);
            out.push(Candidate::new(
                format!(
                    "class {} at line {line} skips its base {}",
                    class.name, name.id
                ),
                vec![match (grand.is_empty(), class.arguments.as_deref()) {
                    (true, Some(args)) if args.len() == 1 => Edit::delete(span(args)),
                    _ => Edit::replace(span(base), grand.join(", ")),
                }],
            ));
        }
    }
    out
}

/// Whether a call's arguments are one string literal and nothing else.
fn lone_string(arguments: &ast::Arguments) -> bool {
    arguments.keywords.is_empty() && matches!(arguments.args.as_ref(), [Expr::StringLiteral(_)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DeleteArguments, text)
    }

    #[test]
    fn a_value_built_from_a_string_keeps_it() {
        assert!(results("np.datetime64('2019-01-02')\n").is_empty());
        let texts = results("np.datetime64('2019-01-02', 'D')\n");
        assert!(
            texts.contains(&"np.datetime64('2019-01-02')\n".to_string()),
            "{texts:#?}"
        );
    }

    #[test]
    fn a_tolerance_goes_whole() {
        let texts = results("assert_close(a, b, rtol=1e-3, atol=1e-5, msg=m)\n");
        assert!(
            texts.contains(&"assert_close(a, b, msg=m)\n".to_string()),
            "{texts:#?}"
        );
        let texts = results("assert_close(a, b, atol=0, equal_nan=True, rtol=0)\n");
        assert!(
            texts.contains(&"assert_close(a, b, equal_nan=True)\n".to_string()),
            "{texts:#?}"
        );
        let texts = results("math.isclose(a, b, rel_tol=1e-09, abs_tol=1e-06)\n");
        assert!(
            texts.contains(&"math.isclose(a, b)\n".to_string()),
            "{texts:#?}"
        );
    }

    #[test]
    fn a_class_skips_a_base_for_that_base_s_bases() {
        let text = "class A(Exception): pass\nclass B(A): pass\n";
        let texts = results(text);
        assert!(
            texts.contains(&"class A(Exception): pass\nclass B(Exception): pass\n".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"class A(Exception): pass\nclass B: pass\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn the_keywords_of_torch_compile_stay() {
        let texts = results("torch.compile(f, fullgraph=True, backend=\"eager\")\n");
        assert_eq!(
            texts,
            ["torch.compile(fullgraph=True, backend=\"eager\")\n"]
        );
    }

    #[test]
    fn dtype_and_device_stay_in_a_torch_script() {
        let texts = results("import torch\ntorch.ones(2, dtype=torch.int64, device=d)\n");
        assert_eq!(
            texts,
            ["import torch\ntorch.ones(dtype=torch.int64, device=d)\n"]
        );
    }

    #[test]
    fn a_lone_argument_goes_with_its_trailing_comma() {
        assert_eq!(results("f(a,)\n"), ["f()\n"]);
    }

    #[test]
    fn an_argument_on_its_own_line_leaves_the_comment_of_the_one_above() {
        let text = "f(\n    a,  # why a\n    b,\n)\n";
        assert!(results(text).contains(&"f(\n    a,  # why a\n)\n".to_string()));
    }

    #[test]
    fn a_multi_line_callee_is_described_by_its_first_line() {
        let text = "g(\n    x\n).h(a, b)\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        for c in DeleteArguments.candidates(&script) {
            assert!(!c.description.contains('\n'), "{}", c.description);
        }
    }
}
