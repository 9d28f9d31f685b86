//! Warm workers on a Ray cluster: a Python bridge (`ray/bridge.py`, shipped inside the binary)
//! runs under the repro's interpreter, connects to the cluster and keeps `--jobs` actors, each
//! doing what a local zygote does on its node (preload once, fork a child per candidate in its
//! own process group and temp directory, time it out, kill the group). The cache, the oracle
//! and the run dir stay here; an answer becomes the same `Outcome` a local zygote gives.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::ChildStdin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use process_wrap::std::StdChildWrapper;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::engine::output::keep;
use crate::engine::process::{INTERRUPTED, Interrupted, Outcome, Status};
use crate::engine::workers::{Backend, Job};
use crate::engine::zygote::spawn_helper;

const SOURCE: &str = include_str!("ray/bridge.py");
const ZYGOTE: &str = include_str!("zygote/zygote.py");
/// Connecting to a cluster, or creating actors that import torch, can take minutes.
const READY_TIMEOUT: Duration = Duration::from_secs(300);
const POLL: Duration = Duration::from_millis(20);
/// On top of the candidate's own timeout, which its actor enforces: the trip to the cluster,
/// and an actor's restart.
const SLACK: Duration = Duration::from_secs(600);

/// The environment knobs that change a run's behaviour (the cache key names them): the actors
/// get the driver's, and `PYTHONHASHSEED=0` as local runs do. `CUDA_VISIBLE_DEVICES` is Ray's.
const KNOBS: &[&str] = &["PYTHON", "TORCH", "OMP_", "MKL_"];

type Waiting = Arc<Mutex<HashMap<u64, Sender<Value>>>>;

pub struct Ray {
    /// The bridge's and the zygote's sources, as files: in `ps`, its command line stays short.
    _files: tempfile::TempDir,
    child: Mutex<Box<dyn StdChildWrapper>>,
    requests: Mutex<Option<ChildStdin>>,
    waiting: Waiting,
    next_id: AtomicU64,
    jobs: usize,
    gpus_per_worker: f64,
    /// The original whose modules the actors import, once they are asked to start.
    started: Mutex<Option<String>>,
    /// Per actor, whether it is known to be up (and its pid logged).
    up: Vec<Mutex<bool>>,
    events: Mutex<Vec<String>>,
    /// What the cluster offers: CPUs, GPUs, nodes.
    pub cpus: f64,
    pub gpus: f64,
    pub nodes: u64,
}

#[derive(Deserialize)]
struct Ready {
    cpus: f64,
    gpus: f64,
    nodes: u64,
}

#[derive(Deserialize)]
struct RunAnswer {
    status: i32,
    maxrss: u64,
    killed: Option<String>,
    peak: u64,
    duration: f64,
    stdout: String,
    stderr: String,
    #[serde(default)]
    events: Vec<String>,
}

