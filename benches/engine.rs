//! Engine costs that involve no Python process: parsing, candidate generation, and the
//! reduction loop's own overhead against an in-process oracle.

use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use scrub_reducers::{Interrupted, Options, Oracle, PASSES, PythonVersion, Script, reduce};

fn corpus_scripts() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    scrub::corpus::load(&dir)
        .expect("corpus")
        .iter()
        .map(|c| std::fs::read_to_string(c.script()).expect("repro.py"))
        .collect()
}

fn parse(c: &mut Criterion) {
    let scripts = corpus_scripts();
    let bytes: usize = scripts.iter().map(String::len).sum();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("corpus", |b| {
        b.iter(|| {
            scripts
                .iter()
                .filter(|s| Script::parse(s.as_str(), PythonVersion::PY311).is_some())
                .count()
        })
    });
    group.finish();
}

fn candidates(c: &mut Criterion) {
    let parsed: Vec<Script> = corpus_scripts()
        .into_iter()
        .filter_map(|s| Script::parse(s, PythonVersion::PY311))
        .collect();
    let mut group = c.benchmark_group("candidates");
    for pass in PASSES {
        let count: usize = parsed.iter().map(|s| pass.candidates(s).len()).sum();
        group.throughput(Throughput::Elements(count as u64));
        group.bench_function(pass.info().name, |b| {
            b.iter(|| {
                parsed
                    .iter()
                    .map(|s| pass.candidates(s).len())
                    .sum::<usize>()
            })
        });
    }
    group.finish();
}

/// Interesting when the text still holds every needle: the loop's cost without processes.
struct Needles(&'static [&'static str]);

impl Oracle for Needles {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        Ok(texts
            .iter()
            .map(|t| self.0.iter().all(|n| t.contains(n)))
            .collect())
    }
}

/// Needles spread over the file, so that the loop must work through every level.
const NEEDLES: &[&str] = &[
    "y = x + 3\n",
    "y = x + 17\n",
    "y = y - 1",
    "step_1(i)",
    "calibration",
];

/// A 300-line script: many small functions, one of which holds the needle.
fn three_hundred_lines() -> String {
    let mut text = String::from("import os\nimport sys\n\n");
    for i in 0..49 {
        text.push_str(&format!(
            "def step_{i}(x):\n    y = x + {i}\n    if y > 10:\n        y = y - 1\n    return y\n\n"
        ));
    }
    text.push_str("def target():\n    return {}['calibration']\n\nfor i in range(3):\n    step_1(i)\ntarget()\n");
    text
}

fn reduction_loop(c: &mut Criterion) {
    let text = three_hundred_lines();
    let options = Options {
        target_lines: None,
        ..Options::default()
    };
    let calls: usize = reduce(&text, PASSES, &mut Needles(NEEDLES), &options)
        .expect("parses")
        .passes
        .iter()
        .map(|p| p.candidates)
        .sum();
    let mut group = c.benchmark_group("loop");
    group.throughput(Throughput::Elements(calls as u64));
    group.sample_size(10);
    group.bench_function("300_lines_fake_oracle", |b| {
        b.iter(|| reduce(&text, PASSES, &mut Needles(NEEDLES), &options).expect("parses"))
    });
    group.finish();
}

criterion_group!(benches, parse, candidates, reduction_loop);
criterion_main!(benches);
