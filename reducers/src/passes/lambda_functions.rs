//! A function handed over once becomes a lambda.
//!
//! ## What it removes
//! A module-level function of one statement (`return e`, or the expression `e` alone) whose
//! name is read once, as an argument of a call at module level rather than called, is
//! written in place as `lambda PARAMETERS: e` and its `def` goes: what a person writes for
//! the function a transform (`vmap`, `grad`, `sorted`'s key, a pool's `map`) calls back.
//! `inline_calls` inlines a function that is called; this pass takes the one that is handed
//! over. The lambda returns the value of an expression statement, where the function
//! returned `None`: the oracle judges whether the failure cares.
//!
//! A function without parameters that only makes one call, handed to `torch.compile` whose
//! result is called at once with nothing (`def step(): return Net()(x)`,
//! `torch.compile(step)()`), has that call's callee compiled instead, with its arguments:
//! `torch.compile(Net())(x)`.
//!
//! ## Example
//! ```python
//! def one(loss):                       # before
//!     torch.autograd.grad(loss, params)
//! torch.vmap(one)(losses)
//!
//! torch.vmap(lambda loss: torch.autograd.grad(loss, params))(losses)   # after
//! ```
//!
//! ## When it cannot apply
//! A lambda that would push a line that fits in 88 columns past them (the `def` reads
//! better); a function that is decorated, `async`, has annotations, more than one statement (a
//! docstring counts), a statement other than `return e` or an expression, or that yields or
//! awaits; a name defined or read more than once, or read anywhere but as an argument of a
//! call in module-level code (a nested scope could see other names).

use super::helpers::{delete_stmt, short, width_with};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, span};

pub struct LambdaFunctions;

impl Pass for LambdaFunctions {
    fn info(&self) -> PassInfo {
        PassInfo::new("lambda_functions")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let body = script.body();
        let mut out = Vec::new();
        for (i, stmt) in body.iter().enumerate() {
            let Stmt::FunctionDef(f) = stmt else {
                continue;
            };
            let Some(lambda) = as_lambda(script, f) else {
                continue;
            };
            let Some(read) = handed_over_once(script, f.name.as_str()) else {
                continue;
            };
            if let Some(compiled) = compiled_call(script, f, &read) {
                out.push(Candidate::new(
                    format!(
                        "compile the call `{}` that `{}` makes, at line {}",
                        short(script.slice(compiled.call)),
                        f.name,
                        line_of(script.text(), read.start)
                    ),
                    vec![
                        Edit::replace(read.clone(), script.slice(&*compiled.call.func).to_string()),
                        Edit::replace(compiled.arguments, compiled.passed.to_string()),
                        delete_stmt(script, body, i, true),
                    ],
                ));
            }
            // A lambda that pushes a line that fits past the width a person writes stays a
            // `def` (a line already longer gets no worse).
            let text = script.text();
            let width = super::join_lines::WIDTH;
            if width_with(text, &read, &text[read.clone()]) <= width
                && width_with(text, &read, &lambda) > width
            {
                continue;
            }
            out.push(Candidate::new(
                format!(
                    "write `{}` as `{}` at line {}",
                    f.name,
                    short(&lambda),
                    line_of(script.text(), read.start)
                ),
                vec![
                    Edit::replace(read, lambda),
                    delete_stmt(script, body, i, true),
                ],
            ));
        }
        out
    }
}

/// The one call a function without parameters makes (`def step(): return Net()(x)`), when
/// the function is handed to `torch.compile` and what that makes is called at once with no
/// arguments (`torch.compile(step)()`): the call's callee is compiled instead, and the call's
/// arguments go to the compiled call (`torch.compile(Net())(x)`), the wrapper a person does
/// not write.
struct Compiled<'a> {
    call: &'a ast::ExprCall,
    /// The compiled call's empty argument list.
    arguments: std::ops::Range<usize>,
    /// The call's arguments, in parentheses.
    passed: &'a str,
}

fn compiled_call<'a>(
    script: &'a Script,
    f: &'a ast::StmtFunctionDef,
    read: &std::ops::Range<usize>,
) -> Option<Compiled<'a>> {
    if !f.parameters.is_empty() || !f.decorator_list.is_empty() || f.is_async {
        return None;
    }
    let Some(Expr::Call(call)) = (match &f.body[..] {
        [Stmt::Return(ast::StmtReturn { value: Some(v), .. })] => Some(&**v),
        [Stmt::Expr(e)] => Some(&*e.value),
        _ => None,
    }) else {
        return None;
    };
    let imports = crate::torch::torch_imports(script);
    all_exprs(script.body()).into_iter().find_map(|expr| {
        let Expr::Call(outer) = expr else { return None };
        let Expr::Call(compile) = outer.func.as_ref() else {
            return None;
        };
        let handed = compile
            .arguments
            .args
            .first()
            .is_some_and(|a| span(a) == *read);
        (handed
            && outer.arguments.is_empty()
            && crate::torch::torch_path(&imports, &compile.func).as_deref()
                == Some("torch.compile"))
        .then(|| Compiled {
            call,
            arguments: span(&outer.arguments),
            passed: script.slice(&call.arguments),
        })
    })
}

