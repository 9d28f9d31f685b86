//! The command line about itself: its version, completion scripts and man pages.

mod common;

use std::time::Duration;

use clap::CommandFactory;
use common::*;

/// Runs scrub with `args`, which must succeed; returns its stdout.
fn stdout_of(args: &[&str]) -> String {
    let out = run_with_limit(scrub().args(args), Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_command_line_definitions_are_consistent() {
    scrub::cli::Cli::command().debug_assert();
}

#[test]
fn the_version_is_the_crate_version_and_maybe_the_commit() {
    for flag in ["--version", "-V"] {
        let printed = stdout_of(&[flag]);
        let line = printed
            .strip_suffix('\n')
            .expect("one line, ended by a newline");
        let rest = line
            .strip_prefix(concat!("scrub ", env!("CARGO_PKG_VERSION")))
            .unwrap_or_else(|| panic!("{line:?} does not start with the crate version"));
        if !rest.is_empty() {
            let hash = rest
                .strip_prefix(" (")
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or_else(|| panic!("{line:?}: the commit must follow as ` (<hex>)`"));
            assert!(
                hash.len() >= 4 && hash.chars().all(|c| c.is_ascii_hexdigit()),
                "{line:?}: {hash:?} is not a commit"
            );
        }
    }
}

#[test]
fn bash_completions_name_the_subcommands_and_their_flags() {
    let script = stdout_of(&["completions", "bash"]);
    for word in [
        "reduce",
        "bench",
        "issue",
        "completions",
        "man",
        "--target-lines",
    ] {
        assert!(
            script.contains(word),
            "{word:?} not in the bash completions"
        );
    }
}

#[test]
fn zsh_and_fish_completions_know_the_flags_of_reduce() {
    for shell in ["zsh", "fish"] {
        let script = stdout_of(&["completions", shell]);
        assert!(script.contains("target-lines"), "{shell}");
        assert!(script.contains("reduce"), "{shell}");
    }
}

/// The first request of a page after the roff prelude (the `.ie`/`.el` pair that defines
/// the apostrophe) is its `.TH` title.
fn title(page: &str) -> &str {
    page.lines()
        .find(|l| !l.starts_with(".ie ") && !l.starts_with(".el "))
        .unwrap_or("")
}

#[test]
fn the_man_page_is_roff_with_a_title_and_names_reduce() {
    let page = stdout_of(&["man"]);
    assert!(title(&page).starts_with(".TH scrub 1 "), "{page}");
    assert!(page.contains("\n.SH NAME\n"), "{page}");
    assert!(page.contains("scrub\\-reduce(1)"), "{page}");
}

#[test]
fn a_command_has_its_own_man_page() {
    let page = stdout_of(&["man", "reduce"]);
    assert!(title(&page).starts_with(".TH scrub-reduce 1 "), "{page}");
    assert!(page.contains("\\fBscrub reduce\\fR"), "{page}");
    assert!(page.contains("\\-\\-target\\-lines"), "{page}");
}
