//! Move the arguments of a class's one construction into its `__init__`.
//!
//! ## What it removes
//! A module-level class instantiated at exactly one place, `C(args)` (its name is read
//! nowhere else), whose `__init__` takes plain parameters: for each argument bound to a
//! parameter that `__init__` reads exactly once (and never assigns), the read becomes the
//! argument's code (in parentheses when it is not atomic), the parameter goes from the
//! signature and the argument from the call. One candidate binds all such arguments of the
//! class at once; when there are several, one candidate per argument follows. What the
//! argument was bound to (`self.cfg = Config()`) is then propagate_values' to carry further,
//! to the code that reads it, while the class itself stays a class (as `torch.jit.script`
//! and `torch.export` need it, unlike flatten_classes' functions).
//!
//! ## Example
//! ```python
//! class Scorer(torch.nn.Module):         # before
//!     def __init__(self, cfg):
//!         super().__init__()
//!         self.cfg = cfg
//! torch.export.export(Scorer(ExportConfig()), args)
//!
//! class Scorer(torch.nn.Module):         # after
//!     def __init__(self):
//!         super().__init__()
//!         self.cfg = ExportConfig()
//! torch.export.export(Scorer(), args)
//! ```
//!
//! ## When it cannot apply
//! - The class: not at module level, bound more than once, named anywhere but in the one
//!   call (a subclass, `C.__init__`, a second construction), decorated, with keywords such as
//!   `metaclass=`, with a `__new__`, or with an `__init__` that is defined more than once,
//!   decorated, or takes `*args`, `**kwargs`, positional-only or keyword-only parameters.
//! - The call: with `*` or `**`, or an argument the signature cannot take.
//! - An argument: whose parameter `__init__` reads more than once, never, or assigns; read
//!   in a nested function or lambda (it would be evaluated later, or many times); that
//!   reads a name that `__init__` cannot see as the caller does (a local of the calling
//!   function, a name `__init__` binds too); that yields, awaits or binds with `:=`; or
//!   that holds quotes or braces and would go into an f-string.

use std::ops::Range;

use super::helpers::{first_param, match_arguments};
use crate::edit::{Candidate, Edit, line_of, list_item_range};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Ranged, Script, Stmt, all_exprs, ast, exprs_of, is_atomic, span};
use crate::scopes::{ScopeKind, Scopes};

pub struct BindArguments;

impl Pass for BindArguments {
    fn info(&self) -> PassInfo {
        PassInfo::new("bind_arguments")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let exprs = all_exprs(script.body());
        let mut out = Vec::new();
        for stmt in script.body() {
            let Stmt::ClassDef(class) = stmt else {
                continue;
            };
            out.extend(bind_class(script, &scopes, &exprs, class));
        }
        out
    }
}

/// One argument of the call that can go into `__init__`: the read it replaces, the code that
/// replaces it, and the indexes of the parameter and of the argument it takes out.
struct Binding {
    read: Range<usize>,
    code: String,
    parameter: usize,
    argument: usize,
}

/// The candidates for one module-level class: all its bindable arguments at once, then each.
fn bind_class(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    class: &ast::StmtClassDef,
) -> Vec<Candidate> {
    let Some(call) = one_construction(scopes, exprs, class) else {
        return Vec::new();
    };
    let Some(init) = plain_init(class) else {
        return Vec::new();
    };
    let Some(init_scope) = scopes.scope_at(&span(init)) else {
        return Vec::new();
    };
    let names: Vec<&str> = init.parameters.args[1..]
        .iter()
        .map(|p| p.parameter.name.as_str())
        .collect();
    let Some(given) = match_arguments(&names, names.len(), &call.arguments) else {
        return Vec::new();
    };
    let arguments: Vec<Range<usize>> = call
        .arguments
        .iter_source_order()
        .map(|a| span(&a.range()))
        .collect();
    let bindings = bindings(
        script, scopes, exprs, init_scope, &names, &given, &arguments,
    );
    let site = Site {
        text: script.text(),
        class: class.name.as_str(),
        call,
        parameters: init.parameters.iter().map(|p| span(&p.range())).collect(),
        arguments,
    };
    let mut out = Vec::new();
    let all: Vec<&Binding> = bindings.iter().collect();
    match all.len() {
        0 => {}
        1 => out.push(site.candidate(
            &all,
            format!("the argument `{}`", names[all[0].parameter - 1]),
        )),
        n => {
            out.push(site.candidate(&all, format!("the {n} arguments")));
            for b in &all {
                out.push(
                    site.candidate(&[b], format!("the argument `{}`", names[b.parameter - 1])),
                );
            }
        }
    }
    out.retain(|c| c.apply(site.text).is_some());
    out
}

