# Run as `python -c KINDS` in the script's directory, runs repro.py as __main__ and, when it
# raises, reports the kinds of the values the script handed to a library on the failing path
# (a warm worker loads it as its probe: it calls `instrument`, then `report` itself).
#
# The failing path is the traceback. Each place where a frame of the script calls a frame
# outside it is a call into a library: the report gives, for each, the library function
# (`FILE:FUNCTION`, FILE relative to site-packages or the standard library) and the kind of
# each of its arguments as the library received them (on Python 3.11+, only those the
# script's call bound: not a parameter left to its default). Where the exception was raised inside a
# call the script made into code without a Python frame (a builtin, a C extension), the call at
# the script's innermost line is one too, with the arguments the script wrote as names,
# attributes, subscripts and constants. The innermost call also gives the number of
# positional arguments the script wrote, read from the call's own source, and where that
# source is (`place`: which call of its line failed; Python 3.11+), and its array and tensor
# arguments grouped by shape (`same_shape`).
#
# A kind is the value's class, `{"c": "module.Class"}` (an instance of a class the script
# defines: `script:` and its first base that the script does not define), the names of the
# classes above it (`mro`), for a value with a `dtype` its family and for one with
# `requires_grad` and `layout` (a tensor) what decides which code runs on it (`p`), and for a
# list, tuple, set or dict the kinds of its items (`items`, each kind once); an `nn.Sequential`
# gives the kinds of its layers too (`layers`, each kind once): one of them may stand where it
# stood, as the layer it wrapped once the others are gone. The report is the
# last stderr line, after "scrub-kinds: ". A number the failing call received that its message
# quotes (`int() with base 10`) is part of its kind (`v`): the signature abstracts numbers so
# that sizes may shrink, but a number the call was given and the message names is the call.
# Each library method the script called on the path ("entered FILE:FUNCTION") and the one
# that raised ("raised in FILE:FUNCTION") come last, with the kind of their `self`.
import ast
import json
import re
import sys
import types

MARK = "\nscrub-kinds: "
LINES_MARK = "\nscrub-lines: "
# Set in the runner that also reports the lines of the script that ran (`scrub-lines: `):
# the guard of a custom implementation that no control guards reads them.
LINES = False
RAN = set()
# Set in the runner for an `AttributeError`: the attributes the script sets are recorded.
STORES = False
# Set in the runner for an `AssertionError`: the two sides of each check the script makes are
# recorded as they are computed (see `Sides`), and the report says, after the calls, how far
# apart the failing check's were (`scrub-sides: `): their shapes and largest difference.
SIDES = False
SIDES_MARK = "\nscrub-sides: "
# For a `RecursionError`, how deep its traceback was and the recursion limit it ran under
# (`scrub-depth: `): one raised well before the limit is no endless recursion.
DEPTH_MARK = "\nscrub-depth: "
# The sides of the last check computed: its line, and each side by its place.
COMPARED = {}
# How deep containers are followed, and how many of their items are looked at.
DEPTH = 3
ITEMS = 16
# The container whose layers may each stand where it stood.
SEQUENTIAL = "torch.nn.modules.container.Sequential"


# The attributes the script sets, by the id of the value it set them on (see `Stores`), each
# with that value (held, so that no id is reused); and, by the same rule, the values a library
# function returned while one of those was among its locals (a copy, a replacement), each with
# the attributes set on the values it came from.
SET = {}
# What a failure on an attribute the script set reports (see `missed`).
SET_ATTRIBUTE = "getattr(…, %r) of a value the script set it on"


def stored(value, attribute):
    """Records that the script sets `attribute` on `value`; returns it."""
    try:
        SET.setdefault(id(value), (value, set()))[1].add(attribute)
    except Exception:
        pass
    return value


def derive(path):
    """The profile function that records what library functions return from the values in
    `SET`, with the attributes set on those."""

    def profile(frame, event, arg):
        if event != "return" or arg is None or frame.f_code.co_filename == path:
            return
        try:
            if id(arg) in SET:
                return
            attributes = set()
            for value in frame.f_locals.values():
                if id(value) in SET:
                    attributes |= SET[id(value)][1]
            if attributes:
                SET[id(arg)] = (arg, attributes)
        except Exception:
            pass

    return profile


