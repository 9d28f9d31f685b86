//! Move a PyTorch repro to the CPU and to float32, the setting any machine can rerun.
//!
//! ## What it removes
//! What ties a repro to a GPU or to a precision, site by site:
//! - the strings `"cuda"` and `"cuda:N"` become `"cpu"`, and `torch.device("cuda...")`
//!   becomes `"cpu"`;
//! - `.cuda(...)` calls go (`x.cuda()` becomes `x`), and so do `.to(...)` calls that move to a
//!   device or cast to a floating dtype (`.to(device)`, `.to("cuda")`, `.to(torch.half)`);
//! - `device=...` keyword arguments go;
//! - `torch.float64`, `torch.double`, `torch.half`, `torch.float16` and `torch.bfloat16`
//!   become `torch.float32`; in a `dtype=...` keyword, dropping the keyword is tried second;
//!   a `dtype=...` keyword holding anything but an integer, boolean or complex torch dtype
//!   (a name, `torch.float32`) is dropped;
//! - `.double()`, `.half()` and `.bfloat16()` calls go.
//!
//! One candidate per change, each site's in the order above, after one candidate that
//! makes the first change of every site that does not overlap an earlier one (a `.to(...)`
//! that goes takes the `"cuda"` inside it along).
//!
//! ## Example
//! ```python
//! x = torch.randn(4, 4, device="cuda", dtype=torch.float16)   # before
//! y = x.half().cuda()
//! x = torch.randn(4, 4, dtype=torch.float32)                  # after the first candidate
//! y = x
//! ```
//!
//! ## When it cannot apply
//! Scripts that import nothing from torch. `.to(...)` calls and `dtype=` keywords that name
//! an integer, boolean or complex dtype stay, since they change values, not placement or
//! precision. `torch.half` becoming `torch.float32` makes the script longer: the pass may
//! grow the script (see `Pass::may_grow`), and each rewrite is taken at most once.

use std::collections::HashMap;
use std::ops::Range;

use super::helpers::short;
use crate::edit::{Candidate, Edit, line_of, list_item_range};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Ranged, Script, all_exprs, ast, span};
use crate::torch::{torch_imports, torch_path};

pub struct CpuFloat32;

/// The floating dtypes other than float32, by their attribute name on `torch`.
const OTHER_FLOATS: &[&str] = &["float64", "double", "half", "float16", "bfloat16"];

/// The dtypes whose cast changes values rather than precision: casts to them stay.
const NOT_FLOATS: &[&str] = &[
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "short",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "complex32",
    "chalf",
];

/// A call argument that a change drops, so that the combined candidate can drop several of
/// one call's arguments without two edits claiming the same comma.
struct Argument {
    arguments: Range<usize>,
    items: Vec<Range<usize>>,
    index: usize,
}

struct Change {
    description: String,
    edit: Edit,
    argument: Option<Argument>,
}

/// The changes proposed for one place of the script, best first, and the bytes they touch.
struct Site {
    cover: Range<usize>,
    changes: Vec<Change>,
}

impl Pass for CpuFloat32 {
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Ladder,
            ..PassInfo::new("cpu_float32")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let imports = torch_imports(script);
        if imports.is_empty() {
            return Vec::new();
        }
        let text = script.text();
        let mut sites = Vec::new();
        // The literals and dtypes that a site of their own already rewrites.
        let mut taken: Vec<Range<usize>> = Vec::new();
        for expr in all_exprs(script.body()) {
            let range = span(expr);
            let line = line_of(text, range.start);
            match expr {
                Expr::Call(call) => {
                    let path = torch_path(&imports, &call.func);
                    if path.as_deref() == Some("torch.device")
                        && let Some(Expr::StringLiteral(s)) = call.arguments.args.first()
                        && is_cuda(s)
                    {
                        let quote = if script.slice(s).ends_with('\'') {
                            "'"
                        } else {
                            "\""
                        };
                        let cpu = format!("{quote}cpu{quote}");
                        taken.push(span(s));
                        sites.push(Site {
                            cover: range.clone(),
                            changes: vec![Change {
                                description: format!(
                                    "`{}` → `{cpu}` at line {line}",
                                    short(script.slice(expr))
                                ),
                                edit: Edit::replace(range.clone(), cpu),
                                argument: None,
                            }],
                        });
                    }
                    if path.is_none()
                        && let Expr::Attribute(method) = &*call.func
                        && dropped_method(&imports, method.attr.as_str(), &call.arguments)
                    {
                        let suffix = span(&*method.value).end..range.end;
                        sites.push(Site {
                            cover: suffix.clone(),
                            changes: vec![Change {
                                description: format!(
                                    "drop `{}` at line {line}",
                                    short(text[suffix.clone()].trim_start())
                                ),
                                edit: Edit::delete(suffix),
                                argument: None,
                            }],
                        });
                    }
                    sites.extend(keyword_sites(script, &imports, call, &mut taken));
                }
                Expr::Attribute(_) if !taken.contains(&range) => {
                    if let Some(change) = float32(script, &imports, expr) {
                        sites.push(Site {
                            cover: range,
                            changes: vec![change],
                        });
                    }
                }
                Expr::StringLiteral(s) if !taken.contains(&range) && is_cuda(s) => {
                    let literal = script.slice(s);
                    let cpu = literal.replacen(s.value.to_str(), "cpu", 1);
                    sites.push(Site {
                        cover: range.clone(),
                        changes: vec![Change {
                            description: format!("`{literal}` → `{cpu}` at line {line}"),
                            edit: Edit::replace(range, cpu),
                            argument: None,
                        }],
                    });
                }
                _ => {}
            }
        }
        // Source order: a site that holds another starts first, so the combined candidate
        // takes the outer change (a `.to(...)` that goes, rather than the `"cuda"` in it).
        sites.sort_by_key(|s| s.cover.start);
        let mut out = Vec::new();
        if let Some(all) = everything(&sites) {
            out.push(all);
        }
        for site in sites {
            for change in site.changes {
                out.push(Candidate::new(change.description, vec![change.edit]));
            }
        }
        out
    }
}

