//! Step 3: whether an issue is actionable, judged before anything runs.
//!
//! The issue's text is data: it decides the category, never what scrub does beyond that.

use serde::Serialize;

use super::evidence::Evidence;
use super::extract::{Block, Choice, Kind};
use super::fetch::{self, Issue};

/// The labels the judgement adds, removes or refreshes.
pub const FEATURE: &str = "feature";
pub const BETTER_ENGINEERING: &str = "better-engineering";
pub const TRACKER: &str = "tracker";
pub const NEEDS_REPRO: &str = "needs reproduction";
pub const TRIAGED: &str = "triaged";
pub const DUPLICATE: &str = "duplicate";

/// What kind of issue this is, for triage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Actionable,
    Closed,
    Duplicate,
    Feature,
    BetterEngineering,
    Tracker,
    Hardware,
    NeedsReproduction,
    ScreenshotOnly,
}

impl Category {
    /// The name the report and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Actionable => "actionable",
            Category::Closed => "closed",
            Category::Duplicate => "duplicate",
            Category::Feature => "feature",
            Category::BetterEngineering => "better-engineering",
            Category::Tracker => "tracker",
            Category::Hardware => "hardware",
            Category::NeedsReproduction => "needs-reproduction",
            Category::ScreenshotOnly => "screenshot-only",
        }
    }
}

/// The judgement of one issue.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub category: Category,
    /// One sentence on why.
    pub reason: String,
    pub labels_to_add: Vec<String>,
    pub labels_to_remove: Vec<String>,
    /// Nothing visible changes on a non-actionable issue: take `triaged` off and put it back.
    pub refresh_triaged: bool,
    /// Old, unassigned, idle and underspecified: closing as not planned is proposed (and
    /// planned only with `--confirm-close`).
    pub propose_close: bool,
    pub duplicate_of: Option<u64>,
    /// No failure in a form scrub reads, but a self-contained script: after the safety
    /// review and the collaborator check, running it decides between actionable and needs
    /// reproduction.
    pub run_to_decide: bool,
}

/// Judges `issue` from its state, labels, title, blocks and the failure it shows; `today` in
/// days since the epoch.
pub fn judge(
    issue: &Issue,
    blocks: &[Block],
    choice: Option<&Choice>,
    evidence: Option<&Evidence>,
    today: i64,
) -> Judgement {
    let (category, reason) = categorize(issue, blocks, choice, evidence);
    let mut j = labelled(issue, category, reason, choice.is_some(), today);
    // A self-contained script and no failure in a form scrub reads: running it decides.
    j.run_to_decide = category == Category::NeedsReproduction
        && evidence.is_none()
        && choice.is_some_and(|c| super::extract::self_contained(&blocks[c.block].text));
    j
}

/// The judgement's labels for `category`: its label added when missing, `needs
/// reproduction` removed when a repro is present, `triaged` refreshed on a non-actionable
/// issue whose labels need no change.
pub fn labelled(
    issue: &Issue,
    category: Category,
    reason: String,
    has_repro: bool,
    today: i64,
) -> Judgement {
    let mut add = Vec::new();
    let mut remove = Vec::new();
    let wanted = match category {
        Category::Feature => Some(FEATURE),
        Category::BetterEngineering => Some(BETTER_ENGINEERING),
        Category::Tracker => Some(TRACKER),
        Category::NeedsReproduction => Some(NEEDS_REPRO),
        Category::Duplicate => Some(DUPLICATE),
        _ => None,
    };
    if let Some(label) = wanted
        && !issue.has_label(label)
        && !issue.is_closed()
    {
        add.push(label.to_string());
    }
    // A valid repro answers `needs reproduction`, whatever else the issue is.
    let has_repro = has_repro && !matches!(category, Category::NeedsReproduction);
    if has_repro && !issue.is_closed() && issue.has_label(NEEDS_REPRO) {
        remove.push(NEEDS_REPRO.to_string());
    }
    let non_actionable = !matches!(category, Category::Actionable | Category::Closed);
    let mut refresh_triaged = false;
    if non_actionable && !issue.is_closed() && add.is_empty() && remove.is_empty() {
        if issue.has_label(TRIAGED) {
            refresh_triaged = true;
        } else {
            add.push(TRIAGED.to_string());
        }
    }
    let propose_close = category == Category::NeedsReproduction && stale(issue, today);
    Judgement {
        category,
        reason,
        labels_to_add: add,
        labels_to_remove: remove,
        refresh_triaged,
        propose_close,
        duplicate_of: duplicate_of(issue),
        run_to_decide: false,
    }
}

