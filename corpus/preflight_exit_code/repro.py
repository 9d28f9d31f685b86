#!/usr/bin/env python3
"""preflight -- environment checks run before every deploy.

Issue: preflight exits with status 3 ("configuration error") on the new
build agents although every tool is installed and up to date.  The agent's
inventory is pasted in AGENT_INVENTORY below.

Exit codes: 0 ok, 2 usage error, 3 configuration error, 4 check crashed.
"""
import argparse
import logging
import shlex
import sys
from dataclasses import dataclass
from enum import Enum
from typing import Callable, Dict, List, Optional

EXIT_OK, EXIT_USAGE, EXIT_CONFIG, EXIT_CRASH = 0, 2, 3, 4

logger = logging.getLogger("preflight")

AGENT_INVENTORY = {
    "git": "2.43.0",
    "terraform": "1.10.2",
    "kubectl": "1.29.1",
    "helm": "3.14.0",
}

REQUIREMENTS = {
    "git": "2.30",
    "terraform": "1.9",
    "kubectl": "1.27",
}

# extra args for the checks, as stored in the pipeline settings
PLUGIN_ARGS = {"helm": "--min 3.10 --strict", "kubectl": "--context=staging --timeout"}


class Status(Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


@dataclass
class Result:
    check: str
    status: Status
    detail: str = ""


CHECKS: Dict[str, Callable[[], Result]] = {}


def check(name: str):
    def register(fn: Callable[[], Result]) -> Callable[[], Result]:
        CHECKS[name] = fn
        return fn
    return register


def version_ok(found: str, required: str) -> bool:
    # compares "major.minor" prefixes
    return found[:len(required)] >= required


@check("tool-versions")
def check_versions() -> Result:
    missing, old = [], []
    for tool, required in REQUIREMENTS.items():
        found = AGENT_INVENTORY.get(tool)
        if found is None:
            missing.append(tool)
        elif not version_ok(found, required):
            old.append("%s %s < %s" % (tool, found, required))
    if missing or old:
        return Result("tool-versions", Status.FAIL, "; ".join(missing + old))
    return Result("tool-versions", Status.PASS)


@check("plugin-args")
def check_plugin_args() -> Result:
    """Validate per-plugin arguments with a throwaway parser."""
    problems = []
    for plugin, argstring in PLUGIN_ARGS.items():
        p = argparse.ArgumentParser(prog="preflight-" + plugin, add_help=False)
        p.add_argument("--min")
        p.add_argument("--strict", action="store_true")
        p.add_argument("--context")
        p.add_argument("--timeout", type=int)
        try:
            p.parse_args(shlex.split(argstring))
        except SystemExit as exc:
            problems.append("%s (argparse exit %s)" % (plugin, exc.code))
    status = Status.WARN if problems else Status.PASS
    return Result("plugin-args", status, ", ".join(problems))


def run_checks(names: Optional[List[str]] = None) -> List[Result]:
    results = []
    for name, fn in CHECKS.items():
        if names and name not in names:
            continue
        try:
            results.append(fn())
        except Exception as exc:  # a crashing check is reported, not fatal
            results.append(Result(name, Status.FAIL, "crashed: %r" % exc))
            logger.exception("check %s crashed", name)
    return results


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="preflight")
    parser.add_argument("--only", action="append", default=None)
    parser.add_argument("--warn-is-error", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="preflight: %(message)s")

    results = run_checks(args.only)
    for r in results:
        logger.info("%-14s %-4s %s", r.check, r.status.value, r.detail)
    if any(r.status is Status.FAIL for r in results):
        return EXIT_CONFIG
    if args.warn_is_error and any(r.status is Status.WARN for r in results):
        return EXIT_CONFIG
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
