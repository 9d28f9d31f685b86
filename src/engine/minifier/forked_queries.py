"""Runs PyTorch's minifier launcher (argv[1], with the arguments after it) with its queries
forked from this process, SCRUB_QUERY_JOBS of them side by side, instead of run one after
the other in this process or started as interpreters of their own.

The minifier's search (`functorch.compile.minifier`) tries, for each strategy and
granularity, candidate graphs one after the other and moves on from the first that still
fails. `minifier` below is that search, the same strategies in the same order, with each
strategy's candidates queried in order by forks, several at a time: it moves on from the
first failing candidate in that order, as the minifier does, once all before it are known
to pass. A fork inherits torch and inductor, imported once here, and a crash takes down
only its query.

A fork has none of its parent's threads. The parent runs the graph (the minifier's
propagation before its search) on one thread, as a fork of a process whose OpenMP threads
have started waits for them forever; each fork gets its share of the threads back and
drops the compile pools it inherited (inductor's own fork hook misses one) to start its
own. Where a fork cannot work, the minifier's own search runs, as it would have: once CUDA
is initialised (a fork cannot use it), and from the first fork that outlives
SCRUB_QUERY_TIMEOUT seconds on.
"""

import copy
import math
import os
import runpy
import sys
import time
import traceback

import functorch.compile
import torch
import torch._dynamo.repro.after_aot as after_aot
import torch._functorch.fx_minifier as fx_minifier
import torch._inductor.compile_fx  # noqa: F401  (imported once, for every fork)
import torch.fx as fx
from torch._functorch.compile_utils import get_outputs, get_placeholders
from torch._inductor.async_compile import AsyncCompile
from zygote import warm_compiler  # scrub's warm worker, written beside this file

ReproState = fx_minifier.ReproState
search_alone = functorch.compile.minifier
isolated = after_aot.isolate_fails
threads = torch.get_num_threads()
torch.set_num_threads(1)
timeout = float(os.environ.get("SCRUB_QUERY_TIMEOUT", "300"))
jobs = max(1, int(os.environ.get("SCRUB_QUERY_JOBS", "1")))
# A crash's query (the minifier's isolation) cannot run here; any other can.
queries_here = "--no-isolate" in sys.argv
forking = True
in_query = False  # in a query's fork, where a crash is already isolated


def can_fork():
    return forking and not torch.cuda.is_initialized()


def forked_fails(fx_g, args, compiler_name, **options):
    """`isolate_fails` (a crash's query) in a fork, or inline in a query's own fork."""
    if in_query:
        return fails_here(fx_g, args, options)
    if not can_fork():
        return isolated(fx_g, args, compiler_name, **options)
    forks = Forks(lambda graph: fails_here(graph, args, options), 1)
    failing = forks.first([fx_g])
    if forks.timed_out:
        return isolated(fx_g, args, compiler_name, **options)
    return failing is not None


def fails_here(fx_g, args, options):
    """Whether the graph fails as the minifier checks, in this process."""
    os.environ.update(options.get("env") or {})
    fails = after_aot.ACCURACY_FAILS[options.get("accuracy") or ""]
    check = {k: options.get(k) for k in ("check_str", "is_inference") if k in options}
    return fails(fx_g, args, **check)


END = object()