fn categorize(
    issue: &Issue,
    blocks: &[Block],
    choice: Option<&Choice>,
    evidence: Option<&Evidence>,
) -> (Category, String) {
    let title = issue.title.to_ascii_lowercase();
    let body = issue.body.to_ascii_lowercase();
    if let Some(found) = closed_or_duplicate(issue) {
        return found;
    }
    if let Some(why) = tracker(issue, choice) {
        return (
            Category::Tracker,
            format!("{why}: there is nothing to reproduce"),
        );
    }
    if issue.has_label(FEATURE)
        || issue.has_label("enhancement")
        || title.starts_with("rfc")
        || title_has(
            &title,
            &["[rfc]", "[feature", "feature request", "feature:"],
        )
        || body.contains("the feature, motivation and pitch")
    {
        return (
            Category::Feature,
            "a feature request or RFC, not a bug".into(),
        );
    }
    if issue.has_label(BETTER_ENGINEERING)
        || issue.has_label("better engineering")
        || title_has(
            &title,
            &["[be]", "better engineering", "[refactor]", "[cleanup]"],
        )
        || (choice.is_none() && maintenance_task(issue))
    {
        return (
            Category::BetterEngineering,
            "better engineering (cleanup or refactoring), not a bug".into(),
        );
    }
    if let Some(found) = hardware(issue, blocks, choice) {
        return found;
    }
    // Images without code, and no failure in text beyond a sentence pointing at them.
    let text_evidence = evidence.is_some_and(|e| e.form != super::evidence::Form::Prose);
    if choice.is_none() && !text_evidence && super::extract::screenshot_only(issue, blocks) {
        return (
            Category::ScreenshotOnly,
            "the code and the error are shown only as images; ask for them as text".into(),
        );
    }
    let Some(choice) = choice else {
        if let Some(ask) = asks_for_a_feature(issue) {
            return (
                Category::Feature,
                format!("a request, not a bug report (\"{ask}\")"),
            );
        }
        return (
            Category::NeedsReproduction,
            "no runnable repro in a fenced code block".into(),
        );
    };
    let Some(evidence) = evidence else {
        return (
            Category::NeedsReproduction,
            "there is a script but no error: neither a traceback nor a described failure".into(),
        );
    };
    (
        Category::Actionable,
        format!(
            "a bug with a runnable repro ({}); the failure: {} in the {} (\"{}\")",
            choice.reason,
            describe(evidence),
            evidence.source,
            evidence.text
        ),
    )
}

/// A closed issue, or an open one that is a duplicate: its category and reason.
fn closed_or_duplicate(issue: &Issue) -> Option<(Category, String)> {
    let duplicate = duplicate_reason(issue);
    if issue.is_closed() {
        if let Some(why) = duplicate {
            return Some((
                Category::Duplicate,
                format!("the issue is closed as a duplicate ({why}); nothing is run or changed"),
            ));
        }
        let why = issue
            .state_reason
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(|r| format!(" ({})", r.to_ascii_lowercase().replace('_', " ")))
            .unwrap_or_default();
        return Some((
            Category::Closed,
            format!("the issue is closed{why}; nothing is run or changed"),
        ));
    }
    duplicate.map(|why| (Category::Duplicate, format!("the issue is {why}")))
}

