#!/usr/bin/env python3
"""pkgplan: computing an install order recurses forever on our index.

`pkgplan install curl` works, `pkgplan install git` dies with RecursionError.
The index snapshot below is the relevant slice of index.json.  Note that
`openssl` build-depends on `perl`, and `perl` (with the ssl feature enabled
by default on our distro) depends on `openssl` again.
"""
from __future__ import annotations

import argparse
import logging
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Set

log = logging.getLogger("pkgplan")

INDEX = {
    "git": {"version": "2.44.0", "deps": ["curl", "zlib", "perl"], "features": {}},
    "curl": {"version": "8.6.0", "deps": ["openssl", "zlib"], "features": {}},
    "openssl": {"version": "3.2.1", "deps": ["zlib"], "build_deps": ["perl"], "features": {}},
    "perl": {"version": "5.38.2", "deps": [], "features": {"ssl": ["openssl"]}},
    "zlib": {"version": "1.3.1", "deps": [], "features": {}},
}
DEFAULT_FEATURES = {"perl": ["ssl"]}


@dataclass
class Package:
    name: str
    version: str
    deps: List[str] = field(default_factory=list)
    build_deps: List[str] = field(default_factory=list)

    def all_deps(self, include_build: bool) -> List[str]:
        return self.deps + (self.build_deps if include_build else [])


class Index:
    def __init__(self, raw: Dict[str, dict], features: Dict[str, List[str]]):
        self._raw = raw
        self._features = features
        self._cache: Dict[str, Package] = {}

    def get(self, name: str) -> Package:
        if name not in self._cache:
            spec = self._raw[name]
            deps = list(spec.get("deps", []))
            for feat in self._features.get(name, []):
                deps += spec["features"].get(feat, [])
            self._cache[name] = Package(name, spec["version"], deps, spec.get("build_deps", []))
        return self._cache[name]

    def maybe(self, name: str) -> Optional[Package]:
        try:
            return self.get(name)
        except KeyError:
            log.warning("package %s not in index", name)
            return None


class Planner:
    def __init__(self, index: Index, include_build: bool = True):
        self.index = index
        self.include_build = include_build
        self.order: "OrderedDict[str, Package]" = OrderedDict()

    def visit(self, name: str, seen: Set[str]) -> None:
        if name in self.order:
            return
        pkg = self.index.get(name)
        for dep in pkg.all_deps(self.include_build):
            if dep in seen:
                log.debug("cycle through %s ignored", dep)
                continue
            self.visit(dep, seen)
        # BUG? `seen` is only updated after the children were visited
        seen.add(name)
        self.order[name] = pkg

    def plan(self, targets: Iterable[str]) -> List[Package]:
        for t in targets:
            self.visit(t, set())
        return list(self.order.values())


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="pkgplan")
    ap.add_argument("targets", nargs="*", default=["git"])
    ap.add_argument("--no-build-deps", action="store_true")
    ap.add_argument("--extra", action="append", default=["gettext"])
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")

    index = Index(INDEX, DEFAULT_FEATURES)
    for extra in args.extra:
        if index.maybe(extra) is None:
            log.info("skipping optional extra %s", extra)

    planner = Planner(index, include_build=not args.no_build_deps)
    for pkg in planner.plan(args.targets):
        print("%-8s %s" % (pkg.name, pkg.version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
