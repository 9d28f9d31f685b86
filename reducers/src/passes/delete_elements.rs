//! Delete elements of list, tuple, set and dict displays.
//!
//! ## What it removes
//! For every display with two or more elements, all but the first at once (from three on),
//! then each element alone with its comma, the longest first. A dict entry goes with its key;
//! a tuple left with one element keeps a trailing comma, but for a subscript's index (`x[:,
//! 0]` → `x[0]`).
//!
//! ## Example
//! ```python
//! BOARDS = {"imu-01": {...}, "thermal-07": {...}}   # before
//! BOARDS = {"thermal-07": {...}}                    # after
//! ```
//!
//! ## When it cannot apply
//! Displays of one element: no pass empties a display, since an empty list, dict or tensor
//! (`torch.tensor([[]])`) takes another code path, and a failure that survives it is often
//! another bug. Comprehensions, and `**mapping` entries.

use std::ops::Range;

use super::helpers::largest_first;
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Expr, Script, all_exprs, span};

pub struct DeleteElements;

impl Pass for DeleteElements {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("delete_elements")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut out = Vec::new();
        let exprs = all_exprs(script.body());
        // The indices of subscripts written as bare tuples (`x[:, 0]`).
        let indices: Vec<Range<usize>> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Subscript(s) => match s.slice.as_ref() {
                    Expr::Tuple(t) if !t.parenthesized => Some(span(&*s.slice)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for expr in exprs {
            let (kind, items): (&str, Vec<Range<usize>>) = match expr {
                Expr::List(l) => ("list", l.elts.iter().map(span).collect()),
                Expr::Tuple(t) => ("tuple", t.elts.iter().map(span).collect()),
                Expr::Set(s) => ("set", s.elts.iter().map(span).collect()),
                Expr::Dict(d) => {
                    let Some(items) = d
                        .items
                        .iter()
                        .map(|item| Some(span(item.key.as_ref()?).start..span(&item.value).end))
                        .collect::<Option<Vec<_>>>()
                    else {
                        continue;
                    };
                    ("dict", items)
                }
                _ => continue,
            };
            if items.len() < 2 {
                continue;
            }
            let line = line_of(text, span(expr).start);
            // A tuple left with one element needs its trailing comma to stay a tuple, but
            // for a subscript's index: `x[0]` is what a person writes, not `x[0,]`.
            let comma = if kind == "tuple" && !indices.contains(&span(expr)) {
                ","
            } else {
                ""
            };
            let (first, last) = (&items[0], &items[items.len() - 1]);
            if items.len() > 2 {
                out.push(Candidate::new(
                    format!("keep only the first element of the {kind} at line {line}"),
                    vec![Edit::replace(first.end..last.end, comma)],
                ));
            }
            for (i, item) in items.iter().enumerate() {
                let edit = if items.len() == 2 {
                    let other = &text[items[1 - i].clone()];
                    Edit::replace(first.start..last.end, format!("{other}{comma}"))
                } else if i + 1 < items.len() {
                    Edit::delete(item.start..items[i + 1].start)
                } else {
                    Edit::delete(items[i - 1].end..item.end)
                };
                out.push(Candidate::new(
                    format!("delete element {} of the {kind} at line {line}", i + 1),
                    vec![edit],
                ));
            }
        }
        largest_first(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    #[test]
    fn a_one_element_list_is_not_emptied() {
        assert!(candidate_texts(&DeleteElements, "torch.tensor([[1.0]])\n").is_empty());
        assert!(candidate_texts(&DeleteElements, "a = (x,)\nb = {k: v}\nc = {s}\n").is_empty());
    }

    #[test]
    fn an_index_left_with_one_element_has_no_comma() {
        let texts = candidate_texts(&DeleteElements, "y = x[:, 0]\nt = (a, b)\n");
        assert!(
            texts.contains(&"y = x[0]\nt = (a, b)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"y = x[:, 0]\nt = (b,)\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn two_elements_go_down_to_one_never_none() {
        let texts = candidate_texts(&DeleteElements, "x = [a, b]\n");
        assert_eq!(texts, ["x = [b]\n", "x = [a]\n"]);
    }
}
