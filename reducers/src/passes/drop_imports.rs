//! Drop unused imports, then any import.
//!
//! ## What it removes
//! First every import whose bound name is never used, all at once; then each unused one
//! alone (a name out of `from m import a, b`, or the whole statement when none of its names
//! is used); then each import statement, used or not — an import the failure needs for its
//! side effects stays because the oracle says so. An import that is all its block holds
//! becomes `pass`; one that shares its line goes with its `;`. `import sys` whose one use is
//! `sys.exit(n)` goes with that call turned into `raise SystemExit(n)`. A module-level
//! alias of a module path (`import torch.nn.functional as F`, `from torch import nn`) is
//! spelled out at each read (`F.layer_norm` → `torch.nn.functional.layer_norm`) and goes,
//! or becomes `import torch` when nothing imports the root package (through the alias the
//! script gives that package, when it gives one: `np.testing.assert_array_equal` after
//! `import numpy as np`): one line fewer, where
//! the reads are few enough for the script to end shorter. `import torch._dynamo.config`
//! (one path, no `as`) is tried as `import torch`.
//!
//! ## Example
//! ```python
//! import json, os      # before, with only os used
//! import os            # after
//! ```
//!
//! ## When it cannot apply
//! Star imports bind nothing visible and are only tried as whole statements.

use std::collections::HashSet;

use super::helpers::{combine, dedup, delete_stmt, delete_stmts, short};
use crate::edit::{Candidate, Edit, lines_label, list_item_range};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{Expr, Script, Stmt, all_bodies, ast, referenced_names, span};
use crate::scopes::Scopes;

pub struct DropImports;

impl Pass for DropImports {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::MainAndFinish,
            ..PassInfo::new("drop_imports")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let used: HashSet<&str> = referenced_names(script.body()).into_iter().collect();
        let mut unused = Vec::new();
        let mut all_parts = Vec::new();
        let mut whole = Vec::new();
        for (b, body) in all_bodies(script.body()).into_iter().enumerate() {
            let is_module = b == 0;
            let mut dead_stmts = Vec::new();
            for (i, stmt) in body.iter().enumerate() {
                let aliases: &[ast::Alias] = match stmt {
                    Stmt::Import(s) => &s.names,
                    Stmt::ImportFrom(s) => &s.names,
                    _ => continue,
                };
                let label = format!(
                    "`{}` at {}",
                    short(script.slice(stmt)),
                    lines_label(text, &span(stmt))
                );
                let stmt_edit = || delete_stmt(script, body, i, is_module);
                whole.push(Candidate::new(format!("drop {label}"), vec![stmt_edit()]));
                let dead: Vec<usize> = (0..aliases.len())
                    .filter(|&i| {
                        aliases[i].name.as_str() != "*" && !used.contains(bound_name(&aliases[i]))
                    })
                    .collect();
                if dead.len() == aliases.len() {
                    dead_stmts.push(Candidate::new(
                        format!("drop unused {label}"),
                        vec![stmt_edit()],
                    ));
                } else {
                    let items: Vec<_> = aliases.iter().map(span).collect();
                    for i in dead {
                        let name = bound_name(&aliases[i]);
                        let part = Candidate::new(
                            format!("drop unused name {name} from {label}"),
                            vec![Edit::delete(list_item_range(text, &items, i))],
                        );
                        all_parts.push(part.clone());
                        unused.push(part);
                    }
                }
            }
            // Dropping them all at once must not empty a block: `pass` is left in it.
            if !is_module && dead_stmts.len() == body.len() {
                all_parts.push(Candidate::new("", vec![delete_stmts(script, body, true)]));
            } else {
                all_parts.extend(dead_stmts.iter().cloned());
            }
            unused.extend(dead_stmts);
        }
        let mut out: Vec<Candidate> = combine("drop all unused imports", &all_parts)
            .into_iter()
            .collect();
        out.extend(unused);
        out.extend(plain_exit(script));
        out.extend(spelled_out(script));
        out.extend(root_packages(script));
        out.extend(whole);
        // An unused import is met again among all imports.
        dedup(&mut out);
        out
    }
}

