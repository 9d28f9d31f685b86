"""scrub's warm worker: import a repro's modules once, then fork a child per candidate.

Started as `PY zygote.py ORIGINAL` with the worker's environment (PYTHONHASHSEED, CUDA_VISIBLE_DEVICES);
with `--die-with-parent` (a Ray actor's), it is killed when its parent dies.
It imports the top-level modules that ORIGINAL imports and that import cleanly, runs nothing
else, and serves requests on stdin, one JSON object per line:

    {"dir": D, "script": S, "stdout": O, "stderr": E, "probe": P, "max_memory": M}

For each it forks a child that runs S as `__main__` in D with its output in O and E, in a
process group of its own, and answers `{"pid": P}` at once and `{"pid": P, "status": W,
"maxrss": B}` (the raw wait status, the child's peak resident memory in bytes) when the child
is gone. The child behaves as `python S` would: uncaught
exceptions are printed by sys.excepthook and exit with status 1, SystemExit is honoured,
non-daemon threads are joined and atexit handlers run before it exits. With "probe" (the path
of scrub's probe.py), the script runs as the probe instruments it, and an uncaught exception
is also reported as the probe reports it. The zygote compiles each probe once, before it forks.

With `--here`, each candidate runs in the worker's own process instead (see `run_here`), and
the answer adds what could not be put back ("dirty") and whether the worker now holds more
memory than it may keep between candidates under M, the bytes a candidate may hold ("worn").
"""

import sys

# The modules a fresh `python script` holds before the script runs (the interpreter's own):
# the only ones a candidate sees before its imports (see `Hidden`).
FRESH = frozenset(sys.modules)
# For each module the worker loaded, the modules that a fresh import of it would load: those
# it asks for, loaded already or not, and those that loading it loaded (see `Recorder`).
NEEDS = {}


class Recorder:
    """Records `NEEDS` while the worker imports. First on `sys.meta_path`, it hands each
    import to the finders after it and runs the module's loader under a `Recording`, which
    notes what loading the module loaded; `__import__` and `importlib.import_module` note
    what the module being loaded asks for, which may be loaded already."""

    def __init__(self):
        self.loading = []  # the modules being loaded, innermost last
        self.plain = None

    def start(self):
        import builtins
        import importlib

        sys.meta_path.insert(0, self)
        self.plain = (builtins.__import__, importlib.import_module)
        builtins.__import__ = self.import_
        importlib.import_module = self.import_module

    def stop(self):
        import builtins
        import importlib

        sys.meta_path.remove(self)
        builtins.__import__, importlib.import_module = self.plain

    def import_(self, name, globals=None, locals=None, fromlist=(), level=0):
        module = self.plain[0](name, globals, locals, fromlist, level)
        if self.loading:
            try:
                if level:
                    name = _bootstrap._resolve_name(
                        name, _bootstrap._calc___package__(globals), level)
                self.note(name, fromlist)
            except Exception:
                pass
        return module

    def import_module(self, name, package=None):
        module = self.plain[1](name, package)
        if self.loading:
            try:
                if name.startswith("."):
                    level = len(name) - len(name.lstrip("."))
                    name = _bootstrap._resolve_name(name[level:], package, level)
                self.note(name, ())
            except Exception:
                pass
        return module

    def note(self, name, fromlist):
        needs = NEEDS.setdefault(self.loading[-1], set())
        needs.add(name)
        for item in fromlist or ():
            if f"{name}.{item}" in sys.modules:
                needs.add(f"{name}.{item}")

    def find_spec(self, name, path=None, target=None):
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = Recording(self, spec.loader, name)
        return spec


class Recording:
    """A module's loader, which notes what loading the module loaded."""

    def __init__(self, recorder, loader, name):
        self.recorder = recorder
        self.loader = loader
        self.name = name

    def __getattr__(self, attr):
        return getattr(self.loader, attr)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        before = set(sys.modules)
        self.recorder.loading.append(self.name)
        try:
            self.loader.exec_module(module)
        finally:
            self.recorder.loading.pop()
            # The module keeps its own loader, as a plain import leaves it.
            # (past a module class's own `__setattr__`: torch's config modules refuse it)
            try:
                if getattr(module, "__loader__", None) is self:
                    type(sys).__setattr__(module, "__loader__", self.loader)
                spec = getattr(module, "__spec__", None)
                if spec is not None and spec.loader is self:
                    spec.loader = self.loader
            except Exception:
                pass
            NEEDS.setdefault(self.name, set()).update(m for m in sys.modules if m not in before)


