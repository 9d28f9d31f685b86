//! Replace an expression by one of its sub-expressions.
//!
//! ## What it removes
//! The operator, call or container around a sub-expression: `f(g(x))` → `g(x)`,
//! `a.b.c` → `a.b`, `x + y` → `x`, `[x, y]` → `x`, `s if c else t` → `s`, and a method call
//! by its receiver, `model.eval()` → `model`; and an assignment to a name nothing else reads
//! by its value, `self = nn.Dropout2d(1.5)` → `nn.Dropout2d(1.5)`. A sub-expression that
//! is not atomic is wrapped in parentheses so that it binds as the whole did, and so is a number
//! before `.name`. An atomic expression alone in parentheses over several lines (a shrunk message)
//! leaves them.
//!
//! ## Example
//! ```python
//! total = sum(normalize(w) for w in weights) / len(weights)   # before
//! total = len(weights)                                         # one candidate after
//! ```
//!
//! ## When it cannot apply
//! Names and literals have no sub-expressions; an attribute that is called keeps its
//! spelling (`pb.raw()` never becomes `pb()`, which calls another object); starred and
//! slice sub-expressions are skipped, and so is a constant that would be a statement alone (`print(0)` → `0`, `limit
//! = 0` → `0`): it does nothing, deletion removes it, and in a block of its own it would
//! stay as `class Config: 0` where deletion leaves `pass`; nor is a walrus the value of an
//! assignment kept alone (`name = (n := pick())` → `n := pick()` is no statement). An assignment or `del` target is
//! only replaced by a sub-expression that can be a target, and of a comprehension, a lambda or a walrus only the parts that do not use the
//! names they bind are hoisted: the first iterable, an element that does not read them, the
//! parameters' defaults, the value. A
//! literal is not hoisted where it would be called or subscripted. In a script without
//! torch, nothing inside an `assert`'s test is hoisted but the operands of `and` and `or`:
//! no control guards such a check, and `assert total(items) == 18831` → `assert items ==
//! 18831` would compare something else (a torch check keeps its control). A tensor
//! constructor keeps its values (`torch.tensor(0.5)` never becomes `0.5`), and so does a
//! conversion (`float("-inf")` never becomes `"-inf"`): an argument keeps
//! its kind, and a float where a function takes a tensor is no code a person writes. Nor does
//! a list of one string become the string (`["k"]`), which iterates over its characters, nor
//! a display handed to a library's call one of its elements (`tuple([x])` → `tuple(x)`
//! iterates over `x`; `nested_tensor([t])` → `nested_tensor(t)` makes a tensor of another
//! rank; a lambda handed over returns what it returned), nor a comparison so handed one of
//! its operands (`torch.where(a != 0, a, b)` → `torch.where(a, a, b)` hands it integers for a
//! mask): an argument keeps its kind. A
//! library's class built and bound to a name the script calls methods on (`scheduler =
//! MultiStepLR(optimizer, …)`, `scheduler.step()`) is not replaced by one of its arguments:
//! `scheduler = optimizer` is another kind of object whose methods share names. A
//! `tuple(…)` or `list(…)` of a display is written as the display it makes: `tuple([x])` →
//! `(x,)`. A comprehension's filter is not hoisted into (`if p.requires_grad` → `if p` tests
//! the truth of a tensor); the filter is dropped whole instead (`… for p in ps if
//! p.requires_grad` → `… for p in ps`).

use super::helpers::{callee_name, dedup, is_target, largest_first, short};
use crate::edit::{Candidate, Edit, line_of};
use crate::pass::{Pass, PassInfo, Phase};
use crate::python::{
    Expr, Script, SourceOrderVisitor, all_exprs, ast, is_atomic, is_literal, is_plain_literal,
    source_order, span,
};

pub struct HoistExpressions;

