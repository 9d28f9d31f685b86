//! Unwrap an `nn.Module` subclass that only wraps one layer, or a chain of layers and
//! activations: each instantiation becomes the layer, or a `Sequential` of the chain.
//!
//! ## What it removes
//! A wrapper class around the one layer that matters, so that the layer itself reaches
//! `torch.jit.script`, `torch.jit.trace`, `torch.compile` or `torch.export`: flattening the
//! class would hand those a function, which scripting and export reject. A wrapper whose
//! `forward` chains its layers and activations (`F.relu(self.conv(x))`) becomes
//! `nn.Sequential(nn.Conv2d(...), nn.ReLU())`, still a module, in the spelling of `torch.nn`
//! that the first layer's class uses (`nn.` or `torch.nn.`, else `torch.nn.`). The later passes
//! then delete the activation or the `Sequential` around one layer when the bug does not need
//! them.
//!
//! The class qualifies when it is defined at module level, undecorated, with one base,
//! `nn.Module`, `torch.nn.Module` or `Module`, and a body of exactly
//! - `def __init__(self, params...)`: `super().__init__()` (or `super(C, self).__init__()`),
//!   then one or more `self.NAME = EXPR` (annotated or not, to distinct names) whose `EXPR`
//!   reads neither `self`, `super` nor `__class__`;
//! - `def forward(self, p1, ..., pn)`: either `return self.NAME(p1, ..., pn)` for the one
//!   member, the parameters passed through unchanged and in order, followed by `*args` and
//!   `**kwargs` when `forward` takes them; or, for `forward(self, x)`, a chain of two or more
//!   calls that ends in `x`, each a member called on the one argument (every member once) or
//!   an activation with a module form that takes no arguments: `torch.relu(y)` (also
//!   `sigmoid`, `tanh`) or their tensor methods `y.relu()`, and `relu`, `gelu`, `silu`,
//!   `leaky_relu` and the like on `F`, `functional`, `nn.functional` or
//!   `torch.nn.functional`;
//!
//! with a docstring allowed at the head of the class and of each method. Every read of the
//! class name outside its definition must be a call `C(args)`. In one candidate per class,
//! each such call becomes `EXPR` (for a chain, `nn.Sequential(EXPR1, nn.ReLU(), ...)` in the
//! order `forward` applies them) with every `__init__` parameter it reads replaced by the
//! argument bound to it (positional arguments in order, keywords by name, the default when
//! none is given); the class goes, with the comment lines directly above it.
//!
//! A substituted argument is parenthesized when it is not atomic and stands where an
//! operator, a `.`, a subscript or a call binds to it (in a call's arguments or a display's
//! elements it is not); so is `EXPR` at the call. An unparenthesized tuple or generator, a
//! `:=`, a `yield`, a number before a `.` and code that breaks a line outside its own
//! brackets are parenthesized wherever they go. An argument read twice by `EXPR` is
//! evaluated twice; one that `EXPR` never reads is dropped. What the script does with the
//! instance afterwards (`net.proj`) is not checked: the oracle judges the candidate.
//!
//! ## Example
//! ```python
//! class Ranker(torch.nn.Module):                  # before
//!     def __init__(self, cfg):
//!         super().__init__()
//!         self.proj = torch.nn.Linear(cfg.features, cfg.hidden)
//!
//!     def forward(self, feats):
//!         return self.proj(feats)
//!
//! torch.jit.script(Ranker(RankerConfig()))(feats)
//!
//! torch.jit.script(torch.nn.Linear(RankerConfig().features, RankerConfig().hidden))(feats)  # after
//! ```
//!
//! ```python
//! class ConvReLU(nn.Module):                      # before
//!     def __init__(self, cin, cout):
//!         super().__init__()
//!         self.conv = nn.Conv2d(cin, cout, kernel_size=3)
//!
//!     def forward(self, x):
//!         return F.relu(self.conv(x))
//!
//! torch.jit.trace(ConvReLU(3, 8), images)
//!
//! torch.jit.trace(nn.Sequential(nn.Conv2d(3, 8, kernel_size=3), nn.ReLU()), images)  # after
//! ```
//!
//! ## When it cannot apply
//! - The class: nested, decorated, generic, with a keyword in its bases or a base other than
//!   one `Module`; a body holding anything but a docstring, `__init__` and `forward`; either
//!   method missing, defined twice, `async` or decorated.
//! - `__init__`: with `*args` or `**kwargs`, with other statements than those above, or
//!   setting a member twice; `EXPR` reading `self`, `super` or `__class__`, or holding `:=`.
//! - `forward`: doing anything but returning the member's call or a chain; passing its
//!   parameters changed, reordered, by keyword, or not all of them; a parameter with a
//!   default, or a keyword-only one. A chain: over two or more parameters, or `*args`; calling
//!   a member twice, leaving one uncalled (two members and one call are no wrapper of one
//!   layer either), or ending in anything but the parameter (`self.conv(x + 1)`); an
//!   activation given arguments of its own (`F.leaky_relu(y, 0.2)`, `inplace=True`), or a
//!   function without a module form (`torch.exp`).
//! - The uses: the class name bound anywhere but by its definition, never called, or read
//!   anywhere but as the callee of a call (an annotation, `isinstance(m, C)`, `C.__name__`,
//!   a subclass); a call with `*` or `**` arguments, an argument `__init__` cannot take, or
//!   a parameter that `EXPR` reads left without argument or default; a call inside the
//!   arguments of another.
//! - The names: `EXPR` or a default reading the class's own name; a name that `EXPR` or a
//!   default reads from the module, bound in the scope of a call instead (`nn = …` in the
//!   calling function), or the root of a chain's `torch.nn` spelling so bound; an argument
//!   reading a name that a comprehension or lambda inside `EXPR` binds; an argument that
//!   lands inside such a comprehension or lambda when the call stands in a class body.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::helpers::{first_param, match_arguments};
use crate::edit::{Candidate, Edit, apply_edits_within, deletion_range, lines_label};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs, ast, exprs_of, is_atomic, span};
use crate::scopes::{Occurrence, ScopeKind, Scopes};

