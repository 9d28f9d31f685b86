//! The rungs of a PyTorch repro's simplification ladder, taken in full: whether a script
//! still stands on a rung, and the script stepped off it, or why that cannot be done.
//!
//! The binary runs a stepped-off script to learn whether the failure needs the rung; a rung
//! that cannot be stepped off is *not tried*, never "did not hold".

use std::collections::HashMap;

use crate::edit::{Candidate, line_of};
use crate::pass::Pass;
use crate::passes::{CpuFloat32, ShrinkDims, SimplerBackend};
use crate::python::{Expr, PythonVersion, Script, Stmt, all_bodies, all_exprs, span};
use crate::torch::{torch_imports, torch_path};

/// One rung of the ladder, top (most specific) first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rung {
    /// Off CUDA: every `cuda` moved to the CPU.
    Cpu,
    /// Off float64, float16 and bfloat16.
    Float32,
    /// Every size torch takes at 8 or less.
    SmallDims,
    /// Every `torch.compile` on `aot_eager` or `eager` instead of inductor.
    AotEager,
    /// Every `torch.compile` on `eager`.
    Eager,
}

pub const LADDER: [Rung; 5] = [
    Rung::Cpu,
    Rung::Float32,
    Rung::SmallDims,
    Rung::AotEager,
    Rung::Eager,
];

/// How many rewrites one step may take: each changes one site or one size.
const MAX_STEPS: usize = 64;

impl Rung {
    pub fn name(self) -> &'static str {
        match self {
            Rung::Cpu => "cpu",
            Rung::Float32 => "float32",
            Rung::SmallDims => "small_dims",
            Rung::AotEager => "aot_eager",
            Rung::Eager => "eager",
        }
    }

    /// Whether `script` stands on this rung: it uses CUDA, another dtype than float32, a size
    /// above 8, a compile that is not (yet) on this backend.
    pub fn stands_on(self, script: &Script) -> bool {
        let text = script.text();
        match self {
            Rung::Cpu => uses_cuda(text),
            Rung::Float32 => uses_other_precision(text),
            Rung::SmallDims => !self.steps(script).is_empty(),
            Rung::AotEager | Rung::Eager => compiles(script)
                .iter()
                .any(|c| !self.backend_is_below(c.backend.as_ref())),
        }
    }

    /// `script` stepped off this rung in full, or why it cannot be (a backend that is not a
    /// string literal, a `cuda` the rewrite cannot reach).
    pub fn step_off(self, script: &Script, version: PythonVersion) -> Result<String, String> {
        let mut current =
            Script::parse(script.text(), version).ok_or("the script does not parse")?;
        for _ in 0..MAX_STEPS {
            if !self.stands_on(&current) {
                return Ok(current.text().to_string());
            }
            let next = self
                .steps(&current)
                .into_iter()
                .find_map(|c| c.apply(current.text()))
                .and_then(|t| Script::parse(t, version));
            match next {
                Some(next) => current = next,
                None => break,
            }
        }
        if !self.stands_on(&current) {
            return Ok(current.text().to_string());
        }
        Err(self.why_not(&current))
    }

    /// The candidates of the pass that owns this rung that step down it.
    fn steps(self, script: &Script) -> Vec<Candidate> {
        let is_step = |d: &str| match self {
            Rung::Cpu => {
                d.contains("cuda")
                    || d.contains("torch.device")
                    || d.starts_with("drop `.to(")
                    || d.starts_with("drop `device=")
            }
            Rung::Float32 => {
                d.contains("→ `torch.float32`")
                    || [".double()", ".half()", ".bfloat16()", "dtype="]
                        .iter()
                        .any(|c| d.starts_with(&format!("drop `{c}")))
            }
            Rung::SmallDims => d.contains(" to 8 ") || d.ends_with(" to 8"),
            Rung::AotEager => d.starts_with("backend inductor → aot_eager"),
            Rung::Eager => d.starts_with("backend "),
        };
        let pass: &dyn Pass = match self {
            Rung::Cpu | Rung::Float32 => &CpuFloat32,
            Rung::SmallDims => &ShrinkDims,
            Rung::AotEager | Rung::Eager => &SimplerBackend,
        };
        let mut steps = pass.candidates(script);
        steps.retain(|c| is_step(&c.description));
        steps
    }

    /// Whether a compile with this backend (`None`: inductor, the default) is at or below
    /// the rung.
    fn backend_is_below(self, backend: Option<&Backend>) -> bool {
        let name = match backend {
            None => "inductor",
            Some(Backend::Literal(name)) => name.as_str(),
            Some(Backend::Other(_)) => return false,
        };
        match self {
            Rung::AotEager => matches!(name, "aot_eager" | "eager"),
            Rung::Eager => name == "eager",
            _ => true,
        }
    }

    /// Why `script`, after every step, still stands on the rung.
    fn why_not(self, script: &Script) -> String {
        let text = script.text();
        match self {
            Rung::AotEager | Rung::Eager => {
                let compiles = compiles(script);
                let stuck = compiles
                    .iter()
                    .find(|c| !self.backend_is_below(c.backend.as_ref()));
                match stuck {
                    Some(Compile {
                        line,
                        backend: Some(Backend::Other(arg)),
                    }) => format!(
                        "the backend of torch.compile at line {line} is `{arg}`, not a string literal"
                    ),
                    Some(Compile {
                        line,
                        backend: Some(Backend::Literal(name)),
                    }) => format!(
                        "torch.compile at line {line} uses backend {name:?}, which has no rung below it here"
                    ),
                    _ => "no torch.compile call to step down".to_string(),
                }
            }
            Rung::Cpu => format!(
                "CUDA is used at line {} in a way the CPU rewrite cannot reach",
                first_line_with(text, &["cuda"])
            ),
            Rung::Float32 => format!(
                "the dtype at line {} cannot be rewritten to float32",
                first_line_with(text, &["float64", "double", "half", "bfloat16", "float16"])
            ),
            Rung::SmallDims => "a size above 8 could not be shrunk".to_string(),
        }
    }
}

