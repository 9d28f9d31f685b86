//! PyTorch's minifier writes its result (`repro.py`) as generated code around a small FX
//! graph: environment and config dumps, a linecache shim, `load_args` reading tensors from a
//! checkpoint folder by content hash, and `run_repro(...)`, which compiles the graph with
//! inductor. [`plain`] turns that into a plain PyTorch script that a person could have
//! written: the graph's module, a constructor per input (`torch.randn(8, 32)`), and the
//! compiled call, or for an accuracy repro eager against compiled with the user's kind of
//! check; there the eager reference is kept (`# scrub: keep`) and the random inputs seeded.
//! The config lines stay; scrub's passes then drop what the failure does not need.
//!
//! ## Example
//! ```text
//! import os
//! os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/torchinductor_root'
//! import torch
//! torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'
//! class Repro(torch.nn.Module):
//!     def forward(self, addmm):
//!         relu = torch.ops.aten.relu.default(addmm);  addmm = None
//!         return [relu]
//! def load_args(reader):
//!     buf0 = reader.storage('7dba…', 1024)
//!     reader.tensor(buf0, (8, 32), is_leaf=True)  # addmm
//! mod = Repro()
//! if __name__ == '__main__':
//!     from torch._dynamo.repro.after_aot import run_repro
//!     with torch.no_grad():
//!         run_repro(mod, load_args, accuracy=False, command='run', save_dir='/tmp/…')
//! ```
//! becomes
//! ```text
//! import torch
//! torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'
//! class Repro(torch.nn.Module):
//!     …
//! addmm = torch.randn(8, 32)
//! mod = Repro()
//! with torch.no_grad():
//!     torch.compile(mod)(addmm)
//! ```
//! ## When it cannot apply
//! A script without a `Repro` module with a `forward`, a `load_args` and a `run_repro` call,
//! or a `load_args` with a statement it does not know: `None`, and scrub reduces the user's
//! script instead.

use crate::prepare::SEED_LINE;
use crate::python::{Expr, Script, Stmt, ast};

/// How the plain script checks an accuracy repro's compiled result against eager.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// `torch.testing.assert_close(actual, expected)`, as the user's script did.
    AssertClose,
    /// `assert torch.allclose(a, e), MESSAGE` for every output, with the user's message.
    AssertAllclose(String),
}

/// The plain script for the minifier's `repro.py` in `script` (see the module's doc); an
/// accuracy repro is checked as `check` says (`AssertClose` when `None`).
pub fn plain(script: &Script, check: Option<&Check>) -> Option<String> {
    let mut kept = Vec::new();
    let mut params = None;
    let mut inputs = None;
    let mut run = None;
    for stmt in script.body() {
        match stmt {
            Stmt::ClassDef(class) if class.name.as_str() == "Repro" => {
                params = forward_params(class);
                kept.push(script.slice(stmt));
            }
            Stmt::FunctionDef(def) if def.name.as_str() == "load_args" => {
                inputs = Some(load_args(script, &def.body)?);
            }
            Stmt::If(branch) if script.slice(&*branch.test).contains("__name__") => {
                run = run_repro(script, &branch.body);
            }
            _ if is_boilerplate(script, stmt) => {}
            _ => kept.push(script.slice(stmt)),
        }
    }
    let (params, inputs, (accuracy, backend)) = (params?, inputs?, run?);
    if params.len() != inputs.len() {
        return None;
    }
    let mut out = String::new();
    for line in kept {
        if line.trim() != "mod = Repro()" {
            out.push_str(line);
            out.push('\n');
        }
    }
    if accuracy {
        // The inputs are random: the failure, and the control that runs eager in place of
        // the compiled call, must not depend on the draw.
        out.push_str(SEED_LINE);
        out.push('\n');
    }
    for (name, input) in params.iter().zip(&inputs) {
        out.push_str(&format!("{name} = {input}\n"));
    }
    let args = params.join(", ");
    let compiled = match backend {
        Some(backend) => format!("torch.compile(mod, backend={backend})({args})"),
        None => format!("torch.compile(mod)({args})"),
    };
    out.push_str("mod = Repro()\nwith torch.no_grad():\n");
    if !accuracy {
        out.push_str(&format!("    {compiled}\n"));
        return Some(out);
    }
    // The eager reference is what the check compares with: no pass may take it away.
    out.push_str(&format!(
        "    expected = mod({args})  # scrub: keep\n    actual = {compiled}\n"
    ));
    match check.unwrap_or(&Check::AssertClose) {
        Check::AssertClose => out.push_str("torch.testing.assert_close(actual, expected)\n"),
        Check::AssertAllclose(message) => out.push_str(&format!(
            "assert all(torch.allclose(a, e) for a, e in zip(actual, expected)), {}\n",
            python_string(message)
        )),
    }
    Some(out)
}