/// The one construction of a class with a plain header (no decorators, no keywords), bound
/// once and read once, as the callee of that call.
fn one_construction<'a>(
    scopes: &Scopes,
    exprs: &[&'a Expr],
    class: &ast::StmtClassDef,
) -> Option<&'a ast::ExprCall> {
    let name = class.name.as_str();
    let plain_header = class.decorator_list.is_empty()
        && class
            .arguments
            .as_ref()
            .is_none_or(|a| a.keywords.is_empty());
    let binds = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name && o.binds)
        .count();
    if !plain_header || binds != 1 {
        return None;
    }
    // The one read of the name, the callee of the one construction.
    let reads: Vec<_> = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name && !o.binds && scopes.resolve_occurrence(o).is_none())
        .collect();
    let [read] = reads.as_slice() else {
        return None;
    };
    exprs.iter().find_map(|e| match e {
        Expr::Call(c) if span(&*c.func) == read.range => Some(c),
        _ => None,
    })
}

/// The class's one `__init__` (and no `__new__`), undecorated, synchronous, with plain
/// positional parameters, the first of them its `self`.
fn plain_init(class: &ast::StmtClassDef) -> Option<&ast::StmtFunctionDef> {
    let defined = |n: &str| {
        class
            .body
            .iter()
            .filter(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == n))
            .count()
    };
    if defined("__new__") > 0 || defined("__init__") != 1 {
        return None;
    }
    let init = class.body.iter().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.as_str() == "__init__" => Some(f),
        _ => None,
    })?;
    let params = &init.parameters;
    let plain_params = params.posonlyargs.is_empty()
        && params.kwonlyargs.is_empty()
        && params.vararg.is_none()
        && params.kwarg.is_none();
    if !init.decorator_list.is_empty() || init.is_async || !plain_params || params.args.is_empty() {
        return None;
    }
    first_param(init)?;
    Some(init)
}

/// The arguments `given` to parameters `names` of `__init__` (scope `init_scope`) that can
/// move into it: each parameter read once, its value safe to evaluate there instead.
fn bindings(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    init_scope: usize,
    names: &[&str],
    given: &[Option<&Expr>],
    arguments: &[Range<usize>],
) -> Vec<Binding> {
    let f_strings: Vec<Range<usize>> = exprs
        .iter()
        .filter(|e| matches!(e, Expr::FString(_)))
        .map(|e| span(*e))
        .collect();
    let mut bindings = Vec::new();
    for (k, value) in given.iter().enumerate() {
        let Some(value) = value else { continue };
        let parameter = names[k];
        let Some(read) = single_read(scopes, init_scope, parameter) else {
            continue;
        };
        if !moves_into(script, scopes, value, read.clone(), &f_strings) {
            continue;
        }
        let Some(argument) = arguments.iter().position(|r| {
            // A keyword argument's range holds its value.
            r.contains(&span(*value).start)
        }) else {
            continue;
        };
        bindings.push(Binding {
            code: replacement(script, value, &read),
            read,
            parameter: k + 1,
            argument,
        });
    }
    bindings
}

/// What every candidate for one class edits: the parameters of its `__init__` and the
/// arguments of its one construction.
struct Site<'a> {
    text: &'a str,
    class: &'a str,
    call: &'a ast::ExprCall,
    parameters: Vec<Range<usize>>,
    arguments: Vec<Range<usize>>,
}

