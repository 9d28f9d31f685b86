//! Puts the commit scrub is built from into its version, `scrub 0.1.0 (abc1234)`; outside a
//! git checkout of scrub, or without git, the version is `scrub 0.1.0` alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let version = match commit(&root) {
        Some(hash) => format!("{version} ({hash})"),
        None => version,
    };
    println!("cargo:rustc-env=SCRUB_VERSION={version}");
}

/// The short hash of HEAD in the checkout at `root`, watching the files that move with it.
fn commit(root: &Path) -> Option<String> {
    // Only scrub's own checkout counts: a copy of the source inside another repository
    // (`cargo package` builds under target/package/, a vendored tree) is not that commit.
    let top = git(root, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(top).ok()? != std::fs::canonicalize(root).ok()? {
        return None;
    }
    // HEAD moves on a checkout, the branch it names on a commit. Git says where they are,
    // since a worktree keeps its HEAD apart from the shared refs.
    watch(root, "HEAD");
    let branch = git(root, &["rev-parse", "--symbolic-full-name", "HEAD"]).unwrap_or_default();
    if branch.starts_with("refs/") && !watch(root, &branch) {
        // A packed branch: its commit lives in packed-refs until a commit writes it loose
        // into the directory above it.
        watch(root, "packed-refs");
        if let Some((dir, _)) = branch.rsplit_once('/') {
            watch(root, dir);
        }
    }
    git(root, &["rev-parse", "--short", "HEAD"])
}

/// Reruns this script when the git file `name` changes; false when it does not exist, since
/// cargo would take a missing path as changed on every build.
fn watch(root: &Path, name: &str) -> bool {
    let Some(path) = git(root, &["rev-parse", "--git-path", name]) else {
        return false;
    };
    let path = root.join(path);
    let exists = path.exists();
    if exists {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    exists
}

/// `git ARGS` run in `dir`: its trimmed output, or `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}
