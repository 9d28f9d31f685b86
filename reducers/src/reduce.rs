//! The reduction loop: rounds of passes, candidates judged in fixed windows, wins merged.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::crash::Crash;
use crate::edit::{Candidate, count_lines};
use crate::kinds;
use crate::pass::Pass;
use crate::python::{Expr, PythonVersion, Script, Stmt, all_exprs, span};
use crate::scopes::Scopes;
use crate::tautology::empty_checks;

/// Judges candidate scripts. The binary runs them as processes; tests use one-line fakes.
pub trait Oracle {
    /// Whether each text still fails the same way; answers come back in the same order.
    /// The texts of one call are independent and may be run in parallel.
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted>;

    /// Starts judging `text` without waiting for its verdict, which [`ended`](Oracle::ended)
    /// gives once it is there, and returns true. An oracle that judges only in batches (the
    /// default) returns false: the loop then hands it the texts it would have started
    /// together, through [`judge`](Oracle::judge).
    fn start(&mut self, _text: &str) -> bool {
        false
    }

    /// Waits for the next text started with [`start`](Oracle::start) to be judged, in the
    /// order they end, and gives it with its verdict. Called only while some are started.
    fn ended(&mut self) -> Result<(String, bool), Interrupted> {
        unreachable!("an oracle that starts texts says when they end")
    }

    /// Told where the reduction stands when a pass starts and when a candidate is accepted.
    fn progress(&mut self, _progress: &Progress) {}

    /// The seconds spent judging the candidates of the pass named `pass` so far, for an
    /// oracle whose cost per candidate differs by pass and does not depend on the machine;
    /// the loop orders passes by bytes removed per second then, and per candidate otherwise.
    /// (scrub's own oracle leaves it: a schedule by wall time would make a result depend on
    /// the machine's load and on whether candidates ran warm or cold.)
    fn seconds(&self, _pass: &str) -> Option<f64> {
        None
    }

    /// Where `text` (a script the loop accepted) fails, for the passes that read it (see
    /// [`PassInfo::reads_crash`](crate::PassInfo::reads_crash)); `None` when the oracle cannot
    /// tell. Its cost is charged to the pass named in the last [`progress`](Oracle::progress).
    fn crash(&mut self, _text: &str) -> Option<Crash> {
        None
    }
}

/// The oracle was stopped (Ctrl-C): the loop returns the best script so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub pass: &'a str,
    pub round: usize,
    /// The current script: the last one accepted.
    pub text: &'a str,
    /// What the last accepted candidate did, when this reports one.
    pub step: Option<&'a str>,
    pub lines: usize,
    pub bytes: usize,
}

