//! Every pass's candidates over its fixtures, as snapshots: one fixture per case a pass handles.
//!
//! A fixture lives in `fixtures/<pass name>/`; its snapshot lists each candidate in the order
//! the pass proposes it, whether the result parses, and the result as a diff of the fixture.
//! A pass that reads where the script fails takes it from `<fixture>.crash.json` (and what
//! module-level code computed from `<fixture>.values.json`), in the form the probe reports it.

use std::fmt::Write;
use std::path::Path;

use scrub_reducers::passes::by_name;
use scrub_reducers::python::{PythonVersion, Script, is_valid};
use scrub_reducers::{Computed, Crash, Frame};
use similar::TextDiff;

const VERSION: PythonVersion = PythonVersion::PY311;

/// The readable listing of the candidates of the pass named by the fixture's folder.
fn render(path: &Path) -> String {
    let pass_name = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .expect("fixtures sit in a folder named after their pass");
    let pass = by_name(pass_name).unwrap_or_else(|| panic!("no pass is named {pass_name}"));
    let text = std::fs::read_to_string(path).expect("fixture is readable");
    let script = Script::parse(text.as_str(), VERSION).expect("fixture parses");
    let candidates = if pass.info().reads_crash {
        pass.candidates_at(&script, &crash_of(path))
    } else {
        pass.candidates(&script)
    };
    let mut out = format!("{} candidates\n", candidates.len());
    for (i, candidate) in candidates.iter().enumerate() {
        let Some(after) = candidate.apply(&text) else {
            writeln!(
                out,
                "\n## {}. {} [edits overlap]",
                i + 1,
                candidate.description
            )
            .unwrap();
            continue;
        };
        let verdict = if after == text {
            "no change"
        } else if is_valid(&after, VERSION) {
            "parses"
        } else {
            "DOES NOT PARSE"
        };
        writeln!(out, "\n## {}. {} [{verdict}]", i + 1, candidate.description).unwrap();
        let diff = TextDiff::from_lines(text.as_str(), after.as_str());
        write!(
            out,
            "{}",
            diff.unified_diff()
                .context_radius(2)
                .missing_newline_hint(true)
        )
        .unwrap();
    }
    out
}

/// The crash recorded beside a fixture, as the probe reports it: its frames, and what the
/// module-level code computed in `<fixture>.values.json` when there is one.
fn crash_of(fixture: &Path) -> Crash {
    let read = |extension: &str| {
        let path = fixture.with_extension(extension);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let frames: Vec<Frame> = serde_json::from_str(&read("crash.json")).expect("the probe's JSON");
    let computed: Vec<Computed> = match fixture.with_extension("values.json").exists() {
        true => serde_json::from_str(&read("values.json")).expect("the probe's JSON"),
        false => Vec::new(),
    };
    Crash { frames, computed }
}

#[test]
fn candidates_of_every_pass_on_its_fixtures() {
    insta::glob!("fixtures/*/*.py", |path| {
        insta::assert_snapshot!(render(path));
    });
}
