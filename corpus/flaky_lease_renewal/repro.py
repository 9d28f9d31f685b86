"""Intermittent 'lease expired' failure in the lock-service client.

Roughly every second CI run of test_orders_failover dies with
    TimeoutError: lease 'orders-db' expired before renewal
This script replays the client's renewal loop against a simulated server
whose response latency is drawn at random (like the real network jitter).
It does NOT use a fixed seed on purpose -- pass --seed to pin it down.
"""
import argparse
import functools
import logging
import random
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, TypeVar

T = TypeVar("T")
logger = logging.getLogger("lockclient")


@dataclass
class Lease:
    name: str
    ttl: float                      # seconds (simulated)
    granted_at: float = 0.0
    renewals: List[float] = field(default_factory=list)

    def expires_at(self) -> float:
        return self.granted_at + self.ttl


class SimulatedServer:
    """Fake lock server: every call 'takes' a random amount of simulated time."""

    def __init__(self, rng: random.Random, mean_latency: float = 0.5):
        self.rng = rng
        self.mean_latency = mean_latency
        self.clock = 0.0
        self.calls = 0

    def call(self, op: str) -> float:
        self.calls += 1
        latency = self.rng.uniform(0.0, 2 * self.mean_latency)
        self.clock += latency
        logger.debug("%s took %.3fs (clock=%.3f)", op, latency, self.clock)
        return latency


def retry(times: int, exceptions=(TimeoutError,)) -> Callable:
    """Retry decorator used around *connect*, never around renew."""
    def deco(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs) -> T:
            for attempt in range(1, times + 1):
                try:
                    return fn(*args, **kwargs)
                except exceptions as exc:
                    logger.info("attempt %d/%d failed: %s", attempt, times, exc)
            raise ConnectionError("gave up after %d attempts" % times)
        return wrapper
    return deco


class LockClient:
    def __init__(self, server: SimulatedServer, renew_margin: float = 0.25):
        self.server = server
        self.renew_margin = renew_margin
        self.connected = False
        self._handshakes = 0

    @retry(times=3)
    def connect(self) -> None:
        self._handshakes += 1
        self.server.call("connect")
        if self._handshakes == 1:
            # first handshake always times out against the staging proxy
            raise TimeoutError("connect to lock service timed out (handshake %d)" % self._handshakes)
        self.connected = True

    def acquire(self, name: str, ttl: float) -> Lease:
        self.server.call("acquire")
        return Lease(name, ttl, granted_at=self.server.clock)

    def renew(self, lease: Lease) -> None:
        latency = self.server.call("renew")
        # The renewal is only valid if it landed before the lease expired.
        if latency > lease.ttl - self.renew_margin:
            raise TimeoutError("lease %r expired before renewal" % lease.name)
        lease.granted_at = self.server.clock
        lease.renewals.append(latency)


def run_workload(client: LockClient, lease: Lease, steps: int) -> int:
    done = 0
    for step in range(steps):
        client.renew(lease)
        done += 1  # pretend to process one batch of orders
    return done


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=None, help="pin the jitter")
    ap.add_argument("--ttl", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("-v", "--verbose", action="count", default=0)
    opts = ap.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if opts.verbose else logging.WARNING)

    rng = random.Random(opts.seed)
    server = SimulatedServer(rng)
    client = LockClient(server)
    client.connect()
    lease = client.acquire("orders-db", ttl=opts.ttl)
    t0 = time.perf_counter()
    processed = run_workload(client, lease, opts.steps)
    print("processed %d batches in %.1f ms; renewals: %s" % (
        processed, (time.perf_counter() - t0) * 1e3,
        ", ".join("%.2f" % r for r in lease.renewals)))


if __name__ == "__main__":
    main()
