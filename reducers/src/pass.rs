//! What a pass is, and the ordered registry of passes.

use crate::edit::Candidate;
use crate::passes::*;
use crate::python::Script;

/// A pass looks at the current script and proposes candidates; it never judges them.
///
/// Candidates come best first: the loop tests them in this order and accepts the first
/// that keeps the failure, so put the biggest likely wins first.
pub trait Pass: Sync {
    /// Short snake_case name, used in statistics and logs.
    fn name(&self) -> &'static str;

    /// The candidates for `script`, best first.
    fn candidates(&self, script: &Script) -> Vec<Candidate>;

    /// Whether the pass only tidies (comments, blank lines) and so still runs once after the
    /// reduction stopped at its target.
    fn is_cosmetic(&self) -> bool {
        false
    }
}

/// The generic passes, in the order a round runs them.
///
/// Large deletions first, since they make every later pass cheaper; then the rewrites that
/// open up structure (unwrapping blocks and loops, inlining calls, then propagating the
/// values that inlining leaves bound to parameter names); then the small, many, cheap
/// removals of definitions, imports, arguments and elements; expression hoisting and value
/// shrinking last, because they propose the most candidates and are worth most on an already
/// small script; blank lines left behind and comments, which count as lines, are tidied at
/// the end of each round.
pub const PASSES: &[&dyn Pass] = &[
    &DeleteStatements,
    &UnwrapBlocks,
    &UnrollLoops,
    &InlineCalls,
    &PropagateValues,
    &DeleteDefinitions,
    &DropImports,
    &DeleteArguments,
    &DeleteElements,
    &HoistExpressions,
    &ShrinkValues,
    &StripComments,
    &TidyBlankLines,
];

/// Finds a registered pass by name.
pub fn by_name(name: &str) -> Option<&'static dyn Pass> {
    PASSES.iter().copied().find(|p| p.name() == name)
}
