# Run as `python -c PROBE` in the script's directory, runs repro.py as __main__ and, when it
# raises, reports where (a warm worker calls `report` itself): for each frame of repro.py on
# the traceback (innermost first; the three innermost and the outermost) the line it was executing, the names local to
# its function, and the value of every name, attribute and subscript read by the statement on
# that line, when the value reads back as a Python literal or is a module-level class or
# function of the script. The report is the last stderr line, after "scrub-probe: ".
import ast
import json
import runpy
import sys
import types

MAX_FRAMES = 4
MAX_VALUE = 4000


def literal(value):
    try:
        text = repr(value)
        if len(text) > MAX_VALUE:
            return None
        back = ast.literal_eval(text)
        if type(back) is type(value) and back == value:
            return text
    except Exception:
        pass
    return None


def named(value, globals_):
    if not isinstance(value, (type, types.FunctionType)):
        return None
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and globals_.get(name) is value:
        return name
    return None


def statement_at(tree, line):
    """The innermost statement on `line`, and the parts of it that run there."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= line <= node.end_lineno:
            if found is None or node.lineno >= found.lineno and node is not found:
                found = node
    if found is None:
        return []
    body = getattr(found, "body", None)
    if isinstance(body, list) and body and not isinstance(found, (ast.FunctionDef, ast.ClassDef)):
        # A compound statement: only its header runs on the line.
        header = [getattr(found, f, None) for f in ("test", "iter", "target", "items")]
        return [h for h in header if isinstance(h, ast.AST)]
    return [found]


def handled_names(tree, line):
    """The names that `except ... as name` clauses around `line` bind."""
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler)
        and node.name
        and node.lineno <= line <= node.end_lineno
    ]


def frame_facts(frame, line, source, tree, handled, path):
    values = {}
    scope = dict(frame.f_locals)
    # Python unbinds `except ... as exc` when the handler raises: give it back its exception.
    if handled is not None:
        for name in handled_names(tree, line):
            scope.setdefault(name, handled)
    for part in statement_at(tree, line):
        for node in ast.walk(part):
            if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
                continue
            if not isinstance(node.ctx, ast.Load):
                continue
            text = ast.get_source_segment(source, node)
            if not text or text in values:
                continue
            try:
                code = compile(ast.Expression(node), path, "eval")
                value = eval(code, frame.f_globals, scope)
            except BaseException:
                continue
            shown = literal(value) or named(value, frame.f_globals)
            if shown is not None:
                values[text] = shown
    code = frame.f_code
    local = [] if code.co_name == "<module>" else sorted(
        set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
    )
    return {
        "line": line,
        "function": code.co_name != "<module>",
        "locals": local,
        "values": sorted(values.items()),
    }


def report(exc, path):
    """Write the frames of `path` (the script's file name) on `exc`'s traceback to stderr."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    tree = ast.parse(source)
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    # The innermost frames, and the outermost one, through which the failure was reached.
    if len(frames) > MAX_FRAMES:
        frames = frames[:1] + frames[1 - MAX_FRAMES:]
    frames = frames[::-1]
    facts = [
        frame_facts(f, line, source, tree, exc.__context__ if i == 0 else None, path)
        for i, (f, line) in enumerate(frames)
    ]
    sys.stderr.write("\nscrub-probe: " + json.dumps(facts) + "\n")


if __name__ == "__main__":
    sys.argv = ["repro.py"]
    try:
        runpy.run_path("repro.py", run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:
        try:
            report(exc, "repro.py")
        except Exception:
            pass
        sys.exit(1)
