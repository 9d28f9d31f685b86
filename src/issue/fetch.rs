//! Step 1: the issue as GitHub describes it, from `gh issue view` or from a JSON file.
//!
//! Only this module and `github.rs` run `gh`; the rest of `scrub issue` works on [`Issue`].

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Deserializer, Serialize};

/// `null` read as the type's default: exporters write `"body": null`, `"labels": null`…
fn nullable<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The login GitHub shows for a deleted account (`"author": null`).
pub const GHOST: &str = "ghost";

/// The fields `scrub issue` asks `gh issue view --json` for.
pub const FIELDS: &str = "number,title,body,state,stateReason,labels,author,createdAt,updatedAt,comments,assignees,url,id";

/// One issue. Unknown fields are ignored; every field but `number` may be missing or `null`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Issue {
    #[serde(deserialize_with = "nullable")]
    pub number: u64,
    #[serde(deserialize_with = "nullable")]
    pub title: String,
    #[serde(deserialize_with = "nullable")]
    pub body: String,
    /// `OPEN` or `CLOSED`.
    #[serde(deserialize_with = "nullable")]
    pub state: String,
    pub state_reason: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub labels: Vec<Label>,
    /// `None` for a deleted account (`ghost`).
    pub author: Option<Actor>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub comments: Vec<Comment>,
    #[serde(deserialize_with = "nullable")]
    pub assignees: Vec<Actor>,
    pub url: Option<String>,
    /// The GraphQL node id (for the subscription calls).
    pub id: Option<String>,
    /// Not part of `gh issue view`: asked of `gh api`, or given in the JSON file.
    pub locked: Option<bool>,
}

/// A label, by name.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Label {
    #[serde(deserialize_with = "nullable")]
    pub name: String,
}

/// A GitHub user, by login.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default)]
pub struct Actor {
    #[serde(deserialize_with = "nullable")]
    pub login: String,
}

/// One comment, in the order GitHub lists them.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Comment {
    pub author: Option<Actor>,
    #[serde(deserialize_with = "nullable")]
    pub body: String,
    pub created_at: Option<String>,
    /// `OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, `NONE`…
    pub author_association: Option<String>,
}

impl Issue {
    /// The original poster's login (`ghost` for a deleted or unknown account).
    pub fn author_login(&self) -> &str {
        login(self.author.as_ref())
    }

    /// Whether the issue carries `name` (case-insensitive).
    pub fn has_label(&self, name: &str) -> bool {
        self.labels
            .iter()
            .any(|l| l.name.eq_ignore_ascii_case(name))
    }

    /// Whether the issue is closed, whatever the reason.
    pub fn is_closed(&self) -> bool {
        self.state.eq_ignore_ascii_case("closed")
    }

    /// `OWNER/NAME` from the issue's URL.
    pub fn repo_from_url(&self) -> Option<String> {
        let rest = self.url.as_deref()?.strip_prefix("https://github.com/")?;
        let mut parts = rest.split('/');
        let (owner, name) = (parts.next()?, parts.next()?);
        (!owner.is_empty() && !name.is_empty()).then(|| format!("{owner}/{name}"))
    }
}

impl Comment {
    /// The commenter's login (`ghost` for a deleted or unknown account).
    pub fn login(&self) -> &str {
        login(self.author.as_ref())
    }
}

fn login(actor: Option<&Actor>) -> &str {
    actor
        .map(|a| a.login.as_str())
        .filter(|l| !l.is_empty())
        .unwrap_or(GHOST)
}

/// Parses the JSON of one issue, as `gh issue view --json` prints it.
pub fn parse(text: &str, origin: &str) -> Result<Issue> {
    let issue: Issue = serde_json::from_str(text).map_err(|e| {
        anyhow!(
            "{origin} is not the JSON of an issue (line {}: {e})",
            e.line()
        )
    })?;
    if issue.number == 0 {
        bail!("{origin} has no issue \"number\"");
    }
    Ok(issue)
}

/// Reads an issue from `path`, or from stdin for `-`.
pub fn from_file(path: &Path) -> Result<Issue> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the issue JSON from stdin")?;
        return parse(&text, "stdin");
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::IsADirectory => "it is a directory".to_string(),
            _ => e.to_string(),
        };
        anyhow!("cannot read {}: {why}", path.display())
    })?;
    parse(&text, &path.display().to_string())
}

