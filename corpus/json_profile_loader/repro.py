#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""
Bug: `render-profiles` crashes with JSONDecodeError even though every source
is supposed to be optional / best effort.

Minimal(ish) setup copied from our deploy tooling.  Profiles come from, in
order: an environment variable, an inline JSON-lines blob (as shipped in the
helm chart) and per-team overrides.  The team overrides are written by hand
and one of them was pasted from a Python REPL.
"""
import argparse
import json
import logging
import os
import pprint
import sys
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional

logging.basicConfig(level=logging.INFO, format="%(levelname)-7s %(message)s")
log = logging.getLogger(__name__)

ENV_VAR = "RENDER_PROFILES_JSON_7F3A"

HELM_BLOB = """\
{"name": "default", "replicas": 2, "cpu": "500m"}
{"name": "batch", "replicas": 1, "cpu": "2"}
"""

TEAM_OVERRIDES = {
    "payments": '{"name": "payments", "replicas": 4}',
    "search": '{"name": "search", "cpu": "1500m"}',
    "growth": "{'name': 'growth', 'replicas': 3}",   # pasted from a REPL...
    "infra": '{"name": "infra"}',
}


class Profile(NamedTuple):
    name: str
    replicas: int = 1
    cpu: str = "250m"
    source: str = "?"


def parse_profile(text: str, source: str) -> Profile:
    data: Dict[str, Any] = json.loads(text)
    return Profile(source=source, **data)


class Source:
    label = "abstract"

    def profiles(self) -> Iterator[Profile]:
        raise NotImplementedError


class EnvSource(Source):
    label = "env"

    def profiles(self) -> Iterator[Profile]:
        raw = os.environ.get(ENV_VAR, "")
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            log.info("%s not set or invalid (%s), skipping", ENV_VAR, exc)
            return
        for item in items:
            yield Profile(source=self.label, **item)


class HelmSource(Source):
    label = "helm"

    def __init__(self, blob: str):
        self.blob = blob

    def profiles(self) -> Iterator[Profile]:
        try:
            # older charts shipped a single JSON document
            doc = json.loads(self.blob)
            yield parse_profile(json.dumps(doc), self.label)
            return
        except json.JSONDecodeError:
            log.debug("helm blob is JSON-lines, parsing line by line")
        for line in self.blob.splitlines():
            if line.strip():
                yield parse_profile(line, self.label)


class OverrideSource(Source):
    label = "override"

    def __init__(self, overrides: Dict[str, str], teams: Iterable[str]):
        self.overrides = overrides
        self.teams = list(teams)

    def profiles(self) -> Iterator[Profile]:
        for team in self.teams:
            text = self.overrides.get(team)
            if text is None:
                continue
            yield parse_profile(text, "%s:%s" % (self.label, team))


def merge(sources: List[Source]) -> Dict[str, Profile]:
    merged: Dict[str, Profile] = {}
    for src in sources:
        for prof in src.profiles():
            if prof.name in merged:
                log.info("profile %s overridden by %s", prof.name, prof.source)
            merged[prof.name] = prof
    return merged


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="render-profiles")
    parser.add_argument("--teams", default=",".join(TEAM_OVERRIDES))
    parser.add_argument("--format", choices=["table", "json"], default="table")
    args = parser.parse_args(argv)

    sources: List[Source] = [
        EnvSource(),
        HelmSource(HELM_BLOB),
        OverrideSource(TEAM_OVERRIDES, args.teams.split(",")),
    ]
    profiles = merge(sources)
    if args.format == "json":
        json.dump({k: v._asdict() for k, v in profiles.items()}, sys.stdout, indent=2)
    else:
        for name, prof in sorted(profiles.items()):
            print("%-10s %3d  %-6s %s" % (name, prof.replicas, prof.cpu, prof.source))
    pprint.pprint(len(profiles))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
