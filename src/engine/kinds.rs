//! What the library receives keeps its kind: the calls a failing script makes into libraries
//! on its failing path, with the kind of each value it hands them (see `kinds.py`, which runs
//! the script and reports them), and the rule a candidate's calls must keep.
//!
//! The same message raised through a call that is no longer a legal use of the library is a
//! user's mistake, not the bug: `torch.export` itself where a `Dim` stood, `object()` where a
//! config stood, a tensor that no longer requires grad, a call that lost a positional
//! argument. The rule is over runtime types, for any library.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;

use crate::engine::process::Outcome;
use crate::engine::verdict::Signature;

/// The runner, run as `python -c SOURCE` or loaded by a warm worker as its probe.
pub const SOURCE: &str = include_str!("kinds.py");
const MARK: &str = "scrub-kinds: ";
const LINES_MARK: &str = "scrub-lines: ";
const SIDES_MARK: &str = "scrub-sides: ";
const DEPTH_MARK: &str = "scrub-depth: ";
/// Where the report starts: the runner writes it on a line of its own after the traceback.
const REPORT: &str = "\nscrub-kinds: ";
/// How `kinds.py` names the read of an attribute the script set, after `getattr(…, 'NAME')`.
const SET_ATTRIBUTE: &str = " of a value the script set it on";

/// The runner for a failure with signature `sig`: with `lines`, it also reports the lines of
/// the script that ran (see [`lines`]); for an `AttributeError`, it records the attributes the
/// script sets, so that the failure's read of one stays a read of what the script set (the
/// rewrite of every attribute store is left out elsewhere: a compiled function would trace
/// it).
pub fn runner(sig: &Signature, lines: bool) -> &'static str {
    variant(lines, records_stores(sig), records_sides(sig))
}

/// The runner's source with `LINES`, `STORES` and `SIDES` set as given.
fn variant(lines: bool, stores: bool, sides: bool) -> &'static str {
    static VARIANTS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        (0..8)
            .map(|i| {
                let mut source = SOURCE.to_string();
                for (bit, flag) in [(1, "LINES"), (2, "STORES"), (4, "SIDES")] {
                    if i & bit != 0 {
                        source = source.replacen(
                            &format!("{flag} = False"),
                            &format!("{flag} = True"),
                            1,
                        );
                    }
                }
                source
            })
            .collect()
    });
    &VARIANTS[usize::from(lines) + 2 * usize::from(stores) + 4 * usize::from(sides)]
}

/// Whether the runner for `sig` records the sides of the checks the script makes (an
/// `AssertionError`), to say how far apart the failing one's are (see [`Apart`]).
fn records_sides(sig: &Signature) -> bool {
    matches!(sig, Signature::Exception { class, .. } if class.ends_with("AssertionError"))
}

/// Whether the runner for `sig` records the attributes the script sets (an `AttributeError`):
/// it then rewrites the script and follows every return, which a plain run does not.
fn records_stores(sig: &Signature) -> bool {
    matches!(sig, Signature::Exception { class, .. } if class.ends_with("AttributeError"))
}

/// The runner a warm candidate can run under from the start, its report read only when it
/// fails the same way: the one for `sig` that neither records the lines that run nor the
/// attributes set, so that a warm worker runs the script as it runs a plain candidate
/// (zygote.py's `execute`); for an `AssertionError`, with the sides of its checks recorded,
/// which computes each side once, as the script does. `None` for the others.
pub fn plain_runner(sig: &Signature) -> Option<&'static str> {
    (!records_stores(sig)).then(|| runner(sig, false))
}

/// The runner that [`plain_runner`] gives for every signature but an `AssertionError`: what a
/// warm run of the original runs under before its signature is known.
pub fn first_runner() -> &'static str {
    variant(false, false, false)
}

/// How far apart the two sides of a failed check were, as `kinds.py` reports them: the shape
/// of each, and the largest difference between them (`nan`, `inf`, `0.0`, `1.5e-07`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Apart {
    pub shapes: [Option<Vec<usize>>; 2],
    pub diff: Option<String>,
    /// Whether both sides were integers (or arrays or tensors of them).
    #[serde(default)]
    pub exact: bool,
}

/// How many orders of magnitude a check's difference may move from the original's: shrinking
/// sizes and values moves it by one or two; another bug, or none, by many more.
const ORDERS: f64 = 4.0;

/// The same for a check of integers, which no rounding of the inputs moves: a quantized add
/// off by one (155 for 154) does not become a saturated 255, nor a column off by the four
/// bytes of four accented letters (41 for 45) one off by forty; within a factor of about 3.
const EXACT_ORDERS: f64 = 0.5;

