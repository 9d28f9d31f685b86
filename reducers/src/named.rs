//! A keyword the failure's message names stays.
//!
//! `np.frompyfunc(operator.add, nin=2, nout=1, identity=0).reduce(x, where=mask)` raises
//! "… does not have an identity, so to use a where mask one has to specify 'initial'": the
//! report is that `identity=0` was given and ignored. Without it the error is by design, a
//! user's mistake. Where the message names, as a word, a keyword that the failing line passes
//! to a library's call, or the library calls that made the values it reads (through names
//! bound once), a candidate still passes that keyword to some call (its value may shrink). A
//! keyword of another line that a word of the message happens to spell (`default=` beside
//! "non-default argument"), or of a class of the script's own (`Config(seq=1)` beside
//! "Constraints violated (seq)"), is free.

use std::collections::BTreeSet;

use crate::passes::helpers::calls_library;
use crate::producers::{Reach, statement_at};
use crate::python::{Expr, Script, all_exprs, defined_names, exprs_of};

/// The keywords that the statement of `script` starting with `line` passes to calls, or the
/// calls that made what it reads, and that `message` names as words.
pub fn named(script: &Script, message: &str, line: &str) -> BTreeSet<String> {
    let words: BTreeSet<String> = message
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let Some(stmt) = statement_at(script, line) else {
        return BTreeSet::new();
    };
    let defined = defined_names(script.body());
    Reach::of(script)
        .read_exprs(stmt)
        .into_iter()
        .flat_map(exprs_of)
        .filter(|e| match e {
            Expr::Call(call) => calls_library(call, &defined),
            _ => false,
        })
        .flat_map(keywords_of)
        .filter(|k| words.contains(&k.to_lowercase()))
        .collect()
}

/// Whether `candidate` still passes each of the `named` keywords to a call.
pub fn keeps(named: &BTreeSet<String>, candidate: &Script) -> bool {
    named.is_empty()
        || named.is_subset(
            &all_exprs(candidate.body())
                .into_iter()
                .flat_map(keywords_of)
                .collect(),
        )
}

/// The keywords `expr` passes, when it is a call.
fn keywords_of(expr: &Expr) -> Vec<String> {
    match expr {
        Expr::Call(call) => call
            .arguments
            .keywords
            .iter()
            .filter_map(|k| k.arg.as_ref().map(|a| a.id.to_string()))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn parse(text: &str) -> Script {
        Script::parse(text, PythonVersion::latest()).unwrap()
    }

    const MESSAGE: &str = "reduction operation 'add (vectorized)' does not have an identity, so to use a where mask one has to specify 'initial'";

    #[test]
    fn a_keyword_the_message_names_stays() {
        let original = parse(
            "import numpy as np\nimport operator\nparser.add_argument(default=1)\nf = np.frompyfunc(operator.add, nin=2, nout=1, identity=0)\nprint(f.reduce(np.arange(3), where=np.arange(3) > 0))\n",
        );
        let line = "print(f.reduce(np.arange(3), where=np.arange(3) > 0))";
        let kept = named(&original, MESSAGE, line);
        assert_eq!(
            kept,
            BTreeSet::from(["identity".to_string(), "where".to_string()])
        );
        let dropped = parse(
            "import numpy as np\nimport operator\nnp.frompyfunc(operator.add, nin=2, nout=1).reduce(np.arange(1), where=np.array([True]))\n",
        );
        assert!(!keeps(&kept, &dropped));
        let shrunk = parse(
            "import numpy as np\nimport operator\nnp.frompyfunc(operator.add, nin=2, nout=1, identity=1).reduce(np.arange(1), where=np.array([True]))\n",
        );
        assert!(keeps(&kept, &shrunk));
        // A keyword of another line is not the failing call's.
        assert!(named(&original, "non-default argument", line).is_empty());
        assert!(named(&original, MESSAGE, "print(x)").is_empty());
        let own = parse(
            "class Config:\n    pass\nexport(m, Config(seq=1), dynamic_shapes={'x': Dim('seq')})\n",
        );
        let line = "export(m, Config(seq=1), dynamic_shapes={'x': Dim('seq')})";
        assert!(named(&own, "Constraints violated (seq)!", line).is_empty());
    }
}
