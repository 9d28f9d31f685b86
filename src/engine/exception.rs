//! Find the final exception in a Python process's stderr.

/// The exception Python printed last: `torch._dynamo.exc.Unsupported: Data-dependent …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinalException {
    /// The class as printed: dotted for classes outside `builtins` and `__main__`.
    pub class: String,
    /// The header line, class included.
    pub header: String,
    /// The header's text after the class, and every line after the header to the end of
    /// stderr (hints printed after it belong to it).
    pub message: String,
}

const TRACEBACK: &str = "Traceback (most recent call last):";
const DIRECT_CAUSE: &str = "The above exception was the direct cause of the following exception:";

/// The exception header that follows the last traceback in `stderr`; for a script that does
/// not compile (no traceback is printed), the last line that looks like an exception header.
pub fn final_exception(stderr: &str) -> Option<FinalException> {
    let lines: Vec<&str> = stderr.lines().collect();
    let header_at = match lines.iter().rposition(|l| l.trim_start() == TRACEBACK) {
        Some(tb) => {
            // Frames and source lines are indented; the header is the first line that is not.
            (tb + 1..lines.len())
                .find(|&i| !lines[i].starts_with([' ', '\t']) && !lines[i].is_empty())?
        }
        None => lines
            .iter()
            .rposition(|l| header_class(l).is_some_and(looks_like_exception))?,
    };
    let header = lines[header_at];
    let printed = header_class(header)?;
    // Python 3.9 and 3.10 print classes defined in the script as `__main__.Name`.
    let class = printed
        .strip_prefix("__main__.")
        .unwrap_or(printed)
        .to_string();
    let mut message = header[printed.len()..]
        .trim_start_matches(':')
        .trim_start()
        .to_string();
    for line in &lines[header_at + 1..] {
        message.push('\n');
        message.push_str(line);
    }
    Some(FinalException {
        class,
        header: header.to_string(),
        message,
    })
}

/// The class at the start of a header line: a dotted identifier followed by `:` or the end.
pub(crate) fn header_class(line: &str) -> Option<&str> {
    let end = line.find(':').unwrap_or(line.len());
    let class = &line[..end];
    let ok = !class.is_empty()
        && class.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_alphanumeric() || c == '_')
        });
    ok.then_some(class)
}

pub(crate) fn looks_like_exception(class: &str) -> bool {
    let last = class.rsplit('.').next().unwrap_or(class);
    ["Error", "Exception", "Exit", "Interrupt", "Warning"]
        .iter()
        .any(|s| last.ends_with(s))
}

/// The exception the final one was raised `from` (`raise … from e`: "The above exception was
/// the direct cause of the following exception"), when there is one. An exception raised
/// while handling another without `from` has no cause here: that one is its context.
pub fn cause(stderr: &str) -> Option<FinalException> {
    let lines: Vec<&str> = stderr.lines().collect();
    let last = lines.iter().rposition(|l| l.trim_start() == TRACEBACK)?;
    let said = lines[..last].iter().rposition(|l| !l.trim().is_empty())?;
    if lines[said].trim() != DIRECT_CAUSE {
        return None;
    }
    final_exception(&lines[..said].join("\n"))
}

/// The library functions that call back into the script on the failing stack: for each run
/// of frames outside the script between two of the script's frames, where the inner one is a
/// function the script passed on (not one of `methods`, which an object's class dispatches
/// to, as a module's call does its `forward`), the first frame of the run, as `FILE:FUNCTION`
/// (`torch/_functorch/apis.py:wrapped` for `vmap(f)(x)`). Every traceback printed counts: a
/// pool's worker prints its own.
pub fn callbacks(stderr: &str, methods: &[String]) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let Some(script) = script_file(&lines) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for at in traceback_starts(&lines) {
        let (frames, _) = traceback_at(&lines, at);
        let mut entry: Option<usize> = None;
        for (i, (file, function)) in frames.iter().enumerate() {
            if *file != script {
                if i > 0 && frames[i - 1].0 == script {
                    entry = Some(i);
                }
                continue;
            }
            let passed_on = !methods.iter().any(|m| m == function);
            if let Some(first) = entry.take()
                && passed_on
            {
                let (file, function) = frames[first];
                let name = format!("{}:{function}", relative(file));
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        }
    }
    out
}

