"""The service dies at start-up while loading its logging settings.

Settings come from a JSON document (normally a file next to the service, inlined here). The
console handler is fine; adding the rotating audit log broke start-up.
"""
import argparse
import json
import logging
import logging.config
import logging.handlers
import os
import sys

SETTINGS = """
{
  "version": 1,
  "disable_existing_loggers": false,
  "formatters": {
    "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    "audit": {"format": "%(asctime)s %(message)s"}
  },
  "handlers": {
    "console": {"class": "logging.StreamHandler", "formatter": "plain", "level": "INFO"},
    "audit": {
      "class": "logging.handlers.RotatingFileHandler",
      "filename": "audit.log",
      "maxBytes": "1MB",
      "backupCount": 3,
      "formatter": "audit"
    }
  },
  "loggers": {"audit": {"handlers": ["audit"], "level": "INFO", "propagate": false}},
  "root": {"handlers": ["console"], "level": "INFO"}
}
"""


def parse_args():
    ap = argparse.ArgumentParser(description="start the ingest service")
    ap.add_argument("--port", type=int, default=8040)
    ap.add_argument("--log-dir", default=os.getcwd())
    return ap.parse_args([])


def load_settings(text, log_dir):
    settings = json.loads(text)
    for handler in settings["handlers"].values():
        if "filename" in handler:
            handler["filename"] = os.path.join(log_dir, handler["filename"])
    return settings


def apply_env_overrides(settings, environ):
    """LOG_LEVEL and AUDIT_LOG override the document, as in the deployment manifests."""
    level = environ.get("LOG_LEVEL")
    if level:
        settings["root"]["level"] = level.upper()
    audit = environ.get("AUDIT_LOG")
    if audit:
        settings["handlers"]["audit"]["filename"] = audit
    return settings


def configure(settings):
    logging.config.dictConfig(settings)
    root = logging.getLogger()
    level = logging.getLevelName(root.level)
    return level, [type(h).__name__ for h in root.handlers]


class Service:
    def __init__(self, port):
        self.port = port
        self.log = logging.getLogger("ingest")
        self.audit = logging.getLogger("audit")

    def start(self):
        self.log.info("listening on %d", self.port)
        self.audit.info("service started")


class Health:
    """What the readiness probe reports."""

    def __init__(self):
        self.checks = {}

    def mark(self, name, ok):
        self.checks[name] = bool(ok)

    def ready(self):
        return all(self.checks.values()) and bool(self.checks)


def main():
    args = parse_args()
    health = Health()
    settings = load_settings(SETTINGS, args.log_dir)
    settings = apply_env_overrides(settings, {"LOG_LEVEL": "info"})
    health.mark("settings", settings)
    level, handlers = configure(settings)
    print(f"logging at {level} to {', '.join(handlers)}", file=sys.stderr)
    health.mark("logging", handlers)
    Service(args.port).start()
    print("ready" if health.ready() else "not ready", file=sys.stderr)


if __name__ == "__main__":
    main()
