"""Service config validation fails with a multi-line ValueError.

Context: we replaced pydantic with a ~50 line dataclass validator to drop a
dependency.  Loading `checkout.env` (inlined below) now fails with a
ValueError whose first line only says "1 validation error"; the actual field
is on the next line.  Note the defaults are rejected too (logged, harmless).
"""
import argparse
import dataclasses
import logging
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

log = logging.getLogger("svcconfig")

CHECKOUT_ENV = """
# checkout service -- generated 2024-02-11
SERVICE_NAME=checkout
SERVICE_PORT=8443
SERVICE_REPLICAS=three
SERVICE_TIMEOUT=2.5
SERVICE_TAGS="payments critical"
"""


@dataclass
class ServiceConfig:
    name: str
    port: int = 8080
    replicas: int = 1
    timeout: float = 30.0
    tags: list = field(default_factory=list)

    def limits(self) -> Dict[str, Any]:
        return {"port": (1, 65535), "replicas": (1, 64), "timeout": (0.1, 300.0)}


def parse_env(text: str, prefix: str = "SERVICE_") -> Dict[str, str]:
    out = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        if key.startswith(prefix):
            out[key[len(prefix):].lower()] = " ".join(shlex.split(value))
    return out


def coerce(raw: str) -> Any:
    """Best-effort: '3' -> 3, '2.5' -> 2.5, 'a b' -> ['a', 'b'], else str."""
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        pass
    return raw.split() if " " in raw else raw


def validate(cls, values: Dict[str, Any]) -> List[Tuple[str, str]]:
    errors = []
    limits = cls(name="probe").limits()
    for f in dataclasses.fields(cls):
        if f.name not in values:
            continue
        value = values[f.name]
        if not isinstance(value, f.type):
            errors.append((f.name, "expected %s, got %s (%r)"
                           % (f.type.__name__, type(value).__name__, value)))
            continue
        lo, hi = limits.get(f.name, (None, None))
        if lo is not None and not lo <= value <= hi:
            errors.append((f.name, "must be between %s and %s" % (lo, hi)))
    return errors


def build(cls, values: Dict[str, Any]):
    errors = validate(cls, values)
    if errors:
        lines = ["%d validation error%s for %s" % (len(errors), "s" if len(errors) > 1 else "",
                                                  cls.__name__)]
        lines += ["  %s: %s" % err for err in errors]
        raise ValueError("\n".join(lines))
    return cls(**values)


def load_defaults() -> ServiceConfig:
    # shipped defaults; port 0 means "pick one" in the old launcher
    try:
        return build(ServiceConfig, {"name": "default", "port": 0})
    except ValueError as exc:
        log.warning("defaults rejected, using built-ins:\n%s", exc)
        return ServiceConfig(name="default")


def main() -> int:
    ap = argparse.ArgumentParser(description="validate a service env file")
    ap.add_argument("--prefix", default="SERVICE_")
    ap.add_argument("--print", dest="do_print", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)

    defaults = load_defaults()
    raw = parse_env(CHECKOUT_ENV, args.prefix)
    values = {k: coerce(v) for k, v in raw.items()}
    log.info("parsed %d keys: %s", len(values), sorted(values))
    cfg = build(ServiceConfig, values)
    merged = dataclasses.replace(defaults, **dataclasses.asdict(cfg))
    if args.do_print:
        print(merged)
    print("ok:", merged.name, merged.port, merged.replicas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
