//! scrub: shrink a failing Python repro to the smallest script that still fails the same way.

pub mod bench;
pub mod chart;
pub mod cli;
pub mod corpus;
pub mod engine;
pub mod generate;
pub mod issue;
pub mod peers;
pub mod vs;

use std::process::ExitCode;

use anyhow::Result;

/// Runs one command; `Err` is a failure of scrub or bad input (exit 2).
pub fn run(cli: cli::Cli) -> Result<ExitCode> {
    // Ctrl-C stops the workers (they watch this flag) instead of killing scrub outright.
    let _ = ctrlc::set_handler(|| {
        engine::process::INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst)
    });
    match cli.command {
        cli::Command::Reduce(args) => args.run(),
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Issue(args) => issue::run(&args),
        cli::Command::Completions(args) => generate::completions(args.shell),
        cli::Command::Man(args) => generate::man(args.command.as_deref()),
    }
}