impl Site<'_> {
    /// The candidate binding `chosen`, described as binding `what`.
    fn candidate(&self, chosen: &[&Binding], what: String) -> Candidate {
        let text = self.text;
        let mut edits: Vec<Edit> = chosen
            .iter()
            .map(|b| Edit::replace(b.read.clone(), b.code.clone()))
            .collect();
        let taken = |f: fn(&Binding) -> usize| chosen.iter().map(|b| f(b)).collect::<Vec<_>>();
        edits.extend(remove_items(
            text,
            &self.parameters,
            &taken(|b| b.parameter),
            None,
        ));
        edits.extend(remove_items(
            text,
            &self.arguments,
            &taken(|b| b.argument),
            Some(span(&self.call.arguments)),
        ));
        let name = self.class;
        let line = line_of(text, span(self.call).start);
        Candidate::new(
            format!("bind {what} of `{name}(…)` at line {line} into its `__init__`"),
            edits,
        )
    }
}

/// The one read of parameter `name` in `__init__` (scope `init`): `None` when it is read more
/// or less than once, assigned, or read in a nested function or lambda.
fn single_read(scopes: &Scopes, init: usize, name: &str) -> Option<Range<usize>> {
    let of_parameter: Vec<_> = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name && scopes.resolve_occurrence(o) == Some(init))
        .collect();
    if of_parameter.iter().filter(|o| o.binds).count() != 1 {
        return None;
    }
    let reads: Vec<_> = of_parameter.iter().filter(|o| !o.binds).collect();
    let [read] = reads.as_slice() else {
        return None;
    };
    // Between `__init__` and the read, comprehensions only: a nested function or lambda
    // runs later, or many times.
    let mut at = read.scope;
    while let Some(id) = at {
        if id == init {
            return Some(read.range.clone());
        }
        if scopes.scopes[id].kind != ScopeKind::Comprehension {
            return None;
        }
        at = scopes.scopes[id].parent;
    }
    None
}

/// Whether `value`, an argument of the call, means the same at `read` in `__init__`: no
/// `yield`, `await` or `:=`, every name it reads is the module's there as where it is, and it
/// fits in an f-string when the read is in one.
fn moves_into(
    script: &Script,
    scopes: &Scopes,
    value: &Expr,
    read: Range<usize>,
    f_strings: &[Range<usize>],
) -> bool {
    let forbidden = exprs_of(value).iter().any(|e| {
        matches!(
            e,
            Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Await(_) | Expr::Named(_)
        )
    });
    if forbidden {
        return false;
    }
    let code = script.slice(value);
    let in_f_string = f_strings.iter().any(|f| f.contains(&read.start));
    if in_f_string && code.contains(['\'', '"', '\\', '\n', '{', '}', '#', ':', '!']) {
        return false;
    }
    let range = span(value);
    let at = scopes.innermost_at(read.start);
    scopes
        .occurrences
        .iter()
        .filter(|o| range.contains(&o.range.start) && !o.binds)
        .all(|o| {
            let here = scopes.resolve_occurrence(o);
            // A name bound inside the value itself (a comprehension's) moves with it.
            here.is_some_and(|s| range.contains(&scopes.scopes[s].range.start))
                || (here.is_none() && scopes.resolve(o.name, at).is_none())
        })
}

/// The code that stands for `value` at `at`: in parentheses unless it is atomic.
fn replacement(script: &Script, value: &Expr, at: &Range<usize>) -> String {
    let concatenated = match value {
        Expr::StringLiteral(s) => s.value.is_implicit_concatenated(),
        Expr::BytesLiteral(b) => b.value.is_implicit_concatenated(),
        Expr::FString(f) => f.value.is_implicit_concatenated(),
        _ => false,
    };
    // `1.real` reads as the number `1.` and a name.
    let before_dot =
        matches!(value, Expr::NumberLiteral(_)) && script.text()[at.end..].starts_with('.');
    let code = script.slice(value);
    if is_atomic(value) && !concatenated && !before_dot && !script.breaks_line(value) {
        code.to_string()
    } else {
        format!("({code})")
    }
}

