//! Drop a class that does nothing: its instances become instances of its base.
//!
//! ## What it removes
//! The scaffolding that deletion leaves when a class's members all went but an instance is
//! still handed on: `class M(nn.Module): pass` kept for `torch.compile(M())`, `class Sink:`
//! with an `__init__` that does nothing, `class Config: pass` built to be passed around. For a
//! module-level class whose body does nothing (only `pass`, `...`, docstrings, bare
//! constants, and an `__init__` whose body does nothing likewise, with at most a
//! `super().__init__(...)`), and whose name is read only as the callee of calls, one
//! candidate: the class goes, and each `C(args)` becomes
//! - `B(args)` when `C` defines no `__init__`: `B.__init__` is what the arguments went to;
//! - `B(…)` with the arguments of `__init__`'s `super().__init__(…)`, or `B()` without one,
//!   when `C` defines an `__init__`: the arguments of `C(args)` went nowhere;
//!
//! where `B` is the class's base, or `object` when it has none. The oracle judges whether the
//! base's instance still fails the same way.
//!
//! ## Example
//! ```python
//! class ExportWorker(threading.Thread):     # before
//!     def __init__(self, jobs, sink):
//!         super().__init__()
//! ExportWorker(queue.Queue(), None).join()
//!
//! threading.Thread().join()                 # after
//! ```
//!
//! ## When it cannot apply
//! - The class: nested, decorated, generic, with a metaclass or other keywords, with more
//!   than one base or a base that is not a name or a dotted name, with a body holding a
//!   method other than `__init__`, an assignment or any other statement; an `__init__` that is
//!   decorated or `async`, or whose `super().__init__(…)` reads a parameter.
//! - The uses: the class name bound again, or read anywhere but as the callee of a call
//!   (`isinstance(x, C)`, a base of another class, `C.attr`), or called inside the class.
//!
//! A class that does something else but whose `__init__` does nothing (nothing at all, not
//! even `super().__init__()`), under the same rules for its uses: the `__init__` goes and each
//! `C(args)` becomes `C()`.
//!
//! An instance that later gets attributes set (`cfg.debug = True`) fails on `object()`: the
//! oracle refuses that candidate and the class stays.

use std::collections::HashSet;

use super::helpers::first_param;
use crate::edit::{Candidate, Edit, deletion_range, lines_label};
use crate::pass::{Growth, Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_exprs, ast, exprs_of, is_literal, span};
use crate::scopes::Scopes;

pub struct DropEmptyClasses;

impl Pass for DropEmptyClasses {
    /// The base's name may be longer than the class's (`nn.Module()` for `M()`), and a
    /// class called often may then grow the script by bytes; it always loses the class, so
    /// the loop still ends.
    fn info(&self) -> PassInfo {
        PassInfo {
            growth: Growth::Ladder,
            ..PassInfo::new("drop_empty_classes")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let exprs = all_exprs(script.body());
        script
            .body()
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(class) => drop_class(script, &scopes, &exprs, stmt, class)
                    .or_else(|| drop_init(script, &scopes, &exprs, stmt, class)),
                _ => None,
            })
            .collect()
    }
}

fn drop_class(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    stmt: &Stmt,
    class: &ast::StmtClassDef,
) -> Option<Candidate> {
    let text = script.text();
    if !class.decorator_list.is_empty() || class.type_params.is_some() {
        return None;
    }
    let base = match class.arguments.as_deref() {
        None => "object".to_string(),
        Some(arguments) if !arguments.keywords.is_empty() => return None,
        Some(arguments) => match &arguments.args[..] {
            [] => "object".to_string(),
            [base] if is_dotted_name(base) => script.slice(base).to_string(),
            _ => return None,
        },
    };
    // What each call becomes: the callee alone replaced, or the whole call.
    let replacement = match empty_init(class)? {
        Init::Absent => None,
        Init::Empty => Some(format!("{base}()")),
        Init::Super(arguments) => Some(format!("{base}{}", script.slice(arguments))),
    };

    let name = class.name.as_str();
    let class_range = span(stmt);
    let mut edits: Vec<Edit> = calls_of(scopes, exprs, name, &class_range)?
        .into_iter()
        .map(|call| match &replacement {
            None => Edit::replace(span(call.func.as_ref()), base.clone()),
            Some(whole) => Edit::replace(span(call), whole.clone()),
        })
        .collect();
    // `C(C())` becomes `B()` whole: a call inside one that goes needs no edit of its own.
    let whole: Vec<_> = edits.iter().map(|e| e.range.clone()).collect();
    edits.retain(|e| {
        !whole
            .iter()
            .any(|w| *w != e.range && w.start <= e.range.start && e.range.end <= w.end)
    });
    if edits.is_empty() {
        // Nothing builds it: `delete_definitions` removes it.
        return None;
    }
    edits.push(Edit::delete(deletion_range(text, class_range.clone())));
    let made = replacement.unwrap_or_else(|| format!("{base}(…)"));
    Some(Candidate::new(
        format!(
            "drop class {name} at {}, its instances `{made}`",
            lines_label(text, &class_range)
        ),
        edits,
    ))
}

