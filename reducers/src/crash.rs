//! Where a script fails, as the oracle saw it: what a pass that reads the failure is given.
//! A list of frames reads from the probe's JSON report (`src/probe.py`).

use serde::Deserialize;

/// The frames of the script on the failing traceback, innermost first, and the tensors,
/// modules and arrays its code computed before it failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Crash {
    pub frames: Vec<Frame>,
    pub computed: Vec<Computed>,
}

/// An expression of the script and the last value it computed, as code
/// that rebuilds an equivalent value (`torch.tensor([[-0.9609]]).requires_grad_().clone()`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Computed {
    /// Where the expression starts: its 1-based line and the byte offset in that line.
    pub start: (usize, usize),
    /// Where it ends, likewise (exclusive).
    pub end: (usize, usize),
    pub code: String,
}

/// One frame of the script on the failing traceback.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Frame {
    /// The line (1-based) the frame was running.
    pub line: usize,
    /// Whether the frame is a function's (not the module's).
    #[serde(rename = "function")]
    pub in_function: bool,
    /// The names local to the frame's function: code that still reads one of them cannot
    /// leave the function.
    pub locals: Vec<String>,
    /// Expressions (names, attributes, subscripts) read on that line, by their source text,
    /// with the source of their value at the failure: a literal (`{'factory': {}}`) or the
    /// name of a module-level class or function of the script.
    pub values: Vec<(String, String)>,
}
