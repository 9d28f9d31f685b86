"""The interestingness test that `scrub bench --vs` gives a peer reducer.

`interesting.py FILE` exits 0 when the script FILE fails as the case's oracle says (an
exception's class and message substring, a signal, or an exit status), run as scrub runs a
candidate: `PY repro.py` in a fresh directory, stdin closed, `PYTHONHASHSEED=0`, killed with
its process group after the case's timeout, tried as often as scrub tries a candidate of a
flaky case. It exits 1 otherwise. The oracle is the file `oracle.json` beside this one; every
run adds a byte to the file it names under "runs", which is how scrub counts a peer's runs.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "oracle.json"), encoding="utf-8") as f:
    ORACLE = json.load(f)

TRACEBACK = "Traceback (most recent call last):"


def lines_of(text):
    """The lines of `text` as Rust's `str::lines` gives them, as scrub reads stderr."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def header_class(line):
    """The class at the start of a header line: a dotted identifier before `:` or the end."""
    end = line.find(":")
    name = line if end < 0 else line[:end]
    parts = name.split(".")
    ok = name and all(
        p and (p[0].isalpha() or p[0] == "_") and all(c.isalnum() or c == "_" for c in p)
        for p in parts
    )
    return name if ok else None


def looks_like_exception(name):
    last = name.rsplit(".", 1)[-1]
    return last.endswith(("Error", "Exception", "Exit", "Interrupt", "Warning"))


def final_exception(stderr):
    """(class, message) of the exception after the last traceback, or of the last line that
    looks like an exception header when there is no traceback; None when there is none."""
    lines = lines_of(stderr)
    tracebacks = [i for i, line in enumerate(lines) if line.lstrip() == TRACEBACK]
    if tracebacks:
        after = range(tracebacks[-1] + 1, len(lines))
        at = next((i for i in after if lines[i] and lines[i][0] not in " \t"), None)
    else:
        at = next(
            (
                i
                for i in reversed(range(len(lines)))
                if header_class(lines[i]) and looks_like_exception(header_class(lines[i]))
            ),
            None,
        )
    if at is None or header_class(lines[at]) is None:
        return None
    printed = header_class(lines[at])
    name = printed[len("__main__.") :] if printed.startswith("__main__.") else printed
    message = lines[at][len(printed) :].lstrip(":").lstrip()
    return name, "\n".join([message] + lines[at + 1 :])


def same_failure(returncode, stderr):
    kind = ORACLE["kind"]
    if kind == "signal":
        return returncode == -ORACLE["signal"]
    if kind == "exit":
        return returncode == ORACLE["exit"]
    # An exception: a non-zero exit, not a signal.
    if returncode <= 0:
        return False
    found = final_exception(stderr)
    if found is None:
        return False
    name, message = found
    want = ORACLE["class"]
    if not (want == name or ("." not in want and name.rsplit(".", 1)[-1] == want)):
        return False
    return ORACLE["substring"] is None or ORACLE["substring"] in message


def die_with_this_test():
    """In the candidate, before it starts: killed when this test dies. A reducer that stops its
    test, or the budget that stops the reducer, kills this process; the candidate, in a group
    of its own (for the timeout below), would otherwise run on, and one that hangs forever."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run(path):
    with open(ORACLE["runs"], "ab") as runs:
        runs.write(b".")
    with tempfile.TemporaryDirectory() as work:
        shutil.copyfile(path, os.path.join(work, "repro.py"))
        child = subprocess.Popen(
            [ORACLE["python"], "repro.py"],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONHASHSEED="0"),
            start_new_session=True,
            preexec_fn=die_with_this_test,
        )
        try:
            _, err = child.communicate(timeout=ORACLE["timeout"])
        except subprocess.TimeoutExpired:
            return False
        finally:
            # The whole group: a candidate's own children die with it.
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            child.wait()
        return same_failure(child.returncode, err.decode("utf-8", "replace"))


def interesting(path):
    return any(run(path) for _ in range(ORACLE["attempts"]))


if __name__ == "__main__":
    sys.exit(0 if interesting(sys.argv[1]) else 1)