/// The calls that build class `name` defined at `class_range`: `None` when the name is bound
/// again or read other than as a callee outside the class.
fn calls_of<'a>(
    scopes: &Scopes,
    exprs: &[&'a Expr],
    name: &str,
    class_range: &std::ops::Range<usize>,
) -> Option<Vec<&'a ast::ExprCall>> {
    let occurrences: Vec<_> = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name)
        .collect();
    if occurrences.iter().filter(|o| o.binds).count() != 1 {
        return None;
    }
    occurrences
        .iter()
        .filter(|o| !o.binds)
        .map(|read| {
            if class_range.contains(&read.range.start) {
                return None;
            }
            exprs.iter().find_map(|e| match e {
                Expr::Call(c) if span(c.func.as_ref()) == read.range => Some(c),
                _ => None,
            })
        })
        .collect()
}

/// A class that does something but whose `__init__` does nothing: the `__init__` goes, and
/// each `C(args)` becomes `C()` (the arguments went nowhere).
fn drop_init(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    stmt: &Stmt,
    class: &ast::StmtClassDef,
) -> Option<Candidate> {
    if empty_init(class).is_some() {
        // The whole class goes instead.
        return None;
    }
    let init = class
        .body
        .iter()
        .find(|s| matches!(s, Stmt::FunctionDef(f) if f.name.as_str() == "__init__"))?;
    let Stmt::FunctionDef(f) = init else {
        return None;
    };
    if f.is_async || !f.decorator_list.is_empty() || !matches!(super_arguments(f)?, Init::Empty) {
        return None;
    }
    let text = script.text();
    let name = class.name.as_str();
    let mut edits: Vec<Edit> = calls_of(scopes, exprs, name, &span(stmt))?
        .into_iter()
        .filter(|call| !call.arguments.is_empty())
        .map(|call| Edit::replace(span(&call.arguments), "()"))
        .collect();
    if edits.is_empty() {
        return None;
    }
    let range = span(init);
    edits.push(Edit::delete(deletion_range(text, range.clone())));
    Some(Candidate::new(
        format!(
            "drop {name}.__init__ at {}, which does nothing, and its calls' arguments",
            lines_label(text, &range)
        ),
        edits,
    ))
}

/// The `__init__` of a class whose body does nothing.
enum Init<'a> {
    /// It has none.
    Absent,
    /// One that does nothing, not even call `super().__init__()`.
    Empty,
    /// One that only calls `super().__init__(…)` with these arguments.
    Super(&'a ast::Arguments),
}

/// The `__init__` of a class whose body does nothing; `None` when the body does something.
fn empty_init(class: &ast::StmtClassDef) -> Option<Init<'_>> {
    let mut init = None;
    for stmt in &class.body {
        match stmt {
            Stmt::FunctionDef(f)
                if f.name.as_str() == "__init__"
                    && init.is_none()
                    && !f.is_async
                    && f.decorator_list.is_empty() =>
            {
                init = Some(super_arguments(f)?);
            }
            s if does_nothing(s) => {}
            _ => return None,
        }
    }
    Some(init.unwrap_or(Init::Absent))
}

/// What an `__init__` does: nothing, or only call `super().__init__(…)` with arguments that
/// read none of its parameters; `None` when it does more.
fn super_arguments(init: &ast::StmtFunctionDef) -> Option<Init<'_>> {
    first_param(init)?;
    let mut found = None;
    for stmt in &init.body {
        if does_nothing(stmt) {
            continue;
        }
        let arguments = super_init(stmt)?;
        if found.replace(arguments).is_some() {
            return None;
        }
    }
    let Some(arguments) = found else {
        return Some(Init::Empty);
    };
    let params = &init.parameters;
    let names: HashSet<&str> = params
        .posonlyargs
        .iter()
        .chain(&params.args)
        .chain(&params.kwonlyargs)
        .map(|p| p.parameter.name.as_str())
        .chain(params.vararg.iter().map(|p| p.name.as_str()))
        .chain(params.kwarg.iter().map(|p| p.name.as_str()))
        .collect();
    let reads_param = arguments
        .args
        .iter()
        .chain(arguments.keywords.iter().map(|k| &k.value))
        .flat_map(exprs_of)
        .any(|e| matches!(e, Expr::Name(n) if names.contains(n.id.as_str())));
    if reads_param {
        return None;
    }
    Some(Init::Super(arguments))
}