impl Pass for HoistExpressions {
    fn info(&self) -> PassInfo {
        PassInfo {
            phase: Phase::Fine,
            ..PassInfo::new("hoist_expressions")
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let checks = pure_checks(script);
        let imports = crate::torch::torch_imports(script);
        let mut out = Vec::new();
        let exprs = all_exprs(script.body());
        let statements = expression_statements(script);
        // The values a tensor or an array is made from (`torch.tensor([[0.5]])`): a display
        // there is a dimension, and one of its elements in its place drops it.
        let tensor_data: Vec<std::ops::Range<usize>> = exprs
            .iter()
            .filter(|e| makes_tensor(&imports, e))
            .filter_map(|e| match e {
                Expr::Call(c) if from_values(&c.func) => c.arguments.args.first().map(span),
                _ => None,
            })
            .collect();
        // Where an attribute is called (`pb.raw()`): it keeps its whole spelling. `pb()`
        // or `super()()` calls another object, which no one writes: a failure that survives
        // it (a `TypeError` the bug does not need) is not the original's call.
        let callees: Vec<std::ops::Range<usize>> = exprs
            .iter()
            .filter_map(|e| match e {
                Expr::Call(c) if matches!(c.func.as_ref(), Expr::Attribute(_)) => {
                    Some(span(&*c.func))
                }
                _ => None,
            })
            .collect();
        let handed = handed_to_libraries(script, &exprs);
        let objects = library_objects(script, &exprs);
        let filters: Vec<std::ops::Range<usize>> = comprehension_filters(&exprs)
            .into_iter()
            .map(|(_, test)| span(test))
            .collect();
        for &expr in &exprs {
            let outer = span(expr);
            if callees.contains(&outer) || objects.contains(&outer) {
                continue;
            }
            // A comprehension's filter stays a test of what it tested (`if p.requires_grad`
            // never becomes `if p`, the truth of a tensor): the filter goes whole instead.
            if filters.contains(&outer) {
                continue;
            }
            // A list a library takes keeps being one: `tuple([x])` iterates over a tensor's
            // rows as `tuple(x)`, `nested_tensor([t])` makes a tensor of another rank as
            // `nested_tensor(t)`; so does a comparison (a mask, a condition).
            if handed.contains(&outer) {
                continue;
            }
            let constructor = makes_tensor(&imports, expr);
            if is_display(expr)
                && tensor_data
                    .iter()
                    .any(|d| d.start <= outer.start && outer.end <= d.end)
            {
                continue;
            }
            // What a pure check compares keeps its kind; `a and b` may still lose a part.
            if !matches!(expr, Expr::BoolOp(_))
                && checks
                    .iter()
                    .any(|c| c.start <= outer.start && outer.end <= c.end)
            {
                continue;
            }
            for child in children(expr) {
                // A starred or slice expression stands only where it is; an assignment or
                // `del` target only takes another target.
                if matches!(child, Expr::Starred(_) | Expr::Slice(_)) || has_slice(child) {
                    continue;
                }
                if is_target(expr) && !can_be_target(child) {
                    continue;
                }
                // The name a walrus binds is unbound without it.
                if is_target(child) && !is_target(expr) {
                    continue;
                }
                let inner = script.slice(child);
                if inner.len() >= outer.len() {
                    continue;
                }
                // A tensor stays a tensor: `torch.tensor(0.5)` never becomes `0.5`; and a
                // number a conversion makes stays a number: `float("-inf")` never becomes
                // the string `"-inf"`, which a tensor is never equal to.
                if constructor && (is_literal(child) || is_display(child)) {
                    continue;
                }
                if converts(expr, child) {
                    continue;
                }
                // A list of one string is not that string (`["k"]` → `"k"`): iterating the
                // string gives its characters, which stand for the list by accident, and a
                // pandas column list is another lookup than its name.
                if matches!(expr, Expr::List(_) | Expr::Tuple(_) | Expr::Set(_))
                    && matches!(
                        child,
                        Expr::StringLiteral(_) | Expr::BytesLiteral(_) | Expr::FString(_)
                    )
                {
                    continue;
                }
                // A statement that is a constant alone does nothing (`class Config: 0`):
                // deleting it is the candidate that says so, and leaves `pass` in a block.
                if is_plain_literal(child) && statements.contains(&outer) {
                    continue;
                }
                // A literal that would be called or subscripted fails at once, whatever the
                // failure being reduced is.
                if is_literal(child) && text[outer.end..].starts_with(['(', '[']) {
                    continue;
                }
                // `1.real` reads as the number `1.` and a name.
                let before_dot =
                    matches!(child, Expr::NumberLiteral(_)) && text[outer.end..].starts_with('.');
                let replacement = if is_atomic(child) && !before_dot {
                    inner.to_string()
                } else {
                    format!("({inner})")
                };
                out.push(Candidate::new(
                    format!(
                        "replace `{}` by `{}` at line {}",
                        short(script.slice(expr)),
                        short(inner),
                        line_of(text, outer.start)
                    ),
                    vec![Edit::replace(outer.clone(), replacement)],
                ));
            }
        }
        out.extend(spread_parentheses(script, &exprs));
        out.extend(spread_displays(script, &exprs));
        out.extend(converted_displays(script, &exprs));
        out.extend(unused_bindings(script));
        out.extend(unfiltered(script, &exprs));
        // `f(x, x)` offers `x` twice.
        dedup(&mut out);
        largest_first(&mut out);
        out
    }
}

/// Whether `expr` makes a tensor or an array from values (`torch.tensor([1.0])`,
/// `torch.ones(2)`, `np.array([1])`): its literal arguments are values of another kind.
fn makes_tensor(imports: &std::collections::HashMap<String, String>, expr: &Expr) -> bool {
    const CONSTRUCTORS: &[&str] = &[
        "tensor",
        "as_tensor",
        "from_numpy",
        "randn",
        "rand",
        "randint",
        "zeros",
        "ones",
        "empty",
        "full",
        "arange",
        "linspace",
        "eye",
        "array",
        "asarray",
    ];
    let Expr::Call(call) = expr else { return false };
    let path = crate::torch::torch_path(imports, &call.func)
        .or_else(|| match &*call.func {
            Expr::Attribute(a) if matches!(&*a.value, Expr::Name(n) if n.id.as_str() == "np" || n.id.as_str() == "numpy") => {
                Some(format!("numpy.{}", a.attr))
            }
            _ => None,
        });
    path.is_some_and(|p| {
        let (module, name) = p.rsplit_once('.').unwrap_or(("", &p));
        matches!(module, "torch" | "numpy") && CONSTRUCTORS.contains(&name)
    })
}

/// Whether a tensor constructor makes its tensor from the values it is given
/// (`torch.tensor`, `np.array`), not from sizes.
fn from_values(func: &Expr) -> bool {
    matches!(func, Expr::Attribute(a) if matches!(a.attr.as_str(), "tensor" | "as_tensor" | "array" | "asarray"))
}

/// The constructions of a library's class bound to a name that the script calls methods on
/// (`scheduler = MultiStepLR(optimizer, milestones=[5])`, then `scheduler.step()`): the
/// object the script works with. One of its arguments in its place (`scheduler =
/// optimizer`) is an object of another kind whose methods may share its names
/// (`state_dict`, `step`), which no one writes.
fn library_objects(script: &Script, exprs: &[&Expr]) -> Vec<std::ops::Range<usize>> {
    let defined = crate::python::defined_names(script.body());
    let receivers: std::collections::HashSet<&str> = exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call(c) => match &*c.func {
                Expr::Attribute(a) => a.value.as_name_expr().map(|n| n.id.as_str()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    crate::python::all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            ast::Stmt::Assign(a) => match (&a.targets[..], &*a.value) {
                ([Expr::Name(n)], value @ Expr::Call(c))
                    if receivers.contains(n.id.as_str())
                        && callee_name(&c.func).is_some_and(|f| {
                            f.starts_with(|ch: char| ch.is_ascii_uppercase())
                                && !defined.contains(f)
                        }) =>
                {
                    Some(span(value))
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Whether `expr` is a call of a builtin conversion of the literal or display `child` into a
/// value of another kind (`float("nan")`, `Decimal("0.1")`, `str(5)`); not `str("k")` nor
/// `float(1.5)`, which make what they are given.
fn converts(expr: &Expr, child: &Expr) -> bool {
    let Expr::Call(call) = expr else {
        return false;
    };
    let text = matches!(child, Expr::StringLiteral(_) | Expr::FString(_));
    match callee_name(&call.func) {
        Some("str") => !text && (is_literal(child) || is_display(child)),
        Some("bytes") => !matches!(child, Expr::BytesLiteral(_)) && is_literal(child),
        Some("float" | "int" | "complex" | "bool" | "Decimal" | "Fraction") => {
            text || matches!(child, Expr::BytesLiteral(_)) || is_display(child)
        }
        _ => false,
    }
}

fn is_display(expr: &Expr) -> bool {
    matches!(expr, Expr::List(_) | Expr::Tuple(_))
}

/// The ranges of the list, tuple and set displays and the comparisons handed as arguments to a
/// call of anything the script does not define (a library's function or class, a builtin), or
/// returned by a lambda handed so (`while_loop(cond, lambda x: (x + 1,), (x,))`): one of their
/// elements or operands in their place is another kind of argument (`torch.where(a != 0, …)`
/// takes a mask; `torch.where(a, …)`, a condition of integers, is the user's mistake).
fn handed_to_libraries(script: &Script, exprs: &[&Expr]) -> Vec<std::ops::Range<usize>> {
    let defined = crate::python::defined_names(script.body());
    exprs
        .iter()
        .filter_map(|e| match e {
            Expr::Call(c) => Some(c),
            _ => None,
        })
        .filter(|c| super::helpers::calls_library(c, &defined))
        .flat_map(|c| {
            let keywords = c.arguments.keywords.iter().map(|k| &k.value);
            c.arguments.args.iter().chain(keywords)
        })
        // A lambda handed over hands the library what it returns.
        .map(|arg| match arg {
            Expr::Lambda(l) => &*l.body,
            _ => arg,
        })
        .filter(|arg| {
            matches!(
                arg,
                Expr::List(_) | Expr::Tuple(_) | Expr::Set(_) | Expr::Compare(_)
            )
        })
        .map(span)
        .collect()
}

/// Each `tuple(…)` or `list(…)` of a list or tuple display, written as the display it makes:
/// `tuple([x])` → `(x,)`, as what propagating `inputs = [x]` into `tuple(inputs)` leaves.
fn converted_displays(script: &Script, exprs: &[&Expr]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for &expr in exprs {
        let Expr::Call(call) = expr else { continue };
        let (Expr::Name(name), [arg]) = (call.func.as_ref(), call.arguments.args.as_ref()) else {
            continue;
        };
        if !call.arguments.keywords.is_empty() {
            continue;
        }
        let name = name.id.as_str();
        let elts = match arg {
            Expr::List(l) => &l.elts,
            Expr::Tuple(t) => &t.elts,
            _ => continue,
        };
        let items: Vec<&str> = elts.iter().map(|e| script.slice(e)).collect();
        let display = match (name, items.as_slice()) {
            ("tuple", [one]) => format!("({one},)"),
            ("tuple", _) => format!("({})", items.join(", ")),
            ("list", _) => format!("[{}]", items.join(", ")),
            _ => continue,
        };
        out.push(Candidate::new(
            format!(
                "write `{}` as `{}` at line {}",
                short(script.slice(expr)),
                short(&display),
                line_of(script.text(), span(expr).start)
            ),
            vec![Edit::replace(span(expr), display)],
        ));
    }
    out
}

/// Each atomic expression on one line alone in parentheses over several lines, as what a
/// multi-line message leaves once shrunk (`(\n    "output mismatch"\n)`), on its own: the
/// parentheses group nothing then, and the lines they take count.
fn spread_parentheses(script: &Script, exprs: &[&Expr]) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for &expr in exprs {
        let range = span(expr);
        if !is_atomic(expr) || text[range.clone()].contains('\n') {
            continue;
        }
        let before = text[..range.start].trim_end();
        let after = text[range.end..].trim_start();
        if !before.ends_with('(') || !after.starts_with(')') {
            continue;
        }
        let open = before.len() - 1;
        let close = text.len() - after.len() + 1;
        // A call's parentheses are not a grouping (`return (` is).
        let head = text[..open].trim_end();
        let word = &head[head
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1)..];
        const KEYWORDS: &[&str] = &[
            "return", "yield", "await", "assert", "in", "not", "and", "or", "is", "if", "elif",
            "else", "while",
        ];
        let called = !KEYWORDS.contains(&word)
            && head.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | ')' | ']'));
        if called || !text[open..close].contains('\n') {
            continue;
        }
        out.push(Candidate::new(
            format!(
                "take `{}` out of its parentheses at line {}",
                short(script.slice(expr)),
                line_of(text, range.start)
            ),
            vec![Edit::replace(open..close, script.slice(expr).to_string())],
        ));
    }
    out
}

/// Each display of one element that spreads over several lines while the element takes one,
/// on one line: what is left of a multi-line config once its other entries are gone.
fn spread_displays(script: &Script, exprs: &[&Expr]) -> Vec<Candidate> {
    let text = script.text();
    let mut out = Vec::new();
    for &expr in exprs {
        let one = |e: &Expr| Some(script.slice(e).to_string());
        let joined = match expr {
            Expr::List(l) if l.elts.len() == 1 => one(&l.elts[0]).map(|e| format!("[{e}]")),
            Expr::Set(s) if s.elts.len() == 1 => one(&s.elts[0]).map(|e| format!("{{{e}}}")),
            Expr::Tuple(t) if t.elts.len() == 1 && t.parenthesized => {
                one(&t.elts[0]).map(|e| format!("({e},)"))
            }
            Expr::Dict(d) if d.items.len() == 1 => d.items[0].key.as_ref().map(|k| {
                format!(
                    "{{{}: {}}}",
                    script.slice(k),
                    script.slice(&d.items[0].value)
                )
            }),
            _ => None,
        };
        let range = span(expr);
        let Some(joined) = joined.filter(|j| !j.contains('\n')) else {
            continue;
        };
        if !text[range.clone()].contains('\n') {
            continue;
        }
        out.push(Candidate::new(
            format!(
                "put `{}` on one line at line {}",
                short(&joined),
                line_of(text, range.start)
            ),
            vec![Edit::replace(range, joined)],
        ));
    }
    out
}

/// The ranges of the expressions that are statements of their own.
fn expression_statements(script: &Script) -> Vec<std::ops::Range<usize>> {
    crate::python::all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            crate::python::Stmt::Expr(e) => Some(span(&*e.value)),
            _ => None,
        })
        .collect()
}

