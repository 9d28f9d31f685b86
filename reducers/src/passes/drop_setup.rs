//! Drop the setup a repro carries around its failure: logging and warnings configuration,
//! log calls and prints, seeding, environment variables, distributed init and teardown.
//!
//! ## What it removes
//! Statements that set the stage rather than fail, recognised by what they call or assign:
//! - `logging.basicConfig(...)`, `logging.disable(...)`, `x.setLevel(...)`, and log calls
//!   `log.debug/info/warning/error/exception/critical(...)` on a name or on `logging`;
//! - `print(...)`, `warnings.filterwarnings/simplefilter(...)`;
//! - seeding: `torch.manual_seed`, `torch.cuda.manual_seed(_all)`, `random.seed`,
//!   `np.random.seed`, `torch.use_deterministic_algorithms`, `torch.set_printoptions`;
//! - `os.environ[...] = ...`, `os.environ.setdefault/update(...)`, `os.putenv(...)`;
//! - `dist.init_process_group`, `dist.barrier`, `dist.destroy_process_group` (also spelt
//!   `torch.distributed.…`), and assignments to `torch.backends.…` flags.
//!
//! First all of them at once, then each alone. A statement that is all its block holds
//! becomes `pass`.
//!
//! ## Example
//! ```python
//! logging.basicConfig(level=logging.INFO)   # before
//! os.environ["OMP_NUM_THREADS"] = "1"
//! torch.manual_seed(0)
//! torch.zeros(2)[5]
//!
//! torch.zeros(2)[5]                         # after the first candidate
//! ```
//!
//! ## When it cannot apply
//! Setup inside an expression (`x = print(...)`, a call's argument) is left to the other passes;
//! so are the objects setup creates (`log = logging.getLogger()`), which `delete_statements`
//! and `delete_definitions` remove once nothing uses them.

use super::helpers::{combine, delete_stmt, short};
use crate::edit::{Candidate, lines_label};
use crate::pass::{Pass, PassInfo};
use crate::python::{Expr, Script, Stmt, all_bodies, span};

pub struct DropSetup;

impl Pass for DropSetup {
    fn info(&self) -> PassInfo {
        PassInfo::new("drop_setup")
    }

    fn candidates(&self, script: &Script) -> Vec<Candidate> {
        let text = script.text();
        let mut singles = Vec::new();
        for (b, body) in all_bodies(script.body()).into_iter().enumerate() {
            for (i, stmt) in body.iter().enumerate() {
                if is_setup(stmt) {
                    singles.push(Candidate::new(
                        format!(
                            "drop `{}` at {}",
                            short(script.slice(stmt)),
                            lines_label(text, &span(stmt))
                        ),
                        vec![delete_stmt(script, body, i, b == 0)],
                    ));
                }
            }
        }
        let mut out: Vec<Candidate> = combine("drop all setup", &singles).into_iter().collect();
        out.extend(singles);
        out
    }
}

/// Whether the statement is setup this pass recognises.
fn is_setup(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Expr(e) => match e.value.as_ref() {
            Expr::Call(call) => dotted(&call.func).is_some_and(|f| is_setup_call(&f)),
            _ => false,
        },
        Stmt::Assign(a) => a.targets.iter().all(|t| match t {
            Expr::Subscript(s) => dotted(&s.value).as_deref() == Some("os.environ"),
            Expr::Attribute(_) => dotted(t).is_some_and(|d| d.starts_with("torch.backends.")),
            _ => false,
        }),
        _ => false,
    }
}

fn is_setup_call(path: &str) -> bool {
    const EXACT: &[&str] = &[
        "print",
        "logging.basicConfig",
        "logging.disable",
        "logging.captureWarnings",
        "warnings.filterwarnings",
        "warnings.simplefilter",
        "torch.manual_seed",
        "torch.cuda.manual_seed",
        "torch.cuda.manual_seed_all",
        "torch.use_deterministic_algorithms",
        "torch.set_printoptions",
        "random.seed",
        "np.random.seed",
        "numpy.random.seed",
        "os.environ.setdefault",
        "os.environ.update",
        "os.putenv",
    ];
    const DISTRIBUTED: &[&str] = &["init_process_group", "barrier", "destroy_process_group"];
    const LOG_LEVELS: &[&str] = &[
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "setLevel",
    ];
    if EXACT.contains(&path) {
        return true;
    }
    let (receiver, method) = path.rsplit_once('.').unwrap_or(("", path));
    let distributed = matches!(receiver, "dist" | "torch.distributed");
    // `log.info(...)` on a logger held in a name, or `logging.info(...)`.
    let logger = !receiver.is_empty() && !receiver.contains('.');
    (distributed && DISTRIBUTED.contains(&method)) || (logger && LOG_LEVELS.contains(&method))
}

/// `a.b.c` for a chain of names and attributes.
fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<String> {
        crate::passes::helpers::candidate_texts(&DropSetup, text)
    }

    #[test]
    fn all_setup_goes_first_then_each_alone() {
        let text = "logging.basicConfig()\nos.environ['A'] = '1'\nf()\nlog.info('x')\n";
        assert_eq!(
            results(text),
            [
                "f()\n",
                "os.environ['A'] = '1'\nf()\nlog.info('x')\n",
                "logging.basicConfig()\nf()\nlog.info('x')\n",
                "logging.basicConfig()\nos.environ['A'] = '1'\nf()\n",
            ]
        );
    }

    #[test]
    fn other_calls_and_attribute_chains_stay() {
        for text in [
            "f()\n",
            "x = print(1)\n",
            "model.train()\n",
            "a.b.info()\n",
            "os.environ.get('A')\n",
            "dist.all_reduce(t)\n",
        ] {
            assert!(results(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_block_left_empty_holds_pass() {
        let text = "if x:\n    print(x)\n";
        assert_eq!(results(text), ["if x:\n    pass\n"]);
    }
}
