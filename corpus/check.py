#!/usr/bin/env python3
"""Sanity-check the scrub test corpus.

For every ``corpus/<case>/`` folder holding ``repro.py`` and ``case.toml``:

* ``case.toml`` has exactly the expected keys with the expected types;
* ``repro.py`` is 80-250 lines long;
* running ``sys.executable repro.py`` in a fresh temp dir (stdin closed,
  PYTHONHASHSEED=0, no arguments) produces an outcome that matches
  ``signature`` and finishes in under 2 s (flaky cases: run 10 times, report
  the match ratio, and require that every run either matches or exits 0);
* the empty script does NOT match the signature;
* no decoy matches: the script is run once more under a tracer that records
  every exception raised through a frame of repro.py (in the parent and in
  forked children).  Every recorded exception other than the final one must
  not match the signature;
* derived cases (``derive = true``, reduced without ``--sig``): every string
  in ``keeps`` (the inner error, detail or cause line that names the bug)
  shows in the failure's stderr, and a decoy counts only if its message and
  cause chain show them all too (a caught exception with the same header but
  another cause is what a derived signature must tell apart);
* ``near.py``, where a case has one: a near miss, i.e. it fails with the
  signature's class and first line but does not show every string in
  ``keeps`` (with ``keeps = []`` only the first half is checked: what tells
  it apart, such as transform frames, is left to scrub's own tests).

Header classes: Python <= 3.10 prints script-defined exception classes as
`__main__.Name`, 3.11+ as `Name`; signatures use `Name`, and the check
accepts both.

Stdlib only; works on Python 3.9+.

Usage:
    python check.py [CASE ...]               # check all (or the named) cases
    python check.py --script F --sig SIG     # check one ad-hoc script
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRACEBACK_LINE = "Traceback (most recent call last):"
TIME_LIMIT_S = 2.0
FLAKY_RUNS = 10
VERBOSE = False
EXPECTED_KEYS = {
    "signature": str,
    "bound": int,
    "hand_bound": int,
    "exercises": list,
    "needs": list,
    "flaky": bool,
}
OPTIONAL_KEYS = {
    "byte_bound": int,
    "derive": bool,
    "keeps": list,
}


# --------------------------------------------------------------------------
# a tiny TOML subset parser (3.9/3.10 have no tomllib)
# --------------------------------------------------------------------------

class TomlError(ValueError):
    pass


def _parse_value(s, i):
    while i < len(s) and s[i] in " \t":
        i += 1
    if i >= len(s):
        raise TomlError("missing value")
    c = s[i]
    if c == '"':
        out = []
        i += 1
        escapes = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}
        while True:
            if i >= len(s):
                raise TomlError("unterminated string")
            c = s[i]
            if c == '"':
                return "".join(out), i + 1
            if c == "\\":
                if i + 1 >= len(s) or s[i + 1] not in escapes:
                    raise TomlError("unsupported escape")
                out.append(escapes[s[i + 1]])
                i += 2
                continue
            out.append(c)
            i += 1
    if c == "'":
        j = s.find("'", i + 1)
        if j < 0:
            raise TomlError("unterminated literal string")
        return s[i + 1:j], j + 1
    if c == "[":
        items = []
        i += 1
        while True:
            while i < len(s) and s[i] in " \t":
                i += 1
            if i < len(s) and s[i] == "]":
                return items, i + 1
            value, i = _parse_value(s, i)
            items.append(value)
            while i < len(s) and s[i] in " \t":
                i += 1
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] == "]":
                return items, i + 1
            else:
                raise TomlError("bad array")
    m = re.compile(r"true|false|[+-]?\d+").match(s, i)
    if not m:
        raise TomlError("unsupported value at %r" % s[i:])
    tok = m.group(0)
    if tok == "true":
        return True, m.end()
    if tok == "false":
        return False, m.end()
    return int(tok), m.end()


def parse_toml(text):
    data = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=", line)
        if not m:
            raise TomlError("line %d: expected key = value" % lineno)
        value, end = _parse_value(line, m.end())
        rest = line[end:].strip()
        if rest and not rest.startswith("#"):
            raise TomlError("line %d: trailing garbage %r" % (lineno, rest))
        if m.group(1) in data:
            raise TomlError("line %d: duplicate key" % lineno)
        data[m.group(1)] = value
    return data


# --------------------------------------------------------------------------
# signatures
# --------------------------------------------------------------------------

class Signature:
    def __init__(self, text):
        self.text = text
        self.kind = "exception"
        self.cls = self.substring = None
        self.signal = self.exit_code = None
        if text.startswith("signal:"):
            self.kind = "signal"
            self.signal = getattr(signal, text[len("signal:"):])
        elif text.startswith("exit:"):
            self.kind = "exit"
            self.exit_code = int(text[len("exit:"):])
        else:
            cls, sep, sub = text.partition(": ")
            self.cls = cls.strip()
            self.substring = sub if sep else None
            if not re.match(r"^[A-Za-z_][\w.]*$", self.cls):
                raise ValueError("bad exception class in signature %r" % text)

    def match_header(self, header, rest):
        """header: the traceback header line; rest: header + everything after."""
        cls = header_class(header)
        if cls != self.cls:
            return False
        return self.substring is None or self.substring in rest

    def match_exception(self, cls_name, message):
        """Would an exception with this printed class and str() match?"""
        if self.kind == "signal":
            return False
        if self.kind == "exit":
            return cls_name == "SystemExit" and message == str(self.exit_code)
        if cls_name != self.cls:
            return False
        header = "%s: %s" % (cls_name, message) if message else cls_name
        return self.substring is None or self.substring in header


MAIN_PREFIX = "__main__."


def header_class(header):
    """The exception class named by a traceback header line.

    Python <= 3.10 prints classes defined in the script as
    `__main__.ManifestError`; 3.11+ print `ManifestError`.  Signatures use the
    unqualified form, so the prefix is dropped here.
    """
    cls = header.split(":", 1)[0].strip()
    if cls.startswith(MAIN_PREFIX):
        cls = cls[len(MAIN_PREFIX):]
    return cls


def final_header(stderr):
    """Return (header line, text from header on) of the last traceback block."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.rstrip() == TRACEBACK_LINE]
    if not starts:
        return None, None
    for j in range(starts[-1] + 1, len(lines)):
        line = lines[j]
        if line and not line[0].isspace():
            return line, "\n".join(lines[j:])
    return None, None


