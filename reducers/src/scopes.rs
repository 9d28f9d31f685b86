//! Which scope each name of a script belongs to: what the rewriting passes check before
//! they move code or values from one place to another.
//!
//! Python's rules, approximated on the side of caution: a name bound anywhere in a function,
//! lambda, class body or comprehension belongs to it; names declared `global` count as bound
//! at module level too; class bodies are skipped when a name used inside one of their
//! methods is looked up.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::python::{
    Expr, Ranged, Script, SourceOrderVisitor, Stmt, all_bodies, ast, source_order, span,
};

/// What kind of scope a [`Scope`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Function,
    Class,
    Comprehension,
}

/// A scope nested in the module: a function or lambda (with its parameters), a class body or a
/// comprehension.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The whole node: a `def` with its decorators, a lambda, a class, a comprehension.
    pub range: Range<usize>,
    pub kind: ScopeKind,
    /// The enclosing scope; `None` is the module.
    pub parent: Option<usize>,
}

/// One identifier standing for a variable.
#[derive(Debug, Clone)]
pub struct Occurrence<'a> {
    pub name: &'a str,
    pub range: Range<usize>,
    /// Whether it binds the name (assignment, `del`, import, definition, parameter, ...)
    /// rather than reads it.
    pub binds: bool,
    /// The scope it is in; `None` is the module.
    pub scope: Option<usize>,
}

/// Every variable occurrence of a script, with the scopes they are in.
#[derive(Debug, Default)]
pub struct Scopes<'a> {
    pub scopes: Vec<Scope>,
    /// In source order, except that a definition's name comes before its decorators.
    pub occurrences: Vec<Occurrence<'a>>,
    bound: Vec<HashSet<&'a str>>,
    module_bound: HashSet<&'a str>,
    current: Option<usize>,
}

impl<'a> Scopes<'a> {
    /// The scopes and occurrences of a module's body.
    pub fn of(body: &'a [Stmt]) -> Scopes<'a> {
        let mut scopes = Scopes::default();
        scopes.visit_body(body);
        scopes
    }

    /// The scope a name used in scope `scope` refers to: the nearest that binds it, class
    /// bodies skipped except the one it is used in; `None` for the module (or a builtin).
    pub fn resolve(&self, name: &str, scope: Option<usize>) -> Option<usize> {
        let mut at = scope;
        while let Some(id) = at {
            let own = at == scope;
            if (own || self.scopes[id].kind != ScopeKind::Class) && self.bound[id].contains(name) {
                return Some(id);
            }
            at = self.scopes[id].parent;
        }
        None
    }

    /// The scope an occurrence refers to; see [`Scopes::resolve`].
    pub fn resolve_occurrence(&self, occurrence: &Occurrence) -> Option<usize> {
        self.resolve(occurrence.name, occurrence.scope)
    }

    /// Whether the module binds `name` somewhere.
    pub fn module_binds(&self, name: &str) -> bool {
        self.module_bound.contains(name)
    }

    /// The names some scope binds, the module included.
    pub fn bound_names(&self) -> HashSet<&'a str> {
        self.bound
            .iter()
            .flatten()
            .chain(&self.module_bound)
            .copied()
            .collect()
    }

    /// The names read where no scope binds them, the module included: builtins, and names
    /// that raise `NameError` when the read runs.
    pub fn unbound_reads(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.occurrences
            .iter()
            .filter(|o| {
                !o.binds && self.resolve_occurrence(o).is_none() && !self.module_binds(o.name)
            })
            .map(|o| o.name)
    }

    /// The scope whose node spans exactly `range`.
    pub fn scope_at(&self, range: &Range<usize>) -> Option<usize> {
        self.scopes.iter().position(|s| s.range == *range)
    }

    /// Whether scope `inner` is `outer` or nested in it (`None` is the module, which holds
    /// every scope).
    pub fn is_within(&self, inner: Option<usize>, outer: Option<usize>) -> bool {
        let mut at = inner;
        loop {
            if at == outer {
                return true;
            }
            match at {
                Some(id) => at = self.scopes[id].parent,
                None => return false,
            }
        }
    }

