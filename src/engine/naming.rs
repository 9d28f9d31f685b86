//! What names a failure: the lines of an exception's message that tell one bug from another,
//! with what varies with sizes, runs and machines abstracted.
//!
//! A rule about the shape of messages, for any Python library. A message's first line is
//! often not the failure: a wrapper announces an inner error (`The following operation failed
//! in the TorchScript interpreter.`, `backend='inductor' raised:`), a header stands over its
//! detail lines (`Constraints violated (dz)!`), or the first line is empty. What names such a
//! failure is the inner error's `Class: message` line and the detail lines under the header;
//! traceback frames, code excerpts and `<--- HERE` markers inside a message are not part of it.

use crate::engine::exception::{header_class, looks_like_exception};

/// The lines of `message` (a header's text and every line after it) that name the failure
/// besides its first line, abstracted: every inner error line (`Class: message` at the start
/// of a line), the first error of a compiler's output (`FILE:LINE:COL: error: …`), and the
/// detail lines right under the first line: the whole block when the
/// first line is a header (empty, ending in `:`, or announcing with `!`), else the lines
/// indented under it. Lines of values (more digits than letters) name nothing.
pub fn naming_lines(message: &str) -> Vec<String> {
    let first = message.lines().next().unwrap_or("").trim();
    let lines = prose(message);
    let header = first.is_empty() || first.ends_with(':') || first.contains('!');
    // The block right under the first line: all of it under a header, else the lines
    // indented under the first (`  Explanation: …`).
    let detail = lines
        .iter()
        .take_while(|l| !l.text.is_empty())
        .take_while(|l| header || l.indent > 0);
    let inner = lines
        .iter()
        .filter(|l| l.indent == 0 && is_error_line(&l.text));
    // A compiler's output wrapped in the message: its first error names it, the rest follow.
    let diagnostic = lines.iter().find(|l| is_diagnostic(&l.text));
    let mut out: Vec<String> = Vec::new();
    for line in detail
        .chain(inner)
        .chain(diagnostic)
        .filter(|l| names_something(&l.text))
    {
        let line = abstracted(&line.text);
        if !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The first line of `message`, abstracted; where it speaks of shapes or sizes, each number
/// of a shape stays a `#` of its own: a tensor of another rank (`(1, j1, 1)` where the
/// original showed `(2, 4, j1, 16)`) is another bug, most often the caller's mistake.
pub fn first_line(message: &str) -> String {
    let line = message.lines().next().unwrap_or("");
    let lower = line.to_ascii_lowercase();
    match lower.contains("shape") || lower.contains("size") {
        true => ranked(line),
        false => abstracted(line),
    }
}

/// `line` abstracted as [`abstracted`] does, but for the runs of numbers separated by commas,
/// which keep their count: `(2, 4, j1, 16)` → `(#, #, j, #)`.
fn ranked(line: &str) -> String {
    collapse(&abstracted_words(line), &["x", " x ", "*", " * "])
}

/// Every prose line of `message` after its first, abstracted: what a candidate's message
/// shows, for the naming lines of the original to be looked up in.
pub fn shown_lines(message: &str) -> Vec<String> {
    prose(message)
        .into_iter()
        .filter(|l| !l.text.is_empty())
        .map(|l| abstracted(&l.text))
        .collect()
}

/// A line of a message that is neither a frame, a code excerpt nor a marker.
struct Prose {
    indent: usize,
    text: String,
}

/// The lines of `message` after its first, without tracebacks (a `Traceback … (most recent
/// call last):` line and what is indented under it), frames (`File "…", line N`) with their
/// code excerpts, code excerpts that a line ending in `:` introduces and a `<--- HERE` or
/// `~~~^^^` marker closes (TorchScript quotes the source so; the line of each excerpt after
/// the first says how the code got there, and goes too), and the markers. Blank lines
/// stay, empty: they end a block (and a code excerpt).
fn prose(message: &str) -> Vec<Prose> {
    let mut out = Vec::new();
    // Lines indented deeper than this belong to the frame or traceback above them.
    let mut under: Option<usize> = None;
    // Where a code excerpt would start: after the block's first line ending in `:` since the
    // last marker.
    let mut excerpt: Option<usize> = None;
    let mut excerpts = 0;
    for line in message.lines().skip(1) {
        let text = line.trim();
        let indent = line.len() - line.trim_start().len();
        if let Some(at) = under {
            if indent > at && !text.is_empty() {
                continue;
            }
            under = None;
        }
        let traceback = text.contains("Traceback") && text.ends_with("(most recent call last):");
        if traceback || text.starts_with("File \"") {
            under = Some(indent);
            continue;
        }
        let marker = text.contains("<--- HERE")
            || (!text.is_empty() && text.chars().all(|c| matches!(c, '~' | '^' | ' ')));
        if marker {
            if let Some(at) = excerpt.take() {
                // The first excerpt's line names the failure; a later one's says how the
                // code got there (`… is being compiled since it was called from …:`).
                out.truncate(if excerpts == 0 { at } else { at - 1 });
                excerpts += 1;
            }
            continue;
        }
        if text.is_empty() {
            excerpt = None;
        }
        out.push(Prose {
            indent,
            text: text.to_string(),
        });
        if excerpt.is_none() && text.ends_with(':') {
            excerpt = Some(out.len());
        }
    }
    out
}

/// `RuntimeError: …`, `torch._dynamo.exc.Unsupported: …`: a line that starts with an
/// exception class and a colon.
fn is_error_line(text: &str) -> bool {
    text.contains(':') && header_class(text).is_some_and(looks_like_exception)
}

/// `FILE:LINE:COL: error: message`, the shape of a compiler's diagnostic (gcc, clang, nvcc).
fn is_diagnostic(text: &str) -> bool {
    let Some((place, _)) = text
        .split_once(": error: ")
        .or(text.split_once(": fatal error: "))
    else {
        return false;
    };
    let mut parts = place.rsplit(':');
    let numbers = parts
        .by_ref()
        .take_while(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        .count();
    numbers >= 1 && !place.contains(' ')
}

/// Whether a line has words in it, not only values (`tensor([[0.1234, -0.5678],`).
fn names_something(line: &str) -> bool {
    let letters = line.chars().filter(|c| c.is_alphabetic()).count();
    let digits = line.chars().filter(char::is_ascii_digit).count();
    letters >= 3 && letters > digits
}

/// `line`, trimmed, with what varies abstracted: numbers and hex addresses become `#` (a run
/// of them, `4x3`, `[2, 8, 8]` or `(1,)`, one `#`), paths `<path>`, and the counter at the end of a
/// generated name is dropped (`addmm_2` → `addmm`, `buf0` → `buf`, the symbolic size `s0` →
/// `s`). Quoted names stay: another operator or backend is another bug.
pub fn abstracted(line: &str) -> String {
    collapse(
        &abstracted_words(line),
        &[", ", ",", "x", " x ", "*", " * "],
    )
}

/// `line` with each word abstracted, runs of numbers left as they are.
fn abstracted_words(line: &str) -> String {
    let words: Vec<String> = line
        .split_whitespace()
        .map(|word| {
            let bare = word.trim_matches(|c: char| "'\"`()[],:;".contains(c));
            let path = (bare.contains('/') || bare.contains('\\'))
                && bare.chars().any(|c| c.is_alphabetic());
            if path {
                word.replace(bare, "<path>")
            } else {
                abstract_word(word)
            }
        })
        .collect();
    // TorchScript names a class it compiles again in one process `___torch_mangle_N.C`: a
    // warm worker's later candidates, never a fresh process.
    words.join(" ").replace("___torch_mangle.", "")
}

fn abstract_word(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let ident: String = chars[start..i].iter().collect();
            out.push_str(ungenerated(&ident));
        } else if c.is_ascii_digit() {
            // A sign belongs to the number: values change sign when their inputs shrink.
            if out.ends_with('-')
                && !out[..out.len() - 1]
                    .ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ')')
            {
                out.pop();
            }
            i = end_of_number(&chars, i);
            // A shape written `4x3x8` is one value.
            while chars.get(i) == Some(&'x') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                i = end_of_number(&chars, i + 1);
            }
            out.push('#');
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where the number that starts at `at` ends: hex (`0x7f…`), or digits with a decimal part
/// and an exponent.
fn end_of_number(chars: &[char], at: usize) -> usize {
    let mut i = at;
    if chars[i] == '0' && chars.get(i + 1).is_some_and(|c| *c == 'x' || *c == 'X') {
        i += 2;
        while i < chars.len() && chars[i].is_ascii_hexdigit() {
            i += 1;
        }
        return i;
    }
    let digits = |i: &mut usize| {
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
    };
    digits(&mut i);
    // `0.5`, and `1.` as a tensor prints it (not `1.x`: an attribute or a version).
    let next_is_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
    let next_is_name = chars
        .get(i + 1)
        .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.');
    if chars.get(i) == Some(&'.') && (next_is_digit || !next_is_name) {
        i += 1;
        digits(&mut i);
    }
    if chars.get(i).is_some_and(|c| *c == 'e' || *c == 'E') {
        let sign = usize::from(chars.get(i + 1).is_some_and(|c| *c == '-' || *c == '+'));
        if chars.get(i + 1 + sign).is_some_and(char::is_ascii_digit) {
            i += 1 + sign;
            digits(&mut i);
        }
    }
    i
}

/// A generated name without its counter: digits after an underscore (`addmm_2`, `arg0_1`), or
/// after a prefix of three letters or fewer (`buf0`, `s0`, `tmp5`) unless they are a bit width
/// (`int8`, `fp16`). Other names stay whole (`float32`, `conv2d`, `IndexPutBackward0`).
fn ungenerated(ident: &str) -> &str {
    let mut name = ident;
    loop {
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if stem.len() == name.len() || stem.is_empty() {
            return name;
        }
        let counter = &name[stem.len()..];
        if let Some(base) = stem.strip_suffix('_') {
            if base.is_empty() {
                return name;
            }
            name = base;
        } else if stem.len() <= 3 && !is_bit_width(stem, counter) {
            return stem;
        } else {
            return name;
        }
    }
}

/// Whether `stem` and `counter` spell a type's bit width (`int8`, `fp16`, `bf16`, `tf32`),
/// not a counter that happens to be one (`j16`, a nested tensor's ragged size, as a warm
/// worker's later candidates number it, `buf8`).
fn is_bit_width(stem: &str, counter: &str) -> bool {
    const TYPES: [&str; 9] = ["int", "fp", "bf", "tf", "f", "i", "u", "c", "q"];
    const WIDTHS: [&str; 5] = ["8", "16", "32", "64", "128"];
    TYPES.contains(&stem.to_ascii_lowercase().as_str()) && WIDTHS.contains(&counter)
}

/// One `#` for a run of numbers joined by one of `separators`: `#x#`, `#, #, #`, `# * #`.
fn collapse(line: &str, separators: &[&str]) -> String {
    let mut out = line.to_string();
    for sep in separators {
        let twice = format!("#{sep}#");
        while out.contains(&twice) {
            out = out.replace(&twice, "#");
        }
    }
    out.replace("#,)", "#)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_line_about_shapes_keeps_their_rank() {
        let original = first_line(
            "matmul(): not supported between inputs of shapes (2, 4, j1, 16) and torch.Size([2, 4, 16, j2])",
        );
        assert_eq!(
            original,
            "matmul(): not supported between inputs of shapes (#, #, j, #) and torch.Size([#, #, #, j])"
        );
        assert_eq!(
            original,
            first_line(
                "matmul(): not supported between inputs of shapes (1, 1, j7, 1) and torch.Size([2, 1, 1, j8])"
            )
        );
        assert_ne!(
            original,
            first_line(
                "matmul(): not supported between inputs of shapes (1, j1, 1) and torch.Size([2, 1, 1, j2])"
            )
        );
        // Elsewhere a run of values is one: a list that shrinks with its data.
        assert_eq!(
            first_line("Lists differ: [1, 2, 3] != [1]"),
            first_line("Lists differ: [4] != [5, 6]")
        );
    }

    #[test]
    fn a_counter_is_no_bit_width_unless_its_stem_names_a_type() {
        // A warm worker numbers the ragged sizes of its later candidates' nested tensors on.
        assert_eq!(
            abstracted("inputs of shapes (1, j16, 1) and (1, j17, 1)"),
            abstracted("inputs of shapes (1, j1, 1) and (1, j2, 1)"),
        );
        assert_eq!(abstracted("buf8"), abstracted("buf0"));
        assert_ne!(abstracted("expected int8"), abstracted("expected int16"));
        assert_ne!(abstracted("got fp16"), abstracted("got bf16"));
    }

    #[test]
    fn a_class_torchscript_compiled_again_is_named_as_the_first_time() {
        assert_eq!(
            abstracted(
                "'__torch__.torch.nn.modules.container.___torch_mangle_3.ModuleList (of Python compilation unit at: 0x55)' object is not iterable:"
            ),
            abstracted(
                "'__torch__.torch.nn.modules.container.ModuleList (of Python compilation unit at: 0x56)' object is not iterable:"
            ),
        );
    }

    #[test]
    fn numbers_paths_addresses_and_generated_names_are_abstracted() {
        assert_eq!(
            abstracted("mat1 and mat2 shapes cannot be multiplied (4x3 and 5x8)"),
            "mat and mat shapes cannot be multiplied (# and #)"
        );
        assert_eq!(
            abstracted("my backend exploded on addmm_2 and buf0 at 0x7f3a2c with size 128"),
            "my backend exploded on addmm and buf at # with size #"
        );
        assert_eq!(
            abstracted("No such file or directory: '/tmp/abc123/config.json'"),
            "No such file or directory: '<path>'"
        );
        assert_eq!(abstracted("Eq(s0, 4) for [2, 8, 8]"), "Eq(s, #) for [#]");
        assert_eq!(
            abstracted("got tensor([1., -0.5000]) and -3 at size 3."),
            "got tensor([#]) and # at size #"
        );
        assert_eq!(abstracted("x-1 and v1.2.x"), "x-# and v.#.x");
    }

    #[test]
    fn the_names_a_message_quotes_stay() {
        assert_eq!(
            abstracted("expected scalar type float32 but found int64 in aten::conv2d"),
            "expected scalar type float32 but found int64 in aten::conv2d"
        );
        assert_ne!(
            abstracted("output 0 of IndexPutBackward0, is at version 1"),
            abstracted("output 0 of CopySlices, is at version 1")
        );
    }

    #[test]
    fn an_interpreter_traceback_is_named_by_its_inner_error() {
        let message = "The following operation failed in the TorchScript interpreter.\nTraceback of TorchScript (most recent call last):\n  File \"/t/repro.py\", line 7, in forward\n    def forward(self, x):\n        return self.lin(x) * 2\n               ~~~~~~~~ <--- HERE\nRuntimeError: Inference tensors cannot be saved for backward.\n";
        assert_eq!(
            naming_lines(message),
            ["RuntimeError: Inference tensors cannot be saved for backward."]
        );
    }

    #[test]
    fn an_empty_first_line_is_named_by_the_detail_under_it() {
        let message = "\nModule 'M' has no attribute 'blocks' (failed to convert Python type: 'list'):\n  File \"/t/repro.py\", line 7\n    def forward(self, x):\n        for b in self.blocks[0]:\n                 ~~~~~~~~~~~ <--- HERE\n            x = b(x)\n\n";
        assert_eq!(
            naming_lines(message),
            ["Module 'M' has no attribute 'blocks' (failed to convert Python type: 'list'):"]
        );
    }

    #[test]
    fn source_quoted_without_a_frame_line_is_no_part_of_the_name() {
        let message = "\n'Tensor (inferred)' object has no attribute or method 'offsets'.:\ndef segment_boundaries(x):\n    # returns the cumulative offsets\n    return x.offsets()\n           ~~~~~~~~~ <--- HERE\n'segment_boundaries' is being compiled since it was called from 'pool':\ndef pool(x):\n    return segment_boundaries(x)\n           ~~~~~~~~~~~~~~~~~~ <--- HERE\n";
        assert_eq!(
            naming_lines(message),
            ["'Tensor (inferred)' object has no attribute or method 'offsets'.:"]
        );
    }

    #[test]
    fn a_header_is_named_by_its_detail_lines_and_not_by_its_hints() {
        let message = "Constraints violated (dz)! For more information, run with TORCH_LOGS=\"+dynamic\".\n  - Not all values of dz = L['x'].size()[0] in the specified range dz <= 1024 satisfy the generated guard 5 <= L['x'].size()[0] and L['x'].size()[0] <= 1024\nSuggested fixes:\n  dz = Dim('dz', min=5, max=1024)\n\nThe error above occurred when calling torch.export.export.\n";
        assert_eq!(
            naming_lines(message),
            [
                "- Not all values of dz = L['x'].size()[#] in the specified range dz <= # satisfy the generated guard # <= L['x'].size()[#] and L['x'].size()[#] <= #",
                "Suggested fixes:",
                "dz = Dim('dz', min=#, max=#)"
            ]
        );
    }

    #[test]
    fn a_wrapper_that_says_raised_is_named_by_the_error_it_wraps() {
        let message = "backend='inductor' raised:\nRuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [4]], which is output 0 of IndexPutBackward0\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n";
        assert_eq!(
            naming_lines(message),
            [
                "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor [#]], which is output # of IndexPutBackward0"
            ]
        );
    }

    #[test]
    fn lines_indented_under_a_plain_first_line_are_its_detail() {
        let message = "RuntimeError when making fake tensor call\n  Explanation: Dynamo failed to run FX node with fake tensors: got RuntimeError(\"output with shape torch.Size([1, 8, 8]) doesn't match the broadcast shape (1, 1, 8, 8)\")\n  Hint: Your code may result in an error when running in eager.\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n";
        assert_eq!(
            naming_lines(message),
            [
                "Explanation: Dynamo failed to run FX node with fake tensors: got RuntimeError(\"output with shape torch.Size([#]) doesn't match the broadcast shape (#)\")",
                "Hint: Your code may result in an error when running in eager."
            ]
        );
    }

    #[test]
    fn a_worker_s_original_traceback_is_named_by_its_inner_error() {
        let message = "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n  File \"/v/torch/utils/data/_utils/worker.py\", line 349, in _worker_loop\n    data = fetcher.fetch(index)\nKeyError: 'Dog'\n";
        assert_eq!(naming_lines(message), ["KeyError: 'Dog'"]);
    }

    #[test]
    fn a_wrapped_compiler_output_is_named_by_its_first_error() {
        let message = "CppCompileError: C++ compile error\n\nCommand:\ng++ /tmp/x/k.cpp -O3\n\nOutput:\n/tmp/torchinductor_root/nl/cnl.main.cpp: In function 'void kernel()':\n/tmp/torchinductor_root/nl/cnl.main.cpp:93:26: error: conflicting declaration 'auto at_Half_tmp_acc1_vec'\n   93 |   auto at_Half_tmp_acc1_vec = x;\n/tmp/torchinductor_root/nl/cnl.main.cpp:99:1: error: expected ';' before '}' token\n";
        assert_eq!(
            naming_lines(message),
            ["<path>: error: conflicting declaration 'auto at_Half_tmp_acc1_vec'"]
        );
    }

    #[test]
    fn a_plain_message_and_its_hints_name_nothing_more() {
        assert!(naming_lines("Data-dependent branching\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n").is_empty());
        assert!(
            naming_lines("Tensor-likes are not close!\n\nMismatched elements: 1 / 4 (25.0%)\n")
                .is_empty()
        );
        assert!(naming_lines("checksum mismatch for shard 'eu-west-3'\n").is_empty());
    }

    #[test]
    fn lines_of_values_under_a_header_name_nothing() {
        let message = "outputs differ:\ntensor([[0.1234, -0.5678],\n        [1.0000, 2.0000]])\n";
        assert!(naming_lines(message).is_empty());
    }
}
