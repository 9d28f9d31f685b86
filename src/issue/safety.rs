//! Step 4: what a repro could do to the machine that runs it, read off its AST with line
//! numbers, before it runs.
//!
//! Network access, file writes and deletes outside /tmp, shell and dynamic code, loads of
//! files the issue does not ship, obfuscation, package installs and environment changes
//! beyond the distributed and PyTorch/CUDA knobs are risks; `torchrun` and `mp.spawn` are
//! expected in distributed repros and are not.

use std::collections::HashMap;

use scrub_reducers::python::{
    Expr, PythonVersion, Ranged, Script, SourceOrderVisitor, Stmt, ast, source_order,
};
use serde::Serialize;

/// One risky construct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Risk {
    /// `network`, `file-write`, `shell`, `dynamic-code`, `external-load`, `obfuscation`,
    /// `package-install`, `env-change` or `unparsable`.
    pub kind: &'static str,
    /// 1-based.
    pub line: usize,
    /// The line, trimmed and cut to 120 characters.
    pub snippet: String,
}

const NETWORK_MODULES: &[&str] = &[
    "requests",
    "urllib",
    "urllib2",
    "urllib3",
    "http",
    "httpx",
    "socket",
    "aiohttp",
    "ftplib",
    "smtplib",
    "paramiko",
    "websocket",
    "websockets",
    "wget",
    "boto3",
    "telnetlib",
];
const NETWORK_CALLS: &[&str] = &[
    "from_pretrained",
    "hf_hub_download",
    "snapshot_download",
    "load_dataset",
    "urlretrieve",
    "urlopen",
    "load_state_dict_from_url",
    "download_url_to_file",
    "download_url",
];
const SHELL_CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "os.execv",
    "os.execve",
    "os.execl",
    "os.execlp",
    "os.execvp",
    "os.spawnl",
    "os.spawnv",
    "os.fork",
    "pty.spawn",
    "commands.getoutput",
];
const LOADS: &[&str] = &[
    "torch.load",
    "torch.jit.load",
    "pickle.load",
    "pickle.loads",
    "cPickle.load",
    "numpy.load",
    "joblib.load",
    "dill.load",
    "dill.loads",
    "cloudpickle.load",
    "cloudpickle.loads",
    "marshal.loads",
    "marshal.load",
    "shelve.open",
    "pandas.read_pickle",
    "torch.export.load",
    "safetensors.torch.load_file",
];
const DELETES: &[&str] = &[
    "os.remove",
    "os.unlink",
    "os.rmdir",
    "os.removedirs",
    "os.rename",
    "os.replace",
    "os.makedirs",
    "os.mkdir",
    "os.chmod",
    "os.chown",
    "os.truncate",
    "shutil.rmtree",
    "shutil.move",
    "shutil.copy",
    "shutil.copyfile",
    "shutil.copy2",
    "shutil.copytree",
    "torch.save",
    "numpy.save",
    "numpy.savez",
    "numpy.savetxt",
    "pickle.dump",
    "json.dump",
];
const PATH_WRITES: &[&str] = &[
    "write_text",
    "write_bytes",
    "unlink",
    "rmdir",
    "mkdir",
    "touch",
    "rename",
    "to_csv",
    "to_parquet",
    "save_pretrained",
    "export_chrome_trace",
];
const OBFUSCATION: &[&str] = &[
    "base64.b64decode",
    "base64.b32decode",
    "base64.b85decode",
    "base64.a85decode",
    "base64.decodebytes",
    "base64.urlsafe_b64decode",
    "codecs.decode",
    "zlib.decompress",
    "bytes.fromhex",
    "binascii.unhexlify",
    "binascii.a2b_base64",
    "lzma.decompress",
    "gzip.decompress",
    "bz2.decompress",
];
/// Environment variables a repro may set: distributed setup and PyTorch/CUDA knobs.
const ALLOWED_ENV: &[&str] = &[
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "CUDA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NVIDIA_TF32_OVERRIDE",
    "PYTHONHASHSEED",
];
const ALLOWED_ENV_PREFIXES: &[&str] = &[
    "TORCH",
    "PYTORCH_",
    "CUDA_",
    "CUBLAS_",
    "CUDNN_",
    "NCCL_",
    "TORCHINDUCTOR_",
    "TORCHDYNAMO_",
    "TORCH_LOGS",
    "GLOO_",
    "KINETO_",
    "CUBLASLT_",
    "MIOPEN_",
    "HIP_",
    "ROCM_",
];

