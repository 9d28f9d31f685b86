//! What a pass is, and the ordered registry of passes.

use crate::crash::Crash;
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

    /// Whether the pass needs to know where the script fails: the loop then asks the oracle
    /// (see [`Oracle::crash`](crate::Oracle::crash)) and calls
    /// [`candidates_at`](Pass::candidates_at) instead of `candidates`.
    fn reads_crash(&self) -> bool {
        false
    }

    /// The candidates for `script`, which fails as `crash` says, best first.
    fn candidates_at(&self, script: &Script, _crash: &Crash) -> Vec<Candidate> {
        self.candidates(script)
    }

    /// Whether the pass only tidies (comments, blank lines) and so still runs once after the
    /// reduction stopped at its target.
    fn is_cosmetic(&self) -> bool {
        false
    }

    /// Whether the pass edits inside statements (an argument, an element, a sub-expression, a
    /// value): it proposes several candidates per expression, and what it shrinks is often
    /// deleted whole later. A round runs it only once a round of the other passes changed
    /// nothing, so that it works on a script that deletion has already made small.
    fn is_fine(&self) -> bool {
        false
    }

    /// Whether the pass still runs once after the reduction stopped at its target: the
    /// cosmetic ones, and dropping the imports that nothing uses any more (the target does
    /// not count imports, so nothing else would).
    fn finishes(&self) -> bool {
        self.is_cosmetic()
    }

    /// Whether its candidates may make the script longer: a step down a finite ladder (the
    /// compile backend, a dtype) that is worth more than its bytes. Such a candidate is taken
    /// only towards a script never accepted before, so the loop still ends.
    fn may_grow(&self) -> bool {
        false
    }

    /// Whether its candidates are pumps: rewrites that may grow the script so that deletion
    /// can then go further (flattening a class). A pump that grew the script is kept only if,
    /// after the next full round, the script is smaller than before it; otherwise the loop
    /// rolls it back. Pumps also [`may_grow`](Pass::may_grow).
    fn is_pump(&self) -> bool {
        false
    }
}

/// The passes, in the order a round runs them.
///
/// The jump to the failing statement first: when the values it read are literals, it removes
/// nearly everything in one step; then the tensors and modules that the script computed in
/// place of the code that computed them (one probe run serves both). Then large deletions,
/// since they make every later pass cheaper, the setup (logging, seeding, environment, distributed init) that repros carry
/// around their failure, and type annotations (one candidate for all of them, after which
/// annotated assignments are plain ones that propagation knows). Right after
/// them the PyTorch passes that move a repro to the CPU and float32 and shrink its tensor and layer
/// sizes: they propose few candidates (none on a script without torch) and are decisive
/// for torch repros, and every later run is faster on a small CPU script. Then the rewrites
/// that open up structure: unwrapping blocks, then stepping `torch.compile` down its backend
/// ladder (once unwrapping has exposed the calls, and before the many rewrites that follow,
/// which are judged faster under a cheaper backend), unrolling loops and folding the
/// `[*ITER][0]` that unrolling leaves into the first element, running pool maps in the
/// calling process (so that their failures reach the script's own frames), replacing command-line
/// options by their defaults (before inlining can hide the namespace), unwrapping the
/// `nn.Module` classes that only wrap one layer into that layer (before inlining and
/// module moves, which would add statements to the wrapper's `__init__`, and before
/// flattening, which would turn the instance into a function that `torch.jit.script` and
/// `torch.export` reject; it only shrinks the script, so the rewrites after it work on less),
/// inlining calls, writing a function handed over once (to `vmap`, a key, a pool) as a
/// lambda in place, moving a module's `.double()`, `.to(…)` and `.eval()` into its class (so that the instance
/// is bound once), flattening classes instantiated once (whose former methods the next round
/// inlines), folding the dataclass instances that several records leave (`Line(3, p).net()`)
/// into the values they were built from, folding
/// the receivers that inlining binds (`self = tok`, once per call) into their reads, binding
/// the arguments of a class's one construction into its `__init__` (a config object passed to
/// a module that must stay a class, which leaves `self.cfg = Config()`), then propagating the
/// values that inlining, flattening and binding leave bound to names and attributes. Then the small,
/// many, cheap removals of definitions, then of the classes that deletion emptied but whose
/// instances are still handed on (after the deletions that empty them: an instance of the base
/// in place of each), imports; a line that only shifts the random stream under a seed,
/// deleted with the seed changed (once deleting it alone failed); arguments and elements;
/// expression hoisting,
/// value shrinking and the delta debugging of literals' contents last, because they propose the most candidates and are worth most on
/// an already small script; parentheses that group nothing any more, blank lines left behind
/// and comments, which count as lines, are tidied at the end of each round.
pub const PASSES: &[&dyn Pass] = &[
    &JumpToCrash,
    &FreezeValues,
    &DeleteStatements,
    &DropSetup,
    &DropAnnotations,
    &CpuFloat32,
    &ShrinkDims,
    &UnwrapBlocks,
    &SimplerBackend,
    &UnrollLoops,
    &FirstElements,
    &SerialMaps,
    &ArgparseDefaults,
    &UnwrapModules,
    &InlineCalls,
    &LambdaFunctions,
    &ModuleMoves,
    &FlattenClasses,
    &FoldDataclasses,
    &FoldAliases,
    &BindArguments,
    &PropagateValues,
    &DeleteDefinitions,
    &DropEmptyClasses,
    &DropImports,
    &Reseed,
    &DeleteArguments,
    &DeleteElements,
    &HoistExpressions,
    &ShrinkValues,
    &ShrinkLiterals,
    &DropParentheses,
    &StripComments,
    &TidyBlankLines,
];

/// Finds a registered pass by name.
pub fn by_name(name: &str) -> Option<&'static dyn Pass> {
    PASSES.iter().copied().find(|p| p.name() == name)
}