/// `import sys` … `sys.exit(3)`, its one use, becomes `raise SystemExit(3)`: the same exit
/// without the import.
fn plain_exit(script: &Script) -> Option<Candidate> {
    let body = script.body();
    let import = body.iter().position(|s| {
        matches!(s, Stmt::Import(i) if matches!(&*i.names, [a] if a.name.as_str() == "sys" && a.asname.is_none()))
    })?;
    let uses = referenced_names(body)
        .iter()
        .filter(|n| **n == "sys")
        .count();
    if uses != 1 {
        return None;
    }
    let call = all_bodies(body)
        .into_iter()
        .flatten()
        .find_map(|s| match s {
            Stmt::Expr(e) => match e.value.as_ref() {
                Expr::Call(call)
                    if matches!(call.func.as_ref(), Expr::Attribute(a)
                    if a.attr.as_str() == "exit"
                        && matches!(a.value.as_ref(), Expr::Name(n) if n.id.as_str() == "sys"))
                        && call.arguments.keywords.is_empty()
                        && call.arguments.args.len() <= 1 =>
                {
                    Some((s, call))
                }
                _ => None,
            },
            _ => None,
        })?;
    let (stmt, call) = call;
    let raise = match call.arguments.args.first() {
        Some(arg) => format!("raise SystemExit({})", script.slice(arg)),
        None => "raise SystemExit".to_string(),
    };
    Some(Candidate::new(
        format!(
            "raise SystemExit instead of sys.exit() at {}",
            lines_label(script.text(), &span(stmt))
        ),
        vec![
            delete_stmt(script, body, import, true),
            Edit::replace(span(stmt), raise),
        ],
    ))
}

/// A module-level `import a.b.c` (one path, no `as`) as `import a`, what a person writes where
/// the script reads only the package's own names (`import torch._dynamo.config` left by the
/// minifier before `torch.sigmoid(x)`); the oracle keeps the submodule where a read needs it.
fn root_packages(script: &Script) -> Vec<Candidate> {
    let text = script.text();
    script
        .body()
        .iter()
        .filter_map(|stmt| {
            let Stmt::Import(import) = stmt else {
                return None;
            };
            let [alias] = import.names.as_slice() else {
                return None;
            };
            let (root, _) = alias.name.as_str().split_once('.')?;
            alias.asname.is_none().then(|| {
                Candidate::new(
                    format!(
                        "`{}` as `import {root}` at {}",
                        short(script.slice(stmt)),
                        lines_label(text, &span(stmt))
                    ),
                    vec![Edit::replace(span(alias), root.to_string())],
                )
            })
        })
        .collect()
}

/// A module-level import that binds one alias of a path (`import torch.nn.functional as F`,
/// `from torch import nn`) with the alias spelled out at each read, the import deleted when
/// the module also imports the path's root package, or made `import ROOT` when nothing binds
/// that name. None where a read of the alias, or of the root at that place, means something
/// else.
fn spelled_out(script: &Script) -> Vec<Candidate> {
    let body = script.body();
    let scopes = Scopes::of(body);
    let root_imports = |root: &str| {
        body.iter().any(|s| {
            matches!(s, Stmt::Import(i) if i.names.iter().any(|a| a.asname.is_none()
                && a.name.as_str().split('.').next() == Some(root)))
        })
    };
    // The name a module-level `import ROOT as NAME` binds.
    let root_alias = |root: &str| {
        body.iter().find_map(|s| match s {
            Stmt::Import(i) => i.names.iter().find_map(|a| {
                (a.name.as_str() == root)
                    .then_some(a.asname.as_ref())
                    .flatten()
                    .map(|n| n.as_str())
            }),
            _ => None,
        })
    };
    let bound_once = |name: &str| {
        scopes
            .occurrences
            .iter()
            .filter(|o| o.name == name && o.binds)
            .count()
            == 1
    };
    let mut out = Vec::new();
    for (i, stmt) in body.iter().enumerate() {
        let (path, bound) = match stmt {
            Stmt::Import(s) => match &s.names[..] {
                [a] => match &a.asname {
                    Some(asname) => (a.name.to_string(), asname.as_str()),
                    None => continue,
                },
                _ => continue,
            },
            Stmt::ImportFrom(s) if s.level == 0 => match (&s.module, &s.names[..]) {
                (Some(module), [a]) if a.name.as_str() != "*" => (
                    format!("{}.{}", module.as_str(), a.name.as_str()),
                    a.asname.as_ref().unwrap_or(&a.name).as_str(),
                ),
                _ => continue,
            },
            _ => continue,
        };
        let root = path.split('.').next().unwrap_or_default();
        if bound == root {
            continue;
        }
        // `np.testing.assert_array_equal` where the script has `import numpy as np`.
        let alias = root_alias(root).filter(|a| *a != bound && bound_once(a));
        let spelled = match alias {
            Some(alias) => format!("{alias}{}", &path[root.len()..]),
            None => path.clone(),
        };
        let at = span(stmt);
        let mut edits = Vec::new();
        let mut plain = true;
        for o in scopes.occurrences.iter().filter(|o| o.name == bound) {
            if at.contains(&o.range.start) {
                continue;
            }
            let here = scopes.innermost_at(o.range.start);
            let shadowed = match alias {
                Some(alias) => scopes.resolve(alias, here).is_some(),
                None => scopes.resolve(root, here).is_some(),
            };
            if o.binds || scopes.resolve_occurrence(o).is_some() || shadowed {
                plain = false;
                break;
            }
            edits.push(Edit::replace(o.range.clone(), spelled.clone()));
        }
        if !plain || edits.is_empty() {
            continue;
        }
        if alias.is_some() || root_imports(root) {
            edits.push(delete_stmt(script, body, i, true));
        } else if scopes.module_binds(root) {
            continue;
        } else {
            edits.push(Edit::replace(at.clone(), format!("import {root}")));
        }
        out.push(Candidate::new(
            format!(
                "spell out `{bound}` as {spelled} at {}",
                lines_label(script.text(), &at)
            ),
            edits,
        ));
    }
    out
}

