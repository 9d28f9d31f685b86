//! `scrub issue`: the whole triage of one bug report, from fetch to report, one small module
//! per step around the core (which never imports them).
//!
//! fetch → extract & choose → judge → safety & trust → check → reproduce → bisect →
//! minimize → hint → report → GitHub commands. Each step can stop the triage with a reason;
//! nothing runs before the judgement and the safety review, and nothing changes on GitHub
//! without `--apply`.

pub mod actionable;
pub mod batch;
pub mod bisect;
pub mod check;
pub mod evidence;
pub mod extract;
pub mod fetch;
pub mod github;
pub mod hint;
pub mod machine;
pub mod minimize;
pub mod prepare;
pub mod report;
pub mod reproduce;
pub mod safety;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};

use crate::engine::interpreter::Interpreter;
use crate::engine::reduce::{self, Backend, Cluster, Execution};
use actionable::Category;
use extract::Kind;
use github::Changes;
use machine::Lack;
use report::{BlockRow, Report, Stop};

/// The exit codes, for `scrub issue --help`.
pub const EXIT_CODES: &str = "Exit codes:
  0    triaged (whatever the category), and any --apply changes went through
  1    stopped for a decision (risks, an author who is not a collaborator, missing modules,
       a recent confirmation, a repro this machine could not run for want of the network or
       a package), or an --apply change failed
  2    bad input, or scrub failed";

/// The last step to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Step {
    Triage,
    Reproduce,
    Bisect,
    Minimize,
}

/// The flags of `scrub issue`.
#[derive(Debug, Clone, Args)]
pub struct IssueArgs {
    /// The issue number (fetched with `gh` from --repo).
    pub number: Option<u64>,

    /// Triage every issue FILE lists, one a line: a number (fetched from --repo) or the path of
    /// a `gh issue view --json` file; blank lines and `#` comments are skipped. One failing
    /// does not stop the others; a table of every issue ends the output.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["number", "from_json"])]
    pub batch: Option<PathBuf>,

    /// The repository, OWNER/NAME [default: pytorch/pytorch, or the --from-json issue's URL].
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,

    /// Read the issue from FILE (`-` for stdin), as `gh issue view --json` prints it.
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,

    /// The interpreter that runs the repro [default: python3 on PATH].
    #[arg(long)]
    pub python: Option<PathBuf>,

    /// A conda environment to run the repro in (`conda run -n NAME python`), or, as
    /// VER=PYTHON, a version and its interpreter for bisection (repeatable).
    #[arg(long = "env", value_name = "NAME | VER=PYTHON")]
    pub env: Vec<String>,

    /// Stop after this step.
    #[arg(long, value_enum, value_name = "STEP")]
    pub stop_after: Option<Step>,

    /// Run the GitHub commands instead of printing them.
    #[arg(long)]
    pub apply: bool,

    /// Run a repro whose safety review found risks.
    #[arg(long)]
    pub allow_risk: bool,

    /// Run a repro whose author is not a collaborator of the repository.
    #[arg(long)]
    pub trust_author: bool,

    /// Reproduce even when a recent comment already confirms the error.
    #[arg(long)]
    pub reverify: bool,

    /// Close an old, unassigned, idle and underspecified issue as not planned.
    #[arg(long)]
    pub confirm_close: bool,

    /// A local git checkout of the project: list the pull requests between the last broken
    /// and the first fixed version that touch the traceback's files or match its keywords.
    #[arg(long, value_name = "PATH")]
    pub source_repo: Option<PathBuf>,

    /// Seconds a repro may run.
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub timeout: f64,

    /// Candidates run in parallel while minimizing (see `scrub reduce --jobs`).
    #[arg(short, long)]
    pub jobs: Option<usize>,

    /// Minimize on Ray actors of the cluster at ADDRESS (see `scrub reduce --ray`); with
    /// --batch, one connection serves every issue.
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,

    /// Print the report as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Where `scrub issue` writes: `/tmp`, or `SCRUB_ISSUE_TMP`.
fn tmp_root() -> PathBuf {
    std::env::var_os("SCRUB_ISSUE_TMP").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from)
}