/// Each filter of each comprehension (`if p.requires_grad`), with where its `if` starts:
/// after the iterable or the filter before it.
fn comprehension_filters<'a>(exprs: &[&'a Expr]) -> Vec<(usize, &'a Expr)> {
    let generators = exprs.iter().flat_map(|e| match e {
        Expr::ListComp(c) => &c.generators[..],
        Expr::SetComp(c) => &c.generators[..],
        Expr::DictComp(c) => &c.generators[..],
        Expr::Generator(c) => &c.generators[..],
        _ => &[],
    });
    generators
        .flat_map(|g| {
            let mut after = span(&g.iter).end;
            g.ifs.iter().map(move |test| {
                let from = after;
                after = span(test).end;
                (from, test)
            })
        })
        .collect()
}

/// Each comprehension filter removed: `{n: p for n, p in named if p.requires_grad}` →
/// `{n: p for n, p in named}`.
fn unfiltered(script: &Script, exprs: &[&Expr]) -> Vec<Candidate> {
    comprehension_filters(exprs)
        .into_iter()
        .map(|(from, test)| {
            let to = span(test).end;
            Candidate::new(
                format!(
                    "drop the filter `if {}` at line {}",
                    short(script.slice(test)),
                    line_of(script.text(), to)
                ),
                vec![Edit::delete(from..to)],
            )
        })
        .collect()
}

