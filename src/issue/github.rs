//! Step 11: the GitHub changes, as exact `gh` command lines: printed by default, run one at
//! a time with `--apply`.
//!
//! Order: save the subscription state (commenting or labelling subscribes the viewer), every
//! label change in one `gh issue edit`, a `triaged` refresh as two edits, the comment, the
//! close, and the subscription restored last unless the issue was closed.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use super::fetch::gh;

const SAVE_QUERY: &str = "query($owner:String!,$name:String!,$number:Int!){repository(owner:$owner,name:$name){issue(number:$number){id viewerSubscription}}}";
const RESTORE_MUTATION: &str = "mutation($id:ID!,$state:SubscriptionState!){updateSubscription(input:{subscribableId:$id,state:$state}){subscribable{viewerSubscription}}}";

/// What a planned command is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    SaveSubscription,
    Labels,
    TriagedRemove,
    TriagedAdd,
    Comment,
    Close,
    RestoreSubscription,
}

/// One `gh` command.
#[derive(Debug, Clone, Serialize)]
pub struct Planned {
    pub purpose: Purpose,
    pub argv: Vec<String>,
}

/// The changes to make on one issue.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub add: Vec<String>,
    pub remove: Vec<String>,
    pub refresh_triaged: bool,
    pub comment_file: Option<std::path::PathBuf>,
    /// `completed` or `not planned`.
    pub close: Option<&'static str>,
}

impl Changes {
    /// Whether there is nothing to change.
    pub fn is_empty(&self) -> bool {
        self.add.is_empty()
            && self.remove.is_empty()
            && !self.refresh_triaged
            && self.comment_file.is_none()
            && self.close.is_none()
    }
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// The commands for `changes` on issue `number` of `repo` (`OWNER/NAME`); `node_id` is the
/// issue's GraphQL id when known, else the restore names the id the save will return.
pub fn plan(number: u64, repo: &str, node_id: Option<&str>, changes: &Changes) -> Vec<Planned> {
    if changes.is_empty() {
        return Vec::new();
    }
    let n = number.to_string();
    let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
    let mut out = vec![Planned {
        purpose: Purpose::SaveSubscription,
        argv: argv(&[
            "gh",
            "api",
            "graphql",
            "-f",
            &format!("query={SAVE_QUERY}"),
            "-f",
            &format!("owner={owner}"),
            "-f",
            &format!("name={name}"),
            "-F",
            &format!("number={n}"),
        ]),
    }];
    if !changes.add.is_empty() || !changes.remove.is_empty() {
        let mut cmd = argv(&["gh", "issue", "edit", &n, "--repo", repo]);
        if !changes.add.is_empty() {
            cmd.extend(["--add-label".to_string(), changes.add.join(",")]);
        }
        if !changes.remove.is_empty() {
            cmd.extend(["--remove-label".to_string(), changes.remove.join(",")]);
        }
        out.push(Planned {
            purpose: Purpose::Labels,
            argv: cmd,
        });
    }
    if changes.refresh_triaged {
        let edit = |flag: &str| argv(&["gh", "issue", "edit", &n, "--repo", repo, flag, "triaged"]);
        out.push(Planned {
            purpose: Purpose::TriagedRemove,
            argv: edit("--remove-label"),
        });
        out.push(Planned {
            purpose: Purpose::TriagedAdd,
            argv: edit("--add-label"),
        });
    }
    if let Some(file) = &changes.comment_file {
        out.push(Planned {
            purpose: Purpose::Comment,
            argv: argv(&[
                "gh",
                "issue",
                "comment",
                &n,
                "--repo",
                repo,
                "--body-file",
                &file.display().to_string(),
            ]),
        });
    }
    if let Some(reason) = changes.close {
        out.push(Planned {
            purpose: Purpose::Close,
            argv: argv(&[
                "gh", "issue", "close", &n, "--repo", repo, "--reason", reason,
            ]),
        });
    } else {
        out.push(restore(
            node_id.unwrap_or("<id from the save>"),
            "<saved state>",
        ));
    }
    out
}

fn restore(id: &str, state: &str) -> Planned {
    Planned {
        purpose: Purpose::RestoreSubscription,
        argv: argv(&[
            "gh",
            "api",
            "graphql",
            "-f",
            &format!("query={RESTORE_MUTATION}"),
            "-f",
            &format!("id={id}"),
            "-f",
            &format!("state={state}"),
        ]),
    }
}

/// What happened to one command under `--apply`.
#[derive(Debug, Clone, Serialize)]
pub struct Applied {
    pub argv: Vec<String>,
    pub ok: bool,
    pub note: String,
}

/// Runs `plan` in order. A failed change stops the rest (the restore still runs); a failed
/// save or restore is reported and skipped. Returns every command run and whether all the
/// changes went through.
pub fn apply(plan: &[Planned], poll: Duration) -> (Vec<Applied>, bool) {
    let mut done = Vec::new();
    let mut saved: Option<(String, String)> = None;
    let mut all_ok = true;
    for planned in plan {
        match planned.purpose {
            Purpose::SaveSubscription => match gh(&planned.argv[1..]) {
                Ok(out) => {
                    saved = parse_subscription(&out);
                    let note = match &saved {
                        Some((_, state)) => format!("saved subscription state {state}"),
                        None => {
                            "could not read the subscription state; it will not be restored".into()
                        }
                    };
                    done.push(Applied {
                        argv: planned.argv.clone(),
                        ok: saved.is_some(),
                        note,
                    });
                }
                Err(e) => done.push(Applied {
                    argv: planned.argv.clone(),
                    ok: false,
                    note: format!("{e:#}; going on without saving the subscription"),
                }),
            },
            Purpose::RestoreSubscription => {
                let Some((id, state)) = &saved else {
                    continue;
                };
                // Wait until the auto-subscription shows, then set the state back.
                let query = plan[0].argv[1..].to_vec();
                let mut seen = None;
                for attempt in 0..10 {
                    seen = gh(&query)
                        .ok()
                        .and_then(|o| parse_subscription(&o))
                        .map(|(_, s)| s);
                    if seen.as_deref() == Some("SUBSCRIBED") || attempt == 9 {
                        break;
                    }
                    std::thread::sleep(poll);
                }
                if seen.as_deref() == Some(state.as_str()) {
                    done.push(Applied {
                        argv: query,
                        ok: true,
                        note: format!("subscription already {state}; nothing to restore"),
                    });
                    continue;
                }
                let cmd = restore(id, state).argv;
                let result = gh(&cmd[1..]);
                done.push(Applied {
                    ok: result.is_ok(),
                    note: match result {
                        Ok(_) => format!("restored subscription state {state}"),
                        Err(e) => format!("{e:#}; the subscription was not restored"),
                    },
                    argv: cmd,
                });
            }
            _ if !all_ok => {}
            _ => {
                let result = gh(&planned.argv[1..]);
                all_ok &= result.is_ok();
                done.push(Applied {
                    argv: planned.argv.clone(),
                    ok: result.is_ok(),
                    note: match result {
                        Ok(_) => "done".into(),
                        Err(e) => format!("{e:#}; the remaining changes were not made"),
                    },
                });
            }
        }
    }
    (done, all_ok)
}

/// `(id, viewerSubscription)` from the answer to the save query.
fn parse_subscription(json: &str) -> Option<(String, String)> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    let issue = &value["data"]["repository"]["issue"];
    Some((
        issue["id"].as_str()?.to_string(),
        issue["viewerSubscription"].as_str()?.to_string(),
    ))
}

