//! The command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::engine::memory::Limit;
use crate::engine::minifier::Mode;
use crate::engine::process;
use crate::engine::reduce::{self, Backend, Cache, Cluster, Execution, Finish, Options};

const EXIT_CODES: &str = "Exit codes:
  0    reduced, or already minimal
  1    the original does not fail with the signature
  2    bad input, or scrub failed
  130  interrupted (the best script so far is kept in a .partial.py file)";

/// Shrink a failing Python repro to the smallest script that still fails the same way.
#[derive(Debug, Parser)]
// The version names the commit built from when there is one (see build.rs).
#[command(name = "scrub", version = env!("SCRUB_VERSION"), after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Reduce FILE to the smallest script that still fails the same way.
    #[command(after_help = EXIT_CODES)]
    Reduce(ReduceArgs),
    /// Reduce every corpus case (exhaustively, with a cold cache) and print the figures.
    #[command(
        after_help = "Exit codes:\n  0    every case ran and met its bound\n  1    a case failed or missed its bound\n  2    bad input, or scrub failed"
    )]
    Bench(BenchArgs),
    /// Triage a GitHub issue: fetch, judge, check safety, reproduce, bisect, minimize, report.
    #[command(after_help = crate::issue::EXIT_CODES)]
    Issue(crate::issue::IssueArgs),
    /// Print the completion script for SHELL on stdout.
    #[command(after_help = "Examples:
  scrub completions bash > ~/.local/share/bash-completion/completions/scrub
  scrub completions zsh > ~/.zfunc/_scrub    (with fpath+=~/.zfunc before compinit)
  scrub completions fish > ~/.config/fish/completions/scrub.fish")]
    Completions(CompletionsArgs),
    /// Print the man page of scrub, or of one of its commands, on stdout as roff.
    #[command(after_help = "Examples:
  scrub man | man -l -
  scrub man > ~/.local/share/man/man1/scrub.1
  scrub man reduce > ~/.local/share/man/man1/scrub-reduce.1")]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print, scrub-COMMAND(1) [default: the page of scrub itself,
    /// scrub(1)].
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Corpus directories, each holding <case>/repro.py and <case>/case.toml [default: corpus].
    pub dirs: Vec<PathBuf>,

    /// The interpreter for every case; cases whose `needs` it lacks are skipped.
    #[arg(long)]
    pub python: Option<PathBuf>,

    /// Candidates run in parallel within a case.
    #[arg(short, long)]
    pub jobs: Option<usize>,

    /// Only cases whose name contains NAME (repeatable).
    #[arg(long, value_name = "NAME")]
    pub filter: Vec<String>,

    /// Write the figures as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Compare with an earlier --json file and mark every case that got bigger or slower.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    /// Draw the reduction curves (lines against candidate runs) as SVG.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Cold workers only (see `scrub reduce --cold`).
    #[arg(long)]
    pub cold: bool,

    /// Candidates in their warm worker's own process (see `scrub reduce --in-process`).
    #[arg(long, conflicts_with_all = ["cold", "ray"])]
    pub in_process: bool,

    /// Every candidate a fork of its warm worker (see `scrub reduce --fork`).
    #[arg(long, conflicts_with_all = ["cold", "ray", "in_process"])]
    pub fork: bool,

    /// Run every case's candidates on Ray actors (see `scrub reduce --ray`); each case starts
    /// its own.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "cold")]
    pub ray: Option<String>,

    /// Whether to run PyTorch's minifier first (see `scrub reduce --minifier`).
    #[arg(long, value_enum, default_value_t = Minifier::Auto)]
    pub minifier: Minifier,

    /// Use the on-disk cache instead of a cold one per case.
    #[arg(long)]
    pub warm_cache: bool,

    /// Print only the tables.
    #[arg(short, long)]
    pub quiet: bool,

    /// Run these reducers on every case too, under the case's own oracle, and set their
    /// results beside scrub's, each judged again by scrub's same-bug checks (comma-separated;
    /// each installed by `scripts/peers-venv PEER`).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "PEER,...",
        conflicts_with = "ray"
    )]
    pub vs: Vec<crate::peers::Peer>,

    /// The wall time each peer may spend on a case; one cut off reports its best so far.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, requires = "vs")]
    pub budget: f64,
}