pub struct UnwrapModules;

impl Pass for UnwrapModules {
    fn info(&self) -> PassInfo {
        PassInfo::new("unwrap_modules")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let scopes = Scopes::of(script.body());
        let exprs = all_exprs(script.body());
        let places = places(script.body(), &exprs);
        script
            .body()
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::ClassDef(class) => unwrap(script, &scopes, &exprs, &places, stmt, class),
                _ => None,
            })
            .collect()
    }
}

/// What binds to an expression where it stands, and so whether it needs parentheses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Anything may stand here: a call's argument, a display's element, a statement's value.
    Open,
    /// The value of an attribute: `.` binds to it, and a number would swallow the dot.
    BeforeDot,
    /// An operand, a callee, a subscripted value: operators bind to it.
    Closed,
}

/// The wrapper, once the class has qualified.
struct Wrapper<'a> {
    init: &'a ast::StmtFunctionDef,
    /// The scope of `__init__`, whose parameters `EXPR` reads.
    init_scope: Option<usize>,
    /// The parameters but `self`, in order: positional ones first, then keyword-only ones.
    params: Vec<&'a ast::ParameterWithDefault>,
    /// How many of `params` take positional arguments.
    positional: usize,
    /// How many of `params` are positional-only.
    positional_only: usize,
    /// What `forward` applies, first to last: one layer, or a chain.
    stages: Vec<Stage<'a>>,
    /// How a chain spells `torch.nn` for its `Sequential` and activations.
    nn: String,
}

impl<'a> Wrapper<'a> {
    /// The layers among the stages: the values of the `self.NAME = EXPR` that `forward` calls.
    fn layers(&self) -> impl Iterator<Item = &'a Expr> + '_ {
        self.stages.iter().filter_map(|s| match s {
            Stage::Layer(e) => Some(*e),
            Stage::Activation(_) => None,
        })
    }
}

