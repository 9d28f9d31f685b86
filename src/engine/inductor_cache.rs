//! One inductor cache per reduction, shared by every run of it and removed at its end.
//!
//! Inductor keeps what it compiled (FX graphs, kernels, the autograd graphs around them)
//! under `TORCHINDUCTOR_CACHE_DIR`, by default a folder of the user's temp directory that
//! every PyTorch program of theirs shares. A reduction gets a fresh one of its own instead,
//! so that its candidates compile what the original compiled only once, and nothing any
//! other program compiled (or a cached result of an older build) stands in for a compile of
//! the script: the baseline runs compile cold, as the reporter's run did. A user who names
//! a cache keeps it. Each warm candidate that compiled adds a line of inductor's counters
//! to `compiles.jsonl` in the cache (see `zygote.py`), which gives the hit rate.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// The file the warm candidates' counters go to, one JSON object a line.
const COUNTS: &str = "compiles.jsonl";

/// Where a warm worker's own first compile (`zygote.py`'s `warm_compiler`) is cached from one
/// reduction to the next, beside scrub's cache of outcomes. It compiles the same small function
/// each time: the first kernel a process compiles into an empty cache costs about 10 s, one
/// found there under a second, and the script's own compiles still go to the reduction's cache.
fn warm_dir() -> Option<PathBuf> {
    crate::engine::cache::default_dir().map(|dir| dir.join("inductor-warm"))
}

pub struct InductorCache {
    dir: tempfile::TempDir,
}

/// What the warm candidates' compiles found in the cache.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Warm candidates that compiled a graph.
    pub candidates: usize,
    /// Inductor's FX graph cache: graphs found compiled, and graphs compiled.
    pub hits: usize,
    pub misses: usize,
}

/// One candidate's line: `{"hit": H, "miss": M}`.
#[derive(Deserialize)]
struct Line {
    hit: usize,
    miss: usize,
}

impl InductorCache {
    /// A fresh cache for a reduction of `text`, or `None`: the script does not use torch,
    /// or the user chose a cache (`TORCHINDUCTOR_CACHE_DIR`).
    pub fn for_script(text: &str) -> Result<Option<InductorCache>> {
        if !text.contains("torch") || std::env::var_os("TORCHINDUCTOR_CACHE_DIR").is_some() {
            return Ok(None);
        }
        let dir = tempfile::Builder::new()
            .prefix("scrub-inductor-")
            .tempdir()
            .context("cannot create the reduction's inductor cache")?;
        Ok(Some(InductorCache { dir }))
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// What every run of the reduction adds to its environment.
    pub fn env(&self) -> Vec<(String, String)> {
        let path = |p: &Path| p.to_string_lossy().into_owned();
        let mut env = vec![
            ("TORCHINDUCTOR_CACHE_DIR".into(), path(self.path())),
            (
                "SCRUB_COMPILE_COUNTS".into(),
                path(&self.path().join(COUNTS)),
            ),
        ];
        if let Some(warm) = warm_dir() {
            env.push(("SCRUB_WARM_INDUCTOR_CACHE".into(), path(&warm)));
        }
        env
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        let text = std::fs::read_to_string(self.path().join(COUNTS)).unwrap_or_default();
        counts(&text)
    }
}

fn counts(text: &str) -> Counts {
    let mut total = Counts::default();
    // A line cut short by a candidate killed while writing it is skipped.
    for line in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
    {
        total.candidates += 1;
        total.hits += line.hit;
        total.misses += line.miss;
    }
    total
}

impl Counts {
    /// For the run log: `40 warm candidates compiled 57 graphs, 45 from the cache (79%)`.
    pub fn describe(&self) -> String {
        let graphs = self.hits + self.misses;
        if graphs == 0 {
            return "no warm candidate compiled a graph".into();
        }
        format!(
            "{} warm candidates compiled {graphs} graphs, {} from the cache ({:.0}%)",
            self.candidates,
            self.hits,
            100.0 * self.hits as f64 / graphs as f64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidates_lines_are_summed_and_a_cut_line_skipped() {
        let text = "{\"hit\": 1, \"miss\": 0}\n{\"hit\": 0, \"miss\": 2}\n{\"hit\": 3, \"mi";
        let total = counts(text);
        assert_eq!(
            total,
            Counts {
                candidates: 2,
                hits: 1,
                misses: 2
            }
        );
        assert_eq!(
            total.describe(),
            "2 warm candidates compiled 3 graphs, 1 from the cache (33%)"
        );
    }

    #[test]
    fn a_script_without_torch_keeps_the_users_cache() {
        assert!(InductorCache::for_script("print(1)\n").unwrap().is_none());
    }
}
