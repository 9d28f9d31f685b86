//! A lambda reads what it is given.
//!
//! `torch.compile(lambda x: torch.func.vjp(forward, x))(x)` became `lambda x:
//! torch.func.vjp(torch.randn_like, torch.zeros(1))` once the value `x` held took its place:
//! the call still hands the lambda a tensor that requires grad, and the lambda ignores it. No
//! person writes a function that ignores its input; `drop_parameters` takes a parameter with
//! the arguments given for it. A candidate has no more lambda parameters that its lambdas do
//! not read than the script it came from.

use crate::python::{Expr, Script, all_exprs, exprs_of};

/// How many parameters of the lambdas of `script` their bodies do not read.
pub fn unread_lambda_parameters(script: &Script) -> usize {
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| match e {
            Expr::Lambda(l) => Some(l),
            _ => None,
        })
        .map(|lambda| {
            let read: Vec<&str> = exprs_of(&lambda.body)
                .into_iter()
                .filter_map(|e| match e {
                    Expr::Name(n) => Some(n.id.as_str()),
                    _ => None,
                })
                .collect();
            lambda.parameters.as_deref().map_or(0, |p| {
                p.iter()
                    .filter(|param| {
                        let name = param.name().as_str();
                        !name.starts_with('_') && !read.contains(&name)
                    })
                    .count()
            })
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn unread(text: &str) -> usize {
        unread_lambda_parameters(&Script::parse(text, PythonVersion::latest()).unwrap())
    }

    #[test]
    fn a_lambda_that_ignores_its_input_is_counted() {
        assert_eq!(
            unread("f = torch.compile(lambda x: torch.func.vjp(g, x))\n"),
            0
        );
        assert_eq!(
            unread("f = torch.compile(lambda x: torch.func.vjp(g, torch.zeros(1)))\n"),
            1
        );
        assert_eq!(unread("f = lambda x, _: x\ng = lambda: 1\n"), 0);
        assert_eq!(unread("f = lambda x, *args, **kw: x\n"), 2);
    }
}