/// One step of `forward`.
enum Stage<'a> {
    /// A member's layer: the value `EXPR` of `self.NAME = EXPR`.
    Layer(&'a Expr),
    /// A functional activation, by the name of its module form (`ReLU` for `F.relu`).
    Activation(&'static str),
}

/// The candidate replacing every construction of a module that wraps one layer by the layer.
fn unwrap(
    script: &Script,
    scopes: &Scopes,
    exprs: &[&Expr],
    places: &HashMap<Range<usize>, Place>,
    stmt: &Stmt,
    class: &ast::StmtClassDef,
) -> Option<Candidate> {
    let text = script.text();
    let name = class.name.as_str();
    let wrapper = wrapper(scopes, class)?;
    let class_range = span(stmt);
    let calls = constructions(scopes, exprs, name, &class_range)?;
    let layers: Vec<LayerReads> = wrapper
        .layers()
        .map(|layer| layer_reads(scopes, &wrapper, layer, name))
        .collect::<Option<_>>()?;

    let mut edits = Vec::new();
    for (call, site_scope) in calls {
        let site = places.get(&span(call)).copied().unwrap_or(Place::Closed);
        let replacement =
            construction_replacement(script, scopes, &wrapper, &layers, call, site_scope, site)?;
        edits.push(Edit::replace(span(call), replacement));
    }
    edits.push(Edit::delete(deletion_range(text, class_range.clone())));
    let into = match wrapper.stages.len() {
        1 => "its layer".to_string(),
        _ => format!("{}.Sequential", wrapper.nn),
    };
    Some(Candidate::new(
        format!(
            "unwrap module {name} at {} into {into}",
            lines_label(text, &class_range)
        ),
        edits,
    ))
}

/// Whether `r` lies within `outer`.
fn inside(r: &Range<usize>, outer: &Range<usize>) -> bool {
    outer.start <= r.start && r.end <= outer.end
}

/// The calls constructing class `name` (defined over `class_range`), with the scope of each:
/// `None` unless the name is bound by its definition only and read only as the callee of
/// calls, none of them inside another.
pub(super) fn constructions<'a>(
    scopes: &Scopes,
    exprs: &[&'a Expr],
    name: &str,
    class_range: &Range<usize>,
) -> Option<Vec<(&'a ast::ExprCall, Option<usize>)>> {
    let occurrences: Vec<&Occurrence> = scopes
        .occurrences
        .iter()
        .filter(|o| o.name == name)
        .collect();
    if occurrences.iter().filter(|o| o.binds).count() != 1 {
        return None;
    }
    let reads: Vec<&Occurrence> = occurrences
        .into_iter()
        .filter(|o| !o.binds && !inside(&o.range, class_range))
        .collect();
    if reads.is_empty() {
        return None;
    }
    let calls: Vec<(&ast::ExprCall, Option<usize>)> = reads
        .iter()
        .map(|read| {
            exprs.iter().find_map(|e| match e {
                Expr::Call(c) if span(c.func.as_ref()) == read.range => Some((c, read.scope)),
                _ => None,
            })
        })
        .collect::<Option<_>>()?;
    let ranges: Vec<Range<usize>> = calls.iter().map(|(c, _)| span(*c)).collect();
    if ranges.iter().enumerate().any(|(i, a)| {
        ranges
            .iter()
            .enumerate()
            .any(|(j, b)| i != j && inside(b, a))
    }) {
        return None;
    }
    Some(calls)
}

/// What the layer `EXPR` of class `class` reads, sorted out.
struct LayerReads<'s, 'a> {
    layer: &'a Expr,
    class: &'a str,
    /// The reads of parameters it substitutes, with the index of the parameter.
    substituted: Vec<(&'s Occurrence<'a>, usize)>,
    /// The names it takes from the module.
    from_module: HashSet<&'a str>,
    /// The names its own comprehensions and lambdas bind.
    bound_inside: HashSet<&'a str>,
    /// Where each of its subexpressions stands.
    places: HashMap<Range<usize>, Place>,
}

/// What one of the wrapper's layers reads; `None` when it reads `self`, `super` or
/// `__class__`, a local of `__init__` that is no parameter, or the class itself.
fn layer_reads<'s, 'a>(
    scopes: &'s Scopes<'a>,
    wrapper: &Wrapper,
    layer: &'a Expr,
    name: &'a str,
) -> Option<LayerReads<'s, 'a>> {
    let layer_range = span(layer);
    let in_layer: Vec<&Occurrence> = scopes
        .occurrences
        .iter()
        .filter(|o| inside(&o.range, &layer_range))
        .collect();
    let this = first_param(wrapper.init)?;
    let mut substituted: Vec<(&Occurrence, usize)> = Vec::new();
    let mut from_module: HashSet<&str> = HashSet::new();
    let mut bound_inside: HashSet<&str> = HashSet::new();
    for o in &in_layer {
        if o.binds {
            bound_inside.insert(o.name);
            continue;
        }
        let resolved = scopes.resolve_occurrence(o);
        if resolved.is_some() && resolved == wrapper.init_scope {
            if o.name == this {
                return None;
            }
            let i = wrapper
                .params
                .iter()
                .position(|p| p.parameter.name.as_str() == o.name)?;
            substituted.push((o, i));
        } else if resolved.is_none() {
            if matches!(o.name, "super" | "__class__") {
                return None;
            }
            from_module.insert(o.name);
        }
    }
    // The class is deleted: what takes its place must not name it.
    if from_module.contains(name) {
        return None;
    }
    Some(LayerReads {
        layer,
        class: name,
        substituted,
        from_module,
        bound_inside,
        places: places_in(layer),
    })
}

/// The layers with the arguments of `call` (in scope `site_scope`, standing at `site`) in
/// place of the parameters: the one layer, or a chain's `Sequential`; `None` when a name they
/// read would mean something else there.
fn construction_replacement(
    script: &Script,
    scopes: &Scopes,
    wrapper: &Wrapper,
    layers: &[LayerReads],
    call: &ast::ExprCall,
    site_scope: Option<usize>,
    site: Place,
) -> Option<String> {
    let values = bind(wrapper, &call.arguments)?;
    let at = |layer: &LayerReads, place: Place| {
        layer_at(script, scopes, wrapper, layer, &values, site_scope, place)
    };
    if let ([layer], 1) = (layers, wrapper.stages.len()) {
        return at(layer, site);
    }
    let root = wrapper.nn.split('.').next().unwrap_or_default();
    if scopes.resolve(root, site_scope).is_some() {
        return None;
    }
    let mut layers = layers.iter();
    let parts: Vec<String> = wrapper
        .stages
        .iter()
        .map(|stage| match stage {
            Stage::Layer(_) => at(layers.next()?, Place::Open),
            Stage::Activation(module) => Some(format!("{}.{module}()", wrapper.nn)),
        })
        .collect::<Option<_>>()?;
    Some(format!("{}.Sequential({})", wrapper.nn, parts.join(", ")))
}

/// One layer with the arguments bound to the parameters (`values`) in their place, as it may
/// stand at `place` in scope `site_scope`; `None` when a name it reads would mean something
/// else there.
fn layer_at(
    script: &Script,
    scopes: &Scopes,
    wrapper: &Wrapper,
    layer: &LayerReads,
    values: &[Option<(&Expr, bool)>],
    site_scope: Option<usize>,
    site: Place,
) -> Option<String> {
    let text = script.text();
    let name = layer.class;
    let layer_range = span(layer.layer);
    let resolves_here = |name: &str| scopes.resolve(name, site_scope).is_none();
    if !layer.from_module.iter().all(|n| resolves_here(n)) {
        return None;
    }
    let mut inner = Vec::new();
    for (o, i) in &layer.substituted {
        let (value, is_default) = values[*i]?;
        let reads = free_reads(scopes, value);
        if reads.iter().any(|n| layer.bound_inside.contains(n))
            || (is_default && !reads.iter().all(|n| resolves_here(n) && *n != name))
        {
            return None;
        }
        let nested = o.scope != wrapper.init_scope;
        let in_class = site_scope.is_some_and(|s| scopes.scopes[s].kind == ScopeKind::Class);
        if nested && in_class {
            return None;
        }
        let place = if o.range == layer_range {
            Place::Open
        } else {
            layer.places.get(&o.range).copied().unwrap_or(Place::Closed)
        };
        inner.push(Edit::replace(
            o.range.clone(),
            fit(script, value, script.slice(value), place),
        ));
    }
    Some(match layer.substituted.as_slice() {
        // `self.m = m`: the argument itself, placed once.
        [(o, i)] if o.range == layer_range => {
            let value = values[*i]?.0;
            fit(script, value, script.slice(value), site)
        }
        _ => {
            let code = apply_edits_within(text, layer_range.clone(), &inner)?;
            fit(script, layer.layer, &code, site)
        }
    })
}

/// The class's `__init__`, parameters and stages, when it only wraps one layer or a chain.
fn wrapper<'a>(scopes: &Scopes, class: &'a ast::StmtClassDef) -> Option<Wrapper<'a>> {
    let (init_stmt, init, forward) = methods(class)?;
    let p = &init.parameters;
    if p.vararg.is_some() || p.kwarg.is_some() {
        return None;
    }
    let members = members(class, init)?;
    let stages = match members.as_slice() {
        [(member, layer)] if passes_through(forward, member) => vec![Stage::Layer(layer)],
        _ => chain(forward, &members)?,
    };
    let nn = nn_spelling(&stages);
    Some(Wrapper {
        init,
        init_scope: Some(scopes.scope_at(&span(init_stmt))?),
        params: p
            .posonlyargs
            .iter()
            .chain(&p.args)
            .skip(1)
            .chain(&p.kwonlyargs)
            .collect(),
        positional: p.posonlyargs.len() + p.args.len() - 1,
        positional_only: p.posonlyargs.len().saturating_sub(1),
        stages,
        nn,
    })
}

