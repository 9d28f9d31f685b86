//! What this machine lacked when a repro failed for want of it: a failure of the machine is
//! not the reported bug, and a report never calls it "reproduces".
//!
//! Read from the run's final exception (its class and message) and, for a run that waited
//! until the timeout, from the script. The report, `--json` and the comment name the lack.

use serde::Serialize;

use crate::engine::exception::{cause, final_exception};

/// What this machine lacked for the repro to run to its failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lack {
    /// A GPU or its driver: `Found no NVIDIA driver`, `Torch not compiled with CUDA enabled`,
    /// no CUDA device at all or none of that index.
    Gpu,
    /// GPU memory: `CUDA out of memory` in a report that is not about memory.
    GpuMemory,
    /// A file, model or dataset the repro reads and the thread does not provide.
    File,
    /// The network: a download, a hub or a host the repro reaches.
    Network,
    /// The other processes of a distributed job: a rendezvous without its peers, or the
    /// environment a launcher (`torchrun`) sets.
    Peers,
    /// A package the repro imports only while it runs (`No module named …`).
    Package,
}

impl Lack {
    /// What was lacking, for a sentence: "this machine has no GPU".
    pub fn says(self) -> &'static str {
        match self {
            Lack::Gpu => "this machine has no GPU or no CUDA driver",
            Lack::GpuMemory => "this machine's GPU ran out of memory",
            Lack::File => "a file, model or dataset the repro reads is not on this machine",
            Lack::Network => "this machine has no network access",
            Lack::Peers => {
                "the repro waits for the other processes of a distributed job, which were not started here"
            }
            Lack::Package => "this machine's Python lacks a package the repro imports",
        }
    }

    /// What a maintainer needs to run it: "a machine with a GPU".
    pub fn needs(self) -> &'static str {
        match self {
            Lack::Gpu => "a machine with a CUDA GPU",
            Lack::GpuMemory => "a GPU with more memory",
            Lack::File => "the file, model or dataset it reads (or a small stand-in for it)",
            Lack::Network => "a machine with network access",
            Lack::Peers => "a distributed launch (torchrun with its processes)",
            Lack::Package => "the missing package installed",
        }
    }

    /// Whether the lack is hardware this machine does not have (the category `hardware`).
    pub fn is_hardware(self) -> bool {
        matches!(self, Lack::Gpu | Lack::GpuMemory | Lack::Peers)
    }
}

/// Messages that show a missing GPU or driver.
const NO_GPU: &[&str] = &[
    "Found no NVIDIA driver",
    "Torch not compiled with CUDA enabled",
    "No CUDA GPUs are available",
    "no CUDA-capable device is detected",
    "CUDA driver initialization failed",
    "invalid device ordinal",
    "torch.cuda.is_available() is False",
    "Cannot access accelerator device when none is available",
    "no GPUs found",
    "CUDA_HOME environment variable is not set",
];

/// Messages that show a GPU out of memory.
const NO_GPU_MEMORY: &[&str] = &[
    "CUDA out of memory",
    "CUBLAS_STATUS_ALLOC_FAILED",
    "cudaErrorMemoryAllocation",
];

/// Messages that show a missing file, model or dataset.
const NO_FILE: &[&str] = &[
    "No such file or directory",
    "Dataset not found",
    "is not a local folder and is not a valid model identifier",
    "does not appear to have a file named",
];

/// Classes and messages that show no network.
const NO_NETWORK: &[&str] = &[
    "URLError",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "Failed to establish a new connection",
    "Max retries exceeded with url",
    "couldn't connect to 'https://huggingface.co'",
    "LocalEntryNotFoundError",
    "OfflineModeIsEnabled",
    "getaddrinfo failed",
];

/// Messages that show a distributed job without its peers or its launcher.
const NO_PEERS: &[&str] = &[
    "using env:// rendezvous",
    "clients joined",
    "The client socket has timed out",
    "DistNetworkError",
    "DistStoreError",
];

/// What this machine lacked, read from a failed run's `stderr`; `None` when the failure is not
/// one of the machine. `about_memory`: the report is about running out of memory, so GPU
/// memory is not lacking but the failure.
pub fn lacking(stderr: &str, about_memory: bool) -> Option<Lack> {
    let exc = final_exception(stderr)?;
    let mut text = format!("{}\n{}", exc.class, exc.message);
    if let Some(c) = cause(stderr) {
        text = format!("{text}\n{}\n{}", c.class, c.message);
    }
    let has = |needles: &[&str]| needles.iter().any(|n| text.contains(n));
    let class = exc.class.rsplit('.').next().unwrap_or(&exc.class);
    if has(NO_GPU_MEMORY) || (class == "OutOfMemoryError" && text.contains("CUDA")) {
        return (!about_memory).then_some(Lack::GpuMemory);
    }
    if has(NO_GPU) {
        return Some(Lack::Gpu);
    }
    if has(NO_PEERS) {
        return Some(Lack::Peers);
    }
    if has(NO_NETWORK) || class == "ConnectionError" && text.contains("http") {
        return Some(Lack::Network);
    }
    if class == "ModuleNotFoundError" || text.contains("No module named") {
        return Some(Lack::Package);
    }
    if class == "FileNotFoundError" || has(NO_FILE) {
        return Some(Lack::File);
    }
    None
}

