#!/usr/bin/env python3
"""Webhook dispatcher: the *error handler* crashes and hides the real error.

What we see in the worker logs is an AttributeError from inside our
`except` block ("During handling of the above exception, another exception
occurred").  Replays three recorded deliveries through the dispatcher.
"""
import argparse
import base64
import hmac
import json
import logging
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List

logger = logging.getLogger("hooks")
SECRET = b"not-a-real-secret"

Handler = Callable[[Dict[str, Any]], str]
HANDLERS: Dict[str, Handler] = {}


def on(event_type: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[event_type] = fn
        return fn
    return register


@on("ping")
def handle_ping(payload: Dict[str, Any]) -> str:
    return "pong (zen: %s)" % payload.get("zen", "-")


@on("push")
def handle_push(payload: Dict[str, Any]) -> str:
    repo = payload["repository"]["full_name"]
    commits = payload.get("commits", [])
    return "%d commit(s) to %s" % (len(commits), repo)


@on("issues")
def handle_issue(payload: Dict[str, Any]) -> str:
    return "issue #%s %s" % (payload["issue"]["number"], payload["action"])


def decode_body(body: Any) -> Dict[str, Any]:
    """Deliveries come either raw (bytes), base64 text or already parsed."""
    try:
        body = body.decode("utf-8")
    except AttributeError:
        pass  # str or dict
    if isinstance(body, str):
        if not body.lstrip().startswith("{"):
            body = base64.b64decode(body).decode("utf-8")
        return json.loads(body)
    return body


def verify(body: bytes, signature: str) -> bool:
    digest = hmac.new(SECRET, body, "sha256").hexdigest()
    return hmac.compare_digest("sha256=" + digest, signature)


class Dispatcher:
    def __init__(self) -> None:
        self.results: List[str] = []
        self.failures = 0

    def dispatch(self, event: Dict[str, Any]) -> None:
        handler = HANDLERS.get(event["type"])
        if handler is None:
            logger.info("no handler for %s", event["type"])
            return
        payload = decode_body(event["body"])
        try:
            self.results.append(handler(payload))
        except Exception:
            self.failures += 1
            # TODO: event used to be a Delivery object before the refactor
            logger.exception("handler %s failed for delivery %s",
                             handler.__name__, event.delivery_id)


def recorded_deliveries() -> List[Dict[str, Any]]:
    ping = json.dumps({"zen": "Keep it logically awesome."}).encode()
    push = base64.b64encode(json.dumps({
        "ref": "refs/heads/main",
        "repo": {"full_name": "acme/widgets"},      # renamed field upstream
        "commits": [{"id": "a1"}, {"id": "b2"}],
    }).encode()).decode()
    return [
        {"type": "ping", "delivery_id": str(uuid.UUID(int=1)), "body": ping},
        {"type": "star", "delivery_id": str(uuid.UUID(int=2)), "body": b"{}"},
        {"type": "push", "delivery_id": str(uuid.UUID(int=3)), "body": push},
        {"type": "issues", "delivery_id": str(uuid.UUID(int=4)),
         "body": {"action": "opened", "issue": {"number": 7}}},
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description="replay recorded webhook deliveries")
    parser.add_argument("--verify", action="store_true", help="check HMAC signatures")
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level)

    dispatcher = Dispatcher()
    started = datetime.now(timezone.utc)
    for delivery in recorded_deliveries():
        if args.verify and not verify(delivery["body"], delivery.get("sig", "")):
            logger.warning("bad signature on %s", delivery["delivery_id"])
            continue
        dispatcher.dispatch(delivery)
    print("%d ok, %d failed since %s" % (len(dispatcher.results), dispatcher.failures,
                                          started.isoformat()))


if __name__ == "__main__":
    main()
