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
    let cli = scrub::cli::Cli::parse();
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

/// Whether a panic is `print!`'s on a closed stdout.
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}
