//! Everything scrub draws on the terminal: messages on stderr and the progress line.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Console {
    bar: ProgressBar,
    quiet: bool,
    start: Instant,
}

impl Console {
    /// A progress line on stderr when it is a terminal and `quiet` is off.
    pub fn new(quiet: bool) -> Console {
        let target = if !quiet && std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}").expect("valid template"),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        Console {
            bar,
            quiet,
            start: Instant::now(),
        }
    }

    /// A line for the user, unless quiet.
    pub fn say(&self, line: impl AsRef<str>) {
        if !self.quiet {
            self.bar.suspend(|| eprintln!("{}", line.as_ref()));
        }
    }

    /// A warning, shown even when quiet.
    pub fn warn(&self, line: impl AsRef<str>) {
        self.bar
            .suspend(|| eprintln!("scrub: warning: {}", line.as_ref()));
    }

    pub fn status(&self, pass: &str, lines: usize, bytes: usize, calls: usize, hits: usize) {
        self.bar.set_message(format!(
            "{pass}: {lines} lines, {bytes} bytes, {calls} runs, {hits} cache hits"
        ));
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