/// The edits that take the items at `indexes` (sorted) out of the comma-separated `items`;
/// when they are all of them and `whole` is the bracketed list, it becomes `()`.
fn remove_items(
    text: &str,
    items: &[Range<usize>],
    indexes: &[usize],
    whole: Option<Range<usize>>,
) -> Vec<Edit> {
    let mut indexes = indexes.to_vec();
    indexes.sort_unstable();
    if indexes.len() == items.len()
        && let Some(whole) = whole
    {
        return vec![Edit::replace(whole, "()")];
    }
    // Runs of neighbouring items go together; a single item with its own lines and comment.
    let mut edits = Vec::new();
    let mut i = 0;
    while i < indexes.len() {
        let first = indexes[i];
        let mut last = first;
        while i + 1 < indexes.len() && indexes[i + 1] == last + 1 {
            i += 1;
            last += 1;
        }
        i += 1;
        let range = if first == last {
            list_item_range(text, items, first)
        } else if last + 1 < items.len() {
            items[first].start..items[last + 1].start
        } else if first > 0 {
            items[first - 1].end..items[last].end
        } else {
            items[first].start..items[last].end
        };
        edits.push(Edit::delete(range));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::helpers::candidate_texts;

    fn results(text: &str) -> Vec<String> {
        candidate_texts(&BindArguments, text)
    }

    #[test]
    fn the_argument_of_the_one_construction_goes_into_init() {
        let text = "class M:\n    def __init__(self, cfg):\n        self.cfg = cfg\nM(Config())\n";
        assert_eq!(
            results(text),
            ["class M:\n    def __init__(self):\n        self.cfg = Config()\nM()\n"]
        );
    }

    #[test]
    fn all_arguments_go_at_once_then_each_alone() {
        let text = "class M:\n    def __init__(self, a, b=2):\n        f(a, b)\nM(1 + 1, b=x)\n";
        assert_eq!(
            results(text),
            [
                "class M:\n    def __init__(self):\n        f((1 + 1), x)\nM()\n",
                "class M:\n    def __init__(self, b=2):\n        f((1 + 1), b)\nM(b=x)\n",
                "class M:\n    def __init__(self, a):\n        f(a, x)\nM(1 + 1)\n",
            ]
        );
    }

    #[test]
    fn a_parameter_read_twice_or_assigned_keeps_its_argument() {
        let text = "class M:\n    def __init__(self, a, b, c):\n        f(a, a)\n        b = 1\n        g(b, c)\nM(1, 2, 3)\n";
        assert_eq!(
            results(text),
            [
                "class M:\n    def __init__(self, a, b):\n        f(a, a)\n        b = 1\n        g(b, 3)\nM(1, 2)\n"
            ]
        );
    }

    #[test]
    fn a_class_named_twice_or_with_a_new_is_left_alone() {
        for text in [
            "class M:\n    def __init__(self, a):\n        f(a)\nM(1)\nM(2)\n",
            "class M:\n    def __init__(self, a):\n        f(a)\nclass N(M): pass\nM(1)\n",
            "class M:\n    def __new__(cls, a):\n        pass\n    def __init__(self, a):\n        f(a)\nM(1)\n",
            "class M:\n    def __init__(self, *a):\n        f(a)\nM(1)\n",
            "class M:\n    def __init__(self, a):\n        f(a)\nM(*x)\n",
        ] {
            assert!(results(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn an_argument_that_reads_a_local_of_the_caller_stays() {
        let text = "class M:\n    def __init__(self, a):\n        f(a)\ndef main():\n    x = 1\n    M(x)\n";
        assert!(results(text).is_empty());
        let text = "class M:\n    def __init__(self, a):\n        x = 2\n        f(a, x)\nM(x)\n";
        assert!(results(text).is_empty());
        let text = "class M:\n    def __init__(self, a):\n        f(a)\nM([y for y in x])\n";
        assert_eq!(
            results(text),
            ["class M:\n    def __init__(self):\n        f([y for y in x])\nM()\n"]
        );
    }

    #[test]
    fn a_read_in_a_lambda_stays_and_one_in_a_comprehension_goes() {
        let text = "class M:\n    def __init__(self, a):\n        self.f = lambda: a\nM(g())\n";
        assert!(results(text).is_empty());
        let text =
            "class M:\n    def __init__(self, a):\n        self.b = [1 for c in a]\nM(g())\n";
        assert_eq!(
            results(text),
            ["class M:\n    def __init__(self):\n        self.b = [1 for c in g()]\nM()\n"]
        );
    }

    /// The first candidate of `pass` on `text` whose result `pick` accepts.
    fn step(pass: &dyn Pass, text: &str, pick: impl Fn(&str) -> bool) -> String {
        let texts = candidate_texts(pass, text);
        let found = texts.iter().find(|t| pick(t)).cloned();
        found.unwrap_or_else(|| panic!("no candidate of {} fits: {texts:#?}", pass.info().name))
    }

    #[test]
    fn a_config_passed_to_a_module_reaches_the_line_that_reads_it() {
        use crate::passes::{DeleteDefinitions, PropagateValues};
        let text = "import torch\nclass ExportConfig:\n    min_points = 2\nclass PointScorer(torch.nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n        self.cfg = cfg\n    def forward(self, points):\n        if points.shape[0] > self.cfg.min_points:\n            pass\ntorch.export.export(PointScorer(ExportConfig()), (torch.ones(3, 2),))\n";
        let bound = step(&BindArguments, text, |t| {
            t.contains("self.cfg = ExportConfig()")
        });
        let carried = step(&PropagateValues, &bound, |t| {
            t.contains("> ExportConfig().min_points:") && !t.contains("self.cfg")
        });
        let read = step(&PropagateValues, &carried, |t| t.contains("> 2:"));
        let end = step(&DeleteDefinitions, &read, |t| {
            !t.contains("ExportConfig") && t.contains("> 2:")
        });
        assert_eq!(
            end,
            "import torch\nclass PointScorer(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n    def forward(self, points):\n        if points.shape[0] > 2:\n            pass\ntorch.export.export(PointScorer(), (torch.ones(3, 2),))\n"
        );
    }

    #[test]
    fn a_config_tuple_of_one_channel_builds_one_block() {
        use crate::passes::{PropagateValues, UnrollLoops};
        let text = "import torch\nclass EncoderConfig:\n    channels = (1,)\nclass StagedEncoder(torch.nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n        self.blocks = [\n            torch.nn.ModuleList()\n            for ch in cfg.channels\n        ]\n    def forward(self, mels):\n        self.blocks\ntorch.jit.script(StagedEncoder(EncoderConfig()))\n";
        let bound = step(&BindArguments, text, |t| {
            t.contains("in EncoderConfig().channels")
        });
        let read = step(&PropagateValues, &bound, |t| t.contains("in (1,)"));
        let end = step(&UnrollLoops, &read, |t| {
            t.contains("        self.blocks = [torch.nn.ModuleList()]\n")
        });
        assert!(!end.contains("cfg"), "{end}");
    }

    #[test]
    fn attributes_of_a_config_instance_become_their_values() {
        use crate::passes::PropagateValues;
        let text = "import torch\nclass RankerConfig:\n    features = 1\n    hidden = 1\ntorch.nn.Linear(RankerConfig().features, RankerConfig().hidden)\n";
        let one = step(&PropagateValues, text, |t| {
            t.contains("Linear(1, RankerConfig().hidden)")
        });
        let end = step(&PropagateValues, &one, |t| t.contains("Linear(1, 1)"));
        assert_eq!(
            end,
            "import torch\nclass RankerConfig:\n    pass\ntorch.nn.Linear(1, 1)\n"
        );
    }

    #[test]
    fn a_multi_line_call_loses_its_argument_lines() {
        let text = "class M:\n    def __init__(self, a, b):\n        f(a, b)\nM(\n    1,\n    2,  # two\n)\n";
        assert_eq!(
            results(text)[2],
            "class M:\n    def __init__(self, a):\n        f(a, 2)\nM(\n    1,\n)\n"
        );
    }
}
