//! `scrub reduce`: check the input and the original failure, reduce, verify, write.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use scrub_reducers::python::count_statements;
use scrub_reducers::{PASSES, StopReason, count_lines, python};
use serde::Serialize;

use crate::engine::cache::{self, Cache};
use crate::engine::console::Console;
use crate::engine::interpreter::Interpreter;
use crate::engine::oracle::{Control, ProcessOracle};
use crate::engine::process::{self, Outcome, Status};
use crate::engine::ray::Ray;
use crate::engine::rundir::RunDir;
use crate::engine::verdict::{Anchor, Signature, Verdict, describe};
use crate::engine::workers::{Workers, detect_gpus};
use scrub_reducers::control::Suspect;
use scrub_reducers::fix::Fix;

/// Repros are scripts; anything bigger is not one.
const MAX_BYTES: u64 = 1024 * 1024;
const ORIGINAL_TIMEOUT: Duration = Duration::from_secs(120);
pub(crate) const MIN_TIMEOUT: Duration = Duration::from_secs(1);
/// A true repro may be missed by a flaky run at most this often.
const MISS_RATE: f64 = 0.05;
const MAX_ATTEMPTS: usize = 20;

/// How a reduction ended, for the command line and for other callers (bench).
pub enum Finish {
    Reduced(Box<Summary>),
    /// The original does not fail with the signature; the reason has been printed.
    DoesNotFail,
    /// Ctrl-C: the best script so far is in this file.
    Interrupted(PathBuf),
}

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
    /// The interpreter (default: what `python3` on PATH resolves to).
    pub python: Option<PathBuf>,
    /// Candidates run at once (default: the cores, or the GPUs when there are any).
    pub jobs: Option<usize>,
    /// GPU ids to pin workers to, `"0,1"` (default: from nvidia-smi).
    pub gpus: Option<String>,
    /// Run the candidates on a Ray cluster.
    pub ray: Option<Cluster>,
    /// Seconds a candidate may run (default: 5 × the original's time, at least 1 s).
    pub timeout: Option<f64>,
    /// Stop once fewer lines remain; `None`: go on to the fixpoint.
    pub target_lines: Option<usize>,
    /// The on-disk cache (default: the user cache directory); unused with `no_cache`.
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    /// Where the run log goes (default: `scrub.out/` beside the output).
    pub run_dir: Option<PathBuf>,
    /// Every candidate a fresh process instead of a fork of a warm worker.
    pub cold: bool,
    pub minifier: crate::engine::minifier::Mode,
    /// The memory a candidate may hold, `"8G"` or `"none"` (default: a share of the machine's).
    pub max_memory: Option<String>,
    /// Print only warnings and errors.
    pub quiet: bool,
    /// Guard a mismatch with its control (see `verdict::Anchor`); off: the result is unguarded.
    pub control: bool,
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
            python: None,
            jobs: None,
            gpus: None,
            ray: None,
            timeout: None,
            target_lines: None,
            cache_dir: None,
            no_cache: false,
            run_dir: None,
            cold: false,
            minifier: crate::engine::minifier::Mode::Auto,
            max_memory: None,
            quiet: false,
            control: true,
        }
    }
}

/// Connects to the cluster that `options` names, once, for several reductions with the same
/// interpreter and jobs: the [`Cluster::Shared`] to put in each one's options.
pub fn connect(options: &Options) -> Result<Option<Cluster>> {
    if !matches!(options.ray, Some(Cluster::Address { .. })) {
        return Ok(options.ray.clone());
    }
    let gpus = detect_gpus(options.gpus.as_deref());
    let ray = ray_of(options, &interpreter(options)?, &gpus)?;
    Ok(ray.map(Cluster::Shared))
}

/// The Ray connection `options` names, made now for an address, under `interp` with the jobs
/// that `gpus` give by default; `None` without `--ray`.
fn ray_of(options: &Options, interp: &Interpreter, gpus: &[String]) -> Result<Option<Arc<Ray>>> {
    match &options.ray {
        None => Ok(None),
        Some(Cluster::Shared(ray)) => Ok(Some(Arc::clone(ray))),
        Some(Cluster::Address {
            address,
            gpus_per_worker,
        }) => {
            if gpus_per_worker.is_some_and(|g| !(g >= 0.0 && g.is_finite())) {
                bail!("--gpus-per-worker must be a number of GPUs, 0 or more");
            }
            let jobs = jobs_of(options, gpus);
            let ray = Ray::connect(&interp.path, address, jobs, *gpus_per_worker)?;
            Ok(Some(Arc::new(ray)))
        }
    }
}

