//! A function's own variable stays its own.
//!
//! `def forward(ctx, *args): x, w = args; return x` returns what it was given. Delete the
//! unpacking and `return x` still runs: it reads the module's `x`, which the script happened
//! to pass in. The candidate fails the same way and reads as a function that ignores its
//! input. A candidate may not make a read in a function of a name that function bound
//! itself refer to the module's variable of that name instead.

use std::collections::HashSet;

use crate::python::Script;
use crate::scopes::{ScopeKind, Scopes};

/// Each function of `script` (by the names of the definitions it is in, `Net.forward`) with
/// a name it binds.
pub fn locals(script: &Script) -> HashSet<(String, String)> {
    let scopes = Scopes::of(script.body());
    scopes
        .occurrences
        .iter()
        .filter(|o| o.binds)
        .filter_map(|o| Some((function(script, &scopes, o.scope)?, o.name.to_string())))
        .collect()
}

/// Whether no read in a function of `candidate` (whose scopes are `scopes`) refers to the
/// module's variable where the function had a variable of its own of that name, one of
/// `locals`.
pub fn keeps(locals: &HashSet<(String, String)>, candidate: &Script, scopes: &Scopes) -> bool {
    if locals.is_empty() {
        return true;
    }
    scopes
        .occurrences
        .iter()
        .filter(|o| !o.binds && scopes.resolve_occurrence(o).is_none())
        .filter(|o| scopes.module_binds(o.name))
        .all(|o| {
            function(candidate, scopes, o.scope)
                .is_none_or(|f| !locals.contains(&(f, o.name.to_string())))
        })
}

/// The path of `def` and `class` names down to the function `scope` is, or is in; `None` at
/// module level and in a lambda or comprehension of it.
fn function(script: &Script, scopes: &Scopes, scope: Option<usize>) -> Option<String> {
    let id = scope?;
    let s = &scopes.scopes[id];
    if s.kind != ScopeKind::Function {
        return function(script, scopes, s.parent);
    }
    let mut path = Vec::new();
    let mut at = Some(id);
    while let Some(i) = at {
        let s = &scopes.scopes[i];
        path.push(header_name(&script.text()[s.range.clone()]).unwrap_or("<lambda>"));
        at = s.parent;
    }
    path.reverse();
    Some(path.join("."))
}

/// The name a `def` or `class` statement defines, after its decorators.
fn header_name(code: &str) -> Option<&str> {
    code.lines().find_map(|line| {
        let line = line.trim_start();
        let rest = line
            .strip_prefix("async def ")
            .or_else(|| line.strip_prefix("def "))
            .or_else(|| line.strip_prefix("class "))?;
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    fn keeps(locals: &HashSet<(String, String)>, candidate: &Script) -> bool {
        super::keeps(locals, candidate, &Scopes::of(candidate.body()))
    }

    const FN: &str =
        "class F:\n    def forward(ctx, *args):\n        x, w = args\n        return x\nx = 1\n";

    #[test]
    fn a_local_read_may_not_become_the_module_s() {
        let locals = locals(&parse(FN));
        assert!(locals.contains(&("F.forward".to_string(), "x".to_string())));
        let global = parse(&FN.replace("        x, w = args\n", ""));
        assert!(!keeps(&locals, &global));
        // The read gone with it, or another name read from the module: kept.
        assert!(keeps(
            &locals,
            &parse(&FN.replace("x, w = args\n        return x", "return args"))
        ));
        let other = parse("class F:\n    def forward(ctx, *args):\n        return y\ny = 1\n");
        assert!(keeps(&locals, &other));
    }

    #[test]
    fn a_function_of_the_same_name_elsewhere_is_another() {
        let locals = locals(&parse(FN));
        let elsewhere = parse("def forward():\n    return x\nx = 1\n");
        assert!(keeps(&locals, &elsewhere));
    }
}
