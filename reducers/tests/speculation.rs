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