def outcome_matches(sig, returncode, stderr):
    if sig.kind == "signal":
        return returncode == -sig.signal
    if sig.kind == "exit":
        return returncode == sig.exit_code
    if returncode in (0, None) or returncode < 0:
        return False
    header, rest = final_header(stderr)
    return header is not None and sig.match_header(header, rest)


def describe(returncode, stderr):
    if returncode is None:
        return "timeout"
    if returncode < 0:
        try:
            return "signal:%s" % signal.Signals(-returncode).name
        except ValueError:
            return "signal:%d" % -returncode
    header, _ = final_header(stderr)
    if header is not None:
        return "exit:%d %s" % (returncode, header[:100])
    return "exit:%d" % returncode


# --------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------

def run_env():
    env = dict(os.environ)
    env["PYTHONHASHSEED"] = "0"
    for var in ("PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONFAULTHANDLER"):
        env.pop(var, None)
    return env


def run_script(source, extra_args=(), bootstrap=None, timeout=10.0):
    """Copy `source` (text) to a fresh temp dir as repro.py and run it there."""
    with tempfile.TemporaryDirectory(prefix="scrub-corpus-") as tmp:
        path = os.path.join(tmp, "repro.py")
        with open(path, "w") as f:
            f.write(source)
        if bootstrap is None:
            argv = [sys.executable, "repro.py"]
        else:
            argv = [sys.executable, "-c", bootstrap, path] + list(extra_args)
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=tmp, env=run_env(),
                                  stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout)
            rc, err = proc.returncode, proc.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as exc:
            rc, err = None, (exc.stderr or b"").decode("utf-8", "replace")
        elapsed = time.monotonic() - start
        return rc, err, elapsed


# Runs repro.py as __main__ with a tracer that logs every exception raised
# through one of its frames (one JSON line per exception object) to argv[2].
TRACER = r'''
def _scrub_setup():
    import json, os, sys
    path, log_path = sys.argv[1], sys.argv[2]
    out = open(log_path, "a")
    seen = []

    def qualname(cls):
        mod = getattr(cls, "__module__", "builtins")
        name = getattr(cls, "__qualname__", cls.__name__)
        return name if mod in ("builtins", "__main__") else mod + "." + name

    def text(exc):
        try:
            return str(exc)
        except Exception:
            return "<unprintable>"

    def chain(exc):
        # the causes and contexts Python would print above exc, innermost last
        out, cur = [], exc
        while len(out) < 20:
            nxt = cur.__cause__
            if nxt is None and not cur.__suppress_context__:
                nxt = cur.__context__
            if nxt is None or any(e is nxt for e in out):
                break
            out.append(nxt)
            cur = nxt
        return ["%s: %s" % (qualname(type(e)), text(e)) for e in out]

    def record(exc, tag):
        out.write(json.dumps({"pid": os.getpid(), "tag": tag,
                              "cls": qualname(type(exc)), "msg": text(exc),
                              "chain": chain(exc)}) + "\n")
        out.flush()

    def local(frame, event, arg):
        if event == "exception":
            exc = arg[1]
            if exc is not None and not any(e is exc for e in seen):
                seen.append(exc)
                record(exc, "raised")
        return local

    def glob(frame, event, arg):
        if frame.f_code.co_filename == path:
            return local(frame, event, arg)
        return None

    sys.argv = [path]
    sys.path[0] = os.path.dirname(path)
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    return path, code, glob, record

import sys, threading
_path, _code, _glob, _record = _scrub_setup()
_ns = sys.modules["__main__"].__dict__
_ns["__file__"] = _path
for _name in ("_scrub_setup", "sys", "threading", "_path", "_name"):
    _ns.pop(_name, None)
__import__("sys").settrace(_glob)
__import__("threading").settrace(_glob)
try:
    exec(_code, _ns)
except BaseException as _exc:
    __import__("sys").settrace(None)
    _record(_exc, "final")
    raise
'''


