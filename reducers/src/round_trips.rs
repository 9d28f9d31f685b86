//! A call applied to another's result with the same settings keeps them the same.
//!
//! `X = torch.stft(x, 1024, 256, window=w, center=False)` then `torch.istft(X, 1024, 256,
//! window=w, center=False)` is a round trip: the report's point is that it does not come back.
//! With `window` and `center` dropped from the `stft` alone, `istft` still fails the same way,
//! and the pair reads as a misuse (an inverse with other settings than its transform). Where a
//! call's first argument is another call's result (directly, or through a name bound once)
//! and the two share at least two arguments (the same keyword with the same value, or the same
//! value at the same place after the first), a candidate that still has the pair keeps those
//! arguments alike: both or neither, with the same value.

use crate::python::{Expr, Script, all_exprs, ast, single_bindings};

/// Where an argument is, in both calls of a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Keyword(String),
    Positional(usize),
}

/// A call applied to another call's result, with the arguments they share.
#[derive(Debug, Clone)]
pub struct RoundTrip {
    /// The callees as written: the outer call's, the inner's.
    callees: (String, String),
    shared: Vec<Place>,
}

/// The round trips of `script`: the pairs that share two arguments or more.
pub fn round_trips(script: &Script) -> Vec<RoundTrip> {
    pairs(script)
        .into_iter()
        .filter_map(|(outer, inner)| {
            let shared: Vec<Place> = places(outer)
                .into_iter()
                .filter(|p| value(script, outer, p).is_some())
                .filter(|p| value(script, outer, p) == value(script, inner, p))
                .collect();
            (shared.len() >= 2).then(|| RoundTrip {
                callees: callees(script, outer, inner),
                shared,
            })
        })
        .collect()
}

/// Whether each of `trips` that `candidate` still has keeps its shared arguments alike.
pub fn keeps(trips: &[RoundTrip], candidate: &Script) -> bool {
    if trips.is_empty() {
        return true;
    }
    let now = pairs(candidate);
    trips.iter().all(|trip| {
        now.iter()
            .filter(|(outer, inner)| callees(candidate, outer, inner) == trip.callees)
            .all(|(outer, inner)| {
                trip.shared
                    .iter()
                    .all(|p| value(candidate, outer, p) == value(candidate, inner, p))
            })
    })
}

/// Each call whose first argument is a call's result, with that call.
fn pairs(script: &Script) -> Vec<(&ast::ExprCall, &ast::ExprCall)> {
    let bound = single_bindings(script.body());
    all_exprs(script.body())
        .into_iter()
        .filter_map(|e| {
            let outer = e.as_call_expr()?;
            let inner = match outer.arguments.args.first()? {
                Expr::Call(c) => c,
                Expr::Name(n) => bound.get(n.id.as_str())?.as_call_expr()?,
                _ => return None,
            };
            Some((outer, inner))
        })
        .collect()
}

fn callees(script: &Script, outer: &ast::ExprCall, inner: &ast::ExprCall) -> (String, String) {
    (
        script.slice(&*outer.func).to_string(),
        script.slice(&*inner.func).to_string(),
    )
}

/// The places of `call`'s arguments after the first.
fn places(call: &ast::ExprCall) -> Vec<Place> {
    let positional = (1..call.arguments.args.len()).map(Place::Positional);
    let keywords = call
        .arguments
        .keywords
        .iter()
        .filter_map(|k| k.arg.as_ref().map(|a| Place::Keyword(a.to_string())));
    positional.chain(keywords).collect()
}

/// The code of `call`'s argument at `place`, if it has one.
fn value<'a>(script: &'a Script, call: &ast::ExprCall, place: &Place) -> Option<&'a str> {
    let arguments = &call.arguments;
    let expr = match place {
        Place::Positional(i) => arguments.args.get(*i)?,
        Place::Keyword(name) => {
            &arguments
                .keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))?
                .value
        }
    };
    (!matches!(expr, Expr::Starred(_))).then(|| script.slice(expr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    const HEAD: &str = "import torch\nw = torch.hann_window(1024)\n";

    #[test]
    fn an_inverse_keeps_the_settings_of_its_transform() {
        let original = parse(&format!(
            "{HEAD}X = torch.stft(x, 1024, 256, window=w, center=False, return_complex=True)\ntorch.istft(X, 1024, 256, window=w, center=False)\n"
        ));
        let trips = round_trips(&original);
        assert_eq!(trips.len(), 1);
        assert_eq!(trips[0].shared.len(), 4, "{trips:?}");
        // Dropped from the transform alone: refused; from both: kept; the pair inlined: kept.
        let one_side = parse(&format!(
            "{HEAD}X = torch.stft(x, 1024, return_complex=True)\ntorch.istft(X, 1024, 256, window=w, center=False)\n"
        ));
        assert!(!keeps(&trips, &one_side));
        let both = parse(&format!(
            "{HEAD}X = torch.stft(x, 1024, window=w, center=False, return_complex=True)\ntorch.istft(X, 1024, window=w, center=False)\n"
        ));
        assert!(keeps(&trips, &both));
        let inlined = parse(&format!(
            "{HEAD}torch.istft(torch.stft(x, 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)\n"
        ));
        assert!(keeps(&trips, &inlined));
        let shrunk_one = parse(&format!(
            "{HEAD}torch.istft(torch.stft(x, 1024, 4, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)\n"
        ));
        assert!(!keeps(&trips, &shrunk_one));
    }

    #[test]
    fn calls_that_share_one_argument_are_no_pair() {
        let script = parse("import json\njson.loads(json.dumps(d, indent=2), strict=False)\n");
        assert!(round_trips(&script).is_empty());
    }
}