def needed(name):
    """`name` and what a fresh import of it loads: its packages, and what they need."""
    found = set()
    todo = [name]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        parent = name.rpartition(".")[0]
        if parent:
            todo.append(parent)
        todo.extend(NEEDS.get(name, ()))
    return found


import _frozen_importlib as _bootstrap

RECORDER = Recorder()
if __name__ == "__main__":
    # Only as the worker: imported for its helpers (the minifier's queries), it records nothing.
    RECORDER.start()

import ast
import atexit
import builtins
import contextlib
import gc
import importlib
import threading
import traceback
import types
from importlib.util import spec_from_loader
import json
import os
import resource


# Modules that a call imports on its first use, which every forked child would import again:
# `torch.compile` imports dynamo and inductor (about 2.5 s of CPU that each candidate that
# compiles would pay), an optimizer's first step dynamo (1.4 s), `torch.testing.assert_close`
# the distributed tensor when it fails (0.5 s).
LAZY = {
    "torch.compile": ("torch._dynamo", "torch._inductor.compile_fx"),
    "torch._dynamo": ("torch._dynamo",),
    # `torch.export` imports its tracer (and dynamo) on the first call: 2.7 s a candidate.
    "torch.export": ("torch.export", "torch.export._trace"),
    "torch.optim": ("torch._dynamo",),
    "torch.testing.assert_close": ("torch.distributed.tensor",),
}
# Those a worker that runs candidates in its own process preloads too: a compile's or an
# export's machinery is large, and loaded by a candidate it would count against that
# candidate's memory (see `worn`). The others it leaves to the first candidate that needs them,
# which loads them for every later one: preloaded, they would only delay its start (an
# optimizer's dynamo, 1.3 s, for a script that fails before its first step).
HEAVY = ("torch.compile", "torch._dynamo", "torch.export")


