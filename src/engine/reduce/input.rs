//! Before anything runs or is written: the input, the signature and the flags checked, the
//! interpreter probed, the workers made (on Ray, its actors started).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use scrub_reducers::python;

use super::{Clock, Options, Reduction};
use crate::engine::console::Console;
use crate::engine::inductor_cache::InductorCache;
use crate::engine::verdict::Signature;
use crate::engine::workers::{Workers, detect_gpus};

/// Repros are scripts; anything bigger is not one.
const MAX_BYTES: u64 = 1024 * 1024;
/// How long the original's runs may take without `--timeout`.
const ORIGINAL_TIMEOUT: Duration = Duration::from_secs(120);

impl<'o> Reduction<'o> {
    /// A reduction of what `options` name, every input checked.
    pub(super) fn new(options: &'o Options) -> Result<Reduction<'o>> {
        let clock = Clock::start();
        let text = read_script(&options.file)?;
        let sig = match &options.sig {
            Some(s) => Some(Signature::parse(s).map_err(|e| anyhow!("invalid --sig {s:?}: {e}"))?),
            None => None,
        };
        let execution = &options.execution;
        if execution.jobs == Some(0) {
            bail!("--jobs must be at least 1");
        }
        if options.timeout.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
            bail!("--timeout must be a positive number of seconds");
        }
        let interp = execution.interpreter()?;
        if let Some((line, msg)) = python::syntax_error(&text, interp.parser_version) {
            bail!(
                "{} has a syntax error at line {line} (Python {}): {msg}",
                options.file.display(),
                interp.version
            );
        }
        let output = output_path(options)?;
        let gpus = detect_gpus(execution.gpus.as_deref());
        // Connected with the interpreter and GPUs found above, not probed again.
        let ray = execution.ray(&interp, &gpus)?;
        let jobs = match &ray {
            Some(ray) => ray.jobs(),
            None => execution.jobs(&gpus),
        };
        let timeout = options.timeout.map(Duration::from_secs_f64);
        let mut workers = Workers::new(
            interp.path.clone(),
            timeout.unwrap_or(ORIGINAL_TIMEOUT),
            jobs,
            gpus,
        );
        workers.max_memory = crate::engine::memory::limit(execution.max_memory, jobs);
        if let Some(ray) = ray {
            // The actors start while the original's baseline runs here.
            ray.start(&options.file)?;
            (workers.backend, workers.remote) = (ray, true);
        } else {
            workers.inductor = InductorCache::for_script(&text)?.map(std::sync::Arc::new);
        }
        Ok(Reduction {
            options,
            start: text.clone(),
            text,
            sig,
            interp,
            output,
            workers,
            timeout,
            console: Console::new(options.quiet),
            prepared: Vec::new(),
            clock,
            jobs_note: None,
            early_warm: None,
        })
    }
}

/// Reads the input, refusing what cannot be a Python script.
fn read_script(path: &Path) -> Result<String> {
    let meta = fs::metadata(path)
        .map_err(|e| anyhow!("cannot read {}: {}", path.display(), io_reason(&e)))?;
    if meta.is_dir() {
        bail!("{} is a directory, not a Python script", path.display());
    }
    if meta.len() > MAX_BYTES {
        bail!(
            "{} is {:.1} MB; scrub takes scripts up to 1 MB",
            path.display(),
            meta.len() as f64 / 1e6
        );
    }
    let bytes =
        fs::read(path).map_err(|e| anyhow!("cannot read {}: {}", path.display(), io_reason(&e)))?;
    if bytes.contains(&0) {
        bail!("{} is a binary file, not a Python script", path.display());
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{} is not UTF-8 (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    if text.trim().is_empty() {
        bail!("{} is empty", path.display());
    }
    Ok(text)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// `-o`, or FILE with `.py` replaced by `.min.py`; never the input itself.
fn output_path(options: &Options) -> Result<PathBuf> {
    let output = match &options.output {
        Some(o) => o.clone(),
        None => with_suffix(&options.file, ".min.py"),
    };
    let same = match (fs::canonicalize(&options.file), fs::canonicalize(&output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        bail!(
            "the output {} is the input; scrub never writes its input, choose another -o",
            output.display()
        );
    }
    Ok(output)
}

/// `dir/repro.py` → `dir/repro<suffix>`.
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".min.py")
        .or_else(|| name.strip_suffix(".py"))
        .unwrap_or(&name);
    path.with_file_name(format!("{stem}{suffix}"))
}

pub(super) fn beside(path: &Path, name: &str) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from(name), |p| p.join(name))
}