class Stores(ast.NodeTransformer):
    """`X.baz = v` becomes `__scrub_stored__(X, 'baz').baz = v`, and `setattr(X, 'baz', v)`
    `setattr(__scrub_stored__(X, 'baz'), 'baz', v)`: X is evaluated once, as before, and every
    line keeps its place."""

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Store):
            node.value = recorded(node.value, node.attr)
            ast.fix_missing_locations(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if (isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            node.args[0] = recorded(node.args[0], node.args[1].value)
            ast.fix_missing_locations(node)
        return node


# The calls that compare their first two arguments (or the value they are a method of and
# their first), and the checks that assert it.
COMPARING = {"equal", "allclose", "isclose", "array_equal", "array_equiv", "assert_close",
             "assert_allclose", "assert_equal", "assert_array_equal", "assert_array_almost_equal",
             "assert_almost_equal", "assertEqual", "assertAlmostEqual"}


def side(line, place, value):
    """Records `value` as side `place` of the check on `line`; returns it."""
    if COMPARED.get("line") != line:
        COMPARED.clear()
        COMPARED["line"] = line
    COMPARED[place] = value
    return value


class Sides(ast.NodeTransformer):
    """In an `assert` of `a == b` (one operator), of a comparing call (`torch.equal(a, b)`,
    `a.allclose(b)`), of `.all()` or `.item()` of one, or of `all(...)` over one; and in a statement that calls a
    check (`torch.testing.assert_close(a, b)`): `a` becomes `__scrub_side__(LINE, 0, a)` and
    `b` `__scrub_side__(LINE, 1, b)`. Each side is computed once, as before."""

    def visit_Assert(self, node):
        self.generic_visit(node)
        mark(node.test, node.lineno)
        return node

    def visit_Expr(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Call):
            mark(node.value, node.lineno)
        return node


def mark(test, line):
    """Wraps the two sides `test` compares, where it is one of the forms `Sides` knows."""
    while (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute)
           and test.func.attr in ("all", "item") and not test.args):
        test = test.func.value
    if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "all"
            and len(test.args) == 1 and isinstance(test.args[0], (ast.GeneratorExp, ast.ListComp))):
        # `all(check for ...)`: the last pair recorded is the first that failed.
        test = test.args[0].elt
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        test.left = wrapped(test.left, line, 0)
        test.comparators[0] = wrapped(test.comparators[0], line, 1)
    elif isinstance(test, ast.Call) and isinstance(test.func, (ast.Attribute, ast.Name)):
        name = test.func.attr if isinstance(test.func, ast.Attribute) else test.func.id
        if name not in COMPARING or any(isinstance(a, ast.Starred) for a in test.args):
            return
        if len(test.args) >= 2:
            test.args[0] = wrapped(test.args[0], line, 0)
            test.args[1] = wrapped(test.args[1], line, 1)
        elif len(test.args) == 1 and isinstance(test.func, ast.Attribute):
            test.func.value = wrapped(test.func.value, line, 0)
            test.args[0] = wrapped(test.args[0], line, 1)


def wrapped(value, line, place):
    call = ast.Call(ast.Name("__scrub_side__", ast.Load()),
                    [ast.Constant(line), ast.Constant(place), value], [])
    return ast.fix_missing_locations(ast.copy_location(call, value))


def apart(line):
    """How far apart the two sides recorded for the check on `line` are: the shape of each,
    and the largest difference between them (as text: `nan`, `inf`) where both are numbers,
    arrays or tensors. `None` when no check on that line was recorded."""
    if COMPARED.get("line") != line or 0 not in COMPARED or 1 not in COMPARED:
        return None
    a, b = COMPARED[0], COMPARED[1]
    out = {"shapes": [side_shape(a), side_shape(b)], "diff": None,
           "exact": integral(a) and integral(b)}
    try:
        out["diff"] = repr(float(largest_difference(a, b)))
    except Exception:
        pass
    return out