def preload(original, here):
    """Import every top-level module the script imports, ignoring those that fail, and the
    modules its calls of `LAZY` would import (only the `HEAVY` ones when candidates run
    `here`, in the worker's own process)."""
    try:
        with open(original, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return
    lazy = lazy_imports(tree, HEAVY if here else LAZY)
    for name in top_level_imports(tree) + lazy:
        try:
            importlib.import_module(name)
        except BaseException:
            pass
    if "torch._inductor.compile_fx" in lazy:
        warm_compiler()


class Hidden:
    """The modules the worker loaded that a candidate has not imported, out of its sight
    until it does.

    A warm worker holds every module it loaded: `logging.config` is an attribute of `logging`
    there even for a candidate that only imports `logging`, and a candidate that relies on that
    fails in a fresh process. So, before the candidate runs, every module a fresh interpreter
    would not hold yet leaves `sys.modules` and its package's attributes; this finder, first on
    `sys.meta_path`, brings one back when the candidate (or the code it runs) imports it, with
    what a fresh import of it loads (`needed`). The loaded code is reused, not run again: the
    candidate sees what a fresh import shows. `restore` puts back what is still hidden."""

    def __init__(self):
        self.modules = {}
        for name in list(sys.modules):
            if name not in FRESH and name != "__main__":
                self.modules[name] = sys.modules.pop(name)
        # Each package's submodules that it holds as attributes, to unset now and set again
        # as they come back into sight (in its `__dict__`: a module's own `__getattr__` or
        # `__setattr__` may import or refuse).
        self.children = {}
        for name, module in self.modules.items():
            parent, _, child = name.rpartition(".")
            owner = self.modules.get(parent) or sys.modules.get(parent)
            attrs = getattr(owner, "__dict__", None)
            if parent and attrs is not None and attrs.get(child) is module:
                del attrs[child]
                self.children.setdefault(parent, []).append(name)
        sys.meta_path.insert(0, self)

    def find_spec(self, name, path=None, target=None):
        # The module goes back through the import system (which puts it in `sys.modules` and
        # sets its package's attribute); what importing it loads, first.
        module = self.modules.pop(name, None)
        if module is None:
            return None
        for other in needed(name) - {name}:
            self.reveal(other)
        return spec_from_loader(name, Reveal(self, module))

    def reveal(self, name):
        """Puts `name` back where a fresh import of it puts it: `sys.modules`, and its
        package's attribute when the package is in sight."""
        module = self.modules.pop(name, None)
        if module is None:
            return
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and name in self.children.get(parent, ()):
            vars(sys.modules[parent])[child] = module
        self.adopt(name, module)

    def adopt(self, name, module):
        """Sets the attributes of package `name` for its submodules back in sight."""
        for other in self.children.get(name, ()):
            if other in sys.modules:
                vars(module)[other.rpartition(".")[2]] = sys.modules[other]

    def restore(self):
        """Everything back in sight, as the worker had it (a candidate run in place)."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for name, module in self.modules.items():
            sys.modules.setdefault(name, module)
        self.modules.clear()
        # Set again, not only where unset: a candidate that rebinds a package's submodule
        # (`torch._dynamo.config = True`) would leave it so for the next.
        for parent, names in self.children.items():
            owner = sys.modules.get(parent)
            attrs = getattr(owner, "__dict__", None)
            for name in names:
                if attrs is not None and name in sys.modules:
                    attrs[name.rpartition(".")[2]] = sys.modules[name]


class Reveal:
    """The loader of a hidden module: the module itself, as it was."""

    def __init__(self, hidden, module):
        self.hidden = hidden
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # The import machinery set its spec on the module; the module keeps its own.
        try:
            type(sys).__setattr__(module, "__spec__", self.spec)
        except Exception:
            pass
        self.hidden.adopt(module.__name__, module)


def warm_compiler():
    """Compile and run a small function with inductor once, then reset dynamo to the state a
    new process has. A forked child's first compile then skips the imports and set-up that
    the first compile of a process makes: a cached graph 0.9 s → 0.1 s, a new kernel 1.7 s →
    0.8 s on this project's 2-core machine. Its kernel is too small to start OpenMP's threads
    (a fork of a process whose threads have started waits for them forever), and the thread
    count is left alone (setting it starts a thread pool that a fork cannot use); it runs on
    the CPU (CUDA stays uninitialised), draws no random numbers and leaves no warning
    registered.

    The first kernel a process compiles into an empty cache costs about 10 s: under
    `SCRUB_WARM_INDUCTOR_CACHE`, a cache that outlives the reduction, it is compiled there
    first (found there, under a second), then once more into the reduction's own cache, which
    a process sets up on its first compile into it (0.3 s here; each fork would pay it)."""
    own_cache = os.environ.get("SCRUB_WARM_INDUCTOR_CACHE")
    try:
        import torch

        if own_cache:
            with inductor_cache(own_cache):
                compile_once(torch)
        compile_once(torch)
    except BaseException:
        pass


def compile_once(torch):
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.compile(lambda x: x * 2 + 1)(torch.ones(4))
    finally:
        torch._dynamo.reset()
        torch._dynamo.utils.counters.clear()
        stop_compile_pools()


@contextlib.contextmanager
def inductor_cache(path):
    """`TORCHINDUCTOR_CACHE_DIR` set to `path` for the block."""
    before = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = path
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = before


def stop_compile_pools():
    """Shut down inductor's compile pools and forget them: a fork inherits a pool without its
    threads, and a compile that waits on it waits forever (inductor's own fork hook misses
    `AsyncCompile.pool`)."""
    async_compile = sys.modules.get("torch._inductor.async_compile")
    if async_compile is None:
        return
    pools = async_compile.AsyncCompile
    if pools.pool.cache_info().currsize:
        pools.pool().shutdown(wait=True)
    pools.pool.cache_clear()
    async_compile.shutdown_compile_workers()


def top_level_imports(tree):
    """The modules that the script's top-level `import` statements name."""
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return [name for name in names if name != "__main__"]


def lazy_imports(tree, keys):
    """The modules of `LAZY` under `keys` that what the script names would import:
    `torch.compile(…)`, `@torch.compile`, `import torch.optim`, `from torch import compile`."""
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            named.add(dotted(node))
        elif isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            named.add(node.module)
            named.update(node.module + "." + alias.name for alias in node.names)
    return [name for key, names in LAZY.items() if key in keys and key in named for name in names]


def dotted(node):
    """`a.b.c` for an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def run_child(request):
    """In the forked child: become `python script` and never return."""
    code = 1
    try:
        become_fresh()
        code = run_request(request)
    finally:
        os._exit(code)


def become_fresh():
    """In a forked child, before its request: a process group of its own, killed with the
    zygote, and what a fresh interpreter has (its modules, fresh random state)."""
    os.setpgid(0, 0)
    die_with_parent()
    fresh_random_state()
    Hidden()


def run_request(request):
    """In a fresh child: run the request's script with its output redirected; the exit code."""
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (null, out, err):
        os.close(fd)
    os.chdir(request["dir"])
    script = request["script"]
    as_run(script)
    sys.path[0] = os.getcwd()
    # `python repro.py` gives the script an absolute `__file__` (3.9+); so does this.
    code = execute(os.path.abspath(script), request.get("probe"))
    record_compiles()
    return code


class Spare:
    """A child forked ahead of its request: it forks and gets fresh (see `become_fresh`)
    while the candidate before it runs, then reads its request from a pipe. A small
    candidate's run then starts without the 2-3 ms of both (more with torch loaded)."""

    def __init__(self):
        read, self.pipe = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.pipe)
            code = 1
            try:
                become_fresh()
                request = read_request(read)
                code = run_request(request) if request is not None else 0
            finally:
                os._exit(code)
        os.close(read)
        try:
            os.setpgid(self.pid, self.pid)
        except OSError:
            pass

    def start(self, request):
        """Hands the spare its request; false when it is gone (reaped here)."""
        try:
            os.write(self.pipe, json.dumps(request).encode())
            return True
        except OSError:
            os.waitpid(self.pid, 0)
            return False
        finally:
            os.close(self.pipe)


