//! Where a script fails, as the oracle saw it: what a pass that reads the failure is given.
//! A list of frames reads from the probe's JSON report (`src/probe.py`).

use serde::Deserialize;

/// The frames of the script on the failing traceback, innermost first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Crash {
    pub frames: Vec<Frame>,
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