/// `__init__` (with its statement) and `forward`, when the class is an undecorated `Module`
/// subclass whose body holds them and at most a docstring.
fn methods(
    class: &ast::StmtClassDef,
) -> Option<(&Stmt, &ast::StmtFunctionDef, &ast::StmtFunctionDef)> {
    let bases = class.arguments.as_deref()?;
    if !class.decorator_list.is_empty()
        || class.type_params.is_some()
        || !bases.keywords.is_empty()
        || !matches!(bases.args.as_ref(), [base] if is_module(base))
    {
        return None;
    }
    let mut init = None;
    let mut forward = None;
    for (i, s) in class.body.iter().enumerate() {
        match s {
            s if i == 0 && is_docstring(s) => {}
            Stmt::FunctionDef(f)
                if !f.is_async && f.decorator_list.is_empty() && f.type_params.is_none() =>
            {
                let slot = match f.name.as_str() {
                    "__init__" => &mut init,
                    "forward" => &mut forward,
                    _ => return None,
                };
                if slot.replace((s, f)).is_some() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    let (init_stmt, init) = init?;
    Some((init_stmt, init, forward?.1))
}

/// The members `__init__` sets, by name, in order: `super().__init__()`, then one or more
/// `self.NAME = EXPR` to distinct names.
fn members<'a>(
    class: &ast::StmtClassDef,
    init: &'a ast::StmtFunctionDef,
) -> Option<Vec<(&'a str, &'a Expr)>> {
    let this = first_param(init)?;
    let [first, assigns @ ..] = without_docstring(&init.body) else {
        return None;
    };
    if assigns.is_empty() || !is_super_init(first, class.name.as_str(), this) {
        return None;
    }
    let mut members: Vec<(&str, &Expr)> = Vec::new();
    for assign in assigns {
        let (target, layer) = match assign {
            Stmt::Assign(a) => match a.targets.as_slice() {
                [target] => (target, a.value.as_ref()),
                _ => return None,
            },
            Stmt::AnnAssign(a) => (a.target.as_ref(), a.value.as_deref()?),
            _ => return None,
        };
        let Expr::Attribute(target) = target else {
            return None;
        };
        let member = target.attr.as_str();
        if !is_name(&target.value, this)
            || exprs_of(layer).iter().any(|e| matches!(e, Expr::Named(_)))
            || members.iter().any(|(m, _)| *m == member)
        {
            return None;
        }
        members.push((member, layer));
    }
    Some(members)
}

/// Whether `forward` is `return self.MEMBER(p1, ..., pn, *args, **kwargs)`.
fn passes_through(forward: &ast::StmtFunctionDef, member: &str) -> bool {
    let Some(this) = first_param(forward) else {
        return false;
    };
    let [Stmt::Return(ret)] = without_docstring(&forward.body) else {
        return false;
    };
    let Some(Expr::Call(call)) = ret.value.as_deref() else {
        return false;
    };
    let fp = &forward.parameters;
    let passed: Vec<&ast::ParameterWithDefault> =
        fp.posonlyargs.iter().chain(&fp.args).skip(1).collect();
    if !fp.kwonlyargs.is_empty() || passed.iter().any(|p| p.default.is_some()) {
        return false;
    }
    let is_member = matches!(call.func.as_ref(), Expr::Attribute(a)
        if a.attr.as_str() == member && is_name(&a.value, this));
    let mut expected: Vec<Expected> = passed
        .iter()
        .map(|p| Expected::Plain(p.parameter.name.as_str()))
        .collect();
    if let Some(args) = &fp.vararg {
        expected.push(Expected::Star(args.name.as_str()));
    }
    let positional_ok = call.arguments.args.len() == expected.len()
        && call
            .arguments
            .args
            .iter()
            .zip(&expected)
            .all(|(a, e)| e.matches(a));
    let keywords_ok = match (&fp.kwarg, call.arguments.keywords.as_ref()) {
        (None, []) => true,
        (Some(kwargs), [k]) => k.arg.is_none() && is_name(&k.value, kwargs.name.as_str()),
        _ => false,
    };
    is_member && positional_ok && keywords_ok
}

/// The stages of a `forward(self, x)` that returns a chain of calls on `x`, first to last:
/// each member called once (`self.conv(x)`), and activations that have a module form
/// (`torch.relu(y)`, `F.gelu(y)`, `y.relu()`). `None` for anything else, a chain with a member
/// called twice or not at all, or one stage alone.
fn chain<'a>(
    forward: &ast::StmtFunctionDef,
    members: &[(&str, &'a Expr)],
) -> Option<Vec<Stage<'a>>> {
    let this = first_param(forward)?;
    let fp = &forward.parameters;
    let [_, input] = fp.posonlyargs.iter().chain(&fp.args).collect::<Vec<_>>()[..] else {
        return None;
    };
    if input.default.is_some()
        || fp.vararg.is_some()
        || fp.kwarg.is_some()
        || !fp.kwonlyargs.is_empty()
    {
        return None;
    }
    let [Stmt::Return(ret)] = without_docstring(&forward.body) else {
        return None;
    };
    let mut expr = ret.value.as_deref()?;
    let mut stages = Vec::new();
    let mut used = vec![false; members.len()];
    while !is_name(expr, input.parameter.name.as_str()) {
        let (stage, arg) = stage_of(expr, this, members, &mut used)?;
        stages.push(stage);
        expr = arg;
    }
    stages.reverse();
    (stages.len() > 1 && used.iter().all(|u| *u)).then_some(stages)
}

/// The stage `expr` applies and the expression it applies it to: a member not yet `used`
/// (which it marks), or an activation.
fn stage_of<'a, 'e>(
    expr: &'e Expr,
    this: &str,
    members: &[(&str, &'a Expr)],
    used: &mut [bool],
) -> Option<(Stage<'a>, &'e Expr)> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Attribute(func) = call.func.as_ref() else {
        return None;
    };
    let name = func.attr.as_str();
    match (
        call.arguments.args.as_ref(),
        call.arguments.keywords.is_empty(),
    ) {
        ([arg], true) if is_name(&func.value, this) => {
            let i = members.iter().position(|(m, _)| *m == name)?;
            if std::mem::replace(&mut used[i], true) {
                return None;
            }
            Some((Stage::Layer(members[i].1), arg))
        }
        ([arg], true) if is_functional(&func.value, name) => Some((activation(name)?, arg)),
        ([], true) if TENSOR_ACTIVATIONS.contains(&name) => {
            Some((activation(name)?, func.value.as_ref()))
        }
        _ => None,
    }
}

/// The activations a tensor has as methods, and `torch` as functions.
const TENSOR_ACTIVATIONS: &[&str] = &["relu", "sigmoid", "tanh"];

/// The functional activations with a module form that takes no arguments, and that form.
const ACTIVATIONS: &[(&str, &str)] = &[
    ("relu", "ReLU"),
    ("relu6", "ReLU6"),
    ("sigmoid", "Sigmoid"),
    ("tanh", "Tanh"),
    ("gelu", "GELU"),
    ("silu", "SiLU"),
    ("mish", "Mish"),
    ("elu", "ELU"),
    ("selu", "SELU"),
    ("celu", "CELU"),
    ("leaky_relu", "LeakyReLU"),
    ("hardswish", "Hardswish"),
    ("hardsigmoid", "Hardsigmoid"),
    ("hardtanh", "Hardtanh"),
    ("softplus", "Softplus"),
    ("softsign", "Softsign"),
    ("logsigmoid", "LogSigmoid"),
    ("tanhshrink", "Tanhshrink"),
];

fn activation(name: &str) -> Option<Stage<'static>> {
    ACTIVATIONS
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, m)| Stage::Activation(m))
}

