//! What makes a checked definition the library's stays: its library decorators and bases.
//!
//! `@runtime_checkable class Foo(Protocol)` and `class Bar(Foo, Protocol)`, checked with
//! `isinstance(object(), Bar)` expecting a `TypeError`, fail the same way as plain classes
//! `Foo` and `Bar(Foo)`, and then show nothing: a class that is no protocol raises nothing on
//! any version. `f(1, "extra")` of a `@functools.singledispatch` function with an
//! implementation registered by `@f.register`, checked against the string that implementation
//! returns, fails the same way once `f` is a plain function. Where a check (an `assert`, the
//! condition of an `if` that raises, the body of a `try` whose `else` raises) reads a class or
//! function of the script, each library decorator and library base of it stays, at any depth
//! of the script's bases, and so does each registration of another function on it
//! (`@f.register`).
//!
//! The torch library's decorators and bases are left to its own passes (a module wrapper
//! inlined, a compile stepped down), whose failures the runtime kinds check. What is
//! registered on a function a library decorator made (torch's too: `@solve.register_fake`,
//! `solve.register_autograd(…)` on a `@torch.library.custom_op`) stays, checked or not.

use std::collections::{HashMap, HashSet};

use crate::python::{Expr, Script, Stmt, all_bodies, exprs_of};

/// A definition's name and one library decorator or base of it (`typing.Protocol`), or a
/// function registered on another (`f.register`).
pub type Made = (String, String);

