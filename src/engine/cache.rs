//! Outcomes cached by content hash: in memory for the run, on disk across runs.
//!
//! The key names every input that can change an outcome: the candidate text, the
//! signature, the interpreter's identity, the environment knobs that change behaviour,
//! how many attempts a flaky repro gets, scrub's version and the Python code that runs the
//! candidates. Disk entries are written
//! atomically (a temporary file renamed into place); an entry that cannot be read back is
//! ignored and rewritten.

use std::fs;
use std::path::{Path, PathBuf};

use dashmap::DashMap;

use crate::engine::process::Outcome;

pub type Key = [u8; 32];

/// The Python sources that run candidates and their probes.
const RUNNERS: [&str; 4] = [
    crate::engine::zygote::SOURCE,
    crate::engine::kinds::SOURCE,
    crate::engine::probe::SOURCE,
    crate::engine::minifier::FORKED_QUERIES,
];

pub struct Cache {
    memory: DashMap<Key, Outcome>,
    dir: Option<PathBuf>,
    /// Everything but the text, hashed once.
    context: blake3::Hash,
}

impl Cache {
    /// `dir` is the on-disk cache, or `None` for memory only. `context` lists every input
    /// besides the candidate text.
    pub fn new(dir: Option<PathBuf>, context: &[&str]) -> Cache {
        let mut hasher = blake3::Hasher::new();
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        // The code that runs a candidate decides its outcome too: a worker changed within a
        // version (a fix of how deep a warm candidate may recurse) must not find the
        // outcomes of the one before.
        for runner in RUNNERS {
            hasher.update(runner.as_bytes());
        }
        for part in context {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        Cache {
            memory: DashMap::new(),
            dir,
            context: hasher.finalize(),
        }
    }

    /// A cache in memory only, whose keys differ from this one's by `tag`: outcomes that
    /// must not meet those kept so far.
    pub fn apart(&self, tag: &str) -> Cache {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.context.as_bytes());
        hasher.update(tag.as_bytes());
        Cache {
            memory: DashMap::new(),
            dir: None,
            context: hasher.finalize(),
        }
    }

    pub fn key(&self, text: &str) -> Key {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.context.as_bytes());
        hasher.update(text.as_bytes());
        *hasher.finalize().as_bytes()
    }

    pub fn get(&self, key: &Key) -> Option<Outcome> {
        if let Some(hit) = self.memory.get(key) {
            return Some(hit.clone());
        }
        let path = self.path(key)?;
        let outcome: Outcome = serde_json::from_slice(&fs::read(path).ok()?).ok()?;
        self.memory.insert(*key, outcome.clone());
        Some(outcome)
    }

    /// Keeps `outcome` under `key`; one killed over the memory limit is not kept, as it
    /// depends on the limit of the run, which the key does not name.
    pub fn put(&self, key: &Key, outcome: &Outcome) {
        if outcome.status == crate::engine::process::Status::OutOfMemory {
            return;
        }
        self.memory.insert(*key, outcome.clone());
        if let Some(path) = self.path(key) {
            // A cache that cannot be written only costs time later.
            let _ = write_atomically(
                &path,
                &serde_json::to_vec(outcome).expect("outcomes serialize"),
            );
        }
    }

    fn path(&self, key: &Key) -> Option<PathBuf> {
        let hex = blake3::Hash::from(*key).to_hex();
        Some(
            self.dir
                .as_ref()?
                .join(&hex[..2])
                .join(format!("{}.json", &hex[2..])),
        )
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("cache paths have a parent");
    fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The default on-disk cache: `$XDG_CACHE_HOME/scrub` or `~/.cache/scrub`.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("scrub"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::process::Status;
    use std::time::Duration;

    fn outcome() -> Outcome {
        Outcome {
            status: Status::Exited(1),
            stdout: String::new(),
            stderr: "KeyError: 'x'\n".into(),
            duration: Duration::from_millis(30),
            peak_rss: 0,
        }
    }

    #[test]
    fn an_entry_survives_a_new_cache_over_the_same_directory() {
        let dir = tempfile::tempdir().unwrap();
        let a = Cache::new(Some(dir.path().into()), &["KeyError", "python 3.11"]);
        let key = a.key("d = {}\nd['x']\n");
        a.put(&key, &outcome());
        let b = Cache::new(Some(dir.path().into()), &["KeyError", "python 3.11"]);
        assert_eq!(b.get(&key), Some(outcome()));
    }

    #[test]
    fn every_context_part_changes_the_key() {
        let a = Cache::new(None, &["KeyError", "python 3.11"]);
        let b = Cache::new(None, &["KeyError", "python 3.12"]);
        let c = Cache::new(None, &["KeyErro", "rpython 3.11"]);
        assert_ne!(a.key("x"), b.key("x"));
        assert_ne!(a.key("x"), c.key("x"));
        assert_ne!(a.key("x"), a.key("y"));
    }

    #[test]
    fn a_corrupt_entry_is_a_miss_and_is_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(Some(dir.path().into()), &[]);
        let key = cache.key("x");
        let path = cache.path(&key).unwrap();
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, b"{not json").unwrap();
        assert_eq!(cache.get(&key), None);
        cache.put(&key, &outcome());
        assert_eq!(
            Cache::new(Some(dir.path().into()), &[]).get(&key),
            Some(outcome())
        );
    }
}