#[derive(Debug, Clone)]
pub struct Options {
    /// The Python version candidates must parse under.
    pub version: PythonVersion,
    /// Stop once fewer than this many non-blank, non-import lines remain; `None` goes on to the
    /// fixpoint.
    pub target_lines: Option<usize>,
    /// How many candidates are judged together. Fixed, and independent of how many run in
    /// parallel, so that the result is the same for any number of workers.
    pub window: usize,
    /// Within a round, a pass is set aside after this many candidates in a row were refused;
    /// a round without progress is then run again in full before the loop calls it a fixpoint.
    pub give_up_after: usize,
    /// How many candidates the oracle may judge at once (the workers there are). The
    /// candidates of a window are handed to it together; while fewer than this are being
    /// judged, the candidates after the window are handed to it too, one as each verdict
    /// comes back, speculatively (and once the pass has none left, those of the pass that
    /// follows it in the round). Verdicts are consumed in window order, exactly as if each
    /// window were judged alone, and dropped when a win changes the script: this changes how
    /// many run at once, never the result.
    pub in_flight: usize,
    /// The text the failure's message must hold (the signature's substring), if any: a
    /// candidate that cuts into it inside a string literal is never tried.
    pub message: Option<String>,
    /// Whether the failure is a mismatch that no control guards: nothing but the script's
    /// own check tells what it compares, so the sides of its checks keep every library call
    /// they reach (see [`crate::compared::reached`]).
    pub unguarded: bool,
    /// Where the script's own line raised the failure: the library functions whose results
    /// that line reads, which a candidate still calls (see [`crate::producers`]).
    pub producers: std::collections::BTreeSet<String>,
    /// The keywords the failure's message names that the failing line passes, which a
    /// candidate still passes (see [`crate::named`]).
    pub named: std::collections::BTreeSet<String>,
    /// Whether the failure is a `RecursionError` the original raised short of its limit: no
    /// candidate recurses endlessly (see [`crate::recursion`]).
    pub bounded_recursion: bool,
    /// Whether the failure is an `assert` whose message shows a value (`assert res[3] == 2,
    /// res`) rather than a text written out: its checks are those with such a message (see
    /// [`crate::perturbed::Failing`]).
    pub shown_check: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            version: PythonVersion::PY311,
            target_lines: Some(20),
            window: 8,
            give_up_after: 64,
            in_flight: 0,
            message: None,
            unguarded: false,
            producers: Default::default(),
            named: Default::default(),
            bounded_recursion: false,
            shown_check: false,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassStats {
    pub name: &'static str,
    /// Candidates handed to the oracle (merged ones included).
    pub candidates: usize,
    /// Candidates that became part of the script.
    pub accepted: usize,
    pub bytes_removed: usize,
    /// Pumps (see [`Growth::Pump`](crate::Growth::Pump)) that grew the script and were kept,
    /// because the rounds after them made it smaller than before; and those rolled back.
    pub pumps_kept: usize,
    pub pumps_rolled_back: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// Fewer lines than the target remain.
    TargetReached,
    /// A whole round of every pass changed nothing.
    Fixpoint,
    /// The oracle was interrupted.
    Interrupted,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::TargetReached => "target_reached",
            StopReason::Fixpoint => "fixpoint",
            StopReason::Interrupted => "interrupted",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Reduction {
    /// The smallest script found that the oracle accepted (or the input, if none was).
    pub text: String,
    pub passes: Vec<PassStats>,
    pub rounds: usize,
    pub stop: StopReason,
    /// Candidates judged speculatively (see [`Options::in_flight`]) whose verdicts a win made
    /// stale before they were consumed.
    pub speculative_wasted: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReduceError {
    #[error("the script has a syntax error under Python {0}")]
    Syntax(PythonVersion),
}

/// Non-blank lines that are not part of a top-level import nor tensor-subclass boilerplate
/// (see [`boilerplate_lines`]): what the stop rule counts.
pub fn code_lines(script: &Script) -> usize {
    let imports: usize = script
        .body()
        .iter()
        .filter(|s| matches!(s, Stmt::Import(_) | Stmt::ImportFrom(_)))
        .map(|s| count_lines(script.slice(s)))
        .sum();
    count_lines(script.text()) - imports - boilerplate_lines(script)
}

/// The non-blank lines of the dunders a tensor subclass cannot do without (`__new__`,
/// `__init__`, `__torch_dispatch__`, `__torch_function__`, `__tensor_flatten__`,
/// `__tensor_unflatten__`, `__repr__`) in module-level classes that derive from a `…Tensor`:
/// a repro of a subclass bug needs them however small it gets.
pub fn boilerplate_lines(script: &Script) -> usize {
    const DUNDERS: &[&str] = &[
        "__new__",
        "__init__",
        "__torch_dispatch__",
        "__torch_function__",
        "__tensor_flatten__",
        "__tensor_unflatten__",
        "__repr__",
    ];
    let is_tensor = |e: &crate::python::Expr| match e {
        crate::python::Expr::Name(n) => n.id.as_str().ends_with("Tensor"),
        crate::python::Expr::Attribute(a) => a.attr.as_str().ends_with("Tensor"),
        _ => false,
    };
    script
        .body()
        .iter()
        .filter_map(|s| match s {
            Stmt::ClassDef(c) if c.bases().iter().any(is_tensor) => Some(&c.body),
            _ => None,
        })
        .flatten()
        .filter(|s| matches!(s, Stmt::FunctionDef(f) if DUNDERS.contains(&f.name.as_str())))
        .map(|s| count_lines(script.slice(s)))
        .sum()
}

/// Reduces `text` with `passes` in rounds until the stop rule holds. When it stops at the
/// target, the passes that finish (see [`PassInfo::finishes`](crate::PassInfo::finishes):
/// comments, blank lines, unused imports) still run once.
///
/// Every accepted script is smaller than the one before (see `smaller`), so the loop ends. Within a
/// pass, candidates are judged `window` at a time; the first win of a window is accepted,
/// merged with every later win of the window that does not overlap it when the merged
/// script is judged good too, and the pass goes on from the first win's position in the
/// candidates of the new script.
pub fn reduce(
    text: &str,
    passes: &[&dyn Pass],
    oracle: &mut dyn Oracle,
    options: &Options,
) -> Result<Reduction, ReduceError> {
    let current =
        Script::parse(text, options.version).ok_or(ReduceError::Syntax(options.version))?;
    let stats = passes
        .iter()
        .map(|p| PassStats {
            name: p.info().name,
            ..PassStats::default()
        })
        .collect();
    let mut run = Run {
        accepted: HashSet::from([current.text().to_string()]),
        empty_checks: empty_checks(&current),
        current,
        stats,
        oracle,
        options,
        round: 0,
        pumps: Vec::new(),
        crash_misses: 0,
        crash: None,
        rolled_back: HashSet::new(),
        ahead: Ahead::default(),
        refused: vec![Refused::default(); passes.len()],
        clean: false,
        skipped: false,
    };
    let stop = run.rounds(passes);
    let mut interrupted = stop == StopReason::Interrupted;
    if stop == StopReason::TargetReached {
        // Stopping early must not leave comments, runs of blank lines and unused imports
        // behind.
        for (i, pass) in passes
            .iter()
            .enumerate()
            .filter(|(_, p)| p.info().finishes())
        {
            if run.pass(i, *pass, true, None) == Err(Interrupted) {
                interrupted = true;
                break;
            }
        }
    }
    // Speculative candidates still being judged end before the oracle is given back.
    if !interrupted {
        let _ = run.ahead.drain(&mut *run.oracle);
    }
    Ok(Reduction {
        text: run.current.text().to_string(),
        passes: run.stats,
        rounds: run.round,
        stop,
        speculative_wasted: run.ahead.wasted,
    })
}

/// The state of one reduction.
struct Run<'a> {
    current: Script,
    /// Every script accepted so far: a pass that may grow the script never returns to one.
    accepted: HashSet<String>,
    stats: Vec<PassStats>,
    oracle: &'a mut dyn Oracle,
    options: &'a Options,
    round: usize,
    /// Pumps that grew the script and wait for their verdict, oldest first.
    pumps: Vec<Pump>,
    /// The scripts a pump was rolled back to.
    rolled_back: HashSet<String>,
    /// Rounds in a row in which a pass that reads the failure accepted nothing.
    crash_misses: usize,
    /// The last script the oracle was asked where it fails, and its answer: the passes
    /// that read it share one run.
    crash: Option<(String, Option<Crash>)>,
    /// The candidates handed to the oracle, and their verdicts not consumed yet.
    ahead: Ahead,
    /// The asserts on constants the start had (see [`crate::tautology`]): a candidate with
    /// more is refused unseen.
    empty_checks: usize,
    /// Per pass, the edits the oracle refused (see `fingerprint`): the same edit proposed
    /// again, after a win elsewhere or in a later round, is not asked about again. A round
    /// that changes nothing forgets them all, and only a round that changes nothing with
    /// nothing forgotten is a fixpoint, so the result still stands every candidate.
    refused: Vec<Refused>,
    /// Whether this round asks about every candidate, none skipped as refused before.
    clean: bool,
    /// Whether this round proposed a candidate refused before (and so may have skipped it).
    skipped: bool,
}

/// See [`Run::proposals`].
const CRASH_PATIENCE: usize = 3;

/// How many times one run of a pass may grow the script: in a row (inlining a function that
/// calls itself through another would go on for ever), or between steps that shrink it (a
/// pump whose values, put in place, are rebuilt as other code each time it runs again:
/// `freeze_values` went back and forth between two scripts on a real report).
const MAX_GROWTH: usize = 8;

/// A pump that grew the script: the script before it, the pass, and the round it ran in.
struct Pump {
    before: String,
    pass: usize,
    round: usize,
}

/// How one pass ended when it did not run out of candidates.
#[derive(Debug, PartialEq, Eq)]
enum PassEnd {
    Exhausted,
    TargetReached,
    /// Too many candidates in a row were refused.
    GaveUp,
}

impl Run<'_> {
    fn target_met(&self) -> bool {
        self.options
            .target_lines
            .is_some_and(|t| code_lines(&self.current) < t)
    }

    /// Rounds of the passes until the target is met, a round of every pass changes nothing,
    /// or the oracle is interrupted. The fine passes (see [`Phase::Fine`](crate::Phase::Fine))
    /// wait for a round of the others that changed nothing; after a round that changed
    /// something, the next one leaves them out again.
    fn rounds(&mut self, passes: &[&dyn Pass]) -> StopReason {
        let (mut patient, mut fine) = (false, false);
        loop {
            if self.target_met() {
                return StopReason::TargetReached;
            }
            self.round += 1;
            let at_start = self.current.text().to_string();
            self.skipped = false;
            let mut gave_up = false;
            let order = self.schedule(passes);
            // Whether a pass read where the script fails this round, and whether one won.
            let (mut crash_read, mut crash_won) = (false, false);
            // Whether a pass that does not only tidy changed the script: tidying and
            // respelling alone open nothing up for another round.
            let mut progressed = false;
            for (n, &i) in order.iter().enumerate() {
                if passes[i].info().is_fine() && !fine {
                    continue;
                }
                // A respelling pass waits for a round in which nothing else changed the
                // script: a fine pass's win may still let deletion drop names.
                if passes[i].info().phase == crate::Phase::Respell && progressed {
                    continue;
                }
                let accepted = self.stats[i].accepted;
                let following = order[n + 1..]
                    .iter()
                    .map(|&j| passes[j])
                    .find(|p| fine || !p.info().is_fine());
                let end = self.pass(i, passes[i], patient, following);
                let won = self.stats[i].accepted != accepted;
                if passes[i].info().reads_crash {
                    crash_read = true;
                    crash_won |= won;
                }
                progressed |= won && !passes[i].info().tidies();
                match end {
                    Err(Interrupted) => return StopReason::Interrupted,
                    Ok(PassEnd::TargetReached) => return StopReason::TargetReached,
                    Ok(PassEnd::GaveUp) => gave_up = true,
                    Ok(PassEnd::Exhausted) => {}
                }
            }
            // Patience is counted in rounds of every pass, which give the others their turn.
            if crash_won {
                self.crash_misses = 0;
            } else if crash_read && fine {
                self.crash_misses += 1;
            }
            // A pump is judged once every pass has had a round after it.
            let rolled_back = fine && self.judge_pumps(false);
            if (progressed && self.current.text() != at_start) || rolled_back {
                (patient, fine, self.clean) = (false, false, false);
            } else if gave_up {
                // Every candidate gets its turn before the loop calls this a fixpoint.
                patient = true;
            } else if !fine {
                (patient, fine) = (false, true);
            } else if self.judge_pumps(true) {
                (patient, fine, self.clean) = (false, false, false);
            } else if self.skipped {
                // Every candidate again, those refused on earlier scripts too.
                self.refused.iter_mut().for_each(Refused::clear);
                (patient, self.clean) = (true, true);
            } else {
                return StopReason::Fixpoint;
            }
        }
    }

    /// Settles, oldest first, the pumps that have had a full round after their own (every
    /// pump when `all`): one after which the script is no smaller than before it is rolled
    /// back, with every later step, later pumps included. Returns whether that happened.
    fn judge_pumps(&mut self, all: bool) -> bool {
        while let Some(pump) = self.pumps.first() {
            if !all && pump.round >= self.round {
                return false;
            }
            if self.current.text().len() < pump.before.len() {
                self.stats[pump.pass].pumps_kept += 1;
                self.pumps.remove(0);
                continue;
            }
            let before = pump.before.clone();
            self.rolled_back.insert(before.clone());
            for later in std::mem::take(&mut self.pumps) {
                self.stats[later.pass].pumps_rolled_back += 1;
            }
            self.current =
                Script::parse(before, self.options.version).expect("accepted scripts parse");
            self.oracle
                .progress(&progress("rollback", self.round, &self.current));
            return true;
        }
        false
    }

    /// The order of the passes in this round: the bytes each removed per second of judging
    /// so far (per candidate when the oracle does not measure time), most first by powers of
    /// two (ties, and the first round, in registry order); the passes that tidy last.
    fn schedule(&self, passes: &[&dyn Pass]) -> Vec<usize> {
        let rate = |i: usize| {
            let s = &self.stats[i];
            let cost = match self.oracle.seconds(s.name) {
                Some(seconds) => seconds.max(1e-3),
                None => s.candidates.max(1) as f64,
            };
            s.bytes_removed as f64 / cost
        };
        // Rates are compared by their power of two: timings are noisy, and a pass order that
        // flipped with every run would make results differ between runs for no reason.
        let band = |i: usize| match rate(i) {
            r if r > 0.0 => r.log2().floor() as i64,
            _ => i64::MIN,
        };
        let mut order: Vec<usize> = (0..passes.len()).collect();
        order.sort_by(|&a, &b| {
            passes[a]
                .info()
                .tidies()
                .cmp(&passes[b].info().tidies())
                .then(band(b).cmp(&band(a)))
        });
        order
    }

    /// The candidates of `pass` for the current script, but those that touch kept code. A pass
    /// that reads where the script fails gets none once it came away empty-handed
    /// `CRASH_PATIENCE` rounds in a row: asking costs a run of the script.
    fn proposals(&mut self, pass: &dyn Pass) -> Vec<Candidate> {
        let candidates = if !pass.info().reads_crash {
            pass.candidates(&self.current)
        } else if self.crash_misses >= CRASH_PATIENCE {
            Vec::new()
        } else {
            let text = self.current.text();
            if self.crash.as_ref().is_none_or(|(t, _)| t != text) {
                self.crash = Some((text.to_string(), self.oracle.crash(text)));
            }
            match self.crash.as_ref().and_then(|(_, c)| c.as_ref()) {
                Some(crash) => pass.candidates_at(&self.current, crash),
                None => Vec::new(),
            }
        };
        unprotected(candidates, &self.current, self.options.message.as_deref())
    }

    /// Notes whether some of `candidates` are among those `refused` before: a round that
    /// skipped one is not a fixpoint.
    fn note_skips(&mut self, candidates: &[Candidate], refused: Option<&Refused>) {
        if let Some(refused) = refused {
            let text = self.current.text();
            self.skipped |= candidates.iter().any(|c| refused.skips(c, text));
        }
    }

    /// Runs pass number `i` over the current script until its candidates run out. While
    /// candidates are judged ahead, those of the `following` pass come after its own: when this
    /// one ends without a win, that one starts on the same script.
    fn pass(
        &mut self,
        i: usize,
        pass: &dyn Pass,
        patient: bool,
        following: Option<&dyn Pass>,
    ) -> Result<PassEnd, Interrupted> {
        if self.clean {
            return self.pass_with(i, pass, patient, following, None);
        }
        let mut refused = std::mem::take(&mut self.refused[i]);
        let end = self.pass_with(i, pass, patient, following, Some(&mut refused));
        self.refused[i] = refused;
        end
    }

    /// [`Run::pass`], skipping the candidates whose edits are among those `refused` (see
    /// [`Run::refused`]) and adding those it sees refused; every candidate without it.
    fn pass_with(
        &mut self,
        i: usize,
        pass: &dyn Pass,
        patient: bool,
        following: Option<&dyn Pass>,
        mut refused: Option<&mut Refused>,
    ) -> Result<PassEnd, Interrupted> {
        let none = Refused::default();
        self.oracle
            .progress(&progress(pass.info().name, self.round, &self.current));
        let mut candidates = self.proposals(pass);
        self.note_skips(&candidates, refused.as_deref());
        let mut cursor = 0;
        let mut refused_in_a_row = 0;
        let mut grown = 0;
        // What was handed out ahead for the current script: the texts of this pass, where its
        // candidates stop, and the following pass's candidates with where those stop.
        let mut own = HashSet::new();
        let mut later = 0;
        let mut after = FollowingAhead::default();
        loop {
            if !patient && refused_in_a_row >= self.options.give_up_after {
                return Ok(PassEnd::GaveUp);
            }
            // A pass may grow the script only so many times (see `MAX_GROWTH`).
            // Nor may a pump grow again a script it was rolled back to: its values may change
            // from run to run (see `freeze_values`), so its texts are new every time.
            let grows = (pass.info().may_grow()
                && grown < MAX_GROWTH
                && !(pass.info().is_pump() && self.rolled_back.contains(self.current.text())))
            .then_some(&self.accepted);
            let rules = Rules::of(pass, &self.current, self.empty_checks, self.options);
            let gate = Gate {
                current: &self.current,
                grows,
                rules: &rules,
                refused: refused.as_deref().unwrap_or(&none),
                options: self.options,
            };
            let (window, next) = fill_window(&candidates, cursor, &gate);
            if window.is_empty() {
                return Ok(PassEnd::Exhausted);
            }
            let texts: Vec<String> = window.iter().map(|(_, t)| t.clone()).collect();
            for text in &texts {
                own.insert(text.clone());
                self.ahead.start(&mut *self.oracle, text);
            }
            // The candidates after the window, handed out as workers come free: this pass's,
            // not past where it would give up if every one was refused; then the following
            // pass's.
            later = later.max(next);
            let give_up = if patient {
                usize::MAX
            } else {
                self.options.give_up_after
            };
            let mut more = || {
                if own.len() < give_up
                    && let Some((at, text)) = next_candidate(&candidates, later, &gate)
                {
                    later = at + 1;
                    own.insert(text.clone());
                    return Some(text);
                }
                after.next(
                    following,
                    &self.current,
                    &self.accepted,
                    self.empty_checks,
                    self.options,
                )
            };
            let mut verdicts = Vec::with_capacity(texts.len());
            for text in &texts {
                verdicts.push(self.ahead.take(
                    &mut *self.oracle,
                    text,
                    &mut more,
                    self.options.in_flight,
                )?);
            }
            self.stats[i].candidates += texts.len();
            if let Some(refused) = refused.as_deref_mut() {
                let lost = (0..window.len()).filter(|&w| !verdicts[w]);
                refused.insert(lost.map(|w| &candidates[window[w].0]), self.current.text());
            }
            let wins: Vec<usize> = (0..window.len()).filter(|&w| verdicts[w]).collect();
            let Some(&first) = wins.first() else {
                refused_in_a_row += texts.len();
                cursor = next;
                continue;
            };
            refused_in_a_row = 0;
            // Judged against the script before this win: stale.
            self.ahead.stale();
            (own, later, after) = (HashSet::new(), 0, FollowingAhead::default());
            let wins: Vec<(&Candidate, &str)> = wins
                .iter()
                .map(|&w| (&candidates[window[w].0], window[w].1.as_str()))
                .collect();
            let (accepted, parts, step) = self.merge_wins(i, &wins, &rules)?;
            let grew = self.accept(i, pass, accepted, parts, &step);
            grown += usize::from(grew);
            if self.target_met() && !pass.info().finishes() {
                self.ahead.stale();
                return Ok(PassEnd::TargetReached);
            }
            cursor = window[first].0;
            candidates = self.proposals(pass);
            self.note_skips(&candidates, refused.as_deref());
        }
    }

    /// The script a round's `wins` (candidates with their texts, first first) lead to, how
    /// many candidates it takes in, and its step: all the wins that do not overlap merged into
    /// one, if the oracle keeps that too, else the first.
    fn merge_wins(
        &mut self,
        i: usize,
        wins: &[(&Candidate, &str)],
        rules: &Rules,
    ) -> Result<(String, usize, String), Interrupted> {
        let (first, first_text) = wins[0];
        let (mut accepted, mut parts) = (first_text.to_string(), 1);
        let mut step = first.description.clone();
        let mut merged = first.clone();
        let mut merged_parts = 1;
        for &(other, _) in &wins[1..] {
            if merged.is_disjoint(other) {
                merged = merged.merge(other);
                merged_parts += 1;
            }
        }
        if merged_parts > 1
            && let Some(text) = merged.apply(self.current.text())
            && Script::parse(text.as_str(), self.options.version).is_some_and(|s| rules.allow(&s))
        {
            self.ahead.start(&mut *self.oracle, &text);
            let verdict = self.ahead.take(&mut *self.oracle, &text, &mut || None, 0)?;
            self.stats[i].candidates += 1;
            if verdict {
                (accepted, parts) = (text, merged_parts);
                step = merged.description.clone();
            }
        }
        Ok((accepted, parts, step))
    }

    /// Makes `accepted`, won by pass number `i` with `parts` candidates in the `step`
    /// described, the current script; returns whether it grew the script.
    fn accept(
        &mut self,
        i: usize,
        pass: &dyn Pass,
        accepted: String,
        parts: usize,
        step: &str,
    ) -> bool {
        self.stats[i].accepted += parts;
        self.stats[i].bytes_removed += self.current.text().len().saturating_sub(accepted.len());
        self.accepted.insert(accepted.clone());
        let grew = accepted.len() > self.current.text().len();
        if pass.info().is_pump() && grew {
            self.pumps.push(Pump {
                before: self.current.text().to_string(),
                pass: i,
                round: self.round,
            });
        }
        self.current =
            Script::parse(accepted, self.options.version).expect("accepted scripts parse");
        self.oracle.progress(&Progress {
            step: Some(step),
            ..progress(pass.info().name, self.round, &self.current)
        });
        grew
    }
}

/// The candidates of the following pass handed out ahead: made on first need, and where
/// those handed out stop.
#[derive(Default)]
struct FollowingAhead {
    following: Option<Following>,
    later: usize,
}

impl FollowingAhead {
    /// The text of the next candidate of the `following` pass on `current` to judge ahead.
    fn next(
        &mut self,
        following: Option<&dyn Pass>,
        current: &Script,
        accepted: &HashSet<String>,
        empty_checks: usize,
        options: &Options,
    ) -> Option<String> {
        if self.following.is_none() {
            self.following = Some(Following::of(following?, current, empty_checks, options)?);
        }
        let next = self.following.as_ref()?;
        let gate = Gate {
            current,
            grows: next.grows.then_some(accepted),
            rules: &next.rules,
            refused: &Refused::default(),
            options,
        };
        let (at, text) = next_candidate(&next.candidates, self.later, &gate)?;
        self.later = at + 1;
        Some(text)
    }
}

/// The candidates of the pass that follows the running one, for the current script: judged
/// ahead once the running pass has none left to hand out.
struct Following {
    candidates: Vec<Candidate>,
    rules: Rules,
    /// Whether it may grow the script (see [`PassInfo::may_grow`](crate::PassInfo::may_grow)).
    grows: bool,
}

impl Following {
    /// `None` for a pass that reads where the script fails: asking costs a run.
    fn of(
        pass: &dyn Pass,
        current: &Script,
        empty_checks: usize,
        options: &Options,
    ) -> Option<Following> {
        if pass.info().reads_crash {
            return None;
        }
        Some(Following {
            candidates: unprotected(
                pass.candidates(current),
                current,
                options.message.as_deref(),
            ),
            rules: Rules::of(pass, current, empty_checks, options),
            grows: pass.info().may_grow(),
        })
    }
}

/// The texts handed to the oracle and the verdicts that came back (see
/// [`Options::in_flight`]); verdicts are taken by text, in the loop's order, whatever the order
/// they came back in.
#[derive(Default)]
struct Ahead {
    /// Verdicts that came back for the current script and were not consumed yet.
    verdicts: HashMap<String, bool>,
    /// Texts started and not judged yet, and whether their verdict is still wanted (false:
    /// started for an earlier script, stale).
    running: HashMap<String, bool>,
    /// Texts for an oracle that judges only in batches, judged together at the next wait.
    batch: Vec<String>,
    /// Verdicts dropped unconsumed because the script changed.
    wasted: usize,
}

impl Ahead {
    /// Hands `text` to the oracle unless its verdict is there or coming.
    fn start(&mut self, oracle: &mut dyn Oracle, text: &str) {
        if self.verdicts.contains_key(text) || self.batch.iter().any(|t| t == text) {
            return;
        }
        if let Some(wanted) = self.running.get_mut(text) {
            *wanted = true;
        } else if oracle.start(text) {
            self.running.insert(text.to_string(), true);
        } else {
            self.batch.push(text.to_string());
        }
    }