/// The figures of one reduction, as `--json` prints them.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub input: PathBuf,
    pub output: PathBuf,
    pub run_dir: PathBuf,
    pub signature: String,
    /// What else the signature keeps, when derived from the original run: the inner error or
    /// detail lines (`and: …`) and the cause it was raised from (`cause: …`), abstracted.
    pub signature_names: Vec<String>,
    /// The library functions that called back into the script on the original's failing
    /// stack (a `vmap`, a pool's worker), which every accepted candidate kept.
    pub through: Vec<String>,
    /// Candidate runs that failed with the class but not the rest of the signature or anchor.
    pub near_misses: usize,
    /// Where the original failed outside the script (`torch/_dynamo/exc.py:unimplemented`),
    /// which every accepted candidate kept; `None` when the script raised it itself.
    pub site: Option<String>,
    /// The suspect whose control every accepted candidate passed (`torch.compile → eager`);
    /// `None` when no control guarded the reduction.
    pub control: Option<&'static str>,
    /// The edit of the script's own code that made the original pass and every accepted
    /// candidate pass too (`X - 1 → X`), when one was found.
    pub fix: Option<String>,
    /// A mismatch reduced without a control: nothing checked that the bug stayed.
    pub unguarded: bool,
    /// How the control was chosen, or why there is none (as `run.log` says it).
    pub control_note: String,
    /// Control runs, counted in `oracle_calls` too.
    pub control_runs: usize,
    /// Whether candidates were forked from warm workers: the original failed the same way
    /// there as in a fresh process (else, or with `--cold`, every run was a fresh process).
    pub warm: bool,
    /// Candidates run at once, and the GPU ids the workers were pinned to (round robin).
    pub jobs: usize,
    pub gpus: Vec<String>,
    pub original_lines: usize,
    pub original_bytes: usize,
    pub final_lines: usize,
    pub final_bytes: usize,
    pub oracle_calls: usize,
    pub cache_hits: usize,
    pub wall_seconds: f64,
    pub stop_reason: &'static str,
    /// Whether the loop's own result held in a fresh run (else an earlier one was written).
    pub verified: bool,
    /// Statements at every level, before and after.
    pub original_statements: usize,
    pub final_statements: usize,
    pub rounds: usize,
    pub attempts_per_candidate: usize,
    pub reproduce_ratio: String,
    pub passes: Vec<PassRow>,
    /// (candidate runs so far, non-blank lines) after every accepted step.
    pub trace: Vec<(usize, usize)>,
    /// For a PyTorch repro: the simplifications the failure survived.
    pub ladder: Vec<crate::engine::ladder::Rung>,
    /// The rewrites made before the reduction, which it starts from (see [`prepare`]).
    pub prepared: Vec<String>,
    /// The memory a candidate's process group could hold, in bytes (`None`: no limit).
    pub max_memory: Option<u64>,
    /// What ran before scrub's passes (PyTorch's minifier), each with its figures.
    pub stages: Vec<crate::engine::minifier::Stage>,
    /// The most memory the original's runs and the largest candidate run held, in bytes.
    pub peak_rss_original: u64,
    pub peak_rss_candidate: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassRow {
    pub name: &'static str,
    pub candidates: usize,
    pub accepted: usize,
    pub bytes_removed: usize,
    pub oracle_seconds: f64,
    /// Pumps that grew the script and paid off after the next round, and those rolled back.
    pub pumps_kept: usize,
    pub pumps_rolled_back: usize,
}

/// Runs one reduction for the command line: the exit code, and with `json` the figures on
/// stdout.
pub fn run(options: &Options, json: bool) -> Result<ExitCode> {
    let finish = match reduce(options) {
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
            if json {
                println!("{}", serde_json::to_string(&summary)?);
            }
            ExitCode::SUCCESS
        }
        Finish::DoesNotFail => ExitCode::from(1),
        Finish::Interrupted(_) => ExitCode::from(130),
    })
}

/// Everything `reduce` needs once the inputs are checked.
pub(crate) struct Setup {
    pub(crate) text: String,
    pub(crate) sig: Option<Signature>,
    pub(crate) interp: Interpreter,
    output: PathBuf,
    pub(crate) workers: Workers,
    /// `--timeout`, which also bounds the original's runs.
    pub(crate) timeout: Option<Duration>,
}

/// Checks every input before anything runs or is written.
pub(crate) fn setup(args: &Options) -> Result<Setup> {
    let text = read_script(&args.file)?;
    let sig = match &args.sig {
        Some(s) => Some(Signature::parse(s).map_err(|e| anyhow!("invalid --sig {s:?}: {e}"))?),
        None => None,
    };
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    if args.timeout.is_some_and(|t| !(t > 0.0 && t.is_finite())) {
        bail!("--timeout must be a positive number of seconds");
    }
    let interp = interpreter(args)?;
    if let Some((line, msg)) = python::syntax_error(&text, interp.parser_version) {
        bail!(
            "{} has a syntax error at line {line} (Python {}): {msg}",
            args.file.display(),
            interp.version
        );
    }
    let output = output_path(args)?;
    let gpus = detect_gpus(args.gpus.as_deref());
    // Connected with the interpreter and GPUs found above, not probed again.
    let ray = ray_of(args, &interp, &gpus)?;
    let jobs = match &ray {
        Some(ray) => ray.jobs(),
        None => jobs_of(args, &gpus),
    };
    let timeout = args.timeout.map(Duration::from_secs_f64);
    let mut workers = Workers::new(
        interp.path.clone(),
        timeout.unwrap_or(ORIGINAL_TIMEOUT),
        jobs,
        gpus,
    );
    workers.max_memory = crate::engine::memory::limit(args.max_memory.as_deref(), jobs)
        .map_err(|e| anyhow!("invalid --max-memory: {e}"))?;
    if let Some(ray) = ray {
        if !args.cold {
            // The actors start while the original's baseline runs here.
            ray.start(&args.file)?;
        }
        (workers.backend, workers.remote) = (ray, true);
    }
    Ok(Setup {
        text,
        sig,
        interp,
        output,
        workers,
        timeout,
    })
}

/// The interpreter `options` names, or the default one.
fn interpreter(options: &Options) -> Result<Interpreter> {
    match &options.python {
        Some(python) => Interpreter::probe(python),
        None => Interpreter::probe_default(),
    }
}

/// The jobs `options` asks for: by default one per core, or one per GPU when there are any.
fn jobs_of(options: &Options, gpus: &[String]) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    options
        .jobs
        .unwrap_or(if gpus.is_empty() { cores } else { gpus.len() })
}