def integral(value):
    """Whether `value` is an integer, a tuple or list of them, or an array or tensor of
    integers."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, (tuple, list)):
        return bool(value) and all(integral(v) and not isinstance(v, (tuple, list)) for v in value)
    dtype = getattr(value, "dtype", None)
    try:
        if callable(getattr(value, "is_floating_point", None)):  # a tensor
            return not value.is_floating_point() and not value.is_complex() and dtype != sys.modules["torch"].bool
        return getattr(dtype, "kind", None) in ("i", "u")  # an array or numpy scalar
    except Exception:
        return False


def side_shape(value):
    """A checked side's shape: an array's or tensor's, a tuple's or list's length (`(3, 41)`
    against `(3,)` can never be equal)."""
    if isinstance(value, (tuple, list)):
        return [len(value)]
    return shape_of(value)


def shape_of(value):
    shape = getattr(value, "shape", None)
    try:
        return None if shape is None else [int(d) for d in shape]
    except Exception:
        return None


def largest_difference(a, b):
    """The largest absolute difference between `a` and `b`, NaN where one is NaN."""
    torch = sys.modules.get("torch")
    if torch is not None and (isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor)):
        a, b = (torch.as_tensor(v).detach().cpu() for v in (a, b))
        kind = torch.complex128 if a.is_complex() or b.is_complex() else torch.float64
        return (a.to(kind) - b.to(kind)).abs().max().item()
    numpy = sys.modules.get("numpy")
    if numpy is not None and any(isinstance(v, (numpy.ndarray, numpy.generic)) for v in (a, b)):
        kind = complex if numpy.iscomplexobj(a) or numpy.iscomplexobj(b) else float
        a, b = (numpy.asarray(v, dtype=kind) for v in (a, b))
        return numpy.abs(a - b).max()
    number = lambda v: isinstance(v, (int, float, complex)) and not isinstance(v, bool)
    if number(a) and number(b):
        return abs(a - b)
    # Tuples or lists of numbers of one length, item by item: `(3, 41)` against `(3, 45)`.
    if (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
            and a and all(number(x) and number(y) for x, y in zip(a, b))):
        return max(abs(x - y) for x, y in zip(a, b))
    raise TypeError("not numbers")


def recorded(value, attribute):
    """`__scrub_stored__(value, attribute)` in `value`'s place."""
    call = ast.Call(ast.Name("__scrub_stored__", ast.Load()), [value, ast.Constant(attribute)], [])
    return ast.copy_location(call, value)


def instrument(source, path, globals_):
    """The script, with the attributes it sets recorded (see `Stores`); the report reads the
    traceback, not what the code computed. With `LINES`, the lines of the script that run are
    recorded from here on."""
    if LINES:
        def local(frame, event, arg):
            if event == "line":
                RAN.add(frame.f_lineno)
            return local

        def call(frame, event, arg):
            if frame.f_code.co_filename != path:
                return None
            RAN.add(frame.f_lineno)
            return local

        sys.settrace(call)
    SET.clear()
    COMPARED.clear()
    if not STORES and not SIDES:
        return compile(source, path, "exec")
    globals_["__scrub_stored__"] = stored
    globals_["__scrub_side__"] = side
    try:
        tree = ast.parse(source, path)
        if STORES:
            tree = Stores().visit(tree)
        if SIDES:
            tree = Sides().visit(tree)
    except Exception:
        return compile(source, path, "exec")
    if STORES:
        sys.setprofile(derive(path))
    return compile(tree, path, "exec")


def library(filename):
    """`torch/nn/functional.py` for a file under site-packages or the standard library."""
    if "/site-packages/" in filename:
        return filename.rsplit("/site-packages/", 1)[1]
    at = filename.rfind("/lib/python")
    if at >= 0:
        rest = filename[at + len("/lib/python"):]
        if "/" in rest:
            return rest.split("/", 1)[1]
    return filename


def class_name(cls):
    return "%s.%s" % (getattr(cls, "__module__", "?"), getattr(cls, "__qualname__", cls.__name__))