    /// The verdict of `text` (handed to the oracle before). While it is not there, the
    /// texts `more` gives are handed to the oracle too, as long as fewer than `in_flight`
    /// are being judged.
    fn take(
        &mut self,
        oracle: &mut dyn Oracle,
        text: &str,
        more: &mut dyn FnMut() -> Option<String>,
        in_flight: usize,
    ) -> Result<bool, Interrupted> {
        loop {
            if let Some(verdict) = self.verdicts.remove(text) {
                return Ok(verdict);
            }
            while self.running.len() + self.batch.len() < in_flight {
                let Some(next) = more() else { break };
                self.start(oracle, &next);
            }
            self.wait(oracle)?;
        }
    }

    /// Waits for one more verdict (a whole batch, from an oracle that judges in batches).
    fn wait(&mut self, oracle: &mut dyn Oracle) -> Result<(), Interrupted> {
        if !self.batch.is_empty() {
            let texts = std::mem::take(&mut self.batch);
            let verdicts = oracle.judge(&texts)?;
            self.verdicts.extend(texts.into_iter().zip(verdicts));
            return Ok(());
        }
        let (text, verdict) = oracle.ended()?;
        match self.running.remove(&text) {
            Some(true) => {
                self.verdicts.insert(text, verdict);
            }
            _ => self.wasted += 1,
        }
        Ok(())
    }

