//! Fold an alias `a = b` into its uses, even when `a` is bound again later.
//!
//! ## What it removes
//! `self = tok`, as inlining a method leaves it (once per inlined call, so that
//! `propagate_values`, which wants a name bound once, leaves them all): each read of `a`
//! from the assignment to the next statement of the same block that binds `a` or `b` becomes
//! `b`, and the assignment goes. One candidate per alias. And a `getattr` of a literal
//! name, the attribute it reads: `getattr(test, 'test_matches')()` → `test.test_matches()`
//! (a test runner's dispatch, once its name is propagated).
//!
//! ## Example
//! ```python
//! self = tok                        # before
//! ids = [self.vocab[w] for w in words]
//! self = tok
//! text = self.decode(ids)
//!
//! ids = [tok.vocab[w] for w in words]   # after the first candidate
//! self = tok
//! text = self.decode(ids)
//! ```
//!
//! ## When it cannot apply
//! - The assignment: inside a loop of its own function, or not of a name to another name.
//! - The reads: one after the block's next binding of `b`, or after one of `a` that is not a
//!   plain `a = …`; one in a function, lambda or class nested in the assignment's scope (a
//!   comprehension is fine); one where `b` means another variable.

use std::ops::Range;

use super::helpers::{delete_stmt, is_identifier, short};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, span};
use crate::scopes::{ScopeKind, Scopes};

pub struct FoldAliases;

impl Pass for FoldAliases {
    fn info(&self) -> PassInfo {
        PassInfo::new("fold_aliases")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let loops = loops(script.body());
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            let is_module = std::ptr::eq(body, script.body());
            for i in 0..body.len() {
                if let Some(candidate) = fold(script, &scopes, &loops, body, i, is_module) {
                    out.push(candidate);
                }
            }
        }
        out.extend(constant_getattrs(script, &all_exprs(script.body())));
        out
    }
}