/// How far apart the sides of the failed check of the run in `outcome` were; `None` when it
/// reported none (not a check of a form the runner knows, or not an `AssertionError`).
pub fn apart(outcome: &Outcome) -> Option<Apart> {
    report(outcome, SIDES_MARK)
}

/// How deep a `RecursionError`'s traceback was, and the limit it ran under (see `kinds.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Depth {
    pub frames: usize,
    pub limit: usize,
}

impl Depth {
    /// Whether the recursion was cut short of its limit (under 90 % of it): a `@cache`
    /// wrapper's C limit at depth 500 under `setrecursionlimit(2000)`, not an endless
    /// recursion, which runs up to the limit.
    pub fn short_of_limit(&self) -> bool {
        self.frames * 10 < self.limit * 9
    }
}

/// The depth a run's `RecursionError` was raised at, from its report.
pub fn depth(outcome: &Outcome) -> Option<Depth> {
    report(outcome, DEPTH_MARK)
}

impl Apart {
    /// Why a candidate's check, `now`, no longer fails the way the original's did: it
    /// compares values of two shapes where the original compared two of one (`torch.equal`
    /// of `y[0]` and `y` is false by design), or its sides are apart by another kind of
    /// difference (none, NaN, infinite), or by a size four orders of magnitude away (a
    /// difference of 1e-7 where the original's was 4e8: the rounding of a step the bug had;
    /// 0.5 where it was 6e-8: inputs that were never meant to match).
    pub fn moved(&self, now: &Apart) -> Option<String> {
        if let ([Some(a), Some(b)], [Some(c), Some(d)]) = (&self.shapes, &now.shapes)
            && a == b
            && c != d
        {
            return Some(format!(
                "the check compares values of shapes {c:?} and {d:?} where the original compared two of one shape"
            ));
        }
        let (was, is) = (self.difference()?, now.difference()?);
        let class = |d: f64| match d {
            d if d.is_nan() => 0,
            d if d.is_infinite() => 1,
            0.0 => 2,
            _ => 3,
        };
        let by = |d: f64| match class(d) {
            0 => "NaN".to_string(),
            1 => "an infinite amount".to_string(),
            2 => "nothing".to_string(),
            _ => format!("{d:.3e}"),
        };
        let orders = if self.exact { EXACT_ORDERS } else { ORDERS };
        if class(was) != class(is) || (class(was) == 3 && (is.log10() - was.log10()).abs() > orders)
        {
            return Some(format!(
                "the check's sides differ by {} where the original's differed by {}",
                by(is),
                by(was)
            ));
        }
        None
    }

    /// The largest difference, as a number.
    fn difference(&self) -> Option<f64> {
        self.diff.as_deref()?.parse::<f64>().ok().map(f64::abs)
    }
}

/// `outcome` without the runner's report at the end of its stderr: what the run shows as a
/// plain run.
pub fn without_report(outcome: &Outcome) -> Outcome {
    let mut plain = outcome.clone();
    if let Some(at) = plain.stderr.rfind(REPORT) {
        plain.stderr.truncate(at);
    }
    plain
}

/// The runner's report after `mark` on the last line that has one, read as JSON.
fn report<T: serde::de::DeserializeOwned>(outcome: &Outcome, mark: &str) -> Option<T> {
    let report = outcome
        .stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix(mark))?;
    serde_json::from_str(report).ok()
}

/// The cache key of the run of `text` under the runner `source`: it names the runner, whose
/// report changes with it.
pub fn cache_text(source: &str, text: &str) -> String {
    format!("\0kinds\0{source}\0{text}")
}

/// The lines of the script that ran, as the [`traced`] runner reported them; `None` when it
/// reported none (the run did not end in an exception).
pub fn lines(outcome: &Outcome) -> Option<std::collections::HashSet<usize>> {
    report(outcome, LINES_MARK)
}

/// The calls of `text`'s own code (see `scrub_reducers::control::calls_run`) on the lines its
/// run under the [`traced`] runner reported; empty when it reported none.
pub fn calls_run(
    outcome: &Outcome,
    text: &str,
    version: scrub_reducers::PythonVersion,
) -> std::collections::HashSet<String> {
    lines(outcome)
        .zip(scrub_reducers::Script::parse(text, version))
        .map(|(lines, script)| scrub_reducers::control::calls_run(&script, &lines))
        .unwrap_or_default()
}