    /// The innermost scope that holds the byte `offset`; `None` is the module.
    pub fn innermost_at(&self, offset: usize) -> Option<usize> {
        self.scopes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.range.contains(&offset))
            .min_by_key(|(_, s)| s.range.len())
            .map(|(i, _)| i)
    }

    fn record(&mut self, name: &'a str, range: Range<usize>, binds: bool, scope: Option<usize>) {
        // `import a.b` binds `a`.
        let name = name.split('.').next().unwrap_or(name);
        if binds {
            match scope {
                Some(id) => self.bound[id].insert(name),
                None => self.module_bound.insert(name),
            };
        }
        self.occurrences.push(Occurrence {
            name,
            range,
            binds,
            scope,
        });
    }

    fn bind_here(&mut self, identifier: &'a ast::Identifier) {
        self.record(identifier.as_str(), span(identifier), true, self.current);
    }

    fn enter(&mut self, range: Range<usize>, kind: ScopeKind) -> Option<usize> {
        let outer = self.current;
        self.scopes.push(Scope {
            range,
            kind,
            parent: outer,
        });
        self.bound.push(HashSet::new());
        self.current = Some(self.scopes.len() - 1);
        outer
    }

    /// The nearest scope that is not a comprehension: where a walrus binds.
    fn binding_scope(&self) -> Option<usize> {
        let mut at = self.current;
        while let Some(id) = at {
            if self.scopes[id].kind != ScopeKind::Comprehension {
                break;
            }
            at = self.scopes[id].parent;
        }
        at
    }

    /// The defaults and annotations of `parameters`, which belong to the enclosing scope.
    fn visit_parameter_values(&mut self, parameters: &'a ast::Parameters) {
        for p in parameters.iter() {
            let p = p.as_parameter();
            if let Some(annotation) = &p.annotation {
                self.visit_expr(annotation);
            }
        }
        for p in parameters.iter_non_variadic_params() {
            if let Some(default) = &p.default {
                self.visit_expr(default);
            }
        }
    }

    fn bind_parameters(&mut self, parameters: &'a ast::Parameters) {
        for p in parameters.iter() {
            self.bind_here(&p.as_parameter().name);
        }
    }
}

impl<'a> SourceOrderVisitor<'a> for Scopes<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.bind_here(&f.name);
                for d in &f.decorator_list {
                    self.visit_decorator(d);
                }
                self.visit_parameter_values(&f.parameters);
                if let Some(returns) = &f.returns {
                    self.visit_expr(returns);
                }
                let outer = self.enter(span(f), ScopeKind::Function);
                self.bind_parameters(&f.parameters);
                self.visit_body(&f.body);
                self.current = outer;
            }
            Stmt::ClassDef(c) => {
                self.bind_here(&c.name);
                for d in &c.decorator_list {
                    self.visit_decorator(d);
                }
                if let Some(arguments) = &c.arguments {
                    self.visit_arguments(arguments);
                }
                let outer = self.enter(span(c), ScopeKind::Class);
                self.visit_body(&c.body);
                self.current = outer;
            }
            // `import a.b` binds `a`, `import a.b as c` only `c`, `from m import n` only `n`.
            Stmt::Import(ast::StmtImport { names, .. })
            | Stmt::ImportFrom(ast::StmtImportFrom { names, .. }) => {
                for alias in names {
                    self.bind_here(alias.asname.as_ref().unwrap_or(&alias.name));
                }
            }
            Stmt::Global(g) => {
                for name in &g.names {
                    self.bind_here(name);
                    self.record(name.as_str(), span(name), true, None);
                }
            }
            _ => source_order::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(n) => {
                let binds = n.ctx != ast::ExprContext::Load;
                self.record(n.id.as_str(), span(n), binds, self.current);
            }
            Expr::Attribute(a) => self.visit_expr(&a.value),
            Expr::Named(n) => {
                self.visit_expr(&n.value);
                if let Expr::Name(target) = &*n.target {
                    let scope = self.binding_scope();
                    self.record(target.id.as_str(), span(target), true, scope);
                }
            }
            Expr::Lambda(l) => {
                if let Some(parameters) = &l.parameters {
                    self.visit_parameter_values(parameters);
                }
                let outer = self.enter(span(l), ScopeKind::Function);
                if let Some(parameters) = &l.parameters {
                    self.bind_parameters(parameters);
                }
                self.visit_expr(&l.body);
                self.current = outer;
            }
            Expr::ListComp(ast::ExprListComp { generators, .. })
            | Expr::SetComp(ast::ExprSetComp { generators, .. })
            | Expr::DictComp(ast::ExprDictComp { generators, .. })
            | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                // The first iterable is evaluated outside; all else inside.
                if let Some(first) = generators.first() {
                    self.visit_expr(&first.iter);
                }
                let outer = self.enter(span(expr), ScopeKind::Comprehension);
                for (i, g) in generators.iter().enumerate() {
                    self.visit_expr(&g.target);
                    if i > 0 {
                        self.visit_expr(&g.iter);
                    }
                    for test in &g.ifs {
                        self.visit_expr(test);
                    }
                }
                match expr {
                    Expr::ListComp(c) => self.visit_expr(&c.elt),
                    Expr::SetComp(c) => self.visit_expr(&c.elt),
                    Expr::Generator(c) => self.visit_expr(&c.elt),
                    Expr::DictComp(c) => {
                        if let Some(key) = &c.key {
                            self.visit_expr(key);
                        }
                        self.visit_expr(&c.value);
                    }
                    _ => {}
                }
                self.current = outer;
            }
            _ => source_order::walk_expr(self, expr),
        }
    }

    fn visit_keyword(&mut self, keyword: &'a ast::Keyword) {
        self.visit_expr(&keyword.value);
    }

    /// The remaining identifiers bind: `except ... as`, `nonlocal`, capture patterns, type
    /// parameters (and, conservatively, keyword patterns).
    fn visit_identifier(&mut self, identifier: &'a ast::Identifier) {
        self.bind_here(identifier);
    }
}