    /// The script changed: the verdicts there are dropped, those still coming will be.
    fn stale(&mut self) {
        self.wasted += self.verdicts.len() + self.batch.len();
        self.verdicts.clear();
        self.batch.clear();
        self.running.values_mut().for_each(|wanted| *wanted = false);
    }

    /// Waits for every text still being judged, and drops its verdict.
    fn drain(&mut self, oracle: &mut dyn Oracle) -> Result<(), Interrupted> {
        self.stale();
        while !self.running.is_empty() {
            self.wait(oracle)?;
        }
        Ok(())
    }
}

fn progress<'a>(pass: &'a str, round: usize, script: &'a Script) -> Progress<'a> {
    Progress {
        pass,
        round,
        text: script.text(),
        step: None,
        lines: count_lines(script.text()),
        bytes: script.text().len(),
    }
}

/// The order every accepted script must descend in: shorter, or as long and lexicographically
/// smaller (`5` → `1`). Each length has finitely many texts, so the loop ends.
fn smaller(text: &str, than: &str) -> bool {
    (text.len(), text) < (than.len(), than)
}

/// `candidates` without those that touch code marked `# scrub: keep`, nor those that cut into
/// the failure's `message` where a string literal holds it (see [`message_cuts`]).
fn unprotected(
    mut candidates: Vec<Candidate>,
    script: &Script,
    message: Option<&str>,
) -> Vec<Candidate> {
    let protected = script.protected();
    if !protected.is_empty() {
        candidates.retain(|c| !c.edits.iter().any(|e| e.touches(&protected)));
    }
    let cuts = message.map(|m| message_cuts(script, m)).unwrap_or_default();
    if !cuts.is_empty() {
        candidates.retain(|c| {
            !c.edits.iter().any(|e| {
                cuts.iter().any(|(literal, occurrence)| {
                    literal.start <= e.range.start
                        && e.range.end <= literal.end
                        && e.range.start < occurrence.end
                        && occurrence.start < e.range.end.max(e.range.start + 1)
                })
            })
        });
    }
    candidates
}

/// Each string literal of `script` that holds `message`, with where the message is in it.
/// An edit within such a literal that reaches into the message (a chunk of its characters,
/// the literal halved or emptied) can only lose the failure when the script raises it, and
/// gains nothing over deleting the literal whole when it is a decoy: such a candidate is
/// never tried. Deleting the statement or the expression around the literal still is.
fn message_cuts(script: &Script, message: &str) -> Vec<(Range<usize>, Range<usize>)> {
    if message.is_empty() {
        return Vec::new();
    }
    let text = script.text();
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        if !matches!(expr, Expr::StringLiteral(_) | Expr::FString(_)) {
            continue;
        }
        let literal = span(expr);
        for (at, _) in text[literal.clone()].match_indices(message) {
            let start = literal.start + at;
            out.push((literal.clone(), start..start + message.len()));
        }
    }
    out
}

