//! Run a pool's map in the calling process.
//!
//! ## What it removes
//! The worker processes or threads between a function and its failure: `pool.map(f, items)`,
//! `imap` and `imap_unordered` (multiprocessing, concurrent.futures) become
//! `list(map(f, items))`, and `pool.starmap(f, items)` becomes `[f(*a) for a in items]`. The
//! exception is then raised in the script's own frames, where the other passes, and the jump to
//! the failing statement, can reach it; the pool itself is left to deletion.
//!
//! ## Example
//! ```python
//! with multiprocessing.Pool() as pool:          # before
//!     results = pool.map(verify_shard, shards)
//! with multiprocessing.Pool() as pool:          # after
//!     results = list(map(verify_shard, shards))
//! ```
//!
//! ## When it cannot apply
//! Calls with keywords or other than two positional arguments, `submit`, `apply_async` and
//! other APIs that hand back futures.

use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, all_exprs, span};

pub struct SerialMaps;

impl Pass for SerialMaps {
    /// `p.map(f, x)` is shorter than `list(map(f, x))`; each candidate removes a pool call,
    /// which no pass adds back, so growing cannot go on for ever.
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Ladder,
            ..PassInfo::new("serial_maps")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Call(call) = expr else { continue };
            let Expr::Attribute(method) = call.func.as_ref() else {
                continue;
            };
            let ([f, items], []) = (&*call.arguments.args, &*call.arguments.keywords) else {
                continue;
            };
            if matches!(f, Expr::Starred(_)) || matches!(items, Expr::Starred(_)) {
                continue;
            }
            let (f, items) = (script.slice(f), script.slice(items));
            let serial = match method.attr.as_str() {
                "map" | "imap" | "imap_unordered" => format!("list(map({f}, {items}))"),
                "starmap" => format!("[({f})(*a) for a in {items}]"),
                _ => continue,
            };
            let line = line_of(text, span(expr).start);
            out.push(Candidate::new(
                format!("run the {} at line {line} in this process", method.attr),
                vec![Edit::replace(span(expr), serial)],
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_maps_become_builtin_maps() {
        let texts = crate::passes::helpers::candidate_texts(
            &SerialMaps,
            "r = pool.map(f, xs)\ns = pool.starmap(g, ys)\nt = pool.map(f, xs, 4)\n",
        );
        assert_eq!(
            texts,
            [
                "r = list(map(f, xs))\ns = pool.starmap(g, ys)\nt = pool.map(f, xs, 4)\n",
                "r = pool.map(f, xs)\ns = [(g)(*a) for a in ys]\nt = pool.map(f, xs, 4)\n",
            ]
        );
    }
}