impl Ray {
    /// Starts the bridge under `python` and connects it to the cluster at `address` (`auto`:
    /// the one `ray start` left on this machine). `gpus_per_worker`: `None` reserves one GPU
    /// per actor when the cluster has GPUs, else none.
    pub fn connect(
        python: &Path,
        address: &str,
        jobs: usize,
        gpus_per_worker: Option<f64>,
    ) -> Result<Ray> {
        let files = tempfile::Builder::new().prefix("scrub-ray-").tempdir()?;
        let (bridge, zygote) = (
            files.path().join("bridge.py"),
            files.path().join("zygote.py"),
        );
        std::fs::write(&bridge, SOURCE)?;
        std::fs::write(&zygote, ZYGOTE)?;
        let (child, requests, stdout) = spawn_helper(
            python,
            &[&bridge, Path::new(address), &zygote],
            &[("RAY_USAGE_STATS_ENABLED".into(), "0".into())],
            "the Ray bridge",
        )?;
        let (first_tx, first) = channel();
        let waiting: Waiting = Arc::default();
        let dispatch = Arc::clone(&waiting);
        std::thread::spawn(move || {
            let mut first_tx = Some(first_tx);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if let Some(tx) = first_tx.take() {
                    let _ = tx.send(value);
                    continue;
                }
                let id = value["id"].as_u64().unwrap_or(u64::MAX);
                if let Some(tx) = dispatch.lock().unwrap().remove(&id) {
                    let _ = tx.send(value);
                }
            }
            // The bridge is gone: every caller still waiting learns it.
            dispatch.lock().unwrap().clear();
        });
        let mut ray = Ray {
            _files: files,
            child: Mutex::new(child),
            requests: Mutex::new(Some(requests)),
            waiting,
            next_id: AtomicU64::new(0),
            jobs,
            gpus_per_worker: gpus_per_worker.unwrap_or(0.0),
            started: Mutex::new(None),
            up: (0..jobs).map(|_| Mutex::new(false)).collect(),
            events: Mutex::new(Vec::new()),
            cpus: 0.0,
            gpus: 0.0,
            nodes: 0,
        };
        let hello = match first.recv_timeout(READY_TIMEOUT) {
            Ok(value) => value,
            Err(_) => bail!(
                "the Ray bridge under {} did not start; check that it runs Python 3 with ray",
                python.display()
            ),
        };
        match hello["error"].as_str() {
            Some("missing-ray") => bail!(
                "--ray needs the Python package ray in {}; install it there (pip install ray)",
                python.display()
            ),
            Some(message) => bail!("cannot connect to the Ray cluster at {address}: {message}"),
            None => {}
        }
        let ready: Ready = serde_json::from_value(hello).context("unreadable Ray bridge answer")?;
        (ray.cpus, ray.gpus, ray.nodes) = (ready.cpus, ready.gpus, ready.nodes);
        if gpus_per_worker.is_none() && ray.gpus > 0.0 {
            ray.gpus_per_worker = 1.0;
        }
        if ray.cpus < jobs as f64 {
            bail!(
                "the Ray cluster at {address} has {} CPUs, fewer than --jobs {jobs} actors need",
                ray.cpus
            );
        }
        if ray.gpus_per_worker > 0.0 && ray.gpus < ray.gpus_per_worker * jobs as f64 {
            bail!(
                "the Ray cluster at {address} has {} GPUs, fewer than --jobs {jobs} × --gpus-per-worker {} need",
                ray.gpus,
                ray.gpus_per_worker
            );
        }
        Ok(ray)
    }

    /// The actors it keeps, one per job.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Sends `request` (an "id" is added) and waits for its answer, `limit` at most.
    fn call(&self, mut request: Value, limit: Duration) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        request["id"] = json!(id);
        let (tx, rx): (Sender<Value>, Receiver<Value>) = channel();
        self.waiting.lock().unwrap().insert(id, tx);
        {
            let mut requests = self.requests.lock().unwrap();
            let requests = requests.as_mut().context("the Ray bridge is gone")?;
            writeln!(requests, "{request}").context("the Ray bridge is gone")?;
            requests.flush().context("the Ray bridge is gone")?;
        }
        let start = std::time::Instant::now();
        let answer = loop {
            if INTERRUPTED.load(Ordering::SeqCst) {
                self.waiting.lock().unwrap().remove(&id);
                return Err(Interrupted.into());
            }
            match rx.recv_timeout(POLL) {
                Ok(answer) => break answer,
                Err(RecvTimeoutError::Timeout) if start.elapsed() < limit => {}
                Err(RecvTimeoutError::Timeout) => {
                    self.waiting.lock().unwrap().remove(&id);
                    bail!("the Ray bridge did not answer in {} s", limit.as_secs());
                }
                Err(RecvTimeoutError::Disconnected) => bail!("the Ray bridge died"),
            }
        };
        if let Some(message) = answer["error"].as_str() {
            bail!("Ray: {message}");
        }
        Ok(answer)
    }

    /// Starts the actors for `original` unless they were started for it already; they start
    /// in the background (see [`Ray::ready`]), so that this can be called early, while the
    /// original's baseline runs.
    pub fn start(&self, original: &Path) -> Result<()> {
        let text = std::fs::read_to_string(original)
            .with_context(|| format!("cannot read {}", original.display()))?;
        let mut started = self.started.lock().unwrap();
        if started.as_deref() == Some(text.as_str()) {
            return Ok(());
        }
        let mut env: HashMap<String, String> = std::env::vars()
            .filter(|(k, _)| KNOBS.iter().any(|p| k.starts_with(p)))
            .collect();
        env.insert("PYTHONHASHSEED".into(), "0".into());
        self.call(
            json!({
                "op": "start",
                "original": text,
                "actors": self.jobs,
                "gpus": self.gpus_per_worker,
                "env": env,
            }),
            READY_TIMEOUT,
        )?;
        self.events.lock().unwrap().push(format!(
            "ray: {} actors on {} nodes ({} CPUs, {} GPUs; {} GPUs per actor)",
            self.jobs, self.nodes, self.cpus, self.gpus, self.gpus_per_worker
        ));
        for up in &self.up {
            *up.lock().unwrap() = false;
        }
        *started = Some(text);
        Ok(())
    }

    /// Waits until actor `worker`, started for `original`, is up; logs its pid and node.
    fn wait_up(&self, worker: usize, original: &Path) -> Result<()> {
        self.start(original)?;
        let mut up = self.up[worker].lock().unwrap();
        if *up {
            return Ok(());
        }
        let actor = self.call(json!({"op": "ready", "actor": worker}), READY_TIMEOUT)?;
        self.events.lock().unwrap().push(format!(
            "ray: actor {worker} pid {} on node {}",
            actor["pid"],
            actor["node"].as_str().unwrap_or("?")
        ));
        *up = true;
        Ok(())
    }
}

