"""Runs PyTorch's minifier launcher (argv[1], with the arguments after it) with each query of a
crash forked from this process instead of started as an interpreter of its own.

The minifier isolates a crash by writing each query as a script and running it with a fresh
Python, which imports torch and inductor again every time. A fork inherits both, imported
once here, and a crash still takes down only the query.

A fork has none of its parent's threads. The parent runs the graph (the minifier's checks
before its search) on one thread, as a fork of a process whose OpenMP threads have started
waits for them forever; each fork gets its threads back and drops the compile pools it
inherited (inductor's own fork hook misses one) to start its own. Where a fork still cannot
work, the minifier's own isolation runs the query, as it would have: once CUDA is
initialised, and from the first fork that outlives SCRUB_QUERY_TIMEOUT seconds on.
"""

import os
import runpy
import sys
import time
import traceback

import torch
import torch._dynamo.repro.after_aot as after_aot
import torch._inductor.compile_fx  # noqa: F401  (imported once, for every fork)
from torch._inductor.async_compile import AsyncCompile

isolated = after_aot.isolate_fails
threads = torch.get_num_threads()
torch.set_num_threads(1)
timeout = float(os.environ.get("SCRUB_QUERY_TIMEOUT", "300"))
forking = True


def forked_fails(fx_g, args, compiler_name, **options):
    global forking
    if not forking or torch.cuda.is_initialized():
        return isolated(fx_g, args, compiler_name, **options)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        query(fx_g, args, options)
    status = wait(pid)
    if status is None:
        print(f"a forked query outlived {timeout:.0f} s: isolating the rest", file=sys.stderr)
        forking = False
        return isolated(fx_g, args, compiler_name, **options)
    return status != 0


def query(fx_g, args, options):
    """In the fork: exits 1 when the graph fails as the minifier checks, else 0."""
    code = 1
    try:
        os.environ.update(options.get("env") or {})
        torch.set_num_threads(threads)
        for name in ("pool", "process_pool", "thread_pool"):
            cached = getattr(AsyncCompile, name, None)
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()
        fails = after_aot.ACCURACY_FAILS[options.get("accuracy") or ""]
        check = {k: options.get(k) for k in ("check_str", "is_inference") if k in options}
        code = 1 if fails(fx_g, args, **check) else 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait(pid):
    """The fork's wait status, or None (the fork killed) when it outlives the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


after_aot.isolate_fails = forked_fails
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