/// The name an import binds: `b` for `import a as b`, `a` for `import a.b.c`.
fn bound_name(alias: &ast::Alias) -> &str {
    match &alias.asname {
        Some(asname) => asname.as_str(),
        None => alias.name.as_str().split('.').next().unwrap_or(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::{PythonVersion, is_valid};

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DropImports, text)
    }

    #[test]
    fn an_import_that_is_all_its_block_holds_becomes_pass() {
        for text in results("def f():\n    import a\n    import b\nif x: import c\nf()\n") {
            assert!(is_valid(&text, PythonVersion::PY311), "{text}");
        }
    }

    #[test]
    fn an_import_of_a_submodule_becomes_its_root_package() {
        let texts = results("import torch._dynamo.config\nx = torch.sigmoid(y)\n");
        assert!(
            texts.contains(&"import torch\nx = torch.sigmoid(y)\n".to_string()),
            "{texts:?}"
        );
        let aliased = results("import torch.nn.functional as F\nF.relu(x)\nimport os, os.path\n");
        // An alias, and an import of more than one path, stay as they are.
        assert!(
            aliased
                .iter()
                .all(|t| !t.contains(" as F") || t.contains("torch.nn.functional as F")),
            "{aliased:?}"
        );
        assert!(
            aliased.iter().all(|t| !t.contains("import os, os\n")),
            "{aliased:?}"
        );
    }

    #[test]
    fn sys_exit_becomes_raise_system_exit_without_the_import() {
        let texts = results("import sys\n\nsys.exit(3)\n");
        assert!(
            texts.contains(&"\nraise SystemExit(3)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            !results("import sys\nsys.exit(sys.argv)\n")
                .iter()
                .any(|t| t.contains("SystemExit"))
        );
    }

    #[test]
    fn an_alias_of_a_module_path_is_spelled_out_at_its_reads() {
        let texts =
            results("import torch\nimport torch.nn.functional as F\nF.relu(torch.ones(1))\n");
        assert!(
            texts.contains(&"import torch\ntorch.nn.functional.relu(torch.ones(1))\n".to_string()),
            "{texts:?}"
        );
        let texts = results("from torch import nn\nnn.ReLU()\n");
        assert!(
            texts.contains(&"import torch\ntorch.nn.ReLU()\n".to_string()),
            "{texts:?}"
        );
        // Through the alias the script already gives the root package.
        let texts = results(
            "import numpy as np\nfrom numpy.testing import assert_array_equal\nassert_array_equal(np.round(a), a)\n",
        );
        assert!(
            texts.contains(
                &"import numpy as np\nnp.testing.assert_array_equal(np.round(a), a)\n".to_string()
            ),
            "{texts:?}"
        );
        // A read where the name, or the root package, means something else.
        for text in [
            "import torch.nn as nn\ndef f(nn):\n    return nn.ReLU()\nnn.Linear\n",
            "import torch.nn as nn\ndef f(torch):\n    return nn.ReLU()\n",
            "import torch.nn as nn\ntorch = 1\nnn.ReLU()\n",
        ] {
            assert!(
                !results(text).iter().any(|t| t.contains("torch.nn.ReLU")),
                "{text}"
            );
        }
    }

    #[test]
    fn an_import_sharing_its_line_goes_with_its_semicolon() {
        let texts = results("import a; import b\n");
        assert!(texts.contains(&"import b\n".to_string()), "{texts:?}");
        assert!(texts.contains(&"import a\n".to_string()), "{texts:?}");
    }

    #[test]
    fn dropping_a_name_keeps_the_comment_of_the_name_above_it() {
        let text = "from m import (\n    a,  # for a\n    b,\n)\na()\n";
        assert!(results(text).contains(&"from m import (\n    a,  # for a\n)\na()\n".to_string()));
    }
}