/// Checks the inputs and the original failure, reduces, verifies the result and writes it.
pub fn reduce(args: &Options) -> Result<Finish> {
    let Setup {
        text,
        sig,
        interp,
        output,
        mut workers,
        timeout,
    } = setup(args)?;
    let console = Console::new(args.quiet);

    // The original must fail the same way, and an empty script must not. One that runs out of
    // memory here first is tried with its sizes shrunk (and reduced from there).
    let mut start = text.clone();
    let mut prepared = Vec::new();
    let base = match baseline(&text, sig.clone(), &workers, &console)? {
        BaselineEnd::Fails(base) => *base,
        BaselineEnd::DoesNotFail => return Ok(Finish::DoesNotFail),
        BaselineEnd::OutOfMemory => {
            let small = scrub_reducers::Script::parse(text.as_str(), interp.parser_version)
                .and_then(|s| scrub_reducers::prepare::small_sizes(&s));
            let Some(small) = small else {
                eprintln!(
                    "scrub: the original runs out of memory here, and has no tensor sizes to shrink"
                );
                return Ok(Finish::DoesNotFail);
            };
            console.say("the original runs out of memory here; trying it with sizes of 8 or less");
            match baseline(&small, sig, &workers, &console)? {
                BaselineEnd::Fails(base) => {
                    let base = *base;
                    start = small;
                    prepared.push(
                        "shrank every tensor size to 8 or less: the original ran out of memory"
                            .to_string(),
                    );
                    base
                }
                BaselineEnd::OutOfMemory => {
                    eprintln!(
                        "scrub: the original runs out of memory here, even with sizes of 8 or less"
                    );
                    return Ok(Finish::DoesNotFail);
                }
                BaselineEnd::DoesNotFail => return Ok(Finish::DoesNotFail),
            }
        }
    };
    // A flaky torch repro is tried with a fixed seed; when that makes it fail every time, the
    // reduction starts from the seeded script.
    let (base, sig) = match stabilised(&start, &base, &interp, &workers, &console)? {
        Some((seeded, stable)) => {
            prepared.push(format!(
                "inserted torch.manual_seed(0): the original failed the same way {} times, the seeded one {}",
                base.ratio, stable.ratio
            ));
            start = seeded;
            let sig = stable.signature.clone();
            (stable, sig)
        }
        None => {
            let sig = base.signature.clone();
            (base, sig)
        }
    };
    workers.timeout = timeout.unwrap_or((base.duration * 5).max(MIN_TIMEOUT));
    let guard = control(&start, &base.outcome, args, &interp, &workers, &console)?;
    // The values of an assertion are kept when nothing else tells its bug from another
    // (pure Python: no reference to compare with).
    let anchor = Anchor::of(
        &start,
        &base.outcome,
        guard.control.is_none() && !start.contains("torch"),
    );
    if sig.judge(&run_one("", &workers)?) == Verdict::Same {
        bail!("the signature {sig} also matches an empty script; give a more specific --sig");
    }
    let warm = !args.cold && warm_up(&start, &args.file, &sig, &mut workers, &console)?;

    let run_dir = RunDir::create(
        &args
            .run_dir
            .clone()
            .unwrap_or_else(|| beside(&output, "scrub.out")),
    )?;
    run_dir.log(format!(
        "input: {}\nsignature: {sig}{}\ninterpreter: {}",
        args.file.display(),
        sig.names()
            .iter()
            .map(|n| format!("\n  {n}"))
            .collect::<String>(),
        interp.identity()
    ));
    run_dir.log(format!(
        "control: {}{}",
        guard.note,
        if guard.unguarded {
            "; the result is unguarded"
        } else {
            ""
        }
    ));
    run_dir.log(format!(
        "workers: {} {}, {}",
        workers.jobs,
        if warm { "warm" } else { "cold" },
        if workers.gpus.is_empty() {
            "no GPU pinning".to_string()
        } else {
            format!(
                "pinned round robin to CUDA_VISIBLE_DEVICES {}",
                workers.gpus.join(",")
            )
        }
    ));
    run_dir.log(format!(
        "site: {}",
        anchor
            .site
            .as_deref()
            .unwrap_or("none (the script raises it itself)")
    ));
    if !anchor.through.is_empty() {
        run_dir.log(format!(
            "called back through: {} (a candidate without it is a near miss)",
            anchor.through.join(", ")
        ));
    }
    if !anchor.computed.is_empty() {
        run_dir.log(format!(
            "computed values kept: {}",
            anchor.computed.join(", ")
        ));
    }
    run_dir.log(format!(
        "attempts per candidate: {} (original reproduced {})",
        base.attempts, base.ratio
    ));
    run_dir.log(format!(
        "timeout per candidate: {:.1} s, jobs: {}",
        workers.timeout.as_secs_f64(),
        workers.jobs
    ));
    run_dir.log(format!(
        "memory per candidate: {}; the original held {}",
        workers
            .max_memory
            .map_or("no limit".to_string(), crate::engine::memory::human),
        crate::engine::memory::human(base.peak_rss)
    ));
    run_dir.log(format!(
        "workers: {}",
        if warm {
            workers.backend.describe()
        } else {
            "cold".to_string()
        }
    ));
    // The minifier isolates a compiled graph: of no use when the control shows that the bug is
    // elsewhere, nor for an original already under the target size.
    let skip = match guard.control.as_ref().map(|c| c.suspect) {
        Some(suspect)
            if suspect != Suspect::Compile
                && args.minifier == crate::engine::minifier::Mode::Auto =>
        {
            Some(format!(
                "the control is {}: the compile is not the suspect",
                suspect.as_str()
            ))
        }
        _ => args
            .target_lines
            .filter(|t| count_lines(&start) < *t)
            .map(|_| "the original is already under the target size".to_string()),
    };
    let (start, stages) = minifier_stage(
        args.minifier,
        skip,
        start,
        &sig,
        &anchor,
        &base,
        &interp,
        &workers,
        &run_dir,
        &console,
        &mut prepared,
    )?;
    let cache_dir = if args.no_cache {
        None
    } else {
        args.cache_dir.clone().or_else(cache::default_dir)
    };
    // The attempts per candidate are left out of the key, so that a flaky repro's second run
    // finds its verdicts whatever its own baseline measured.
    let cache = Cache::new(
        cache_dir,
        &[&sig.to_string(), &interp.identity(), &env_knobs()],
    );
    let mut oracle = ProcessOracle::new(
        &start,
        &workers,
        &cache,
        &sig,
        &anchor,
        base.attempts,
        &run_dir,
        &console,
    );
    // What no candidate may lose is counted on the script the passes start from.
    let control = guard.control.as_ref().map(|c| c.starting_from(&start));
    oracle.control = control.clone();
    if let Some(control) = &control
        && control.suspect == Suspect::Custom
    {
        run_dir.log(format!(
            "reference kept: {}",
            control.reference_calls.join(", ")
        ));
    }
    let options = scrub_reducers::Options {
        version: interp.parser_version,
        target_lines: args.target_lines,
        in_flight: workers.jobs,
        message: match &sig {
            Signature::Exception { substring, .. } => substring.clone(),
            _ => None,
        },
        ..Default::default()
    };
    let (start, seeded) = prepare(
        start,
        &mut prepared,
        &options,
        &mut oracle,
        &console,
        &run_dir,
    );
    let mut reduction = scrub_reducers::reduce(&start, PASSES, &mut oracle, &options)?;
    if seeded && reduction.stop != StopReason::Interrupted {
        without_seed(
            &mut reduction,
            &sig,
            &anchor,
            &workers,
            &options,
            &mut prepared,
            &mut oracle,
            &console,
            &run_dir,
        )?;
    }
    console.finish();

    if reduction.stop == StopReason::Interrupted {
        let partial = with_suffix(&output, ".partial.py");
        fs::write(&partial, &reduction.text)
            .with_context(|| format!("cannot write {}", partial.display()))?;
        eprintln!(
            "scrub: interrupted; the best script so far ({} lines, not re-verified) is in {}",
            count_lines(&reduction.text),
            partial.display()
        );
        return Ok(Finish::Interrupted(partial));
    }

    // The final check is always a cold process.
    let history = std::mem::take(&mut oracle.history);
    let (calls, hits, trace) = (oracle.calls, oracle.hits, std::mem::take(&mut oracle.trace));
    let near_misses = oracle.near_misses;
    let mut control_calls = oracle.control_calls;
    let oracle_seconds = std::mem::take(&mut oracle.oracle_seconds);
    let peak_rss_candidate = oracle.peak_rss;
    workers.warm = None;
    workers.stop_zygotes();
    // Comments and blank lines alone do not make a repro smaller: it was already minimal.
    let only_cosmetic = prepared.is_empty()
        && reduction
            .passes
            .iter()
            .filter(|p| p.accepted > 0)
            .all(|p| scrub_reducers::pass::by_name(p.name).is_some_and(|p| p.is_cosmetic()));
    // The result is what a reader pastes: no `# scrub:` directive stays in it, the user's own
    // included (each candidate is verified without them).
    let unmarked = |t: &str| {
        scrub_reducers::Script::parse(t, interp.parser_version)
            .map_or_else(|| t.to_string(), |s| s.unmarked())
    };
    let history: Vec<String> = if only_cosmetic {
        vec![text.clone()]
    } else {
        history
    };
    let history: Vec<String> = history.iter().map(|t| unmarked(t)).collect();
    let (result, verified) = if only_cosmetic && history[0] == text {
        (text.clone(), true)
    } else {
        verified_result(
            &history,
            &sig,
            &anchor,
            control.as_ref(),
            base.attempts,
            &workers,
            &console,
        )?
    };
    fs::write(&output, &result).with_context(|| format!("cannot write {}", output.display()))?;
    let diff = similar::TextDiff::from_lines(&text, &result)
        .unified_diff()
        .header(
            &args.file.display().to_string(),
            &output.display().to_string(),
        )
        .to_string();
    run_dir.write("result.diff", &diff)?;

    // The rungs the result still stands on run stepped off it, cold like the final check
    // (the loop has usually tried them: the cache then answers).
    let mut rung_oracle = ProcessOracle::new(
        &result,
        &workers,
        &cache,
        &sig,
        &anchor,
        base.attempts,
        &run_dir,
        &console,
    );
    rung_oracle.pass = "ladder".to_string();
    rung_oracle.control = control;
    let ladder = crate::engine::ladder::verdict(&text, &result, interp.parser_version, &mut |t| {
        scrub_reducers::Oracle::judge(&mut rung_oracle, &[t.to_string()])
            .ok()
            .map(|v| v[0])
    });
    let (calls, hits) = (calls + rung_oracle.calls, hits + rung_oracle.hits);
    let near_misses = near_misses + rung_oracle.near_misses;
    control_calls += rung_oracle.control_calls;
    for rung in &ladder {
        console.say(format!("ladder: {}", rung.meaning));
        run_dir.log(format!(
            "ladder: {} {}: {}",
            rung.rung,
            rung.state.as_str(),
            rung.meaning
        ));
    }
    let wall = console.elapsed().as_secs_f64();
    let stop_reason = if result == text {
        "already_minimal"
    } else {
        reduction.stop.as_str()
    };
    run_dir.log(format!(
        "stop: {stop_reason}; runs: {}; cache hits: {}; near misses: {near_misses}; {wall:.1} s; the largest candidate held {}",
        calls,
        hits,
        crate::engine::memory::human(peak_rss_candidate)
    ));
    run_dir.log(format!(
        "speculative runs made stale by a win: {}",
        reduction.speculative_wasted
    ));
    console.say(format!(
        "{}: {} → {} lines, {} → {} bytes; {} runs, {} cache hits, {wall:.1} s; wrote {}",
        args.file.display(),
        count_lines(&text),
        count_lines(&result),
        text.len(),
        result.len(),
        calls,
        hits,
        output.display()
    ));
    Ok(Finish::Reduced(Box::new(Summary {
        input: args.file.clone(),
        output,
        run_dir: run_dir.path().to_path_buf(),
        signature: sig.to_string(),
        signature_names: sig.names(),
        through: anchor.through.clone(),
        near_misses,
        site: anchor.site.clone(),
        control: guard.control.as_ref().map(|c| c.suspect.as_str()),
        fix: guard
            .control
            .as_ref()
            .and_then(|c| c.fix.as_ref().map(Fix::describe)),
        unguarded: guard.unguarded,
        control_note: guard.note.clone(),
        control_runs: control_calls,
        warm,
        jobs: workers.jobs,
        gpus: workers.gpus.clone(),
        original_lines: count_lines(&text),
        original_bytes: text.len(),
        final_lines: count_lines(&result),
        final_bytes: result.len(),
        oracle_calls: calls,
        cache_hits: hits,
        wall_seconds: (wall * 1000.0).round() / 1000.0,
        stop_reason,
        verified,
        original_statements: count_statements(&text, interp.parser_version),
        final_statements: count_statements(&result, interp.parser_version),
        rounds: reduction.rounds,
        attempts_per_candidate: base.attempts,
        reproduce_ratio: base.ratio,
        passes: reduction
            .passes
            .iter()
            .map(|p| PassRow {
                name: p.name,
                candidates: p.candidates,
                accepted: p.accepted,
                bytes_removed: p.bytes_removed,
                oracle_seconds: oracle_seconds.get(p.name).copied().unwrap_or(0.0),
                pumps_kept: p.pumps_kept,
                pumps_rolled_back: p.pumps_rolled_back,
            })
            .collect(),
        trace,
        ladder,
        prepared,
        stages,
        max_memory: workers.max_memory,
        peak_rss_original: base.peak_rss,
        peak_rss_candidate,
    })))
}