/// One call from the script into a library on the failing path.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Call {
    /// `torch/export/__init__.py:export`, or `torch.nn.functional.linear` for a builtin.
    pub at: String,
    /// The kind of each argument, by parameter name (or position, for a builtin).
    pub args: BTreeMap<String, Kind>,
    /// For the failing call (the innermost), the positional arguments the script wrote.
    pub positional: Option<usize>,
    /// For the failing call, where the script wrote it (Python 3.11+).
    #[serde(default)]
    pub place: Option<scrub_reducers::producers::Place>,
    /// For the failing call, its array and tensor arguments grouped by shape.
    #[serde(default)]
    pub same_shape: Vec<Vec<String>>,
}

/// Why the failing call no longer gets its arguments of one shape: `torch.add(a, b, out=out)`
/// of three 2×2 tensors raised an internal assert; with `out` of shape (0, 2) beside two
/// (1, 2), the same assert comes from a mismatch the library refuses elsewhere.
fn shapes_apart(before: &Call, now: &Call) -> Option<String> {
    let shaped = |n: &String| now.same_shape.iter().any(|g| g.contains(n));
    before.same_shape.iter().find_map(|group| {
        let present: Vec<&String> = group.iter().filter(|n| shaped(n)).collect();
        let together = now
            .same_shape
            .iter()
            .any(|g| present.iter().all(|n| g.contains(n)));
        (present.len() > 1 && !together).then(|| {
            let names: Vec<&str> = present.iter().map(|n| n.as_str()).collect();
            format!(
                "{} received {} of different shapes where the original's shared one",
                now.at,
                names.join(", ")
            )
        })
    })
}

/// Where the failing call of a run's report is written: the innermost call's place.
pub fn failing_place(calls: &[Call]) -> Option<scrub_reducers::producers::Place> {
    calls.iter().rev().find_map(|c| c.place)
}

/// A value's kind (see `kinds.py`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Kind {
    /// `torch.Tensor`, `builtins.int`, `script:builtins.object` (an instance of a class the
    /// script defines, by its first base the script does not define), `module`, `callable`,
    /// `type`, `None`.
    #[serde(rename = "c")]
    pub class: String,
    /// The classes above it that the script does not define.
    #[serde(default)]
    pub mro: Vec<String>,
    /// A tensor's or an array's dtype family, grad, leaf, layout.
    #[serde(rename = "p", default)]
    pub props: Vec<String>,
    /// A container's items, each kind once.
    #[serde(default)]
    pub items: Option<Vec<Kind>>,
    /// For the failing call, a number it received that its message quotes (`base 10`).
    #[serde(rename = "v", default)]
    pub value: Option<String>,
    /// For an `nn.Sequential`, the kinds of its layers, each kind once.
    #[serde(default)]
    pub layers: Vec<Kind>,
}

/// The calls into libraries that the run in `outcome` (under [`SOURCE`]) reported; `None`
/// when it reported none (it did not end in an exception).
pub fn calls(outcome: &Outcome) -> Option<Vec<Call>> {
    report(outcome, MARK)
}

/// What changed between the original's calls and a candidate's: the first call into the same
/// library function that received a value of another kind, or whose failing call lost or
/// gained a positional argument; `None` when every call they share keeps its kinds. A call
/// only one of them makes, or either makes more than once, is not compared: reductions inline
/// and move calls.
pub fn changed(original: &[Call], candidate: &[Call]) -> Option<String> {
    // The read of an attribute the script set (`getattr(…, 'baz') of a value the script set
    // it on`, see `missed` in kinds.py) is no call a reduction may move: without it, the
    // attribute is missed on a value nothing set it on.
    if let Some(set) = original.iter().find(|c| c.at.ends_with(SET_ATTRIBUTE))
        && !candidate.iter().any(|c| c.at == set.at)
    {
        let attribute = set.at.trim_end_matches(SET_ATTRIBUTE);
        return Some(format!(
            "{attribute} no longer misses an attribute the script set on that value, or on one a library made it from: reading an attribute never set is a user's mistake"
        ));
    }
    // A function called more than once on the path (a module's `__call__` for each layer)
    // cannot be paired call for call once reductions inline layers: only functions called
    // once on both paths are compared.
    if let Some(change) = entered_elsewhere(original, candidate) {
        return Some(change);
    }
    let once = |calls: &[Call], at: &str| calls.iter().filter(|c| c.at == at).count() == 1;
    for call in candidate {
        if !once(candidate, &call.at) || !once(original, &call.at) {
            continue;
        }
        let Some(before) = original.iter().find(|c| c.at == call.at) else {
            continue;
        };
        if let (Some(was), Some(now)) = (before.positional, call.positional)
            && was != now
        {
            return Some(format!(
                "{} called with {now} positional argument{} where the original wrote {was}",
                call.at,
                if now == 1 { "" } else { "s" },
            ));
        }
        // The failing call of a builtin (its arguments read where the script wrote them) keeps
        // the keywords it was given: `np.array(objs, dtype=object)` is another call without
        // its dtype, as it is with one positional argument less. (A function with a Python
        // frame, `FILE:FUNCTION`, takes its default for a keyword left out.)
        let builtin = |c: &Call| !c.at.contains(".py:");
        if before.positional.is_some() && call.positional.is_some() && builtin(call) {
            let lost = before.args.iter().find(|(name, kind)| {
                !name.chars().all(|c| c.is_ascii_digit())
                    && kind.class != "None"
                    && !call.args.contains_key(*name)
            });
            if let Some((name, kind)) = lost {
                return Some(format!(
                    "{} called without {name} where the original passed {kind}",
                    call.at
                ));
            }
        }
        if let Some(apart) = shapes_apart(before, call) {
            return Some(apart);
        }
        for (name, kind) in &call.args {
            let Some(was) = before.args.get(name) else {
                continue;
            };
            if !was.admits(kind) {
                return Some(format!(
                    "{} received {name} = {kind} where the original passed {was}",
                    call.at
                ));
            }
        }
    }
    None
}