/// What every candidate must respect, whatever the oracle says.
struct Rules {
    /// No more asserts on constants, nor raises that no check guards, than the start had: a
    /// check that checks nothing is not a repro, whatever the signature (see
    /// [`crate::tautology`]).
    empty_checks: usize,
    /// The values of the arguments the torch passes own, for a pass that must keep their
    /// kind (see [`crate::kinds`]).
    kinds: Option<HashMap<String, HashSet<String>>>,
    /// How often the script uses a module as a value: a candidate may not do it more often
    /// (see [`kinds::module_values`]).
    module_values: usize,
    /// The names the script binds and reads nowhere unbound: a candidate may not read one
    /// where no scope binds it (`import torch` deleted while `torch.randn` stays, `x = …`
    /// deleted from a function that reads `x`), which raises `NameError` when the read runs.
    /// Where it never runs (a function nobody calls), deleting that code first makes the
    /// binding unused, for the passes that remove those.
    bound_names: HashSet<String>,
    /// How many constructions of the script's dataclasses do not fit their fields: a
    /// candidate may not have more (see [`crate::passes::misfit_constructions`]).
    misfits: usize,
    /// How many `__init__`s of subclasses do not build their base: a candidate may not have
    /// more (see [`crate::unbuilt`]).
    unbuilt: usize,
    /// How many sizes of a script that marks them dynamic are 0 or 1: a candidate may not
    /// have more (see [`crate::passes::unit_sizes`]); `None` for a script that marks none,
    /// whose candidates are not counted (no pass adds such a mark).
    unit_sizes: Option<usize>,
    /// The checks that compare two computations, by the library calls each side reaches: a
    /// candidate keeps comparing them (see [`crate::compared`]).
    compared: Vec<crate::compared::Check>,
    /// The asserts against a literal the failure comes from: a candidate keeps the inputs
    /// they were worked out from (see [`crate::expected`]).
    expected: Vec<crate::expected::Expected>,
    /// The calls applied to another's result with the same settings: a candidate keeps them
    /// alike (see [`crate::round_trips`]).
    round_trips: Vec<crate::round_trips::RoundTrip>,
    /// How many calls are handed tensors built with different sizes: a candidate may not have
    /// more (see [`crate::shapes`]).
    misfit_sizes: usize,
    /// The script's functions handed to two or more library checks: a candidate hands each
    /// to each still (see [`crate::checks`]).
    checked: Vec<crate::checks::Checked>,
    /// The words the two sides of a check swap where they read alike otherwise: a
    /// candidate's check swaps them and nothing else (see [`crate::differential`]).
    differentials: Vec<crate::differential::Swaps>,
    /// For a mismatch no control guards, the library calls each side of each comparing check
    /// reaches: a candidate's sides reach them all still (see [`crate::compared::reached`]).
    reached: Vec<crate::compared::Sides>,
    /// Under the same, the data an `assert` of one value reads (see
    /// [`crate::expected::unguarded`]).
    unguarded: Vec<crate::expected::Unguarded>,
    /// The sides of the script's asserted comparisons: no candidate asserts one alone (see
    /// [`crate::differential::keeps_comparing`]).
    asserted_sides: HashSet<String>,
    /// The library decorators and bases of the definitions the checks read (see
    /// [`crate::definitions`]).
    made: Vec<crate::definitions::Made>,
    /// The library functions whose results the failing line reads (see
    /// [`Options::producers`]).
    producers: std::collections::BTreeSet<String>,
    /// How many statements follow a `return`, `raise`, `break` or `continue` in their block:
    /// a candidate makes no more (see [`crate::python::dead_statements`]).
    dead: usize,
    /// Per check, whether its sides are built from the same data: a candidate's still are
    /// (see [`crate::differential::shared_inputs`]).
    shared_inputs: Vec<bool>,
    /// Per check, how many strings both its sides read (see
    /// [`crate::differential::shared_strings`]).
    shared_strings: Vec<usize>,
    /// The keywords both sides of each check pass alike (see
    /// [`crate::differential::shared_settings`]).
    shared_settings: Vec<std::collections::BTreeSet<String>>,
    /// The settings of the checks' comparison calls (see
    /// [`crate::differential::tolerances`]).
    tolerances: crate::differential::Tolerances,
    /// How many class fields are declared with each typing form: a candidate declares as
    /// many (see [`crate::fields`]).
    forms: std::collections::BTreeMap<String, usize>,
    /// The methods that set a property an `assert` tests: a candidate still calls them (see
    /// [`crate::established`]).
    setters: std::collections::BTreeSet<String>,
    /// The methods called for their effect on the values the asserts read through a method:
    /// a candidate still calls them (see [`crate::established::histories`]).
    histories: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    /// The names each function binds itself: a candidate's functions read none of them from
    /// the module (see [`crate::locals`]).
    locals: HashSet<(String, String)>,
    /// The keywords the failure's message names: a candidate still passes them (see
    /// [`crate::named`]).
    named: std::collections::BTreeSet<String>,
    /// The keywords that turn on a library's checks of its input: a candidate still passes
    /// them `True` (see [`crate::validating`]).
    validating: std::collections::BTreeSet<String>,
    /// The script's recursions, where the failure is one cut short of its limit: a
    /// candidate makes none endless, and keeps their ways out (see [`crate::recursion`]).
    recursions: Option<crate::recursion::Recursions>,
    /// The parameters the script's lambdas do not read: a candidate has no more (see
    /// [`crate::ignored`]).
    unread_lambda_parameters: usize,
    /// The copies changed in place that a check reads, the properties and the arithmetic of
    /// the checks: a candidate keeps them (see [`crate::perturbed`]).
    perturbed: crate::perturbed::Compared,
    /// The failure's message, which picks the checks it comes from.
    message: Option<String>,
}

