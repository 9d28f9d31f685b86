//! Step 3: whether an issue is actionable, judged before anything runs.
//!
//! The issue's text is data: it decides the category, never what scrub does beyond that.

use serde::Serialize;

use super::extract::{Block, Choice, Kind};
use super::fetch::{self, Issue};
use crate::oracle::Signature;

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
}

/// Judges `issue` from its state, labels, title and blocks; `today` in days since the epoch.
pub fn judge(
    issue: &Issue,
    blocks: &[Block],
    choice: Option<&Choice>,
    signature: Option<&Signature>,
    today: i64,
) -> Judgement {
    let (category, reason) = categorize(issue, blocks, choice, signature);
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
    {
        add.push(label.to_string());
    }
    // A valid repro answers `needs reproduction`, whatever else the issue is.
    let has_repro = choice.is_some() && !matches!(category, Category::NeedsReproduction);
    if has_repro && category != Category::Closed && issue.has_label(NEEDS_REPRO) {
        remove.push(NEEDS_REPRO.to_string());
    }
    let non_actionable = !matches!(category, Category::Actionable | Category::Closed);
    let mut refresh_triaged = false;
    if non_actionable && add.is_empty() && remove.is_empty() {
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
    }
}

fn categorize(
    issue: &Issue,
    blocks: &[Block],
    choice: Option<&Choice>,
    signature: Option<&Signature>,
) -> (Category, String) {
    let title = issue.title.to_ascii_lowercase();
    let body = issue.body.to_ascii_lowercase();
    if issue.is_closed() {
        let why = issue
            .state_reason
            .as_deref()
            .map(|r| format!(" ({})", r.to_ascii_lowercase().replace('_', " ")))
            .unwrap_or_default();
        return (
            Category::Closed,
            format!("the issue is closed{why}; nothing is run or changed"),
        );
    }
    if issue.has_label(DUPLICATE) {
        return (
            Category::Duplicate,
            "the issue is labelled duplicate".into(),
        );
    }
    if let Some(n) = duplicate_of(issue) {
        return (
            Category::Duplicate,
            format!("the issue is marked \"Duplicate of #{n}\""),
        );
    }
    let title_has = |words: &[&str]| words.iter().any(|w| title.contains(w));
    let checklist = issue.body.matches("- [ ]").count() + issue.body.matches("- [x]").count();
    if issue.has_label(TRACKER)
        || issue.has_label("meta")
        || title_has(&[
            "[tracker]",
            "tracker:",
            "tracking issue",
            "[meta]",
            "meta issue",
            "umbrella issue",
        ])
        || (checklist >= 4 && choice.is_none())
    {
        return (
            Category::Tracker,
            "a tracker, meta or checklist issue: there is nothing to reproduce".into(),
        );
    }
    if issue.has_label(FEATURE)
        || issue.has_label("enhancement")
        || title.starts_with("rfc")
        || title_has(&["[rfc]", "[feature", "feature request", "feature:"])
        || body.contains("the feature, motivation and pitch")
    {
        return (
            Category::Feature,
            "a feature request or RFC, not a bug".into(),
        );
    }
    if issue.has_label(BETTER_ENGINEERING)
        || issue.has_label("better engineering")
        || title_has(&["[be]", "better engineering", "[refactor]", "[cleanup]"])
    {
        return (
            Category::BetterEngineering,
            "better engineering (cleanup or refactoring), not a bug".into(),
        );
    }
    if choice.is_none() && super::extract::screenshot_only(issue, blocks) {
        return (
            Category::ScreenshotOnly,
            "the code and the error are shown only as images; ask for them as text".into(),
        );
    }
    let code_and_shell: String = blocks
        .iter()
        .filter(|b| matches!(b.kind, Kind::Code | Kind::Shell))
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let gpus = crate::workers::detect_gpus(None).len();
    if let Some(need) = hardware_need(&code_and_shell, gpus) {
        return (
            Category::Hardware,
            format!("the repro needs {need}, which this machine does not have"),
        );
    }
    let Some(choice) = choice else {
        return (
            Category::NeedsReproduction,
            "no runnable repro in a fenced code block".into(),
        );
    };
    if signature.is_none() && !describes_error(issue) {
        return (
            Category::NeedsReproduction,
            "there is a script but no error: neither a traceback nor a described failure".into(),
        );
    }
    (
        Category::Actionable,
        format!("a bug with a runnable repro: {}", choice.reason),
    )
}

/// `#N` from "Duplicate of #N" in the body or any comment.
fn duplicate_of(issue: &Issue) -> Option<u64> {
    std::iter::once(issue.body.as_str())
        .chain(issue.comments.iter().map(|c| c.body.as_str()))
        .find_map(|text| {
            let lower = text.to_ascii_lowercase();
            let at = lower.find("duplicate of #")? + "duplicate of #".len();
            let digits: String = lower[at..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            digits.parse().ok()
        })
}

/// Whether the prose says something fails, when there is no traceback.
fn describes_error(issue: &Issue) -> bool {
    let lower = issue.body.to_ascii_lowercase();
    let words = [
        "segfault",
        "segmentation fault",
        "crash",
        "hangs",
        "wrong result",
        "incorrect result",
        "raises",
        "exception",
        "error:",
        " nans",
        "returns nan",
        "mismatch",
    ];
    words.iter().any(|w| lower.contains(w))
        || issue.body.lines().any(|l| {
            let l = l.trim();
            l.split(':').next().is_some_and(|c| {
                !c.contains(' ') && (c.ends_with("Error") || c.ends_with("Exception"))
            }) && l.contains(':')
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
    use crate::issue::extract::{choose, expected_signature, extract};
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
        let sig = expected_signature(&blocks, choice.as_ref());
        judge(&issue, &blocks, choice.as_ref(), sig.as_ref(), 20000)
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