/// A library method the script calls on the failing path by the same name as the original's
/// (`cdf`), on a value the original's did not admit: `MixtureSameFamily.cdf`, whose component
/// lacks a cdf, is another call than `Categorical.cdf` or `Independent.cdf`, which the mixture
/// delegates to.
fn entered_elsewhere(original: &[Call], candidate: &[Call]) -> Option<String> {
    const ENTERED: &str = "entered ";
    let method = |c: &Call| {
        c.at.strip_prefix(ENTERED)
            .and_then(|at| at.rsplit(['.', ':']).next())
            .map(str::to_string)
    };
    for call in candidate {
        let Some(name) = method(call) else { continue };
        let before: Vec<&Call> = original
            .iter()
            .filter(|c| method(c).as_deref() == Some(name.as_str()))
            .collect();
        let (Some(now), [before]) = (call.args.get("self"), before.as_slice()) else {
            continue;
        };
        if let Some(was) = before.args.get("self")
            && !was.admits(now)
        {
            let at = call.at.trim_start_matches(ENTERED);
            return Some(format!(
                "{at} called on {now} where the original called {} on {was}",
                before.at.trim_start_matches(ENTERED)
            ));
        }
    }
    None
}

impl Kind {
    /// Whether a value of kind `other` may stand where one of this kind stood: `None` (a
    /// library's default) anywhere; the same class, or a subclass; for an instance of a class
    /// the script defines, an instance of its base or a library subclass of it (a wrapper
    /// module inlined into the layer it wraps, a `Thread` subclass that adds nothing to the
    /// bug), unless that base is `object` (`object()` where a config stood); the same tensor
    /// properties; the same number where the failing call's message quoted it; a
    /// container's items each admitted by one of the original's; and where an `nn.Sequential`
    /// stood, what one of its layers admits (the layer it wrapped, once the others are gone).
    pub fn admits(&self, other: &Kind) -> bool {
        if self.class == "None" || other.class == "None" {
            return true;
        }
        if self.layers.iter().any(|layer| layer.admits(other)) {
            return true;
        }
        if self.value.is_some() && self.value != other.value {
            return false;
        }
        let class = self.class == other.class
            || match self.class.strip_prefix("script:") {
                Some(base) => {
                    base != "builtins.object"
                        && (other.class == base || other.mro.iter().any(|c| c == base))
                }
                None => other.mro.contains(&self.class),
            };
        if !class {
            return false;
        }
        let mut props = (self.props.clone(), other.props.clone());
        props.0.sort();
        props.1.sort();
        if props.0 != props.1 {
            return false;
        }
        match (&self.items, &other.items) {
            (Some(was), Some(now)) if !was.is_empty() => {
                now.iter().all(|n| was.iter().any(|w| w.admits(n)))
            }
            _ => true,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = match self.class.strip_prefix("script:") {
            Some(base) => format!("an instance of the script's subclass of {base}"),
            None => self.class.clone(),
        };
        write!(f, "{class}")?;
        if let Some(value) = &self.value {
            write!(f, " {value}")?;
        }
        if !self.props.is_empty() {
            write!(f, " ({})", self.props.join(", "))?;
        }
        if let Some(items) = self.items.as_ref().filter(|i| !i.is_empty()) {
            let items: Vec<String> = items.iter().map(Kind::to_string).collect();
            write!(f, " of {}", items.join(" | "))?;
        }
        Ok(())
    }
}

impl Call {
    /// `torch/autograd/__init__.py:grad(outputs: …, inputs: …), 2 positional`.
    pub fn describe(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|(n, k)| format!("{n}: {k}")).collect();
        let positional = self
            .positional
            .map(|p| format!(", {p} positional"))
            .unwrap_or_default();
        format!("{}({}){positional}", self.at, args.join(", "))
    }
}