# A number in a message, not one inside a word or a size like `4x8`.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def kind(value, script, depth=0, quoted=()):
    """The kind of `value` (see the header); `quoted` are the numbers its call's message
    names."""
    if value is None:
        return {"c": "None"}
    if isinstance(value, types.ModuleType):
        return {"c": "module"}
    if isinstance(value, type):
        return {"c": "type"}
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.MethodWrapperType, types.WrapperDescriptorType)):
        # A lambda, a function of the script's and a library's builtin are all callables.
        return {"c": "callable"}
    cls = type(value)
    own = [c for c in cls.__mro__ if getattr(c, "__module__", None) == script]
    if own:
        base = next((c for c in cls.__mro__ if c not in own), object)
        out = {"c": "script:" + class_name(base)}
    else:
        out = {"c": class_name(cls)}
    out["mro"] = [class_name(c) for c in cls.__mro__[1:] if c not in own and c is not object]
    props = properties(value)
    if props:
        out["p"] = props
    if depth < DEPTH and isinstance(value, (list, tuple, set, frozenset, dict)):
        out["items"] = distinct(value.values() if isinstance(value, dict) else value, script, depth)
    if depth < DEPTH and out["c"] == SEQUENTIAL:
        try:
            children = list(value.children())
        except Exception:
            children = []
        out["layers"] = distinct(children, script, depth)
    if type(value) in (int, float) and repr(value) in quoted:
        out["v"] = repr(value)
    return out


def distinct(values, script, depth):
    """The kinds of the first `ITEMS` of `values`, each kind once."""
    kinds = []
    for value in list(values)[:ITEMS]:
        k = kind(value, script, depth + 1)
        if k not in kinds:
            kinds.append(k)
    return kinds


def properties(value):
    """What decides which code runs on a tensor or an array: its dtype's family, and for a
    value that can require grad, whether it does, whether it is a leaf, its layout and whether
    it is nested. Empty for any other value."""
    cls = type(value)
    props = []
    if isinstance(getattr(cls, "dtype", None), (property, types.GetSetDescriptorType)) or hasattr(
        cls, "requires_grad"
    ):
        try:
            props.append(family(value.dtype))
        except Exception:
            pass
    if hasattr(cls, "requires_grad") and hasattr(cls, "layout"):
        try:
            if value.requires_grad:
                props.append("requires grad")
                props.append("leaf" if value.is_leaf else "not a leaf")
            props.append(str(value.layout))
            if getattr(value, "is_nested", False):
                props.append("nested")
        except Exception:
            pass
    return props


def family(dtype):
    """`float`, `complex`, `int` or `bool`: a dtype's family (torch's or numpy's)."""
    kind_char = getattr(dtype, "kind", None)
    if isinstance(kind_char, str):
        return {"f": "float", "c": "complex", "i": "int", "u": "int", "b": "bool"}.get(
            kind_char, kind_char
        )
    if getattr(dtype, "is_complex", False):
        return "complex"
    if getattr(dtype, "is_floating_point", False):
        return "float"
    return "bool" if "bool" in str(dtype) else "int"


def call_at(frame, source):
    """The call the frame is executing, parsed from its own source, and where it is (`[line,
    column, end line, end column]`, columns in bytes): `(None, None)` before Python 3.11 (no
    column positions) or when the instruction is not a call."""
    try:
        positions = list(frame.f_code.co_positions())
        line, end_line, col, end_col = positions[frame.f_lasti // 2]
        lines = source.splitlines(True)[line - 1:end_line]
        encoded = [l.encode() for l in lines]
        if len(encoded) == 1:
            text = encoded[0][col:end_col]
        else:
            text = encoded[0][col:] + b"".join(encoded[1:-1]) + encoded[-1][:end_col]
        node = ast.parse(b"(" + text + b"\n)", mode="eval").body
    except Exception:
        return None, None
    if not isinstance(node, ast.Call):
        return None, None
    return node, [line, col, end_line, end_col]


SIMPLE = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.UnaryOp, ast.Tuple, ast.List)


def simple(node):
    """Whether evaluating `node` again runs no code of the script's: names, attributes,
    constant subscripts, constants and displays of them."""
    if isinstance(node, ast.Starred):
        return False
    for sub in ast.walk(node):
        if not isinstance(sub, SIMPLE + (ast.Load, ast.USub, ast.UAdd, ast.Slice)):
            return False
    return True


def evaluated(node, frame):
    try:
        code = compile(ast.Expression(node), "<kinds>", "eval")
        return True, eval(code, frame.f_globals, dict(frame.f_locals))
    except Exception:
        return False, None


