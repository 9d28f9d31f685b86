use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match scrub::run(scrub::cli::Cli::parse()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("scrub: {err:#}");
            ExitCode::from(2)
        }
    }
}
