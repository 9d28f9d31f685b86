//! A check of a nudged copy keeps the nudge, and a check of a gradient keeps reading it.
//!
//! `new = x.clone(); new[0][0] += 0.01; new_loss = ctc_loss(new, …)`, then `assert
//! allclose(new_loss - loss, x.grad[0][0] * 0.01)`: a finite-difference check of a gradient.
//! Delete the nudge and the copy's loss is `x`'s: the check compares the gradient with a
//! difference that is zero by design, and still fails. Where the script binds a name to a copy
//! (`.clone()`, `.copy()`, `copy.copy`, `copy.deepcopy`, `np.copy`, `torch.clone`) and then
//! changes it in place (an item or attribute assigned, an augmented assignment, a method
//! `…_(…)`), and a check reads it (through the names assigned from it), a candidate has as many
//! such copies changed in place that a check reads.
//!
//! A nudge by nothing (`new[0][0] += 0.0`) is none.
//!
//! Likewise `input.grad[0][0]` hoisted to `input[0][0]` compares the input with a loss: a
//! check that reads a property a library sets or derives (`.grad`, `.real`, `.shape`, …)
//! still reads it. And a check keeps its arithmetic: `new_loss - loss` against `grad * 0.01`
//! hoisted to `new_loss` against `grad` compares a loss with a gradient. A candidate's checks
//! have as many sides that are an operation of each operator.
//!
//! Only checks that can run count: not those of a function nothing names.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::passes::helpers::callee_name;
use crate::python::{
    Expr, Script, Stmt, all_bodies, assignment, exprs_of, imported_names, literal_only,
};

/// The properties of a tensor or an array a check may read: what autograd set, or a view or
/// a description of the value.
const PROPERTIES: [&str; 16] = [
    "grad",
    "grad_fn",
    "real",
    "imag",
    "T",
    "mT",
    "H",
    "mH",
    "shape",
    "dtype",
    "device",
    "layout",
    "is_leaf",
    "requires_grad",
    "ndim",
    "strides",
];

/// Which checks the failure may come from: an `assert` whose message is the failure's, or
/// none where it has none; one whose message shows a value, where the failing one's does
/// (`shown`); a library's check (`torch.testing.assert_close`) where it does not. A check
/// that passed before the failing one (`assert y.shape == (48, 1), y.shape`) may go.
#[derive(Debug, Clone, Default)]
pub struct Failing {
    pub message: Option<String>,
    pub shown: bool,
}

impl Failing {
    /// Whether the failure may come from an `assert` with the message `msg`, or from a
    /// library's check (`None`).
    fn from(&self, msg: Option<Option<&Expr>>) -> bool {
        let message = self.message.as_deref().map(str::trim).unwrap_or_default();
        match msg {
            None => !self.shown,
            Some(None) => !self.shown && message.is_empty(),
            Some(Some(msg)) if crate::expected::shows(msg) => self.shown,
            // The texts it writes name the check (`"softplus mismatch: " + summarize(…)`).
            Some(Some(msg)) => {
                !self.shown
                    && !message.is_empty()
                    && exprs_of(msg).into_iter().any(|e| match e {
                        Expr::StringLiteral(s) => {
                            let text = s.value.to_str().trim();
                            !text.is_empty() && (text.contains(message) || message.contains(text))
                        }
                        _ => false,
                    })
            }
        }
    }
}

/// How many copies `script` changes in place that `checks` read.
fn nudged_copies(script: &Script, checks: &[&Expr]) -> usize {
    let read = checked_names(script, checks);
    let mut count = 0;
    for body in all_bodies(script.body()) {
        for (i, stmt) in body.iter().enumerate() {
            let Some(name) = copy_bound(stmt) else {
                continue;
            };
            if read.contains(name) && body[i + 1..].iter().any(|s| changes_in_place(s, name)) {
                count += 1;
            }
        }
    }
    count
}

/// The properties (see [`PROPERTIES`]) of values that `checks` read (not an attribute of a
/// module: `torch.grad`).
fn checked_properties(script: &Script, checks: &[&Expr]) -> BTreeSet<String> {
    let imported = imported_names(script.body(), true);
    checks
        .iter()
        .flat_map(|c| exprs_of(c))
        .filter_map(|e| match e {
            Expr::Attribute(a)
                if PROPERTIES.contains(&a.attr.as_str())
                    && root(&a.value).is_none_or(|r| !imported.contains(r)) =>
            {
                Some(a.attr.to_string())
            }
            _ => None,
        })
        .collect()
}

/// How many sides of the comparisons `checks` make are an arithmetic operation (`new_loss -
/// loss`, `grad * 0.01`), by operator; not one of literals (`2**63 - 1` is one figure).
fn checked_arithmetic(checks: &[&Expr]) -> BTreeMap<String, usize> {
    let mut count = BTreeMap::new();
    for &test in checks {
        let Some((a, b)) = crate::differential::sides(test) else {
            continue;
        };
        for side in [a, b] {
            if let Expr::BinOp(op) = side
                && !literal_only(side)
            {
                *count.entry(op.op.as_str().to_string()).or_default() += 1;
            }
        }
    }
    count
}