/// The minifier's own scaffolding: environment settings, the linecache shim, the side-table
/// reset, and the names it sets for itself.
fn is_boilerplate(script: &Script, stmt: &Stmt) -> bool {
    let text = script.slice(stmt);
    match stmt {
        Stmt::Import(import) => import.names.iter().any(|a| a.name.as_str() == "os"),
        Stmt::If(branch) => script.slice(&*branch.test).contains("__compile_source__"),
        Stmt::Expr(_) | Stmt::Assign(_) => {
            text.starts_with("os.environ")
                || text.starts_with("isolate_fails_code_str")
                || text.starts_with("load_args._version")
                || text.contains("kernel_side_table.reset_table()")
        }
        _ => false,
    }
}

/// The parameters of `Repro.forward` after `self`.
fn forward_params(class: &ast::StmtClassDef) -> Option<Vec<String>> {
    class.body.iter().find_map(|stmt| match stmt {
        Stmt::FunctionDef(def) if def.name.as_str() == "forward" => Some(
            def.parameters
                .args
                .iter()
                .skip(1)
                .map(|p| p.parameter.name.to_string())
                .collect(),
        ),
        _ => None,
    })
}

/// A constructor per input that `load_args` reads: `reader.tensor(buf, shape, …)` and
/// `reader.symint(n)`; the storages they read from (`bufN = reader.storage(…)`) give only the
/// device.
fn load_args(script: &Script, body: &[Stmt]) -> Option<Vec<String>> {
    let mut devices = std::collections::HashMap::new();
    let mut inputs = Vec::new();
    for stmt in body {
        match stmt {
            Stmt::Assign(assign) => {
                let [Expr::Name(target)] = &assign.targets[..] else {
                    return None;
                };
                let call = reader_call(&assign.value, "storage")?;
                let device = keyword(call, "device").map(|e| script.slice(e).to_string());
                devices.insert(target.id.to_string(), device);
            }
            Stmt::Expr(expr) => {
                if let Some(call) = reader_call(&expr.value, "symint") {
                    inputs.push(script.slice(call.arguments.args.first()?).to_string());
                    continue;
                }
                let call = reader_call(&expr.value, "tensor")?;
                let [Expr::Name(buf), shape, rest @ ..] = &call.arguments.args[..] else {
                    return None;
                };
                let device = devices.get(buf.id.as_str())?.clone();
                inputs.push(tensor(script, call, shape, rest.first(), device));
            }
            _ => return None,
        }
    }
    Some(inputs)
}

fn reader_call<'a>(expr: &'a Expr, method: &str) -> Option<&'a ast::ExprCall> {
    let Expr::Call(call) = expr else { return None };
    let Expr::Attribute(attr) = &*call.func else {
        return None;
    };
    let is_reader = matches!(&*attr.value, Expr::Name(n) if n.id.as_str() == "reader");
    (is_reader && attr.attr.as_str() == method).then_some(call)
}

fn keyword<'a>(call: &'a ast::ExprCall, name: &str) -> Option<&'a Expr> {
    call.arguments
        .keywords
        .iter()
        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
        .map(|k| &k.value)
}

/// A plain constructor for one input tensor: random normal values for floating dtypes,
/// zeros (valid indices, false masks) for integer and bool ones; strided when the minifier
/// recorded a stride that is not the contiguous one.
fn tensor(
    script: &Script,
    call: &ast::ExprCall,
    shape: &Expr,
    stride: Option<&Expr>,
    device: Option<String>,
) -> String {
    let dtype = keyword(call, "dtype").map(|e| script.slice(e).to_string());
    let floating = dtype.as_deref().is_none_or(|d| {
        ["float", "half", "double", "complex"]
            .iter()
            .any(|f| d.contains(f))
    });
    let grad = floating
        && keyword(call, "requires_grad")
            .is_some_and(|e| matches!(e, Expr::BooleanLiteral(b) if b.value));
    let mut kwargs = Vec::new();
    if let Some(dtype) = dtype.filter(|d| d != "torch.float32") {
        kwargs.push(format!("dtype={dtype}"));
    }
    if let Some(device) = device {
        kwargs.push(format!("device={device}"));
    }
    if grad {
        kwargs.push("requires_grad=True".to_string());
    }
    let fill = if floating { "normal_" } else { "zero_" };
    let shape_text = script.slice(shape);
    let elements = match shape {
        Expr::Tuple(t) => t.elts.iter().map(|e| script.slice(e)).collect(),
        _ => vec![shape_text],
    };
    if let Some(stride) = stride.filter(|s| !is_contiguous(shape, s)) {
        let mut args = vec![shape_text.to_string(), script.slice(stride).to_string()];
        args.extend(kwargs);
        // `empty_strided` takes no requires_grad with a fill after it; a leaf needs it set.
        let grad = args.iter().any(|a| a == "requires_grad=True");
        args.retain(|a| a != "requires_grad=True");
        let tail = if grad { ".requires_grad_()" } else { "" };
        return format!("torch.empty_strided({}).{fill}(){tail}", args.join(", "));
    }
    let mut args: Vec<String> = if elements.is_empty() {
        vec!["()".to_string()]
    } else {
        elements.iter().map(|e| e.to_string()).collect()
    };
    args.extend(kwargs);
    let ctor = if floating { "randn" } else { "zeros" };
    format!("torch.{ctor}({})", args.join(", "))
}