def read_request(fd):
    """The request written to the pipe `fd`, or `None` at its end with none (the zygote went)."""
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return json.loads(b"".join(chunks)) if chunks else None


def as_run(script):
    """`sys.argv` (and `sys.orig_argv`, 3.10+) as `python script` has them."""
    sys.argv = [script]
    if hasattr(sys, "orig_argv"):
        sys.orig_argv = sys.orig_argv[:1] + [script]


def record_compiles():
    """Add a line of inductor's FX graph cache counters to SCRUB_COMPILE_COUNTS when the
    candidate compiled a graph (the zygote's own warm-up is cleared from them)."""
    path = os.environ.get("SCRUB_COMPILE_COUNTS")
    utils = sys.modules.get("torch._dynamo.utils")
    if not path or utils is None:
        return
    try:
        counters = utils.counters["inductor"]
        hit, miss = counters["fxgraph_cache_hit"], counters["fxgraph_cache_miss"]
        if hit or miss:
            line = json.dumps({"hit": hit, "miss": miss}) + "\n"
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
    except BaseException:
        pass


def fresh_random_state():
    """Seed torch's and numpy's generators afresh, as a new process does: a forked child
    inherits the zygote's, so every candidate would draw the same numbers (Python's `random`
    reseeds itself after a fork)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.seed()
        except BaseException:
            pass
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        try:
            numpy.random.seed()
        except BaseException:
            pass


def die_with_parent():
    """Linux: the child is killed when the zygote dies, so that none outlives scrub."""
    try:
        LIBC[0].prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() == 1:
            os._exit(1)
    except BaseException:
        pass


def load_libc():
    """The C library, loaded once in the zygote (each fork would pay about 5 ms for it)."""
    try:
        import ctypes

        LIBC.append(ctypes.CDLL(None, use_errno=True))
    except BaseException:
        pass


LIBC = []


def reach():
    """How many calls deep a recursion started here gets before a `RecursionError`."""

    def down(n):
        try:
            return down(n + 1)
        except RecursionError:
            return n

    return down(0)


# How deep the module-level code of `python script` can recurse: this module's is that.
REACH = reach()
REACH_CODE = compile("REACH = reach()", "<scrub>", "exec")


def headroom():
    """Lets code run by `exec` from the caller's frame recurse as deep as in `python script`
    (the zygote's frames are below it), and read and set the recursion limit as there;
    returns what puts the limit back."""
    here = {"reach": reach}
    # Without a probe's hooks, which would be unset by the `RecursionError` reached in them.
    hooks = sys.getprofile(), sys.gettrace()
    sys.setprofile(None)
    sys.settrace(None)
    try:
        exec(REACH_CODE, here)
    finally:
        sys.setprofile(hooks[0])
        sys.settrace(hooks[1])
    # Measured from here, one frame deeper than the caller's `exec`.
    extra = REACH - here["REACH"] - 1
    get, set_ = sys.getrecursionlimit, sys.setrecursionlimit
    set_(get() + extra)
    sys.getrecursionlimit = lambda: get() - extra
    sys.setrecursionlimit = lambda limit: set_(limit + extra)

    def restore():
        sys.getrecursionlimit, sys.setrecursionlimit = get, set_
        set_(get() - extra)

    return restore


def probe_code(path):
    """The probe at `path`, compiled once per source: called in the zygote before it forks,
    a child finds it compiled (compiling the probe takes 4-7 ms, as long as a small candidate's
    whole run)."""
    with open(path, "rb") as fh:
        source = fh.read()
    code = PROBES.get(source)
    if code is None:
        code = PROBES[source] = compile(source, path, "exec")
    return code


PROBES = {}


def execute(script, probe=None, ending=None):
    """Run `script` (an absolute path) as `python script` runs its `__main__`. `ending` runs
    in place of the interpreter's end (joining non-daemon threads, the atexit handlers)."""
    code = 0
    prober = None
    room = None
    if probe:
        try:
            prober = {"__name__": "scrub_probe", "__builtins__": builtins}
            exec(probe_code(probe), prober)
        except BaseException:
            prober = None
    try:
        with open(script, "rb") as fh:
            source = fh.read()
        main = types.ModuleType("__main__")
        main.__dict__.update(__file__=script, __builtins__=builtins, __cached__=None)
        try:
            if prober is not None:
                # The probe's instrumented code, which keeps what the script computed.
                compiled = prober["instrument"](source, script, main.__dict__)
            else:
                compiled = compile(source, script, "exec")
        except SyntaxError as exc:
            # Python reports a script that does not compile without a traceback.
            traceback.print_exception(type(exc), exc, None)
            return 1
        sys.modules["__main__"] = main
        room = headroom()
        exec(compiled, main.__dict__)
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException as exc:
        # Leave out the zygote's own frames, as a plain `python script` has none.
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != script:
            tb = tb.tb_next
        if tb is not None:
            exc.__traceback__ = tb
        try:
            sys.excepthook(type(exc), exc, exc.__traceback__)
        except BaseException:
            traceback.print_exception(type(exc), exc, exc.__traceback__)
        if prober is not None:
            try:
                prober["report"](exc, script)
            except BaseException:
                pass
        code = 1
    if prober is not None:
        # A runner that traces (the lines that ran, what library calls return) stops with the
        # script, also where the script did not raise: a worker runs candidates after it.
        sys.settrace(None)
        sys.setprofile(None)
    if room is not None:
        # After the probe's hooks: the probe sees nothing of it.
        room()
    try:
        if ending is not None:
            ending()
        else:
            threading._shutdown()
            atexit._run_exitfuncs()
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            code = code or 120
    return code


def run_here(request, clean):
    """Run the script in this process as a forked child would run it, then put back what it
    changed (see `State`). Returns its wait status and what is still not as it was: the
    worker is not used again then."""
    import atexit
    import threading

    threads = set(threading.enumerate())
    registered = []
    register = atexit.register

    def capture(func, *args, **kwargs):
        registered.append((func, args, kwargs))
        return func

    def ending():
        # The interpreter's end, for what the candidate started and registered: thread pools
        # stop (as `concurrent.futures` has them do at exit), other threads are waited for.
        for thread in threading.enumerate():
            if thread not in threads:
                stop_pool_of(thread)
        for thread in threading.enumerate():
            if thread not in threads and not thread.daemon:
                thread.join()
        for func, args, kwargs in reversed(registered):
            func(*args, **kwargs)

    saved = [os.dup(fd) for fd in (0, 1, 2)]
    code = 1
    hidden = None
    try:
        redirect(request)
        os.chdir(request["dir"])
        fresh_random_state()
        hidden = Hidden()
        script = request["script"]
        as_run(script)
        sys.path[0] = os.getcwd()
        atexit.register = capture
        code = execute(os.path.abspath(script), request.get("probe"), ending)
        record_compiles()
    finally:
        atexit.register = register
        if hidden is not None:
            hidden.restore()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        for fd, copy in zip((0, 1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)
    return (code & 0xFF) << 8, clean.restore(threads)


def stop_pool_of(thread):
    """Shuts down the `ThreadPoolExecutor` that `thread` works for, if it does: its workers
    would wait for work forever (inductor keeps its compile pool for the next compile)."""
    from concurrent.futures import thread as pools

    if getattr(thread, "_target", None) is pools._worker:
        executor = thread._args[0]()
        if executor is not None:
            executor.shutdown(wait=True)


def redirect(request):
    """fd 0 from /dev/null, fds 1 and 2 to the request's files."""
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for fd, target in ((null, 0), (out, 1), (err, 2)):
        os.dup2(fd, target)
        os.close(fd)


class State:
    """What a script can change in its process that a fresh process would not have, taken
    once the worker is ready: the modules, the environment, the working directory, argv and
    path, the warning filters, the standard streams, and torch's global settings (default
    dtype and device, grad and anomaly modes, deterministic flags, threads, print options,
    `torch.backends` flags (the quantized engine, cuDNN's, TF32), matmul precision, dynamo's
    and inductor's configs). `restore` puts them back after a candidate, resets
    dynamo and frees CUDA's cache, and says what still differs."""

    def __init__(self):
        import warnings

        self.modules = set(sys.modules)
        self.main = sys.modules.get("__main__")
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.argv, self.path = list(sys.argv), list(sys.path)
        self.filters = list(warnings.filters)
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.torch = torch_state()

    def restore(self, threads):
        import gc
        import threading
        import warnings

        sys.stdin, sys.stdout, sys.stderr = self.streams
        sys.modules["__main__"] = self.main
        loaded = False
        for name in set(sys.modules) - self.modules:
            if own_module(sys.modules.get(name)):
                del sys.modules[name]
            else:
                self.modules.add(name)
                loaded = True
        os.environ.clear()
        os.environ.update(self.environ)
        os.chdir(self.cwd)
        sys.argv[:], sys.path[:] = self.argv, self.path
        warnings.filters[:] = self.filters
        warnings._filters_mutated()
        dirty = restore_torch(self.torch)
        gc.collect()
        if loaded:
            # A library the candidate loaded stays, as what the worker loaded before its
            # first: left out of every later collection too (dynamo's objects would cost each
            # candidate 50 ms).
            gc.freeze()
        if any(t not in threads and t.is_alive() for t in threading.enumerate()):
            dirty.append("a thread the candidate started is still running")
        if children():
            dirty.append("a process the candidate started is still running")
        if torch_state(self.torch) != self.torch:
            dirty.append("torch's settings")
        if dict(os.environ) != self.environ or os.getcwd() != self.cwd:
            dirty.append("the environment")
        if loaded and not dirty:
            # The config modules it loaded, as imported: their settings from now on, which a
            # later candidate's change is put back to.
            self.torch = torch_state()
        return dirty


def resident(field):
    """This process's resident memory now (`VmRSS`) or at its peak (`VmHWM`), in bytes; 0
    when /proc does not say."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def reset_peak():
    """Starts this process's peak resident memory (`VmHWM`) again from what it holds now, so
    that a candidate run here is measured alone."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


def worn(ready, limit):
    """Why a worker that held `ready` bytes when it got ready is not to run another candidate,
    if it is not: after this one it holds more than its mark, which is what it held again (at
    least 1 GiB more), and at most half of what a candidate has left under `limit` (the bytes a
    candidate's group may hold). Memory a candidate left behind would count against the next."""
    mark = ready + max(ready, 1 << 30)
    if limit:
        mark = min(mark, ready + max(limit - ready, 0) // 2)
    held = resident("VmRSS")
    if held <= mark:
        return None
    return f"it held {held >> 20} MiB after its candidate, more than its mark of {mark >> 20} MiB"


def children():
    """The pids of this process's children that are still there (zombies reaped)."""
    found = []
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            if fields[0] == "Z":
                try:
                    os.waitpid(int(entry), os.WNOHANG)
                except OSError:
                    pass
                continue
            found.append(int(entry))
    return found


def own_module(module):
    """Whether a module added by a candidate is the script's own (or made by it), not a
    library's: a library module stays imported, as it would in the zygote's next fork, and
    removing it would leave two copies of it."""
    path = getattr(module, "__file__", None)
    if not path:
        return True
    libraries = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    return not any(os.path.abspath(path).startswith(os.path.abspath(p)) for p in libraries)


def torch_state(before=None):
    """torch's global settings, when torch is imported; a config module that was `AS_IMPORTED`
    `before` and still is stays so."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        state = {
            "dtype": torch.get_default_dtype(),
            "grad": torch.is_grad_enabled(),
            "anomaly": torch.is_anomaly_enabled(),
            "deterministic": (torch.are_deterministic_algorithms_enabled(),
                              torch.is_deterministic_algorithms_warn_only_enabled()),
            "threads": torch.get_num_threads(),
            "print": dict(vars(torch._tensor_str.PRINT_OPTS)),
            "backends": backend_flags(torch),
            "matmul_precision": torch.get_float32_matmul_precision(),
        }
        if hasattr(torch, "get_default_device"):
            state["device"] = str(torch.get_default_device())
        for name in CONFIGS:
            state[name] = config_state(name, (before or {}).get(name))
        return state
    except BaseException as exc:
        return {"unreadable": repr(exc)}


# The flags of `torch.backends` a candidate may set (`torch.backends.quantized.engine =
# "qnnpack"`), by module and attribute.
BACKEND_FLAGS = (("quantized", "engine"), ("cudnn", "enabled"), ("cudnn", "benchmark"),
                 ("cudnn", "deterministic"), ("cudnn", "allow_tf32"), ("mkldnn", "enabled"),
                 ("cuda.matmul", "allow_tf32"), ("cuda.matmul", "allow_fp16_reduced_precision_reduction"))


def backend(torch, module):
    """`torch.backends.MODULE` (`cuda.matmul`: `torch.backends.cuda.matmul`)."""
    owner = torch.backends
    for part in module.split("."):
        owner = getattr(owner, part)
    return owner


def backend_flags(torch):
    """The values of `BACKEND_FLAGS` that can be read."""
    flags = {}
    for module, attribute in BACKEND_FLAGS:
        try:
            flags[(module, attribute)] = getattr(backend(torch, module), attribute)
        except Exception:
            pass
    return flags


def restore_backend_flags(torch, flags):
    """Sets each of `flags` back where a candidate changed it."""
    for (module, attribute), value in flags.items():
        owner = backend(torch, module)
        if getattr(owner, attribute) != value:
            setattr(owner, attribute, value)


# torch's config modules, whose settings a candidate may change.
CONFIGS = ("torch._dynamo.config", "torch._inductor.config")
# The state of a config module not imported yet, or imported and left as its import made it:
# what a fresh process has. Importing dynamo's config imports dynamo (1.3 s on this project's
# 2-core machine), which a worker need not pay before its first candidate.
AS_IMPORTED = "as its import left it"


def config_state(name, before=None):
    """The settings of config module `name`: `AS_IMPORTED`, or what `save_config` gives."""
    config = sys.modules.get(name)
    if config is None:
        if fresh_is_known():
            return AS_IMPORTED
        # A torch whose config modules cannot tell a setting changed: imported now, so that
        # a candidate that imports them does not look as if it had changed them.
        config = importlib.import_module(name)
    if before == AS_IMPORTED and untouched(config):
        return AS_IMPORTED
    return config.save_config()


def fresh_is_known():
    """Whether torch's config modules tell whether every setting is still as imported."""
    module = sys.modules.get("torch.utils._config_module")
    return hasattr(getattr(module, "ConfigModule", None), "_is_default")


def untouched(config):
    """Whether every setting of `config` is as its import made it: at its default, or set to
    its default again (dynamo's tracing of a higher-order op patches settings and sets them
    back so). A setting that the environment forces counts as changed: its worker is
    replaced, which is only slower."""
    try:
        from torch.utils._config_module import _UNSET_SENTINEL as unset

        dynamic = getattr(config, "_implication_dynamic_sources", ())
        return all(
            config._is_default(key)
            or (key not in dynamic and set_to_default(entry, unset))
            for key, entry in config._config.items()
        )
    except BaseException:
        return False


def set_to_default(entry, unset):
    """Whether a config entry holds its default as a value set, with no environment variable
    for it."""
    import contextvars

    override = entry.user_override
    value = override.get() if isinstance(override, contextvars.ContextVar) else override
    return (value is not unset and entry.env_value_force is unset
            and entry.env_value_default is unset and bool(value == entry.default))


def restore_torch(state):
    """Puts torch's settings back to `state`; what could not be, in words."""
    torch = sys.modules.get("torch")
    if torch is None or state is None:
        return []
    dirty = []
    steps = [
        lambda: torch.set_default_dtype(state["dtype"]),
        lambda: torch.set_grad_enabled(state["grad"]),
        lambda: torch.autograd.set_detect_anomaly(state["anomaly"]),
        lambda: vars(torch._tensor_str.PRINT_OPTS).update(state["print"]),
        lambda: restore_backend_flags(torch, state["backends"]),
    ]
    if torch.get_float32_matmul_precision() != state["matmul_precision"]:
        steps.append(lambda: torch.set_float32_matmul_precision(state["matmul_precision"]))
    # Set only when changed: setting it sets inductor's `deterministic` too, which a config
    # module as its import left it must not have (see `untouched`).
    deterministic = (torch.are_deterministic_algorithms_enabled(),
                     torch.is_deterministic_algorithms_warn_only_enabled())
    if deterministic != state["deterministic"]:
        steps.append(lambda: torch.use_deterministic_algorithms(
            state["deterministic"][0], warn_only=state["deterministic"][1]))
    if "device" in state:
        steps.append(lambda: torch.set_default_device(
            None if state["device"] == "cpu" else state["device"]))
    if torch.get_num_threads() != state["threads"]:
        steps.append(lambda: torch.set_num_threads(state["threads"]))
    for name in CONFIGS:
        config = sys.modules.get(name)
        # One `AS_IMPORTED` cannot be put back: if the candidate changed it, the state taken
        # after it says so (see `State.restore`).
        if config is None or state.get(name, AS_IMPORTED) == AS_IMPORTED:
            continue
        if config.save_config() != state[name]:
            steps.append(lambda config=config, name=name: config.load_config(state[name]))
    if "torch._dynamo" in sys.modules:
        steps.append(reset_dynamo)
    steps.append(stop_compile_pools)
    if torch.cuda.is_initialized():
        # A failed kernel leaves the context poisoned: this raises then.
        steps.append(lambda: (torch.cuda.synchronize(), torch.cuda.empty_cache()))
    for step in steps:
        try:
            step()
        except BaseException as exc:
            dirty.append(f"torch: {type(exc).__name__}: {exc}"[:200])
    return dirty


def reset_dynamo():
    torch = sys.modules["torch"]
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()


def exit_code(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    try:
        print(exc.code, file=sys.stderr)
    except BaseException:
        pass
    return 1


def serve():
    requests = sys.stdin
    # The answers keep a descriptor of their own: a candidate run here has fd 1 for its output.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    clean = State() if "--here" in sys.argv[2:] else None
    # What is here now lives as long as the worker: a collection (a candidate's own, or the
    # one after a candidate run here) skips it, and a fork's copy of it stays shared.
    gc.collect()
    gc.freeze()
    ready = resident("VmRSS")
    spare = Spare() if clean is None else None
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        answers.flush()
        sys.stderr.flush()
        if clean is not None:
            answers.write(json.dumps({"pid": os.getpid()}) + "\n")
            answers.flush()
            reset_peak()
            status, dirty = run_here(request, clean)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            answer = {"pid": os.getpid(), "status": status,
                      "maxrss": resident("VmHWM") or usage.ru_maxrss * 1024, "dirty": dirty,
                      "worn": worn(ready, request.get("max_memory"))}
            answers.write(json.dumps(answer) + "\n")
            answers.flush()
            continue
        if request.get("probe"):
            try:
                probe_code(request["probe"])
            except BaseException:
                pass
        if spare is None or not spare.start(request):
            pid = os.fork()
            if pid == 0:
                run_child(request)
            try:
                os.setpgid(pid, pid)
            except OSError:
                pass
        else:
            pid = spare.pid
        answers.write(json.dumps({"pid": pid}) + "\n")
        answers.flush()
        spare = Spare()
        _, status, usage = os.wait4(pid, 0)
        answer = {"pid": pid, "status": status, "maxrss": usage.ru_maxrss * 1024}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    load_libc()
    if "--die-with-parent" in sys.argv[2:]:
        die_with_parent()
    preload(sys.argv[1], "--here" in sys.argv[2:])
    if "--here" not in sys.argv[2:]:
        # A worker that runs candidates in place records what they load for the next one.
        RECORDER.stop()
    print(json.dumps({"ready": True}), flush=True)
    serve()