/// The script the reduction starts from after PyTorch's minifier (see `minifier.rs`), when
/// `mode` and the failure call for it, nothing says to `skip` it, and its plain script fails
/// the same way as candidates run; else `start` itself. Also what the stage did, for the log
/// and `--json`.
#[allow(clippy::too_many_arguments)]
fn minifier_stage(
    mode: crate::engine::minifier::Mode,
    skip: Option<String>,
    start: String,
    sig: &Signature,
    anchor: &Anchor,
    base: &Baseline,
    interp: &Interpreter,
    workers: &Workers,
    run_dir: &RunDir,
    console: &Console,
    prepared: &mut Vec<String>,
) -> Result<(String, Vec<crate::engine::minifier::Stage>)> {
    let plan = if let Some(why) = skip {
        Err(why)
    } else {
        crate::engine::minifier::plan(mode, &start, sig, &base.outcome.stderr)
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(why) => {
            run_dir.log(format!("minifier: not run: {why}"));
            return Ok((start, Vec::new()));
        }
    };
    console.say(format!(
        "running PyTorch's minifier first (TORCHDYNAMO_REPRO_AFTER={}, level {})",
        plan.after, plan.level
    ));
    let (plain, mut stage) = crate::engine::minifier::run(
        &plan,
        &start,
        &interp.path,
        interp.parser_version,
        &run_dir.path().join("minifier"),
        base.duration,
    )?;
    // The tightest form that fails the same way.
    let mut kept = None;
    for (i, form) in plain.iter().enumerate() {
        stage.runs += 1;
        if verify(form, sig, anchor, base.attempts, workers)? {
            if i > 0 {
                stage.outcome = format!("used (its tighter forms do not fail with {sig})");
            }
            kept = Some(form.clone());
            break;
        }
        stage.outcome = format!("its plain script does not fail with {sig}");
    }
    let queries = stage
        .queries
        .map_or(String::new(), |q| format!("{q} queries, "));
    let said = format!(
        "minifier: {queries}{} runs, {:.1} s: {}",
        stage.runs, stage.seconds, stage.outcome
    );
    run_dir.log(&said);
    let start = match kept {
        Some(plain) => {
            console.say(said);
            prepared.push("started from PyTorch's minifier's result, made plain".into());
            plain
        }
        None => {
            console.say(format!("{said}; reducing the original instead"));
            start
        }
    };
    Ok((start, vec![stage]))
}

