//! The engine: reduce one script under one signature. Everything here is reached through
//! [`reduce::Options`]; the front ends (the command line, `bench`, `issue`) build one and read
//! the [`reduce::Summary`] it gives back. The engine knows nothing of them.
//!
//! - [`reduce`]: one reduction as a value whose stages (the original's runs, its control, the
//!   minifier, the passes, the final check, the output) are methods, one file each;
//! - [`oracle`]: the loop's oracle: the cache first, then the workers, with a log of every run;
//! - [`verdict`]: signatures, and what an outcome means for one;
//! - [`judge`]: a script another reducer made, held to the same verdict as a candidate;
//! - [`workers`], [`zygote`], [`ray`], [`process`], [`memory`], [`output`]: where and how a
//!   candidate runs, and what is kept of its output;
//! - [`cache`], [`rundir`], [`console`]: what a run leaves on disk and on the terminal;
//! - [`kinds`]: the kinds of the values a failing script hands to libraries, which a candidate
//!   must keep;
//! - [`probe`], [`exception`], [`naming`], [`interpreter`], [`ladder`], [`minifier`]: what the engine learns
//!   about a script, its failure and its interpreter.

pub mod cache;
pub mod console;
pub mod exception;
pub mod gpu_memory;
pub mod inductor_cache;
pub mod interpreter;
pub mod judge;
pub mod kinds;
pub mod ladder;
pub mod memory;
pub mod minifier;
pub mod naming;
pub(crate) mod oracle;
pub mod output;
pub mod pointed;
pub mod probe;
pub mod process;
pub mod ray;
pub mod reduce;
pub mod rundir;
pub mod verdict;
pub mod workers;
pub mod zygote;
