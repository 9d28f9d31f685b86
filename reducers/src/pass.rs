//! What a pass is: the `Pass` trait, and the one value by which a pass describes itself to the
//! loop.

use crate::crash::Crash;
use crate::edit::Candidate;
use crate::python::Script;

/// A pass looks at the current script and proposes candidates; it never judges them.
///
/// Candidates come best first: the loop tests them in this order and accepts the first
/// that keeps the failure, so put the biggest likely wins first.
pub trait Pass: Sync {
    /// What the pass is, for the loop: its name, its phase, whether it may grow the script,
    /// whether it reads where the script fails.
    fn info(&self) -> PassInfo;

    /// The candidates for `script`, best first.
    fn candidates(&self, script: &Script) -> Vec<Candidate>;

    /// The candidates for `script`, which fails as `crash` says, best first. The loop calls
    /// it instead of `candidates` for a pass whose [`PassInfo::reads_crash`] is set.
    fn candidates_at(&self, script: &Script, _crash: &Crash) -> Vec<Candidate> {
        self.candidates(script)
    }
}

/// How a pass describes itself to the loop. Start from [`PassInfo::new`], which is the
/// common case, and change what differs:
/// `PassInfo { growth: Growth::Pump, ..PassInfo::new("inline_calls") }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassInfo {
    /// Short snake_case name, used in statistics and logs; the pass's file is
    /// `passes/<name>.rs`, its fixtures `tests/fixtures/<name>/`.
    pub name: &'static str,
    /// When a round runs the pass.
    pub phase: Phase,
    /// Whether its candidates may make the script longer.
    pub growth: Growth,
    /// Whether the pass needs to know where the script fails: the loop then asks the oracle
    /// (see [`Oracle::crash`](crate::reduce::Oracle::crash)) and calls
    /// [`Pass::candidates_at`] instead of `candidates`.
    pub reads_crash: bool,
}

/// When a round runs a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Every round, in the order the schedule gives.
    Main,
    /// Every round, and once more after the reduction stopped at its target: dropping the
    /// imports that nothing uses any more (the target does not count imports, so nothing
    /// else would).
    MainAndFinish,
    /// Edits inside statements (an argument, an element, a sub-expression, a value): it
    /// proposes several candidates per expression, and what it shrinks is often deleted whole
    /// later. A round runs it only once a round of the other passes changed nothing, so that
    /// it works on a script that deletion has already made small.
    Fine,
    /// Respells what deletion left (names, the spelling of calls) as a person writes it. Like
    /// a fine pass it waits for a round of the others that changed nothing, and it runs in a
    /// round only if no other pass changed the script before it, so that it names only what
    /// survived (`x` for the first name left, not for the fifth of a script not yet cut
    /// down); like a cosmetic one it runs last, its wins alone do not call for another
    /// round, and it still runs once after the reduction stopped at its target. Unlike a
    /// cosmetic one, what it changed is code: a result it alone changed is verified again.
    Respell,
    /// Only tidies (comments, blank lines): last in every round, its wins alone do not call
    /// for another round, and it still runs once after the reduction stopped at its target.
    Cosmetic,
}

/// Whether a pass's candidates may make the script longer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Growth {
    /// Every candidate that the loop takes makes the script smaller.
    Never,
    /// A step down a finite ladder (the compile backend, a dtype, a pool call that no pass
    /// adds back) that is worth more than its bytes. Such a candidate is taken only towards a
    /// script never accepted before, so the loop still ends.
    Ladder,
    /// A rewrite that may grow the script so that deletion can then go further (flattening a
    /// class). A pump that grew the script is kept only if, after the next full round, the
    /// script is smaller than before it; otherwise the loop rolls it back. A pump also may
    /// grow, as a ladder step does.
    Pump,
}

impl PassInfo {
    /// A pass named `name` that runs in every round, never grows the script and does not
    /// read where it fails.
    pub const fn new(name: &'static str) -> PassInfo {
        PassInfo {
            name,
            phase: Phase::Main,
            growth: Growth::Never,
            reads_crash: false,
        }
    }

    /// Whether the pass only tidies (see [`Phase::Cosmetic`]).
    pub fn is_cosmetic(&self) -> bool {
        self.phase == Phase::Cosmetic
    }

    /// Whether a round runs the pass only after a round of the others changed nothing (see
    /// [`Phase::Fine`] and [`Phase::Respell`]).
    pub fn is_fine(&self) -> bool {
        matches!(self.phase, Phase::Fine | Phase::Respell)
    }

    /// Whether the pass runs last in a round and its wins alone call for no other round:
    /// the cosmetic passes and the respelling ones.
    pub fn tidies(&self) -> bool {
        matches!(self.phase, Phase::Cosmetic | Phase::Respell)
    }

    /// Whether the pass still runs once after the reduction stopped at its target: the
    /// cosmetic and respelling ones, and dropping unused imports.
    pub fn finishes(&self) -> bool {
        matches!(
            self.phase,
            Phase::MainAndFinish | Phase::Cosmetic | Phase::Respell
        )
    }

    /// Whether its candidates may make the script longer: a ladder's steps and pumps.
    pub fn may_grow(&self) -> bool {
        self.growth != Growth::Never
    }

    /// Whether its candidates are pumps (see [`Growth::Pump`]).
    pub fn is_pump(&self) -> bool {
        self.growth == Growth::Pump
    }
}