/// A command line as a shell would take it.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:#@+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the comment where `--body-file` will find it.
pub fn write_comment(path: &Path, body: &str) -> anyhow::Result<()> {
    std::fs::write(path, body).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn purposes(p: &[Planned]) -> Vec<Purpose> {
        p.iter().map(|c| c.purpose).collect()
    }

    #[test]
    fn label_changes_are_one_edit_between_save_and_restore() {
        let changes = Changes {
            add: vec!["feature".into(), "triaged".into()],
            remove: vec!["needs reproduction".into()],
            ..Default::default()
        };
        let p = plan(7, "o/r", Some("I_7"), &changes);
        assert_eq!(
            purposes(&p),
            [
                Purpose::SaveSubscription,
                Purpose::Labels,
                Purpose::RestoreSubscription
            ]
        );
        assert_eq!(
            shell_line(&p[1].argv),
            "gh issue edit 7 --repo o/r --add-label feature,triaged --remove-label 'needs reproduction'"
        );
        assert!(p[2].argv.contains(&"id=I_7".to_string()));
    }

    #[test]
    fn closing_skips_the_restore_and_no_change_plans_nothing() {
        let changes = Changes {
            comment_file: Some("/tmp/c.md".into()),
            close: Some("completed"),
            ..Default::default()
        };
        assert_eq!(
            purposes(&plan(7, "o/r", None, &changes)),
            [Purpose::SaveSubscription, Purpose::Comment, Purpose::Close]
        );
        assert!(plan(7, "o/r", None, &Changes::default()).is_empty());
    }

    #[test]
    fn a_triaged_refresh_is_two_edits() {
        let changes = Changes {
            refresh_triaged: true,
            ..Default::default()
        };
        assert_eq!(
            purposes(&plan(7, "o/r", None, &changes)),
            [
                Purpose::SaveSubscription,
                Purpose::TriagedRemove,
                Purpose::TriagedAdd,
                Purpose::RestoreSubscription
            ]
        );
    }
}
