"""svcctl: `svcctl render --profile prod` fails with "cannot load settings for 'prod'".

OPS-1418.  Staging renders fine; prod fails right after the override layer
logs its usual warning.  The settings files are embedded below (same content
as settings/*.json in the deploy repo) so the repro runs standalone:
    python3 repro.py
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import string
from dataclasses import dataclass, field
from typing import Dict, List, Optional

LOG = logging.getLogger("svcctl")

BUNDLED = {
    "base": """
        {"service": "billing", "replicas": 2, "log_level": "info",
         "endpoints": {"api": "http://0.0.0.0:8080", "metrics": "http://0.0.0.0:9100"}}
    """,
    "staging": """
        {"replicas": 1, "log_level": "debug", "feature_flags": ["new-invoices"]}
    """,
    "prod": """
        {
          "replicas": 6,
          "log_level": "warning",
          "feature_flags": ["new-invoices", "async-export"],
        }
    """,
}

# Per-host overrides normally come from SVCCTL_OVERRIDES; an empty layer is the default.
ENV_OVERRIDES: Dict[str, Dict[str, object]] = {
    "staging": {"replicas": 1},
}


class SvcctlError(Exception):
    """Base class for errors shown to the operator."""


class SettingsError(SvcctlError):
    """A settings layer could not be loaded or merged."""


@dataclass
class RenderOptions:
    profile: str = "prod"
    template: str = "replicas=$replicas level=$log_level flags=$flags"
    strict: bool = True
    layers: List[str] = field(default_factory=lambda: ["base", "profile", "overrides"])


def deep_merge(base: Dict[str, object], top: Dict[str, object]) -> Dict[str, object]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)  # type: ignore[arg-type]
        else:
            out[key] = value
    return out


class SettingsLoader:
    def __init__(self, bundled: Dict[str, str], overrides: Dict[str, Dict[str, object]]):
        self.bundled = bundled
        self.overrides = overrides
        self.loaded: List[str] = []

    def _parse(self, name: str) -> Dict[str, object]:
        text = self.bundled[name]
        return json.loads(text)

    def profile_layer(self, profile: str) -> Dict[str, object]:
        try:
            data = self._parse(profile)
        except (KeyError, ValueError) as exc:
            raise SettingsError("cannot load settings for %r" % profile) from exc
        self.loaded.append("profile:" + profile)
        return data

    def override_layer(self, profile: str) -> Dict[str, object]:
        try:
            data = dict(self.overrides[profile])
        except KeyError as exc:
            raise SettingsError("cannot load settings for %r" % profile) from exc
        self.loaded.append("overrides:" + profile)
        return data

    def load(self, opts: RenderOptions) -> Dict[str, object]:
        merged = self._parse("base")
        self.loaded.append("base")
        try:
            overrides: Optional[Dict[str, object]] = self.override_layer(opts.profile)
        except SettingsError as exc:
            LOG.warning("%s: no host overrides (%s), using bundled values", exc, type(exc.__cause__).__name__)
            overrides = None
        merged = deep_merge(merged, self.profile_layer(opts.profile))
        if overrides:
            merged = deep_merge(merged, overrides)
        return merged


def render(settings: Dict[str, object], opts: RenderOptions) -> str:
    values = dict(settings)
    values["flags"] = ",".join(settings.get("feature_flags", []))  # type: ignore[arg-type]
    tmpl = string.Template(opts.template)
    return tmpl.substitute(values) if opts.strict else tmpl.safe_substitute(values)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="svcctl")
    ap.add_argument("command", nargs="?", default="render", choices=["render", "show"])
    ap.add_argument("--profile", default=os.environ.get("SVCCTL_PROFILE", "prod"))
    ap.add_argument("--lenient", action="store_true", help="leave unknown $vars in place")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="svcctl: %(levelname)s %(message)s")

    opts = RenderOptions(profile=args.profile, strict=not args.lenient)
    loader = SettingsLoader(BUNDLED, ENV_OVERRIDES)
    settings = loader.load(opts)
    LOG.debug("layers: %s", loader.loaded)
    if args.command == "show":
        print(json.dumps(settings, indent=2, sort_keys=True))
    else:
        print(render(settings, opts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
