//! A line too long to paste gets its values named, as the original script named them.
//!
//! ## What it changes
//! Propagation and inlining put values where they are used, which can leave one statement of
//! 200 columns where the report had three short lines. In a simple statement with a line over
//! [`LIMIT`] columns (or over the original's widest line, where that is wider), each call that takes arguments and runs whenever the statement does (not
//! in a lambda, a comprehension, a conditional expression, a boolean operator or an assert's
//! message) is a candidate: it moves to an assignment on the line before, and the statement
//! reads the name. So is a lambda made there: it becomes a `def` on the lines before. The name
//! is the one the original script gave the same thing: the result of a call of the same
//! function (`X = torch.stft(…)` names a `torch.stft` call `X` again), the function with the
//! same parameters (the `def` that `lambda_functions` wrote in place); else the function's own
//! name (`x` for a tensor or array factory; a method of a call's value, `torch.Tensor([…]).to(…)`,
//! by that call's), or `f` for a lambda. The candidates after which
//! both lines fit come first (one line more, not two), else those that leave the narrowest;
//! then those the original named, then left to right. The loop takes them one at a time until
//! every line fits.
//!
//! It runs once the passes are done, outside their rounds (propagation would put the value
//! back), and it grows the script: each step is still judged by the oracle.
//!
//! ## Example
//! ```python
//! # before (the original had `X = torch.stft(x, …)`)
//! torch.istft(torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)
//!
//! # after
//! X = torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True)
//! torch.istft(X, 1024, 256, window=w, center=False)
//! ```
//!
//! ## When it cannot apply
//! A statement whose lines all fit; a compound statement (its header's expressions are left
//! as they are); a statement that does not start its line (after `;` or a header's colon); the
//! statement's whole value (naming it only moves the line); a call that takes no arguments, or
//! that is narrower than 20 columns (`Decimal("0.07")`: its own line costs more than it
//! saves). A function the original called more than once gives the first name it bound one
//! of its calls to (`A` of `A = as_nested_tensor(a)` and `B = as_nested_tensor(b)`): which of
//! its values a call is, the name cannot tell, but a name from the report reads better than
//! `as_nested_tensor = …`.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::edit::{Candidate, Edit, indent_at, line_of, line_start, starts_line};
use crate::pass::{Growth, Pass, PassInfo, Phase};
use crate::passes::helpers::{callee_name, is_identifier, short, snake_case};
use crate::python::{
    Expr, Script, SourceOrderVisitor, Stmt, all_bodies, all_exprs, ast, source_order, span,
};
use crate::scopes::Scopes;

/// The widest line a maintainer pastes as it is: PyTorch's own lint allows 120 columns.
pub const LIMIT: usize = 120;

/// The narrowest call worth a line of its own, in columns: `torch.randn(1408)` and
/// `Decimal("0.07")` stay where they are.
const SHORT: usize = 20;

/// Functions whose result a person calls `x`: the tensor and array factories.
const FACTORIES: &str = "Tensor arange array asarray empty full linspace ones ones_like rand rand_like \
    randint randn randn_like tensor zeros zeros_like";

/// Each argument of `expr` when it is a call, by its place: the callee's last name and the
/// position (`narrow#2`) or keyword (`narrow#layout`).
fn places(expr: &Expr) -> Vec<(String, &Expr)> {
    let Expr::Call(call) = expr else {
        return Vec::new();
    };
    let Some(callee) = callee_name(&call.func) else {
        return Vec::new();
    };
    let positional = call
        .arguments
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| (format!("{callee}#{i}"), a));
    let keywords = call.arguments.keywords.iter().filter_map(|k| {
        k.arg
            .as_ref()
            .map(|name| (format!("{callee}#{}", name.as_str()), &k.value))
    });
    positional.chain(keywords).collect()
}

