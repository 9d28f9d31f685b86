"""Reusing a shared buffer pool crashes the process (SIGSEGV) in the reduction step."""
import argparse
import logging
import os
import sys

import torch

logging.basicConfig(level=logging.INFO, stream=sys.stderr)
log = logging.getLogger("pool")

os.environ["TORCH_SHOW_CPP_STACKTRACES"] = "1"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--slot-size", type=int, default=1024)
    ap.add_argument("--dtype", default="float64")
    return ap.parse_args()


class BufferPool:
    """Hands out views of one flat buffer; `shrink` releases the memory of idle pools."""

    def __init__(self, slots, slot_size, dtype, device):
        self.flat = torch.zeros(slots * slot_size, dtype=dtype, device=device)
        self.slot_size = slot_size
        self.free = list(range(slots))
        self.leased = {}

    def lease(self, owner):
        slot = self.free.pop(0)
        view = self.flat[slot * self.slot_size : (slot + 1) * self.slot_size]
        self.leased[owner] = view
        return view

    def release(self, owner):
        view = self.leased.pop(owner)
        slot = (view.storage_offset()) // self.slot_size
        self.free.append(slot)

    def shrink(self):
        # Meant to run only when nothing is leased; the check below was lost in a refactor.
        log.info("shrinking pool with %d leased slots", len(self.leased))
        self.flat.untyped_storage().resize_(0)


class PoolStats:
    def __init__(self):
        self.leases = 0
        self.releases = 0

    def record(self, pool):
        self.leases = len(pool.leased)
        self.releases = len(pool.free)
        return self

    def __str__(self):
        return f"leased={self.leases} free={self.releases}"


def reduce_step(buffers):
    total = torch.zeros((), dtype=buffers[0].dtype)
    for buf in buffers:
        total += buf.sum()
    return total


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pool = BufferPool(args.slots, args.slot_size, getattr(torch, args.dtype), device)
    grads = [pool.lease(f"rank{r}") for r in range(4)]
    for i, g in enumerate(grads):
        g.fill_(i + 1)
    pool.release("rank3")
    log.info("pool: %s", PoolStats().record(pool))
    pool.shrink()
    total = reduce_step(grads[:3])
    log.info("total %s", total.item())


if __name__ == "__main__":
    main()