/// A repro or report that needs hardware this machine lacks: its category and reason.
fn hardware(
    issue: &Issue,
    blocks: &[Block],
    choice: Option<&Choice>,
) -> Option<(Category, String)> {
    let code_and_shell: String = blocks
        .iter()
        .filter(|b| matches!(b.kind, Kind::Code | Kind::Shell))
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let gpus = crate::engine::workers::detect_gpus(None).len();
    if let Some(need) = hardware_need(&code_and_shell, gpus) {
        return Some((
            Category::Hardware,
            format!("the repro needs {need}, which this machine does not have"),
        ));
    }
    if let Some(need) = gpus_named(issue, choice.is_none(), gpus) {
        return Some((
            Category::Hardware,
            format!("the report is about {need}, more than this machine has"),
        ));
    }
    hardware_named(issue, choice.is_none()).map(|need| {
        (
            Category::Hardware,
            format!("the report is about {need}, which this machine does not have"),
        )
    })
}

/// How the report shows its failure, in words.
fn describe(e: &Evidence) -> &'static str {
    use super::evidence::{Form, What};
    match (e.form, e.kind) {
        (Form::Traceback, _) => "a traceback",
        (Form::Jupyter, _) => "a Jupyter traceback",
        (Form::Abort, _) => "a C++ abort",
        (Form::FatalSignal, _) => "a fatal signal",
        (Form::Sanitizer, _) => "a sanitizer report",
        (Form::MarkedInScript, _) => "a line marked in the script",
        (Form::Comparison, _) => "a comparison the script asserts",
        (Form::Prose, What::Mismatch) => "a mismatch described",
        (Form::Prose, What::Hang) => "a hang described",
        (Form::Prose, _) => "a failure described",
    }
}

fn title_has(title: &str, words: &[&str]) -> bool {
    words.iter().any(|w| title.contains(w))
}

/// Why the issue is a tracker: its label, its title, an umbrella or tracking sentence in the
/// first paragraph, or a checklist or list of linked issues without a repro.
fn tracker(issue: &Issue, choice: Option<&Choice>) -> Option<String> {
    let title = issue.title.to_ascii_lowercase();
    if issue.has_label(TRACKER) || issue.has_label("meta") {
        return Some("labelled tracker".into());
    }
    let marks = [
        "[tracker]",
        "tracker:",
        "tracking issue",
        "[meta]",
        "meta issue",
        "umbrella",
        "[tracking]",
    ];
    if issue.title.contains('☂') || title_has(&title, &marks) {
        return Some("a tracker by its title".into());
    }
    let prose = super::evidence::prose_of(&issue.body);
    let first = prose
        .trim_start()
        .split("\n\n")
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let says = [
        "umbrella",
        "tracking issue",
        "this issue tracks",
        "this issue is to track",
        "meta issue",
        "to track the",
        "tracker for",
    ];
    if issue.body.contains('☂') || says.iter().any(|s| first.contains(s)) {
        return Some("an umbrella or tracking issue by its first paragraph".into());
    }
    if choice.is_some() {
        return None;
    }
    let items: Vec<&str> = issue
        .body
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("- ") || l.starts_with("* ") || l.starts_with("+ "))
        .collect();
    let checklist = items
        .iter()
        .filter(|l| l[2..].starts_with("[ ]") || l[2..].to_ascii_lowercase().starts_with("[x]"))
        .count();
    let links = items.iter().filter(|l| links_an_issue(l)).count();
    if checklist >= 4 {
        return Some("a checklist without a repro".into());
    }
    if links >= 3 {
        return Some(format!("a list of {links} linked issues without a repro"));
    }
    None
}

