//! The default `--jobs` on a GPU machine, from memory. While the original's first runs go
//! (one per GPU at a time), `nvidia-smi` is sampled for each GPU's used and free memory; the
//! most the original added to a GPU's use is what a candidate needs there. As many
//! candidates run on each GPU as fit in its free memory, the same on every GPU, never more
//! than the CPU has cores. Without a sample (no `nvidia-smi`), the jobs stay one per GPU.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::engine::memory::human;

const SAMPLE: Duration = Duration::from_millis(200);
/// The share of a GPU's free memory that the candidates on it may hold together.
const SHARE: f64 = 0.8;
/// The least a candidate is counted to need on a GPU: a CUDA context alone takes about
/// 300–500 MiB, and a sample can miss a short peak.
const FLOOR: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

/// One GPU while the original ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub id: String,
    /// Used and free before the runs, the most used during them, in bytes.
    pub used_before: u64,
    pub free_before: u64,
    pub used_peak: u64,
}

/// Samples every GPU's memory in the background until stopped.
pub struct DeviceWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<Device>>>,
}

impl DeviceWatch {
    /// Starts sampling the GPUs `gpus` names; `None` when `nvidia-smi` answers nothing.
    pub fn start(gpus: &[String]) -> Option<DeviceWatch> {
        let first: Vec<Device> = sample()?
            .into_iter()
            .filter(|(id, ..)| gpus.contains(id))
            .map(|(id, used, free)| Device {
                id,
                used_before: used,
                free_before: free,
                used_peak: used,
            })
            .collect();
        if first.is_empty() {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut devices = first;
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(SAMPLE);
                for (id, used, _) in sample().unwrap_or_default() {
                    if let Some(d) = devices.iter_mut().find(|d| d.id == id) {
                        d.used_peak = d.used_peak.max(used);
                    }
                }
            }
            devices
        });
        Some(DeviceWatch {
            stop,
            thread: Some(thread),
        })
    }

    /// What was seen, once sampling stopped.
    pub fn stop(mut self) -> Vec<Device> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for DeviceWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// `nvidia-smi`'s (index, used, free) for every GPU, in bytes.
fn sample() -> Option<Vec<(String, u64, u64)>> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,memory.used,memory.free",
            "--format=csv,noheader,nounits",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse(&String::from_utf8_lossy(&out.stdout)))
}

/// Lines of `index, used MiB, free MiB`.
fn parse(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(',').map(str::trim);
            let id = fields.next()?.to_string();
            let used: u64 = fields.next()?.parse().ok()?;
            let free: u64 = fields.next()?.parse().ok()?;
            Some((id, used * MIB, free * MIB))
        })
        .collect()
}

/// The jobs for `devices` on a machine of `cores` cores, and why, for the run log.
pub fn choose(devices: &[Device], cores: usize) -> (usize, String) {
    let added = devices
        .iter()
        .map(|d| d.used_peak.saturating_sub(d.used_before))
        .max()
        .unwrap_or(0);
    let need = added.max(FLOOR);
    let per_gpu = devices
        .iter()
        .map(|d| ((d.free_before as f64 * SHARE) / need as f64) as usize)
        .min()
        .unwrap_or(1)
        .max(1);
    let jobs = (per_gpu * devices.len()).min(cores).max(1);
    let free = devices
        .iter()
        .map(|d| format!("GPU {} {} free", d.id, human(d.free_before)))
        .collect::<Vec<_>>()
        .join(", ");
    let capped = if jobs < per_gpu * devices.len() {
        format!(", capped at {cores} cores")
    } else {
        String::new()
    };
    let why = format!(
        "{jobs} from GPU memory: the original added {} at most to a GPU's use (counted as {}); \
         {free}: {per_gpu} a GPU fit in {:.0}% of it{capped}",
        human(added),
        human(need),
        SHARE * 100.0
    );
    (jobs, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(id: &str, used_before: u64, free_before: u64, used_peak: u64) -> Device {
        Device {
            id: id.into(),
            used_before: used_before * MIB,
            free_before: free_before * MIB,
            used_peak: used_peak * MIB,
        }
    }

    #[test]
    fn nvidia_smis_lines_are_read_in_bytes() {
        let text = "0, 512, 142000\n1, 0, 80000\nnot a line\n";
        assert_eq!(
            parse(text),
            vec![
                ("0".to_string(), 512 * MIB, 142000 * MIB),
                ("1".to_string(), 0, 80000 * MIB)
            ]
        );
    }

    #[test]
    fn several_candidates_share_a_large_gpu_up_to_the_cores() {
        // One H200 with 139 GiB free, an original that added 2 GiB: 55 fit, 16 cores.
        let h200 = [device("0", 500, 139 * 1024, 2548)];
        let (jobs, why) = choose(&h200, 16);
        assert_eq!(jobs, 16);
        assert!(why.contains("55 a GPU fit"), "{why}");
        assert!(why.contains("capped at 16 cores"), "{why}");
        assert_eq!(choose(&h200, 64).0, 55);
    }

    #[test]
    fn every_gpu_gets_as_many_as_the_fullest_allows_and_at_least_one() {
        let two = [
            device("0", 0, 40 * 1024, 10 * 1024),
            device("1", 30 * 1024, 12 * 1024, 30 * 1024),
        ];
        // 10 GiB a candidate: 3 fit on GPU 0, 0 on GPU 1, so one each.
        assert_eq!(choose(&two, 16).0, 2);
        // An original that did not touch the GPU still counts a context's worth.
        let idle = [device("0", 0, 8 * 1024, 0)];
        let (jobs, why) = choose(&idle, 16);
        assert_eq!(jobs, 6);
        assert!(why.contains("counted as 1.0 GiB"), "{why}");
    }
}