/// The names bound exactly once in the script, by `name = value`, with their values.
pub(crate) fn single_bindings(script: &Script) -> Vec<(&str, &Expr)> {
    let scopes = Scopes::of(script.body());
    let mut count: HashMap<&str, usize> = HashMap::new();
    for o in scopes.occurrences.iter().filter(|o| o.binds) {
        *count.entry(o.name).or_default() += 1;
    }
    all_bodies(script.body())
        .into_iter()
        .flatten()
        .filter_map(|s| match s {
            Stmt::Assign(a) => match a.targets.as_slice() {
                [Expr::Name(n)] if count.get(n.id.as_str()) == Some(&1) => {
                    Some((n.id.as_str(), &*a.value))
                }
                _ => None,
            },
            _ => None,
        })
        .filter(|(_, v)| v.range().len() > 0.into())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::{PythonVersion, Script};

    fn resolved(text: &str, name: &str) -> Vec<(bool, Option<usize>)> {
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let scopes = Scopes::of(script.body());
        scopes
            .occurrences
            .iter()
            .filter(|o| o.name == name)
            .map(|o| (o.binds, scopes.resolve_occurrence(o)))
            .collect()
    }

    #[test]
    fn an_import_binds_its_alias_or_the_first_name_of_its_path() {
        let text = "import torch\nimport torch.nn.functional as F\nimport os.path\nfrom m import a as b\ntorch.relu(F)\n";
        assert_eq!(resolved(text, "torch"), [(true, None), (false, None)]);
        assert_eq!(resolved(text, "F"), [(true, None), (false, None)]);
        assert_eq!(resolved(text, "os"), [(true, None)]);
        assert_eq!(resolved(text, "b"), [(true, None)]);
        assert!(resolved(text, "m").is_empty() && resolved(text, "a").is_empty());
    }

    #[test]
    fn a_method_does_not_see_the_names_of_its_class_body() {
        let text = "x = 1\nclass C:\n    x = 2\n    def m(self):\n        return x\n";
        let found = resolved(text, "x");
        assert_eq!(found, [(true, None), (true, Some(0)), (false, None)]);
    }

    #[test]
    fn a_comprehension_variable_belongs_to_the_comprehension_and_a_walrus_does_not() {
        let text = "def f(ys):\n    return [(n := y) for y in ys], n\n";
        let script = Script::parse(text, PythonVersion::PY311).unwrap();
        let scopes = Scopes::of(script.body());
        let y = scopes.occurrences.iter().find(|o| o.name == "y").unwrap();
        assert_eq!(scopes.resolve_occurrence(y), Some(1));
        let n: Vec<_> = scopes
            .occurrences
            .iter()
            .filter(|o| o.name == "n")
            .collect();
        assert!(n.iter().all(|o| scopes.resolve_occurrence(o) == Some(0)));
    }

    #[test]
    fn attribute_and_keyword_names_are_not_variables() {
        assert!(resolved("a.x = f(x=1)\n", "x").is_empty());
    }
}