/// Whether `stride` is the contiguous stride of `shape` (both tuples of integer literals).
fn is_contiguous(shape: &Expr, stride: &Expr) -> bool {
    let ints = |e: &Expr| -> Option<Vec<i64>> {
        let Expr::Tuple(t) = e else { return None };
        t.elts
            .iter()
            .map(|e| match e {
                Expr::NumberLiteral(n) => n.value.as_int()?.as_i64(),
                _ => None,
            })
            .collect()
    };
    let (Some(shape), Some(stride)) = (ints(shape), ints(stride)) else {
        return false;
    };
    let mut expected = 1;
    for (size, got) in shape.iter().zip(&stride).rev() {
        if *size > 1 && *got != expected {
            return false;
        }
        expected *= size.max(&1);
    }
    shape.len() == stride.len()
}

/// From the `if __name__ == '__main__':` block: whether `run_repro` checks accuracy, and the
/// backend it names (`after_dynamo` repros name one; `after_aot` ones use inductor).
fn run_repro(script: &Script, body: &[Stmt]) -> Option<(bool, Option<String>)> {
    let call = crate::python::all_exprs(body)
        .into_iter()
        .find_map(|e| match e {
            Expr::Call(call) if script.slice(&*call.func).ends_with("run_repro") => Some(call),
            _ => None,
        })?;
    let accuracy = match keyword(call, "accuracy") {
        None => false,
        Some(Expr::BooleanLiteral(b)) => b.value,
        Some(Expr::StringLiteral(s)) => !s.value.to_str().is_empty(),
        Some(_) => return None,
    };
    let backend = keyword(call, "backend")
        .map(|e| script.slice(e).to_string())
        .filter(|b| !b.contains("inductor"));
    Some((accuracy, backend))
}

/// `text` as a Python string literal.
fn python_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '\\' => "\\\\".chars().collect::<Vec<_>>(),
            '"' => vec!['\\', '"'],
            '\n' => vec!['\\', 'n'],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::PythonVersion;

    fn plain_of(text: &str, check: Option<&Check>) -> Option<String> {
        plain(&Script::parse(text, PythonVersion::PY311).unwrap(), check)
    }

    const AFTER_AOT: &str = include_str!("../tests/minifier/after_aot.py");

    #[test]
    fn the_generated_scaffolding_becomes_a_plain_compiled_call() {
        let out = plain_of(AFTER_AOT, None).unwrap();
        insta::assert_snapshot!(out);
        assert!(Script::parse(out.as_str(), PythonVersion::PY311).is_some());
        for gone in ["load_args", "run_repro", "os.environ", "linecache", "/tmp/"] {
            assert!(!out.contains(gone), "{gone} left in\n{out}");
        }
    }

    #[test]
    fn an_accuracy_repro_compares_eager_with_compiled_as_the_user_did() {
        let text = AFTER_AOT.replace("accuracy=False", "accuracy=True");
        let close = plain_of(&text, None).unwrap();
        assert!(
            close.contains("expected = mod(primals_1, primals_2, primals_3, s0)  # scrub: keep")
        );
        assert!(close.contains("torch.manual_seed(0)  # scrub: keep\nprimals_1 = "));
        assert!(close.ends_with("torch.testing.assert_close(actual, expected)\n"));
        let check = Check::AssertAllclose("compiled output differs from \"eager\"".into());
        let allclose = plain_of(&text, Some(&check)).unwrap();
        assert!(
            allclose.contains(
                "for a, e in zip(actual, expected)), \"compiled output differs from \\\"eager\\\"\""
            ),
            "{allclose}"
        );
    }

    #[test]
    fn a_script_that_is_not_a_minifier_repro_has_no_plain_form() {
        assert_eq!(plain_of("import torch\nprint(torch.ones(2))\n", None), None);
        let unknown = AFTER_AOT
            .replace("load_args._version = 0", "load_args._version = 0\n")
            .replace(
                "    buf2 = reader",
                "    reader.unknown()\n    buf2 = reader",
            );
        assert_eq!(plain_of(&unknown, None), None);
    }
}
