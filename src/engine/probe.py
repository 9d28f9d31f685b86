# Run as `python -c PROBE` in the script's directory, runs repro.py as __main__ and, when it
# raises, reports where (a warm worker calls `report` itself): for each frame of repro.py on
# the traceback (innermost first; the three innermost and the outermost) the line it was executing, the names local to
# its function, and the value of every name, attribute and subscript read by the statement on
# that line, and of every argument of a call there that calls nothing itself, as code that
# rebuilds it: a Python literal, its repr when that rebuilds an equal value from literals and
# the classes the script binds (a dataclass, a Decimal), a module-level class or function of
# the script, or a constructor of a tensor, a standard torch.nn module, a torch dtype, device or Size, or a
# numpy array, under the names the script imports torch and numpy as (not for an
# AssertionError, whose check would then compare rebuilt values, unless CHECKED). A rebuilt value is
# equivalent, not equal (a large tensor becomes random numbers of its shape): the oracle
# decides whether it still fails. The report is the last stderr line, after "scrub-probe: ".
#
# The script runs instrumented (see `instrument`): the calls, operators and subscripts of its
# code (module-level code alone when a function may be compiled or traced) keep the last
# torch or numpy value they computed, and the line after
# "scrub-probe-values: " gives each one's place and a constructor of that value (floats to
# four significant digits), for an AssertionError only the random draws' (its inputs, not the
# computation it checks).
import ast
import builtins
import json
import sys
import types

MAX_FRAMES = 4
# Set (scrub rewrites this line) when a control judges every candidate: an accuracy check
# whose reference must still pass, or whose fix must still make it pass. A check fed rebuilt
# values in place of the computation it checks then fails that control, so the values the
# failing lines read are rebuilt for an AssertionError too, floating tensors as random numbers
# (see `tensor_code`); what the code computed is not: `freeze_values` would freeze the
# suspect's own steps.
CHECKED = False
MAX_VALUE = 4000
# Tensors and arrays with at most this many elements keep their values.
MAX_EXACT = 16
# The global through which instrumented code hands over what it computed.
RECORD = "__scrub_record__"
# What instrumented code computed: the place of each wrapped expression, by number, and the
# last torch or numpy value each one computed.
PLACES = []
SEEN = {}


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


def exact(value, globals_):
    """`Invoice(number='A-1', lines=[Line(qty=3, price=Decimal('12.45'))])`, `[Line(...)]`:
    the repr of a value that is no literal, when it is built only from literals, displays and
    calls of classes the script's globals bind (by name, or as an attribute of a bound module)
    and evaluates there to an equal value of the same type: the value itself, not an
    equivalent one."""
    if isinstance(value, (type, types.FunctionType, types.ModuleType)):
        return None
    # Tensors, modules and arrays are constructor()'s, and their reprs are costly.
    if torch_or_numpy(value):
        return None
    try:
        text = repr(value)
        if len(text) > MAX_VALUE:
            return None
        tree = ast.parse(text, mode="eval")
        calls = any(isinstance(node, ast.Call) for node in ast.walk(tree))
        if not calls or not rebuilds(tree.body, globals_):
            return None
        back = eval(compile(tree, "<probe>", "eval"), dict(globals_))
        if type(back) is type(value) and back == value:
            return text
    except Exception:
        pass
    return None


def torch_or_numpy(value):
    """Whether `value` is of a class of torch or numpy."""
    return (getattr(type(value), "__module__", None) or "").split(".")[0] in ("torch", "numpy")


def rebuilds(node, globals_):
    """Whether `node` is made of literals and calls of classes bound in `globals_`."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return rebuilds(node.operand, globals_)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(rebuilds(e, globals_) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and rebuilds(k, globals_) for k in node.keys) and all(
            rebuilds(v, globals_) for v in node.values
        )
    if isinstance(node, ast.Call):
        return (
            isinstance(bound(node.func, globals_), type)
            and all(rebuilds(a, globals_) for a in node.args)
            and all(k.arg is not None and rebuilds(k.value, globals_) for k in node.keywords)
        )
    return False


def bound(node, globals_):
    """What a name or a module's attribute in `node` is bound to in `globals_`, or None."""
    if isinstance(node, ast.Name):
        return globals_.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = bound(node.value, globals_)
        if isinstance(owner, types.ModuleType):
            return getattr(owner, node.attr, None)
    return None