/// The risks of `text`, in line order. A script that does not parse cannot be reviewed and is
/// one risk of kind `unparsable`.
pub fn review(text: &str, version: PythonVersion) -> Vec<Risk> {
    let script =
        Script::parse(text, version).or_else(|| Script::parse(text, PythonVersion::latest()));
    let Some(script) = script else {
        let line = scrub_reducers::python::syntax_error(text, version).map_or(1, |(l, _)| l);
        return vec![risk(text, "unparsable", line)];
    };
    let mut review = Review {
        text,
        aliases: HashMap::new(),
        risks: Vec::new(),
    };
    review.visit_body(script.body());
    // Escape soup: long strings of \x.. escapes.
    for (i, line) in text.lines().enumerate() {
        if line.matches("\\x").count() >= 16 || line.matches("chr(").count() >= 8 {
            review.risks.push(risk(text, "obfuscation", i + 1));
        }
    }
    let mut risks = review.risks;
    risks.sort_by_key(|r| (r.line, r.kind));
    risks.dedup();
    risks
}

fn risk(text: &str, kind: &'static str, line: usize) -> Risk {
    let snippet: String = text
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("")
        .trim()
        .chars()
        .take(120)
        .collect();
    Risk {
        kind,
        line,
        snippet,
    }
}

struct Review<'t> {
    text: &'t str,
    /// Local name → the dotted name it stands for (`np` → `numpy`, `system` → `os.system`).
    aliases: HashMap<String, String>,
    risks: Vec<Risk>,
}

impl Review<'_> {
    fn line(&self, node: &impl Ranged) -> usize {
        let at = node.range().start().to_usize();
        self.text[..at].matches('\n').count() + 1
    }

    fn flag(&mut self, kind: &'static str, node: &impl Ranged) {
        let line = self.line(node);
        self.risks.push(risk(self.text, kind, line));
    }

    /// The dotted name of a callee or value, with import aliases resolved; a call or other
    /// expression in the chain becomes `?`.
    fn dotted(&self, expr: &Expr) -> String {
        match expr {
            Expr::Name(n) => self
                .aliases
                .get(n.id.as_str())
                .cloned()
                .unwrap_or_else(|| n.id.to_string()),
            Expr::Attribute(a) => format!("{}.{}", self.dotted(&a.value), a.attr),
            Expr::Call(c) => format!("{}()", self.dotted(&c.func)),
            _ => "?".into(),
        }
    }

    fn check_import(&mut self, module: &str, node: &impl Ranged) {
        let top = module.split('.').next().unwrap_or(module);
        if NETWORK_MODULES.contains(&top) {
            self.flag("network", node);
        }
        if top == "pip" || top == "ensurepip" {
            self.flag("package-install", node);
        }
    }

    fn check_call(&mut self, call: &ast::ExprCall) {
        let name = self.dotted(&call.func);
        let last = name
            .rsplit('.')
            .next()
            .unwrap_or(&name)
            .trim_end_matches("()");
        let string_args: Vec<String> = call
            .arguments
            .args
            .iter()
            .flat_map(literal_strings)
            .collect();
        if name.starts_with("subprocess.") || SHELL_CALLS.contains(&name.as_str()) {
            // torchrun is how distributed repros are meant to be run.
            let launches_torchrun = string_args
                .first()
                .is_some_and(|a| a == "torchrun" || a.starts_with("torchrun "));
            if string_args
                .iter()
                .any(|a| a.contains("pip install") || a == "pip")
            {
                self.flag("package-install", call);
            } else if !launches_torchrun {
                self.flag("shell", call);
            }
        }
        if ["eval", "exec", "compile", "__import__"].contains(&name.as_str())
            || name == "builtins.eval"
            || name == "builtins.exec"
        {
            self.flag("dynamic-code", call);
        }
        if name.starts_with("torch.hub.")
            || NETWORK_CALLS.contains(&last)
            || call
                .arguments
                .find_keyword("download")
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        {
            self.flag("network", call);
        }
        if LOADS.contains(&name.as_str()) {
            self.flag("external-load", call);
        }
        if OBFUSCATION.contains(&name.as_str()) {
            self.flag("obfuscation", call);
        }
        if name == "open" || name == "io.open" || name.ends_with(".open") && name.contains("Path") {
            let mode = call
                .arguments
                .find_argument_value("mode", 1)
                .map(literal_strings)
                .unwrap_or_default();
            let writes = mode.iter().any(|m| m.contains(['w', 'a', 'x', '+']));
            let path = call.arguments.find_argument_value("file", 0);
            if writes && !path.is_some_and(is_tmp_path) {
                self.flag("file-write", call);
            }
        } else if DELETES.contains(&name.as_str()) {
            // The target is the first argument, or the second for the save functions.
            let target = if name.contains("save") || name.ends_with("dump") {
                call.arguments.args.get(1)
            } else {
                call.arguments.args.first()
            };
            if !target.is_some_and(is_tmp_path) {
                self.flag("file-write", call);
            }
        } else if PATH_WRITES.contains(&last)
            && let Expr::Attribute(a) = &*call.func
            && !is_tmp_path(&a.value)
        {
            self.flag("file-write", call);
        }
        if name == "os.putenv" || name == "os.unsetenv" {
            let key = call.arguments.args.first();
            if !key.is_some_and(allowed_env_key) {
                self.flag("env-change", call);
            }
        }
        if name.starts_with("os.environ.")
            && ["update", "setdefault", "pop", "clear", "__setitem__"].contains(&last)
        {
            let allowed =
                match last {
                    "update" => {
                        call.arguments.args.first().is_some_and(|d| match d {
                            Expr::Dict(d) => d
                                .items
                                .iter()
                                .all(|i| i.key.as_ref().is_some_and(allowed_env_key)),
                            _ => false,
                        }) || (call.arguments.args.is_empty()
                            && call.arguments.keywords.iter().all(|k| {
                                k.arg.as_ref().is_some_and(|a| allowed_env_name(a.as_str()))
                            }))
                    }
                    _ => call.arguments.args.first().is_some_and(allowed_env_key),
                };
            if !allowed {
                self.flag("env-change", call);
            }
        }
        if let Some(text) = string_args
            .iter()
            .find(|a| a.contains("pip install") || a.contains("conda install"))
            && !text.is_empty()
            && !name.starts_with("subprocess.")
        {
            self.flag("package-install", call);
        }
    }
}