/// The library function the script's failing line called, as `FILE:FUNCTION`: in the last
/// traceback, the frame after the script's innermost one (`torch/autograd/gradcheck.py:
/// gradgradcheck`); `None` when the script raised the failure itself.
pub fn entry(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let (frames, _) = traceback_at(&lines, *traceback_starts(&lines).last()?);
    let script = frames.first()?.0;
    let last = frames.iter().rposition(|(file, _)| *file == script)?;
    let (file, function) = frames.get(last + 1)?;
    Some(format!("{}:{function}", relative(file)))
}

/// Every frame outside the script in any traceback of `stderr`, as `FILE:FUNCTION`.
pub fn library_frames(stderr: &str) -> Vec<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let script = script_file(&lines);
    traceback_starts(&lines)
        .into_iter()
        .flat_map(|at| traceback_at(&lines, at).0)
        .filter(|(file, _)| Some(*file) != script)
        .map(|(file, function)| format!("{}:{function}", relative(file)))
        .collect()
}

/// The source line the traceback shows for the innermost frame of the last traceback, when
/// that frame is the script's own (the script raised the failure itself: an `assert`, a
/// `raise`), whitespace trimmed.
pub fn raising_line(stderr: &str) -> Option<String> {
    let (frames, script) = last_frames(stderr)?;
    let &(last, file) = frames.last()?;
    (file == script)
        .then_some(last)
        .and_then(|at| source_at(stderr, at))
}

/// The line of the script's innermost frame in the last traceback, as written (trimmed): the
/// script's call into the library that raised, or the line that raised itself.
pub fn calling_line(stderr: &str) -> Option<String> {
    let (frames, script) = last_frames(stderr)?;
    let &(last, _) = frames.iter().rev().find(|(_, file)| *file == script)?;
    source_at(stderr, last)
}

/// The frames of the last traceback of `stderr`, each as the index of its `File` line and its
/// file, with the script's file.
fn last_frames(stderr: &str) -> Option<(Vec<(usize, &str)>, &str)> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = *traceback_starts(&lines).last()?;
    let script = script_file(&lines)?;
    let frames = (at + 1..lines.len())
        .take_while(|&i| frame(lines[i]).is_some() || lines[i].starts_with(' '))
        .filter_map(|i| Some((i, frame(lines[i])?.0)))
        .collect();
    Some((frames, script))
}

/// The source line shown under the `File` line at index `at` of `stderr`, trimmed.
fn source_at(stderr: &str, at: usize) -> Option<String> {
    let source = stderr.lines().nth(at + 1)?;
    (frame(source).is_none() && source.starts_with(' ')).then(|| source.trim().to_string())
}

/// The script's file: the outermost frame of the last traceback.
fn script_file<'a>(lines: &[&'a str]) -> Option<&'a str> {
    let last = *traceback_starts(lines).last()?;
    Some(traceback_at(lines, last).0.first()?.0)
}

/// Where each traceback of `lines` starts (its `Traceback (most recent call last):` line).
fn traceback_starts(lines: &[&str]) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| lines[i].trim_start() == TRACEBACK)
        .collect()
}

/// Where a failure was raised outside the script: the innermost frame of the last traceback
/// that is not in the script's file, among the frames inside the script's outermost one (a
/// warm worker's or the interpreter's own frames above it do not count), as `FILE:FUNCTION`
/// with FILE relative to `site-packages` or to the standard library's root
/// (`torch/_dynamo/exc.py:unimplemented`, `json/decoder.py:raw_decode`). `None` when every
/// such frame is the script's.
///
/// A failure the script raised in another process and a library raised again here (a pool's
/// `RemoteTraceback`, printed before the final traceback with the same header) was raised by
/// the script: it has no site either.
pub fn site(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let starts = traceback_starts(&lines);
    let (frames, header) = traceback_at(&lines, *starts.last()?);
    let script = frames.first()?.0;
    let raised_by_script = starts[..starts.len() - 1].iter().any(|&at| {
        let (earlier, earlier_header) = traceback_at(&lines, at);
        earlier_header.trim() == header.trim()
            && earlier.last().is_some_and(|(file, _)| *file == script)
    });
    if raised_by_script {
        return None;
    }
    frames
        .iter()
        .rev()
        .find(|(file, _)| *file != script)
        .map(|(file, function)| format!("{}:{function}", relative(file)))
}