/// A call's callee and the literals among its arguments, in order (`run_test('eager')` of
/// `run_test(model, inputs, 'eager')`); `None` for a call without a literal argument.
fn literal_key(script: &Script, call: &ast::ExprCall) -> Option<String> {
    let callee = callee_name(&call.func)?;
    let literals: Vec<&str> = call
        .arguments
        .args
        .iter()
        .chain(call.arguments.keywords.iter().map(|k| &k.value))
        .filter(|a| crate::python::is_plain_literal(a))
        .map(|a| script.slice(a))
        .collect();
    (!literals.is_empty()).then(|| format!("{callee}({})", literals.join(", ")))
}

/// Whether a function of that name makes a tensor or an array from data or sizes.
pub(crate) fn is_factory(name: &str) -> bool {
    FACTORIES.split_whitespace().any(|f| f == name)
}

/// Names a value must not take: Python's builtins.
const BUILTINS: &str = "\
    abs aiter all anext any ascii bin bool breakpoint bytearray bytes callable chr \
    classmethod compile complex copyright credits delattr dict dir divmod enumerate eval \
    exec exit filter float format frozenset getattr globals hasattr hash help hex id input \
    int isinstance issubclass iter len license list locals map max memoryview min next \
    object oct open ord pow print property quit range repr reversed round set setattr slice \
    sorted staticmethod str sum super tuple type vars zip";

/// The pass, with the names the original script gave the results of its calls.
pub struct NameLongValues {
    /// A callee's last name (`stft`) → the name the original bound its one call to (`X`).
    names: HashMap<String, String>,
    /// A callee the original called more than once → the first name it bound a call of it to
    /// (`A` of `A = as_nested_tensor(a)`, `B = as_nested_tensor(b)`): a name from the report
    /// reads better than the function's own, where nothing tells which call a value is.
    first_names: HashMap<String, String>,
    /// The code of a call the original bound to a name, or called a method of in the value it
    /// bound (`do(T1.to_sparse(), T2)` of `sparse1 = do(T1.to_sparse(), T2).to_dense()`), →
    /// that name, where the original bound it once.
    texts: HashMap<String, String>,
    /// A call by its callee and literal arguments (`run_test` with `'eager'`, see
    /// [`literal_key`]) → the name the original bound its one such call to.
    literals: HashMap<String, String>,
    /// A place in a call (`narrow#2`, `allclose#0`, `f#dim`, see [`places`]) → the name the
    /// original passed there, where it passed one name there.
    places: HashMap<String, String>,
    /// How wide a line may be: [`LIMIT`], or the original's widest line where that is wider
    /// (a line the reporter wrote at that width is no line scrub made too long).
    limit: usize,
    /// A function's parameter names joined by commas → the name of the original's first
    /// function that takes them: a lambda that takes them is written as that `def` again.
    defs: HashMap<String, String>,
}

