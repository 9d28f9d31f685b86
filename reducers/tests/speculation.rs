//! Speculative windows: judging later windows ahead changes how many candidates run at once,
//! never the result.

use scrub_reducers::{Interrupted, Options, Oracle, PASSES, reduce};

/// Interesting when the text contains every needle; remembers the size of every batch.
struct Needles(&'static [&'static str], Vec<usize>);

impl Oracle for Needles {
    fn judge(&mut self, texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        self.1.push(texts.len());
        Ok(texts
            .iter()
            .map(|t| self.0.iter().all(|n| t.contains(n)))
            .collect())
    }
}

fn bloated() -> String {
    let mut text = String::from("import os\nimport sys\n\n");
    for i in 0..40 {
        text.push_str(&format!(
            "def helper_{i}(x):\n    y = x + {i}\n    return y * 2\n\n"
        ));
    }
    text.push_str(
        "cfg = {'a': 1}\nfor k in range(3):\n    print(helper_3(k))\ncfg['calibration']\n",
    );
    text
}

#[test]
fn every_number_in_flight_gives_the_same_script_and_the_same_pass_figures() {
    let text = bloated();
    let run = |in_flight: usize| {
        let options = Options {
            target_lines: None,
            in_flight,
            ..Options::default()
        };
        let mut oracle = Needles(&["calibration", "helper_3("], Vec::new());
        let out = reduce(&text, PASSES, &mut oracle, &options).unwrap();
        (out, oracle.1)
    };
    let (alone, batches) = run(0);
    assert!(batches.iter().all(|&n| n <= 8), "{batches:?}");
    assert_eq!(alone.speculative_wasted, 0);
    for in_flight in [2, 8, 16, 64] {
        let (ahead, batches) = run(in_flight);
        assert_eq!(ahead.text, alone.text, "in_flight {in_flight}");
        assert_eq!(ahead.passes, alone.passes, "in_flight {in_flight}");
        assert_eq!(ahead.rounds, alone.rounds, "in_flight {in_flight}");
        assert!(
            batches.iter().all(|&n| n <= in_flight.max(8)),
            "in_flight {in_flight}: {batches:?}"
        );
        if in_flight > 8 {
            assert!(batches.iter().any(|&n| n > 8), "in_flight {in_flight}");
            assert!(ahead.speculative_wasted > 0, "in_flight {in_flight}");
        }
    }
}

/// Like `Needles`, but judges one text at a time, started texts ending in a scrambled order;
/// remembers how many were being judged at each start.
struct Scrambled {
    needles: &'static [&'static str],
    started: Vec<String>,
    seed: u64,
    at_start: Vec<usize>,
}

impl Oracle for Scrambled {
    fn judge(&mut self, _texts: &[String]) -> Result<Vec<bool>, Interrupted> {
        unreachable!("the loop starts texts on an oracle that can")
    }

    fn start(&mut self, text: &str) -> bool {
        self.started.push(text.to_string());
        self.at_start.push(self.started.len());
        true
    }

    fn ended(&mut self) -> Result<(String, bool), Interrupted> {
        self.seed = self.seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let text = self
            .started
            .swap_remove((self.seed >> 33) as usize % self.started.len());
        let verdict = self.needles.iter().all(|n| text.contains(n));
        Ok((text, verdict))
    }
}

#[test]
fn verdicts_that_end_in_any_order_give_the_same_script_at_every_number_in_flight() {
    let text = bloated();
    let needles: &[&str] = &["calibration", "helper_3("];
    let options = |in_flight| Options {
        target_lines: None,
        in_flight,
        ..Options::default()
    };
    let alone = reduce(
        &text,
        PASSES,
        &mut Needles(needles, Vec::new()),
        &options(0),
    )
    .unwrap();
    for in_flight in [1, 2, 8, 16, 64] {
        let mut oracle = Scrambled {
            needles,
            started: Vec::new(),
            seed: in_flight as u64,
            at_start: Vec::new(),
        };
        let out = reduce(&text, PASSES, &mut oracle, &options(in_flight)).unwrap();
        assert_eq!(out.text, alone.text, "in_flight {in_flight}");
        assert_eq!(out.passes, alone.passes, "in_flight {in_flight}");
        assert_eq!(out.rounds, alone.rounds, "in_flight {in_flight}");
        assert!(oracle.started.is_empty(), "every started text ended");
        // A window is handed out whole; beyond it, no more than `in_flight` are started, and
        // candidates judged for a script that a win replaced may still be ending.
        let most = oracle.at_start.iter().max().copied().unwrap_or(0);
        assert!(
            most <= 2 * in_flight.max(8) + 1,
            "in_flight {in_flight}: {most}"
        );
        if in_flight > 8 {
            assert!(most >= in_flight, "in_flight {in_flight}: {most}");
            assert!(out.speculative_wasted > 0, "in_flight {in_flight}");
        }
    }
}