/// Each assignment to a name that nothing else reads (`self = nn.Dropout2d(1.5)`, `total +=
/// flat.sum()`) as its value alone: the binding goes, the computation stays.
fn unused_bindings(script: &Script) -> Vec<Candidate> {
    use crate::python::Stmt;
    let text = script.text();
    // An augmented assignment reads its target too.
    let augmented: Vec<std::ops::Range<usize>> = crate::python::all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::AugAssign(a) => Some(span(&*a.target)),
            _ => None,
        })
        .collect();
    // Each read with the scope its name resolves to: a function's parameter named as a
    // module-level variable is another variable.
    let scopes = crate::scopes::Scopes::of(script.body());
    let reads: Vec<(&str, Option<usize>, std::ops::Range<usize>)> = scopes
        .occurrences
        .iter()
        .filter(|o| !o.binds || augmented.contains(&o.range))
        .map(|o| (o.name, scopes.resolve_occurrence(o), o.range.clone()))
        .collect();
    let mut out = Vec::new();
    for stmt in crate::python::all_bodies(script.body())
        .into_iter()
        .flatten()
    {
        let Some((targets, value)) = crate::python::assignment(stmt) else {
            continue;
        };
        let names: Option<Vec<&str>> = targets
            .iter()
            .map(|t| match t {
                Expr::Name(n) => Some(n.id.as_str()),
                _ => None,
            })
            .collect();
        let Some(names) = names else { continue };
        let range = span(stmt);
        let here = scopes.innermost_at(range.start);
        let read_elsewhere = reads.iter().any(|(name, scope, at)| {
            names.contains(name)
                && *scope == scopes.resolve(name, here)
                && !(range.start <= at.start && at.end <= range.end)
        });
        // A constant computes nothing: `limit = 0` goes whole (delete_statements), never to
        // a statement `0`, which is all that a class body emptied this way would hold. A
        // walrus is no statement without the parentheses that its slice leaves out.
        if read_elsewhere || is_plain_literal(value) || matches!(value, Expr::Named(_)) {
            continue;
        }
        out.push(Candidate::new(
            format!(
                "keep only the value of `{}` at line {}",
                short(script.slice(stmt)),
                line_of(text, range.start)
            ),
            vec![Edit::replace(range, script.slice(value).to_string())],
        ));
    }
    out
}

