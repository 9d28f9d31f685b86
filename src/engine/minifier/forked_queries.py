"""Runs PyTorch's minifier launcher (argv[1], with the arguments after it) with each query of a
crash forked from this process instead of started as an interpreter of its own.

The minifier isolates a crash by writing each query as a script and running it with a fresh
Python, which imports torch and inductor again every time. A fork inherits both, imported
once here, and a crash still takes down only the query. Once CUDA is initialised a fork
cannot use it: the minifier's own isolation then runs the query, as it would have.

This process runs the graph too (the minifier's checks before its search), on one thread:
a fork of a process whose OpenMP threads have started waits for them forever. Each fork
gets the threads back.
"""

import os
import runpy
import sys
import traceback

import torch
import torch._dynamo.repro.after_aot as after_aot
import torch._inductor.compile_fx  # noqa: F401  (imported once, for every fork)

isolated = after_aot.isolate_fails
threads = torch.get_num_threads()
torch.set_num_threads(1)


def forked_fails(fx_g, args, compiler_name, env=None, save_dir=None, accuracy=None,
                 tracing_mode=None, check_str=None, is_inference=False):
    if torch.cuda.is_initialized():
        return isolated(fx_g, args, compiler_name, env=env, save_dir=save_dir,
                        accuracy=accuracy, tracing_mode=tracing_mode, check_str=check_str,
                        is_inference=is_inference)
    fails = after_aot.ACCURACY_FAILS[accuracy or ""]
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.environ.update(env or {})
            torch.set_num_threads(threads)
            code = 1 if fails(fx_g, args, check_str=check_str, is_inference=is_inference) else 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status != 0


after_aot.isolate_fails = forked_fails
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
