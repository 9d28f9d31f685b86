//! A subclass whose `__init__` no longer builds its base: `super().__init__()` deleted from
//! an `nn.Module`'s `__init__` leaves a half-built object (assigning a tensor still works,
//! a `Parameter` or a layer no longer does), which no one writes and a maintainer would put
//! back. A candidate may not have more such `__init__`s than the script it comes from.

use crate::python::{Expr, Script, Stmt, all_bodies, all_exprs};

/// How many `__init__` methods of classes with a base call no `__init__` of another class
/// (`super().__init__(…)`, `Base.__init__(self, …)`).
pub fn unbuilt_inits(script: &Script) -> usize {
    let mut count = 0;
    for body in all_bodies(script.body()) {
        for stmt in body {
            let Stmt::ClassDef(class) = stmt else {
                continue;
            };
            if class.arguments.as_ref().is_none_or(|a| {
                a.args
                    .iter()
                    .all(|base| matches!(base, Expr::Name(n) if n.id.as_str() == "object"))
            }) {
                continue;
            }
            count += class
                .body
                .iter()
                .filter(
                    |stmt| matches!(stmt, Stmt::FunctionDef(f) if f.name.as_str() == "__init__"),
                )
                .filter(|init| !calls_an_init(std::slice::from_ref(*init)))
                .count();
        }
    }
    count
}

fn calls_an_init(body: &[Stmt]) -> bool {
    all_exprs(body).into_iter().any(|expr| {
        matches!(expr, Expr::Call(call)
            if matches!(call.func.as_ref(), Expr::Attribute(a) if a.attr.as_str() == "__init__"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn count(text: &str) -> usize {
        unbuilt_inits(&Script::parse(text, PythonVersion::PY311).unwrap())
    }

    #[test]
    fn an_init_that_builds_its_base_counts_nothing() {
        let built = "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.k = 1\n";
        assert_eq!(count(built), 0);
        let named = "class M(Base):\n    def __init__(self):\n        Base.__init__(self)\n";
        assert_eq!(count(named), 0);
        let plain = "class M:\n    def __init__(self):\n        self.k = 1\n";
        assert_eq!(count(plain), 0);
    }

    #[test]
    fn an_init_of_a_subclass_that_skips_its_base_counts() {
        let skipped = "class M(nn.Module):\n    def __init__(self):\n        self.k = 1\n";
        assert_eq!(count(skipped), 1);
        let nested =
            "def f():\n    class M(Base):\n        def __init__(self):\n            pass\n";
        assert_eq!(count(nested), 1);
    }
}
