//! scrub: shrink a failing Python repro to the smallest script that still fails the same way.

pub mod bench;
pub mod cache;
pub mod chart;
pub mod cli;
pub mod console;
pub mod corpus;
pub mod exception;
pub mod interpreter;
pub mod issue;
mod judge;
pub mod ladder;
pub mod memory;
pub mod minifier;
pub mod oracle;
pub mod output;
pub mod probe;
pub mod process;
pub mod ray;
pub mod reduce;
pub mod rundir;
pub mod workers;
pub mod zygote;

use std::process::ExitCode;

use anyhow::Result;

/// Runs one command; `Err` is a failure of scrub or bad input (exit 2).
pub fn run(cli: cli::Cli) -> Result<ExitCode> {
    // Ctrl-C stops the workers (they watch this flag) instead of killing scrub outright.
    let _ = ctrlc::set_handler(|| {
        process::INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst)
    });
    match cli.command {
        cli::Command::Reduce(args) => reduce::run(&args),
        cli::Command::Bench(args) => bench::run(&args),
        cli::Command::Issue(args) => issue::run(&args),
    }
}