/// One line for the run log: the calls the original makes into libraries on its failing
/// path, and the kinds they receive.
pub fn describe(calls: &[Call]) -> String {
    calls
        .iter()
        .map(Call::describe)
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::verdict::Verdict;
    use crate::engine::workers::Workers;
    use std::time::Duration;

    #[test]
    fn a_warm_run_under_the_runner_is_judged_as_the_plain_run_it_is() {
        // Warm, on one worker: the same stderr as a plain run once the report is cut off, and
        // the report read from the same run.
        let dir = tempfile::tempdir().unwrap();
        let original = dir.path().join("repro.py");
        let text = "import json\nprint('out')\njson.loads('{')\n";
        std::fs::write(&original, text).unwrap();
        let mut workers = Workers::new("python3".into(), Duration::from_secs(30), 1, Vec::new());
        workers.warm = Some(original);
        let sig = Signature::parse("JSONDecodeError").unwrap();
        let runner = plain_runner(&sig).expect("a plain runner for an exception of a library");
        let plain = workers.run_all(&[text]).remove(0).unwrap();
        let full = workers.probe(text, runner).unwrap();
        // Each run has a directory of its own.
        let place = |stderr: &str| {
            let lines = stderr.lines();
            lines
                .map(|l| match l.contains("/work/repro.py") {
                    true => "the script's line",
                    false => l,
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(place(&without_report(&full).stderr), place(&plain.stderr));
        assert!(full.stderr.ends_with("]\n") && plain.stderr.ends_with(")\n"));
        assert_eq!((full.stdout.as_str(), full.status), ("out\n", plain.status));
        let calls = calls(&full).unwrap();
        assert!(calls[0].at.contains("loads"), "{calls:?}");
        // An `AttributeError` has the runner that rewrites the script: not a plain run.
        assert!(plain_runner(&Signature::parse("AttributeError").unwrap()).is_none());
    }

    /// The calls `text` makes into libraries on its failing path, as a cold run reports them.
    fn calls_of(text: &str) -> Vec<Call> {
        let workers = Workers::new("python3".into(), Duration::from_secs(30), 1, Vec::new());
        let sig = Signature::parse("AttributeError").unwrap();
        let outcome = workers
            .probe(text, runner(&sig, false))
            .expect("python3 runs");
        calls(&outcome).unwrap_or_else(|| panic!("no report:\n{}", outcome.stderr))
    }

    const CONFIG: &str = "import logging.config\nclass Config:\n    version = 1\n";

    #[test]
    fn a_recursion_error_says_how_deep_it_was() {
        let sig = Signature::parse("RecursionError").unwrap();
        let workers = Workers::new("python3".into(), Duration::from_secs(30), 1, Vec::new());
        let depth_of = |text: &str| {
            let outcome = workers
                .probe(text, runner(&sig, false))
                .expect("python3 runs");
            depth(&outcome).unwrap_or_else(|| panic!("no depth:\n{}", outcome.stderr))
        };
        let endless = depth_of("def f(n):\n    return f(n + 1)\nf(0)\n");
        assert!(!endless.short_of_limit(), "{endless:?}");
        let early = depth_of(
            "def f(n):\n    if n == 3:\n        raise RecursionError\n    return f(n + 1)\nf(0)\n",
        );
        assert!(early.short_of_limit(), "{early:?}");
    }

    #[test]
    fn the_failing_calls_arguments_of_one_shape_keep_one_shape() {
        let shaped = "import operator\nclass A:\n    def __init__(self, shape):\n        self.shape = shape\n";
        let add = |a: &str, b: &str| format!("{shaped}a, b = A({a}), A({b})\noperator.add(a, b)\n");
        let original = calls_of(&add("(2, 2)", "(2, 2)"));
        assert_eq!(original.last().unwrap().same_shape, [["0", "1"]]);
        let apart = calls_of(&add("(2, 2)", "(0, 2)"));
        let change = changed(&original, &apart).unwrap_or_default();
        assert!(change.contains("different shapes"), "{change}");
        let shrunk = calls_of(&add("(1,)", "(1,)"));
        assert_eq!(changed(&original, &shrunk), None);
    }

    #[test]
    fn an_object_where_an_instance_of_the_scripts_class_stood_changed_kind() {
        let original = calls_of(&format!(
            "{CONFIG}def load(c):\n    logging.config.dictConfig(c)\nload(Config())\n"
        ));
        assert_eq!(original[0].at, "logging/config.py:dictConfig");
        // After it, the method that raised and what it ran on.
        assert!(
            original[1..].iter().all(|c| c.at.starts_with("raised in ")),
            "{original:?}"
        );
        let mistake = calls_of(&format!("{CONFIG}logging.config.dictConfig(object())\n"));
        assert_eq!(
            changed(&original, &mistake).as_deref(),
            Some(
                "logging/config.py:dictConfig received config = builtins.object where the original passed an instance of the script's subclass of builtins.object"
            )
        );
        let same = calls_of(&format!("{CONFIG}logging.config.dictConfig(Config())\n"));
        assert_eq!(changed(&original, &same), None);
    }

    #[test]
    fn a_failed_check_says_how_far_apart_its_sides_were() {
        let sig = Signature::parse("AssertionError").unwrap();
        let workers = Workers::new("python3".into(), Duration::from_secs(30), 1, Vec::new());
        let apart_of = |text: &str| {
            let outcome = workers
                .probe(text, runner(&sig, false))
                .expect("python3 runs");
            assert!(
                sig.judge(&without_report(&outcome)) == Verdict::Same,
                "{}",
                outcome.stderr
            );
            apart(&outcome)
        };
        let near = apart_of("def f(x):\n    return x * 3.0000001\nassert f(2.0) == 6.0\n").unwrap();
        assert_eq!(near.shapes, [None, None]);
        let far = apart_of("y = 0.5\nassert y + 1 == 6.0, 'differs'\n").unwrap();
        assert_eq!(
            near.moved(&far).as_deref(),
            Some("the check's sides differ by 4.500e0 where the original's differed by 2.000e-7")
        );
        assert_eq!(near.moved(&near), None);
        let nan = apart_of("x = float('nan')\nassert (x == 1.0)\n").unwrap();
        assert_eq!(nan.diff.as_deref(), Some("nan"));
        assert!(near.moved(&nan).is_some_and(|why| why.contains("NaN")));
        // A check of each pair reports the first pair that failed.
        let pairs = "assert all(a == b for a, b in [(1, 1), (2.0, 2.5), (3, 9)])\n";
        assert_eq!(apart_of(pairs).unwrap().diff.as_deref(), Some("0.5"));
        // A check of another form reports nothing; nor does an assert the script never made.
        assert_eq!(apart_of("assert not [1]\n"), None);
        let shaped = |a: &[usize], b: &[usize]| Apart {
            shapes: [Some(a.to_vec()), Some(b.to_vec())],
            diff: Some("0.25".into()),
            exact: false,
        };
        // Integers are exact: off by one stays within an order of magnitude.
        let off_by_one = apart_of("assert 155 == 154\n").unwrap();
        assert!(off_by_one.exact);
        let saturated = apart_of("assert 255 == 154\n").unwrap();
        assert!(off_by_one.moved(&saturated).is_some());
        assert_eq!(
            off_by_one.moved(&apart_of("assert 3 == 1\n").unwrap()),
            None
        );
        // Tuples of integers, item by item.
        let column = apart_of("assert (3, 41) == (3, 45)\n").unwrap();
        assert_eq!((column.exact, column.diff.as_deref()), (true, Some("4.0")));
        let figure_shrunk = apart_of("assert (3, 41) == (3, 1)\n").unwrap();
        assert!(column.moved(&figure_shrunk).is_some());
        assert!(!near.exact);
        // A tuple's length is its shape: `(3, 41) == (3,)` is false by design.
        let pair = apart_of("assert (3, 41) == (3, 45)\n").unwrap();
        let short = apart_of("assert (3, 41) == (3,)\n").unwrap();
        assert!(pair.moved(&short).is_some_and(|why| why.contains("shapes")));
        let moved = shaped(&[16], &[16]).moved(&shaped(&[1, 1], &[1, 1, 1]));
        assert!(moved.is_some_and(|why| why.contains("shapes")));
        assert_eq!(shaped(&[16], &[16]).moved(&shaped(&[2], &[2])), None);
    }

    #[test]
    fn the_failing_call_says_where_the_script_wrote_it() {
        let calls = calls_of("import ast\nast.parse(ast.unparse(ast.parse(\"'\")))\n");
        assert_eq!(failing_place(&calls), Some([2, 22, 2, 36]));
        assert!(calls.iter().filter(|c| c.place.is_some()).count() == 1);
    }

    #[test]
    fn a_library_method_that_raised_says_what_it_ran_on() {
        let calls = calls_of("import logging\nlogging.Handler().emit(None)\n");
        let raised = calls.last().unwrap();
        assert_eq!(raised.at, "raised in logging/__init__.py:Handler.emit");
        assert_eq!(raised.args["self"].class, "logging.Handler");
        // The same method raising on another kind of value.
        let other = calls_of(
            "import logging\nemit = logging.Handler.emit.__get__(logging.Formatter())\nemit(None)\n",
        );
        let change = changed(&calls, &other).unwrap_or_default();
        assert!(
            change.contains("Handler.emit")
                && change.contains("logging.Formatter where the original"),
            "{change}"
        );
        let same = calls_of("import logging\nh = logging.Handler()\nh.emit(None)\n");
        assert_eq!(changed(&calls, &same), None);
    }

    #[test]
    fn a_method_the_script_calls_by_the_same_name_on_another_value_is_another_call() {
        // `Logger.handle` → `Handler.handle` → `emit`, which raises: the script's `handle`.
        let logged = "import logging\nlog = logging.getLogger('x')\nlog.propagate = False\nlog.addHandler(logging.Handler())\nlog.handle(logging.makeLogRecord({}))\n";
        let original = calls_of(logged);
        assert!(
            original
                .iter()
                .any(|c| c.at == "entered logging/__init__.py:Logger.handle"),
            "{original:?}"
        );
        let handler =
            calls_of("import logging\nlogging.Handler().handle(logging.makeLogRecord({}))\n");
        let change = changed(&original, &handler).unwrap_or_default();
        assert!(
            change.starts_with("logging/__init__.py:Handler.handle called on logging.Handler"),
            "{change}"
        );
        assert_eq!(changed(&original, &calls_of(logged)), None);
    }

    const POINT: &str = "import copy\nclass Point:\n    def __init__(self, x):\n        self.x = x\n    def __getstate__(self):\n        return {'x': self.x}\n";

    #[test]
    fn an_attribute_the_script_set_and_a_copy_lost_stays_the_attribute_it_misses() {
        let original = calls_of(&format!(
            "{POINT}p = Point(1)\np.label = 'a'\nq = copy.copy(p)\nprint(q.label)\n"
        ));
        let set = "getattr(…, 'label') of a value the script set it on";
        assert!(original.iter().any(|c| c.at == set), "{original:?}");
        let copied = calls_of(&format!(
            "{POINT}p = Point(1)\nsetattr(p, 'label', 'a')\ncopy.copy(p).label\n"
        ));
        assert_eq!(changed(&original, &copied), None);
        for mistake in [
            "p = Point(1)\np.label = 'a'\nPoint(1).label\n",
            "copy.label = 'a'\nPoint(1).label\n",
            "p = copy\np.label = 'a'\np.copy(Point(1)).label\n",
        ] {
            let calls = calls_of(&format!("{POINT}{mistake}"));
            let why = changed(&original, &calls);
            assert!(
                why.as_deref().is_some_and(|w| w.contains("user's mistake")),
                "{mistake}: {why:?}"
            );
        }
    }

    #[test]
    fn a_parameter_the_scripts_call_left_to_its_default_is_not_compared() {
        // By the failure, `deepcopy`'s `memo` holds the copies made so far: the library's
        // state, which differs with what was copied before, not a value the script passed.
        let bad = "import copy\nclass Bad:\n    def __deepcopy__(self, memo):\n        raise AttributeError('cannot copy')\n";
        let original = calls_of(&format!(
            "{bad}copy.deepcopy([[1, 2], {{'a': 1}}, Bad()])\n"
        ));
        let deepcopy = original
            .iter()
            .find(|c| c.at == "copy.py:deepcopy")
            .unwrap();
        let args: Vec<&String> = deepcopy.args.keys().collect();
        assert_eq!(args, ["x"], "{original:?}");
        let alone = calls_of(&format!("{bad}copy.deepcopy([Bad()])\n"));
        assert_eq!(changed(&original, &alone), None);
        let passed = calls_of(&format!("{bad}copy.deepcopy([Bad()], {{}})\n"));
        let args: Vec<&String> = passed[0].args.keys().collect();
        assert_eq!(args, ["memo", "x"], "{passed:?}");
    }

    #[test]
    fn a_failing_builtin_call_that_lost_a_positional_argument_changed() {
        let original = calls_of("import math\nx, y = 3.0, -1.0\nmath.log(x, y)\n");
        assert_eq!(original[0].at, "math.log");
        assert_eq!(original[0].positional, Some(2));
        let fewer = calls_of("import math\nmath.log(-1.0)\n");
        assert_eq!(
            changed(&original, &fewer).as_deref(),
            Some("math.log called with 1 positional argument where the original wrote 2")
        );
        let smaller = calls_of("import math\nmath.log(2.0, -1.0)\n");
        assert_eq!(changed(&original, &smaller), None);
    }

    #[test]
    fn a_failing_builtin_call_that_lost_a_keyword_changed() {
        let original = calls_of("s = 'a,b'\nint(s.split(',')[0], base=10)\n");
        assert_eq!(original[0].at, "builtins.int");
        let without = calls_of("int('a')\n");
        assert_eq!(
            changed(&original, &without).as_deref(),
            Some("builtins.int called without base where the original passed builtins.int 10")
        );
    }

    #[test]
    fn a_number_the_failing_call_received_and_its_message_quotes_stays() {
        let original = calls_of("digits, base = '1d2b', 10\nint(digits, base)\n");
        assert_eq!(original[0].at, "builtins.int");
        assert_eq!(original[0].args["1"].value.as_deref(), Some("10"));
        let other_base = calls_of("int('1d2b', 2)\n");
        assert_eq!(
            changed(&original, &other_base).as_deref(),
            Some(
                "builtins.int received 1 = builtins.int 2 where the original passed builtins.int 10"
            )
        );
        let shorter = calls_of("int('1d', 10)\n");
        assert_eq!(changed(&original, &shorter), None);
    }

    #[test]
    fn a_module_where_a_value_stood_and_a_shorter_list_of_the_same_kind() {
        let original =
            calls_of("import json\nd = {'a': [1, 2, 3]}\njson.dumps(d, indent=1.5, cls=1)\n");
        let shorter = calls_of("import json\njson.dumps({'a': [1]}, indent=1.5, cls=1)\n");
        assert_eq!(changed(&original, &shorter), None);
        let module = calls_of("import json\njson.dumps({'a': [json]}, indent=1.5, cls=1)\n");
        assert!(
            changed(&original, &module).is_some_and(|w| w.contains("obj = builtins.dict")),
            "{module:?}"
        );
    }

    #[test]
    fn a_layer_of_a_sequential_may_stand_where_it_stood() {
        let module = |class: &str| Kind {
            class: class.into(),
            mro: vec!["torch.nn.modules.module.Module".into()],
            props: vec![],
            items: None,
            value: None,
            layers: vec![],
        };
        let linear = module("torch.nn.modules.linear.Linear");
        let sequential = Kind {
            layers: vec![linear.clone(), module("torch.nn.modules.activation.ReLU")],
            ..module("torch.nn.modules.container.Sequential")
        };
        assert!(sequential.admits(&linear));
        assert!(sequential.admits(&sequential));
        assert!(!sequential.admits(&module("torch.nn.modules.conv.Conv2d")));
        assert!(!linear.admits(&sequential));
    }

    #[test]
    fn a_library_subclass_may_stand_for_the_scripts_subclass_of_its_base_but_not_an_object() {
        let own = Kind {
            class: "script:torch.nn.modules.module.Module".into(),
            mro: vec!["torch.nn.modules.module.Module".into()],
            props: vec![],
            items: None,
            value: None,
            layers: vec![],
        };
        let linear = Kind {
            class: "torch.nn.modules.linear.Linear".into(),
            mro: vec!["torch.nn.modules.module.Module".into()],
            props: vec![],
            items: None,
            value: None,
            layers: vec![],
        };
        let bare = Kind {
            class: "torch.nn.modules.module.Module".into(),
            mro: vec![],
            props: vec![],
            items: None,
            value: None,
            layers: vec![],
        };
        assert!(own.admits(&linear));
        assert!(own.admits(&bare));
        assert!(own.admits(&own));
        let config = Kind {
            class: "script:builtins.object".into(),
            ..bare.clone()
        };
        let object = Kind {
            class: "builtins.object".into(),
            ..bare.clone()
        };
        assert!(!config.admits(&object));
        assert!(!config.admits(&linear));
        assert!(config.admits(&config));
    }
}
