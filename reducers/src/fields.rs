//! A class's fields keep the typing forms they are declared with.
//!
//! `owner: NotRequired[str]` in a `TypedDict`, `box_a: Annotated[str, DisplayName("A")]`,
//! `x: ClassVar[int]` in a dataclass: the form is what the class reads from its annotations,
//! and a typing report is about it. Unwrapped to `owner: str`, the key is required as
//! declared, and `assert Dog.__required_keys__ == {"name"}` fails for the script's own
//! declaration. Where a class body annotates a field with a qualifier (`NotRequired`,
//! `Required`, `ReadOnly`, `ClassVar`, `InitVar`, `Final`, `Annotated`; not a container's
//! type such as `List[str]`, which no class reads), a candidate declares as many fields with
//! it (by its last name: `typing.Annotated` counts as `Annotated`).

use std::collections::BTreeMap;

use crate::python::{Expr, Script, Stmt, all_bodies, exprs_of};

/// The typing forms that qualify a field, which the class reads from its annotations.
const QUALIFIERS: &[&str] = &[
    "NotRequired",
    "Required",
    "ReadOnly",
    "ClassVar",
    "InitVar",
    "Final",
    "Annotated",
];

/// How many class fields of `script` are declared with each qualifier.
pub fn forms(script: &Script) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for stmt in all_bodies(script.body()).into_iter().flatten() {
        let Stmt::ClassDef(class) = stmt else {
            continue;
        };
        for field in &class.body {
            let Stmt::AnnAssign(a) = field else { continue };
            for expr in exprs_of(&a.annotation) {
                if let Expr::Subscript(s) = expr
                    && let Some(name) = last_name(&s.value)
                    && QUALIFIERS.contains(&name)
                {
                    *out.entry(name.to_string()).or_default() += 1;
                }
            }
        }
    }
    out
}

/// Whether `candidate` declares at least as many fields with each of `forms`.
pub fn keeps(forms: &BTreeMap<String, usize>, candidate: &Script) -> bool {
    if forms.is_empty() {
        return true;
    }
    let now = self::forms(candidate);
    forms
        .iter()
        .all(|(form, n)| now.get(form).is_some_and(|m| m >= n))
}

/// `NotRequired` of `NotRequired` or `typing.NotRequired`.
fn last_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    #[test]
    fn a_field_keeps_its_form() {
        let text = "from typing import NotRequired, TypedDict\nclass Dog(TypedDict):\n    name: str\n    owner: NotRequired[str]\nassert Dog.__required_keys__ == {'name'}\n";
        let f = forms(&parse(text));
        assert_eq!(f, BTreeMap::from([("NotRequired".to_string(), 1)]));
        assert!(!keeps(&f, &parse(&text.replace("NotRequired[str]", "str"))));
        let dotted = text.replace("NotRequired[str]", "typing.NotRequired[int]");
        assert!(keeps(&f, &parse(&dotted)));
    }

    #[test]
    fn each_class_declaring_a_form_counts() {
        let text = "from typing import Annotated\nclass A:\n    a: Annotated[str, X('A')]\nclass B:\n    b: Annotated[str, Y('A')]\n";
        let f = forms(&parse(text));
        assert_eq!(f.get("Annotated"), Some(&2));
        let one = "from typing import Annotated\nclass B:\n    b: Annotated[str, Y('A')]\n";
        assert!(!keeps(&f, &parse(one)));
        assert!(
            forms(&parse(
                "def f(x: list[int]) -> None:\n    y: dict[str, int] = {}\n"
            ))
            .is_empty()
        );
    }
}
