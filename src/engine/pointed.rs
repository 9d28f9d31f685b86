//! The code a compiler's error points at in the script, and the checks that refine it.
//!
//! TorchScript reports a compile error by quoting the script's own line with the expression it
//! rejects marked (`~~~~ <--- HERE`). The same message raised at another expression is another
//! error; and where the script tested what that expression reads (`if s.value is None:`,
//! `assert self.attr is not None`, `isinstance(x, int)`), the test is the bug's subject (a
//! refinement the compiler does not honour): without it, rejecting the expression is the
//! compiler's right answer to a user's mistake. Both stay in every candidate.

use scrub_reducers::control::squeezed;

/// The expression the last `<--- HERE` marker of `stderr` points at, whitespace removed;
/// `None` without a marker.
pub fn pointed(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = (1..lines.len())
        .rev()
        .find(|&i| lines[i].contains("<--- HERE"))?;
    let (marker, source) = (lines[at], lines[at - 1]);
    let start = marker.find('~')?;
    let end = marker.rfind('~')? + 1;
    let code = source.get(start..end.min(source.len()))?;
    Some(squeezed(code)).filter(|c| !c.is_empty())
}

/// The tests in `text` that refine a name or attribute that `code` (a [`pointed`] expression)
/// reads: `X is None`, `X is not None`, `isinstance(X, …)`; whitespace removed, each once.
pub fn refinements(text: &str, code: &str) -> Vec<String> {
    let chains: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|c| {
            c.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        })
        .collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        for test in [" is not None", " is None"] {
            for (at, _) in line.match_indices(test) {
                let chain = chain_before(&line[..at]);
                if chains.contains(&chain) {
                    out.push(squeezed(&format!("{chain}{test}")));
                }
            }
        }
        for (at, _) in line.match_indices("isinstance(") {
            let rest = &line[at + "isinstance(".len()..];
            let chain = rest.split(',').next().unwrap_or("").trim();
            if chains.contains(&chain) {
                out.push(squeezed(&format!("isinstance({chain},")));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What `text` lost of `refined` (see [`refinements`]): the first it no longer holds.
pub fn lost<'a>(text: &str, refined: &'a [String]) -> Option<&'a str> {
    let text = squeezed(text);
    refined
        .iter()
        .find(|r| !text.contains(r.as_str()))
        .map(String::as_str)
}

/// The name or attribute chain that ends `text`.
fn chain_before(text: &str) -> &str {
    let start = text
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| i + 1);
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    const ERROR: &str = "RuntimeError: \nUnsupported operation: indexing tensor with unsupported index type 'Optional[int]':\n  File \"repro.py\", line 23\n            assert s.s is not None\n            return self.x[s.s]\n                   ~~~~~~~~~~~ <--- HERE\n";

    #[test]
    fn the_marked_expression_and_the_tests_of_what_it_reads() {
        assert_eq!(pointed(ERROR).as_deref(), Some("self.x[s.s]"));
        let text = "def forward(self):\n    s = self.mod()\n    if s.s is None:\n        return self.x[0]\n    assert s.s is not None\n    if isinstance(self.x, list): pass\n    if xs.s is None: pass\n    return self.x[s.s]\n";
        let refined = refinements(text, "self.x[s.s]");
        assert_eq!(refined, ["isinstance(self.x,", "s.sisNone", "s.sisnotNone"]);
        assert_eq!(lost(text, &refined), None);
        let unrefined = "def forward(self):\n    s = self.mod()\n    return self.x[s.s]\n";
        assert_eq!(lost(unrefined, &refined), Some("isinstance(self.x,"));
        assert_eq!(pointed("RuntimeError: boom\n"), None);
    }
}