def named(value, globals_):
    if not isinstance(value, (type, types.FunctionType)):
        return None
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and globals_.get(name) is value:
        return name
    return None


def module_name(globals_, module):
    """The name the script's globals bind `module` to (its own name first), or None."""
    if module is None:
        return None
    name = module.__name__
    if globals_.get(name) is module:
        return name
    for key, value in globals_.items():
        if value is module and isinstance(key, str):
            return key
    return None


def number_text(x, digits=None):
    """A Python number as code, NaN and infinities included; a float to `digits` significant
    digits when given."""
    if isinstance(x, float):
        if x != x:
            return "float('nan')"
        if x in (float("inf"), float("-inf")):
            return "float('%s')" % ("inf" if x > 0 else "-inf")
        text = repr(x) if digits is None else "%.*g" % (digits, x)
        if not any(c in text for c in ".e"):
            text += ".0"
        # `1e-9` and `1e20`, as people write them, not `1e-09` and `1e+20`.
        mantissa, e, exponent = text.partition("e")
        return mantissa + e + (str(int(exponent)) if e else "")
    return repr(x)


def nested_text(values, digits=None):
    if isinstance(values, list):
        return "[" + ", ".join(nested_text(v, digits) for v in values) + "]"
    return number_text(values, digits)


def shape_text(shape):
    """`(4, 20)`, `(4,)` or `()`."""
    shape = [str(n) for n in shape]
    return "(%s,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(shape)


def tensor_code(t, torch, tn, digits=None, generic=False):
    """Code that builds a tensor like `t`: its values when small, else its shape and kind;
    with `generic`, floating values are random numbers of the kind whatever the size: a
    check's input as a person writes it, where exact values would let shrinking pick numbers
    (1.0, 0) on which the two sides of the check agree by accident."""
    if type(t) not in (torch.Tensor, torch.nn.Parameter) or t.layout != torch.strided:
        return None
    if t.is_quantized or t.is_meta or t.dtype in (torch.complex32,) or not t.dtype.is_floating_point and t.dtype not in (
        torch.bool, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64
    ):
        return None
    suffix = ""
    base = t.detach()
    if not t.is_contiguous() and t.dim() >= 2 and t.transpose(-1, -2).is_contiguous():
        base, suffix = base.transpose(-1, -2), ".transpose(-1, -2)"
    elif not t.is_contiguous() and t.dim() >= 1:
        suffix = "[..., ::2]"
    dtype = tn + "." + str(t.dtype).split(".")[-1]
    extra = []
    if t.device.type != "cpu":
        extra.append("device=%r" % str(t.device))
    leaf_grad = t.requires_grad and t.is_leaf and type(t) is torch.Tensor
    if leaf_grad:
        extra.append("requires_grad=True")
    shape = list(base.shape)
    if suffix == "[..., ::2]":
        shape[-1] *= 2
    values = base.cpu()
    if t.numel() <= MAX_EXACT and not suffix.startswith("[") and not (generic and t.dtype.is_floating_point):
        default = {
            torch.bool: "bool", torch.int64: "int", torch.get_default_dtype(): "float",
        }
        kind = default.get(t.dtype)
        python = {bool: "bool", int: "int", float: "float"}
        listed = values.tolist()
        first = listed
        while isinstance(first, list) and first:
            first = first[0]
        same = kind is not None and (first == [] or python.get(type(first)) == kind)
        args = [nested_text(listed, digits)] + ([] if same else ["dtype=" + dtype]) + extra
        code = "%s.tensor(%s)" % (tn, ", ".join(args))
    else:
        size = ", ".join(str(n) for n in shape)
        dtype_arg = [] if t.dtype == torch.get_default_dtype() else ["dtype=" + dtype]
        flat = values.reshape(-1)
        if t.dtype.is_floating_point:
            if bool(torch.isnan(flat).all()):
                fill = "float('nan')"
            elif bool(torch.isnan(flat).any()):
                fill = None
            elif bool((flat == 0).all()):
                fill = "0"
            elif bool((flat == 1).all()):
                fill = "1"
            else:
                fill = None
            if fill == "0":
                code = "%s.zeros(%s)" % (tn, ", ".join([size] + dtype_arg + extra))
            elif fill == "1":
                code = "%s.ones(%s)" % (tn, ", ".join([size] + dtype_arg + extra))
            elif fill is not None:
                code = "%s.full(%s, %s)" % (tn, shape_text(shape), ", ".join([fill] + dtype_arg + extra))
            elif bool(torch.isnan(flat).any()):
                # NaNs among numbers: random numbers with a NaN first.
                code = "%s.randn(%s).index_fill_(0, %s.tensor([0]), float('nan'))" % (
                    tn, ", ".join([str(flat.numel())] + dtype_arg), tn)
                code = "%s.reshape(%s)" % (code, size)
                if leaf_grad:
                    code += ".requires_grad_()"
            else:
                code = "%s.randn(%s)" % (tn, ", ".join([size] + dtype_arg + extra))
        else:
            # Integers (indices, labels) keep their largest value everywhere: an index out of
            # range stays out of range; booleans keep whether any is true.
            top = bool(flat.any()) if t.dtype == torch.bool else int(flat.max()) if flat.numel() else 0
            code = "%s.full(%s, %r, dtype=%s)" % (tn, shape_text(shape), top, dtype)
            if extra and extra[0].startswith("device"):
                code = code[:-1] + ", " + extra[0] + ")"
    code += suffix
    if type(t) is torch.nn.Parameter:
        code = "%s.nn.Parameter(%s%s)" % (tn, code, "" if t.requires_grad else ", requires_grad=False")
    elif t.requires_grad and not t.is_leaf:
        code += ".requires_grad_().clone()" if "requires_grad" not in code else ".clone()"
    return code