impl Backend for Ray {
    fn describe(&self) -> String {
        format!(
            "Ray actors ({} on {} nodes, {} GPUs each)",
            self.jobs, self.nodes, self.gpus_per_worker
        )
    }

    fn ready(&self, worker: usize, job: &Job) -> Result<()> {
        self.wait_up(worker, job.original)
    }

    fn run(&self, worker: usize, job: &Job) -> Result<Outcome> {
        self.wait_up(worker, job.original)?;
        let answer = self.call(
            json!({
                "op": "run",
                "actor": worker,
                "text": job.text,
                "probe": job.probe,
                "timeout": job.timeout.as_secs_f64(),
                "max_memory": job.max_memory,
            }),
            job.timeout + SLACK,
        )?;
        let answer: RunAnswer =
            serde_json::from_value(answer).context("unreadable answer from a Ray actor")?;
        if !answer.events.is_empty() {
            self.events.lock().unwrap().extend(answer.events);
        }
        let raw = answer.status;
        let status = match answer.killed.as_deref() {
            Some("timeout") => Status::TimedOut,
            Some("memory") => Status::OutOfMemory,
            _ if libc::WIFSIGNALED(raw) => Status::Signaled(libc::WTERMSIG(raw)),
            _ => Status::Exited(libc::WEXITSTATUS(raw)),
        };
        Ok(Outcome {
            status,
            stdout: keep(answer.stdout.as_bytes()),
            stderr: keep(answer.stderr.as_bytes()),
            duration: Duration::from_secs_f64(answer.duration.max(0.0)),
            peak_rss: answer.peak.max(answer.maxrss),
        })
    }

    fn stop(&self) {
        // The actors stay up for the next warm run; they go with the bridge.
    }

    fn events(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}

impl Drop for Ray {
    fn drop(&mut self) {
        // Closing stdin lets the bridge leave the cluster cleanly (Ray kills its actors, and
        // their children die with them); a bridge that does not go in time is killed.
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        drop(
            self.requests
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        for _ in 0..250 {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(POLL);
        }
        let _ = child.start_kill();
        let _ = child.inner_mut().wait();
    }
}
