//! `scrub issue --batch FILE`: every issue the file lists, one after the other, with one Ray
//! connection for all of them (`--ray`) and a table of every issue at the end. An issue that
//! fails is a row of the table, not the end of the batch.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::report::Report;
use super::{IssueArgs, connect, exit_code, setup, triage_and_plan};
use crate::engine::reduce::Cluster;

/// One line of the batch file.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    Number(u64),
    File(PathBuf),
}

/// The issues `text` lists: a number or a path a line, blank lines and `#` comments skipped;
/// a relative path is read from `dir`.
pub fn parse(text: &str, dir: &Path) -> Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let entry = match line.parse::<u64>() {
            Ok(n) => Entry::Number(n),
            Err(_) if line.ends_with(".json") => Entry::File(dir.join(line)),
            Err(_) => bail!(
                "line {}: {line:?} is neither an issue number nor a .json file",
                i + 1
            ),
        };
        entries.push(entry);
    }
    if entries.is_empty() {
        bail!("the batch file lists no issue");
    }
    Ok(entries)
}

/// One issue of the batch: its report, or why it could not be triaged.
#[derive(Debug, Serialize)]
pub struct Row {
    pub issue: String,
    pub seconds: f64,
    pub report: Option<Report>,
    pub error: Option<String>,
}

pub fn run(args: &IssueArgs, file: &Path) -> Result<ExitCode> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let entries = parse(&text, file.parent().unwrap_or(Path::new(".")))?;
    let mut cluster: Option<Option<Cluster>> = None;
    let mut rows = Vec::new();
    let mut code = ExitCode::SUCCESS;
    for entry in &entries {
        let mut one = args.clone();
        one.batch = None;
        let name = match entry {
            Entry::Number(n) => {
                one.number = Some(*n);
                format!("#{n}")
            }
            Entry::File(path) => {
                one.from_json = Some(path.clone());
                path.display().to_string()
            }
        };
        if !args.json {
            eprintln!("scrub issue: --- {name}");
        }
        let start = Instant::now();
        let result = setup(&one).and_then(|s| {
            // Connected once, under the first issue's interpreter (--python and --env are
            // the batch's, so every issue has the same).
            if cluster.is_none() {
                cluster = Some(connect(&one, &s.interp)?);
            }
            let shared = cluster.as_ref().and_then(Option::as_ref);
            triage_and_plan(&one, &s, shared)
        });
        let seconds = (start.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        let row = match result {
            Ok(report) => {
                if exit_code(&report) != ExitCode::SUCCESS {
                    code = ExitCode::from(1);
                }
                Row {
                    issue: name,
                    seconds,
                    report: Some(report),
                    error: None,
                }
            }
            Err(e) => {
                code = ExitCode::from(1);
                Row {
                    issue: name,
                    seconds,
                    report: None,
                    error: Some(format!("{e:#}")),
                }
            }
        };
        rows.push(row);
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows));
    }
    Ok(code)
}

/// The summary: one row per issue, whatever happened to it.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| issue | category | outcome | minimized | stopped at | seconds |\n|---|---|---|---|---|---|\n",
    );
    for row in rows {
        let (category, outcome, minimized, stopped) = match (&row.report, &row.error) {
            (Some(r), _) => (
                r.category.to_string(),
                super::report::outcome_words(r),
                r.minimized.as_ref().map_or("-".to_string(), |m| {
                    format!(
                        "{} → {} lines, {} runs",
                        m.original_lines, m.final_lines, m.oracle_calls
                    )
                }),
                r.stopped
                    .as_ref()
                    .map_or("-".to_string(), |s| format!("{}: {}", s.step, s.reason)),
            ),
            (None, error) => (
                "failed".to_string(),
                "-".to_string(),
                "-".to_string(),
                error.clone().unwrap_or_default(),
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {category} | {outcome} | {minimized} | {} | {} |",
            row.issue,
            stopped.replace('|', "\\|").replace('\n', " "),
            row.seconds
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_files_are_read_and_the_rest_is_refused() {
        let dir = Path::new("/batch");
        let text = "# backlog\n148859\n\n#1234\nthreads/one.json  # from the archive\n";
        assert_eq!(
            parse(text, dir).unwrap(),
            vec![
                Entry::Number(148859),
                Entry::File(PathBuf::from("/batch/threads/one.json")),
            ]
        );
        assert!(
            parse("12\nissue twelve\n", dir)
                .unwrap_err()
                .to_string()
                .contains("line 2")
        );
        assert!(parse("# nothing\n\n", dir).is_err());
    }
}