#[derive(Debug, Args)]
pub struct ReduceArgs {
    /// The Python script that fails. It is never modified.
    pub file: PathBuf,

    /// The failure to keep: "Class: message substring", "Class", "pkg.mod.Class: substring",
    /// "signal:SIGSEGV" or "exit:N". Derived from the original run when left out.
    #[arg(long)]
    pub sig: Option<String>,

    /// Where to write the result [default: FILE with .min.py for .py].
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// The interpreter that runs every candidate, as `PY FILE`, run as given (a wrapper
    /// script works) [default: the executable that `python3` on PATH resolves to here, so that
    /// a launcher shim is not paid for on every candidate].
    #[arg(long)]
    pub python: Option<PathBuf>,

    /// Candidates run in parallel [default: the number of cores; with GPUs, as many on each
    /// as its free memory holds copies of the original's, at most the number of cores].
    #[arg(short, long)]
    pub jobs: Option<usize>,

    /// GPU ids to pin workers to, round robin, e.g. "0,1" [default: from nvidia-smi].
    #[arg(long, value_parser = gpu_ids)]
    pub gpus: Option<GpuIds>,

    /// Run the candidates on --jobs Ray actors of the cluster at ADDRESS (HOST:PORT, or auto
    /// for the one `ray start` left on this machine); the interpreter needs the ray package.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "cold")]
    pub ray: Option<String>,

    /// GPUs each Ray actor reserves [default: 1 when the cluster has GPUs, else 0].
    #[arg(long, value_name = "N", requires = "ray")]
    pub gpus_per_worker: Option<f64>,

    /// Seconds a candidate may run [default: 5 × the original's time, at least 1 s; a warm
    /// candidate's, 5 × the original's warm run]; also the limit for the original's own runs
    /// [default there: 120 s].
    #[arg(long)]
    pub timeout: Option<f64>,

    /// Stop early, once fewer than N non-blank, non-import lines remain: faster, but the
    /// result is not the smallest [default: go on to the fixpoint].
    #[arg(long, value_name = "N")]
    pub target_lines: Option<usize>,

    /// Go on to the fixpoint, whatever the size (the default; kept for scripts that name it).
    #[arg(long, conflicts_with = "target_lines", hide = true)]
    pub exhaustive: bool,

    /// The on-disk cache of outcomes [default: the user cache directory, scrub/].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Keep no outcomes on disk (the run still remembers its own).
    #[arg(long, conflicts_with = "cache_dir")]
    pub no_cache: bool,

    /// Where to keep the log of every run and the diff of the result [default: scrub.out/
    /// beside the output].
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,

    /// Run every candidate as a fresh `PY repro.py` instead of forking it from a warm worker
    /// that has already imported the script's modules.
    #[arg(long)]
    pub cold: bool,

    /// Run each candidate in a warm worker's own process instead of a fork of it, putting
    /// back what it changed after it: CUDA and dynamo stay warm between candidates. The
    /// default for a torch script whose failure is an exception.
    #[arg(long, conflicts_with_all = ["cold", "ray"])]
    pub in_process: bool,

    /// Fork every candidate from its warm worker, a torch script's too (the default for a
    /// script without torch, or one that crashes).
    #[arg(long, conflicts_with_all = ["cold", "ray", "in_process"])]
    pub fork: bool,

    /// Run PyTorch's minifier first on a repro that fails inside torch.compile, and reduce
    /// its result as a plain script.
    #[arg(long, value_enum, default_value_t = Minifier::Auto)]
    pub minifier: Minifier,

    /// The memory a candidate's process group may hold, e.g. "8G" or "none"; a candidate
    /// over it is killed and judged out of memory [default: 80 % of the machine's memory
    /// split between the jobs].
    #[arg(long, value_name = "SIZE", value_parser = memory_limit)]
    pub max_memory: Option<Limit>,

    /// Print one JSON object with the figures of the run on stdout at the end.
    #[arg(long)]
    pub json: bool,

    /// Print only warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,

    /// Count a candidate that fails the same way even when its control (the suspect,
    /// `torch.compile` or CUDA or the script's own implementation, replaced by the reference)
    /// does not pass, or cannot be built; the result is marked unguarded.
    #[arg(long)]
    pub no_control: bool,
}