impl<'a> SourceOrderVisitor<'a> for Review<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::Import(i) => {
                for a in &i.names {
                    self.check_import(a.name.as_str(), a);
                    let local = a.asname.as_ref().map_or_else(
                        || a.name.split('.').next().unwrap_or("").to_string(),
                        |n| n.to_string(),
                    );
                    let full = if a.asname.is_some() {
                        a.name.to_string()
                    } else {
                        local.clone()
                    };
                    self.aliases.insert(local, canonical(&full));
                }
            }
            Stmt::ImportFrom(i) => {
                let module = i.module.as_ref().map_or("", |m| m.as_str());
                if i.level == 0 {
                    self.check_import(module, stmt);
                }
                for a in &i.names {
                    let local = a.asname.as_ref().unwrap_or(&a.name).to_string();
                    self.aliases
                        .insert(local, canonical(&format!("{module}.{}", a.name)));
                }
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    self.check_env_target(t);
                }
            }
            Stmt::AugAssign(a) => self.check_env_target(&a.target),
            Stmt::Delete(d) => {
                for t in &d.targets {
                    self.check_env_target(t);
                }
            }
            _ => {}
        }
        source_order::walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        if let Expr::Call(call) = expr {
            self.check_call(call);
        }
        if let Expr::BytesLiteral(b) = expr
            && b.value.bytes().count() >= 64
            && self.text[scrub_reducers::python::span(b)]
                .matches("\\x")
                .count()
                >= 16
        {
            self.flag("obfuscation", expr);
        }
        source_order::walk_expr(self, expr);
    }
}

impl Review<'_> {
    /// `os.environ["KEY"] = …` and `del os.environ["KEY"]`.
    fn check_env_target(&mut self, target: &Expr) {
        if let Expr::Subscript(s) = target
            && self.dotted(&s.value) == "os.environ"
            && !allowed_env_key(&s.slice)
        {
            self.flag("env-change", target);
        }
    }
}

/// `np.load` and `numpy.load` name the same thing: common aliases are spelled out.
fn canonical(name: &str) -> String {
    for (short, long) in [("np", "numpy"), ("pd", "pandas")] {
        if name == short || name.starts_with(&format!("{short}.")) {
            return format!("{long}{}", &name[short.len()..]);
        }
    }
    name.to_string()
}

fn literal_strings(expr: &Expr) -> Vec<String> {
    match expr {
        Expr::StringLiteral(s) => vec![s.value.to_str().to_string()],
        Expr::List(l) => l.elts.iter().flat_map(literal_strings).collect(),
        Expr::Tuple(t) => t.elts.iter().flat_map(literal_strings).collect(),
        _ => Vec::new(),
    }
}

