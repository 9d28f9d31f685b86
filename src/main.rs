use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // `scrub … | head`: once the reader is gone, printing fails. Stop quietly, as other tools
    // do, but by unwinding, so that the workers and their children are still killed on the
    // way out (taking SIGPIPE's default would end scrub in the middle of anything).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            default_hook(info);
        }
    }));
    let cli = match scrub::cli::Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version` print as clap prints them.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!(
                "scrub: {} (see scrub --help)",
                one_line(&e.render().to_string())
            );
            return ExitCode::from(2);
        }
    };
    match std::panic::catch_unwind(|| scrub::run(cli)) {
        Ok(Ok(code)) => code,
        Ok(Err(err)) => {
            eprintln!("scrub: {err:#}");
            ExitCode::from(2)
        }
        Err(payload) if is_broken_pipe(payload.as_ref()) => ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    }
}

/// A clap error on one line: its text up to the usage, lines joined, without the `error:`.
fn one_line(rendered: &str) -> String {
    rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches("error: ")
        .to_string()
}

/// Whether a panic is `print!`'s on a closed stdout.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}
