//! Completion scripts and man pages, generated from the command line's definitions.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Cli;

/// `scrub completions SHELL`: the completion script for SHELL.
pub fn completions(shell: Shell) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "scrub", &mut script);
    emit(&script)
}

/// `scrub man [COMMAND]`: the man page of scrub, or of COMMAND, as roff.
pub fn man(command: Option<&str>) -> Result<ExitCode> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(page(command)?)
        .source(format!("scrub {}", env!("SCRUB_VERSION")))
        .render(&mut roff)
        .context("cannot render the man page")?;
    emit(&roff)
}

/// The command whose page `scrub man` prints, named as clap_mangen names the pages of
/// subcommands: `scrub man reduce` is scrub-reduce(1), with `scrub reduce` in its synopsis.
fn page(command: Option<&str>) -> Result<clap::Command> {
    // Without the `help` subcommand, which has no page of its own to point to.
    let mut scrub = Cli::command().disable_help_subcommand(true);
    scrub.build();
    let Some(name) = command else {
        return Ok(scrub);
    };
    match scrub.find_subcommand(name) {
        Some(sub) => Ok(sub.clone()),
        None => {
            let names: Vec<&str> = scrub.get_subcommands().map(|c| c.get_name()).collect();
            bail!("no command `{name}`; pick one of {}", names.join(", "))
        }
    }
}

/// Writes `bytes` to stdout. A reader gone early (`scrub man | head`) ends scrub quietly with
/// 141, as a closed pipe does everywhere else in scrub.
fn emit(bytes: &[u8]) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(ExitCode::from(141)),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}