/// Whether `value.name` is a functional activation: `torch.relu`, or `name` on `F`,
/// `functional`, `nn.functional` or `torch.nn.functional`.
fn is_functional(value: &Expr, name: &str) -> bool {
    match dotted(value).as_deref() {
        Some("torch") => TENSOR_ACTIVATIONS.contains(&name),
        Some("F" | "functional" | "nn.functional" | "torch.nn.functional") => true,
        _ => false,
    }
}

/// How the script spells `torch.nn`, as the first layer's class is reached (`nn.Conv2d`):
/// `nn` or `torch.nn`; `torch.nn` when it does not say.
fn nn_spelling(stages: &[Stage]) -> String {
    stages
        .iter()
        .find_map(|s| match s {
            Stage::Layer(Expr::Call(c)) => match c.func.as_ref() {
                Expr::Attribute(a) => dotted(&a.value).filter(|d| d == "nn" || d == "torch.nn"),
                _ => None,
            },
            _ => None,
        })
        .unwrap_or_else(|| "torch.nn".to_string())
}

/// `a.b.c` as text, for a chain of names and attributes.
fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}

/// An argument `forward` must pass on: a parameter, or its `*args`.
enum Expected<'a> {
    Plain(&'a str),
    Star(&'a str),
}

impl Expected<'_> {
    fn matches(&self, arg: &Expr) -> bool {
        match (self, arg) {
            (Expected::Plain(name), arg) => is_name(arg, name),
            (Expected::Star(name), Expr::Starred(s)) => is_name(&s.value, name),
            _ => false,
        }
    }
}