/// `super().__init__(…)` as a statement: its arguments.
fn super_init(stmt: &Stmt) -> Option<&ast::Arguments> {
    let Stmt::Expr(e) = stmt else {
        return None;
    };
    let Expr::Call(call) = e.value.as_ref() else {
        return None;
    };
    match call.func.as_ref() {
        Expr::Attribute(a)
            if a.attr.as_str() == "__init__"
                && matches!(a.value.as_ref(), Expr::Call(s)
                    if s.arguments.is_empty()
                    && matches!(s.func.as_ref(), Expr::Name(n) if n.id.as_str() == "super")) =>
        {
            Some(&call.arguments)
        }
        _ => None,
    }
}

/// `pass`, or a constant alone: a docstring, `...`, the `0` a shrunk attribute leaves.
fn does_nothing(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Pass(_) => true,
        Stmt::Expr(e) => is_literal(&e.value) && !matches!(e.value.as_ref(), Expr::FString(_)),
        _ => false,
    }
}

/// `B` or `a.b.B`.
fn is_dotted_name(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(a) => is_dotted_name(&a.value),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DropEmptyClasses, text)
    }

    #[test]
    fn an_empty_init_makes_the_base_without_arguments() {
        let text = "\
class Worker(threading.Thread):
    def __init__(self, jobs, sink):
        super().__init__()
w = Worker(queue.Queue(), None)
w.join()
";
        assert_eq!(results(text), ["w = threading.Thread()\nw.join()\n"]);
    }

    #[test]
    fn an_init_that_does_nothing_goes_with_its_calls_arguments() {
        let text = "\
class Readings:
    def __init__(self, samples, start):
        pass

    def __iter__(self):
        yield from ()
statistics.mean(Readings(log.samples, 1))
";
        assert_eq!(
            results(text),
            [
                "class Readings:\n\n    def __iter__(self):\n        yield from ()\nstatistics.mean(Readings())\n"
            ]
        );
        let sets = "class R:\n    def __init__(self, n):\n        self.n = n\n    def f(self): pass\nR(1)\n";
        assert!(results(sets).is_empty());
    }

    #[test]
    fn without_init_the_arguments_go_to_the_base() {
        let text = "class Net(nn.Module):\n    pass\nf = torch.compile(Net())\nWarn('x')\n";
        assert_eq!(
            results(text),
            ["f = torch.compile(nn.Module())\nWarn('x')\n"]
        );
        assert_eq!(
            results("class Failure(ValueError):\n    \"\"\"Bad.\"\"\"\nraise Failure(1, 2)\n"),
            ["raise ValueError(1, 2)\n"]
        );
    }

    #[test]
    fn a_class_without_base_becomes_object() {
        let text = "\
class Config:
    0
def run(cfg, name):
    return getattr(cfg, name)
run(Config(), None)
";
        assert_eq!(
            results(text),
            ["def run(cfg, name):\n    return getattr(cfg, name)\nrun(object(), None)\n"]
        );
        let text =
            "class Sink:\n    def __init__(self, path):\n        pass\nsend(Sink('out.csv'))\n";
        assert_eq!(results(text), ["send(object())\n"]);
    }

    #[test]
    fn the_arguments_of_super_init_go_to_the_base_when_they_read_no_parameter() {
        let text = "\
class W(Thread):
    def __init__(self, n):
        super().__init__(daemon=True)
W(3).join()
";
        assert_eq!(results(text), ["Thread(daemon=True).join()\n"]);
        let text = "\
class W(Thread):
    def __init__(self, n):
        super().__init__(name=n)
W(3).join()
";
        assert!(results(text).is_empty());
    }

    #[test]
    fn an_instance_built_in_the_arguments_of_another_goes_with_them() {
        let text = "class S:\n    def __init__(self, inner):\n        pass\nS(S(1))\n";
        assert_eq!(results(text), ["object()\n"]);
    }

    #[test]
    fn classes_that_do_something_or_are_read_otherwise_stay() {
        for text in [
            // A member.
            "class C:\n    x = 1\nC()\n",
            "class C:\n    def f(self):\n        pass\nC()\n",
            // An `__init__` that stores something.
            "class C:\n    def __init__(self, x):\n        self.x = x\nC(1)\n",
            // Read other than as a callee.
            "class C:\n    pass\nisinstance(x, C)\nC()\n",
            "class D(C):\n    pass\nclass C:\n    pass\nC()\n",
            // Bound again.
            "class C:\n    pass\nC = 1\nC()\n",
            // Decorated, with a metaclass, or two bases.
            "@dataclass\nclass C:\n    pass\nC()\n",
            "class C(metaclass=M):\n    pass\nC()\n",
            "class C(A, B):\n    pass\nC()\n",
            // Never built: delete_definitions' business.
            "class C:\n    pass\n",
        ] {
            assert!(results(text).is_empty(), "{text}: {:?}", results(text));
        }
    }
}
