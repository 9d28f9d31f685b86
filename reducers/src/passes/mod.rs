//! The passes, one per file, and their registry: the one list of the passes, in the order a
//! round runs them. Each file's doc comment is the pass's manual; what several passes share is
//! in `helpers.rs`.

pub(crate) mod helpers;

// The modules are declared here, not by `registry!`, so that rustfmt finds their files; a
// test (`tests/layout.rs`) checks that each of them is registered.
mod argparse_defaults;
mod bind_arguments;
mod chain_in_place;
mod cpu_float32;
mod delete_arguments;
mod delete_definitions;
mod delete_elements;
mod delete_statements;
mod drop_annotations;
mod drop_empty_classes;
mod drop_imports;
mod drop_parameters;
mod drop_parentheses;
mod drop_setup;
mod drop_targets;
mod first_elements;
mod flatten_classes;
mod fold_aliases;
mod fold_dataclasses;
mod freeze_values;
mod hoist_expressions;
mod inline_calls;
mod join_lines;
mod jump_to_crash;
mod lambda_functions;
mod module_moves;
mod propagate_values;
mod public_names;
mod reseed;
mod serial_maps;
mod shrink_dims;
mod shrink_literals;
mod shrink_values;
mod simpler_backend;
mod stateless_modules;
mod strip_comments;
mod tidy_blank_lines;
mod unroll_loops;
mod unwrap_blocks;
mod unwrap_modules;
mod valid_indices;

use crate::pass::Pass;

