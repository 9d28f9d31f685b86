"""metrics-agent: exporter plugins fail to load after upgrading to 0.14.

The agent builds each exporter from its config section with `cls(**options)`.
In 0.14 the OTLP exporter grew a required `timeout` argument; the agent
tries the new-style options first and falls back to legacy ones, but the
fallback path ends in a TypeError.  Config is inlined (YAML -> dict).
"""
import abc
import argparse
import inspect
import logging
import sys
import time
from typing import Any, Dict, List, Mapping, Type

logger = logging.getLogger("metrics-agent")

AGENT_CONFIG: Dict[str, Any] = {
    "interval": 10,
    "exporters": [
        {"kind": "stdout", "options": {"prefix": "metric"}},
        {"kind": "statsd", "options": {"host": "127.0.0.1", "port": 8125}},
        {"kind": "otlp", "options": {"endpoint": "http://collector:4318", "retry": 3}},
    ],
}


class Exporter(abc.ABC):
    registry: Dict[str, Type["Exporter"]] = {}
    kind = "abstract"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Exporter.registry[cls.kind] = cls

    @abc.abstractmethod
    def export(self, samples: Mapping[str, float]) -> int:
        ...


class StdoutExporter(Exporter):
    kind = "stdout"

    def __init__(self, prefix: str = ""):
        self.prefix = prefix

    def export(self, samples: Mapping[str, float]) -> int:
        for name, value in sorted(samples.items()):
            print("%s.%s %g" % (self.prefix, name, value))
        return len(samples)


class StatsdExporter(Exporter):
    kind = "statsd"

    def __init__(self, host: str, port: int = 8125, endpoint: str = ""):
        self.addr = (host, port)

    def export(self, samples: Mapping[str, float]) -> int:
        lines = ["%s:%g|g" % item for item in samples.items()]
        logger.debug("would send %d bytes to %s:%d", sum(map(len, lines)), *self.addr)
        return len(lines)


class OTLPExporter(Exporter):
    kind = "otlp"

    def __init__(self, endpoint: str, timeout: float, retries: int = 0):
        self.endpoint = endpoint
        self.timeout = timeout
        self.retries = retries

    def export(self, samples: Mapping[str, float]) -> int:
        logger.debug("POST %s (%d samples)", self.endpoint, len(samples))
        return len(samples)


def legacy_options(options: Dict[str, Any]) -> Dict[str, Any]:
    """0.13 used `retry`, 0.14 uses `retries`."""
    opts = dict(options)
    if "retry" in opts:
        opts["retries"] = opts.pop("retry")
    return opts


def build_exporter(spec: Dict[str, Any]) -> Exporter:
    cls = Exporter.registry[spec["kind"]]
    options = spec.get("options", {})
    try:
        return cls(**options)
    except TypeError as exc:
        logger.info("%s: new-style options rejected (%s), trying legacy", spec["kind"], exc)
    return cls(**legacy_options(options))


def describe(cls: Type[Exporter]) -> str:
    return "%s%s" % (cls.__name__, inspect.signature(cls.__init__))


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="metrics-agent")
    parser.add_argument("--once", action="store_true", default=True)
    parser.add_argument("--list-plugins", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    if args.list_plugins:
        for cls in Exporter.registry.values():
            print(describe(cls))

    # probe: the statsd exporter must refuse a config without host
    try:
        StatsdExporter(port=9125)
    except TypeError as exc:
        logger.info("probe ok: %s", exc)

    exporters = [build_exporter(spec) for spec in AGENT_CONFIG["exporters"]]
    samples = {"cpu.user": 12.5, "cpu.system": 3.25, "mem.rss_mb": 412.0}
    started = time.perf_counter()
    sent = sum(e.export(samples) for e in exporters)
    logger.info("exported %d samples in %.1fms", sent, (time.perf_counter() - started) * 1e3)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