def module_code(m, torch, tn, moved=True):
    """`torch.nn.Linear(400, 1024)` for a module of a standard torch.nn class, from its own
    attributes, moved to its parameters' dtype and device; checked by building it."""
    import inspect

    cls = type(m)
    if not cls.__module__.startswith("torch.nn.modules") or getattr(torch.nn, cls.__name__, None) is not cls:
        return None
    if isinstance(m, (torch.nn.Sequential, torch.nn.ModuleList)):
        parts = [module_code(c, torch, tn, moved=False) for c in m]
        if any(p is None for p in parts):
            return None
        code = "%s.nn.%s(%s)" % (tn, cls.__name__, ", ".join(parts) if cls is torch.nn.Sequential else "[" + ", ".join(parts) + "]")
    else:
        if list(m.children()):
            return None
        try:
            signature = inspect.signature(cls.__init__)
        except (TypeError, ValueError):
            return None
        args = []
        keywords = False
        for p in list(signature.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("device", "dtype"):
                continue
            if not hasattr(m, p.name):
                if p.default is p.empty:
                    return None
                keywords = True
                continue
            value = getattr(m, p.name)
            if isinstance(p.default, bool) and (value is None or isinstance(value, torch.Tensor)):
                value = value is not None
            # Convolutions store `3` as `(3, 3)`.
            if isinstance(value, tuple) and value and all(v == value[0] for v in value) and (
                isinstance(value[0], int) and not isinstance(value[0], bool)
            ) and not isinstance(p.default, tuple):
                value = value[0]
            if isinstance(value, torch.Tensor) or literal(value) is None:
                if p.default is p.empty:
                    return None
                keywords = True
                continue
            if p.default is not p.empty and type(value) is type(p.default) and value == p.default:
                keywords = True
                continue
            if p.default is p.empty and not keywords:
                args.append(literal(value))
            else:
                keywords = True
                args.append("%s=%s" % (p.name, literal(value)))
        code = "%s.nn.%s(%s)" % (tn, cls.__name__, ", ".join(args))
    try:
        rebuilt = eval(code, {tn: torch})
    except Exception:
        return None
    shapes = lambda mod: [(k, tuple(v.shape)) for k, v in mod.state_dict().items()]
    if shapes(rebuilt) != shapes(m):
        return None
    if not moved:
        return code
    tensors = list(m.parameters()) + list(m.buffers())
    floats = [p for p in tensors if p.dtype.is_floating_point]
    if floats and floats[0].dtype != torch.get_default_dtype():
        code += {torch.float64: ".double()", torch.float16: ".half()", torch.bfloat16: ".bfloat16()"}.get(
            floats[0].dtype, ".to(%s.%s)" % (tn, str(floats[0].dtype).split(".")[-1]))
    if tensors and tensors[0].device.type != "cpu":
        code += ".to(%r)" % str(tensors[0].device)
    if not m.training:
        code += ".eval()"
    return code


def array_code(a, np, nn_, digits=None):
    """Code that builds a numpy array like `a`: its values when small, else its shape."""
    if type(a) is not np.ndarray or a.dtype.kind not in "biuf":
        return None
    dtype = "%s.%s" % (nn_, a.dtype.name)
    if a.size <= MAX_EXACT:
        return "%s.array(%s, dtype=%s)" % (nn_, nested_text(a.tolist(), digits), dtype)
    shape = shape_text(a.shape)
    if a.dtype.kind == "f" and not (a == 0).all():
        return "%s.random.randn(%s).astype(%s)" % (nn_, ", ".join(str(n) for n in a.shape), dtype)
    top = a.max() if a.size else 0
    return "%s.full(%s, %r, dtype=%s)" % (nn_, shape, top.item() if hasattr(top, "item") else top, dtype)


def constructor(value, globals_, digits=None, generic=False):
    """Code that rebuilds a torch or numpy value under the script's names for them, or None
    (`generic`: see `tensor_code`)."""
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    try:
        tn = module_name(globals_, torch)
        if tn is not None:
            if isinstance(value, torch.Tensor):
                return tensor_code(value, torch, tn, digits, generic)
            if isinstance(value, torch.nn.Module):
                return module_code(value, torch, tn)
            if isinstance(value, torch.dtype):
                return "%s.%s" % (tn, str(value).split(".")[-1])
            if isinstance(value, torch.device):
                return "%s.device(%r)" % (tn, str(value))
            if isinstance(value, torch.Size):
                return "%s.Size(%r)" % (tn, list(value))
        nn_ = module_name(globals_, np)
        if nn_ is not None and isinstance(value, np.ndarray):
            return array_code(value, np, nn_, digits)
    except Exception:
        return None
    return None


def arguments(part):
    """The arguments of the calls in `part` that call nothing themselves: values a failing
    call receives, worth rebuilding when they are no name (`x @ w.t()`, `-x`)."""
    out = []
    for node in ast.walk(part):
        if not isinstance(node, ast.Call):
            continue
        for arg in list(node.args) + [k.value for k in node.keywords]:
            if isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Starred)):
                continue
            inner = list(ast.walk(arg))
            if any(isinstance(n, (ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield,
                                  ast.YieldFrom, ast.comprehension)) for n in inner):
                continue
            out.append(arg)
    return out


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