impl NameLongValues {
    /// The pass for a reduction of `original`.
    pub fn of(original: &Script) -> NameLongValues {
        let (mut names, mut defs) = (HashMap::new(), HashMap::new());
        let mut first_names: HashMap<String, String> = HashMap::new();
        let mut texts: HashMap<String, Option<String>> = HashMap::new();
        let mut literals: HashMap<String, Option<String>> = HashMap::new();
        for body in all_bodies(original.body()) {
            for stmt in body {
                let (target, value) = match stmt {
                    Stmt::FunctionDef(f) => {
                        let params = f.parameters.iter().map(|p| p.name().as_str());
                        defs.entry(params.collect::<Vec<_>>().join(","))
                            .or_insert_with(|| f.name.to_string());
                        continue;
                    }
                    Stmt::Assign(a) if a.targets.len() == 1 => (&a.targets[0], &*a.value),
                    Stmt::AnnAssign(a) => match &a.value {
                        Some(value) => (&*a.target, &**value),
                        None => continue,
                    },
                    _ => continue,
                };
                if let (Expr::Name(name), Expr::Call(call)) = (target, value)
                    && let Some(key) = literal_key(original, call)
                {
                    literals
                        .entry(key)
                        .and_modify(|n| *n = None)
                        .or_insert_with(|| Some(name.id.to_string()));
                }
                if let Expr::Name(name) = target {
                    let mut value = value;
                    while let Expr::Call(call) = value {
                        texts
                            .entry(original.slice(value).to_string())
                            .and_modify(|n| *n = None)
                            .or_insert_with(|| Some(name.id.to_string()));
                        match &*call.func {
                            Expr::Attribute(a) => value = &a.value,
                            _ => break,
                        }
                    }
                }
                if let (Expr::Name(name), Expr::Call(call)) = (target, value)
                    && let Some(callee) = callee_name(&call.func)
                {
                    names.insert(callee.to_string(), name.id.to_string());
                    first_names
                        .entry(callee.to_string())
                        .or_insert_with(|| name.id.to_string());
                }
            }
        }
        // A function the original calls more than once made several values: which one a
        // call of the result is, its name cannot tell.
        let mut calls: HashMap<&str, usize> = HashMap::new();
        for expr in all_exprs(original.body()) {
            if let Expr::Call(call) = expr
                && let Some(callee) = callee_name(&call.func)
            {
                *calls.entry(callee).or_default() += 1;
            }
        }
        names.retain(|callee, _| calls.get(callee.as_str()) == Some(&1));
        first_names.retain(|callee, _| !names.contains_key(callee));
        let mut places: HashMap<String, Option<String>> = HashMap::new();
        for expr in all_exprs(original.body()) {
            for (place, arg) in self::places(expr) {
                if let Expr::Name(name) = arg {
                    places
                        .entry(place)
                        .and_modify(|n| {
                            if n.as_deref() != Some(name.id.as_str()) {
                                *n = None
                            }
                        })
                        .or_insert_with(|| Some(name.id.to_string()));
                }
            }
        }
        let once = |map: HashMap<String, Option<String>>| -> HashMap<String, String> {
            map.into_iter()
                .filter_map(|(key, name)| Some((key, name?)))
                .collect()
        };
        NameLongValues {
            names,
            first_names,
            texts: once(texts),
            literals: once(literals),
            places: once(places),
            limit: original
                .text()
                .lines()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0)
                .max(LIMIT),
            defs,
        }
    }

    /// The place of `call` in the call of `script` it is an argument of (see [`places`]).
    fn place_of(&self, script: &Script, call: &ast::ExprCall) -> Option<String> {
        let at = span(call);
        all_exprs(script.body())
            .into_iter()
            .flat_map(places)
            .find(|(_, arg)| span(*arg) == at)
            .map(|(place, _)| place)
    }

    /// Whether the original bound a call of the same function to a name.
    fn named_in_original(&self, call: &ast::ExprCall) -> bool {
        callee_name(&call.func).is_some_and(|callee| self.names.contains_key(callee))
    }

    /// The name for the value of `call`, written `code`, where the names `taken` are in use.
    fn name_for(
        &self,
        script: &Script,
        call: &ast::ExprCall,
        taken: &HashSet<&str>,
        code: &str,
    ) -> String {
        let by_literals = literal_key(script, call).and_then(|k| self.literals.get(&k));
        let by_place = self
            .place_of(script, call)
            .and_then(|p| self.places.get(&p));
        if let Some(name) = self.texts.get(code).or(by_literals).or(by_place)
            && !taken.contains(name.as_str())
        {
            return name.clone();
        }
        // A method of a call's value is named for that call: `torch.Tensor([…]).to(…)` is a
        // tensor, `x`, not a `to`.
        let mut named = call;
        while let Expr::Attribute(method) = &*named.func
            && let Expr::Call(receiver) = &*method.value
            && !self
                .names
                .contains_key(callee_name(&named.func).unwrap_or(""))
        {
            named = receiver;
        }
        let callee = callee_name(&named.func).unwrap_or("value");
        let own = snake_case(callee.trim_end_matches('_'));
        let own = if is_factory(callee) {
            "x"
        } else if is_identifier(&own) && !BUILTINS.split_whitespace().any(|b| b == own) {
            own.as_str()
        } else {
            "value"
        };
        match self.names.get(callee).or(self.first_names.get(callee)) {
            Some(name) if !taken.contains(name.as_str()) => name.clone(),
            _ => fresh(own, taken),
        }
    }
}