/// A list item that links an issue: `#123` or `…/issues/123`.
fn links_an_issue(item: &str) -> bool {
    item.contains("/issues/")
        || item.match_indices('#').any(|(i, _)| {
            item[i + 1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
}

/// The hardware a report names in its title or labels (and, without a repro, in its prose):
/// Apple silicon (MPS), TPU (XLA), Intel GPU (XPU), several nodes.
fn hardware_named(issue: &Issue, prose_too: bool) -> Option<&'static str> {
    let label = |names: &[&str]| names.iter().any(|n| issue.has_label(n));
    if !cfg!(target_os = "macos") && label(&["module: mps", "mps"]) {
        return Some("an Apple GPU (MPS)");
    }
    if label(&["module: xpu", "xpu"]) {
        return Some("an Intel GPU (XPU)");
    }
    if label(&["module: xla", "xla", "module: tpu"]) {
        return Some("a TPU (XLA)");
    }
    let mut text = format!(" {} ", issue.title.to_ascii_lowercase());
    if prose_too {
        text.push_str(&super::evidence::prose_of(&issue.body).to_ascii_lowercase());
    }
    let text: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let words: Vec<&str> = text.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let has_pair = |a: &str, b: &str| words.windows(2).any(|p| p[0] == a && p[1] == b);
    if !cfg!(target_os = "macos")
        && (has("mps") || has_pair("apple", "silicon") || has("m1") || has("m2") || has("m3"))
    {
        return Some("an Apple GPU (MPS)");
    }
    if has("tpu") || has("tpus") || has("xla") {
        return Some("a TPU (XLA)");
    }
    if has("xpu") || has_pair("intel", "gpu") || has("igpu") || has("arc") && has("intel") {
        return Some("an Intel GPU (XPU)");
    }
    if has("multi") && has("node") || has("multinode") || has_pair("multiple", "nodes") {
        return Some("several nodes");
    }
    None
}

/// More GPUs than this machine has, named in the title (or, without a repro, the prose):
/// "on 8 H100s", "4 GPUs", "2x A100".
fn gpus_named(issue: &Issue, prose_too: bool, gpus: usize) -> Option<String> {
    let mut text = issue.title.to_ascii_lowercase();
    if prose_too {
        text.push('\n');
        text.push_str(&super::evidence::prose_of(&issue.body).to_ascii_lowercase());
    }
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || ",;()".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let devices = [
        "gpu", "gpus", "h100", "h100s", "a100", "a100s", "v100", "v100s", "h200", "h200s", "b200",
        "b200s",
    ];
    for pair in words.windows(2) {
        let count = pair[0].trim_end_matches('x');
        let Ok(n) = count.parse::<usize>() else {
            continue;
        };
        if devices.contains(&pair[1]) && n > 1 && n > gpus {
            return Some(format!("{n} GPUs (\"{} {}\")", pair[0], pair[1]));
        }
    }
    None
}

/// A cleanup task rather than a bug: docstring, typo, lint or annotation work, a refactor,
/// or a documentation label on a title that asks to fix, improve or update something.
fn maintenance_task(issue: &Issue) -> bool {
    let title = issue.title.to_ascii_lowercase();
    let chores = [
        "docstring",
        "typo",
        "lint",
        "type annotation",
        "type hint",
        "refactor",
        "clean up",
        "cleanup",
    ];
    let asks = ["fix ", "improve ", "update ", "add ", "remove "];
    title_has(&title, &chores)
        || (issue.has_label("module: docs") && asks.iter().any(|a| title.starts_with(a)))
}

/// The sentence with which a report without a repro asks for something new.
fn asks_for_a_feature(issue: &Issue) -> Option<String> {
    let asks = [
        "would it be possible to",
        "it would be nice",
        "it would be great",
        "it would be helpful",
        "please add",
        "please consider adding",
        "request to add",
        "add support for",
        "i propose",
        "we propose",
        "i'd like to propose",
        "would be useful to have",
    ];
    let prose = super::evidence::prose_of(&issue.body);
    let title = issue.title.to_ascii_lowercase();
    if asks.iter().any(|a| title.contains(a)) {
        return Some(issue.title.clone());
    }
    prose
        .lines()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            asks.iter().any(|a| l.contains(a))
        })
        .map(|l| l.trim().to_string())
}

/// Why the issue is a duplicate: the label, the state reason, or the thread's words
/// ("Duplicate of #N", "closing in favor of #N", "let's keep the discussion in #N").
fn duplicate_reason(issue: &Issue) -> Option<String> {
    if issue.has_label(DUPLICATE) {
        return Some("labelled duplicate".into());
    }
    let number = duplicate_of(issue);
    if issue
        .state_reason
        .as_deref()
        .is_some_and(|r| r.eq_ignore_ascii_case("duplicate"))
    {
        return Some(match number {
            Some(n) => format!("closed as a duplicate of #{n}"),
            None => "closed as a duplicate".into(),
        });
    }
    number.map(|n| format!("marked a duplicate of #{n}"))
}

