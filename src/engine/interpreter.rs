//! The Python interpreter that runs candidates: where it is and what version it is.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use scrub_reducers::PythonVersion;

#[derive(Debug, Clone)]
pub struct Interpreter {
    /// What runs every candidate, as given: a wrapper script may set up the environment.
    pub path: PathBuf,
    /// The executable behind it (`sys.executable`), for the cache key.
    pub executable: PathBuf,
    pub version: String,
    pub parser_version: PythonVersion,
}

impl Interpreter {
    /// Asks `python` (a path, or a name looked up on PATH) for its executable and version.
    pub fn probe(python: &Path) -> Result<Interpreter> {
        let out = Command::new(python)
            .args([
                "-c",
                "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])",
            ])
            .stdin(Stdio::null())
            .output();
        let out = match out {
            Ok(out) => out,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!(
                    "python interpreter {} not found; pass one with --python",
                    python.display()
                )
            }
            Err(e) => return Err(e).with_context(|| format!("cannot run {}", python.display())),
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        let (Some(exe), Some(version), true) = (lines.next(), lines.next(), out.status.success())
        else {
            bail!(
                "{} does not behave like a Python interpreter",
                python.display()
            );
        };
        let mut parts = version.split('.').map(|p| p.parse::<u8>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(3), parts.next().unwrap_or(0));
        if major != 3 || minor < 7 {
            bail!(
                "{} is Python {version}; scrub needs Python 3.7 or newer",
                python.display()
            );
        }
        Ok(Interpreter {
            path: python.to_path_buf(),
            executable: PathBuf::from(exe),
            version: version.to_string(),
            parser_version: PythonVersion { major, minor },
        })
    }

    /// `python3` on PATH, resolved to the executable behind it: a launcher shim (pyenv's)
    /// picks the interpreter for the current directory once, instead of per candidate.
    pub fn probe_default() -> Result<Interpreter> {
        let mut interp = Interpreter::probe(Path::new("python3"))?;
        if !interp.executable.as_os_str().is_empty() {
            interp.path = interp.executable.clone();
        }
        Ok(interp)
    }

    /// Names the interpreter in cache keys.
    pub fn identity(&self) -> String {
        format!(
            "{} ({}) {}",
            self.path.display(),
            self.executable.display(),
            self.version
        )
    }
}
