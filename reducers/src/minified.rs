//! PyTorch's minifier writes its result (`repro.py`) as generated code around a small FX
//! graph: environment and config dumps, a linecache shim, `load_args` reading tensors from a
//! checkpoint folder by content hash, and `run_repro(...)`, which compiles the graph with
//! inductor. [`plain`] turns that into a plain PyTorch script that a person could have
//! written: the graph's module, a constructor per input (`torch.randn(8, 32)`), and the
//! compiled call, or for an accuracy repro eager against compiled with the user's kind of
//! check; there the random inputs are seeded, and the eager reference stays because the
//! oracle refuses a candidate that no longer calls the compiled function eagerly.
//! The config lines stay; scrub's passes then drop what the failure does not need. A tighter
//! form comes first, the one shown below: the graph as a function, `import torch` alone, and
//! only the configs the user's script sets; the caller falls back to the plain form when the
//! tight one does not fail the same way.
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
//! def forward(addmm):
//!     relu = torch.ops.aten.relu.default(addmm)
//!     return [relu]
//! addmm = torch.randn(8, 32)
//! with torch.no_grad():
//!     torch.compile(forward)(addmm)
//! ```
//! ## When it cannot apply
//! A script without a `Repro` module with a `forward`, a `load_args` and a `run_repro` call,
//! or a `load_args` with a statement it does not know: no form, and scrub reduces the user's
//! script instead. A graph that reads `self` (an `after_dynamo` repro's submodules) has no
//! tight form.

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

/// The plain scripts for the minifier's `repro.py` in `script` (see the module's doc), the
/// tightest first; an accuracy repro is checked as `check` says (`AssertClose` when `None`).
/// None when the script is not in the shape the minifier writes.
///
/// The tight one is what a person would write from the plain one: `import torch` alone, the
/// graph as a function when it reads nothing of `self`, without the `x = None` lines that
/// only free memory, and only the config lines that `original` (the user's script) sets. It
/// may lose the failure (a config the minifier's run needed); the caller tries the next.
pub fn plain(script: &Script, check: Option<&Check>, original: &str) -> Vec<String> {
    let Some(parts) = Parts::of(script) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(tight) = parts.tight(check, original) {
        out.push(tight);
    }
    out.push(parts.plain(check));
    out
}

/// The minifier's `repro.py` taken apart.
struct Parts<'a> {
    script: &'a Script,
    /// The statements kept as they are, the `Repro` class among them, in order.
    kept: Vec<&'a Stmt>,
    repro: &'a ast::StmtClassDef,
    params: Vec<String>,
    inputs: Vec<String>,
    accuracy: bool,
    backend: Option<String>,
}

