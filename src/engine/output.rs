//! What an outcome keeps of a run's output stream: everything when it is short; otherwise
//! what judging needs, whatever the size (the last traceback from its first line, with the
//! exception's header and the start and end of its message), plus a head for the logs.
//!
//! Inductor puts a whole compiler log into its exception: a message of hundreds of KiB
//! between the `Traceback` line and the end. A plain tail of the stream loses the traceback
//! and with it the exception; this keeps both, and cuts only inside the message's middle.

use std::fs;
use std::io::{Read, Seek, SeekFrom};

use anyhow::Result;

/// A stream up to this size is kept whole.
pub const KEEP_BYTES: usize = 64 * 1024;
/// The start of a longer stream kept for the logs.
const HEAD_BYTES: usize = 8 * 1024;
/// The start of a long exception message that is kept.
const MESSAGE_HEAD_BYTES: usize = 16 * 1024;
/// The end of a long stream (or message) that is kept: where hints and the probe's report are.
const END_BYTES: usize = 32 * 1024;
/// A stream is read up to its last this many bytes: a script that prints without end
/// is judged on the end of what it printed.
const READ_BYTES: u64 = 64 << 20;

const TRACEBACK: &[u8] = b"Traceback (most recent call last):";

/// The kept text of the stream in `file`, read from its start.
pub fn keep_file(file: &mut fs::File) -> Result<String> {
    let len = file.seek(SeekFrom::End(0))?;
    file.seek(SeekFrom::Start(len.saturating_sub(READ_BYTES)))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(keep(&bytes))
}

/// The kept text of `bytes` (see the module's doc). Every cut is marked by a line
/// `[scrub: N bytes left out …]`, and falls at a line's end where one is near.
pub fn keep(bytes: &[u8]) -> String {
    if bytes.len() <= KEEP_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut kept = Vec::with_capacity(2 * KEEP_BYTES);
    let Some(tb) = last_traceback(bytes) else {
        // No traceback: the head and the end of the stream.
        let head = cut_before(bytes, HEAD_BYTES, LINE_SLACK);
        let tail = cut_before(bytes, bytes.len() - END_BYTES, LAST_LINE_SLACK).max(head);
        kept.extend_from_slice(&bytes[..head]);
        left_out(&mut kept, tail - head, "");
        kept.extend_from_slice(&bytes[tail..]);
        return String::from_utf8_lossy(&kept).into_owned();
    };
    let head = cut_before(bytes, HEAD_BYTES.min(tb), LINE_SLACK);
    kept.extend_from_slice(&bytes[..head]);
    left_out(&mut kept, tb - head, "");
    let rest = &bytes[tb..];
    if rest.len() <= KEEP_BYTES {
        kept.extend_from_slice(rest);
    } else {
        // The frames and the message's start; then the message's end, from a line's start.
        let cut = cut_before(rest, header_start(rest) + MESSAGE_HEAD_BYTES, LINE_SLACK);
        let tail = cut_before(rest, rest.len() - END_BYTES, LAST_LINE_SLACK).max(cut);
        kept.extend_from_slice(&rest[..cut]);
        left_out(&mut kept, tail - cut, " of the middle of this message");
        kept.extend_from_slice(&rest[tail..]);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// How far back a cut looks for a line's end.
const LINE_SLACK: usize = 4 * 1024;
/// How far back the kept end of a stream reaches to start at a line's start, so that a long
/// last line (the probe's report) is kept whole.
const LAST_LINE_SLACK: usize = 256 * 1024;

fn left_out(kept: &mut Vec<u8>, bytes: usize, what: &str) {
    if bytes > 0 {
        if !kept.is_empty() && !kept.ends_with(b"\n") {
            kept.push(b'\n');
        }
        kept.extend_from_slice(format!("[scrub: {bytes} bytes left out{what}]\n").as_bytes());
    }
}

/// Where the line of the last `Traceback (most recent call last):` starts.
fn last_traceback(bytes: &[u8]) -> Option<usize> {
    let at = bytes
        .windows(TRACEBACK.len())
        .rposition(|w| w == TRACEBACK)?;
    Some(cut_before(bytes, at, at))
}

/// Where the exception's header starts in a traceback: the first line after the
/// `Traceback` line that is not indented and not empty.
fn header_start(traceback: &[u8]) -> usize {
    let mut start = 0;
    for (i, line) in traceback.split_inclusive(|&b| b == b'\n').enumerate() {
        if i > 0 && !line.starts_with(b" ") && !line.starts_with(b"\t") && line != b"\n" {
            return start;
        }
        start += line.len();
    }
    start
}

/// A cut at or before `at`: just after the last newline of the `slack` bytes before `at`,
/// else at `at` itself.
fn cut_before(bytes: &[u8], at: usize, slack: usize) -> usize {
    let at = at.min(bytes.len());
    if at == bytes.len() || at == 0 || bytes[at - 1] == b'\n' {
        return at;
    }
    let from = at.saturating_sub(slack);
    bytes[from..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(at, |nl| from + nl + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::exception::final_exception;

    fn noise(lines: usize) -> String {
        (0..lines)
            .map(|i| format!("warning: unused variable 'tmp{i}' [-Wunused-variable]\n"))
            .collect()
    }

    #[test]
    fn a_short_stream_is_kept_whole() {
        let text = "Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'k'\n";
        assert_eq!(keep(text.as_bytes()), text);
    }

    #[test]
    fn a_huge_message_keeps_its_traceback_header_start_and_end() {
        let stderr = format!(
            "{}Traceback (most recent call last):\n  File \"repro.py\", line 9, in <module>\n    f(x)\n\
             torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n\nOutput:\n{}\
             error: 'tmp0' was not declared in this scope\n\nSet TORCHDYNAMO_VERBOSE=1 for more\n",
            noise(2000),
            noise(20_000),
        );
        assert!(stderr.len() > 1_000_000);
        let kept = keep(stderr.as_bytes());
        assert!(kept.len() < 3 * KEEP_BYTES, "{}", kept.len());
        let e = final_exception(&kept).expect("the exception survives");
        assert_eq!(e.class, "torch._inductor.exc.InductorError");
        assert!(e.message.starts_with("CppCompileError: C++ compile error"));
        assert!(e.message.contains("of the middle of this message]"));
        assert!(e.message.contains("'tmp0' was not declared"));
        assert!(e.message.contains("TORCHDYNAMO_VERBOSE"));
        assert!(kept.starts_with("warning: unused variable 'tmp0'"));
    }

    #[test]
    fn the_last_of_chained_tracebacks_is_the_one_kept() {
        let stderr = format!(
            "Traceback (most recent call last):\n  File \"x.py\", line 2\nKeyError: 'k'\n{}\n\
             Traceback (most recent call last):\n  File \"x.py\", line 4\nValueError: bad\n",
            noise(3000)
        );
        let e = final_exception(&keep(stderr.as_bytes())).unwrap();
        assert_eq!(e.class, "ValueError");
    }

    #[test]
    fn a_stream_without_traceback_keeps_head_and_tail() {
        let out = format!("start\n{}end\n", noise(5000));
        let kept = keep(out.as_bytes());
        assert!(kept.starts_with("start\n"));
        assert!(kept.ends_with("end\n"));
        assert!(kept.contains("bytes left out]"));
        assert!(kept.len() <= HEAD_BYTES + END_BYTES + 100);
    }
}