/// The frames of the traceback whose first line is `lines[at]`, outermost first, and the
/// header line after them (frames are indented further than the `Traceback` line).
fn traceback_at<'a>(lines: &[&'a str], at: usize) -> (Vec<(&'a str, &'a str)>, &'a str) {
    let indent = lines[at].len() - lines[at].trim_start().len();
    let deeper = |l: &str| l.len() - l.trim_start().len() > indent;
    let body: Vec<&str> = lines[at + 1..]
        .iter()
        .copied()
        .take_while(|l| deeper(l) && !l.trim().is_empty() || l.trim_start().starts_with('^'))
        .collect();
    let header = lines.get(at + 1 + body.len()).copied().unwrap_or("");
    (body.iter().filter_map(|l| frame(l)).collect(), header)
}

/// `  File "PATH", line N, in FUNCTION` → (PATH, FUNCTION).
fn frame(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.split_once("\", line ")?;
    let (_, function) = rest.split_once(", in ")?;
    Some((file, function.trim_end()))
}

/// A library file's path from `site-packages/` or the standard library's root on.
fn relative(file: &str) -> &str {
    if let Some((_, inside)) = file.rsplit_once("/site-packages/") {
        return inside;
    }
    if let Some(at) = file.rfind("/lib/python") {
        let rest = &file[at + "/lib/python".len()..];
        if let Some((_, inside)) = rest.split_once('/') {
            return inside;
        }
    }
    file
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_line_the_script_raised_at_is_read_from_its_own_frame() {
        let stderr = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 4, in <module>\n    assert 'code: x' in text\n           ^^^^^\nAssertionError\n";
        assert_eq!(
            raising_line(stderr).as_deref(),
            Some("assert 'code: x' in text")
        );
        let library = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 2, in <module>\n    json.loads('')\n  File \"/usr/lib/python3.11/json/decoder.py\", line 355, in raw_decode\n    raise JSONDecodeError(\"Expecting value\", s, err.value) from None\njson.decoder.JSONDecodeError: Expecting value\n";
        assert_eq!(raising_line(library), None);
        assert_eq!(calling_line(library).as_deref(), Some("json.loads('')"));
    }

    use super::*;

    #[test]
    fn the_last_traceback_of_a_chain_wins() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 2, in <module>\n    d['k']\nKeyError: 'k'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"x.py\", line 4, in <module>\n    raise ValueError('bad config')\nValueError: bad config\n";
        let e = final_exception(stderr).unwrap();
        assert_eq!(e.class, "ValueError");
        assert_eq!(e.message.trim(), "bad config");
    }

    #[test]
    fn hint_lines_after_the_header_are_part_of_the_message() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 9, in <module>\n    f()\ntorch._dynamo.exc.Unsupported: Data-dependent branching\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace\n";
        let e = final_exception(stderr).unwrap();
        assert_eq!(e.class, "torch._dynamo.exc.Unsupported");
        assert!(e.message.contains("TORCHDYNAMO_VERBOSE"));
    }

    #[test]
    fn the_main_module_prefix_of_older_pythons_is_dropped() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    raise ManifestError('no sha')\n__main__.ManifestError: no sha\n";
        let e = final_exception(stderr).unwrap();
        assert_eq!(e.class, "ManifestError");
        assert_eq!(e.message.trim(), "no sha");
    }

    #[test]
    fn a_bare_class_without_message_is_a_header() {
        let stderr = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    raise StopIteration\nStopIteration\n";
        assert_eq!(final_exception(stderr).unwrap().class, "StopIteration");
    }

    #[test]
    fn a_syntax_error_has_no_traceback_line() {
        let stderr = "  File \"/tmp/x/repro.py\", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n";
        assert_eq!(final_exception(stderr).unwrap().class, "SyntaxError");
    }

    #[test]
    fn stderr_without_exception_has_none() {
        assert_eq!(final_exception("warning: something\n"), None);
        assert_eq!(final_exception(""), None);
    }

    #[test]
    fn the_site_is_the_innermost_frame_outside_the_script() {
        let stderr = "Traceback (most recent call last):\n  File \"/tmp/a/repro.py\", line 9, in <module>\n    f(x)\n  File \"/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py\", line 5, in _fn\n    return fn(*args)\n  File \"/venv/lib/python3.11/site-packages/torch/_dynamo/exc.py\", line 30, in unimplemented\n    raise Unsupported(msg)\ntorch._dynamo.exc.Unsupported: Data-dependent branching\n";
        assert_eq!(
            site(stderr).as_deref(),
            Some("torch/_dynamo/exc.py:unimplemented")
        );
        let stdlib = "Traceback (most recent call last):\n  File \"/tmp/b/repro.py\", line 2, in <module>\n    json.loads('')\n  File \"/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py\", line 355, in raw_decode\n    raise JSONDecodeError(\"Expecting value\", s, err.value) from None\njson.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n";
        assert_eq!(site(stdlib).as_deref(), Some("json/decoder.py:raw_decode"));
    }

    #[test]
    fn the_entry_is_the_library_function_the_failing_line_called() {
        let stderr = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 9, in <module>\n    gradgradcheck(F.apply, x)\n  File \"/v/lib/python3.11/site-packages/torch/autograd/gradcheck.py\", line 5, in gradgradcheck\n    return gradcheck(f, x)\n  File \"/v/lib/python3.11/site-packages/torch/autograd/gradcheck.py\", line 7, in gradcheck\n    _raise(msg)\n  File \"/v/lib/python3.11/site-packages/torch/autograd/gradcheck.py\", line 9, in _raise\n    raise GradcheckError(msg)\nGradcheckError: Jacobian mismatch\n";
        assert_eq!(
            entry(stderr).as_deref(),
            Some("torch/autograd/gradcheck.py:gradgradcheck")
        );
        let callback = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 5, in <module>\n    sorted(xs, key=k)\n  File \"/usr/lib/python3.11/functools.py\", line 1, in wrapper\n    return f(a)\n  File \"/t/repro.py\", line 2, in k\n    return d[a]\n  File \"/usr/lib/python3.11/collections/__init__.py\", line 3, in __getitem__\n    raise KeyError(a)\nKeyError: 1\n";
        assert_eq!(
            entry(callback).as_deref(),
            Some("collections/__init__.py:__getitem__")
        );
        let own = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 3, in <module>\n    raise RuntimeError('x')\nRuntimeError: x\n";
        assert_eq!(entry(own), None);
    }

    #[test]
    fn a_failure_raised_by_the_script_itself_has_no_site() {
        let stderr = "Traceback (most recent call last):\n  File \"/tmp/a/repro.py\", line 3, in <module>\n    check()\n  File \"/tmp/a/repro.py\", line 2, in check\n    raise RuntimeError('x')\nRuntimeError: x\n";
        assert_eq!(site(stderr), None);
        assert_eq!(site("RuntimeError: x\n"), None);
    }

    #[test]
    fn a_library_frame_between_script_frames_is_the_site() {
        let stderr = "Traceback (most recent call last):\n  File \"/t/repro.py\", line 5, in <module>\n    sorted(xs, key=k)\n  File \"/usr/lib/python3.11/functools.py\", line 1, in wrapper\n    return f(a)\n  File \"/t/repro.py\", line 2, in k\n    raise KeyError(a)\nKeyError: 1\n";
        assert_eq!(site(stderr).as_deref(), Some("functools.py:wrapper"));
    }

    #[test]
    fn a_failure_the_script_raised_in_a_pool_worker_has_no_site() {
        let stderr = "multiprocessing.pool.RemoteTraceback: \n\"\"\"\nTraceback (most recent call last):\n  File \"/usr/lib/python3.11/multiprocessing/pool.py\", line 125, in worker\n    result = (True, func(*args, **kwds))\n  File \"/t/repro.py\", line 69, in verify\n    raise ValueError(\"checksum mismatch\")\nValueError: checksum mismatch\n\"\"\"\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"/t/repro.py\", line 9, in <module>\n    pool.map(verify, shards)\n  File \"/usr/lib/python3.11/multiprocessing/pool.py\", line 774, in get\n    raise self._value\nValueError: checksum mismatch\n";
        assert_eq!(site(stderr), None);
    }
}