/// The tests of the `assert`s of a script without torch, which no control guards: hoisting
/// inside them (`total(items) == 18831` → `items == 18831`) would compare something else.
fn pure_checks(script: &Script) -> Vec<std::ops::Range<usize>> {
    if !crate::torch::torch_imports(script).is_empty() {
        return Vec::new();
    }
    crate::python::all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            crate::python::Stmt::Assert(a) => Some(span(&*a.test)),
            _ => None,
        })
        .collect()
}

/// The direct sub-expressions of `expr` that mean the same outside it: of a comprehension,
/// the iterable of its first `for` and the element when it reads no name the `for`s bind,
/// and of a lambda, only its parameters' defaults,
/// since the rest may use the names they bind.
fn children(expr: &Expr) -> Vec<&Expr> {
    match expr {
        Expr::ListComp(ast::ExprListComp {
            elt, generators, ..
        })
        | Expr::SetComp(ast::ExprSetComp {
            elt, generators, ..
        })
        | Expr::Generator(ast::ExprGenerator {
            elt, generators, ..
        }) => {
            let mut out: Vec<&Expr> = generators.iter().take(1).map(|g| &g.iter).collect();
            out.extend(free_of(elt, generators));
            out
        }
        Expr::DictComp(ast::ExprDictComp {
            key,
            value,
            generators,
            ..
        }) => {
            let mut out: Vec<&Expr> = generators.iter().take(1).map(|g| &g.iter).collect();
            out.extend(key.as_deref().and_then(|k| free_of(k, generators)));
            out.extend(free_of(value, generators));
            out
        }
        Expr::Lambda(lambda) => lambda
            .parameters
            .iter()
            .flat_map(|p| p.iter_non_variadic_params())
            .filter_map(|p| p.default.as_deref())
            .chain(forwarded(lambda))
            .collect(),
        // `[*xs]` offers `xs`, and `[e for …][i]` and `[a, b][i]` their elements: what
        // unrolling a loop over a computed iterable leaves (`[*[Slot for i in r]][0]`).
        Expr::List(list) => match &*list.elts {
            [Expr::Starred(starred)] => vec![&*starred.value],
            _ => direct_children(expr),
        },
        Expr::Subscript(sub) => {
            let mut out = direct_children(expr);
            match sub.value.as_ref() {
                Expr::ListComp(comp) => out.extend(free_of(&comp.elt, &comp.generators)),
                Expr::List(list) => {
                    out.extend(list.elts.iter().filter(|e| !matches!(e, Expr::Starred(_))))
                }
                _ => {}
            }
            out
        }
        // `recv.m(args)` offers `recv`: the method call goes, its receiver stays. The callee
        // alone (`f(x)` → `f`) is not offered: a function where a value was is a value of
        // another kind, and an unused one is what deleting the statement does.
        Expr::Call(call) => {
            let mut out: Vec<&Expr> = direct_children(expr)
                .into_iter()
                .filter(|child| !std::ptr::eq(*child, call.func.as_ref()))
                .collect();
            if let Expr::Attribute(a) = call.func.as_ref() {
                out.push(&a.value);
            }
            out
        }
        _ => direct_children(expr),
    }
}

