"""Parallel shard verifier -- repro for the nightly `verify-backups` failure.

The job fans the shard manifests out to a multiprocessing pool and checks each
shard's CRC32 against the manifest.  Since the eu-west migration one shard
always fails verification, and the whole job dies with a ValueError coming
out of a worker process.

No arguments needed: the shard contents are generated in-process.
"""

import argparse
import hashlib
import logging
import multiprocessing
import os
import time
import zlib
from dataclasses import dataclass, asdict
from typing import Dict, List, Tuple

log = logging.getLogger("verify-backups")

REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-west-3", "ap-south-1"]
SIZE_SUFFIXES = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}


@dataclass(frozen=True)
class Shard:
    region: str
    payload: bytes
    expected_crc: int
    replicas: str = "3"


def make_payload(region: str, blocks: int = 64) -> bytes:
    seed = hashlib.sha256(region.encode()).digest()
    return seed * blocks


def build_manifest() -> List[Shard]:
    shards = []
    for region in REGIONS:
        payload = make_payload(region)
        crc = zlib.crc32(payload)
        if region == "eu-west-3":
            # migrated shard: manifest was generated before the re-encrypt
            payload = payload[:-1] + b"\x00"
        replicas = "auto" if region.startswith("ap-") else "3"
        shards.append(Shard(region, payload, crc, replicas))
    return shards


def parse_size(text: str) -> int:
    """'512' -> 512, '4k' -> 4096, ... ; raises ValueError on junk."""
    text = text.strip().lower()
    if text and text[-1] in SIZE_SUFFIXES:
        return int(text[:-1]) * SIZE_SUFFIXES[text[-1]]
    return int(text)


def verify_shard(shard: Shard) -> Tuple[str, int, int]:
    """Runs in a worker process."""
    try:
        replicas = int(shard.replicas)
    except ValueError:
        replicas = 1  # 'auto' means: whatever the region has
    actual = zlib.crc32(shard.payload)
    if actual != shard.expected_crc:
        raise ValueError("checksum mismatch for shard %r" % shard.region)
    return shard.region, len(shard.payload), replicas


def summarize(results: List[Tuple[str, int, int]]) -> Dict[str, int]:
    total = sum(size * replicas for _, size, replicas in results)
    return {"shards": len(results), "bytes_with_replicas": total}


def main() -> None:
    parser = argparse.ArgumentParser(description="verify backup shards")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-shard-size", default="1m")
    parser.add_argument("--chunksize", type=int, default=1)
    parser.add_argument("--debug", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.INFO,
                        format="%(processName)s %(levelname)s %(message)s")

    limit = parse_size(args.max_shard_size)
    for legacy in ("1.5g", "unlimited"):
        try:
            log.debug("legacy size %s = %d", legacy, parse_size(legacy))
        except ValueError as exc:
            log.info("ignoring legacy size setting %r (%s)", legacy, exc)

    shards = build_manifest()
    too_big = [s.region for s in shards if len(s.payload) > limit]
    if too_big:
        log.warning("oversized shards: %s", too_big)
    log.info("verifying %d shards with %d workers (pid %d)",
             len(shards), args.workers, os.getpid())

    started = time.monotonic()
    with multiprocessing.Pool(processes=args.workers) as pool:
        results = pool.map(verify_shard, shards, chunksize=args.chunksize)
    log.info("done in %.2fs", time.monotonic() - started)
    print(summarize(results))
    print([asdict(s)["region"] for s in shards])


if __name__ == "__main__":
    main()
