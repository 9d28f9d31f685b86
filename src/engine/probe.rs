//! Where a failing script fails: the frames of the script on its traceback, with the values
//! that each frame's line read (see `probe.py`, which runs the script and reports them).

use std::borrow::Cow;

use scrub_reducers::{Computed, Crash, Frame};

use crate::engine::process::Outcome;

/// The probe, run as `python -c SOURCE` or loaded by a warm worker.
pub const SOURCE: &str = include_str!("probe.py");
const MARK: &str = "scrub-probe: ";
const VALUES: &str = "scrub-probe-values: ";

/// The probe to run: with `checked`, for a reduction whose candidates a control judges,
/// it rebuilds the values an AssertionError's check read too (see `CHECKED` in `probe.py`).
pub fn source(checked: bool) -> Cow<'static, str> {
    const UNCHECKED: &str = "\nCHECKED = False\n";
    debug_assert!(SOURCE.contains(UNCHECKED));
    match checked {
        true => SOURCE.replacen(UNCHECKED, "\nCHECKED = True\n", 1).into(),
        false => SOURCE.into(),
    }
}

/// The cache key of the run of `text` under the probe `source`: no script holds a NUL byte,
/// so none has it. It names the probe too, whose report changes with it.
pub fn cache_text(source: &str, text: &str) -> String {
    format!("\0probe\0{source}\0{text}")
}

/// Where the probed script failed; `None` when it did not end in an exception raised through
/// the script's own code.
pub fn crash(outcome: &Outcome) -> Option<Crash> {
    let stderr = &outcome.stderr;
    let report = stderr.lines().rev().find_map(|l| l.strip_prefix(MARK))?;
    let frames: Vec<Frame> = serde_json::from_str(report).ok()?;
    let computed: Vec<Computed> = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(VALUES))
        .and_then(|values| serde_json::from_str(values).ok())
        .unwrap_or_default();
    (!frames.is_empty()).then_some(Crash { frames, computed })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::workers::Workers;
    use std::time::Duration;

    /// The crash that the probe reports for `text`, the same from a cold and a warm worker.
    fn probe(text: &str) -> Option<Crash> {
        let mut workers = Workers::new("python3".into(), Duration::from_secs(30), 1, Vec::new());
        let cold = crash(&workers.probe(text, SOURCE).expect("python3 runs"));
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join("repro.py");
        std::fs::write(&original, text).unwrap();
        workers.warm = Some(original);
        let warm = crash(&workers.probe(text, SOURCE).expect("the warm worker runs"));
        assert_eq!(cold, warm, "cold and warm probes disagree");
        cold
    }

    #[test]
    fn reports_the_frames_innermost_first_with_literal_values() {
        let text = "class S:\n    def __init__(self):\n        self.raw = {'b': 1}\n    def get(self, name):\n        return self.raw[name]\n\ndef main():\n    S().get('a')\n\nmain()\n";
        let crash = probe(text).expect("a KeyError is reported");
        let lines: Vec<usize> = crash.frames.iter().map(|f| f.line).collect();
        assert_eq!(lines, [5, 8, 10]);
        let inner = &crash.frames[0];
        assert!(inner.in_function);
        assert_eq!(inner.locals, ["name", "self"]);
        assert_eq!(
            inner.values,
            [
                ("name".to_string(), "'a'".to_string()),
                ("self.raw".to_string(), "{'b': 1}".to_string())
            ]
        );
        assert!(!crash.frames[2].in_function);
        assert_eq!(
            crash.frames[2].values,
            [("main".to_string(), "main".to_string())]
        );
    }

    #[test]
    fn a_value_whose_repr_rebuilds_it_from_the_scripts_classes_is_reported() {
        let text = "from dataclasses import dataclass\nfrom decimal import Decimal\n\n@dataclass\nclass Line:\n    qty: int\n    price: Decimal\n\nclass Opaque:\n    pass\n\ndef check(line, other):\n    assert line.qty == 2 or other is None, 'mismatch'\n\ncheck(Line(3, Decimal('1.5')), Opaque())\n";
        let crash = probe(text).expect("reported");
        let inner = &crash.frames[0];
        assert!(
            inner.values.contains(&(
                "line".to_string(),
                "Line(qty=3, price=Decimal('1.5'))".to_string()
            )),
            "{inner:?}"
        );
        assert!(!inner.values.iter().any(|(k, _)| k == "other"), "{inner:?}");
    }

    #[test]
    fn a_value_that_is_no_literal_is_left_out() {
        let crash = probe("def f(x):\n    return x.missing\n\nf(object())\n").expect("reported");
        assert!(crash.frames[0].values.is_empty(), "{:?}", crash.frames[0]);
    }

    #[test]
    fn a_script_the_probe_cannot_instrument_runs_as_it_is() {
        // A negative literal may not be wrapped in a pattern: the script runs unwrapped.
        let text = "match -1:\n    case -1:\n        x = {}\nx['k']\n";
        let crash = probe(text).expect("reported");
        assert_eq!(crash.frames[0].line, 4);
        assert!(crash.computed.is_empty());
    }

    #[test]
    fn a_script_that_passes_or_exits_reports_nothing() {
        assert_eq!(probe("x = 1\n"), None);
        assert_eq!(probe("import sys\nsys.exit(3)\n"), None);
    }

    #[test]
    fn a_handler_name_unbound_by_the_raise_gets_its_exception_back() {
        let text = "try:\n    {}['k']\nexcept KeyError as exc:\n    raise ValueError(exc.args[0]) from exc\n";
        let crash = probe(text).expect("reported");
        assert!(
            crash.frames[0]
                .values
                .contains(&("exc.args[0]".to_string(), "'k'".to_string())),
            "{:?}",
            crash.frames[0]
        );
    }
}
