//! The control of the original: the suspect (`torch.compile`, CUDA, the script's own code)
//! replaced by its reference, run once; when it passes, every candidate's control must pass
//! too.

use anyhow::Result;
use scrub_reducers::control::Suspect;
use scrub_reducers::fix::Fix;

use super::{Reduction, first_passing};
use crate::engine::oracle::Control;
use crate::engine::process::Outcome;
use crate::engine::verdict::describe;

/// How the reduction is guarded by a control.
pub(super) struct Guard {
    /// The control every candidate must pass: its suspect, and for a custom implementation
    /// the edit that made the original pass.
    pub(super) control: Option<Control>,
    /// A mismatch with no control: reduced as a signature alone allows.
    pub(super) unguarded: bool,
    /// What the log says about it.
    pub(super) note: String,
    /// How the original failed with each suspect replaced by its reference, when none of those
    /// controls passed: the failure may be the script's own mistake.
    pub(super) fails_without_suspect: Option<String>,
}

impl Reduction<'_> {
    /// The control of the script the reduction starts from, which failed with `outcome`, run
    /// once: when it passes, the suspect it replaced is what the failure needs, and every
    /// candidate's control must pass too. A mismatch (an `AssertionError` of a torch script)
    /// without a control that passes is reduced unguarded, and says so once.
    pub(super) fn control(&self, outcome: &Outcome) -> Result<Guard> {
        let start = self.start.as_str();
        let mismatch = start.contains("torch")
            && crate::engine::exception::final_exception(&outcome.stderr)
                .is_some_and(|e| e.class.ends_with("AssertionError"));
        let unguarded = |note: String| {
            if mismatch {
                self.console
                    .warn(format!("{note}; the result is unguarded"));
            }
            Guard {
                control: None,
                unguarded: mismatch,
                note,
                fails_without_suspect: None,
            }
        };
        if !self.options.control {
            return Ok(unguarded("off (--no-control)".to_string()));
        }
        let version = self.interp.parser_version;
        let mut suspects = scrub_reducers::Script::parse(start, version)
            .map(|script| Suspect::all_of(&script, version))
            .unwrap_or_default();
        // A check's sides computed alike is the control of a mismatch that has no other
        // suspect to replace; an own implementation compared with a reference keeps its code
        // instead, where no control passes (see `unguarded_custom`).
        let custom = suspects.iter().any(|(s, _)| *s == Suspect::Custom);
        suspects.retain(|(s, _)| *s != Suspect::Repeat || (mismatch && !custom));
        if suspects.is_empty() {
            return Ok(unguarded(
                "no control can be built: no torch.compile, transform with a plain counterpart, CUDA, own implementation compared with a reference or check of two computations".to_string(),
            ));
        }
        // The first suspect whose control passes is the one the failure needs.
        let controls: Vec<&str> = suspects.iter().map(|(_, c)| c.as_str()).collect();
        let (found, runs) = first_passing(&controls, &self.workers)?;
        let failed: Vec<String> = suspects
            .iter()
            .zip(&runs)
            .map(|((suspect, _), run)| format!("{}: {}", suspect.as_str(), describe(run)))
            .collect();
        let Some(suspect) = found.map(|i| suspects[i].0) else {
            let note = format!("no control of the original passes ({})", failed.join("; "));
            if !custom {
                if !mismatch {
                    // The suspect replaced, the original still fails: say so where the
                    // result is read, not only in the log.
                    self.console.warn(format!(
                        "control: {note}: the failure may be the script's own mistake, not its suspect's"
                    ));
                }
                return Ok(Guard {
                    fails_without_suspect: Some(failed.join("; ")),
                    ..unguarded(note)
                });
            }
            return self.unguarded_custom(note);
        };
        self.console.say(format!(
            "control: {}; the original's passes, and every candidate's must",
            suspect.as_str()
        ));
        let mut note = format!("{} (the original's passes)", suspect.as_str());
        let fix = match suspect {
            Suspect::Custom => self.custom_fix()?,
            _ => None,
        };
        if let Some(fix) = &fix {
            note = format!(
                "{note}; the edit {} of its own code makes the original pass, and it is the control of every candidate",
                fix.describe()
            );
            self.console.say(format!(
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
            fails_without_suspect: None,
        })
    }

    /// The guard of a script that compares its own code with a reference when no control
    /// passes on it: an edit of that code that makes it pass, if one does (the bug is there,
    /// and the edit is every candidate's control); else no control runs, the result is
    /// unguarded, and the code the comparison's custom side runs stays in every candidate
    /// (see `Control::unrun`).
    fn unguarded_custom(&self, note: String) -> Result<Guard> {
        let (start, version) = (self.start.as_str(), self.interp.parser_version);
        if let Some(fix) = self.custom_fix()? {
            self.console.say(format!(
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
                fails_without_suspect: None,
            });
        }
        let note =
            format!("{note}; the custom code that the comparison runs stays in every candidate");
        self.console
            .warn(format!("{note}; the result is unguarded"));
        Ok(Guard {
            control: Some(Control::unrun(start, version)),
            unguarded: true,
            note,
            fails_without_suspect: None,
        })
    }

    /// The first edit of a custom implementation's code (see `scrub_reducers::fix`) that
    /// makes the original pass, tried in source order.
    fn custom_fix(&self) -> Result<Option<Fix>> {
        const MOST: usize = 16;
        let Some(script) = scrub_reducers::Script::parse(&self.start, self.interp.parser_version)
        else {
            return Ok(None);
        };
        let (fixes, texts): (Vec<Fix>, Vec<String>) = Fix::candidates(&script)
            .into_iter()
            .take(MOST)
            .filter_map(|fix| fix.apply(&script).map(|text| (fix, text)))
            .unzip();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let (found, _) = first_passing(&texts, &self.workers)?;
        Ok(found.and_then(|i| fixes.into_iter().nth(i)))
    }
}