def arguments(frame, script, quoted, call=None):
    """The kinds of the arguments of a library frame, by parameter name. With the script's
    `call` of it, only those the call bound: a parameter it left to its default holds the
    library's own state by the time of the failure (`deepcopy`'s `memo`), not a value the
    script handed over."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:count])
    bound = bound_by(call, names[:code.co_argcount])
    if code.co_flags & 0x04:
        names.append(code.co_varnames[count])
        count += 1
    if code.co_flags & 0x08:
        names.append(code.co_varnames[count])
    if bound is not None:
        # `*args` and `**kwargs` take what the named parameters did not.
        bound.update(names[code.co_argcount + code.co_kwonlyargcount:])
    local = frame.f_locals
    return {
        name: kind(local[name], script, quoted=quoted)
        for name in names
        if name in local and (bound is None or name in bound)
    }


def bound_by(call, positional_names):
    """The parameters `call` binds among a function's: its keywords, and as many positional
    parameters as it writes arguments (one more for an implicit `self` or `cls`); `None` when
    that cannot be told (no call, `*args` or `**kwargs` in it)."""
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(k.arg is None for k in call.keywords):
        return None
    implicit = 1 if positional_names[:1] in (["self"], ["cls"]) else 0
    bound = set(positional_names[:len(call.args) + implicit])
    bound.update(k.arg for k in call.keywords)
    return bound


def written(call, frame, script, quoted, values):
    """The kinds of the arguments the script wrote in `call` and that can be read again
    without running anything, by position (`0`, `1`) or keyword; each value goes in `values`
    by the same key."""
    out = {}
    given = [(str(i), arg) for i, arg in enumerate(call.args)]
    given += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    for key, arg in given:
        if simple(arg):
            ok, value = evaluated(arg, frame)
            if ok:
                out[key] = kind(value, script, quoted=quoted)
                values[key] = value
        elif factory(arg):
            # Built again for its shape alone: the script has failed, nothing reads it after.
            ok, value = evaluated(arg, frame)
            if ok:
                values[key] = value
    return out


# The array and tensor factories whose call `written` may make again, for a shape.
FACTORIES = {"zeros", "ones", "full", "empty", "tensor", "randn", "rand", "randint", "arange",
             "array", "asarray", "eye", "linspace"}


def factory(node):
    """Whether `node` calls a factory of `FACTORIES` with simple arguments."""
    if not isinstance(node, ast.Call) or not simple(node.func):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return (name in FACTORIES and all(simple(a) for a in node.args)
            and all(simple(k.value) for k in node.keywords))


def same_shape(values):
    """The names among `values` (arrays, tensors), grouped by shape: `[["input", "other",
    "out"]]` for `torch.add(a, b, out=out)` of three 2×2."""
    groups = {}
    for name, value in values.items():
        shape = shape_of(value)
        if shape is not None:
            groups.setdefault(tuple(shape), []).append(name)
    return sorted(sorted(names) for names in groups.values())


def callee(call, frame):
    """`module.qualname` of the library callable that `call` calls, when its callee is a name
    or an attribute; `None` for a callable of the script's own."""
    if not simple(call.func):
        return None
    ok, func = evaluated(call.func, frame)
    if not ok or getattr(getattr(func, "__code__", None), "co_filename", None) == frame.f_code.co_filename:
        return None
    owner = getattr(func, "__module__", None) or getattr(type(func), "__module__", "?")
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or type(func).__name__
    return "%s.%s" % (owner, name)


def positional(call):
    """How many positional arguments `call` writes; `None` with a `*args`."""
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    return len(call.args)


def missed(exc):
    """For an `AttributeError` on an attribute the script set, read on a value the script set
    it on or one a library returned from such a value (`deepcopy(p).baz` after `p.baz = 1`):
    the pseudo-call `SET_ATTRIBUTE`, with that value's kind. The same message on a value
    nothing set it on (`Parameter().baz`) is a user's mistake, an attribute never set, which
    a candidate must not become."""
    name = getattr(exc, "name", None)
    if not isinstance(exc, AttributeError) or not isinstance(name, str):
        return None
    try:
        value = exc.obj
    except AttributeError:
        return None
    if name not in SET.get(id(value), (None, ()))[1]:
        return None
    return {"at": SET_ATTRIBUTE % name, "args": {"value": kind(value, "__main__")}, "positional": None}