impl Rules {
    /// The rules the candidates of `pass` for `current` keep.
    fn of(pass: &dyn Pass, current: &Script, empty_checks: usize, options: &Options) -> Rules {
        let message = options.message.as_deref();
        Rules {
            empty_checks,
            // The arguments the torch passes own keep their kind under any other pass.
            kinds: (!kinds::TORCH_PASSES.contains(&pass.info().name))
                .then(|| kinds::owned_values(current)),
            module_values: kinds::module_values(current),
            bound_names: {
                let scopes = Scopes::of(current.body());
                let unbound: HashSet<&str> = scopes.unbound_reads().collect();
                scopes
                    .bound_names()
                    .into_iter()
                    .filter(|name| !unbound.contains(name))
                    .map(str::to_string)
                    .collect()
            },
            misfits: crate::passes::misfit_constructions(current),
            unbuilt: crate::unbuilt::unbuilt_inits(current),
            unit_sizes: crate::torch::marks_dynamic(current)
                .then(|| crate::passes::unit_sizes(current)),
            compared: crate::compared::compared(current, message),
            expected: crate::expected::expected(current, message, options.shown_check),
            round_trips: crate::round_trips::round_trips(current),
            misfit_sizes: crate::shapes::misfits(current),
            locals: crate::locals::locals(current),
            checked: crate::checks::checked(current),
            differentials: crate::differential::differentials(current),
            setters: crate::established::setters(current),
            histories: crate::established::histories(current),
            forms: crate::fields::forms(current),
            shared_inputs: crate::differential::shared_inputs(current),
            shared_settings: crate::differential::shared_settings(current),
            shared_strings: crate::differential::shared_strings(current),
            tolerances: crate::differential::tolerances(current),
            dead: crate::python::dead_statements(current.body()),
            producers: options.producers.clone(),
            asserted_sides: crate::differential::asserted_sides(current),
            made: crate::definitions::made(current),
            reached: match options.unguarded {
                true => crate::compared::reached(current),
                false => Vec::new(),
            },
            unguarded: match options.unguarded {
                true => crate::expected::unguarded(current),
                false => Vec::new(),
            },
            named: options.named.clone(),
            validating: crate::validating::validating(current),
            unread_lambda_parameters: crate::ignored::unread_lambda_parameters(current),
            perturbed: crate::perturbed::Compared::of(
                current,
                &crate::perturbed::Failing {
                    message: message.map(str::to_string),
                    shown: options.shown_check,
                },
            ),
            recursions: options
                .bounded_recursion
                .then(|| crate::recursion::Recursions::of(current)),
            message: message.map(str::to_string),
        }
    }