impl ReduceArgs {
    /// Runs `scrub reduce`: the exit code (see [`EXIT_CODES`]), and with `--json` the figures
    /// on stdout.
    pub fn run(&self) -> Result<ExitCode> {
        let finish = match reduce::reduce(&self.options()) {
            Ok(finish) => finish,
            // Outside the loop (the original's runs, the final check) there is no result yet.
            Err(e) if e.is::<process::Interrupted>() => {
                eprintln!("scrub: interrupted; nothing was written");
                return Ok(ExitCode::from(130));
            }
            Err(e) => return Err(e),
        };
        Ok(match finish {
            Finish::Reduced(summary) => {
                if self.json {
                    println!("{}", serde_json::to_string(&summary)?);
                }
                ExitCode::SUCCESS
            }
            Finish::DoesNotFail => ExitCode::from(1),
            Finish::Interrupted(_) => ExitCode::from(130),
        })
    }

    /// The engine's options for these arguments.
    pub fn options(&self) -> Options {
        Options {
            sig: self.sig.clone(),
            output: self.output.clone(),
            execution: Execution {
                python: self.python.clone(),
                jobs: self.jobs,
                gpus: self.gpus.clone().map(|ids| ids.0),
                max_memory: self.max_memory.unwrap_or_default(),
                backend: Place {
                    cold: self.cold,
                    in_process: self.in_process,
                    fork: self.fork,
                    ray: self.ray.as_deref(),
                }
                .backend(self.gpus_per_worker),
            },
            timeout: self.timeout,
            target_lines: self.target_lines,
            // Clap keeps `--no-cache` from `--cache-dir`.
            cache: match (&self.cache_dir, self.no_cache) {
                (_, true) => Cache::Off,
                (Some(dir), false) => Cache::Dir(dir.clone()),
                (None, false) => Cache::Default,
            },
            run_dir: self.run_dir.clone(),
            minifier: self.minifier.into(),
            quiet: self.quiet,
            control: !self.no_control,
            ..Options::new(&self.file)
        }
    }
}

impl BenchArgs {
    /// Where and how every case's candidates run.
    pub fn execution(&self) -> Execution {
        Execution {
            python: self.python.clone(),
            jobs: self.jobs,
            backend: Place {
                cold: self.cold,
                in_process: self.in_process,
                fork: self.fork,
                ray: self.ray.as_deref(),
            }
            .backend(None),
            ..Execution::default()
        }
    }
}

/// The flags that say where candidates run: `--cold`, `--in-process`, `--fork` and `--ray`
/// (clap lets at most one of them through).
struct Place<'a> {
    cold: bool,
    in_process: bool,
    fork: bool,
    ray: Option<&'a str>,
}

impl Place<'_> {
    /// The back end these flags name; without any, warm workers that choose.
    fn backend(&self, gpus_per_worker: Option<f64>) -> Backend {
        match self.ray {
            Some(address) => Backend::Ray(Cluster::Address {
                address: address.to_string(),
                gpus_per_worker,
            }),
            None if self.cold => Backend::Cold,
            None if self.in_process => Backend::InProcess,
            None if self.fork => Backend::Fork,
            None => Backend::Warm,
        }
    }
}

/// `--gpus`: GPU ids, comma separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuIds(pub Vec<u32>);

fn gpu_ids(text: &str) -> Result<GpuIds, String> {
    text.split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(|id| {
            id.parse::<u32>()
                .map_err(|_| format!("{id:?} is not a GPU id: give numbers, e.g. 0,1"))
        })
        .collect::<Result<_, _>>()
        .map(GpuIds)
}

fn memory_limit(text: &str) -> Result<Limit, String> {
    Limit::parse(text).map_err(|e| e.to_string())
}

/// `--minifier`: whether to run PyTorch's minifier first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Minifier {
    /// Never: scrub's passes alone.
    Never,
    /// When the original fails inside `torch.compile` (a dynamo backend or inductor
    /// exception, a signal in a compiled script, a mismatch of a compiled result).
    Auto,
    /// Whenever the script calls `torch.compile`.
    Always,
}

impl From<Minifier> for Mode {
    fn from(m: Minifier) -> Mode {
        match m {
            Minifier::Never => Mode::Never,
            Minifier::Auto => Mode::Auto,
            Minifier::Always => Mode::Always,
        }
    }
}
