//! Memory: what a candidate's process group holds, the limit it runs under (`--max-memory`),
//! and the sizes a user writes.
//!
//! The limit applies to the whole group, so a fork or a subprocess does not escape it; it is
//! enforced by sampling the group's resident memory from `/proc`, not by `RLIMIT_AS`, which
//! counts address space that PyTorch and CUDA reserve without using.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};

/// How often a running group's memory is sampled (the first sample after one interval, so
/// that a quick candidate costs nothing).
const SAMPLE: Duration = Duration::from_millis(100);
/// The share of the machine's memory that the candidates running at once may hold together.
const MACHINE_SHARE: f64 = 0.8;

/// Watches one process group while it runs: its peak memory, and whether it went over the
/// limit.
pub struct Watch {
    pgid: i32,
    limit: Option<u64>,
    next: Instant,
    /// The most memory the group was seen to hold, in bytes.
    pub peak: u64,
}

impl Watch {
    pub fn new(pgid: i32, limit: Option<u64>) -> Watch {
        Watch {
            pgid,
            limit,
            next: Instant::now() + SAMPLE,
            peak: 0,
        }
    }

    /// Samples the group when a sample is due; true when it holds more than the limit.
    pub fn over_limit(&mut self) -> bool {
        if Instant::now() < self.next {
            return false;
        }
        self.next = Instant::now() + SAMPLE;
        let rss = group_rss(self.pgid);
        self.peak = self.peak.max(rss);
        self.limit.is_some_and(|limit| rss > limit)
    }
}

/// The resident memory of every process in group `pgid`, in bytes.
pub fn group_rss(pgid: i32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let page = page_size();
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|stat| pgrp_and_rss(&stat))
        .filter(|&(pgrp, _)| pgrp == pgid)
        .map(|(_, pages)| pages * page)
        .sum()
}

/// The process group and the resident pages in a `/proc/PID/stat` line.
fn pgrp_and_rss(stat: &str) -> Option<(i32, u64)> {
    // The command name may hold spaces and parentheses: fields are counted after its `)`.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name: state(3) ppid(4) pgrp(5) … rss(24), numbered as in proc(5).
    Some((fields.get(2)?.parse().ok()?, fields.get(21)?.parse().ok()?))
}

fn page_size() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as u64 } else { 4096 }
}

/// The machine's memory, in bytes, from `/proc/meminfo`.
pub fn machine_total() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The memory a candidate's process group may hold, as asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Limit {
    /// A share of the machine's memory, split between the candidates that run at once.
    #[default]
    Share,
    /// At most this many bytes.
    Bytes(u64),
    /// No limit (`--max-memory none`).
    Unlimited,
}

impl Limit {
    /// A limit as a user writes it: a size (see [`parse_size`]), or `none`.
    pub fn parse(text: &str) -> Result<Limit> {
        Ok(parse_size(text)?.map_or(Limit::Unlimited, Limit::Bytes))
    }
}

/// The limit per candidate in bytes (`None`: no limit): `given`, where a share of the
/// machine's memory is split between the `jobs` candidates that run at once.
pub fn limit(given: Limit, jobs: usize) -> Option<u64> {
    match given {
        Limit::Bytes(bytes) => Some(bytes),
        Limit::Unlimited => None,
        Limit::Share => {
            machine_total().map(|total| (total as f64 * MACHINE_SHARE / jobs.max(1) as f64) as u64)
        }
    }
}

/// A size as a user writes it: `8G`, `512MiB`, `1.5g`, `1048576` (bytes); `none` for none.
pub fn parse_size(text: &str) -> Result<Option<u64>> {
    let t = text.trim().to_ascii_lowercase();
    if t == "none" {
        return Ok(None);
    }
    let t = t.trim_end_matches('b').trim_end_matches('i');
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let scale: u64 = match unit {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => bail!("invalid size {text:?}: use a number with K, M, G or T, or none"),
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(Some((n * scale as f64) as u64)),
        _ => bail!("invalid size {text:?}: use a positive number with K, M, G or T, or none"),
    }
}

/// A size for people: `1.5 GiB`, `230 MiB`.
pub fn human(bytes: u64) -> String {
    let mib = bytes as f64 / (1 << 20) as f64;
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(parse_size("8G").unwrap(), Some(8 << 30));
        assert_eq!(parse_size("512MiB").unwrap(), Some(512 << 20));
        assert_eq!(parse_size("1.5g").unwrap(), Some(3 << 29));
        assert_eq!(parse_size("4096").unwrap(), Some(4096));
        assert_eq!(parse_size("none").unwrap(), None);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1G").is_err());
    }

    #[test]
    fn the_fields_of_a_stat_line_are_counted_after_the_name() {
        let stat = "42 (py (x) y) S 1 40 40 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 1000 250 18446744073709551615";
        assert_eq!(pgrp_and_rss(stat), Some((40, 250)));
    }

    #[test]
    fn this_process_group_holds_memory() {
        // SAFETY: getpgrp has no preconditions.
        let pgid = unsafe { libc::getpgrp() };
        assert!(group_rss(pgid) > 1 << 20);
    }

    #[test]
    fn the_default_limit_is_a_share_of_the_machine_per_job() {
        let one = limit(Limit::Share, 1).unwrap();
        let four = limit(Limit::Share, 4).unwrap();
        assert!(one > four * 3 && one < four * 5);
        assert_eq!(limit(Limit::Bytes(2 << 30), 4), Some(2 << 30));
        assert_eq!(limit(Limit::Unlimited, 4), None);
        assert_eq!(Limit::parse("2G").unwrap(), Limit::Bytes(2 << 30));
        assert_eq!(Limit::parse("none").unwrap(), Limit::Unlimited);
    }
}