/// The script the reduction starts from: `text` after the one-off rewrites that keep its
/// failure (`torch._dynamo.reset()` between repeated compiles, a kept seed for a torch
/// script), noted in `prepared`; and whether the seed was inserted.
fn prepare(
    text: String,
    prepared: &mut Vec<String>,
    options: &scrub_reducers::Options,
    oracle: &mut ProcessOracle,
    console: &Console,
    run_dir: &RunDir,
) -> (String, bool) {
    let parse = |text: &str| scrub_reducers::Script::parse(text, options.version);
    let mut text = text;
    let resets = parse(&text).and_then(|script| scrub_reducers::prepare::dynamo_resets(&script));
    if let Some((resets, n)) = resets {
        let what =
            format!("inserted torch._dynamo.reset() before {n} repeated torch.compile call(s)");
        text = try_rewrite(text, resets, what, prepared, oracle, console, run_dir);
    }
    // A repro that seeds its own random numbers fails deterministically; once a candidate drops
    // that seed it may fail only by chance, which one run per candidate cannot tell. One that
    // does not may fail on most draws at its own sizes and on few once they shrink. A seed of
    // our own, which no pass removes, keeps every candidate deterministic; the end drops it
    // again when the result fails without it every time (see `without_seed`).
    let seeds_itself = ["manual_seed(", "random.seed(", "np.random.seed("]
        .iter()
        .any(|call| text.contains(call));
    if let Some(seeded) = parse(&text).and_then(|script| scrub_reducers::prepare::seeded(&script)) {
        let what = format!(
            "inserted `torch.manual_seed(0)`, kept while the reduction runs: {}",
            if seeds_itself {
                "the repro seeds its random numbers"
            } else {
                "every candidate draws the same random numbers"
            }
        );
        let before = prepared.len();
        text = try_rewrite(text, seeded, what, prepared, oracle, console, run_dir);
        return (text, prepared.len() > before);
    }
    (text, false)
}

/// Fresh runs the result must fail in, all of them, without the seed scrub inserted.
const UNSEEDED_RUNS: usize = 8;