/// Phrases, followed by `#N`, with which a thread points at the issue it duplicates.
const DUPLICATE_WORDS: &[&str] = &[
    "duplicate of #",
    "duplicate of https://github.com/",
    "duplicates #",
    "dup of #",
    "in favor of #",
    "in favour of #",
    "keep the discussion in #",
    "continue the discussion in #",
    "continue the discussion at #",
    "tracked in #",
    "already reported in #",
    "already tracked in #",
];

/// `#N` from "Duplicate of #N" and the like, in the body or any comment (bots' left out).
fn duplicate_of(issue: &Issue) -> Option<u64> {
    std::iter::once(issue.body.as_str())
        .chain(
            issue
                .comments
                .iter()
                .filter(|c| !super::extract::is_bot(c.login()))
                .map(|c| c.body.as_str()),
        )
        .find_map(|text| {
            let lower = text.to_ascii_lowercase();
            DUPLICATE_WORDS.iter().find_map(|w| {
                let at = lower.find(w)? + w.len();
                let rest = &lower[at..];
                let rest = match rest.find("/issues/") {
                    Some(i) if !w.ends_with('#') => &rest[i + "/issues/".len()..],
                    _ => rest,
                };
                let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                digits.parse().ok()
            })
        })
}

/// The hardware a script and its transcripts need beyond `gpus` CUDA devices, if any.
/// Several processes on the `gloo` backend without CUDA run on one CPU machine, so they need
/// nothing.
pub fn hardware_need(text: &str, gpus: usize) -> Option<String> {
    let cpu_only = text.contains("gloo") && !text.contains("cuda") && !text.contains("nccl");
    for flag in ["--nproc-per-node", "--nproc_per_node"] {
        if cpu_only {
            break;
        }
        let mut rest = text;
        while let Some(at) = rest.find(flag) {
            rest = &rest[at + flag.len()..];
            let value: String = rest
                .trim_start_matches(['=', ' '])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let n = match value.as_str() {
                "gpu" | "auto" => 2,
                v => v.parse::<usize>().unwrap_or(1),
            };
            if n > 1 && n > gpus {
                return Some(format!("{n} GPUs (torchrun {flag}={value})"));
            }
        }
    }
    if let Some(at) = text.find("init_device_mesh(") {
        let args = balanced(&text[at + "init_device_mesh".len()..]);
        let ints: Vec<usize> = args
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let devices = if ints.is_empty() {
            2
        } else {
            ints.iter().product()
        };
        if devices > 1 && devices > gpus {
            return Some(format!("{devices} devices (init_device_mesh)"));
        }
    }
    let mps = ["\"mps\"", "'mps'", "torch.backends.mps", "torch.mps."];
    if !cfg!(target_os = "macos") && mps.iter().any(|m| text.contains(m)) {
        return Some("an Apple GPU (MPS)".into());
    }
    if ["torch_xla", "xla_device", "\"tpu\"", "'tpu'"]
        .iter()
        .any(|m| text.contains(m))
    {
        return Some("a TPU (torch_xla)".into());
    }
    if ["\"xpu\"", "'xpu'", "torch.xpu"]
        .iter()
        .any(|m| text.contains(m))
    {
        return Some("an Intel GPU (XPU)".into());
    }
    None
}

/// The text of the parenthesized group that `text` starts with (or the rest of the line).
fn balanced(text: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &text[..=i];
                }
            }
            _ => {}
        }
    }
    text.lines().next().unwrap_or("")
}