/// The library decorators and bases of the definitions the checks of `script` read (see the
/// module's documentation), with the registrations on them.
pub fn made(script: &Script) -> Vec<Made> {
    let definitions = definitions(script);
    let mut pending: Vec<&str> = checked_names(script)
        .into_iter()
        .filter(|n| definitions.contains_key(n))
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name) {
            continue;
        }
        for mark in &definitions[name] {
            match mark {
                Mark::Library(path) => out.push((name.to_string(), path.clone())),
                Mark::Base(base) if definitions.contains_key(base.as_str()) => pending.push(base),
                _ => {}
            }
        }
        for (other, marks) in &definitions {
            for mark in marks {
                if let Mark::Registered { text, on } = mark
                    && on == name
                {
                    out.push((other.to_string(), text.clone()));
                }
            }
        }
    }
    out.extend(registered(script, &definitions));
    // Handed to the library by a check (`inspect.getsource(function)`), a definition is the
    // library's data: each decorator stays as written.
    for name in handed_names(script) {
        for mark in definitions.get(name).into_iter().flatten() {
            if let Mark::Decorator(text) = mark {
                out.push((name.to_string(), text.clone()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The registrations on each function a library decorator made (`@torch.library.custom_op`,
/// torch's included): the functions decorated `@solve.register_fake`, and the statements that
/// call `solve.register_…(…)`, by `("solve", "called solve.register_autograd(backward, …)")`.
/// Without its autograd registered, a custom op fails under `jacrev` by design.
fn registered(script: &Script, definitions: &HashMap<&str, Vec<Mark>>) -> Vec<Made> {
    let imports = crate::torch::imports(script, |_| true);
    let made: HashSet<&str> = all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::FunctionDef(f) => Some(f),
            _ => None,
        })
        .filter(|f| {
            f.decorator_list
                .iter()
                .any(|d| crate::torch::torch_path(&imports, called(&d.expression)).is_some())
        })
        .map(|f| f.name.as_str())
        .collect();
    let mut out = Vec::new();
    for (name, marks) in definitions {
        for mark in marks {
            if let Mark::Registered { text, on } = mark
                && made.contains(on.as_str())
            {
                out.push((name.to_string(), text.clone()));
            }
        }
    }
    out.extend(
        registrations(script)
            .into_iter()
            .filter(|(on, _)| made.contains(on))
            .map(|(on, text)| (on.to_string(), format!("{CALLED}{text}"))),
    );
    out
}

/// Each statement of `script` that calls a `register…` method of a name (`solve.register_autograd(…)`),
/// with that name and the call's code: what it registers is its arguments.
fn registrations(script: &Script) -> Vec<(&str, String)> {
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Expr(e) => match &*e.value {
                Expr::Call(call) => match &*call.func {
                    Expr::Attribute(a) if a.attr.as_str().starts_with("register") => {
                        match &*a.value {
                            Expr::Name(n) => Some((n.id.as_str(), script.slice(call).to_string())),
                            _ => None,
                        }
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Whether `candidate` still has each of `made` (see [`made`]) on each definition it still has.
pub fn keeps(made: &[Made], candidate: &Script) -> bool {
    if made.is_empty() {
        return true;
    }
    let now = definitions(candidate);
    let statements = registrations(candidate);
    // A definition gone whole (nothing reads it any more: a value put where it was read)
    // takes what made it with it.
    made.iter().all(|(name, path)| {
        let Some(marks) = now.get(name.as_str()) else {
            return true;
        };
        if let Some(call) = path.strip_prefix(CALLED) {
            return statements.iter().any(|(_, text)| text == call);
        }
        marks.iter().any(|mark| match mark {
            Mark::Library(p) | Mark::Registered { text: p, .. } | Mark::Decorator(p) => p == path,
            Mark::Base(_) => false,
        })
    })
}

/// How [`made`] marks a statement that registers on a definition.
const CALLED: &str = "called ";

/// What a class or function is made with.
enum Mark {
    /// A library decorator or base, by its path (`typing.Protocol`).
    Library(String),
    /// A base that is no library's, by name.
    Base(String),
    /// A decorator that registers it on another definition (`@f.register`): its text, and the
    /// name it is read from.
    Registered { text: String, on: String },
    /// Any decorator, as written (`@(` … `)` too).
    Decorator(String),
}

/// Each class and function of `script` by name, with its marks.
fn definitions(script: &Script) -> HashMap<&str, Vec<Mark>> {
    let imports = crate::torch::imports(script, |_| true);
    let library = |e: &Expr| {
        crate::torch::torch_path(&imports, called(e)).filter(|p| !p.starts_with("torch."))
    };
    let mut out: HashMap<&str, Vec<Mark>> = HashMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let (name, decorators, bases) = match stmt {
            Stmt::FunctionDef(f) => (f.name.as_str(), &f.decorator_list, None),
            Stmt::ClassDef(c) => (c.name.as_str(), &c.decorator_list, c.arguments.as_deref()),
            _ => continue,
        };
        let marks = out.entry(name).or_default();
        for decorator in decorators {
            let e = &decorator.expression;
            marks.push(Mark::Decorator(script.slice(decorator).to_string()));
            if let Some(path) = library(e) {
                marks.push(Mark::Library(path));
            } else if let Expr::Attribute(a) = called(e)
                && let Expr::Name(on) = &*a.value
            {
                marks.push(Mark::Registered {
                    text: script.slice(called(e)).to_string(),
                    on: on.id.to_string(),
                });
            }
        }
        for base in bases.iter().flat_map(|a| a.args.iter()) {
            match (library(base), base) {
                (Some(path), _) => marks.push(Mark::Library(path)),
                (None, Expr::Name(n)) => marks.push(Mark::Base(n.id.to_string())),
                _ => {}
            }
        }
    }
    out
}

/// What a decorator calls when it is a call (`@f.register(int)`), else itself.
fn called(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) => &call.func,
        e => e,
    }
}

/// The names read by the script's checks: the tests of its `assert`s, the conditions of its
/// `if`s whose body raises, and the bodies of its `try`s whose `else` raises.
fn checked_names(script: &Script) -> Vec<&str> {
    checked_exprs(script)
        .into_iter()
        .flat_map(exprs_of)
        .filter_map(|e| match e {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect()
}

/// What the checks of `script` evaluate (see [`checked_names`]).
fn checked_exprs(script: &Script) -> Vec<&Expr> {
    let mut exprs: Vec<&Expr> = Vec::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        match stmt {
            Stmt::Assert(a) => exprs.push(&a.test),
            Stmt::If(i) if raises(&i.body) => exprs.push(&i.test),
            Stmt::Try(t) if raises(&t.orelse) => {
                exprs.extend(crate::python::all_exprs(&t.body));
            }
            _ => {}
        }
    }
    exprs
}

/// The names a check hands to a library function as arguments (`function` of
/// `inspect.getsource(function).startswith("@(")`).
fn handed_names(script: &Script) -> Vec<&str> {
    let imports = crate::torch::imports(script, |_| true);
    checked_exprs(script)
        .into_iter()
        .flat_map(exprs_of)
        .filter_map(|e| match e {
            Expr::Call(call) if crate::torch::torch_path(&imports, &call.func).is_some() => {
                Some(call)
            }
            _ => None,
        })
        .flat_map(|call| call.arguments.args.iter())
        .filter_map(|a| match a {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect()
}

fn raises(body: &[Stmt]) -> bool {
    body.iter().any(|s| matches!(s, Stmt::Raise(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY312).unwrap()
    }

    const PROTOCOLS: &str = "from typing import runtime_checkable, Protocol\n@runtime_checkable\nclass Foo(Protocol):\n    x: int\nclass Bar(Foo, Protocol):\n    y: str\ntry:\n    isinstance(object(), Bar)\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError('no TypeError')\n";

    #[test]
    fn a_checked_class_keeps_its_library_bases_and_decorators() {
        let original = parse(PROTOCOLS);
        let made = made(&original);
        assert_eq!(
            made,
            [
                ("Bar".to_string(), "typing.Protocol".to_string()),
                ("Foo".to_string(), "typing.Protocol".to_string()),
                ("Foo".to_string(), "typing.runtime_checkable".to_string()),
            ]
        );
        assert!(keeps(&made, &original));
        let spelled = PROTOCOLS
            .replace(
                "from typing import runtime_checkable, Protocol",
                "import typing",
            )
            .replace("@runtime_checkable", "@typing.runtime_checkable")
            .replace("(Protocol)", "(typing.Protocol)")
            .replace("Foo, Protocol", "Foo, typing.Protocol")
            .replace("    x: int\n", "    pass\n");
        assert!(keeps(&made, &parse(&spelled)));
        let inlined = "from typing import Protocol\nclass Foo(Protocol):\n    x: int\ntry:\n    isinstance(object(), Foo)\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError('no TypeError')\n";
        assert!(
            !keeps(&made, &parse(inlined)),
            "Foo is still there, not runtime_checkable"
        );
        let gone = "try:\n    isinstance(object(), int)\nexcept TypeError:\n    pass\nelse:\n    raise AssertionError('no TypeError')\n";
        assert!(keeps(&made, &parse(gone)));
        let plain = PROTOCOLS.replace("@runtime_checkable\n", "");
        assert!(!keeps(&made, &parse(&plain)));
        let no_protocol = PROTOCOLS.replace("Bar(Foo, Protocol)", "Bar(Foo)");
        assert!(!keeps(&made, &parse(&no_protocol)));
    }

    #[test]
    fn a_checked_function_keeps_its_dispatch_and_registrations() {
        let text = "import functools\n@functools.singledispatch\ndef f(arg, /, extra):\n    return 'base'\n@f.register\ndef f_int(arg: int, /, extra: str):\n    return 'int'\n@f.register\ndef f_str(arg: str, /, extra: int):\n    return 'str'\nassert f(1, 'extra') == 'int'\n";
        let made = made(&parse(text));
        assert_eq!(made.len(), 3, "{made:?}");
        assert!(!keeps(
            &made,
            &parse(&text.replace("@functools.singledispatch\n", ""))
        ));
        let unregistered = text.replace("@f.register\ndef f_str", "def f_str");
        assert!(!keeps(&made, &parse(&unregistered)));
        // Handed to the library by a check, a definition keeps every decorator.
        let source = "import inspect\ndef builder(**kw):\n    return lambda f: f\n@(\n    builder(v=1)\n)\ndef function():\n    return 1\nassert inspect.getsource(function).startswith('@(')\n";
        let made = super::made(&parse(source));
        assert_eq!(
            made,
            [(
                "function".to_string(),
                "@(\n    builder(v=1)\n)".to_string()
            )]
        );
        let unwrapped = source.replace("@(\n    builder(v=1)\n)\n", "@builder(v=1)\n");
        assert!(!keeps(&made, &parse(&unwrapped)));
        assert!(!keeps(
            &made,
            &parse(&source.replace("@(\n    builder(v=1)\n)\n", ""))
        ));
        // An unchecked definition keeps only what is registered on it; torch's decorators and
        // bases are left to its passes.
        let unchecked = parse(&text.replace("assert f(1, 'extra') == 'int'\n", ""));
        assert!(
            super::made(&unchecked)
                .iter()
                .all(|(_, path)| path == "f.register"),
            "{:?}",
            super::made(&unchecked)
        );
        // A custom op keeps what is registered on it, checked or not.
        let op = "import torch\n@torch.library.custom_op('m::solve', mutates_args=())\ndef solve(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n@solve.register_fake\ndef fake(x):\n    return torch.empty_like(x)\ndef setup(ctx, inputs, output):\n    pass\ndef backward(ctx, grad):\n    return grad\nsolve.register_autograd(backward, setup_context=setup)\ntorch.func.jacrev(solve)(torch.ones(2))\n";
        let made = super::made(&parse(op));
        assert_eq!(made.len(), 2, "{made:?}");
        let unregistered = op.replace(
            "solve.register_autograd(backward, setup_context=setup)\n",
            "",
        );
        assert!(!keeps(&made, &parse(&unregistered)));
        let other = op.replace(
            "register_autograd(backward, setup_context=setup)",
            "register_autograd(0)",
        );
        assert!(!keeps(&made, &parse(&other)));
        assert!(!keeps(
            &made,
            &parse(&op.replace("@solve.register_fake\n", ""))
        ));
        let torch = parse(
            "import torch\nclass M(torch.nn.Module):\n    pass\nassert isinstance(M(), torch.nn.Module)\n",
        );
        assert!(super::made(&torch).is_empty());
    }
}