/// The function a lambda only forwards its parameters to, in order (`lambda t: f(t)` →
/// `f`), when it reads none of them: what a person hands over in its place.
fn forwarded(lambda: &ast::ExprLambda) -> Option<&Expr> {
    let Expr::Call(call) = lambda.body.as_ref() else {
        return None;
    };
    let mut names = Vec::new();
    if let Some(parameters) = lambda.parameters.as_deref() {
        if parameters.vararg.is_some()
            || parameters.kwarg.is_some()
            || !parameters.kwonlyargs.is_empty()
        {
            return None;
        }
        for p in parameters.iter_non_variadic_params() {
            if p.default.is_some() {
                return None;
            }
            names.push(p.parameter.name.as_str());
        }
    }
    let passed: Vec<&str> = call
        .arguments
        .args
        .iter()
        .map(|a| match a {
            Expr::Name(n) => n.id.as_str(),
            _ => "",
        })
        .collect();
    let reads = crate::python::exprs_of(&call.func)
        .iter()
        .any(|e| matches!(e, Expr::Name(n) if names.contains(&n.id.as_str())));
    (call.arguments.keywords.is_empty() && passed == names && !reads).then_some(&*call.func)
}

/// `expr` when it reads none of the names that the comprehension's `for`s bind.
fn free_of<'a>(expr: &'a Expr, generators: &[ast::Comprehension]) -> Option<&'a Expr> {
    let bound: Vec<&str> = generators
        .iter()
        .flat_map(|g| crate::python::exprs_of(&g.target))
        .filter_map(|e| match e {
            Expr::Name(n) => Some(n.id.as_str()),
            _ => None,
        })
        .collect();
    let reads_bound = crate::python::exprs_of(expr)
        .iter()
        .any(|e| matches!(e, Expr::Name(n) if bound.contains(&n.id.as_str())));
    (!reads_bound).then_some(expr)
}

/// The sub-expressions one level down.
fn direct_children(expr: &Expr) -> Vec<&Expr> {
    struct Direct<'a>(Vec<&'a Expr>);
    impl<'a> SourceOrderVisitor<'a> for Direct<'a> {
        fn visit_expr(&mut self, expr: &'a Expr) {
            self.0.push(expr);
        }
    }
    let mut direct = Direct(Vec::new());
    source_order::walk_expr(&mut direct, expr);
    direct.0
}

/// Whether `expr` is a tuple of subscript indices with a slice among them, as in `a[:, 1]`.
fn has_slice(expr: &Expr) -> bool {
    matches!(expr, Expr::Tuple(t) if t.elts.iter().any(|e| matches!(e, Expr::Slice(_))))
}