/// The value each parameter of `__init__` takes from a call: the argument, or else the
/// default (`true` beside it); `None` for a parameter left without either, and `None` overall
/// for a call that does not fit the parameters.
fn bind<'a>(
    wrapper: &Wrapper<'a>,
    arguments: &'a ast::Arguments,
) -> Option<Vec<Option<(&'a Expr, bool)>>> {
    let names: Vec<&str> = wrapper
        .params
        .iter()
        .map(|p| p.parameter.name.as_str())
        .collect();
    let by_keyword = |i: usize| {
        arguments
            .keywords
            .iter()
            .any(|k| k.arg.as_deref() == Some(names[i]))
    };
    if (0..wrapper.positional_only).any(by_keyword) {
        return None;
    }
    let given = match_arguments(&names, wrapper.positional, arguments)?;
    Some(
        given
            .into_iter()
            .zip(&wrapper.params)
            .map(|(value, p)| match value {
                Some(v) => Some((v, false)),
                None => p.default.as_deref().map(|d| (d, true)),
            })
            .collect(),
    )
}

/// `code`, the text of `expr` (perhaps with edits inside), as it may stand at `place`.
fn fit(script: &Script, expr: &Expr, code: &str, place: Place) -> String {
    let always = match expr {
        Expr::Tuple(t) => !t.parenthesized,
        Expr::Generator(g) => !g.parenthesized,
        Expr::Named(_) | Expr::Yield(_) | Expr::YieldFrom(_) | Expr::Starred(_) => true,
        _ => false,
    };
    let needed = match place {
        Place::Open => false,
        Place::BeforeDot => !is_atomic(expr) || matches!(expr, Expr::NumberLiteral(_)),
        Place::Closed => !is_atomic(expr),
    };
    if always || needed || script.breaks_line(expr) {
        format!("({code})")
    } else {
        code.to_string()
    }
}

/// The place of every expression that stands where anything may (see [`Place::Open`]) or
/// before a `.`, by range, in `body`.
fn places(body: &[Stmt], exprs: &[&Expr]) -> HashMap<Range<usize>, Place> {
    let mut out = HashMap::new();
    for stmt in all_bodies(body).into_iter().flatten() {
        let value = match stmt {
            Stmt::Expr(s) => Some(s.value.as_ref()),
            Stmt::Assign(s) => Some(s.value.as_ref()),
            Stmt::AugAssign(s) => Some(s.value.as_ref()),
            Stmt::AnnAssign(s) => s.value.as_deref(),
            Stmt::Return(s) => s.value.as_deref(),
            _ => None,
        };
        if let Some(value) = value {
            out.insert(span(value), Place::Open);
        }
    }
    for expr in exprs {
        add_places(expr, &mut out);
    }
    out
}

/// The places inside `expr`.
fn places_in(expr: &Expr) -> HashMap<Range<usize>, Place> {
    let mut out = HashMap::new();
    for e in exprs_of(expr) {
        add_places(e, &mut out);
    }
    out
}

/// The places of the direct children of `expr`.
fn add_places(expr: &Expr, out: &mut HashMap<Range<usize>, Place>) {
    let open: Vec<&Expr> = match expr {
        Expr::Call(c) => c
            .arguments
            .args
            .iter()
            .chain(
                c.arguments
                    .keywords
                    .iter()
                    .filter(|k| k.arg.is_some())
                    .map(|k| &k.value),
            )
            .collect(),
        Expr::List(l) => l.elts.iter().collect(),
        Expr::Set(s) => s.elts.iter().collect(),
        Expr::Tuple(t) if t.parenthesized => t.elts.iter().collect(),
        Expr::Dict(d) => d
            .items
            .iter()
            .filter(|i| i.key.is_some())
            .map(|i| &i.value)
            .collect(),
        Expr::Attribute(a) => {
            out.insert(span(a.value.as_ref()), Place::BeforeDot);
            Vec::new()
        }
        _ => Vec::new(),
    };
    for e in open.into_iter().filter(|e| !matches!(e, Expr::Starred(_))) {
        out.insert(span(e), Place::Open);
    }
}