/// Everything checked before the triage starts.
struct Setup {
    issue: fetch::Issue,
    repo: Option<String>,
    interp: Interpreter,
    envs: Vec<bisect::Env>,
    timeout: Duration,
    root: PathBuf,
    work: PathBuf,
}

fn setup(args: &IssueArgs) -> Result<Setup> {
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1");
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        bail!("--timeout must be a positive number of seconds");
    }
    let mut names = Vec::new();
    let mut pairs = Vec::new();
    for e in &args.env {
        if e.contains('=') {
            pairs.push(bisect::parse_pair(e)?);
        } else {
            names.push(e.clone());
        }
    }
    if let Some(env) = pairs
        .iter()
        .find(|e| !e.python.exists() && which(&e.python).is_none())
    {
        bail!(
            "--env {}={}: no such interpreter",
            env.version,
            env.python.display()
        );
    }
    if let Some(bad) = names.iter().find(|n| {
        !n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    }) {
        bail!("--env {bad:?} is not a conda environment name");
    }
    if names.len() > 1 {
        bail!(
            "--env NAME given {} times; name one environment to run the repro in",
            names.len()
        );
    }
    if !names.is_empty() && args.python.is_some() {
        bail!("--python and --env NAME both name the interpreter; give one");
    }
    if let Some(repo) = &args.repo
        && repo.split('/').filter(|p| !p.is_empty()).count() != 2
    {
        bail!("--repo {repo:?} is not OWNER/NAME");
    }
    let issue = match (&args.from_json, args.number) {
        (Some(_), Some(_)) => bail!("give an issue number or --from-json FILE, not both"),
        (Some(path), None) => fetch::from_file(path)?,
        (None, Some(n)) => {
            fetch::from_github(n, args.repo.as_deref().unwrap_or("pytorch/pytorch"))?
        }
        (None, None) => bail!("give an issue number (with --repo OWNER/NAME) or --from-json FILE"),
    };
    let repo = args
        .repo
        .clone()
        .or_else(|| issue.repo_from_url())
        .or_else(|| args.number.map(|_| "pytorch/pytorch".to_string()));
    let root = tmp_root();
    let work = root.join(format!("scrub-{}", issue.number));
    let interp = match (&args.python, names.first()) {
        (Some(p), _) => Interpreter::probe(p)?,
        (None, Some(name)) => Interpreter::probe(&bisect::conda_wrapper(&work, name)?)?,
        (None, None) => Interpreter::probe_default()?,
    };
    Ok(Setup {
        issue,
        repo,
        interp,
        envs: pairs,
        timeout: Duration::from_secs_f64(args.timeout),
        root,
        work,
    })
}

fn which(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return None;
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs `scrub issue`.
pub fn run(args: &IssueArgs) -> Result<ExitCode> {
    if let Some(file) = &args.batch {
        return batch::run(args, file);
    }
    let setup = setup(args)?;
    let cluster = connect(args, &setup.interp)?;
    let report = triage_and_plan(args, &setup, cluster.as_ref())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report::render(&report));
    }
    Ok(exit_code(&report))
}

/// Steps 2 to 11 for one issue.
fn triage_and_plan(args: &IssueArgs, setup: &Setup, cluster: Option<&Cluster>) -> Result<Report> {
    let mut report = triage(args, setup, cluster)?;
    plan_and_apply(args, setup, &mut report)?;
    Ok(report)
}