impl<'a> Parts<'a> {
    fn of(script: &'a Script) -> Option<Parts<'a>> {
        let mut kept = Vec::new();
        let mut repro = None;
        let mut inputs = None;
        let mut run = None;
        for stmt in script.body() {
            match stmt {
                Stmt::ClassDef(class) if class.name.as_str() == "Repro" => {
                    repro = Some(class);
                    kept.push(stmt);
                }
                Stmt::FunctionDef(def) if def.name.as_str() == "load_args" => {
                    inputs = Some(load_args(script, &def.body)?);
                }
                Stmt::If(branch) if script.slice(&*branch.test).contains("__name__") => {
                    run = run_repro(script, &branch.body);
                }
                _ if is_boilerplate(script, stmt) => {}
                _ if script.slice(stmt).trim() == "mod = Repro()" => {}
                _ => kept.push(stmt),
            }
        }
        let repro = repro?;
        let params = forward_params(repro)?;
        let (inputs, (accuracy, backend)) = (inputs?, run?);
        (params.len() == inputs.len()).then_some(Parts {
            script,
            kept,
            repro,
            params,
            inputs,
            accuracy,
            backend,
        })
    }

    /// The generated script with its scaffolding replaced, everything else kept.
    fn plain(&self, check: Option<&Check>) -> String {
        let mut out = String::new();
        for stmt in &self.kept {
            out.push_str(self.script.slice(*stmt));
            out.push('\n');
        }
        out.push_str(&self.run("mod", "mod = Repro()\n", check, false));
        out
    }

    /// The plain script as a person would write it (see [`plain`]), or `None` when the graph
    /// reads `self`.
    fn tight(&self, check: Option<&Check>, original: &str) -> Option<String> {
        let function = self.function()?;
        let mut out = String::from("import torch\n");
        for stmt in &self.kept {
            let text = self.script.slice(*stmt);
            let keep = match stmt {
                Stmt::Import(_) | Stmt::ImportFrom(_) | Stmt::ClassDef(_) => false,
                Stmt::Assign(assign) => match config_name(self.script, assign) {
                    Some(name) => original.contains(name),
                    None => true,
                },
                _ => true,
            };
            if keep {
                out.push_str(text);
                out.push('\n');
            }
        }
        out.push_str(&function);
        out.push_str(&self.run("forward", "", check, true));
        Some(out)
    }

    /// `Repro.forward` as a function of its inputs, without the lines that set a name to
    /// `None` (the generated code frees each intermediate that way); `None` when its body reads
    /// `self` or the class holds more than an empty `__init__`.
    fn function(&self) -> Option<String> {
        let mut forward = None;
        for stmt in &self.repro.body {
            match stmt {
                Stmt::FunctionDef(def) if def.name.as_str() == "forward" => forward = Some(def),
                Stmt::FunctionDef(def) if def.name.as_str() == "__init__" => {
                    let only_super = def
                        .body
                        .iter()
                        .all(|s| self.script.slice(s).replace(' ', "") == "super().__init__()");
                    if !only_super {
                        return None;
                    }
                }
                Stmt::Pass(_) => {}
                _ => return None,
            }
        }
        let forward = forward?;
        let reads_self = crate::python::all_exprs(&forward.body)
            .iter()
            .any(|e| matches!(e, Expr::Name(n) if n.id.as_str() == "self"));
        if reads_self || !forward.decorator_list.is_empty() {
            return None;
        }
        let mut out = format!("def forward({}):\n", self.params.join(", "));
        for stmt in &forward.body {
            let frees = matches!(stmt, Stmt::Assign(a)
                if matches!(&*a.value, Expr::NoneLiteral(_))
                    && matches!(&a.targets[..], [Expr::Name(_)]));
            if !frees {
                out.push_str(&format!("    {}\n", self.script.slice(stmt)));
            }
        }
        Some(out)
    }

    /// The inputs, then the compiled call of `callee` (made by `setup`), or for an accuracy
    /// repro the eager reference against it; in the `tight` form that reference is computed
    /// outside `no_grad`.
    fn run(&self, callee: &str, setup: &str, check: Option<&Check>, tight: bool) -> String {
        let mut out = String::new();
        if self.accuracy {
            // The inputs are random: the failure, and the control that runs eager in place of
            // the compiled call, must not depend on the draw.
            out.push_str(SEED_LINE);
            out.push('\n');
        }
        for (name, input) in self.params.iter().zip(&self.inputs) {
            out.push_str(&format!("{name} = {input}\n"));
        }
        let args = self.params.join(", ");
        let compiled = match &self.backend {
            Some(backend) => format!("torch.compile({callee}, backend={backend})({args})"),
            None => format!("torch.compile({callee})({args})"),
        };
        out.push_str(setup);
        if !self.accuracy {
            out.push_str(&format!("with torch.no_grad():\n    {compiled}\n"));
            return out;
        }
        // The eager reference is what the check compares with: the oracle refuses a candidate
        // that no longer calls `callee` eagerly (see `control::eager_references`), so passes
        // may fold it into the check. The tight form computes it outside `no_grad`.
        let expected = format!("expected = {callee}({args})\n");
        if tight {
            out.push_str(&format!(
                "{expected}with torch.no_grad():\n    actual = {compiled}\n"
            ));
        } else {
            out.push_str(&format!(
                "with torch.no_grad():\n    {expected}    actual = {compiled}\n"
            ));
        }
        match check.unwrap_or(&Check::AssertClose) {
            Check::AssertClose => out.push_str("torch.testing.assert_close(actual, expected)\n"),
            Check::AssertAllclose(message) => out.push_str(&format!(
                "assert all(torch.allclose(a, e) for a, e in zip(actual, expected)), {}\n",
                python_string(message)
            )),
        }
        out
    }
}

/// The option an assignment sets when it sets one of torch's configs
/// (`torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = …` sets
/// `inject_relu_bug_TESTING_ONLY`).
fn config_name<'s>(script: &'s Script, assign: &ast::StmtAssign) -> Option<&'s str> {
    let [target @ Expr::Attribute(_)] = &assign.targets[..] else {
        return None;
    };
    let text = script.slice(target);
    if text.starts_with("torch.") && text.contains(".config.") {
        text.rsplit('.').next()
    } else {
        None
    }
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

    /// The plain form (the last), as the generated script reads with its scaffolding replaced.
    fn plain_of(text: &str, check: Option<&Check>) -> Option<String> {
        plain_forms(text, check, "").pop()
    }

    fn plain_forms(text: &str, check: Option<&Check>, original: &str) -> Vec<String> {
        plain(
            &Script::parse(text, PythonVersion::PY311).unwrap(),
            check,
            original,
        )
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
        assert!(close.contains("expected = mod(primals_1, primals_2, primals_3, s0)\n"));
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
    fn the_tight_form_is_a_function_with_the_users_configs_only() {
        let original = "import torch\ntorch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = \"runtime_error\"\n";
        let forms = plain_forms(AFTER_AOT, None, original);
        assert_eq!(forms.len(), 2);
        insta::assert_snapshot!(forms[0]);
        assert!(Script::parse(forms[0].as_str(), PythonVersion::PY311).is_some());
        assert!(!forms[0].contains("unlift_effect_tokens"), "{}", forms[0]);
        assert!(!forms[0].contains("= None"), "{}", forms[0]);
        let accuracy = AFTER_AOT.replace("accuracy=False", "accuracy=True");
        let tight = &plain_forms(&accuracy, None, original)[0];
        assert!(
            tight.contains("expected = forward(primals_1, primals_2, primals_3, s0)\n"),
            "{tight}"
        );
    }

    #[test]
    fn a_graph_that_reads_self_has_no_tight_form() {
        let with_self = AFTER_AOT.replace("return (index, s0)", "return (index, self.scale)");
        assert_eq!(plain_forms(&with_self, None, "").len(), 1);
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