/// A literal path under /tmp, a relative one without `..` (runs start in a fresh directory
/// under /tmp), or a path built from `tempfile`.
fn is_tmp_path(expr: &Expr) -> bool {
    let text = match expr {
        Expr::StringLiteral(s) => s.value.to_str().to_string(),
        Expr::FString(_) | Expr::Name(_) | Expr::Attribute(_) => return false,
        Expr::Call(c) => {
            let callee = match &*c.func {
                Expr::Name(n) => n.id.to_string(),
                Expr::Attribute(a) => a.attr.to_string(),
                _ => String::new(),
            };
            if callee.contains("mkdtemp") || callee.contains("mkstemp") || callee == "gettempdir" {
                return true;
            }
            return (callee == "Path" || callee == "PurePath" || callee == "join")
                && c.arguments.args.first().is_some_and(is_tmp_path);
        }
        Expr::BinOp(b) => return is_tmp_path(&b.left),
        _ => return false,
    };
    text.starts_with("/tmp/")
        || text == "/tmp"
        || (!text.starts_with('/') && !text.starts_with('~') && !text.contains(".."))
}

fn allowed_env_name(key: &str) -> bool {
    ALLOWED_ENV.contains(&key) || ALLOWED_ENV_PREFIXES.iter().any(|p| key.starts_with(p))
}

fn allowed_env_key(expr: &Expr) -> bool {
    matches!(expr, Expr::StringLiteral(s) if allowed_env_name(s.value.to_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(&'static str, usize)> {
        review(text, PythonVersion::latest())
            .into_iter()
            .map(|r| (r.kind, r.line))
            .collect()
    }

    #[test]
    fn a_plain_repro_has_no_risks() {
        let text = "import os\nimport torch\nos.environ['MASTER_PORT'] = '29500'\nos.environ['TORCH_LOGS'] = '+dynamo'\nx = torch.ones(3)\nwith open('/tmp/out.txt', 'w') as f:\n    f.write('x')\nopen('data.txt', 'w')\nprint(open('/etc/hostname').read())\n";
        assert_eq!(kinds(text), []);
    }

    #[test]
    fn network_shell_and_dynamic_code_are_flagged_with_their_lines() {
        let text = "import subprocess as sp\nfrom os import system\nimport requests\nsp.run(['ls'])\nsystem('rm -rf ~')\neval('1+1')\nmodel = AutoModel.from_pretrained('bert')\nx = torch.hub.load('a/b', 'c')\n";
        assert_eq!(
            kinds(text),
            [
                ("network", 3),
                ("shell", 4),
                ("shell", 5),
                ("dynamic-code", 6),
                ("network", 7),
                ("network", 8)
            ]
        );
    }

    #[test]
    fn torchrun_and_mp_spawn_are_expected() {
        let text = "import subprocess\nimport torch.multiprocessing as mp\nsubprocess.run(['torchrun', '--nproc-per-node=2', 'x.py'])\nmp.spawn(f, nprocs=2)\n";
        assert_eq!(kinds(text), []);
    }

    #[test]
    fn writes_outside_tmp_loads_and_env_changes_are_flagged() {
        let text = "import os, shutil, pickle\nimport numpy as np\nopen('/home/u/.bashrc', 'a').write('x')\nshutil.rmtree('/data')\nos.environ['LD_PRELOAD'] = 'x.so'\npickle.load(open('m.pkl', 'rb'))\nnp.load('weights.npy')\nos.environ.update({'RANK': '0'})\nfrom pathlib import Path\nPath('/etc/x').write_text('y')\nPath('/tmp/y').write_text('y')\n";
        assert_eq!(
            kinds(text),
            [
                ("file-write", 3),
                ("file-write", 4),
                ("env-change", 5),
                ("external-load", 6),
                ("external-load", 7),
                ("file-write", 10)
            ]
        );
    }

    #[test]
    fn obfuscation_and_installs_are_flagged() {
        let text = "import base64\nexec(base64.b64decode('cHJpbnQoMSk='))\nimport subprocess\nsubprocess.check_call(['pip', 'install', 'evil'])\n";
        assert_eq!(
            kinds(text),
            [
                ("dynamic-code", 2),
                ("obfuscation", 2),
                ("package-install", 4)
            ]
        );
    }

    #[test]
    fn a_script_that_does_not_parse_cannot_be_reviewed() {
        assert_eq!(kinds("x = (\n"), [("unparsable", 2)]);
    }
}
