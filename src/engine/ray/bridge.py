"""scrub's Ray bridge: warm workers as Ray actors.

Started as `PY bridge.py ADDRESS ZYGOTE` (ZYGOTE: the path of scrub's zygote.py) under the
repro's interpreter. It connects to the Ray cluster at ADDRESS (`auto`: the one `ray start`
left on this machine) and answers `{"ready": true, "cpus": C, "gpus": G, "nodes": N}`, or
`{"error": MESSAGE}` and exits when it cannot. Then it serves requests on stdin, one JSON
object per line, each with an "id" that its answer repeats:

    {"id": I, "op": "start", "original": TEXT, "actors": N, "gpus": G, "env": {...}}

creates N actors, each reserving one CPU and G GPUs and keeping a zygote of its own (scrub's
zygote.py, started with the environment given) that imports the top-level modules of TEXT
once, and answers `{"id": I, "actors": N}` at once, while they start;

    {"id": I, "op": "ready", "actor": K}

answers `{"id": I, "pid": P, "node": H}` once actor K is up (a run sent to it before waits
for it too);

    {"id": I, "op": "run", "actor": K, "text": T, "probe": SOURCE, "timeout": S, "max_memory": B}

runs T on actor K: its zygote forks a child that runs it as a local zygote's child does (its
own process group and temp directory); the actor kills the group after S seconds or when it
holds more than B bytes, and the answer is the zygote's: `{"pid", "status", "maxrss"}` with
"killed" ("timeout", "memory" or null), "peak" (the group's sampled peak), "duration",
"stdout", "stderr" and "events" (lines for the run log). An actor that dies is restarted by Ray (max_restarts) and the
candidate is run again on it; the events say so. Answers come in any order.
"""

import json
import os
import sys
import threading
import time

MAX_RESTARTS = 8
POLL = 0.02
SAMPLE = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE")

write_lock = threading.Lock()


def answer(obj):
    with write_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def group_rss(pgid):
    """The resident memory of every process in group `pgid`, in bytes (as memory.rs reads it).
    Called ten times a second per running candidate, on nodes that may run many: raw reads."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 4096)
            finally:
                os.close(fd)
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split(b" ", 22)
        try:
            if int(fields[2]) == pgid:
                total += int(fields[21]) * PAGE
        except (IndexError, ValueError):
            pass
    return total


def make_actor_class(ray):
    @ray.remote
    class Worker:
        """A warm worker on some node: a zygote of its own (a plain Python process, started with
        the runs' environment, that imports the original's modules once and forks a child per
        run, as a local one does), and the timeout and memory watch of each run."""

        def __init__(self, zygote_source, original, env):
            self.source = (zygote_source, original)
            self.env = env
            self.start_zygote()

        def start_zygote(self):
            import shutil
            import subprocess
            import tempfile

            # Nothing stays on the node between runs: an actor killed by Ray leaves no folder.
            home = tempfile.mkdtemp(prefix="scrub-ray-")
            try:
                paths = [os.path.join(home, name) for name in ("zygote.py", "original.py")]
                for path, text in zip(paths, self.source):
                    with open(path, "w") as fh:
                        fh.write(text)
                # It dies with the actor, and its children with it.
                self.zygote = subprocess.Popen(
                    [sys.executable, *paths, "--die-with-parent"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, **self.env},
                    bufsize=0,
                )
                self.pending = b""
                if "ready" not in self.answer(300):
                    raise RuntimeError("the zygote did not get ready")
            finally:
                shutil.rmtree(home, ignore_errors=True)

        def answer(self, wait):
            """The zygote's next answer, or None when none came in `wait` seconds."""
            import select

            fd = self.zygote.stdout.fileno()
            deadline = time.monotonic() + wait
            while b"\n" not in self.pending:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    return None
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError("the actor's zygote died")
                self.pending += chunk
            line, _, self.pending = self.pending.partition(b"\n")
            return json.loads(line)

        def info(self):
            import socket

            return {"pid": os.getpid(), "node": socket.gethostname()}

        def run(self, text, probe, timeout, max_memory):
            import shutil
            import signal
            import tempfile

            if self.zygote.poll() is not None:
                self.start_zygote()
            top = tempfile.mkdtemp(prefix="scrub-ray-")
            try:
                work = os.path.join(top, "work")
                os.mkdir(work)
                with open(os.path.join(work, "repro.py"), "w") as fh:
                    fh.write(text)
                request = {
                    "dir": work,
                    "script": "repro.py",
                    "stdout": os.path.join(top, "stdout"),
                    "stderr": os.path.join(top, "stderr"),
                    "probe": None,
                }
                if probe is not None:
                    request["probe"] = os.path.join(top, "probe.py")
                    with open(request["probe"], "w") as fh:
                        fh.write(probe)
                start = time.monotonic()
                try:
                    self.zygote.stdin.write((json.dumps(request) + "\n").encode())
                    pid = self.answer(30)["pid"]
                except BaseException:
                    self.zygote.kill()
                    raise
                killed, peak, next_sample = None, 0, start + SAMPLE
                while True:
                    done = self.answer(POLL)
                    if done is not None and done.get("pid") == pid and "status" in done:
                        break
                    now = time.monotonic()
                    if killed is None and now - start >= timeout:
                        killed = "timeout"
                    if killed is None and now >= next_sample:
                        next_sample = now + SAMPLE
                        rss = group_rss(pid)
                        peak = max(peak, rss)
                        if max_memory is not None and rss > max_memory:
                            killed = "memory"
                    if killed is not None:
                        try:
                            os.killpg(pid, signal.SIGKILL)
                        except OSError:
                            pass
                duration = time.monotonic() - start
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
                outputs = {}
                for name in ("stdout", "stderr"):
                    try:
                        with open(os.path.join(top, name), "rb") as fh:
                            outputs[name] = fh.read().decode("utf-8", "replace")
                    except OSError:
                        outputs[name] = ""
                return {
                    "pid": pid,
                    "status": done["status"],
                    "maxrss": done["maxrss"],
                    "killed": killed,
                    "peak": peak,
                    "duration": duration,
                    "stdout": outputs["stdout"],
                    "stderr": outputs["stderr"],
                    "actor_pid": os.getpid(),
                }
            finally:
                shutil.rmtree(top, ignore_errors=True)

    return Worker


