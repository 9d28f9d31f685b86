#!/usr/bin/env python3
"""
shm_reader crash repro (segfault, no Python traceback).

We read sensor frames out of a shared-memory ring with ctypes for speed.
After a producer detaches, the slot's address is reset to 0 and the reader
segfaults instead of skipping the slot.  This script fakes the ring with
ctypes string buffers so it runs anywhere.

    $ python3 shm_repro.py
    Segmentation fault (core dumped)
"""
import argparse
import ctypes
import enum
import logging
import struct
import sys
from dataclasses import dataclass, field
from typing import List, Optional

LOG = logging.getLogger("shm_reader")
HEADER = struct.Struct("<IHH")  # seq, channel, length


class SlotState(enum.IntEnum):
    EMPTY = 0
    READY = 1
    DETACHED = 2


@dataclass
class Slot:
    index: int
    state: SlotState = SlotState.EMPTY
    address: int = 0
    length: int = 0
    _keepalive: Optional[ctypes.Array] = field(default=None, repr=False)


class FakeRing:
    """Stands in for the mmap'd ring; each slot owns a ctypes buffer."""

    def __init__(self, nslots: int):
        self.slots = [Slot(i) for i in range(nslots)]

    def publish(self, i: int, seq: int, payload: bytes) -> None:
        raw = HEADER.pack(seq, i % 4, len(payload)) + payload
        buf = ctypes.create_string_buffer(raw, len(raw))
        slot = self.slots[i]
        slot._keepalive = buf
        slot.address = ctypes.addressof(buf)
        slot.length = len(raw)
        slot.state = SlotState.READY

    def detach(self, i: int) -> None:
        # what the producer does on shutdown: NULL the address and the length
        slot = self.slots[i]
        slot.state = SlotState.DETACHED
        slot.address = 0
        slot.length = 0
        slot._keepalive = None


def load_accelerator() -> Optional[ctypes.CDLL]:
    """Optional native helper; missing on dev machines."""
    for name in ("libshmaccel.so.2", "libshmaccel.so"):
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            LOG.debug("no %s: %s", name, exc)
    return None


class FrameReader:
    def __init__(self, ring: FakeRing, accel: Optional[ctypes.CDLL] = None):
        self.ring = ring
        self.accel = accel
        self.frames_read = 0

    def _copy_out(self, slot: Slot) -> bytes:
        # zero-copy would be nicer but the ring may be recycled under us
        if slot.length:
            return ctypes.string_at(slot.address, slot.length)
        # legacy producers publish NUL-terminated frames without a length
        return ctypes.string_at(slot.address)

    def read_slot(self, slot: Slot) -> Optional[bytes]:
        if slot.state == SlotState.EMPTY:
            return None
        # BUG: DETACHED slots are treated like READY ones
        data = self._copy_out(slot)
        seq, channel, length = HEADER.unpack_from(data)
        self.frames_read += 1
        return data[HEADER.size:HEADER.size + length]

    def drain(self) -> List[bytes]:
        frames = []
        for slot in self.ring.slots:
            frame = self.read_slot(slot)
            if frame is not None:
                frames.append(frame)
        return frames


def main() -> int:
    parser = argparse.ArgumentParser(description="reproduce shm reader segfault")
    parser.add_argument("--slots", type=int, default=6)
    parser.add_argument("--detach", type=int, default=3, help="slot to detach")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.DEBUG)

    LOG.info("python %s, pointer size %d", sys.version.split()[0], ctypes.sizeof(ctypes.c_void_p))
    ring = FakeRing(args.slots)
    for i in range(args.slots - 1):
        ring.publish(i, seq=1000 + i, payload=("frame-%d" % i).encode() * 3)
    ring.detach(args.detach)

    reader = FrameReader(ring, load_accelerator())
    frames = reader.drain()
    for f in frames:
        print(len(f), f[:16])
    print("read %d frames" % reader.frames_read)
    return 0


if __name__ == "__main__":
    sys.exit(main())