/// Whether a string literal is `"cuda"` or `"cuda:N"`.
fn is_cuda(s: &ast::ExprStringLiteral) -> bool {
    if s.value.is_implicit_concatenated() {
        return false;
    }
    let value = s.value.to_str();
    value == "cuda"
        || value
            .strip_prefix("cuda:")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether a method call `.name(arguments)` only moves to a device or changes precision:
/// `.cuda(...)`, `.double()`, `.half()`, `.bfloat16()`, and `.to(...)` with no argument that
/// names an integer, boolean or complex dtype.
fn dropped_method(
    imports: &HashMap<String, String>,
    name: &str,
    arguments: &ast::Arguments,
) -> bool {
    match name {
        "cuda" => true,
        "double" | "half" | "bfloat16" => arguments.is_empty(),
        "to" => {
            !arguments.is_empty()
                && arguments
                    .iter_source_order()
                    .all(|a| !is_not_float(imports, a.value()))
        }
        _ => false,
    }
}

/// Whether `expr` is `torch.<dtype>` for a dtype whose cast changes values.
fn is_not_float(imports: &HashMap<String, String>, expr: &Expr) -> bool {
    torch_path(imports, expr)
        .and_then(|p| p.strip_prefix("torch.").map(|d| NOT_FLOATS.contains(&d)))
        .unwrap_or(false)
}

/// `torch.half` → `torch.float32` (keeping the alias `torch` goes by), for the floating
/// dtypes other than float32.
fn float32(script: &Script, imports: &HashMap<String, String>, expr: &Expr) -> Option<Change> {
    let Expr::Attribute(attribute) = expr else {
        return None;
    };
    let path = torch_path(imports, expr)?;
    let dtype = path.strip_prefix("torch.")?;
    if !OTHER_FLOATS.contains(&dtype) {
        return None;
    }
    let range = span(attribute);
    let before = script.slice(attribute);
    let after = format!("{}.float32", script.slice(&*attribute.value));
    let line = line_of(script.text(), range.start);
    Some(Change {
        description: format!("`{before}` → `{after}` at line {line}"),
        edit: Edit::replace(range, after),
        argument: None,
    })
}

/// The `device=` and `dtype=` keywords of `call`: a device keyword goes; a floating dtype is
/// rewritten to float32, then its keyword goes; any other dtype keyword that does not name
/// an integer, boolean or complex dtype goes.
fn keyword_sites(
    script: &Script,
    imports: &HashMap<String, String>,
    call: &ast::ExprCall,
    taken: &mut Vec<Range<usize>>,
) -> Vec<Site> {
    let text = script.text();
    let arguments = &call.arguments;
    let items: Vec<Range<usize>> = arguments
        .iter_source_order()
        .map(|a| span(&a.range()))
        .collect();
    let mut out = Vec::new();
    for keyword in &arguments.keywords {
        let Some(arg) = keyword.arg.as_ref().map(|a| a.as_str()) else {
            continue;
        };
        if arg != "device" && arg != "dtype" {
            continue;
        }
        if arg == "dtype" && is_not_float(imports, &keyword.value) {
            continue;
        }
        let range = span(keyword);
        let index = items
            .iter()
            .position(|i| *i == range)
            .expect("keyword is an item");
        let line = line_of(text, range.start);
        let mut changes = Vec::new();
        if arg == "dtype"
            && let Some(change) = float32(script, imports, &keyword.value)
        {
            taken.push(span(&keyword.value));
            changes.push(change);
        }
        let edit = if items.len() == 1 {
            Edit::replace(span(arguments), "()")
        } else {
            Edit::delete(list_item_range(text, &items, index))
        };
        changes.push(Change {
            description: format!("drop `{}` at line {line}", short(script.slice(keyword))),
            edit,
            argument: Some(Argument {
                arguments: span(arguments),
                items: items.clone(),
                index,
            }),
        });
        out.push(Site {
            cover: range,
            changes,
        });
    }
    out
}

/// The first change of every site that does not overlap an earlier one, as one candidate,
/// when that is at least two changes.
fn everything(sites: &[Site]) -> Option<Candidate> {
    let mut covered: Vec<Range<usize>> = Vec::new();
    let mut edits = Vec::new();
    // Dropped arguments, by the argument list they belong to.
    let mut dropped: Vec<(&Argument, Vec<usize>)> = Vec::new();
    let mut count = 0;
    for site in sites {
        if covered
            .iter()
            .any(|c| c.start < site.cover.end && site.cover.start < c.end)
        {
            continue;
        }
        covered.push(site.cover.clone());
        count += 1;
        let first = &site.changes[0];
        match &first.argument {
            Some(a) => match dropped.iter_mut().find(|d| d.0.arguments == a.arguments) {
                Some(d) => d.1.push(a.index),
                None => dropped.push((a, vec![a.index])),
            },
            None => edits.push(first.edit.clone()),
        }
    }
    for (argument, indices) in &dropped {
        edits.extend(drop_items(&argument.arguments, &argument.items, indices));
    }
    (count > 1).then(|| {
        Candidate::new(
            format!("move everything to cpu and float32 ({count} sites)"),
            edits,
        )
    })
}

/// Edits that drop the items `drop` (sorted) of an argument list, each run of consecutive
/// items with the commas around it so that what stays still parses; `()` when all go.
fn drop_items(arguments: &Range<usize>, items: &[Range<usize>], drop: &[usize]) -> Vec<Edit> {
    if drop.len() == items.len() {
        return vec![Edit::replace(arguments.clone(), "()")];
    }
    let mut edits = Vec::new();
    let mut i = 0;
    while i < drop.len() {
        let first = drop[i];
        let mut last = first;
        while i + 1 < drop.len() && drop[i + 1] == last + 1 {
            i += 1;
            last = drop[i];
        }
        if last + 1 < items.len() {
            edits.push(Edit::delete(items[first].start..items[last + 1].start));
        } else {
            edits.push(Edit::delete(items[first - 1].end..items[last].end));
        }
        i += 1;
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&CpuFloat32, text)
    }

    #[test]
    fn the_first_candidate_changes_every_site_and_drops_neighbouring_keywords_cleanly() {
        let text = "import torch\nx = torch.ones(2, device=d, dtype=dt).cuda().half()\n";
        assert_eq!(results(text)[0], "import torch\nx = torch.ones(2)\n");
    }

    #[test]
    fn a_to_call_goes_with_the_cuda_string_inside_it() {
        let text = "import torch\ny = x.to(\"cuda:1\")\n";
        assert_eq!(
            results(text),
            ["import torch\ny = x\n", "import torch\ny = x.to(\"cpu\")\n"]
        );
    }

    #[test]
    fn a_floating_dtype_keyword_is_rewritten_then_dropped() {
        let text = "import torch as th\nx = th.zeros(3, dtype=th.float64)\n";
        assert_eq!(
            results(text),
            [
                "import torch as th\nx = th.zeros(3, dtype=th.float32)\n",
                "import torch as th\nx = th.zeros(3)\n"
            ]
        );
    }

    #[test]
    fn casts_to_integer_dtypes_stay() {
        let text = "import torch\ni = x.to(torch.long)\nj = torch.zeros(3, dtype=torch.int64)\n";
        assert!(results(text).is_empty());
    }

    #[test]
    fn torch_device_of_cuda_becomes_the_string_cpu() {
        let text = "import torch\nd = torch.device('cuda', 0)\n";
        assert_eq!(results(text), ["import torch\nd = 'cpu'\n"]);
    }

    #[test]
    fn dropping_runs_of_arguments_keeps_the_others_parsing() {
        let items = [2..3, 5..6, 8..9, 11..12];
        let text = "f(a, b, c, d)";
        let apply = |drop: &[usize]| {
            crate::edit::apply_edits(text, &drop_items(&(1..13), &items, drop)).unwrap()
        };
        assert_eq!(apply(&[0, 1]), "f(c, d)");
        assert_eq!(apply(&[2, 3]), "f(a, b)");
        assert_eq!(apply(&[0, 2, 3]), "f(b)");
        assert_eq!(apply(&[0, 1, 2, 3]), "f()");
    }

    #[test]
    fn nothing_is_proposed_on_a_script_without_torch() {
        let plain = include_str!("../../tests/fixtures/inline_calls/calls_and_methods.py");
        assert!(results(plain).is_empty());
        assert!(results("device = \"cuda\"\ny = x.to(device).half()\n").is_empty());
    }
}