/// Older than a year, unassigned, and idle for six months.
fn stale(issue: &Issue, today: i64) -> bool {
    let age = |d: &Option<String>| {
        d.as_deref()
            .and_then(fetch::days_since_epoch)
            .map(|day| today - day)
    };
    let old = age(&issue.created_at).is_some_and(|a| a > 365);
    let last_activity = issue
        .comments
        .iter()
        .filter_map(|c| age(&c.created_at))
        .chain(age(&issue.updated_at))
        .min();
    let idle = last_activity.is_none_or(|a| a > 182);
    old && idle && issue.assignees.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::issue::evidence;
    use crate::issue::extract::{choose, extract};
    use crate::issue::fetch::{Actor, Label};

    fn judged(title: &str, body: &str, labels: &[&str]) -> Judgement {
        let issue = Issue {
            number: 3,
            title: title.into(),
            body: body.into(),
            state: "OPEN".into(),
            author: Some(Actor { login: "op".into() }),
            labels: labels
                .iter()
                .map(|l| Label {
                    name: l.to_string(),
                })
                .collect(),
            created_at: Some("2019-01-01T00:00:00Z".into()),
            updated_at: Some("2019-02-01T00:00:00Z".into()),
            ..Default::default()
        };
        let blocks = extract(&issue);
        let choice = choose(&blocks, "op");
        let found = evidence::find(&issue, &blocks, choice.as_ref());
        judge(&issue, &blocks, choice.as_ref(), found.as_ref(), 20000)
    }

    const REPRO: &str = "```python\nimport math\nmath.sqrt(-1)\n```\n```\nTraceback (most recent call last):\n  File \"r.py\", line 2, in <module>\nValueError: math domain error\n```\n";

    #[test]
    fn a_repro_with_its_traceback_is_actionable_and_loses_needs_reproduction() {
        let j = judged("sqrt fails", REPRO, &[NEEDS_REPRO]);
        assert_eq!(j.category, Category::Actionable);
        assert_eq!(j.labels_to_remove, [NEEDS_REPRO]);
        assert!(!j.refresh_triaged);
    }

    #[test]
    fn feature_requests_get_the_feature_label() {
        let j = judged(
            "[RFC] A new sampler",
            "### 🚀 The feature, motivation and pitch\n",
            &[],
        );
        assert_eq!(j.category, Category::Feature);
        assert_eq!(j.labels_to_add, [FEATURE]);
    }

    #[test]
    fn a_non_actionable_issue_already_labelled_refreshes_triaged() {
        let j = judged(
            "[Tracker] dynamo graph breaks",
            "- [ ] a\n- [ ] b\n- [x] c\n- [ ] d\n",
            &[TRACKER, TRIAGED],
        );
        assert_eq!(j.category, Category::Tracker);
        assert!(j.labels_to_add.is_empty());
        assert!(j.refresh_triaged);
    }

    #[test]
    fn no_repro_needs_reproduction_and_old_idle_ones_are_proposed_for_closing() {
        let j = judged("something is slow", "it is slow sometimes\n", &[]);
        assert_eq!(j.category, Category::NeedsReproduction);
        assert_eq!(j.labels_to_add, [NEEDS_REPRO]);
        assert!(j.propose_close);
    }

    #[test]
    fn duplicates_are_found_by_label_or_text() {
        assert_eq!(
            judged("x", REPRO, &[DUPLICATE]).category,
            Category::Duplicate
        );
        let j = judged("x", &format!("Duplicate of #4242\n{REPRO}"), &[]);
        assert_eq!(j.category, Category::Duplicate);
        assert_eq!(j.duplicate_of, Some(4242));
    }

    #[test]
    fn unavailable_hardware_is_recognised() {
        assert!(hardware_need("torchrun --nproc-per-node=4 train.py", 0).is_some());
        assert!(hardware_need("torchrun --nproc_per_node 1 train.py", 0).is_none());
        assert!(hardware_need("torchrun --nproc-per-node=2 train.py", 2).is_none());
        assert!(
            hardware_need(
                "dist.init_process_group(\"gloo\")\n$ torchrun --nproc-per-node=4 t.py",
                0
            )
            .is_none()
        );
        assert!(hardware_need("mesh = init_device_mesh(\"cuda\", (2, 4))", 1).is_some());
        assert!(hardware_need("mesh = init_device_mesh(\"cuda\", (1,))", 1).is_none());
        assert!(hardware_need("x = torch.ones(2, device=\"xpu\")", 0).is_some());
        if !cfg!(target_os = "macos") {
            assert!(hardware_need("x.to('mps')", 0).is_some());
        }
    }
}