def report(exc, path):
    """Writes the calls into libraries on `exc`'s traceback (see the header), and with
    `LINES` the lines of the script that ran."""
    sys.settrace(None)
    sys.setprofile(None)
    if LINES:
        sys.stderr.write(LINES_MARK + json.dumps(sorted(RAN)) + "\n")
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    try:
        with open(path, "rb") as fh:
            source = fh.read().decode("utf-8", "replace")
    except OSError:
        source = ""
    mine = lambda f: f.f_code.co_filename == path
    try:
        quoted = set(NUMBER.findall(str(exc)))
    except Exception:
        quoted = set()
    calls = []
    entered = []
    for i, frame in enumerate(frames):
        if not mine(frame):
            continue
        inner = frames[i + 1] if i + 1 < len(frames) else None
        if inner is not None and not mine(inner):
            code = inner.f_code
            name = getattr(code, "co_qualname", code.co_name)
            call, place = call_at(frame, source)
            args = arguments(inner, "__main__", quoted, call)
            calls.append({
                "at": "%s:%s" % (library(code.co_filename), name),
                "args": args,
                "positional": positional(call),
                "place": place,
                "same_shape": same_shape({n: inner.f_locals[n] for n in args}),
            })
            if code.co_varnames[:1] == ("self",):
                entered.append({
                    "at": "entered %s:%s" % (library(code.co_filename), name),
                    "args": {"self": kind(inner.f_locals.get("self"), "__main__")},
                    "positional": None,
                })
        elif inner is None:
            call, place = call_at(frame, source)
            at = callee(call, frame) if call is not None else None
            if at is not None:
                values = {}
                calls.append({
                    "at": at,
                    "args": written(call, frame, "__main__", quoted, values),
                    "positional": positional(call),
                    "place": place,
                    "same_shape": same_shape(values),
                })
    set_on = missed(exc)
    if set_on is not None:
        calls.append(set_on)
    # Only the innermost call's positional arguments and quoted numbers are kept: the failing
    # call's.
    for call in calls[:-1]:
        call["positional"] = None
        call["place"] = None
        call["same_shape"] = []
        for k in call["args"].values():
            k.pop("v", None)
    # A library method that raised, and the kind of what it ran on: `Distribution.cdf` raises
    # `NotImplementedError` for an `Independent` under a mixture, and by design for a bare
    # `Categorical`, which has no cdf.
    calls.extend(entered)
    last = frames[-1] if frames else None
    if last is not None and not mine(last) and last.f_code.co_varnames[:1] == ("self",):
        code = last.f_code
        calls.append({
            "at": "raised in %s:%s" % (library(code.co_filename), getattr(code, "co_qualname", code.co_name)),
            "args": {"self": kind(last.f_locals.get("self"), "__main__")},
            "positional": None,
        })
    sys.stderr.write(MARK + json.dumps(calls) + "\n")
    if isinstance(exc, RecursionError):
        depth = {"frames": len(frames), "limit": sys.getrecursionlimit()}
        sys.stderr.write(DEPTH_MARK + json.dumps(depth) + "\n")
    if SIDES and isinstance(exc, AssertionError):
        line, tb = None, exc.__traceback__
        while tb is not None:
            if mine(tb.tb_frame):
                line = tb.tb_lineno
            tb = tb.tb_next
        sides = apart(line)
        if sides is not None:
            sys.stderr.write(SIDES_MARK + json.dumps(sides) + "\n")


if __name__ == "__main__":
    import builtins
    import os

    path = os.path.abspath("repro.py")
    sys.argv = ["repro.py"]
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __builtins__=builtins, __cached__=None)
    with open(path, "rb") as fh:
        code = instrument(fh.read(), path, main.__dict__)
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        exc.__traceback__ = tb or exc.__traceback__
        sys.excepthook(type(exc), exc, exc.__traceback__)
        try:
            report(exc, path)
        except Exception:
            pass
        sys.exit(1)