    fn allow(&self, candidate: &Script) -> bool {
        let scopes = Scopes::of(candidate.body());
        !scopes
            .unbound_reads()
            .any(|name| self.bound_names.contains(name))
            && empty_checks(candidate) <= self.empty_checks
            && crate::python::dead_statements(candidate.body()) <= self.dead
            && crate::passes::misfit_constructions(candidate) <= self.misfits
            && crate::unbuilt::unbuilt_inits(candidate) <= self.unbuilt
            && self
                .unit_sizes
                .is_none_or(|most| crate::passes::unit_sizes(candidate) <= most)
            && kinds::module_values(candidate) <= self.module_values
            && crate::compared::keeps(&self.compared, candidate, self.message.as_deref())
            && crate::expected::keeps(&self.expected, candidate)
            && crate::round_trips::keeps(&self.round_trips, candidate)
            && crate::shapes::misfits(candidate) <= self.misfit_sizes
            && crate::locals::keeps(&self.locals, candidate, &scopes)
            && crate::checks::keeps(&self.checked, candidate)
            && crate::differential::keeps(&self.differentials, candidate)
            && crate::established::keeps(&self.setters, candidate)
            && crate::established::keeps_histories(&self.histories, candidate)
            && crate::fields::keeps(&self.forms, candidate)
            && crate::producers::keeps(&self.producers, candidate)
            && crate::differential::keeps_shared(&self.shared_inputs, candidate)
            && crate::differential::keeps_settings(&self.shared_settings, candidate)
            && crate::differential::keeps_strings(&self.shared_strings, candidate)
            && crate::differential::keeps_tolerances(&self.tolerances, candidate)
            && crate::compared::keeps_reached(&self.reached, candidate)
            && crate::expected::keeps_unguarded(&self.unguarded, candidate)
            && crate::differential::keeps_comparing(&self.asserted_sides, candidate)
            && crate::definitions::keeps(&self.made, candidate)
            && crate::named::keeps(&self.named, candidate)
            && crate::validating::keeps(&self.validating, candidate)
            && self.recursions.as_ref().is_none_or(|r| r.keeps(candidate))
            && crate::ignored::unread_lambda_parameters(candidate) <= self.unread_lambda_parameters
            && self.perturbed.keeps(candidate)
            && self
                .kinds
                .as_ref()
                .is_none_or(|before| kinds::keeps_kinds(before, candidate))
    }
}