/// 1 when the triage stopped for a decision or an --apply change failed, else 0.
fn exit_code(report: &Report) -> ExitCode {
    let failed_apply = report
        .applied
        .iter()
        .any(|a| !a.ok && !a.note.contains("subscription"));
    let decision = report.stopped.as_ref().is_some_and(|s| s.needs_decision);
    if decision || failed_apply {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The Ray cluster of `--ray`, connected once under the repro's interpreter.
fn connect(args: &IssueArgs, interp: &Interpreter) -> Result<Option<Cluster>> {
    let Some(address) = &args.ray else {
        return Ok(None);
    };
    let execution = reduce::connect(&Execution {
        python: Some(interp.path.clone()),
        jobs: args.jobs,
        backend: Backend::Ray(Cluster::Address {
            address: address.clone(),
            gpus_per_worker: None,
        }),
        ..Execution::default()
    })?;
    Ok(match execution.backend {
        Backend::Ray(cluster) => Some(cluster),
        Backend::Warm | Backend::Fork | Backend::InProcess | Backend::Cold => None,
    })
}

fn say(args: &IssueArgs, line: impl AsRef<str>) {
    if !args.json {
        eprintln!("scrub issue: {}", line.as_ref());
    }
}

/// Asks a yes/no question when a person is at the terminal; false otherwise.
fn confirm(args: &IssueArgs, question: &str) -> bool {
    if args.json
        || args.batch.is_some()
        || !std::io::stdin().is_terminal()
        || !std::io::stderr().is_terminal()
    {
        return false;
    }
    eprint!("{question} [y/N] ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && answer.trim().eq_ignore_ascii_case("y")
}

fn stop(report: &mut Report, step: &'static str, reason: String, needs_decision: bool) {
    report.stopped = Some(Stop {
        step,
        reason,
        needs_decision,
    });
}

/// Steps 2 to 10; returns at the first step that stops the triage.
fn triage(args: &IssueArgs, s: &Setup, cluster: Option<&Cluster>) -> Result<Report> {
    let (mut t, choice, judgement) = Triage::judge(args, s);
    let Some((choice, deciding)) = t.repro_to_run(choice, judgement) else {
        return Ok(t.report);
    };
    let repro = t.blocks[choice.block].text.clone();
    if !t.cleared(&repro, &choice) {
        return Ok(t.report);
    }
    let Some(modules) = t.check(&repro)? else {
        return Ok(t.report);
    };
    let (run_text, outcome) = t.reproduce(&repro, &modules, deciding)?;
    t.bisect(&run_text, &outcome, deciding)?;
    t.minimize(&repro, &run_text, &outcome, cluster);
    t.comment(&outcome);
    Ok(t.report)
}

/// One issue's triage under way: what its steps share, and the report they fill in.
struct Triage<'a> {
    args: &'a IssueArgs,
    s: &'a Setup,
    today: i64,
    blocks: Vec<extract::Block>,
    /// The failure the thread reports, and its signature when scrub reads one.
    found: Option<evidence::Evidence>,
    expected: Option<crate::engine::verdict::Signature>,
    report: Report,
}

impl<'a> Triage<'a> {
    /// Steps 2 and 3, and the first half of step 4: the blocks, the repro chosen among them,
    /// the failure the thread reports, the judgement, and the chosen repro's risks.
    fn judge(
        args: &'a IssueArgs,
        s: &'a Setup,
    ) -> (Triage<'a>, Option<extract::Choice>, actionable::Judgement) {
        let issue = &s.issue;
        let today = fetch::today();
        let blocks = extract::extract(issue);
        let choice = extract::choose(&blocks, issue.author_login());
        let found = evidence::find(issue, &blocks, choice.as_ref());
        let expected = found.as_ref().and_then(|e| e.parsed.clone());
        let judgement = actionable::judge(issue, &blocks, choice.as_ref(), found.as_ref(), today);
        let mut report = Report {
            number: issue.number,
            title: issue.title.clone(),
            repo: s.repo.clone(),
            url: issue.url.clone(),
            category: judgement.category.as_str(),
            reason: judgement.reason.clone(),
            repro_source: choice.as_ref().map(|c| c.source.name()),
            repro_reason: choice.as_ref().map(|c| c.reason.clone()),
            expected_signature: expected.as_ref().map(|s| s.to_string()),
            evidence: found.clone(),
            blocks: blocks
                .iter()
                .map(|b| BlockRow {
                    source: b.post.name(),
                    kind: b.kind,
                    lines: extract::lines(&b.text),
                })
                .collect(),
            labels_to_add: judgement.labels_to_add.clone(),
            labels_to_remove: judgement.labels_to_remove.clone(),
            refresh_triaged: judgement.refresh_triaged,
            propose_close: judgement.propose_close,
            duplicate_of: judgement.duplicate_of,
            locked: issue.locked == Some(true),
            ..Default::default()
        };
        if judgement.propose_close && !args.confirm_close {
            report.notes.push(
                "old, unassigned, idle and underspecified: closing it as not planned is proposed; pass --confirm-close to plan it".into(),
            );
        }
        // Step 4, first half: every chosen repro is reviewed, whatever the category, so that a
        // risky script is flagged before anything could run it.
        if let Some(c) = &choice {
            report.risks = safety::review(&blocks[c.block].text, s.interp.parser_version);
        }
        let triage = Triage {
            args,
            s,
            today,
            blocks,
            found,
            expected,
            report,
        };
        (triage, choice, judgement)
    }

    /// The repro to run, and whether running it decides the category (a self-contained
    /// script with no failure scrub can read); `None` when the judgement stops the triage.
    fn repro_to_run(
        &mut self,
        choice: Option<extract::Choice>,
        judgement: actionable::Judgement,
    ) -> Option<(extract::Choice, bool)> {
        let (args, issue) = (self.args, &self.s.issue);
        let deciding =
            judgement.run_to_decide && args.stop_after != Some(Step::Triage) && !issue.is_closed();
        if judgement.category != Category::Actionable && !deciding {
            stop(&mut self.report, "judge", judgement.reason, false);
            return None;
        }
        let Some(choice) = choice else {
            unreachable!("an actionable issue, or one decided by running, has a repro");
        };
        if deciding {
            self.report.notes.push(
                "the thread shows no error in a form scrub reads; the repro is run to decide between actionable and needs-reproduction".into(),
            );
        }
        Some((choice, deciding))
    }

    /// Step 4: whether `repro` may run: its risks allowed or none, and its author trusted.
    fn cleared(&mut self, repro: &str, choice: &extract::Choice) -> bool {
        let (args, s, report) = (self.args, self.s, &mut self.report);
        if !report.risks.is_empty() && !args.allow_risk {
            let mut kinds: Vec<&str> = report.risks.iter().map(|r| r.kind).collect();
            kinds.sort();
            kinds.dedup();
            if !confirm(
                args,
                &format!(
                    "the repro has {} risk(s); run it anyway?",
                    report.risks.len()
                ),
            ) {
                let reason = format!(
                    "the repro has {} risk(s) ({}); review them and pass --allow-risk to run it",
                    report.risks.len(),
                    kinds.join(", ")
                );
                stop(report, "safety", reason, true);
                return false;
            }
        }
        if args.stop_after == Some(Step::Triage) {
            stop(report, "triage", "--stop-after triage".into(), false);
            return false;
        }
        let author = s.issue.author_login();
        let collaborator = match &s.repo {
            Some(repo) if !author.is_empty() && !args.trust_author => {
                Some(fetch::is_collaborator(repo, author))
            }
            _ => None,
        };
        report.author_collaborator = collaborator;
        if args.trust_author || collaborator == Some(true) {
            return true;
        }
        let who = if author.is_empty() {
            "an unknown author".to_string()
        } else {
            format!("@{author}")
        };
        let why = match collaborator {
            Some(false) => format!(
                "{who} is not a collaborator of {}",
                s.repo.as_deref().unwrap_or("")
            ),
            _ => format!("cannot check whether {who} is a collaborator (no repository)"),
        };
        if !args.json {
            eprintln!("--- the repro ({}) ---\n{repro}---", choice.source.name());
        }
        if !confirm(args, &format!("{why}; run their code?")) {
            stop(
                report,
                "trust",
                format!("{why}; read the repro and pass --trust-author to run it"),
                true,
            );
            return false;
        }
        true
    }

    /// Step 5: the modules `repro` imports, when the interpreter has them all and no recent
    /// comment confirms the error already (or `--reverify`); `None` when the triage stops.
    fn check(&mut self, repro: &str) -> Result<Option<Vec<String>>> {
        let (s, report) = (self.s, &mut self.report);
        let modules = check::imported_modules(repro, s.interp.parser_version);
        report.missing_modules = check::missing_modules(&s.interp.path, &modules)?;
        if !report.missing_modules.is_empty() {
            let reason = format!(
                "{} cannot import {}; install them or pass another --python",
                s.interp.path.display(),
                report.missing_modules.join(", ")
            );
            stop(report, "check", reason, true);
            return Ok(None);
        }
        report.recent_confirmation =
            check::recent_confirmation(&s.issue, self.expected.as_ref(), self.today);
        if let Some(c) = &report.recent_confirmation
            && !self.args.reverify
        {
            let reason = format!("{c}; pass --reverify to reproduce anyway");
            stop(report, "check", reason, true);
            return Ok(None);
        }
        Ok(Some(modules))
    }

    /// Step 6: runs `repro` (with dynamo resets between repeated compiles, and with small
    /// sizes after running out of memory); the script that ran, and how it ended.
    fn reproduce(
        &mut self,
        repro: &str,
        modules: &[String],
        deciding: bool,
    ) -> Result<(String, reproduce::Reproduction)> {
        let (args, s) = (self.args, self.s);
        say(args, format!("reproducing in {}", s.work.display()));
        std::fs::create_dir_all(&s.work)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", s.work.display()))?;
        self.report.work_dir = Some(s.work.display().to_string());
        let with_torch = modules.iter().any(|m| m == "torch");
        let versions = reproduce::versions(&s.interp.path, with_torch);
        let mut run_text = repro.to_string();
        if let Some(text) = prepare::dynamo_resets(repro, s.interp.parser_version) {
            self.report.notes.push(
                "the repro compiles more than once: torch._dynamo.reset() was inserted before each compile".into(),
            );
            run_text = text;
        }
        let seeded = prepare::fixed_seed(&run_text, modules);
        let mut outcome = reproduce::reproduce(
            &run_text,
            &seeded,
            &s.interp.path,
            self.expected.as_ref(),
            &s.work,
            s.timeout,
        )?;
        say(
            args,
            format!("{}: {} ({})", outcome.result, outcome.detail, outcome.ratio),
        );
        if (outcome.result == "oom" || outcome.lacking == Some(Lack::GpuMemory))
            && let Some((small, retry)) = self.with_small_sizes(&run_text, modules)?
        {
            run_text = small;
            outcome = retry;
        }
        let hang = self
            .found
            .as_ref()
            .is_some_and(|e| e.kind == evidence::What::Hang);
        // A hang is what the issue reports: the run timing out reproduces it.
        if outcome.result == "timeout" && hang {
            outcome.reproduces = true;
            self.report.notes.push(format!(
                "the issue reports a hang and the repro {}: that reproduces it (a hang has no signature to minimize with)",
                outcome.detail
            ));
        }
        // A distributed job started without its launcher waits for peers that never come.
        if outcome.result == "timeout" && !hang && machine::waits_for_peers(&run_text) {
            outcome.result = "environment";
            outcome.lacking = Some(Lack::Peers);
        }
        self.report.hint = hint::stale_xfail(&s.issue, repro, &outcome);
        self.report.versions = Some(versions);
        self.report.outcome = Some(outcome.clone());
        self.report.lacking = outcome.lacking;
        if outcome.lacking == Some(Lack::Gpu)
            && let Some((cpu_text, cpu)) = self.on_cpu(&run_text, modules)?
        {
            run_text = cpu_text;
            outcome = cpu;
        }
        if let Some(lack) = outcome.lacking {
            self.lacked(lack, &outcome);
        } else if deciding {
            decide(&mut self.report, &s.issue, &outcome, self.today);
        }
        Ok((run_text, outcome))
    }

    /// The repro that needs the GPU this machine lacks, moved to the CPU with the `cpu` rung's
    /// rewrite (`"cuda"` → `"cpu"`, `.cuda()` dropped), and how it ran, when that shows a
    /// failure the issue reports; `None` (noted) when the report is about CUDA itself, the
    /// rewrite cannot reach every use of CUDA, or the moved repro does not fail so.
    fn on_cpu(
        &mut self,
        run_text: &str,
        modules: &[String],
    ) -> Result<Option<(String, reproduce::Reproduction)>> {
        use scrub_reducers::rungs::Rung;
        let (args, s) = (self.args, self.s);
        let failure = self
            .found
            .as_ref()
            .map(|e| format!("{}\n{}", e.text, e.signature.as_deref().unwrap_or("")))
            .unwrap_or_default();
        if machine::about_cuda(&s.issue.title, &failure) {
            self.not_moved("the report is about CUDA itself".into());
            return Ok(None);
        }
        let moved = scrub_reducers::Script::parse(run_text, s.interp.parser_version)
            .ok_or_else(|| "the script does not parse".to_string())
            .and_then(|script| Rung::Cpu.step_off(&script, s.interp.parser_version));
        let cpu_text = match moved {
            Ok(text) if text != run_text => text,
            Ok(_) => {
                self.not_moved("the repro names no CUDA device that the rewrite can move".into());
                return Ok(None);
            }
            Err(why) => {
                self.not_moved(why);
                return Ok(None);
            }
        };
        say(args, "no GPU here; running the repro moved to the CPU");
        let seeded = prepare::fixed_seed(&cpu_text, modules);
        let cpu = reproduce::reproduce(
            &cpu_text,
            &seeded,
            &s.interp.path,
            self.expected.as_ref(),
            &s.work.join("cpu"),
            s.timeout,
        )?;
        self.report.notes.push(format!(
            "this machine has no GPU; moved to the CPU, the repro ends with {} ({})",
            cpu.result, cpu.detail
        ));
        self.report.cpu_outcome = Some(cpu.clone());
        Ok(cpu.reproduces.then_some((cpu_text, cpu)))
    }

    /// Notes why the repro that needs the missing GPU stays on CUDA, for the report and the
    /// comment.
    fn not_moved(&mut self, why: String) {
        self.report
            .notes
            .push(format!("the repro was not moved to the CPU: {why}"));
        self.report.not_moved = Some(why);
    }

    /// The category of a repro this machine could not run to a result for want of `lack`:
    /// `hardware` for a GPU, its memory or a distributed job's peers, `needs-reproduction` for
    /// a file the thread does not provide; no network or a missing package stops the triage
    /// for a decision. Never "reproduces".
    fn lacked(&mut self, lack: Lack, outcome: &reproduce::Reproduction) {
        let (issue, report) = (&self.s.issue, &mut self.report);
        let detail = &outcome.detail;
        let ran_on_cpu = report
            .cpu_outcome
            .as_ref()
            .map(|c| {
                format!(
                    "; moved to the CPU, it ends with {} ({})",
                    c.result, c.detail
                )
            })
            .unwrap_or_default();
        let reason = format!(
            "not run to a result here: {} ({detail}){ran_on_cpu}; it needs {}",
            lack.says(),
            lack.needs()
        );
        let category = match lack {
            Lack::Gpu | Lack::GpuMemory | Lack::Peers => Category::Hardware,
            Lack::File => Category::NeedsReproduction,
            Lack::Network | Lack::Package => {
                stop(report, "reproduce", reason.clone(), true);
                report.reason = reason;
                return;
            }
        };
        let j = actionable::labelled(issue, category, reason, true, self.today);
        report.category = j.category.as_str();
        report.reason = j.reason;
        report.labels_to_add = j.labels_to_add;
        report.labels_to_remove = j.labels_to_remove;
        report.refresh_triaged = j.refresh_triaged;
        report.propose_close = j.propose_close;
    }

    /// `run_text`, which ran out of memory, with small sizes and how it ran, when that
    /// reproduces; noted either way.
    fn with_small_sizes(
        &mut self,
        run_text: &str,
        modules: &[String],
    ) -> Result<Option<(String, reproduce::Reproduction)>> {
        let (args, s) = (self.args, self.s);
        let Some(small) = prepare::small_dims(run_text, s.interp.parser_version) else {
            self.report.notes.push(
                "the repro ran out of memory, which the issue is not about, and has no sizes to shrink".into(),
            );
            return Ok(None);
        };
        say(args, "out of memory; trying again with small sizes");
        let seeded = prepare::fixed_seed(&small, modules);
        let retry = reproduce::reproduce(
            &small,
            &seeded,
            &s.interp.path,
            self.expected.as_ref(),
            &s.work.join("small-dims"),
            s.timeout,
        )?;
        self.report.notes.push(format!(
            "the repro ran out of memory, which the issue is not about; with small sizes: {} ({})",
            retry.result, retry.detail
        ));
        Ok(retry.reproduces.then_some((small, retry)))
    }

    /// Whether `--stop-after` lets `step` run.
    fn wants(&self, step: Step) -> bool {
        self.args.stop_after.is_none_or(|s| s >= step)
    }

    /// Step 7: a repro that no longer fails the reported way is run over the environments to
    /// find the first fixed version (and the pull requests in between, with --source-repo).
    fn bisect(
        &mut self,
        run_text: &str,
        outcome: &reproduce::Reproduction,
        deciding: bool,
    ) -> Result<()> {
        if outcome.reproduces
            || deciding
            || !self.wants(Step::Bisect)
            || !matches!(outcome.result, "no-error" | "different-error")
        {
            return Ok(());
        }
        let (args, s) = (self.args, self.s);
        let mut envs = s.envs.clone();
        envs.extend(bisect::conda_envs(&s.work)?);
        bisect::sort_envs(&mut envs);
        if envs.is_empty() {
            self.report.notes.push("no environments to bisect over (--env VER=PYTHON, or conda envs named pytorch-<ver>)".into());
            return Ok(());
        }
        say(args, format!("bisecting over {} environments", envs.len()));
        let expected = self.expected.as_ref();
        let mut b = bisect::bisect(run_text, &envs, expected, &s.work, s.timeout)?;
        if let (Some(src), Some(bad), Some(good)) =
            (&args.source_repo, &b.last_broken, &b.first_fixed)
        {
            let files: Vec<String> = self
                .blocks
                .iter()
                .filter(|b| b.kind == Kind::Traceback)
                .flat_map(|b| bisect::traceback_files(&b.text))
                .collect();
            let words = expected.map(bisect::keywords).unwrap_or_default();
            b.commits = bisect::find_commits(src, bad, good, &files, &words);
            b.fixed_by = bisect::fixed_by(&b.commits);
        }
        self.report.bisect = Some(b);
        Ok(())
    }

    /// Step 8: a repro that reproduces is minimized with the engine (on `cluster` when given).
    fn minimize(
        &mut self,
        repro: &str,
        run_text: &str,
        outcome: &reproduce::Reproduction,
        cluster: Option<&Cluster>,
    ) {
        let (args, s) = (self.args, self.s);
        let Some(sig) = outcome.signature.as_ref().filter(|_| outcome.reproduces) else {
            return;
        };
        if !self.wants(Step::Minimize) {
            return;
        }
        say(args, format!("minimizing with {sig}"));
        let place = minimize::Place {
            root: &s.root,
            work: &s.work,
            number: s.issue.number,
        };
        let execution = Execution {
            python: Some(s.interp.path.clone()),
            jobs: args.jobs,
            backend: cluster.cloned().map_or(Backend::Warm, Backend::Ray),
            ..Execution::default()
        };
        match minimize::minimize(
            repro,
            run_text,
            &outcome.first_runs,
            (!outcome.derived).then_some(sig.as_str()),
            &place,
            args.json,
            &execution,
        ) {
            Ok(mut m) => {
                let fresh = reproduce::failure_of(
                    &m.text,
                    &s.interp.path,
                    &s.work.join("minimized"),
                    s.timeout,
                );
                match fresh {
                    Ok(lines) => m.failure = lines,
                    Err(e) => self.report.notes.push(format!(
                        "the minimized repro could not be run again for its lines: {e:#}"
                    )),
                }
                self.report.minimized = Some(m);
            }
            Err(e) => self
                .report
                .notes
                .push(format!("minimization failed: {e:#}")),
        }
    }

    /// Step 10: the comment, which claims only what the runs showed; and the stop that
    /// `--stop-after` asked for before minimizing.
    fn comment(&mut self, outcome: &reproduce::Reproduction) {
        let (issue, report) = (&self.s.issue, &mut self.report);
        let issue_text = std::iter::once(issue.body.as_str())
            .chain(issue.comments.iter().map(|c| c.body.as_str()))
            .collect::<Vec<_>>()
            .join("\n");
        let versions = report.versions.as_ref().expect("set above");
        let seen = report::Seen {
            outcome,
            versions,
            thread_showed_error: self.expected.is_some(),
            on_cpu: report.cpu_outcome.is_some() && outcome.lacking.is_none(),
        };
        let text = match outcome.lacking {
            Some(lack) => {
                report.comment_not_posted = Some(format!(
                    "the comment is not posted: this machine could not run the repro to a result ({})",
                    lack.says()
                ));
                report::not_run_comment(
                    lack,
                    &seen,
                    report.cpu_outcome.as_ref(),
                    report.not_moved.as_deref(),
                )
            }
            None if !seen.thread_showed_error && outcome.result == "no-error" => {
                report::unreproduced_comment(outcome, versions, &self.s.work)
            }
            None => report::comment(
                &issue_text,
                &seen,
                report.bisect.as_ref(),
                report.minimized.as_ref(),
                report.hint.as_deref(),
            ),
        };
        report.comment = Some(text);
        if let Some(step) = self.args.stop_after.filter(|s| *s < Step::Minimize)
            && report.stopped.is_none()
        {
            let name = match step {
                Step::Reproduce => "reproduce",
                _ => "bisect",
            };
            stop(report, name, format!("--stop-after {name}"), false);
        }
    }
}

/// Reproduce to decide: a failing run makes the issue actionable with what was observed; a
/// run that exits 0 leaves it needing a reproduction, with the run in the comment.
fn decide(
    report: &mut Report,
    issue: &fetch::Issue,
    outcome: &reproduce::Reproduction,
    today: i64,
) {
    let (category, reason) = if outcome.reproduces {
        let sig = outcome
            .signature
            .clone()
            .unwrap_or_else(|| outcome.detail.clone());
        let also = if sig == outcome.detail {
            String::new()
        } else {
            format!(" (signature {sig})")
        };
        report.notes.push(format!(
            "the thread does not show the error; scrub observed {}{also}",
            outcome.detail
        ));
        (
            Category::Actionable,
            format!(
                "a runnable repro that fails here although the thread shows no error: {}",
                outcome.detail
            ),
        )
    } else {
        (
            Category::NeedsReproduction,
            format!(
                "the thread shows no error, and the repro ends here with {} ({})",
                outcome.result, outcome.detail
            ),
        )
    };
    let j = actionable::labelled(issue, category, reason, outcome.reproduces, today);
    report.category = j.category.as_str();
    report.reason = j.reason;
    report.labels_to_add = j.labels_to_add;
    report.labels_to_remove = j.labels_to_remove;
    report.refresh_triaged = j.refresh_triaged;
    report.propose_close = j.propose_close;
}

/// Step 11: the GitHub commands, printed or run.
fn plan_and_apply(args: &IssueArgs, s: &Setup, report: &mut Report) -> Result<()> {
    if report.category == Category::Closed.as_str() || s.issue.is_closed() {
        return Ok(());
    }
    if report.locked {
        report
            .notes
            .push("the issue is locked: no GitHub changes".into());
        return Ok(());
    }
    let Some(repo) = &s.repo else {
        report
            .notes
            .push("no repository (give --repo): no GitHub commands".into());
        return Ok(());
    };
    if report.stopped.as_ref().is_some_and(|st| st.needs_decision) {
        return Ok(());
    }
    let mut changes = Changes {
        add: report.labels_to_add.clone(),
        remove: report.labels_to_remove.clone(),
        refresh_triaged: report.refresh_triaged,
        ..Default::default()
    };
    if report.propose_close && args.confirm_close {
        changes.close = Some("not planned");
    }
    if let Some(why) = &report.comment_not_posted {
        report.notes.push(why.clone());
    } else if let (Some(comment), Some(outcome)) = (&report.comment, &report.outcome) {
        let file = s.work.join("comment.md");
        github::write_comment(&file, comment)?;
        changes.comment_file = Some(file);
        // Fixed only when the error the thread shows is gone: with prose alone, the comment
        // asks the reporter instead.
        if outcome.result == "no-error"
            && report.category == Category::Actionable.as_str()
            && report.expected_signature.is_some()
        {
            changes.close = Some("completed");
        }
    }
    report.plan = github::plan(s.issue.number, repo, s.issue.id.as_deref(), &changes);
    report.planned_commands = report.plan.iter().map(|p| p.argv.clone()).collect();
    if args.apply && !report.plan.is_empty() {
        say(args, "applying the GitHub changes");
        let (applied, _) = github::apply(&report.plan, Duration::from_secs(1));
        report.applied = applied;
    }
    Ok(())
}