class Bridge:
    def __init__(self, ray, zygote_source):
        self.ray = ray
        self.zygote_source = zygote_source
        self.Worker = make_actor_class(ray)
        self.actors = []
        self.pids = []
        self.lock = threading.Lock()

    def start(self, request):
        ray = self.ray
        for actor in self.actors:
            ray.kill(actor, no_restart=True)
        env = dict(request.get("env") or {})
        options = {
            "num_cpus": 1,
            "num_gpus": request.get("gpus", 0),
            "max_restarts": MAX_RESTARTS,
            "max_task_retries": 0,
        }
        # Ray starts the actors in the background: each can take runs as soon as it is up.
        self.actors = [
            self.Worker.options(**options).remote(self.zygote_source, request["original"], env)
            for _ in range(request["actors"])
        ]
        self.pids = [None] * len(self.actors)
        return {"actors": len(self.actors)}

    def ready(self, request):
        k = request["actor"]
        info = self.ray.get(self.actors[k].info.remote())
        with self.lock:
            if self.pids[k] is None:
                self.pids[k] = info["pid"]
        return info

    def run(self, request):
        ray = self.ray
        k = request["actor"]
        events = []
        for attempt in range(MAX_RESTARTS + 1):
            actor = self.actors[k]
            ref = actor.run.remote(
                request["text"], request.get("probe"), request["timeout"], request.get("max_memory")
            )
            try:
                result = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError) as exc:
                with self.lock:
                    old = self.pids[k]
                new = self.wait_alive(actor)
                with self.lock:
                    self.pids[k] = new
                reason = type(exc).__name__
                events.append(
                    f"ray: actor {k} (pid {old}) died ({reason}); Ray restarted it as pid {new}, "
                    "its candidate runs again"
                )
                continue
            result["events"] = events
            return result
        raise RuntimeError(f"actor {k} died {MAX_RESTARTS + 1} times in a row")

    def wait_alive(self, actor):
        """The pid of `actor` once Ray has restarted it."""
        ray = self.ray
        deadline = time.monotonic() + 300
        while True:
            try:
                return ray.get(actor.info.remote(), timeout=60)["pid"]
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def serve(bridge):
    def handle(request):
        try:
            if request["op"] == "start":
                result = bridge.start(request)
            elif request["op"] == "ready":
                result = bridge.ready(request)
            else:
                result = bridge.run(request)
        except BaseException as exc:
            result = {"error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
        result["id"] = request["id"]
        answer(result)

    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request["op"] == "start":
            handle(request)
        else:
            threading.Thread(target=handle, args=(request,), daemon=True).start()


def listening(address):
    """Whether a HOST:PORT address accepts connections (`ray.init` would retry for a minute)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return True
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=5).close()
        return True
    except OSError:
        return False


def main():
    address, zygote_path = sys.argv[1], sys.argv[2]
    try:
        import ray
    except ImportError:
        answer({"error": "missing-ray"})
        return 2
    if not listening(address):
        answer({"error": "nothing listens there (start one with `ray start --head`)"})
        return 2
    try:
        with open(zygote_path) as fh:
            zygote_source = fh.read()
        ray.init(
            address=address,
            logging_level="ERROR",
            log_to_driver=False,
            include_dashboard=False,
        )
        resources = ray.cluster_resources()
        nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    except BaseException as exc:
        message = str(exc).strip().splitlines()
        answer({"error": message[0] if message else type(exc).__name__})
        return 2
    answer(
        {
            "ready": True,
            "cpus": resources.get("CPU", 0),
            "gpus": resources.get("GPU", 0),
            "nodes": nodes,
        }
    )
    serve(Bridge(ray, zygote_source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