/// Whether `expr` may stand where a target does.
fn can_be_target(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Name(_) | Expr::Attribute(_) | Expr::Subscript(_) | Expr::Tuple(_) | Expr::List(_)
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_tensor_made_from_values_keeps_its_dimensions() {
        let texts = crate::passes::helpers::candidate_texts(
            &HoistExpressions,
            "import torch\nx = torch.tensor([[0.5]])\nf(x)\n",
        );
        assert!(
            texts.iter().all(|t| !t.contains("tensor([0.5])")),
            "{texts:?}"
        );
    }

    use super::*;
    use crate::python::{PythonVersion, is_valid};

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&HoistExpressions, text)
    }

    #[test]
    fn a_comparison_handed_to_a_library_stays_one() {
        let texts = results("import torch\ntorch.where(a != 0, a, b)\nif a != 0:\n    pass\n");
        assert!(
            texts.iter().all(|t| !t.contains("where(a, a")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("if a:")), "{texts:#?}");
    }

    #[test]
    fn a_tensor_made_from_values_stays_a_tensor() {
        let texts = results("import torch\nforward(torch.tensor(0.5))\ny = torch.ones([2, 3])\n");
        assert!(
            texts.iter().all(|t| !t.contains("forward(0.5)")),
            "{texts:#?}"
        );
        assert!(
            texts.iter().all(|t| !t.contains("y = [2, 3]")),
            "{texts:#?}"
        );
        assert!(
            texts
                .contains(&"import torch\ntorch.tensor(0.5)\ny = torch.ones([2, 3])\n".to_string()),
            "{texts:#?}"
        );
    }

    #[test]
    fn a_library_object_the_script_calls_methods_on_stays_built() {
        let text = "import torch\nscheduler = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[5])\nscheduler.step()\nclass Wrap:\n    pass\nw = Wrap(opt)\nw.step()\n";
        let texts = results(text);
        assert!(
            texts.iter().all(|t| !t.contains("scheduler = opt\n")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("w = opt\n")), "{texts:#?}");
    }

    #[test]
    fn a_number_converted_from_a_literal_stays_a_number() {
        let texts =
            results("import torch\nassert t == float(\"-inf\")\nn = int(x)\ns = str('k')\n");
        assert!(texts.iter().any(|t| t.contains("s = 'k'")), "{texts:#?}");
        assert!(
            texts.iter().all(|t| !t.contains("== \"-inf\"")),
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains("n = x")), "{texts:#?}");
    }

    #[test]
    fn an_unrolled_element_comes_out_of_its_list() {
        let texts = crate::passes::helpers::candidate_texts(
            &HoistExpressions,
            "d = [*[S for i in r]][0].a\n",
        );
        assert!(
            texts.contains(&"d = [S for i in r][0].a\n".to_string()),
            "{texts:?}"
        );
        let texts =
            crate::passes::helpers::candidate_texts(&HoistExpressions, "d = [S for i in r][0].a\n");
        assert!(texts.contains(&"d = S.a\n".to_string()), "{texts:?}");
    }

    #[test]
    fn a_comprehension_offers_an_element_that_does_not_read_its_names() {
        let texts = crate::passes::helpers::candidate_texts(
            &HoistExpressions,
            "r = [f(k) for s in xs]\nq = [g(s) for s in xs]\n",
        );
        assert!(
            texts.contains(&"r = f(k)\nq = [g(s) for s in xs]\n".to_string()),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t.contains("q = g(s)")), "{texts:?}");
    }

    #[test]
    fn a_slice_is_not_moved_out_of_its_subscript() {
        for text in results("x = t[1:2]\ny = t[:, ::2]\n") {
            assert!(is_valid(&text, PythonVersion::PY311), "{text}");
        }
    }

    #[test]
    fn a_target_is_replaced_by_targets_only() {
        for text in results("a[i + 1] = v\ndel f().x\n") {
            assert!(is_valid(&text, PythonVersion::PY311), "{text}");
        }
    }

    #[test]
    fn names_bound_inside_a_comprehension_or_lambda_are_not_hoisted_out() {
        let texts = results("s = sum(f(w) for w in ws)\ng = lambda n, k=3: n * k\n");
        assert!(!results("x = (y := f())\n").contains(&"x = (y)\n".to_string()));
        assert!(texts.contains(&"s = sum(ws)\ng = lambda n, k=3: n * k\n".to_string()));
        assert!(texts.contains(&"s = sum(f(w) for w in ws)\ng = 3\n".to_string()));
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("= w\n") || t.contains("(n * k)"))
        );
    }

    #[test]
    fn a_number_before_an_attribute_is_parenthesized() {
        assert!(results("x = f(1).real\n").contains(&"x = (1).real\n".to_string()));
    }

    #[test]
    fn a_literal_is_not_left_to_be_called_or_subscripted() {
        let texts = results("x = \", \".join(names)\ny = f(1)[0]\n");
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("\", \"(") || t.contains("1[")),
            "{texts:?}"
        );
    }

    #[test]
    fn the_same_replacement_is_offered_once() {
        // `y` once, and the value without its binding.
        assert_eq!(results("x = f(y, y)\n").len(), 2);
    }

    #[test]
    fn a_display_of_one_element_over_lines_takes_one() {
        let texts =
            results("x = {\n    'i': 0,\n}['enfor']\ny = [\n    a\n]\nz = [\n    a, b\n]\n");
        assert!(
            texts.contains(
                &"x = {'i': 0}['enfor']\ny = [\n    a\n]\nz = [\n    a, b\n]\n".to_string()
            ),
            "{texts:?}"
        );
        assert!(texts.contains(
            &"x = {\n    'i': 0,\n}['enfor']\ny = [a]\nz = [\n    a, b\n]\n".to_string()
        ));
        assert!(!texts.iter().any(|t| t.contains("[a, b]")));
    }

    #[test]
    fn a_message_spread_over_lines_by_its_parentheses_takes_one() {
        let text = "assert ok, (\n    'output mismatch'\n)\nf(\n    x\n)\n";
        let texts = results(text);
        assert!(
            results("def f():\n    return (\n        x\n    )\n")
                .contains(&"def f():\n    return x\n".to_string())
        );
        assert!(
            texts.contains(&"assert ok, 'output mismatch'\nf(\n    x\n)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            !texts.iter().any(|t| t.contains("f x") || t.contains("fx")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_call_gives_its_arguments_and_receiver_not_its_callee() {
        let texts = results("x = f(y)\nz = m.g(y)\n");
        assert!(
            texts.contains(&"x = y\nz = m.g(y)\n".to_string()),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"x = f(y)\nz = m\n".to_string()),
            "{texts:?}"
        );
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("x = f\n") || t.contains("z = m.g\n")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_lambda_that_only_forwards_gives_its_function() {
        let texts = results("j = jacrev(lambda t: F.normalize(t))\n");
        assert!(
            texts.contains(&"j = jacrev(F.normalize)\n".to_string()),
            "{texts:?}"
        );
        for other in [
            "lambda t: f(t, 1)",
            "lambda t, u: f(u, t)",
            "lambda t: t.f(t)",
        ] {
            let texts = results(&format!("j = g({other})\n"));
            assert!(
                !texts
                    .iter()
                    .any(|t| t.contains("g(f)") || t.contains("g(t.f)")),
                "{other}: {texts:?}"
            );
        }
    }

    #[test]
    fn a_list_of_one_string_stays_a_list() {
        let texts = results("context = [\"k\"]\ncols = df[[\"a\"]]\n");
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("= \"k\"") || t.contains("df[\"a\"]")),
            "{texts:?}"
        );
    }

    #[test]
    fn a_called_attribute_keeps_its_spelling() {
        let texts = results(
            "pb.raw()
super().__eq__(other)
",
        );
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("pb()") || t.contains("super()()")),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"pb\nsuper().__eq__(other)\n".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn a_binding_nothing_reads_leaves_its_value() {
        let texts = results("total = ()\ntotal += flat.sum()\nused = 1\nprint(used)\n");
        assert!(
            texts.contains(&"total = ()\nflat.sum()\nused = 1\nprint(used)\n".to_string()),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t.contains("\n1\n")), "{texts:?}");
        // `total` is read by the augmented assignment: the first one stays a binding.
        assert!(!texts.iter().any(|t| t.starts_with("()")), "{texts:?}");
    }

    #[test]
    fn a_comprehension_filter_goes_whole_and_is_never_hoisted_into() {
        let texts = results("v = {n: 1 for n, p in ps if p.requires_grad}\n");
        assert!(
            texts.contains(&"v = {n: 1 for n, p in ps}\n".to_string()),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t.contains("if p}")), "{texts:?}");
        let two = results("v = [x for x in xs if x.a if x.b]\n");
        assert!(
            two.contains(&"v = [x for x in xs if x.b]\n".to_string()),
            "{two:?}"
        );
        assert!(
            two.contains(&"v = [x for x in xs if x.a]\n".to_string()),
            "{two:?}"
        );
    }

    #[test]
    fn a_constant_is_never_left_as_a_statement_alone() {
        let texts = results("class Config:\n    limit = 0\ndef f():\n    print(0)\n");
        assert!(!texts.iter().any(|t| t.contains("    0\n")), "{texts:?}");
        // A computed value still stays without its binding, and an f-string evaluates.
        let texts = results("def f():\n    x = g()\n    print(f\"{h()}\")\n");
        assert!(texts.iter().any(|t| t.contains("    g()\n")), "{texts:?}");
        assert!(
            texts.iter().any(|t| t.contains("    f\"{h()}\"\n")),
            "{texts:?}"
        );
    }
}