/// What the checks of a script compare, which a candidate's keep (see the module's doc).
#[derive(Debug, Clone, Default)]
pub struct Compared {
    failing: Failing,
    nudged: usize,
    properties: BTreeSet<String>,
    arithmetic: BTreeMap<String, usize>,
}

impl Compared {
    /// What the checks of `script` that the failure may come from compare.
    pub fn of(script: &Script, failing: &Failing) -> Compared {
        let checks = checks(script, failing);
        Compared {
            failing: failing.clone(),
            nudged: nudged_copies(script, &checks),
            properties: checked_properties(script, &checks),
            arithmetic: checked_arithmetic(&checks),
        }
    }

    /// Whether `candidate` changes as many checked copies in place, its checks read each of
    /// the properties, and have as many sides of each operator.
    pub fn keeps(&self, candidate: &Script) -> bool {
        if self.nudged == 0 && self.properties.is_empty() && self.arithmetic.is_empty() {
            return true;
        }
        let now = Compared::of(candidate, &self.failing);
        now.nudged >= self.nudged
            && now.properties.is_superset(&self.properties)
            && self
                .arithmetic
                .iter()
                .all(|(op, n)| now.arithmetic.get(op).is_some_and(|m| m >= n))
    }
}

/// What the checks of `script` that can run and that the failure may come from test: each
/// `assert`'s test, and each call of a function whose name starts with `assert` in a statement of its own
/// (`torch.testing.assert_close(a, b)`).
fn checks<'a>(script: &'a Script, failing: &Failing) -> Vec<&'a Expr> {
    crate::python::live_bodies(script)
        .into_iter()
        .flatten()
        .filter_map(|stmt| match stmt {
            Stmt::Assert(a) if failing.from(Some(a.msg.as_deref())) => Some(&*a.test),
            Stmt::Expr(e) => match &*e.value {
                Expr::Call(call)
                    if callee_name(&call.func).is_some_and(|c| c.starts_with("assert"))
                        && failing.from(None) =>
                {
                    Some(&*e.value)
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The names `checks` read, and those the values assigned to them in `script` read, at any
/// depth.
fn checked_names<'a>(script: &'a Script, checks: &[&'a Expr]) -> HashSet<&'a str> {
    let mut assigned: HashMap<&str, Vec<&Expr>> = HashMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Some((targets, value)) = assignment(stmt) else {
            continue;
        };
        for target in targets {
            if let Expr::Name(n) = target {
                assigned.entry(n.id.as_str()).or_default().push(value);
            }
        }
    }
    let mut read = HashSet::new();
    let mut pending: Vec<&Expr> = checks.to_vec();
    while let Some(expr) = pending.pop() {
        for e in exprs_of(expr) {
            if let Expr::Name(n) = e
                && read.insert(n.id.as_str())
            {
                pending.extend(assigned.get(n.id.as_str()).into_iter().flatten());
            }
        }
    }
    read
}

/// The name `stmt` binds to a copy of a value: `new = x.clone()`, `new = x.clone().detach()`,
/// `new = copy.deepcopy(x)`, `new = np.copy(x)`.
fn copy_bound(stmt: &Stmt) -> Option<&str> {
    let Stmt::Assign(assign) = stmt else {
        return None;
    };
    let [Expr::Name(name)] = &assign.targets[..] else {
        return None;
    };
    let copies = exprs_of(&assign.value).into_iter().any(|e| match e {
        Expr::Call(call) => matches!(callee_name(&call.func), Some("clone" | "copy" | "deepcopy")),
        _ => false,
    });
    copies.then_some(name.id.as_str())
}

/// Whether `stmt` changes the value `name` holds in place: `name[i] += h`, `name[i] = v`,
/// `name.attr = v`, `name += h`, `name.add_(h)`.
fn changes_in_place(stmt: &Stmt, name: &str) -> bool {
    let rooted = |target: &Expr, itself: bool| match target {
        Expr::Name(n) => itself && n.id.as_str() == name,
        Expr::Subscript(_) | Expr::Attribute(_) => root(target) == Some(name),
        _ => false,
    };
    match stmt {
        Stmt::AugAssign(a) => rooted(&a.target, true) && !identity(a.op, &a.value),
        Stmt::Assign(a) => a.targets.iter().any(|t| rooted(t, false)),
        Stmt::Expr(e) => match &*e.value {
            Expr::Call(call) => match &*call.func {
                Expr::Attribute(f) => {
                    f.attr.ends_with('_')
                        && !f.attr.starts_with('_')
                        && root(&f.value) == Some(name)
                }
                _ => false,
            },
            _ => false,
        },
        _ => false,
    }
}

/// Whether `op` by `value` leaves a number as it is: `+= 0.0`, `*= 1`.
fn identity(op: crate::python::ast::Operator, value: &Expr) -> bool {
    use crate::python::ast::{Number, Operator};
    let Expr::NumberLiteral(n) = value else {
        return false;
    };
    let v = match &n.value {
        Number::Int(i) => i.as_u64().map(|i| i as f64),
        Number::Float(f) => Some(*f),
        Number::Complex { .. } => None,
    };
    match (op, v) {
        (Operator::Add | Operator::Sub, Some(v)) => v == 0.0,
        (Operator::Mult | Operator::Div | Operator::Pow, Some(v)) => v == 1.0,
        _ => false,
    }
}

/// The name an item or attribute chain starts from: `x` of `x[0][1].data`.
fn root(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Subscript(s) => root(&s.value),
        Expr::Attribute(a) => root(&a.value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    const BARE: Failing = Failing {
        message: None,
        shown: false,
    };

    const FINITE_DIFFERENCE: &str = "import torch
x = torch.randn(5, 3).requires_grad_()
loss = torch.nn.functional.ctc_loss(x, t, torch.tensor(5), torch.tensor(4))
loss.backward()
new = x.clone().detach()
new[0][0] += 0.01
new_loss = torch.nn.functional.ctc_loss(new, t, torch.tensor(5), torch.tensor(4))
assert torch.allclose(new_loss - loss, x.grad[0][0] * 0.01, atol=5e-4)
";

    #[test]
    fn a_nudged_copy_that_a_check_reads_keeps_its_nudge() {
        let original = parse(FINITE_DIFFERENCE);
        assert_eq!(Compared::of(&original, &BARE).nudged, 1);
        let rules = Compared::of(&original, &BARE);
        let unnudged = parse(&FINITE_DIFFERENCE.replace("new[0][0] += 0.01\n", ""));
        assert!(!rules.keeps(&unnudged));
        let by_nothing = parse(&FINITE_DIFFERENCE.replace("+= 0.01", "+= 0.0"));
        assert!(!rules.keeps(&by_nothing));
        // Nudged by a method: still one.
        let method = FINITE_DIFFERENCE.replace("new[0][0] += 0.01", "new[0].add_(0.01)");
        assert!(rules.keeps(&parse(&method)));
        // A copy nudged that no check reads counts for nothing.
        let unread =
            "import copy\nd = {'a': 1}\ne = copy.deepcopy(d)\ne['a'] = 2\nassert f(d) == 1\n";
        assert_eq!(Compared::of(&parse(unread), &BARE).nudged, 0);
    }

    #[test]
    fn a_check_of_a_gradient_keeps_reading_it() {
        let original = parse(FINITE_DIFFERENCE);
        assert_eq!(
            Compared::of(&original, &BARE).properties,
            BTreeSet::from(["grad".to_string()])
        );
        let module = parse("import torch\nassert torch.grad is not None\n");
        assert!(Compared::of(&module, &BARE).properties.is_empty());
        let rules = Compared::of(&original, &BARE);
        let hoisted = FINITE_DIFFERENCE.replace("x.grad[0][0]", "x[0][0]");
        assert!(!rules.keeps(&parse(&hoisted)));
        let inlined =
            FINITE_DIFFERENCE.replace("assert torch.allclose(", "torch.testing.assert_close(");
        assert!(rules.keeps(&parse(&inlined)));
    }

    #[test]
    fn a_check_keeps_its_arithmetic() {
        let rules = Compared::of(&parse(FINITE_DIFFERENCE), &BARE);
        let one_sided = FINITE_DIFFERENCE.replace("new_loss - loss", "new_loss");
        assert!(!rules.keeps(&parse(&one_sided)));
        let unscaled = FINITE_DIFFERENCE.replace(" * 0.01, atol", ", atol");
        assert!(!rules.keeps(&parse(&unscaled)));
        // A smoke test nothing calls may go, with its check.
        let helper =
            format!("{FINITE_DIFFERENCE}def smoke(m):\n    assert m.shape == (2 * 2,), m.dtype\n");
        let rules = Compared::of(&parse(&helper), &BARE);
        assert!(rules.keeps(&parse(FINITE_DIFFERENCE)));
        // A check that passed before the failing one may lose its arithmetic.
        let sanity = format!("{FINITE_DIFFERENCE}assert y.shape == (n * 2,), y.shape\n");
        let failing = Failing {
            message: None,
            shown: false,
        };
        assert!(Compared::of(&parse(&sanity), &failing).keeps(&parse(FINITE_DIFFERENCE)));
        // A figure folded is no arithmetic lost.
        let figure = Compared::of(&parse("assert round(x, -3) == 2**63 - 1\n"), &BARE);
        assert!(figure.keeps(&parse("assert round(x, -3) == 9223372036854775807\n")));
    }
}