def frame_facts(frame, line, source, tree, handled, path, rebuild=True, generic=False):
    values = {}
    scope = dict(frame.f_locals)
    # Python unbinds `except ... as exc` when the handler raises: give it back its exception.
    if handled is not None:
        for name in handled_names(tree, line):
            scope.setdefault(name, handled)
    for part in statement_at(tree, line):
        reads = [
            node
            for node in ast.walk(part)
            if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))
            and isinstance(node.ctx, ast.Load)
        ]
        passed = arguments(part)
        for node in reads + passed:
            text = ast.get_source_segment(source, node)
            if not text or text in values:
                continue
            try:
                code = compile(ast.Expression(node), path, "eval")
                value = eval(code, frame.f_globals, scope)
            except BaseException:
                continue
            shown = (
                literal(value)
                or exact(value, frame.f_globals)
                or named(value, frame.f_globals)
                or (constructor(value, frame.f_globals, generic=generic) if rebuild else None)
            )
            if shown is not None and not (node in passed and shown == text):
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


# What a random draw's code says: `torch.randn(…)`, `x.uniform_(-7, -3)`, `np.random.rand(…)`.
DRAWS = (".rand", "uniform_(", "normal_(", ".normal(", ".uniform(", "bernoulli")


def drawn(lines, start, end):
    """Whether the code between `start` and `end` ((line, column), lines from 1) draws random
    numbers, by its text."""
    (l0, c0), (l1, c1) = start, end
    if l0 != l1 or not 0 < l0 <= len(lines):
        return False
    code = lines[l0 - 1][c0:c1]
    return any(d in code for d in DRAWS)


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
    # An accuracy check (`assert_close(actual, expected)`) fed rebuilt random tensors would
    # fail without the computation it checks: no constructors for an AssertionError.
    rebuild = not isinstance(exc, AssertionError)
    # What the code computed, before `frame_facts` evaluates the failing lines' expressions
    # again (which may run instrumented code).
    values = []
    lines = source.splitlines()
    if frames:
        globals_ = frames[-1][0].f_globals
        for number, value in sorted(SEEN.items()):
            start, end = PLACES[number]
            # A check's inputs drawn at random are no computation it checks: their values
            # may stand in for the draw (and the seed go).
            if not rebuild and not drawn(lines, start, end):
                continue
            # Floats to four significant digits, as a person writes them.
            code = constructor(value, globals_, digits=4)
            if code is not None:
                values.append({"start": start, "end": end, "code": code})
    facts = [
        frame_facts(
            f, line, source, tree, exc.__context__ if i == 0 else None, path,
            rebuild or CHECKED, generic=not rebuild,
        )
        for i, (f, line) in enumerate(frames)
    ]
    sys.stderr.write("\nscrub-probe-values: " + json.dumps(values))
    sys.stderr.write("\nscrub-probe: " + json.dumps(facts) + "\n")