/// `lambda PARAMETERS: e` for a function of one statement `return e` or `e`.
fn as_lambda(script: &Script, f: &ast::StmtFunctionDef) -> Option<String> {
    let params = &f.parameters;
    let annotated = params.iter().any(|p| p.annotation().is_some()) || f.returns.is_some();
    if f.is_async || !f.decorator_list.is_empty() || annotated || f.type_params.is_some() {
        return None;
    }
    let value = match &f.body[..] {
        [Stmt::Return(ast::StmtReturn { value: Some(v), .. })] => v,
        [Stmt::Expr(e)] => &e.value,
        _ => return None,
    };
    let code = script.slice(&**value);
    let awaits = all_exprs(&f.body)
        .iter()
        .any(|e| matches!(e, Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_)));
    if awaits || code.contains('\n') {
        return None;
    }
    let signature = script.slice(&**params);
    let inside = signature
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))?
        .trim();
    Some(match inside {
        "" => format!("lambda: {code}"),
        _ => format!("lambda {inside}: {code}"),
    })
}

/// Where `name` is read, when that is its one read besides its `def`, and the read is an
/// argument of a call in module-level code.
fn handed_over_once(script: &Script, name: &str) -> Option<std::ops::Range<usize>> {
    let named = |e: &&Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
    let reads = all_exprs(script.body()).into_iter().filter(named).count();
    let defined = script
        .body()
        .iter()
        .filter(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == name))
        .count();
    if reads != 1 || defined != 1 {
        return None;
    }
    let module_level: Vec<&Stmt> = script
        .body()
        .iter()
        .filter(|s| !matches!(s, Stmt::FunctionDef(_) | Stmt::ClassDef(_)))
        .collect();
    for stmt in module_level {
        for expr in all_exprs(std::slice::from_ref(stmt)) {
            let Expr::Call(call) = expr else { continue };
            let arguments = call
                .arguments
                .args
                .iter()
                .chain(call.arguments.keywords.iter().map(|k| &k.value));
            if let Some(arg) = arguments.into_iter().find(named) {
                return Some(span(arg));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    #[test]
    fn a_function_handed_to_a_transform_becomes_a_lambda() {
        let text = "import torch\ndef one(loss):\n    torch.autograd.grad(loss, params)\n\ntorch.vmap(one)(losses)\n";
        assert_eq!(
            candidate_texts(&LambdaFunctions, text),
            [
                "import torch\n\ntorch.vmap(lambda loss: torch.autograd.grad(loss, params))(losses)\n"
            ]
        );
    }

    #[test]
    fn a_compiled_function_that_only_calls_compiles_its_callee() {
        let text = "import torch\ndef step():\n    return Net()(torch.ones(2))\ntorch.compile(step, backend=\"eager\")()\n";
        assert!(
            candidate_texts(&LambdaFunctions, text).contains(
                &"import torch\ntorch.compile(Net(), backend=\"eager\")(torch.ones(2))\n"
                    .to_string()
            ),
            "{:?}",
            candidate_texts(&LambdaFunctions, text)
        );
        let called = "import torch\ndef step():\n    return Net()(x)\ntorch.compile(step)(y)\n";
        assert!(
            !candidate_texts(&LambdaFunctions, called)
                .iter()
                .any(|t| t.contains("Net())"))
        );
    }

    #[test]
    fn a_returned_value_and_a_keyword_argument_and_defaults_are_kept() {
        let text = "def by(x, k=1):\n    return x[k]\nsorted(rows, key=by)\n";
        assert_eq!(
            candidate_texts(&LambdaFunctions, text),
            ["sorted(rows, key=lambda x, k=1: x[k])\n"]
        );
    }

    #[test]
    fn a_lambda_that_would_not_fit_on_its_line_stays_a_def() {
        let text = "import torch\ndef f(x):\n    return torch.mm(torch.mm(torch.prod(x) + x, torch.sum(x) + x), torch.sum(x) + x)\ntorch.compile(torch.func.jacfwd(f))(x)\n";
        assert!(candidate_texts(&LambdaFunctions, text).is_empty());
    }

    #[test]
    fn functions_called_read_twice_or_of_several_statements_stay() {
        for text in [
            "def f(x):\n    return x\nf(1)\n",
            "def f(x):\n    return x\nmap(f, a)\nmap(f, b)\n",
            "def f(x):\n    y = x\n    return y\nmap(f, a)\n",
            "def f(x: int):\n    return x\nmap(f, a)\n",
            "@wraps\ndef f(x):\n    return x\nmap(f, a)\n",
            "def f(x):\n    return x\ndef g():\n    map(f, a)\n",
            "def f(x):\n    yield x\nmap(f, a)\n",
        ] {
            assert!(candidate_texts(&LambdaFunctions, text).is_empty(), "{text}");
        }
    }
}