/// The ranges of every `for` and `while` statement.
fn loops(body: &[Stmt]) -> Vec<Range<usize>> {
    all_bodies(body)
        .into_iter()
        .flatten()
        .filter(|s| matches!(s, Stmt::For(_) | Stmt::While(_)))
        .map(span)
        .collect()
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The candidate that folds the alias assigned by statement `i` of `body`, if it is one.
fn fold(
    script: &Script,
    scopes: &Scopes,
    loops: &[Range<usize>],
    body: &[Stmt],
    i: usize,
    is_module: bool,
) -> Option<Candidate> {
    let Stmt::Assign(assign) = &body[i] else {
        return None;
    };
    let ([Expr::Name(alias)], Expr::Name(original)) = (&assign.targets[..], &*assign.value) else {
        return None;
    };
    let (alias, original) = (alias.id.as_str(), original.id.as_str());
    if alias == original {
        return None;
    }
    let stmt = span(&body[i]);
    let target = span(&assign.targets[0]);
    let scope = scopes
        .occurrences
        .iter()
        .find(|o| o.binds && o.range == target)?
        .scope;
    // In a loop, a read before the assignment may see the alias of the previous pass.
    let scope_range = scope.map(|s| scopes.scopes[s].range.clone());
    if loops
        .iter()
        .any(|l| contains(l, &stmt) && scope_range.as_ref().is_none_or(|s| contains(s, l)))
    {
        return None;
    }
    // The region: the statements after it up to the next one that binds either name.
    let binds = |range: &Range<usize>| {
        scopes.occurrences.iter().any(|o| {
            o.binds && (o.name == alias || o.name == original) && contains(range, &o.range)
        })
    };
    let mut region = Vec::new();
    let mut later = None;
    for next in &body[i + 1..] {
        let range = span(next);
        if binds(&range) {
            // A plain `a = …` reads the alias in its value, and starts a new variable.
            if let Stmt::Assign(again) = next
                && let [Expr::Name(n)] = &again.targets[..]
                && n.id.as_str() == alias
                && !binds(&span(&*again.value))
            {
                region.push(span(&*again.value));
                later = Some(range.end);
            }
            break;
        }
        region.push(range);
    }
    let meaning = scopes.resolve(original, scope);
    let mut reads = Vec::new();
    for o in &scopes.occurrences {
        if o.binds || o.name != alias || scopes.resolve_occurrence(o) != scope {
            continue;
        }
        let own = through_comprehensions(scopes, o.scope, scope);
        if region.iter().any(|r| contains(r, &o.range)) {
            if !own || scopes.resolve(original, o.scope) != meaning {
                return None;
            }
            reads.push(o.range.clone());
        } else if later.is_some_and(|end| o.range.start >= end) {
            // A read of the next variable of that name.
        } else if !own || o.range.start >= stmt.start {
            return None;
        }
    }
    if reads.is_empty() {
        return None;
    }
    let text = script.text();
    let mut edits: Vec<Edit> = reads
        .iter()
        .map(|r| Edit::replace(r.clone(), original))
        .collect();
    edits.push(delete_stmt(script, body, i, is_module));
    Some(Candidate::new(
        format!(
            "fold `{alias} = {original}` at line {} into its reads ({})",
            line_of(text, stmt.start),
            reads.len()
        ),
        edits,
    ))
}

/// Whether scope `from` is `to` or nested in it through comprehensions only, which run where
/// they stand.
fn through_comprehensions(scopes: &Scopes, from: Option<usize>, to: Option<usize>) -> bool {
    let mut at = from;
    while at != to {
        let Some(id) = at else { return false };
        if scopes.scopes[id].kind != ScopeKind::Comprehension {
            return false;
        }
        at = scopes.scopes[id].parent;
    }
    true
}

/// Each `getattr(obj, "name")` with a literal name as the attribute it reads, `obj.name`: what
/// a test runner's dispatch leaves once its name is propagated, and whose string no literal
/// shrinking can cut.
fn constant_getattrs(script: &Script, exprs: &[&Expr]) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for &expr in exprs {
        let Expr::Call(call) = expr else { continue };
        let [obj, Expr::StringLiteral(name)] = &*call.arguments.args else {
            continue;
        };
        let name = name.value.to_str();
        if !matches!(call.func.as_ref(), Expr::Name(f) if f.id.as_str() == "getattr")
            || !call.arguments.keywords.is_empty()
            || !is_identifier(name)
        {
            continue;
        }
        let range = span(expr);
        out.push(Candidate::new(
            format!(
                "read `{}` as the attribute `.{name}` at line {}",
                short(script.slice(expr)),
                line_of(text, range.start)
            ),
            vec![Edit::replace(
                range,
                format!("{}.{name}", script.operand(obj)),
            )],
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    fn folds(text: &str) -> Vec<String> {
        candidate_texts(&FoldAliases, text)
    }

    #[test]
    fn a_compiled_module_bound_to_its_own_name_folds() {
        let text = "model = M(1)\ncompiled = torch.compile(model)\nmodel = compiled\nmodel(x)\n";
        assert_eq!(
            folds(text),
            ["model = M(1)\ncompiled = torch.compile(model)\ncompiled(x)\n"]
        );
    }

    #[test]
    fn each_alias_folds_up_to_the_next_binding() {
        assert_eq!(
            folds("self = tok\na = self.f()\nself = tok\nb = self.g()\n"),
            [
                "a = tok.f()\nself = tok\nb = self.g()\n",
                "self = tok\na = self.f()\nb = tok.g()\n",
            ]
        );
    }

    #[test]
    fn a_read_in_a_comprehension_folds_and_one_in_a_lambda_does_not() {
        assert_eq!(
            folds("self = tok\nids = [self.v[w] for w in ws]\n"),
            ["ids = [tok.v[w] for w in ws]\n"]
        );
        assert!(folds("self = tok\nf = lambda: self.v\n").is_empty());
    }

    #[test]
    fn a_rebound_original_or_a_loop_stops_the_fold() {
        assert!(folds("self = tok\ntok = 1\nself.f()\n").is_empty());
        assert!(folds("for i in x:\n    self.f()\n    self = tok\n").is_empty());
        assert!(folds("self = tok\nids = [self for tok in ws]\n").is_empty());
    }

    #[test]
    fn a_getattr_of_a_literal_name_reads_the_attribute() {
        let texts = folds("getattr([*suite][0], 'test_one')()\ngetattr(a, 'not valid')\n");
        assert!(
            texts.contains(&"[*suite][0].test_one()\ngetattr(a, 'not valid')\n".to_string()),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t.contains("a.not")), "{texts:?}");
    }
}
