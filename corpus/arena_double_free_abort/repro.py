#!/usr/bin/env python3
"""Pure-Python model of our C frame-buffer arena (libframearena), used to
reproduce the 'double free or corruption' abort seen in production.

The C library calls abort() when it detects a double free; the model does the
same with os.abort() so that the crash signature matches what CI sees
(SIGABRT, exit status 134 from the shell).

Run:  python3 repro_arena.py            (no arguments needed)
"""
import argparse
import faulthandler
import logging
import os
import sys
import time
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Set

logger = logging.getLogger("framearena")

BLOCK_SIZE = 4096
DEFAULT_BLOCKS = 16


def _fatal(message: str) -> None:
    """Mirror of arena_fatal() in arena.c: print and abort, no unwinding."""
    sys.stderr.write("framearena: %s\n" % message)
    sys.stderr.flush()
    os.abort()


class Arena:
    def __init__(self, nblocks: int = DEFAULT_BLOCKS):
        self.nblocks = nblocks
        self._free: Set[int] = set(range(nblocks))
        self._owner: Dict[int, str] = {}
        self.stats = {"alloc": 0, "free": 0, "peak": 0}

    def alloc(self, owner: str) -> int:
        if not self._free:
            raise MemoryError("arena exhausted (%d blocks)" % self.nblocks)
        block = min(self._free)
        self._free.discard(block)
        self._owner[block] = owner
        self.stats["alloc"] += 1
        self.stats["peak"] = max(self.stats["peak"], self.nblocks - len(self._free))
        return block

    def free(self, block: int) -> None:
        if block in self._free:
            _fatal("double free or corruption (block %d)" % block)
        self._owner.pop(block, None)
        self._free.add(block)
        self.stats["free"] += 1

    def in_use(self) -> List[int]:
        return sorted(self._owner)


class FrameDecoder:
    """Decodes frames into arena blocks; mimics decoder.c error handling."""

    def __init__(self, arena: Arena, name: str):
        self.arena = arena
        self.name = name
        self.current: Optional[int] = None

    @contextmanager
    def frame(self) -> Iterator[int]:
        block = self.arena.alloc(self.name)
        self.current = block
        try:
            yield block
        finally:
            self.arena.free(block)

    def decode(self, payload: bytes) -> int:
        with self.frame() as block:
            if payload.startswith(b"\x00\x00"):
                # BUG (mirrors decoder.c:412): the error path releases the
                # block itself, and then the context manager releases it again.
                self.arena.free(block)
                return -1
            return block * BLOCK_SIZE + len(payload)


def synthetic_stream(count: int) -> Iterator[bytes]:
    for i in range(count):
        if i == 5:
            yield b"\x00\x00corrupt header"
        else:
            yield bytes([0x47, i & 0xFF]) + b"payload" * (i + 1)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=DEFAULT_BLOCKS)
    parser.add_argument("--no-faulthandler", action="store_true")
    return parser.parse_args(argv)


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
    if not args.no_faulthandler:
        faulthandler.enable()

    arena = Arena(args.blocks)
    try:
        # warm-up: make sure exhaustion is reported cleanly, not as an abort
        small = Arena(1)
        small.alloc("warmup")
        small.alloc("warmup")
    except MemoryError as exc:
        logger.info("expected: %s", exc)

    decoder = FrameDecoder(arena, "cam0")
    started = time.perf_counter()
    results = []
    for payload in synthetic_stream(args.frames):
        results.append(decoder.decode(payload))
        logger.info("frame %d -> %d (in use: %s)", len(results), results[-1], arena.in_use())
    logger.info("decoded %d frames in %.1f ms", len(results),
                (time.perf_counter() - started) * 1e3)
    print(arena.stats)


if __name__ == "__main__":
    main()
