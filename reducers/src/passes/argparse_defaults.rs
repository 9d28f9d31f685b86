//! Replace command-line options by their defaults.
//!
//! ## What it removes
//! The argparse indirection: every read `args.name` of a namespace bound by
//! `args = <…>.parse_args(…)` (or `args = parse_args()`) becomes the default that
//! `add_argument` gives `name` (`False` for `store_true`, `True` for `store_false`, `None` when
//! there is none; a string default with a `type=` becomes `type("…")`, as argparse converts it).
//! The parser is then dead code for the deletion passes. First all options at once, then each.
//!
//! ## Example
//! ```python
//! p.add_argument("--boards", default="imu-01,thermal-07")   # before
//! args = p.parse_args()
//! for board in args.boards.split(","): ...
//! for board in "imu-01,thermal-07".split(","): ...           # after
//! ```
//!
//! ## When it cannot apply
//! Options added in a loop or through a helper, defaults set with `set_defaults`, and a
//! namespace passed around under another name.

use std::collections::{HashMap, HashSet};

use super::helpers::combine;
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, span};

pub struct ArgparseDefaults;

impl Pass for ArgparseDefaults {
    /// A default is often longer than `args.name`; the parser it leaves dead is longer still.
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Ladder,
            ..PassInfo::new("argparse_defaults")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let namespaces = namespaces(script);
        if namespaces.is_empty() {
            return Vec::new();
        }
        let defaults = defaults(script);
        let mut by_option: Vec<(String, Vec<Edit>)> = Vec::new();
        for expr in all_exprs(script.body()) {
            let Expr::Attribute(attr) = expr else {
                continue;
            };
            let Expr::Name(base) = &*attr.value else {
                continue;
            };
            if !namespaces.contains(base.id.as_str()) || !attr.ctx.is_load() {
                continue;
            }
            let Some(default) = defaults.get(attr.attr.as_str()) else {
                continue;
            };
            let edit = Edit::replace(span(expr), default.clone());
            match by_option
                .iter_mut()
                .find(|(name, _)| name == attr.attr.as_str())
            {
                Some((_, edits)) => edits.push(edit),
                None => by_option.push((attr.attr.to_string(), vec![edit])),
            }
        }
        let singles: Vec<Candidate> = by_option
            .into_iter()
            .map(|(name, edits)| {
                let line = line_of(text, edits[0].range.start);
                Candidate::new(
                    format!("replace option {name} by its default (first read at line {line})"),
                    edits,
                )
            })
            .collect();
        let mut out: Vec<Candidate> = combine("replace every option by its default", &singles)
            .into_iter()
            .collect();
        out.extend(singles);
        out
    }
}

/// Names bound to the result of a `parse_args` call.
fn namespaces(script: &Script) -> HashSet<&str> {
    let mut names = HashSet::new();
    for body in all_bodies(script.body()) {
        for stmt in body {
            let Stmt::Assign(assign) = stmt else { continue };
            let [Expr::Name(target)] = &assign.targets[..] else {
                continue;
            };
            let Expr::Call(call) = &*assign.value else {
                continue;
            };
            let called = match &*call.func {
                Expr::Attribute(a) => a.attr.as_str(),
                Expr::Name(n) => n.id.as_str(),
                _ => continue,
            };
            if called == "parse_args" {
                names.insert(target.id.as_str());
            }
        }
    }
    names
}

/// Each option's destination and the code of its default.
fn defaults(script: &Script) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        let Expr::Attribute(func) = &*call.func else {
            continue;
        };
        if func.attr.as_str() != "add_argument" {
            continue;
        }
        let flags: Vec<&str> = call
            .arguments
            .args
            .iter()
            .filter_map(|a| match a {
                Expr::StringLiteral(s) => Some(s.value.to_str()),
                _ => None,
            })
            .collect();
        let keyword = |name: &str| -> Option<&Expr> {
            call.arguments
                .keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
                .map(|k| &k.value)
        };
        let dest = match keyword("dest") {
            Some(Expr::StringLiteral(s)) => s.value.to_str().to_string(),
            Some(_) => continue,
            None => match flags.iter().find(|f| f.starts_with("--")).or(flags.first()) {
                Some(flag) => flag.trim_start_matches('-').replace('-', "_"),
                None => continue,
            },
        };
        let action = match keyword("action") {
            Some(Expr::StringLiteral(s)) => Some(s.value.to_str()),
            _ => None,
        };
        let default = match (keyword("default"), action) {
            // argparse passes a string default through `type`.
            (Some(value @ Expr::StringLiteral(_)), _) if keyword("type").is_some() => {
                let ty = keyword("type").expect("checked");
                format!("{}({})", script.slice(ty), script.slice(value))
            }
            (Some(value), _) if crate::python::is_atomic(value) => script.slice(value).to_string(),
            (Some(value), _) => format!("({})", script.slice(value)),
            (None, Some("store_true")) => "False".to_string(),
            (None, Some("store_false")) => "True".to_string(),
            (None, _) => "None".to_string(),
        };
        out.insert(dest, default);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    const SCRIPT: &str = "import argparse\np = argparse.ArgumentParser()\np.add_argument(\"--boards\", default=\"a,b\")\np.add_argument(\"--samples\", type=int, default=\"3\")\np.add_argument(\"-v\", \"--verbose\", action=\"store_true\")\np.add_argument(\"targets\", nargs=\"*\", default=[\"git\"])\nargs = p.parse_args()\nrun(args.boards, args.samples, args.verbose, args.targets)\n";

    #[test]
    fn every_read_of_an_option_becomes_its_default() {
        let texts = candidate_texts(&ArgparseDefaults, SCRIPT);
        assert!(
            texts[0].ends_with("run(\"a,b\", int(\"3\"), False, [\"git\"])\n"),
            "{}",
            texts[0]
        );
        assert_eq!(texts.len(), 5, "all at once, then each of the four");
    }

    #[test]
    fn without_parse_args_nothing_is_proposed() {
        assert!(
            candidate_texts(
                &ArgparseDefaults,
                "p.add_argument('--x', default=1)\nrun(ns.x)\n"
            )
            .is_empty()
        );
    }
}