/// A `torch.compile` call or decorator: its line and its `backend=`.
struct Compile {
    line: usize,
    backend: Option<Backend>,
}

enum Backend {
    Literal(String),
    /// Anything but a string literal, as written.
    Other(String),
}

/// Every `torch.compile(...)` call and `@torch.compile` decorator of the script.
fn compiles(script: &Script) -> Vec<Compile> {
    let imports: HashMap<String, String> = torch_imports(script);
    if imports.is_empty() {
        return Vec::new();
    }
    let text = script.text();
    let is_compile = |e: &Expr| torch_path(&imports, e).as_deref() == Some("torch.compile");
    let mut out = Vec::new();
    for expr in all_exprs(script.body()) {
        let Expr::Call(call) = expr else { continue };
        if !is_compile(&call.func) {
            continue;
        }
        let backend = call
            .arguments
            .find_keyword("backend")
            .map(|k| match &k.value {
                Expr::StringLiteral(s) => Backend::Literal(s.value.to_str().to_string()),
                other => Backend::Other(script.slice(other).to_string()),
            });
        out.push(Compile {
            line: line_of(text, span(expr).start),
            backend,
        });
    }
    for body in all_bodies(script.body()) {
        for stmt in body {
            let decorators = match stmt {
                Stmt::FunctionDef(f) => &f.decorator_list,
                Stmt::ClassDef(c) => &c.decorator_list,
                _ => continue,
            };
            for decorator in decorators {
                if is_compile(&decorator.expression) {
                    out.push(Compile {
                        line: line_of(text, span(&decorator.expression).start),
                        backend: None,
                    });
                }
            }
        }
    }
    out
}

fn first_line_with(text: &str, words: &[&str]) -> usize {
    text.lines()
        .position(|l| words.iter().any(|w| l.contains(w)))
        .map_or(0, |i| i + 1)
}

fn uses_cuda(text: &str) -> bool {
    text.contains("\"cuda") || text.contains("'cuda") || text.contains(".cuda(")
}

fn uses_other_precision(text: &str) -> bool {
    ["float64", "double", "half", "bfloat16", "float16"]
        .iter()
        .any(|d| text.contains(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> Script {
        Script::parse(text, PythonVersion::PY311).unwrap()
    }

    #[test]
    fn the_default_backend_steps_down_to_eager() {
        let s = script("import torch\nf = torch.compile(g)\nf(1)\n");
        assert!(Rung::Eager.stands_on(&s));
        assert_eq!(
            Rung::Eager.step_off(&s, PythonVersion::PY311).unwrap(),
            "import torch\nf = torch.compile(g, backend=\"eager\")\nf(1)\n"
        );
        assert_eq!(
            Rung::AotEager.step_off(&s, PythonVersion::PY311).unwrap(),
            "import torch\nf = torch.compile(g, backend=\"aot_eager\")\nf(1)\n"
        );
    }

    #[test]
    fn a_backend_that_is_not_a_literal_cannot_be_stepped_off() {
        let s = script(
            "import torch\nimport argparse\na = argparse\nf = torch.compile(g, backend=a)\n",
        );
        assert!(Rung::Eager.stands_on(&s));
        assert_eq!(
            Rung::Eager.step_off(&s, PythonVersion::PY311).unwrap_err(),
            "the backend of torch.compile at line 4 is `a`, not a string literal"
        );
    }

    #[test]
    fn a_script_already_on_eager_does_not_stand_on_the_backend_rungs() {
        let s = script("import torch\nf = torch.compile(g, backend='eager')\n");
        assert!(!Rung::Eager.stands_on(&s));
        assert!(!Rung::AotEager.stands_on(&s));
    }

    #[test]
    fn cuda_and_sizes_are_stepped_off_site_by_site() {
        let s = script("import torch\nx = torch.randn(64, 3, device=\"cuda\").double()\n");
        assert_eq!(
            Rung::Cpu.step_off(&s, PythonVersion::PY311).unwrap(),
            "import torch\nx = torch.randn(64, 3).double()\n"
        );
        assert_eq!(
            Rung::Float32.step_off(&s, PythonVersion::PY311).unwrap(),
            "import torch\nx = torch.randn(64, 3, device=\"cuda\")\n"
        );
        assert!(Rung::SmallDims.stands_on(&s));
        assert_eq!(
            Rung::SmallDims.step_off(&s, PythonVersion::PY311).unwrap(),
            "import torch\nx = torch.randn(8, 3, device=\"cuda\").double()\n"
        );
    }
}