/// Runs `gh` with `args`; its stdout on success, else an error with its first stderr line.
pub fn gh(args: &[String]) -> Result<String> {
    let out = Command::new("gh")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                anyhow!("the GitHub CLI `gh` is not on PATH; install it or pass --from-json FILE")
            }
            _ => anyhow!("cannot run gh: {e}"),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "`gh {}` failed: {}",
            args.join(" "),
            err.lines().next().unwrap_or("no message").trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Fetches issue `number` of `repo` with `gh`, and whether it is locked.
pub fn from_github(number: u64, repo: &str) -> Result<Issue> {
    let args: Vec<String> = [
        "issue",
        "view",
        &number.to_string(),
        "--repo",
        repo,
        "--json",
        FIELDS,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut issue = parse(
        &gh(&args)?,
        &format!("the answer of gh for {repo}#{number}"),
    )?;
    if issue.locked.is_none() {
        issue.locked = Some(locked(number, repo)?);
    }
    Ok(issue)
}

/// Whether issue `number` is locked, from the REST API.
fn locked(number: u64, repo: &str) -> Result<bool> {
    let out = gh(&[
        "api".into(),
        format!("repos/{repo}/issues/{number}"),
        "--jq".into(),
        ".locked".into(),
    ])?;
    Ok(out.trim() == "true")
}

/// Whether `user` is a collaborator of `repo` (`gh api` answers 204, else 404).
pub fn is_collaborator(repo: &str, user: &str) -> bool {
    !user.is_empty()
        && gh(&[
            "api".into(),
            format!("repos/{repo}/collaborators/{user}"),
            "--silent".into(),
        ])
        .is_ok()
}

/// Days since 1970-01-01 of an RFC 3339 date (`2024-03-05T12:00:00Z`); `None` when malformed.
pub fn days_since_epoch(date: &str) -> Option<i64> {
    let day = date.get(..10)?;
    let mut parts = day.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146097 + doe - 719468)
}

/// Today, in days since 1970-01-01.
pub fn today() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (secs / 86400) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_ignored_and_missing_ones_tolerated() {
        let issue = parse(
            r#"{"number": 7, "title": "t", "reactionGroups": [], "milestone": null}"#,
            "x",
        )
        .unwrap();
        assert_eq!(issue.number, 7);
        assert!(issue.comments.is_empty());
        assert_eq!(issue.author_login(), GHOST);
    }

    #[test]
    fn nulls_are_read_as_missing_and_a_null_author_is_ghost() {
        let issue = parse(
            r#"{"number": 8, "title": null, "body": null, "author": null, "assignees": null,
                "labels": null, "state": null, "stateReason": null,
                "comments": [{"author": null, "body": null}, {"body": "hi"}]}"#,
            "x",
        )
        .unwrap();
        assert_eq!(issue.author_login(), GHOST);
        assert_eq!((issue.body.as_str(), issue.title.as_str()), ("", ""));
        assert!(issue.labels.is_empty() && issue.assignees.is_empty());
        assert_eq!(issue.comments.len(), 2);
        assert_eq!(issue.comments[0].login(), GHOST);
        assert!(parse(r#"{"number": null}"#, "x").is_err());
        assert!(parse(r#"{"number": 8, "body": "#, "x").is_err());
    }

    #[test]
    fn json_without_a_number_is_refused() {
        assert!(parse(r#"{"title": "t"}"#, "x").is_err());
        assert!(parse("not json", "x").is_err());
    }

    #[test]
    fn the_repo_comes_from_the_url() {
        let issue = Issue {
            url: Some("https://github.com/pytorch/pytorch/issues/123".into()),
            ..Default::default()
        };
        assert_eq!(issue.repo_from_url().as_deref(), Some("pytorch/pytorch"));
    }

    #[test]
    fn dates_count_days_from_the_epoch() {
        assert_eq!(days_since_epoch("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(days_since_epoch("2000-03-01T10:00:00Z"), Some(11017));
        assert_eq!(days_since_epoch("2024-13-01"), None);
        assert_eq!(days_since_epoch("soon"), None);
    }
}