/// The names `expr` reads from outside itself.
fn free_reads<'a>(scopes: &Scopes<'a>, expr: &Expr) -> Vec<&'a str> {
    let range = span(expr);
    scopes
        .occurrences
        .iter()
        .filter(|o| !o.binds && range.start <= o.range.start && o.range.end <= range.end)
        .map(|o| o.name)
        .collect()
}

/// `super().__init__()` or `super(C, self).__init__()` as a statement.
fn is_super_init(stmt: &Stmt, class: &str, this: &str) -> bool {
    let Stmt::Expr(e) = stmt else {
        return false;
    };
    let Expr::Call(call) = e.value.as_ref() else {
        return false;
    };
    let Expr::Attribute(a) = call.func.as_ref() else {
        return false;
    };
    let Expr::Call(sup) = a.value.as_ref() else {
        return false;
    };
    a.attr.as_str() == "__init__"
        && call.arguments.is_empty()
        && is_name(&sup.func, "super")
        && sup.arguments.keywords.is_empty()
        && match sup.arguments.args.as_ref() {
            [] => true,
            [c, s] => is_name(c, class) && is_name(s, this),
            _ => false,
        }
}

/// `nn.Module`, `torch.nn.Module` or `Module`.
pub(super) fn is_module(expr: &Expr) -> bool {
    match expr {
        Expr::Name(n) => n.id.as_str() == "Module",
        Expr::Attribute(a) if a.attr.as_str() == "Module" => match a.value.as_ref() {
            Expr::Name(n) => n.id.as_str() == "nn",
            Expr::Attribute(b) => b.attr.as_str() == "nn" && is_name(&b.value, "torch"),
            _ => false,
        },
        _ => false,
    }
}

pub(super) fn is_docstring(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::Expr(e) if matches!(e.value.as_ref(), Expr::StringLiteral(_)))
}

/// A body without its leading docstring.
fn without_docstring(body: &[Stmt]) -> &[Stmt] {
    match body {
        [first, rest @ ..] if is_docstring(first) => rest,
        _ => body,
    }
}

pub(super) fn is_name(expr: &Expr, name: &str) -> bool {
    matches!(expr, Expr::Name(n) if n.id.as_str() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&UnwrapModules, text)
    }

    const RANKER: &str = "\
class Ranker(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.proj = torch.nn.Linear(cfg.features, cfg.hidden)

    def forward(self, feats):
        return self.proj(feats)