class Wrap(ast.NodeTransformer):
    """Wraps the calls, operators and subscripts of the script (not a call's callee) in
    `__scrub_record__(N, …)`, numbering their places in `PLACES`; with `functions` false,
    only those of module-level code (not of functions, classes, lambdas or comprehensions,
    whose code may be compiled or traced)."""

    def __init__(self, functions):
        self.functions = functions

    def visit_FunctionDef(self, node):
        return self.generic_visit(node) if self.functions else node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_FunctionDef

    def visit_Call(self, node):
        # The callee itself stays as it is: `nn.Linear(2, 1)(x)` records the call, not the
        # module; what the callee computes inside is wrapped.
        node.func = self.generic_visit(node.func)
        node.args = [self.visit(a) for a in node.args]
        for keyword in node.keywords:
            keyword.value = self.visit(keyword.value)
        return self.wrap(node)

    def visit_BinOp(self, node):
        return self.wrap(self.generic_visit(node))

    visit_UnaryOp = visit_BinOp

    def visit_Subscript(self, node):
        node = self.generic_visit(node)
        return self.wrap(node) if isinstance(node.ctx, ast.Load) else node

    def wrap(self, node):
        PLACES.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)))
        call = ast.Call(
            func=ast.Name(id=RECORD, ctx=ast.Load()),
            args=[ast.Constant(len(PLACES) - 1), node],
            keywords=[],
        )
        return ast.copy_location(call, node)


def record(number, value):
    """Keeps `value` when it is torch's or numpy's, as the last value of place `number`."""
    if torch_or_numpy(value):
        SEEN[number] = value
    return value


# Words of a script whose functions may be compiled, traced or transformed: only its
# module-level code is wrapped.
TRACED = ("compile", "dynamo", "torch.export", "make_fx", "symbolic_trace", "torch.func",
          "functorch", "vmap", "torch.jit")


def instrument(source, path, globals_):
    """`source` compiled as `path` with its expressions wrapped (see `Wrap`; only those of
    module-level code when a function may be traced) and `globals_` given the function they
    call; plain when the script imports neither torch nor numpy, or the wrapping fails."""
    text = source.decode("utf-8", "replace") if isinstance(source, bytes) else source
    PLACES.clear()
    SEEN.clear()
    if "torch" not in text and "numpy" not in text:
        return compile(source, path, "exec")
    globals_[RECORD] = record
    try:
        tree = ast.parse(source, path)
        functions = not any(word in text for word in TRACED)
        tree = ast.fix_missing_locations(Wrap(functions).visit(tree))
        return compile(tree, path, "exec")
    except Exception:
        PLACES.clear()
        return compile(source, path, "exec")


if __name__ == "__main__":
    sys.argv = ["repro.py"]
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__="repro.py", __builtins__=builtins, __cached__=None)
    with open("repro.py", "rb") as fh:
        code = instrument(fh.read(), "repro.py", main.__dict__)
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        try:
            report(exc, "repro.py")
        except Exception:
            pass
        sys.exit(1)
