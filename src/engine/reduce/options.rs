//! What a reduction takes: [`Options`], with the [`Execution`] that several reductions can
//! share once [`connect`]ed.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::engine::interpreter::Interpreter;
use crate::engine::memory::Limit;
use crate::engine::ray::Ray;
use crate::engine::workers::detect_gpus;

/// Everything one reduction takes. [`Options::new`] gives the defaults; the command line,
/// `bench` and `issue` change what they name.
#[derive(Clone)]
pub struct Options {
    /// The script that fails; it is never modified.
    pub file: PathBuf,
    /// The failure to keep; derived from the original run when `None`.
    pub sig: Option<String>,
    /// Where to write the result (default: `file` with `.min.py`).
    pub output: Option<PathBuf>,
    /// Where and how the candidates run.
    pub execution: Execution,
    /// Seconds a candidate may run (default: 5 × the original's time, at least 1 s).
    pub timeout: Option<f64>,
    /// Stop once fewer lines remain; `None`: go on to the fixpoint.
    pub target_lines: Option<usize>,
    /// The on-disk cache of outcomes.
    pub cache: Cache,
    /// Where the run log goes (default: `scrub.out/` beside the output).
    pub run_dir: Option<PathBuf>,
    pub minifier: crate::engine::minifier::Mode,
    /// Print only warnings and errors.
    pub quiet: bool,
    /// Guard a mismatch with its control (see `verdict::Anchor`); off: the result is unguarded.
    pub control: bool,
    /// Fresh runs of a script made before the reduction, with the same interpreter (`scrub
    /// issue`'s reproduce step): when the script is the one reduced, its baseline counts
    /// them as its own first runs instead of running it again.
    pub prior: PriorRuns,
}

/// Fresh runs of `text` (see [`Options::prior`]).
#[derive(Clone, Debug, Default)]
pub struct PriorRuns {
    pub text: String,
    pub runs: Vec<crate::engine::process::Outcome>,
}

/// Where and how the candidates run: the part of the options that several reductions can
/// share, and that [`connect`] takes.
#[derive(Clone, Default)]
pub struct Execution {
    /// The interpreter (default: what `python3` on PATH resolves to).
    pub python: Option<PathBuf>,
    /// Candidates run at once (default: the cores, or the GPUs when there are any).
    pub jobs: Option<usize>,
    /// GPU ids to pin workers to, round robin (default: from nvidia-smi; empty: none).
    pub gpus: Option<Vec<u32>>,
    /// The memory a candidate's process group may hold.
    pub max_memory: Limit,
    pub backend: Backend,
}

/// What runs a candidate.
#[derive(Clone, Default)]
pub enum Backend {
    /// A warm worker that has already imported the script's modules, when the original
    /// fails the same way there as in a fresh process (else a fresh process): a candidate of
    /// a torch script whose original raised runs in the worker's own process, any other is a
    /// fork of it (see `Reduction::in_process`).
    #[default]
    Warm,
    /// A fork of a warm worker, every candidate.
    Fork,
    /// A warm worker that runs each candidate in its own process, not a fork of it, and
    /// puts back what the candidate changed: imports, CUDA and dynamo stay warm.
    InProcess,
    /// A fresh process, every candidate.
    Cold,
    /// A Ray actor, warm as a local worker is.
    Ray(Cluster),
}

/// The on-disk cache of outcomes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cache {
    /// The user cache directory, `scrub/`.
    #[default]
    Default,
    Dir(PathBuf),
    /// None on disk (the run still remembers its own outcomes).
    Off,
}

/// Where a reduction's candidates run when not on this machine.
#[derive(Clone)]
pub enum Cluster {
    /// Connect to the cluster at this address (`auto`: the one `ray start` left here).
    Address {
        address: String,
        /// GPUs each actor reserves (default: 1 when the cluster has GPUs, else 0).
        gpus_per_worker: Option<f64>,
    },
    /// A connection made once for several reductions (see [`connect`]); its actors are made
    /// again for each script, so that no case sees another's imports.
    Shared(Arc<Ray>),
}

impl Options {
    pub fn new(file: impl Into<PathBuf>) -> Options {
        Options {
            file: file.into(),
            sig: None,
            output: None,
            execution: Execution::default(),
            timeout: None,
            target_lines: None,
            cache: Cache::Default,
            run_dir: None,
            minifier: crate::engine::minifier::Mode::Auto,
            quiet: false,
            control: true,
            prior: PriorRuns::default(),
        }
    }
}

/// `execution` with its Ray cluster connected, once for several reductions with the same
/// interpreter and jobs: a [`Cluster::Shared`] in place of the address. Any other execution
/// comes back as it is.
pub fn connect(execution: &Execution) -> Result<Execution> {
    if !matches!(execution.backend, Backend::Ray(Cluster::Address { .. })) {
        return Ok(execution.clone());
    }
    let gpus = detect_gpus(execution.gpus.as_deref());
    let ray = execution.ray(&execution.interpreter()?, &gpus)?;
    Ok(Execution {
        backend: ray.map_or(Backend::Warm, |ray| Backend::Ray(Cluster::Shared(ray))),
        ..execution.clone()
    })
}

impl Execution {
    /// The Ray connection this names, made now for an address, under `interp` with the jobs
    /// that `gpus` give by default; `None` without Ray.
    pub(super) fn ray(&self, interp: &Interpreter, gpus: &[String]) -> Result<Option<Arc<Ray>>> {
        match &self.backend {
            Backend::Warm | Backend::Fork | Backend::InProcess | Backend::Cold => Ok(None),
            Backend::Ray(Cluster::Shared(ray)) => Ok(Some(Arc::clone(ray))),
            Backend::Ray(Cluster::Address {
                address,
                gpus_per_worker,
            }) => {
                if gpus_per_worker.is_some_and(|g| !(g >= 0.0 && g.is_finite())) {
                    bail!("--gpus-per-worker must be a number of GPUs, 0 or more");
                }
                let jobs = self.jobs(gpus);
                let ray = Ray::connect(&interp.path, address, jobs, *gpus_per_worker)?;
                Ok(Some(Arc::new(ray)))
            }
        }
    }

    /// The interpreter this names, or the default one.
    pub(super) fn interpreter(&self) -> Result<Interpreter> {
        match &self.python {
            Some(python) => Interpreter::probe(python),
            None => Interpreter::probe_default(),
        }
    }

    /// The jobs this asks for: by default one per core, or one per GPU when there are any
    /// (until the original's GPU memory is known: see `engine::gpu_memory`).
    pub(super) fn jobs(&self, gpus: &[String]) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.jobs
            .unwrap_or(if gpus.is_empty() { cores } else { gpus.len() })
    }
}
