"""
ratelimit.py crash: RuntimeError in TTLCache.purge_expired()

We see this in the API gateway roughly once a day, always right after a burst
of requests from one tenant.  I pulled TTLCache and the limiter out of the
gateway and drive them with a fake clock so it's deterministic.
(py3.9 - 3.13 all fail the same way.)
"""
import argparse
import functools
import itertools
import logging
import sys
from typing import Any, Dict, Generic, Hashable, Iterator, Optional, Tuple, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

log = logging.getLogger("gateway.ratelimit")


class FakeClock:
    def __init__(self, start: float = 1_700_000_000.0):
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class TTLCache(Generic[K, V]):
    """Tiny TTL cache.  Not thread-safe; the gateway wraps it in a lock."""

    def __init__(self, ttl: float, clock, maxsize: int = 1024):
        self.ttl = ttl
        self.clock = clock
        self.maxsize = maxsize
        self._data: Dict[K, Tuple[float, V]] = {}
        self._frozen = False

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def get(self, key: K, default: Optional[V] = None) -> Optional[V]:
        item = self._data.get(key)
        if item is None or item[0] < self.clock():
            return default
        return item[1]

    def set(self, key: K, value: V) -> None:
        if self._frozen:
            raise RuntimeError("cache is frozen (snapshot in progress)")
        if len(self._data) >= self.maxsize:
            self.purge_expired()
        self._data[key] = (self.clock() + self.ttl, value)

    def purge_expired(self) -> int:
        now = self.clock()
        removed = 0
        for key in self._data:
            if self._data[key][0] < now:
                del self._data[key]
                removed += 1
        return removed

    def snapshot(self) -> Dict[K, V]:
        self._frozen = True
        try:
            return {k: v for k, (_, v) in self._data.items()}
        finally:
            self._frozen = False


class RateLimiter:
    def __init__(self, cache: TTLCache, limit: int):
        self.cache = cache
        self.limit = limit
        self.rejected = 0

    def allow(self, tenant: str) -> bool:
        count = self.cache.get(tenant, 0) + 1
        if count > self.limit:
            self.rejected += 1
            return False
        self.cache.set(tenant, count)
        return True


@functools.lru_cache(maxsize=None)
def tenant_for(request_id: int) -> str:
    # requests from the bursty tenant are every third one
    return "tenant-burst" if request_id % 3 == 0 else "tenant-%02d" % (request_id % 7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--ttl", type=float, default=2.0)
    parser.add_argument("--maxsize", type=int, default=6)
    parser.add_argument("--limit", type=int, default=5)
    opts = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")

    clock = FakeClock()
    cache: TTLCache[str, int] = TTLCache(opts.ttl, clock, maxsize=opts.maxsize)
    limiter = RateLimiter(cache, opts.limit)

    # make sure writes during a snapshot are refused (regression test for #88)
    cache._frozen = True
    try:
        cache.set("probe", 1)
    except RuntimeError as exc:
        log.info("write refused as expected: %s", exc)
    cache._frozen = False

    allowed = 0
    for request_id in itertools.islice(itertools.count(1), opts.requests):
        clock.advance(0.25)
        if limiter.allow(tenant_for(request_id)):
            allowed += 1
    log.info("allowed=%d rejected=%d cached=%d", allowed, limiter.rejected, len(cache))
    print(sorted(cache.snapshot().items()))


if __name__ == "__main__":
    main()
