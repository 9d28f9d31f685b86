//! What holds the crate together beyond the compiler: every registered pass has its file, its
//! fixtures and its snapshots under its name, and nothing else is there; no snapshot records
//! a candidate that does not parse; no module of `src/` imports one that imports it back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use scrub_reducers::PASSES;
use scrub_reducers::kinds::TORCH_PASSES;

/// The prefix of the names of the snapshots `pass_snapshots.rs` writes.
const SNAPSHOT: &str = "pass_snapshots__candidates_of_every_pass_on_its_fixtures@";

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The names of the entries of `dir` that `keep` accepts, mapped by `name`.
fn entries(dir: &Path, keep: impl Fn(&Path) -> Option<String>) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable entry").path())
        .filter_map(|path| keep(&path))
        .collect()
}

fn registered() -> BTreeSet<String> {
    PASSES.iter().map(|p| p.info().name.to_string()).collect()
}

#[test]
fn every_registered_pass_has_a_file_a_fixture_folder_and_snapshots_of_its_name() {
    let names: Vec<&str> = PASSES.iter().map(|p| p.info().name).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "two passes share a name: {names:?}"
    );
    let registered = registered();

    // `mod.rs` is the registry and `helpers.rs` what passes share; every other file is a pass.
    let files = entries(&crate_dir().join("src/passes"), |path| {
        let stem = path.file_stem()?.to_str()?;
        (path.extension()? == "rs" && stem != "mod" && stem != "helpers").then(|| stem.to_string())
    });
    assert_eq!(
        files, registered,
        "src/passes/<name>.rs and the registry differ"
    );

    let fixtures = crate_dir().join("tests/fixtures");
    let folders = entries(&fixtures, |path| {
        let name = path.file_name()?.to_str()?;
        path.is_dir().then(|| name.to_string())
    });
    assert_eq!(
        folders, registered,
        "tests/fixtures/<name>/ and the registry differ"
    );

    // Every fixture has its snapshot, and every snapshot its fixture.
    let mut scripts = BTreeSet::new();
    for folder in &folders {
        let here = entries(&fixtures.join(folder), |path| {
            let name = path.file_name()?.to_str()?;
            (path.extension()? == "py").then(|| format!("{folder}__{name}"))
        });
        assert!(
            !here.is_empty(),
            "tests/fixtures/{folder}/ holds no .py fixture"
        );
        scripts.extend(here);
    }
    let snapshots = entries(&crate_dir().join("tests/snapshots"), |path| {
        let name = path.file_name()?.to_str()?;
        Some(
            name.strip_prefix(SNAPSHOT)?
                .strip_suffix(".snap")?
                .to_string(),
        )
    });
    assert_eq!(
        snapshots, scripts,
        "tests/snapshots/ and tests/fixtures/ differ"
    );
}

#[test]
fn the_passes_that_own_torch_arguments_are_registered() {
    let registered = registered();
    for name in TORCH_PASSES {
        assert!(
            registered.contains(*name),
            "{name} is not a registered pass"
        );
    }
}

#[test]
fn no_snapshot_holds_a_candidate_that_does_not_parse() {
    let dir = crate_dir().join("tests/snapshots");
    let mut offenders = Vec::new();
    for path in std::fs::read_dir(&dir)
        .expect("the snapshots")
        .map(|e| e.unwrap().path())
    {
        let text = std::fs::read_to_string(&path).expect("a readable snapshot");
        for line in text.lines().filter(|l| l.contains("[DOES NOT PARSE]")) {
            offenders.push(format!("{}: {line}", path.display()));
        }
    }
    assert!(
        offenders.is_empty(),
        "passes propose candidates that do not parse; make the pass check what it builds:\n{}",
        offenders.join("\n")
    );
}

/// Each `.rs` file under `src/` with its module path: `lib.rs` is `crate`, `passes/mod.rs` is
/// `passes`, `passes/helpers.rs` is `passes::helpers`.
fn modules() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, PathBuf>) {
        for path in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                walk(&path, &[prefix, &[name]].concat(), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = match (prefix.is_empty(), name.as_str()) {
                    (true, "lib") => "crate".to_string(),
                    (false, "mod") => prefix.join("::"),
                    _ => [prefix, &[name]].concat().join("::"),
                };
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&crate_dir().join("src"), &[], &mut out);
    out
}

/// The paths (`crate::edit::line_of`, `super::helpers`, `fold_dataclasses::misfit_constructions`)
/// in `code`, each as its segments.
fn paths(code: &str) -> Vec<Vec<&str>> {
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_')
            && (i == 0 || !ident(bytes[i - 1]))
            && !code[..i].ends_with("::");
        if !starts {
            i += 1;
            continue;
        }
        let mut segments = Vec::new();
        loop {
            let start = i;
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            segments.push(&code[start..i]);
            let more = code[i..].starts_with("::")
                && bytes
                    .get(i + 2)
                    .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_');
            if !more {
                break;
            }
            i += 2;
        }
        out.push(segments);
    }
    out
}

/// The modules each module imports from: every `crate::`, `super::` or child-module path in
/// its code before its tests (the first `#[cfg(test)]`), comment lines left out, resolved to
/// the longest module it names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules();
    let resolve = |from: &[&str]| -> String {
        (1..=from.len())
            .rev()
            .map(|n| from[..n].join("::"))
            .find(|m| modules.contains_key(m))
            .unwrap_or_else(|| "crate".to_string())
    };
    let mut graph = BTreeMap::new();
    for (module, path) in &modules {
        let text = std::fs::read_to_string(path).unwrap();
        let code: String = text
            .lines()
            .take_while(|l| l.trim() != "#[cfg(test)]")
            .filter(|l| !l.trim_start().starts_with("//"))
            .map(|l| format!("{l}\n"))
            .collect();
        let own: Vec<&str> = match module.as_str() {
            "crate" => Vec::new(),
            m => m.split("::").collect(),
        };
        // `super` of a file's module: its parent.
        let parent = &own[..own.len().saturating_sub(1)];
        let mut targets = BTreeSet::new();
        // A single segment is no path (`pub(crate)`, `mod helpers`).
        for segments in paths(&code).into_iter().filter(|s| s.len() > 1) {
            let absolute: Vec<&str> = match segments[0] {
                "crate" => segments[1..].to_vec(),
                "super" => [parent, &segments[1..]].concat(),
                "self" => [&own[..], &segments[1..]].concat(),
                child => {
                    let path = [&own[..], &[child]].concat();
                    if !modules.contains_key(&path.join("::")) {
                        continue;
                    }
                    [&own[..], &segments[..]].concat()
                }
            };
            let target = resolve(&absolute);
            if target != *module {
                targets.insert(target);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = imports();
    assert!(
        graph["passes"].contains("passes::inline_calls"),
        "{graph:?}"
    );
    assert!(
        graph["passes::unroll_loops"].contains("passes::helpers"),
        "{graph:?}"
    );
    // Depth-first: a module met again while it is still on the path closes a cycle.
    fn visit<'a>(
        module: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|m| *m == module) {
            panic!("an import cycle: {} -> {module}", path[at..].join(" -> "));
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for next in &graph[module] {
            visit(next, graph, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done);
    }
}