/// The reduction's script without the seed that `prepare` inserted (the caller knows it did),
/// when it fails the same way without it in each of [`UNSEEDED_RUNS`] fresh runs (a seed that
/// decides nothing is not part of the repro), and then without what only the seed used
/// (`import torch`, the blank lines around it). A result with a control keeps the seed unless
/// its control, built from the script without the seed, passes in each of as many runs too:
/// the control may depend on the draw as well. A result that compares tensors keeps it
/// whatever those runs show: whether numbers drawn at random are close is a matter of the
/// draw (one element of `torch.randn(1)` near 0 makes a fixed normalization differ from
/// the reference), and a draw that fails one run in fifty passes eight runs most times.
#[allow(clippy::too_many_arguments)]
fn without_seed(
    reduction: &mut scrub_reducers::Reduction,
    sig: &Signature,
    anchor: &Anchor,
    workers: &Workers,
    options: &scrub_reducers::Options,
    prepared: &mut Vec<String>,
    oracle: &mut ProcessOracle,
    console: &Console,
    run_dir: &RunDir,
) -> Result<()> {
    let line = format!("{}\n", scrub_reducers::prepare::SEED_LINE);
    if reduction.text.matches(&line).count() != 1 {
        return Ok(());
    }
    let text = reduction.text.replacen(&line, "", 1);
    if scrub_reducers::Script::parse(text.as_str(), options.version)
        .is_some_and(|s| scrub_reducers::control::compares_tensors(&s))
    {
        run_dir.log("kept the seed: the result compares tensors drawn at random");
        return Ok(());
    }
    let same = run_many(&text, UNSEEDED_RUNS, workers)?
        .iter()
        .filter(|outcome| {
            crate::engine::oracle::judge(sig, anchor, &text, outcome) == Verdict::Same
        })
        .count();
    if same < UNSEEDED_RUNS {
        run_dir.log(format!(
            "kept the seed: without it the result failed the same way {same} times of {UNSEEDED_RUNS}"
        ));
        return Ok(());
    }
    match oracle.control_of(&text) {
        Err(why) => {
            run_dir.log(format!("kept the seed: without it {why}"));
            return Ok(());
        }
        Ok(Some((control, _))) => {
            let passed = run_many(&control, UNSEEDED_RUNS, workers)?
                .iter()
                .filter(|outcome| crate::engine::oracle::passes(outcome))
                .count();
            if passed < UNSEEDED_RUNS {
                run_dir.log(format!(
                    "kept the seed: without it the control passed {passed} times of {UNSEEDED_RUNS}"
                ));
                return Ok(());
            }
        }
        Ok(None) => {}
    }
    let what = format!(
        "removed the seed again: the result fails the same way without it {UNSEEDED_RUNS} times of {UNSEEDED_RUNS}"
    );
    accept_prepared(&text, what, prepared, oracle, console, run_dir);
    let tidy: Vec<&dyn scrub_reducers::Pass> = ["drop_imports", "tidy_blank_lines"]
        .into_iter()
        .filter_map(scrub_reducers::pass::by_name)
        .collect();
    let again = scrub_reducers::reduce(&text, &tidy, oracle, options)?;
    for row in again.passes {
        if let Some(total) = reduction.passes.iter_mut().find(|p| p.name == row.name) {
            total.candidates += row.candidates;
            total.accepted += row.accepted;
            total.bytes_removed += row.bytes_removed;
        }
    }
    reduction.text = again.text;
    if again.stop == StopReason::Interrupted {
        reduction.stop = again.stop;
    }
    Ok(())
}

/// Notes `what` in `prepared`, the console and the log, and records `text` as an accepted
/// step like any other: in the history the result falls back on, under its own name.
fn accept_prepared(
    text: &str,
    what: String,
    prepared: &mut Vec<String>,
    oracle: &mut ProcessOracle,
    console: &Console,
    run_dir: &RunDir,
) {
    console.say(format!("prepared: {what}"));
    run_dir.log(format!("prepared: {what}"));
    prepared.push(what);
    scrub_reducers::Oracle::progress(
        oracle,
        &scrub_reducers::Progress {
            pass: "prepare",
            round: 0,
            text,
            step: None,
            lines: count_lines(text),
            bytes: text.len(),
        },
    );
}

/// `rewritten` when it still fails the same way (and `what` noted in `prepared`), else `text`.
fn try_rewrite(
    text: String,
    rewritten: String,
    what: String,
    prepared: &mut Vec<String>,
    oracle: &mut ProcessOracle,
    console: &Console,
    run_dir: &RunDir,
) -> String {
    let judged = scrub_reducers::Oracle::judge(oracle, std::slice::from_ref(&rewritten));
    if matches!(judged, Ok(v) if v == [true]) {
        accept_prepared(&rewritten, what, prepared, oracle, console, run_dir);
        rewritten
    } else {
        run_dir.log(format!("not prepared (the failure changed): {what}"));
        text
    }
}