impl Pass for NameLongValues {
    fn info(&self) -> PassInfo {
        PassInfo {
            name: "name_long_values",
            phase: Phase::Main,
            growth: Growth::Ladder,
            reads_crash: false,
        }
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let scopes = Scopes::of(script.body());
        let mut out = Vec::new();
        for body in all_bodies(script.body()) {
            for stmt in body {
                let range = span(stmt);
                let lines = line_start(text, range.start)..range.end;
                let too_long = text[lines.clone()]
                    .lines()
                    .any(|l| l.chars().count() > self.limit);
                if !too_long || !starts_line(text, range.start) {
                    continue;
                }
                let at = Place {
                    text,
                    lines,
                    indent: indent_at(text, range.start),
                };
                let taken = taken(&scopes, scopes.innermost_at(range.start));
                let (calls, lambdas) = hoistable(stmt);
                // A value narrower than `SHORT` stays: its line would cost more than it saves.
                let wide = calls
                    .into_iter()
                    .filter(|c| script.slice(*c).chars().count() >= SHORT);
                let mut named: Vec<Named> =
                    wide.map(|c| self.call(script, &at, c, &taken)).collect();
                named.extend(
                    lambdas
                        .into_iter()
                        .map(|l| self.lambda(script, &at, l, &taken)),
                );
                named.sort_by_key(Named::order);
                out.extend(named.into_iter().map(|n| n.candidate));
            }
        }
        out
    }
}

impl NameLongValues {
    /// `call` as an assignment before the statement at `at`.
    fn call(
        &self,
        script: &Script,
        at: &Place,
        call: &ast::ExprCall,
        taken: &HashSet<&str>,
    ) -> Named {
        let value = script
            .one_line_expr(&Expr::Call(call.clone()))
            .unwrap_or_else(|| script.slice(call).to_string());
        let name = self.name_for(script, call, taken, &value);
        let definition = format!("{}{name} = {value}\n", at.indent);
        let original = self.named_in_original(call)
            || self.texts.contains_key(&value)
            || literal_key(script, call).is_some_and(|k| self.literals.contains_key(&k))
            || self
                .place_of(script, call)
                .is_some_and(|p| self.places.contains_key(&p));
        at.named(span(call), &name, definition, original)
    }

    /// `lambda` as a `def` before the statement at `at`.
    fn lambda(
        &self,
        script: &Script,
        at: &Place,
        lambda: &ast::ExprLambda,
        taken: &HashSet<&str>,
    ) -> Named {
        let params = lambda.parameters.as_deref().map_or("", |p| script.slice(p));
        let original = self.defs.get(&parameter_names(lambda));
        let name = original
            .filter(|n| !taken.contains(n.as_str()))
            .cloned()
            .unwrap_or_else(|| fresh("f", taken));
        let body = script
            .one_line_expr(&lambda.body)
            .unwrap_or_else(|| script.slice(&*lambda.body).to_string());
        let indent = at.indent;
        let mut definition = format!("{indent}def {name}({params}):\n{indent}    return {body}\n");
        // A function of the module stands apart, as every other `def` of a result does.
        if indent.is_empty() {
            if at.text[..at.lines.start].ends_with("\n\n") || at.lines.start == 0 {
                definition.push('\n');
            } else {
                definition = format!("\n{definition}\n");
            }
        }
        at.named(span(lambda), &name, definition, original.is_some())
    }
}

/// A statement with a line too long: the whole lines it spans and its indentation.
struct Place<'a> {
    text: &'a str,
    lines: Range<usize>,
    indent: &'a str,
}

/// A candidate that names a value, with what orders it among the others.
struct Named {
    /// The widest line of the two it leaves.
    widest: usize,
    /// Whether the name is the original's.
    original: bool,
    candidate: Candidate,
}

impl Named {
    /// Those after which both lines fit first (one line more, not two), else the narrowest;
    /// then those the original named, then left to right.
    fn order(&self) -> (usize, bool, usize) {
        let over = self.widest.saturating_sub(LIMIT);
        (over, !self.original, self.candidate.edits[1].range.start)
    }
}