/// Re-exports each pass's type and lists it in [`PASSES`], in the order given: adding a pass
/// is its file, its `mod` line, one line in the registry, a fixture folder and its snapshots.
macro_rules! registry {
    ($(#[$doc:meta])* $($module:ident::$pass:ident,)*) => {
        $(pub use $module::$pass;)*
        $(#[$doc])*
        pub const PASSES: &[&dyn Pass] = &[$(&$pass),*];
    };
}

registry! {
    /// The passes, in the order a round runs them.
    ///
    /// The jump to the failing statement first: when the values it read are literals, it removes
    /// nearly everything in one step; then the tensors and modules that the script computed in
    /// place of the code that computed them (one probe run serves both). Then large deletions,
    /// since they make every later pass cheaper, the setup (logging, seeding, environment,
    /// distributed init) that repros carry around their failure, and type annotations (one
    /// candidate for all of them, after which annotated assignments are plain ones that propagation
    /// knows). Right after them the PyTorch passes that move a repro to the CPU and float32 and
    /// shrink its tensor and layer sizes: they propose few candidates (none on a script without
    /// torch) and are decisive for torch repros, and every later run is faster on a small CPU
    /// script. Then the rewrites that open up structure: unwrapping blocks, then stepping
    /// `torch.compile` down its backend ladder (once unwrapping has exposed the calls, and before
    /// the many rewrites that follow, which are judged faster under a cheaper backend), unrolling
    /// loops and folding the `[*ITER][0]` that unrolling leaves into the first element, running
    /// pool maps in the calling process (so that their failures reach the script's own frames),
    /// replacing command-line options by their defaults (before inlining can hide the namespace),
    /// unwrapping the `nn.Module` classes that only wrap one layer, or a chain of layers and
    /// activations, into that layer or an `nn.Sequential` (before inlining and module moves,
    /// which would add statements to the wrapper's `__init__`, and before flattening, which would
    /// turn the instance into a function that `torch.jit.script` and `torch.export` reject; it
    /// only shrinks the script, so the rewrites after it work on less), writing a module whose
    /// `forward` reads nothing of `self` as that function (after unwrapping, whose candidate stays
    /// a module, has had its try), inlining calls, writing a function handed over once (to
    /// `vmap`, a key, a pool) as a lambda in place, moving a module's `.double()`, `.to(…)` and `.eval()` into its class (so that the
    /// instance is bound once), flattening classes instantiated once (whose former methods the next
    /// round inlines), folding the dataclass instances that several records leave
    /// (`Line(3, p).net()`) into the values they were built from, folding the receivers that
    /// inlining binds (`self = tok`, once per call) into their reads, chaining a tensor's in-place
    /// call into the next statement's read of it (`x.mul_(2)` then `x.sum()`), binding the arguments of a
    /// class's one construction into its `__init__` (a config object passed to a module that must
    /// stay a class, which leaves `self.cfg = Config()`), then propagating the values that
    /// inlining, flattening and binding leave bound to names and attributes. Then the small, many,
    /// cheap removals of definitions, of the parameters no code reads (with what the calls and
    /// `torch.export`'s example inputs pass for them) and of the names an unpacking binds that no
    /// code reads (with the values they took), then of the classes that deletion emptied but whose instances
    /// are still handed on (after the deletions that empty them: an instance of the base in place
    /// of each), imports; a line that only shifts the random stream under a seed, deleted with the
    /// seed changed (once deleting it alone failed); arguments and elements, then an index that
    /// deleting elements left out of range put back in range; expression hoisting,
    /// value shrinking and the delta debugging of literals' contents last, because they propose the
    /// most candidates and are worth most on an already small script. At the end of each round
    /// the tidying: first the spellings of FX graph code (`torch.ops.aten` calls written as the
    /// public call, the graph's generated names as plain ones), which never open up a deletion
    /// but always shorten the script; like the fine passes they wait for a round of the others
    /// that changed nothing, so that the names left are `x`, `y`, `z` and not the letters
    /// handed to names deleted later; their wins alone call for no new round (each shortens
    /// the script, so they end) and they run once more after the target is met. Then
    /// parentheses that group nothing any more (some around a receiver that the method form
    /// wrote), statements spread over lines that fit on one, blank lines left behind and
    /// comments, which count as lines.
    jump_to_crash::JumpToCrash,
    freeze_values::FreezeValues,
    delete_statements::DeleteStatements,
    drop_setup::DropSetup,
    drop_annotations::DropAnnotations,
    cpu_float32::CpuFloat32,
    shrink_dims::ShrinkDims,
    unwrap_blocks::UnwrapBlocks,
    simpler_backend::SimplerBackend,
    unroll_loops::UnrollLoops,
    first_elements::FirstElements,
    serial_maps::SerialMaps,
    argparse_defaults::ArgparseDefaults,
    unwrap_modules::UnwrapModules,
    stateless_modules::StatelessModules,
    inline_calls::InlineCalls,
    lambda_functions::LambdaFunctions,
    module_moves::ModuleMoves,
    flatten_classes::FlattenClasses,
    fold_dataclasses::FoldDataclasses,
    fold_aliases::FoldAliases,
    chain_in_place::ChainInPlace,
    bind_arguments::BindArguments,
    propagate_values::PropagateValues,
    delete_definitions::DeleteDefinitions,
    drop_parameters::DropParameters,
    drop_targets::DropTargets,
    drop_empty_classes::DropEmptyClasses,
    drop_imports::DropImports,
    reseed::Reseed,
    delete_arguments::DeleteArguments,
    delete_elements::DeleteElements,
    valid_indices::ValidIndices,
    hoist_expressions::HoistExpressions,
    shrink_values::ShrinkValues,
    shrink_literals::ShrinkLiterals,
    public_names::PublicNames,
    drop_parentheses::DropParentheses,
    join_lines::JoinLines,
    strip_comments::StripComments,
    tidy_blank_lines::TidyBlankLines,
}

/// Read by the loop, which refuses a candidate that builds a dataclass with fields that do not
/// fit (see [`crate::reduce`]).
pub(crate) use fold_dataclasses::misfit_constructions;
pub(crate) use shrink_dims::unit_sizes;

/// Finds a registered pass by name.
pub fn by_name(name: &str) -> Option<&'static dyn Pass> {
    PASSES.iter().copied().find(|p| p.info().name == name)
}