/// The newest accepted script that fails the same way in a fresh process (no cache): the
/// cache may hold a verdict that a fresh run no longer gives. True when that is the newest.
fn verified_result(
    history: &[String],
    sig: &Signature,
    anchor: &Anchor,
    control: Option<&Control>,
    attempts: usize,
    workers: &Workers,
    console: &Console,
) -> Result<(String, bool)> {
    for (back, candidate) in history.iter().rev().enumerate() {
        if verify(candidate, sig, anchor, attempts, workers)?
            && control.is_none_or(|c| control_passes(candidate, c, workers).unwrap_or(false))
        {
            return Ok((candidate.clone(), back == 0));
        }
        console.warn(format!(
            "the result {back} step(s) back did not reproduce in a fresh run; trying the one before"
        ));
    }
    bail!("not even the original reproduces any more: the failure is not stable")
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
fn output_path(args: &Options) -> Result<PathBuf> {
    let output = match &args.output {
        Some(o) => o.clone(),
        None => with_suffix(&args.file, ".min.py"),
    };
    let same = match (fs::canonicalize(&args.file), fs::canonicalize(&output)) {
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
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
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

fn beside(path: &Path, name: &str) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from(name), |p| p.join(name))
}

/// Environment variables that change how a script behaves, for the cache key.
fn env_knobs() -> String {
    let mut knobs: Vec<String> = std::env::vars()
        .filter(|(k, _)| {
            ["PYTHON", "TORCH", "CUDA", "OMP_", "MKL_", "LD_"]
                .iter()
                .any(|p| k.starts_with(p))
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    knobs.sort();
    knobs.join("\n")
}

/// How the original's first runs went.
pub(crate) enum BaselineEnd {
    Fails(Box<Baseline>),
    /// It ran out of memory every time, and the signature is not about memory.
    OutOfMemory,
    /// It does not fail the expected way: the reason has been printed.
    DoesNotFail,
}

#[derive(Clone)]
pub(crate) struct Baseline {
    pub(crate) signature: Signature,
    pub(crate) duration: Duration,
    /// The most memory one of its runs held, in bytes.
    peak_rss: u64,
    /// Runs a candidate gets before it counts as not failing.
    pub(crate) attempts: usize,
    ratio: String,
    /// A run that failed the same way.
    pub(crate) outcome: Outcome,
}

/// Runs the original twice, and five more times when the two disagree or a given signature
/// was missed twice (a flaky repro), thirteen more when under half of those seven failed.
pub(crate) fn baseline(
    text: &str,
    given: Option<Signature>,
    workers: &Workers,
    console: &Console,
) -> Result<BaselineEnd> {
    let runs = run_many(text, 2, workers)?;
    if given.as_ref().is_some_and(|s| !s.is_out_of_memory())
        && runs.iter().all(crate::engine::verdict::out_of_memory)
    {
        return Ok(BaselineEnd::OutOfMemory);
    }
    let explicit = given.is_some();
    let sig = match given {
        Some(sig) => sig,
        // From the first run that failed: a flaky original may pass once.
        None => match runs.iter().find_map(Signature::derive) {
            Some(sig) => {
                console.say(format!(
                    "signature: {sig} (derived from the original run; pass --sig to choose)"
                ));
                for name in sig.names() {
                    console.say(format!("  {name}"));
                }
                sig
            }
            None => {
                eprintln!("scrub: the original does not fail: {}", describe(&runs[0]));
                return Ok(BaselineEnd::DoesNotFail);
            }
        },
    };
    let same = |o: &Outcome| sig.judge(o) == Verdict::Same;
    let duration = runs.iter().map(|o| o.duration).max().unwrap_or_default();
    let peak_rss = runs.iter().map(|o| o.peak_rss).max().unwrap_or_default();
    let hits = runs.iter().filter(|o| same(o)).count();
    let timed_out = runs.iter().all(|o| o.status == Status::TimedOut);
    if hits == 0 && (timed_out || !explicit) {
        let near = match sig.judge(&runs[0]) {
            Verdict::NearMiss(_) => " (same class, other message)",
            _ => "",
        };
        eprintln!(
            "scrub: the original does not fail with {sig}: {}{near}",
            describe(&runs[0])
        );
        return Ok(BaselineEnd::DoesNotFail);
    }
    // Every run, for one that failed the same way to read the anchor off.
    let mut all = runs.clone();
    let (attempts, ratio) = if hits == 2 {
        (1, "2/2".to_string())
    } else {
        // The two disagree, or a given signature was missed twice: a flaky repro shows
        // itself within five more runs.
        let more = run_many(text, 5, workers)?;
        let (mut total, mut runs_done) = (hits + more.iter().filter(|o| same(o)).count(), 7);
        all.extend(more);
        if total == 0 {
            eprintln!(
                "scrub: the original does not fail with {sig} in 7 runs: {}",
                describe(&runs[0])
            );
            return Ok(BaselineEnd::DoesNotFail);
        }
        // A low ratio from 7 runs is a poor estimate, and it sets how often every candidate
        // is run: measure it over 20 runs.
        if total * 2 < runs_done {
            let extra = run_many(text, 13, workers)?;
            total += extra.iter().filter(|o| same(o)).count();
            runs_done += 13;
            all.extend(extra);
        }
        let p = total as f64 / runs_done as f64;
        let attempts = if total == runs_done {
            1
        } else {
            ((MISS_RATE.ln() / (1.0 - p).ln()).ceil() as usize).clamp(2, MAX_ATTEMPTS)
        };
        console.say(format!(
            "the original is flaky: it failed the same way {total} of {runs_done} times; each candidate gets up to {attempts} runs"
        ));
        (attempts, format!("{total}/{runs_done}"))
    };
    let outcome = all
        .into_iter()
        .find(|o| same(o))
        .expect("a baseline that fails has a run that failed the same way");
    Ok(BaselineEnd::Fails(Box::new(Baseline {
        signature: sig,
        duration,
        peak_rss,
        attempts,
        ratio,
        outcome,
    })))
}

/// For a flaky repro that imports torch: the script seeded with `torch.manual_seed(0)` and its
/// baseline, when that fails the same way every time.
fn stabilised(
    text: &str,
    base: &Baseline,
    interp: &Interpreter,
    workers: &Workers,
    console: &Console,
) -> Result<Option<(String, Baseline)>> {
    if base.attempts == 1 {
        return Ok(None);
    }
    let Some(seeded) = scrub_reducers::Script::parse(text, interp.parser_version)
        .and_then(|s| scrub_reducers::prepare::seeded(&s))
    else {
        return Ok(None);
    };
    console.say("trying the flaky original with torch.manual_seed(0)");
    match baseline(&seeded, Some(base.signature.clone()), workers, console)? {
        BaselineEnd::Fails(stable) if stable.attempts == 1 => Ok(Some((seeded, *stable))),
        _ => Ok(None),
    }
}

fn run_many(text: &str, n: usize, workers: &Workers) -> Result<Vec<Outcome>> {
    let texts = vec![text; n];
    workers
        .run_all(&texts)
        .into_iter()
        .collect::<Result<Vec<_>>>()
}

pub(crate) fn run_one(text: &str, workers: &Workers) -> Result<Outcome> {
    Ok(run_many(text, 1, workers)?.remove(0))
}

/// Switches `workers` to warm mode when the original fails the same way in a warm worker as
/// it did cold; otherwise says so and stays cold. Returns whether warm mode is on.
fn warm_up(
    text: &str,
    file: &Path,
    sig: &Signature,
    workers: &mut Workers,
    console: &Console,
) -> Result<bool> {
    let original =
        fs::canonicalize(file).with_context(|| format!("cannot resolve {}", file.display()))?;
    workers.warm = Some(original);
    let warm = match run_one(text, workers) {
        Ok(outcome) => sig.judge(&outcome) == Verdict::Same,
        Err(e) if e.is::<process::Interrupted>() || workers.remote => return Err(e),
        Err(e) => {
            console.warn(format!(
                "cannot start a warm worker ({e:#}); using cold workers"
            ));
            false
        }
    };
    if !warm && workers.remote {
        bail!("the original does not fail the same way on the Ray actors as it does here");
    }
    if !warm {
        console.say("the original does not fail the same way in a warm worker; using cold workers");
        workers.warm = None;
        workers.stop_zygotes();
    }
    Ok(warm)
}

/// How the reduction is guarded by a control.
pub(crate) struct Guard {
    /// The control every candidate must pass: its suspect, and for a custom implementation
    /// the edit that made the original pass.
    pub(crate) control: Option<Control>,
    /// A mismatch with no control: reduced as a signature alone allows.
    unguarded: bool,
    /// What the log says about it.
    note: String,
}

/// The control of the original, run once: when it passes, the suspect it replaced is what
/// the failure needs, and every candidate's control must pass too. A mismatch (an
/// `AssertionError` of a torch script) without a control that passes is reduced unguarded,
/// and says so once.
pub(crate) fn control(
    start: &str,
    outcome: &Outcome,
    args: &Options,
    interp: &Interpreter,
    workers: &Workers,
    console: &Console,
) -> Result<Guard> {
    let mismatch = start.contains("torch")
        && crate::engine::exception::final_exception(&outcome.stderr)
            .is_some_and(|e| e.class.ends_with("AssertionError"));
    let unguarded = |note: String| {
        if mismatch {
            console.warn(format!("{note}; the result is unguarded"));
        }
        Guard {
            control: None,
            unguarded: mismatch,
            note,
        }
    };
    if !args.control {
        return Ok(unguarded("off (--no-control)".to_string()));
    }
    let version = interp.parser_version;
    let suspects = scrub_reducers::Script::parse(start, version)
        .map(|script| Suspect::all_of(&script, version))
        .unwrap_or_default();
    if suspects.is_empty() {
        return Ok(unguarded(
            "no control can be built: no torch.compile, CUDA or own implementation compared with a reference".to_string(),
        ));
    }
    // The first suspect whose control passes is the one the failure needs.
    let mut failed = Vec::new();
    let mut found = None;
    let custom = suspects.iter().any(|(s, _)| *s == Suspect::Custom);
    for (suspect, control) in suspects {
        let run = run_one(&control, workers)?;
        if crate::engine::oracle::passes(&run) {
            found = Some(suspect);
            break;
        }
        failed.push(format!("{}: {}", suspect.as_str(), describe(&run)));
    }
    let Some(suspect) = found else {
        let note = format!("no control of the original passes ({})", failed.join("; "));
        if !custom {
            return Ok(unguarded(note));
        }
        return unguarded_custom(start, note, version, workers, console);
    };
    console.say(format!(
        "control: {}; the original's passes, and every candidate's must",
        suspect.as_str()
    ));
    let mut note = format!("{} (the original's passes)", suspect.as_str());
    let fix = match suspect {
        Suspect::Custom => custom_fix(start, version, workers)?,
        _ => None,
    };
    if let Some(fix) = &fix {
        note = format!(
            "{note}; the edit {} of its own code makes the original pass, and it is the control of every candidate",
            fix.describe()
        );
        console.say(format!(
            "control: the edit {} of the script's own code makes it pass: the bug is there",
            fix.describe()
        ));
    }
    Ok(Guard {
        control: Some(Control {
            mismatch,
            ..Control::new(suspect, fix, start, version)
        }),
        unguarded: false,
        note,
    })
}

/// The guard of a script that compares its own code with a reference when no control passes
/// on it: an edit of that code that makes it pass, if one does (the bug is there, and the edit
/// is every candidate's control); else no control runs, the result is unguarded, and the code
/// the comparison's custom side runs stays in every candidate (see `Control::unrun`).
fn unguarded_custom(
    start: &str,
    note: String,
    version: scrub_reducers::PythonVersion,
    workers: &Workers,
    console: &Console,
) -> Result<Guard> {
    if let Some(fix) = custom_fix(start, version, workers)? {
        console.say(format!(
            "control: the edit {} of the script's own code makes it pass: the bug is there",
            fix.describe()
        ));
        return Ok(Guard {
            note: format!(
                "{note}; the edit {} of its own code makes the original pass, and it is the control of every candidate",
                fix.describe()
            ),
            control: Some(Control::new(Suspect::Custom, Some(fix), start, version)),
            unguarded: false,
        });
    }
    let note = format!("{note}; the custom code that the comparison runs stays in every candidate");
    console.warn(format!("{note}; the result is unguarded"));
    Ok(Guard {
        control: Some(Control::unrun(start, version)),
        unguarded: true,
        note,
    })
}

/// The first edit of a custom implementation's code (see `scrub_reducers::fix`) that makes
/// the original pass, tried in source order.
fn custom_fix(
    start: &str,
    version: scrub_reducers::PythonVersion,
    workers: &Workers,
) -> Result<Option<Fix>> {
    const MOST: usize = 16;
    let Some(script) = scrub_reducers::Script::parse(start, version) else {
        return Ok(None);
    };
    for fix in Fix::candidates(&script).into_iter().take(MOST) {
        let Some(text) = fix.apply(&script) else {
            continue;
        };
        if crate::engine::oracle::passes(&run_one(&text, workers)?) {
            return Ok(Some(fix));
        }
    }
    Ok(None)
}

/// Whether the control of `text` can be built and passes in a fresh run (for a control that
/// does not run, whether `text` keeps what it checks).
fn control_passes(text: &str, control: &Control, workers: &Workers) -> Result<bool> {
    let Some(script) = scrub_reducers::Script::parse(text, control.version) else {
        return Ok(false);
    };
    if !control.runs {
        return Ok(control.lost(&script).is_none());
    }
    let Some(text) = control.build(&script) else {
        return Ok(false);
    };
    Ok(crate::engine::oracle::passes(&run_one(&text, workers)?))
}

/// A fresh run (no cache) of `text`, with the attempts a flaky repro gets.
fn verify(
    text: &str,
    sig: &Signature,
    anchor: &Anchor,
    attempts: usize,
    workers: &Workers,
) -> Result<bool> {
    for _ in 0..attempts {
        if crate::engine::oracle::judge(sig, anchor, text, &run_one(text, workers)?)
            == Verdict::Same
        {
            return Ok(true);
        }
    }
    Ok(false)
}