/// Whether `script` starts a distributed job by itself, so that a run that waited until the
/// timeout was waiting for its peers.
pub fn waits_for_peers(script: &str) -> bool {
    ["init_process_group", "init_device_mesh", "init_rpc"]
        .iter()
        .any(|c| script.contains(c))
        && !script.contains("mp.spawn")
        && !script.contains("multiprocessing.spawn")
}

/// Whether the report (its title, or the failure it shows) is about CUDA itself, so that
/// moving the repro to the CPU would not run what it reports.
pub fn about_cuda(title: &str, failure: &str) -> bool {
    let text = format!("{title}\n{failure}").to_ascii_lowercase();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let named = [
        "cuda",
        "gpu",
        "gpus",
        "cudnn",
        "cublas",
        "cufft",
        "cusparse",
        "nccl",
        "nvidia",
        "triton",
        "cudagraph",
        "cudagraphs",
        "nvfuser",
    ];
    words.iter().any(|w| named.contains(w))
        || text.contains("device-side assert")
        || text.contains("illegal memory access")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TB: &str = "Traceback (most recent call last):\n  File \"r.py\", line 3, in <module>\n    x = torch.ones(2, device='cuda')\n";

    fn lack(last: &str) -> Option<Lack> {
        lacking(&format!("{TB}{last}\n"), false)
    }

    #[test]
    fn each_failure_of_the_machine_is_named_by_what_it_lacked() {
        assert_eq!(
            lack(
                "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU"
            ),
            Some(Lack::Gpu)
        );
        assert_eq!(
            lack("AssertionError: Torch not compiled with CUDA enabled"),
            Some(Lack::Gpu)
        );
        assert_eq!(
            lack("RuntimeError: CUDA error: invalid device ordinal"),
            Some(Lack::Gpu)
        );
        assert_eq!(
            lack("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB"),
            Some(Lack::GpuMemory)
        );
        assert_eq!(
            lack("FileNotFoundError: [Errno 2] No such file or directory: 'weights.pt'"),
            Some(Lack::File)
        );
        assert_eq!(
            lack(
                "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"
            ),
            Some(Lack::Network)
        );
        assert_eq!(
            lack(
                "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set"
            ),
            Some(Lack::Peers)
        );
        assert_eq!(
            lack("ModuleNotFoundError: No module named 'transformers'"),
            Some(Lack::Package)
        );
    }

    #[test]
    fn a_failure_of_the_library_is_not_a_lack() {
        assert_eq!(
            lack(
                "NotImplementedError: Could not run 'aten::foo' with arguments from the 'SparseCPU' backend."
            ),
            None
        );
        assert_eq!(lack("RuntimeError: shape '[2, 3]' is invalid"), None);
        assert_eq!(lacking("", false), None);
    }

    #[test]
    fn running_out_of_gpu_memory_is_the_failure_of_a_report_about_memory() {
        let oom = format!("{TB}torch.OutOfMemoryError: CUDA out of memory.\n");
        assert_eq!(lacking(&oom, true), None);
        assert_eq!(lacking(&oom, false), Some(Lack::GpuMemory));
    }

    #[test]
    fn a_report_about_cuda_names_it_in_its_title_or_failure() {
        assert!(about_cuda("Wrong result of cumsum on GPU", ""));
        assert!(about_cuda(
            "x",
            "RuntimeError: CUDA error: an illegal memory access"
        ));
        assert!(!about_cuda(
            "Sparse backward raises NotImplementedError",
            "NotImplementedError"
        ));
        assert!(!about_cuda("Incorrect result of accumulate", ""));
    }

    #[test]
    fn a_script_that_starts_its_own_distributed_job_waits_for_peers() {
        assert!(waits_for_peers(
            "import torch.distributed as dist\ndist.init_process_group('gloo')\n"
        ));
        assert!(!waits_for_peers(
            "import torch.multiprocessing as mp\nmp.spawn(f, nprocs=2)\ndef f(r):\n    dist.init_process_group('gloo')\n"
        ));
        assert!(!waits_for_peers("import torch\n"));
    }
}