/// The edits the oracle refused, each by what it does wherever it is in the script (the code
/// each edit replaces and what replaces it), with the script it was refused on.
#[derive(Debug, Clone, Default)]
struct Refused(HashMap<u64, u64>);

impl Refused {
    /// Records `candidates`, refused on `text`.
    fn insert<'c>(&mut self, candidates: impl Iterator<Item = &'c Candidate>, text: &str) {
        let on = hash(text);
        for candidate in candidates {
            self.0.insert(fingerprint(candidate, text), on);
        }
    }

    /// Whether `candidate` does on `text` what was refused on another script. On the same
    /// script it makes the same text, which the oracle's cache answers.
    fn skips(&self, candidate: &Candidate, text: &str) -> bool {
        !self.0.is_empty()
            && self
                .0
                .get(&fingerprint(candidate, text))
                .is_some_and(|&on| on != hash(text))
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn fingerprint(candidate: &Candidate, text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for edit in &candidate.edits {
        text.get(edit.range.clone()).hash(&mut hasher);
        edit.replacement.hash(&mut hasher);
    }
    hasher.finish()
}

/// What a candidate must pass to be handed to the oracle (see [`next_candidate`]).
struct Gate<'a> {
    current: &'a Script,
    /// The scripts accepted so far, when a candidate may grow the script.
    grows: Option<&'a HashSet<String>>,
    rules: &'a Rules,
    refused: &'a Refused,
    options: &'a Options,
}

/// The first candidate from `cursor` on that the `gate` lets through: not refused before,
/// smaller than the current script, parsing and keeping the `rules`; with its index and text.
/// With `grows` (the scripts accepted so far), a candidate may also be larger, if it leads to
/// a script never accepted before.
fn next_candidate(candidates: &[Candidate], cursor: usize, gate: &Gate) -> Option<(usize, String)> {
    let Gate {
        current,
        grows,
        rules,
        refused,
        options,
    } = *gate;
    (cursor..candidates.len()).find_map(|i| {
        if refused.skips(&candidates[i], current.text()) {
            return None;
        }
        let text = candidates[i].apply(current.text())?;
        ((smaller(&text, current.text()) || grows.is_some_and(|a| !a.contains(&text)))
            && Script::parse(text.as_str(), options.version).is_some_and(|s| rules.allow(&s)))
        .then_some((i, text))
    })
}

/// The next `window` distinct candidates from `cursor` on (see [`next_candidate`]), with
/// their texts; and the index after the last one looked at.
fn fill_window(
    candidates: &[Candidate],
    cursor: usize,
    gate: &Gate,
) -> (Vec<(usize, String)>, usize) {
    let mut window: Vec<(usize, String)> = Vec::new();
    let mut i = cursor;
    while window.len() < gate.options.window {
        let Some((at, text)) = next_candidate(candidates, i, gate) else {
            return (window, candidates.len());
        };
        if !window.iter().any(|(_, t)| *t == text) {
            window.push((at, text));
        }
        i = at + 1;
    }
    (window, i)
}