def collect_decoys(source, by_cause=False):
    """(class, message, causes) of every exception caught on the way.

    An exception with the final one's class and message is the final one (or
    its copy in a forked child) and is left out; with by_cause, only if its
    causes are the same too, since a derived signature tells them apart.
    """
    with tempfile.NamedTemporaryFile(prefix="scrub-decoys-", suffix=".jsonl",
                                     delete=False) as f:
        log_path = f.name
    try:
        run_script(source, extra_args=[log_path], bootstrap=TRACER)
        with open(log_path) as f:
            records = [json.loads(line) for line in f if line.strip()]
    finally:
        os.unlink(log_path)
    def key(r):
        return (r["cls"], r["msg"], tuple(r["chain"]) if by_cause else ())

    finals = {key(r) for r in records if r["tag"] == "final"}
    decoys, seen = [], set()
    for r in records:
        k = key(r)
        if r["tag"] == "raised" and k not in finals and k not in seen:
            seen.add(k)
            decoys.append((r["cls"], r["msg"], tuple(r["chain"])))
    return decoys


def shows_keeps(keeps, text):
    return all(k in text for k in keeps)


# --------------------------------------------------------------------------
# checking
# --------------------------------------------------------------------------

def check_script(name, source, sig, flaky=False, quiet=False, keeps=None):
    """keeps: None for a case reduced with --sig, else the derived case's keeps."""
    problems = []
    notes = []
    nlines = len(source.splitlines())

    runs = FLAKY_RUNS if flaky else 1
    matched = 0
    slowest = 0.0
    outcomes = []
    for _ in range(runs):
        rc, err, elapsed = run_script(source)
        slowest = max(slowest, elapsed)
        ok = outcome_matches(sig, rc, err)
        matched += ok
        outcomes.append(describe(rc, err))
        header, _ = final_header(err)
        if header and header.startswith(MAIN_PREFIX) and "__main__ prefix" not in notes:
            notes.append("__main__ prefix")
        if not ok and not (flaky and rc == 0):
            problems.append("outcome %s does not match %r" % (describe(rc, err), sig.text))
            if not quiet:
                problems.append("stderr tail:\n" + "\n".join(err.splitlines()[-15:]))
        elif ok and keeps:
            missing = [k for k in keeps if k not in err]
            if missing:
                problems.append("failure does not show keeps %r" % missing)
    if slowest > TIME_LIMIT_S:
        problems.append("too slow: %.2fs" % slowest)
    if flaky:
        notes.append("flaky match ratio %d/%d" % (matched, runs))
        if matched == 0 or matched == runs:
            problems.append("flaky case matched %d/%d runs (want some of each)" % (matched, runs))

    rc, err, _ = run_script("")
    if outcome_matches(sig, rc, err):
        problems.append("the empty script matches the signature")

    decoys = collect_decoys(source, by_cause=keeps is not None)
    same_header = [d for d in decoys if sig.match_exception(d[0], d[1])]
    bad = [d for d in same_header
           if keeps is None or not keeps or shows_keeps(keeps, "\n".join((d[1],) + d[2]))]
    for cls, msg, _ in bad:
        problems.append("decoy matches signature: %s: %s" % (cls, msg))
    same_class = [d for d in decoys if d[0] == sig.cls or
                  (sig.kind == "exit" and d[0] == "SystemExit")]
    notes.append("%d caught exceptions, %d same-class decoys" % (len(decoys), len(same_class)))
    if keeps is not None:
        notes.append("%d same-header decoys told apart by keeps" % (len(same_header) - len(bad)))
    if VERBOSE:
        for cls, msg, causes in decoys:
            notes.append("caught %s: %s%s" % (cls, msg.replace("\n", "\\n")[:80],
                                              "".join(" <- " + c[:60] for c in causes)))
    return nlines, slowest, outcomes[-1], notes, problems


