#!/usr/bin/env python3
"""Repro for #4412: `telemetry-ingest` crashes when a sensor profile is loaded
from the v3 fleet manifest.

Steps: just run this file.  Expected: a summary table of the readings.
Actual: KeyError deep inside SensorProfile.  The legacy manifests (v2) work
fine, only the v3 layout for the thermal board triggers it.
"""
import argparse
import logging
import os
import sys
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

log = logging.getLogger("telemetry.ingest")

# Trimmed copy of fleet-manifest.json (v3).  The real file is ~2 MB.
FLEET_MANIFEST = {
    "version": 3,
    "boards": {
        "imu-01": {
            "kind": "imu",
            "channels": ["ax", "ay", "az"],
            "settings": {"calibration": {"gain": 1.02, "offset": -0.4}},
        },
        "thermal-07": {
            "kind": "thermal",
            "channels": ["t0", "t1"],
            # v3 moved calibration under "settings.factory" -- see migration doc
            "settings": {"factory": {"gain": 0.98, "offset": 0.1}},
        },
    },
}


@dataclass
class Reading:
    board: str
    channel: str
    raw: float
    unit: str = "counts"


@dataclass
class CalibrationParams:
    gain: float = 1.0
    offset: float = 0.0
    source: str = "default"


class SettingsBlock:
    """Thin wrapper around the `settings` dict of one board."""

    def __init__(self, raw: Dict[str, dict]):
        self._raw = raw

    def section(self, name: str) -> dict:
        return self._raw[name]

    def optional_section(self, name: str) -> Optional[dict]:
        try:
            return self._raw[name + "_v2"]
        except KeyError:
            log.debug("no %s_v2 section, falling back", name)
            return None


class SensorProfile:
    """A board's profile: channel list plus settings."""

    def __init__(self, board_id: str, spec: dict):
        self.board_id = board_id
        self.kind = spec.get("kind", "generic")
        self.channels: List[str] = list(spec["channels"])
        self.settings = SettingsBlock(spec.get("settings", {}))

    def calibration(self) -> CalibrationParams:
        legacy = self.settings.optional_section("calibration")
        if legacy is not None:
            return CalibrationParams(**legacy, source="v2")
        section = self.settings.section("calibration")
        return CalibrationParams(section["gain"], section["offset"], source="v3")


class FleetRegistry:
    """Owns every SensorProfile parsed from the manifest."""

    def __init__(self, manifest: dict):
        self.version = manifest.get("version", 1)
        self.profiles: Dict[str, SensorProfile] = {}
        for board_id, spec in manifest["boards"].items():
            self.profiles[board_id] = SensorProfile(board_id, spec)

    def profile(self, board_id: str) -> SensorProfile:
        return self.profiles[board_id]


@dataclass
class IngestPipeline:
    registry: FleetRegistry
    readings: List[Reading] = field(default_factory=list)
    dropped: int = 0

    def feed(self, reading: Reading) -> None:
        self.readings.append(reading)

    def calibrated(self) -> List[float]:
        out = []
        for r in self.readings:
            params = self.registry.profile(r.board).calibration()
            out.append(r.raw * params.gain + params.offset)
        return out


def legacy_lookup(table: dict, key: str) -> Optional[float]:
    """The old code path, still hit by the dashboard exporter."""
    try:
        return table[key]
    except KeyError:
        return None


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="ingest telemetry readings")
    p.add_argument("--boards", default="imu-01,thermal-07")
    p.add_argument("--samples", type=int, default=3)
    p.add_argument("--verbose", "-v", action="store_true")
    p.add_argument("--dump-json", action="store_true", help="print manifest")
    return p.parse_args(argv)


def main() -> int:
    args = parse_args()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    log.info("python %s on %s", sys.version.split()[0], os.name)
    if args.dump_json:
        print(json.dumps(FLEET_MANIFEST, indent=2))

    registry = FleetRegistry(FLEET_MANIFEST)
    log.info("manifest v%d with %d boards", registry.version, len(registry.profiles))
    print("legacy offset:", legacy_lookup({"gain": 1.0}, "legacy_offset"))

    pipeline = IngestPipeline(registry)
    for board in args.boards.split(","):
        profile = registry.profile(board)
        for i in range(args.samples):
            for ch in profile.channels:
                pipeline.feed(Reading(board, ch, raw=100.0 + i))
    log.info("buffered %d readings", len(pipeline.readings))

    values = pipeline.calibrated()
    print("mean calibrated value: %.3f" % (sum(values) / len(values)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