class Forks:
    """Queries run in forks, `width` at a time, each its `query(item)` (true: fails)."""

    def __init__(self, query, width):
        self.query = query
        self.width = width
        self.started = 0
        self.timed_out = False

    def first(self, items):
        """The first of `items`, in their order, whose query fails, or None. Later items
        run beside earlier ones and are stopped once an earlier one fails."""
        global forking
        items = iter(items)
        running = {}  # index -> (pid, deadline)
        verdicts = {}  # index -> fails
        tried = []
        want = 0
        while True:
            while len(running) < self.width and (item := next(items, END)) is not END:
                tried.append(item)
                running[len(tried) - 1] = (self.start(item), time.monotonic() + timeout)
            while want in verdicts:
                if verdicts[want]:
                    self.stop(running)
                    return tried[want]
                want += 1
            if not running:
                return None
            if not self.reap(running, verdicts):
                self.stop(running)
                self.timed_out = True
                forking = False
                torch.set_num_threads(threads)
                print(f"a forked query outlived {timeout:.0f} s: the rest run unforked",
                      file=sys.stderr)
                return None
            time.sleep(0.01)

    def start(self, item):
        global in_query
        self.started += 1
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid:
            return pid
        in_query = True
        code = 1
        try:
            torch.set_num_threads(max(1, threads // self.width))
            for name in ("pool", "process_pool", "thread_pool"):
                cached = getattr(AsyncCompile, name, None)
                if hasattr(cached, "cache_clear"):
                    cached.cache_clear()
            code = 1 if self.query(item) else 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    def reap(self, running, verdicts):
        """Collects the forks that ended; false when one outlived the timeout."""
        for index, (pid, deadline) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                verdicts[index] = status != 0
                del running[index]
            elif time.monotonic() > deadline:
                return False
        return True

    @staticmethod
    def stop(running):
        for pid, _ in running.values():
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        running.clear()


def minifier(fail_f, inps, module_fails, dump_state=fx_minifier.dump_state, **options):
    """`functorch.compile.minifier`, its candidates queried side by side in forks."""
    if not can_fork() or options.get("offload_to_disk"):
        return search_alone(fail_f, inps, module_fails, dump_state, **options)
    return SideBySide(fail_f, module_fails, dump_state).search(inps, **options)


class SideBySide:
    """The minifier's search: its strategies as lists of candidate states."""

    def __init__(self, fail_f, module_fails, dump_state):
        self.fail_f = fail_f
        self.dump_state = dump_state

        def query(state):
            mod = fx.GraphModule(fail_f, copy.deepcopy(state.graph))
            mod.graph.lint()
            return module_fails(mod, state.inps)

        self.forks = Forks(query, jobs)

    def module(self, state):
        return fx.GraphModule(self.fail_f, state.graph)

    def copy(self, graph):
        return fx.GraphModule(self.fail_f, copy.deepcopy(graph)).graph

    def first_failing(self, candidates):
        if self.forks.timed_out:
            # Forking stopped: the rest as the minifier runs its queries.
            for state in candidates:
                if self.forks.query(state):
                    return state
            return None
        return self.forks.first(candidates)

    def sane(self, state):
        """Whether the graph fails as given. Run here when a query can be, it leaves the
        compiler warm, the graph's kernels loaded, for every fork; else a small function
        is compiled here for that (as scrub's warm worker does)."""
        if queries_here:
            return self.forks.query(state)
        warm_compiler()
        return self.first_failing([state]) is not None

    def search(self, inps, skip_sanity=False, skip_offload=False, max_granularity=None, **_):
        if max_granularity is not None and not fx_minifier.is_power_of_two(max_granularity):
            raise RuntimeError(f"max_granularity {max_granularity} not power of two")
        graph = self.fail_f.graph
        fx_minifier.ConcreteProp(self.fail_f, skip_offload=skip_offload).propagate(*inps)
        state = ReproState(graph, inps)
        if not skip_sanity and not self.sane(state):
            raise fx_minifier.MinifierSanityCheckFailed("Input graph did not fail the tester")
        print(f"Started off with {len(graph.nodes)} nodes", file=sys.stderr)
        while True:
            self.dump_state(self.module(state), state.inps)
            top = int(2 ** math.floor(math.log2(len(state.graph.nodes))))
            if max_granularity is not None:
                top = min(max_granularity, top)
            found = self.try_granularity(state, top, True)
            for granularity in iter_halves(top // 2):
                found = found or self.try_granularity(state, granularity, False)
            # As the minifier ends: outputs one at a time.
            found = found or self.run_strategy(remove_outputs, state, 1)
            if found is None:
                break
            state = found
        print(f"Made {self.forks.started} queries", file=sys.stderr)
        failing_fx = self.module(state)
        self.dump_state(failing_fx, state.inps)
        print("Wrote minimal repro out to repro.py", file=sys.stderr)
        return failing_fx, state.inps

    def try_granularity(self, state, granularity, non_granular):
        print(f"Trying granularity {granularity}", file=sys.stderr)
        strategies = []
        if len(get_outputs(state.graph)) > len(state.graph.nodes) // 2:
            strategies.append(remove_outputs)
        if non_granular:
            strategies += [eliminate_dead_code, remove_unused_inputs, consolidate_inputs]
        strategies += [remove_suffix, delta_debugging]
        for strategy in strategies:
            found = self.run_strategy(strategy, state, granularity)
            if found is not None:
                return found
        return None

    def run_strategy(self, strategy, state, granularity):
        print(f"\nStrategy: {strategy.__name__} (G: {granularity}) "
              f"({len(state.graph.nodes)} nodes, {len(state.inps)} inputs)", file=sys.stderr)
        found = self.first_failing(strategy(self, state, granularity))
        if found is not None and made_progress(state, found):
            print(f"SUCCESS: {len(state.graph.nodes)} to {len(found.graph.nodes)} nodes",
                  file=sys.stderr)
            return found
        print(f"FAIL: {strategy.__name__}", file=sys.stderr)
        return None


def iter_halves(granularity):
    while granularity >= 1:
        yield granularity
        granularity //= 2


def made_progress(old, new):
    return (len(new.graph.nodes) < len(old.graph.nodes)
            or len(new.inps) > len(old.inps)
            or len(get_outputs(new.graph)) < len(get_outputs(old.graph)))


# The minifier's strategies, each yielding its candidates in the order it queries them.

def remove_outputs(search, state, granularity):
    granularity = max(1, granularity // 2)
    outputs = output_args(state.graph)
    if outputs is None or len(outputs) == 1:
        return
    for idx in range(0, len(outputs), granularity):
        graph = search.copy(state.graph)
        kept = output_args(graph)
        output = next(n for n in graph.nodes if n.op == "output")
        output.args = (kept[:idx] + kept[idx + granularity:],)
        yield ReproState(graph, state.inps)


def output_args(graph):
    """The graph's outputs in the order of their nodes, or None for a single output."""
    position = {node: i for i, node in enumerate(graph.nodes)}
    output = next((n for n in graph.nodes if n.op == "output"), None)
    if output is None or isinstance(output.args[0], fx.Node):
        return None
    return sorted(output.args[0], key=lambda x: position.get(x, int(1e9)))


def eliminate_dead_code(search, state, granularity):
    graph = search.copy(state.graph)
    if graph.eliminate_dead_code():
        yield ReproState(graph, state.inps)


def remove_unused_inputs(search, state, granularity):
    found = without_unused_inputs(search.copy(state.graph), list(state.inps))
    if found is not None:
        yield found


def without_unused_inputs(graph, inps):
    placeholders = list(get_placeholders(graph))
    kept = []
    for node, inp in zip(placeholders, inps):
        if node.users:
            kept.append(inp)
        else:
            graph.erase_node(node)
    return ReproState(graph, kept) if len(kept) < len(inps) else None


def consolidate_inputs(search, state, granularity):
    inps = list(state.inps)
    graph = consolidated(search.copy(state.graph), inps)
    if len(inps) > len(state.inps):
        yield ReproState(graph, inps)


def consolidated(graph, inps):
    """The minifier's `_consolidate_placeholders`: placeholders first, and tensors loaded
    before the first computation made inputs."""
    new_graph = fx.Graph()
    env = {}
    computed = False
    for node in graph.nodes:
        if node.op == "placeholder":
            env[node] = new_graph.node_copy(node, lambda x: env[x])
        elif not computed and fx_minifier.is_load_tensor_node(node):
            env[node] = new_graph.placeholder(node.name)
            inps.append(torch.ops.debugprims.load_tensor.default(*node.args, **node.kwargs))
        else:
            computed = True
    for node in graph.nodes:
        if node not in env:
            env[node] = new_graph.node_copy(node, lambda x: env[x])
    return new_graph


def remove_suffix(search, state, granularity):
    new_graph = fx.Graph()
    env = {}
    size = len(state.graph.nodes)
    for idx, node in enumerate(state.graph.nodes):
        new_node = new_graph.node_copy(node, lambda x: env[x])
        if (node.op not in ("placeholder", "output") and idx % granularity == 0
                and idx % (granularity * 2) != 0):
            output = new_graph.output((new_node,))
            if len(new_graph.nodes) < size:
                yield ReproState(search.copy(new_graph), state.inps)
            new_graph.erase_node(output)
        env[node] = new_node


def delta_debugging(search, state, granularity):
    size = len(state.graph.nodes)
    for start in range(0, size, granularity):
        graph = search.copy(state.graph)
        inps = list(state.inps)
        nodes = list(graph.nodes)
        removing = False
        for idx in range(start, min(size, start + granularity)):
            if fx_minifier._convert_node_to_placeholder(graph, nodes[idx], inps):
                removing = True
        if not removing:
            continue
        graph.eliminate_dead_code()
        graph = consolidated(graph, inps)
        yield without_unused_inputs(graph, inps) or ReproState(graph, inps)


after_aot.isolate_fails = forked_fails
functorch.compile.minifier = minifier
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