";

    #[test]
    fn a_wrapper_handed_to_torch_jit_script_becomes_its_layer() {
        let text = format!("{RANKER}torch.jit.script(Ranker(RankerConfig()))(feats)\n");
        assert_eq!(
            results(&text),
            [
                "\ntorch.jit.script(torch.nn.Linear(RankerConfig().features, RankerConfig().hidden))(feats)\n"
            ]
        );
    }

    #[test]
    fn keywords_bind_by_name_and_defaults_fill_the_rest() {
        let text = "\
class Head(nn.Module):
    \"\"\"The classifier.\"\"\"

    def __init__(self, width, classes=10, *, bias=True):
        \"\"\"Builds it.\"\"\"
        super(Head, self).__init__()
        self.out = nn.Linear(width, classes, bias=bias)

    def forward(self, x, *args, **kwargs):
        return self.out(x, *args, **kwargs)
m = Head(bias=False, width=64)
";
        assert_eq!(results(text), ["m = nn.Linear(64, 10, bias=False)\n"]);
    }

    #[test]
    fn an_argument_that_is_not_atomic_is_parenthesized_only_where_an_operator_binds_to_it() {
        let text = "\
class C(Module):
    def __init__(self, n):
        super().__init__()
        self.f = nn.Linear(n * 2, n)

    def forward(self, x):
        return self.f(x)
y = C(k + 1)(x)
";
        assert_eq!(results(text), ["y = nn.Linear((k + 1) * 2, k + 1)(x)\n"]);
    }

    #[test]
    fn a_layer_handed_in_is_the_layer_itself() {
        let text = "\
class Wrap(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return self.inner(x)
torch.export.export(Wrap(nn.Linear(4, 4)), (x,))
";
        assert_eq!(
            results(text),
            ["torch.export.export(nn.Linear(4, 4), (x,))\n"]
        );
    }

    #[test]
    fn a_number_before_a_dot_and_a_line_broken_outside_brackets_are_parenthesized() {
        let text = "\
class C(nn.Module):
    def __init__(self, n, m):
        super().__init__()
        self.f = nn.Linear(n.real, m)

    def forward(self, x):
        return self.f(x)
y = C(3, a +
      b)
";
        assert_eq!(results(text), ["y = nn.Linear((3).real, (a +\n      b))\n"]);
    }

    #[test]
    fn every_call_is_unwrapped_and_the_comment_above_the_class_goes_with_it() {
        let text = format!("# The model.\n{RANKER}a = Ranker(c1)\nb = torch.compile(Ranker(c2))\n");
        assert_eq!(
            results(&text),
            [
                "\na = torch.nn.Linear(c1.features, c1.hidden)\nb = torch.compile(torch.nn.Linear(c2.features, c2.hidden))\n"
            ]
        );
    }

    #[test]
    fn a_layer_and_its_functional_activation_become_a_sequential() {
        let text = "\
class Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)

    def forward(self, x):
        return F.relu(self.conv(x))
torch.jit.trace(Block(3, 8), x)
";
        assert_eq!(
            results(text),
            ["torch.jit.trace(nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU()), x)\n"]
        );
    }

    #[test]
    fn members_chain_in_the_order_forward_applies_them() {
        let text = "\
class Block(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.act = torch.nn.GELU()
        self.lin = torch.nn.Linear(n, n)

    def forward(self, x):
        return torch.tanh(self.act(self.lin(x))).sigmoid()
m = Block(8).half()
";
        assert_eq!(
            results(text),
            [
                "m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Tanh(), torch.nn.Sigmoid()).half()\n"
            ]
        );
    }

    #[test]
    fn a_chain_spells_torch_nn_in_full_when_its_layer_does_not_say() {
        let text = "\
class Block(Module):
    def __init__(self, conv):
        super().__init__()
        self.conv = conv

    def forward(self, x):
        return self.conv(x).relu()
y = Block(Conv2d(3, 3, 1))(x)
";
        assert_eq!(
            results(text),
            ["y = torch.nn.Sequential(Conv2d(3, 3, 1), torch.nn.ReLU())(x)\n"]
        );
    }

    #[test]
    fn chains_it_cannot_unwrap_stay() {
        let class = |forward: &str| {
            format!(
                "class C(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.f = nn.Linear(n, n)\n        self.g = nn.ReLU()\n    def forward(self, x):\n        return {forward}\nC(3)(x)\n"
            )
        };
        // The control: this one unwraps, and each case below changes one thing about it.
        assert_eq!(results(&class("self.g(self.f(x))")).len(), 1);
        for forward in [
            // A member called twice.
            "self.g(self.f(self.f(x)))",
            // A member never called.
            "F.relu(self.f(x))",
            // An activation with an argument of its own.
            "F.leaky_relu(self.g(self.f(x)), 0.2)",
            "F.relu(self.g(self.f(x)), inplace=True)",
            // A function without a module form.
            "torch.exp(self.g(self.f(x)))",
            // Something else than the input at the end of the chain.
            "self.g(self.f(x + 1))",
        ] {
            let text = class(forward);
            assert!(results(&text).is_empty(), "{text}");
        }
        let text = class("self.g(self.f(x))").replace("self, x)", "self, x, y)");
        assert!(results(&text).is_empty(), "{text}");
        let text = class("self.g(self.f(x))") + "def h(torch):\n    return C(1)\n";
        assert_eq!(results(&text).len(), 1, "{text}");
        let text = class("self.g(self.f(x))") + "def h(nn):\n    return C(1)\n";
        assert!(results(&text).is_empty(), "{text}");
    }

    #[test]
    fn wrappers_it_cannot_unwrap_stay() {
        let class = |init: &str, forward: &str| {
            format!(
                "class C(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n{init}    def forward(self, x, y):\n        return {forward}\n"
            )
        };
        let wrapper = class("        self.f = nn.Linear(n, n)\n", "self.f(x, y)");
        // The control: this one unwraps, and each case below changes one thing about it.
        assert_eq!(results(&(wrapper.clone() + "C(3)(x, y)\n")).len(), 1);
        for text in [
            // `forward` does more than call the layer.
            class("        self.f = nn.Linear(n, n)\n", "self.f(x, y) + 1") + "C(3)(x, y)\n",
            // `forward` passes its parameters reordered.
            class("        self.f = nn.Linear(n, n)\n", "self.f(y, x)") + "C(3)(x, y)\n",
            // Two members.
            class(
                "        self.f = nn.Linear(n, n)\n        self.g = nn.ReLU()\n",
                "self.f(x, y)",
            ) + "C(3)(x, y)\n",
            // The layer reads `self`.
            class("        self.f = nn.Linear(self.n, n)\n", "self.f(x, y)") + "C(3)(x, y)\n",
            // The class read other than in a call.
            wrapper.clone() + "m = C(3)\nassert isinstance(m, C)\n",
            // A parameter without argument or default.
            wrapper.clone() + "C()(x, y)\n",
            // A starred argument.
            wrapper.clone() + "C(*dims)(x, y)\n",
            // A name the layer reads is bound where the call stands.
            wrapper.clone() + "def f():\n    nn = 1\n    return C(3)\n",
            // A comprehension in the layer binds a name the argument reads.
            class(
                "        self.f = nn.Sequential(*[nn.Linear(n, n) for i in range(2)])\n",
                "self.f(x, y)",
            ) + "C(i)(x, y)\n",
            // A call inside the arguments of another.
            wrapper.clone() + "C(C(3))(x, y)\n",
            // Another base.
            wrapper.replace("nn.Module", "Base") + "C(3)(x, y)\n",
            // The layer names the class, which goes.
            class("        self.f = make(C, n)\n", "self.f(x, y)") + "C(3)(x, y)\n",
            // Never called: that is delete_definitions' job.
            wrapper.clone(),
        ] {
            assert!(results(&text).is_empty(), "{text}");
        }
    }
}
