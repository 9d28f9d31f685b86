//! The passes and the reduction loop of scrub.
//!
//! Pure: this crate never spawns a process, touches the filesystem or reads the clock. The
//! loop asks an [`Oracle`] whether candidates still fail; the binary implements it with
//! worker processes, the tests with one-line fakes.

pub mod checks;
pub mod compared;
pub mod control;
pub mod crash;
pub mod definitions;
pub mod differential;
pub mod edit;
pub mod established;
pub mod expected;
pub mod fields;
pub mod fix;
pub mod ignored;
pub mod kinds;
pub mod locals;
pub mod long_lines;
pub mod minified;
pub mod named;
pub mod pass;
pub mod passes;
pub mod perturbed;
pub mod prepare;
pub mod producers;
pub mod python;
pub mod recursion;
pub mod reduce;
pub mod round_trips;
pub mod rungs;
pub mod scopes;
pub mod shapes;
pub mod tautology;
pub mod torch;
pub mod unbuilt;
pub mod validating;
pub mod zeros;

pub use crash::{Computed, Crash, Frame};
pub use edit::{Candidate, Edit, count_lines};
pub use pass::{Growth, Pass, PassInfo, Phase};
pub use passes::PASSES;
pub use python::{PythonVersion, Script};
pub use reduce::{
    Interrupted, Options, Oracle, PassStats, Progress, ReduceError, Reduction, StopReason, reduce,
};
