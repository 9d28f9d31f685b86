#!/usr/bin/env python3
"""
Bug report: `ingest-agent --check` dies at start-up on the Windows build box.

The agent ships its defaults as an embedded JSON document so that it runs
without a config file; site files and environment overrides are layered on
top.  Every layer but the defaults is optional and failures there are only
logged.  On the build box the agent never gets past loading its defaults.
"""
import argparse
import json
import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
log = logging.getLogger("ingest")

# Defaults as shipped; the Windows section was edited by hand on the box.
DEFAULTS = r"""
{
  "agent": {
    "name": "ingest-agent",
    "version": "4.2.1",
    "heartbeat_seconds": 30,
    "max_batch": 500
  },
  "sinks": [
    {"kind": "http", "url": "https://collector.internal/v1/batch", "timeout": 5},
    {"kind": "file", "path": "/var/spool/ingest/batch.jsonl", "rotate_mb": 64}
  ],
  "parsers": {
    "syslog": {"enabled": true, "facility": "local3"},
    "nginx": {"enabled": true, "format": "combined"},
    "journald": {"enabled": false}
  },
  "platform": {
    "linux": {"spool": "/var/spool/ingest", "user": "ingest"},
    "windows": {"spool": "C:\ProgramData\ingest\spool", "user": "LocalService"}
  },
  "limits": {"memory_mb": 256, "open_files": 1024, "queue": 10000}
}
"""

SITE_FILES = ["/etc/ingest/site.json", os.path.expanduser("~/.ingest.json")]
ENV_PREFIX = "INGEST_"
# Older agents read overrides in this loose syntax; kept for the migration.
LEGACY_OVERRIDES = "{agent: {heartbeat_seconds: 15}}"


@dataclass
class Layer:
    name: str
    values: Dict[str, Any] = field(default_factory=dict)


def deep_merge(base: Dict[str, Any], top: Dict[str, Any]) -> Dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class ConfigLoader:
    def __init__(self, defaults: str, site_files: List[str], env_prefix: str):
        self.defaults = defaults
        self.site_files = site_files
        self.env_prefix = env_prefix

    def default_layer(self) -> Layer:
        return Layer("defaults", json.loads(self.defaults))

    def site_layers(self) -> List[Layer]:
        layers = []
        for path in self.site_files:
            try:
                with open(path) as fh:
                    layers.append(Layer(path, json.load(fh)))
            except (OSError, json.JSONDecodeError) as exc:
                log.info("skipping %s: %s", path, exc)
        return layers

    def env_layer(self) -> Layer:
        values: Dict[str, Any] = {}
        try:
            values.update(json.loads(os.environ.get("INGEST_LEGACY", LEGACY_OVERRIDES)))
        except json.JSONDecodeError as exc:
            log.info("legacy overrides ignored: %s", exc)
        for key, raw in os.environ.items():
            if not key.startswith(self.env_prefix):
                continue
            try:
                values[key[len(self.env_prefix):].lower()] = json.loads(raw)
            except json.JSONDecodeError:
                values[key[len(self.env_prefix):].lower()] = raw
        return Layer("env", values)

    def load(self) -> Dict[str, Any]:
        merged: Dict[str, Any] = {}
        env = self.env_layer()
        for layer in [self.default_layer(), *self.site_layers(), env]:
            merged = deep_merge(merged, layer.values)
        return merged


def check(config: Dict[str, Any]) -> List[str]:
    problems = []
    if config["agent"]["max_batch"] > config["limits"]["queue"]:
        problems.append("max_batch exceeds the queue")
    for sink in config["sinks"]:
        if sink["kind"] not in ("http", "file"):
            problems.append("unknown sink %r" % sink["kind"])
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="ingest-agent")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--platform", default=sys.platform)
    args = parser.parse_args(argv)
    loader = ConfigLoader(DEFAULTS, SITE_FILES, ENV_PREFIX)
    config = loader.load()
    platform = "windows" if args.platform.startswith("win") else "linux"
    log.warning("spool at %s", config["platform"][platform]["spool"])
    problems = check(config)
    for problem in problems:
        print("problem:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(["--check"]))