def check_near(source, sig, keeps):
    """near.py must be a near miss: the signature's header, but not every keeps string."""
    problems = []
    rc, err, _ = run_script(source)
    if not outcome_matches(sig, rc, err):
        problems.append("near.py: outcome %s does not match %r" % (describe(rc, err), sig.text))
    elif keeps and shows_keeps(keeps, err):
        problems.append("near.py shows every keeps string, so it is not a near miss")
    return problems


def load_case(case_dir):
    problems = []
    with open(os.path.join(case_dir, "case.toml")) as f:
        text = f.read()
    meta = parse_toml(text)
    if not text.lstrip().startswith("#"):
        problems.append("case.toml should start with a one-line comment")
    if not set(EXPECTED_KEYS) <= set(meta) <= set(EXPECTED_KEYS) | set(OPTIONAL_KEYS):
        problems.append("case.toml keys %s != %s" % (sorted(meta), sorted(EXPECTED_KEYS)))
    for key, typ in {**EXPECTED_KEYS, **OPTIONAL_KEYS}.items():
        if key in meta and not (isinstance(meta[key], typ) and
                                not (typ is int and isinstance(meta[key], bool))):
            problems.append("case.toml %s has wrong type" % key)
    if meta.get("needs") != []:
        problems.append("needs must be []")
    keeps = meta.get("keeps")
    if keeps is not None:
        if not meta.get("derive"):
            problems.append("keeps only makes sense with derive = true")
        if not all(isinstance(k, str) and k.strip() for k in keeps):
            problems.append("keeps must be non-empty strings")
    if isinstance(meta.get("bound"), int) and isinstance(meta.get("hand_bound"), int):
        if not 1 <= meta["hand_bound"] <= meta["bound"]:
            problems.append("want 1 <= hand_bound <= bound")
    try:
        import tomllib  # 3.11+: cross-check the mini parser
        if tomllib.loads(text) != meta:
            problems.append("mini TOML parser disagrees with tomllib")
    except ImportError:
        pass
    except Exception as exc:  # noqa: BLE001
        problems.append("tomllib rejects case.toml: %s" % exc)
    return meta, problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    parser.add_argument("--script", help="check an ad-hoc script instead")
    parser.add_argument("--sig", help="signature for --script")
    parser.add_argument("--flaky", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list the caught exceptions (decoys) found")
    args = parser.parse_args(argv)
    global VERBOSE
    VERBOSE = args.verbose

    print("python %s (%s)" % (sys.version.split()[0], sys.executable))
    if args.script:
        with open(args.script) as f:
            source = f.read()
        nonblank = sum(1 for line in source.splitlines() if line.strip())
        nlines, slowest, outcome, notes, problems = check_script(
            args.script, source, Signature(args.sig), flaky=args.flaky)
        print("%s: %d lines (%d non-blank), %.2fs, %s %s" % (
            args.script, nlines, nonblank, slowest, outcome, "; ".join(notes)))
        for p in problems:
            print("   PROBLEM: " + p)
        return 1 if problems else 0

    names = args.cases or sorted(
        d for d in os.listdir(HERE)
        if os.path.isfile(os.path.join(HERE, d, "repro.py")))
    failed = 0
    for name in names:
        case_dir = os.path.join(HERE, name)
        meta, problems = load_case(case_dir)
        with open(os.path.join(case_dir, "repro.py")) as f:
            source = f.read()
        sig = Signature(meta["signature"])
        keeps = None
        if meta.get("derive"):
            keeps = [k for k in meta.get("keeps", []) if isinstance(k, str)]
        nlines, slowest, outcome, notes, run_problems = check_script(
            name, source, sig, flaky=meta.get("flaky", False), keeps=keeps)
        problems += run_problems
        near_path = os.path.join(case_dir, "near.py")
        if os.path.isfile(near_path):
            with open(near_path) as f:
                problems += check_near(f.read(), sig, keeps)
            notes.append("near.py")
        if not 80 <= nlines <= 250:
            problems.append("repro.py has %d lines (want 80-250)" % nlines)
        status = "FAIL" if problems else "ok"
        print("%-4s %-26s %3d lines  %.2fs  sig=%r  got=%s  [%s]" % (
            status, name, nlines, slowest, meta["signature"], outcome, "; ".join(notes)))
        for p in problems:
            print("       PROBLEM: " + p.replace("\n", "\n         "))
        failed += bool(problems)
    print("%d/%d cases ok" % (len(names) - failed, len(names)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