impl Place<'_> {
    /// The candidate that puts `definition` on the line before the statement and `name` in
    /// place of `range`.
    fn named(&self, range: Range<usize>, name: &str, definition: String, original: bool) -> Named {
        let (text, lines) = (self.text, &self.lines);
        let rest = format!(
            "{}{name}{}",
            &text[lines.start..range.start],
            &text[range.end..lines.end]
        );
        let widest = format!("{definition}{rest}")
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        let description = format!(
            "name `{}` `{name}` before line {}",
            short(definition.trim()),
            line_of(text, lines.start)
        );
        let edits = vec![
            Edit::replace(lines.start..lines.start, definition),
            Edit::replace(range, name),
        ];
        Named {
            widest,
            original,
            candidate: Candidate::new(description, edits),
        }
    }
}

/// The names of a lambda's parameters, joined by commas: how a `def` of the original is known.
fn parameter_names(lambda: &ast::ExprLambda) -> String {
    lambda.parameters.as_deref().map_or(String::new(), |p| {
        p.iter()
            .map(|p| p.name().as_str())
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// `stem`, or `stem` and a number, whichever is first free where the names `taken` are in use.
fn fresh(stem: &str, taken: &HashSet<&str>) -> String {
    std::iter::once(stem.to_string())
        .chain((2..).map(|i| format!("{stem}{i}")))
        .find(|n| !taken.contains(n.as_str()) && !is_keyword(n))
        .expect("a free name")
}

/// What of `stmt` can be named: the calls with arguments that run whenever it does, and the
/// lambdas it makes there, left to right; not its whole value.
fn hoistable(stmt: &Stmt) -> (Vec<&ast::ExprCall>, Vec<&ast::ExprLambda>) {
    let value: &Expr = match stmt {
        Stmt::Expr(s) => &s.value,
        Stmt::Assign(s) => &s.value,
        Stmt::AnnAssign(s) => match &s.value {
            Some(v) => v,
            None => return Default::default(),
        },
        Stmt::Return(s) => match &s.value {
            Some(v) => v,
            None => return Default::default(),
        },
        // The message runs only when the assert fails.
        Stmt::Assert(s) => &s.test,
        _ => return Default::default(),
    };
    let mut found = Found::default();
    found.visit_expr(value);
    let calls = found.calls.into_iter().filter(|c| span(*c) != span(value));
    let lambdas = found
        .lambdas
        .into_iter()
        .filter(|l| span(*l) != span(value));
    (calls.collect(), lambdas.collect())
}

/// The calls with arguments of an expression and the lambdas it makes, outside the parts
/// that may not run.
#[derive(Default)]
struct Found<'a> {
    calls: Vec<&'a ast::ExprCall>,
    lambdas: Vec<&'a ast::ExprLambda>,
}

impl<'a> SourceOrderVisitor<'a> for Found<'a> {
    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => self.lambdas.push(lambda),
            Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_)
            | Expr::If(_)
            | Expr::BoolOp(_) => {}
            Expr::Call(call) => {
                if !call.arguments.is_empty() {
                    self.calls.push(call);
                }
                source_order::walk_expr(self, expr);
            }
            _ => source_order::walk_expr(self, expr),
        }
    }
}

/// The names a new variable of `scope` may not take: those its code reads or binds, those
/// that code anywhere reads from it, and those read where nothing binds them (builtins).
fn taken<'a>(scopes: &Scopes<'a>, scope: Option<usize>) -> HashSet<&'a str> {
    scopes
        .occurrences
        .iter()
        .filter(|o| {
            let refers = scopes.resolve_occurrence(o);
            o.scope == scope
                || refers == scope
                || (refers.is_none() && !scopes.module_binds(o.name))
        })
        .map(|o| o.name)
        .collect()
}

fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn named(original: &str, text: &str) -> Vec<String> {
        let original = Script::parse(original, PythonVersion::PY311).unwrap();
        let pass = NameLongValues::of(&original);
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        pass.candidates(&script)
            .iter()
            .map(|c| c.apply(text).unwrap())
            .collect()
    }

    const LONG: &str = "torch.istft(torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True), 1024, 256, window=w, center=False)\n";

    #[test]
    fn a_line_as_wide_as_the_reporter_wrote_is_left_alone() {
        let line = "assert not torch.isfinite(compiled_out).all(), \"torch.compile silently accepted targets outside [0, 1] that eager rejects\"\n";
        assert!(line.len() > LIMIT);
        assert!(named(line, line).is_empty());
        assert!(!named("", line).is_empty());
    }

    #[test]
    fn a_call_the_original_named_goes_first_and_one_that_fits_before_one_that_does_not() {
        let original = "x = torch.randn(L)\nX = torch.stft(x, n)\n";
        // `torch.randn(1408)` is too short to be worth a line.
        assert_eq!(
            named(original, LONG),
            [
                "X = torch.stft(torch.randn(1408), 1024, 256, window=w, center=False, return_complex=True)\ntorch.istft(X, 1024, 256, window=w, center=False)\n"
            ]
        );
        let text = "torch.testing.assert_close(((x - x.mean()) / torch.sqrt(x.var(unbiased=True))) * weight + bias, torch.nn.functional.layer_norm(x, x.shape, weight, bias))\n";
        let original = "v = x.var(unbiased=True)\nref = torch.nn.functional.layer_norm(x)\n";
        let out = named(original, text);
        assert!(
            out[0].starts_with("ref = torch.nn.functional.layer_norm("),
            "{out:?}"
        );
        // One that leaves the line too long goes last, named as the original did.
        assert!(out[2].starts_with("v = x.var(unbiased=True)\n"), "{out:?}");
    }

    #[test]
    fn a_call_the_original_bound_or_called_a_method_of_takes_its_name() {
        let original =
            "dense = do(T1, T2).to_dense()\nsparse1 = do(T1.to_sparse(), T2).to_dense()\n";
        let text = "assert torch.allclose(do(T1, T2).to_dense(), do(T1.to_sparse(), T2).to_dense()), \"sparse (first operand) result differs from dense\"\n";
        let out = named(original, text);
        assert!(
            out.iter()
                .any(|o| o.starts_with("sparse1 = do(T1.to_sparse(), T2)")),
            "{out:?}"
        );
        // Or the name the original passed at the same place of the same call.
        let original = "starts = torch.tensor([0, 1], dtype=torch.int64)\nnt = torch.nested.narrow(x, 1, starts, lengths, layout=torch.jagged)\n";
        let text = "nt = torch.nested.narrow(x, 1, torch.tensor([1], dtype=torch.int64), torch.tensor([1], dtype=torch.int64), layout=torch.jagged)\n";
        let out = named(original, text);
        assert!(
            out.iter()
                .any(|o| o.starts_with("starts = torch.tensor([1], dtype=torch.int64)")),
            "{out:?}"
        );
        // Or a call of the same function with the same literals, its other arguments changed.
        let original = "output = run_test(model, inputs, 'eager')\nc_output = run_test(model, inputs, 'inductor')\n";
        let text = "assert torch.allclose(run_test(forward, inputs, 'eager'), run_test(forward, inputs, 'inductor'), 1e-3, 1e-3, equal_nan=True)\n";
        let out = named(original, text);
        assert!(
            out.iter()
                .any(|o| o.starts_with("output = run_test(forward, inputs, 'eager')")),
            "{out:?}"
        );
    }

    #[test]
    fn without_an_original_name_a_value_is_named_after_its_function() {
        let wide = LONG.replace("torch.randn(1408)", "torch.randn(1408, 2, 2, 2)");
        let out = named("", &wide);
        assert!(
            out[0].starts_with("stft = torch.stft(torch.randn(1408, "),
            "{out:?}"
        );
        assert!(
            out[1].starts_with("x = torch.randn(1408, 2, 2, 2)\n"),
            "{out:?}"
        );
        let taken = named("", &format!("x = 1\n{wide}"));
        assert!(
            taken[1].starts_with("x = 1\nx2 = torch.randn(1408, "),
            "{taken:?}"
        );
        // A function's own `x` is another variable.
        let local = named("", &format!("def f(x):\n    return x\n{wide}"));
        assert!(local[1].contains("\nx = torch.randn(1408, "), "{local:?}");
        // An attribute of the same name is no variable.
        let attribute = named("", &wide.replace("2, 2, 2)", "2, 2, 2).x"));
        assert!(
            attribute
                .iter()
                .any(|t| t.starts_with("x = torch.randn(1408, "))
        );
        // A class's name as a variable's; a builtin's is never taken.
        let built = named(
            "",
            &LONG
                .replace("torch.stft(", "MaskedTensor(")
                .replace("torch.randn(1408)", "sum([1408, 2, 2, 2, 2])"),
        );
        assert!(
            built
                .iter()
                .any(|t| t.starts_with("masked_tensor = MaskedTensor(")),
            "{built:?}"
        );
        assert!(
            built.iter().any(|t| t.starts_with("value = sum(")),
            "{built:?}"
        );
        // A method of a call's value is named for that call.
        let converted = named(
            "",
            &wide.replace(
                "torch.randn(1408, 2, 2, 2)",
                "torch.Tensor([1408, 2, 2, 2]).to(torch.float32)",
            ),
        );
        assert!(
            converted
                .iter()
                .any(|t| t.starts_with("x = torch.Tensor([1408, 2, 2, 2]).to(torch.float32)\n")),
            "{converted:?}"
        );
    }

    #[test]
    fn a_function_the_original_calls_twice_gives_its_first_name() {
        let original = "X = torch.stft(x, n)\nY = torch.stft(y, n)\n";
        assert!(named(original, LONG)[0].starts_with("X = torch.stft("));
        // Not a name the statement already uses.
        let text = format!("X = 1\n{LONG}");
        let out = named(original, &text);
        assert!(out[0].contains("\nstft = torch.stft("), "{out:?}");
    }

    #[test]
    fn a_lambda_becomes_the_original_s_def_again() {
        let original = "def model_func(new_params):\n    return loss(new_params)\n";
        let text = format!(
            "torch.func.jvp(torch.func.grad(lambda new_params: {}), (p,), (v,))\n",
            "g(new_params, 1) + ".repeat(6).trim_end_matches(" + ")
        );
        let out = named(original, &text);
        assert!(
            out[0].starts_with("def model_func(new_params):\n    return g(new_params, 1) + g(")
                && out[0]
                    .ends_with("\n\ntorch.func.jvp(torch.func.grad(model_func), (p,), (v,))\n"),
            "{out:?}"
        );
        let after = named(original, &format!("p = 1\n{text}"));
        assert!(
            after[0].starts_with("p = 1\n\ndef model_func(new_params):\n")
                && after[0].contains("\n\ntorch.func.jvp("),
            "{after:?}"
        );
        let unnamed = named("", &text);
        assert!(
            unnamed
                .iter()
                .any(|t| t.starts_with("def f(new_params):\n")),
            "{unnamed:?}"
        );
    }

    #[test]
    fn a_line_that_fits_is_left_alone() {
        assert!(named("", "torch.istft(torch.stft(torch.randn(8), 4), 4)\n").is_empty());
    }

    #[test]
    fn what_may_not_run_and_the_whole_value_stay() {
        let lambda = format!("f = lambda p: {}", LONG);
        assert!(named("", &lambda).is_empty());
        let message = format!("assert ok, str({})", LONG.trim_end());
        assert!(named("", &format!("{message}\n")).is_empty());
        let whole = format!("y = torch.randn({})\n", "1, ".repeat(40));
        assert!(named("", &whole).is_empty());
    }

    #[test]
    fn a_value_in_a_function_is_named_at_the_statement_s_indentation() {
        let text = format!("def f(w):\n    return {}", LONG);
        let out = named("", &text);
        assert!(
            out[0].starts_with("def f(w):\n    stft = torch.stft(torch.randn(1408), ")
                && out[0].ends_with(
                    "\n    return torch.istft(stft, 1024, 256, window=w, center=False)\n"
                ),
            "{out:?}"
        );
    }
}
