"""Repro: order webhooks stop going out after the warehouse import.

shopbell posts an ``order.paid`` event to every subscriber.  The body is the
event as canonical JSON (sorted keys, no spaces) and the X-Shopbell-Digest
header is an HMAC of that body.  Since the legacy catalogue was imported some
orders make the sender crash before anything is posted.  This is
sender/outbox.py cut down to one order and no network; run with no arguments.
"""
import argparse
import hashlib
import hmac
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List

log = logging.getLogger("shopbell.outbox")

SECRET = b"whsec_4f1d9c2e"
API_VERSION = "2023-10"
SUBSCRIBERS = ["https://hooks.example.net/shop", "https://erp.example.org/in/orders"]

# Catalogue rows as the nightly import writes them.  The legacy rows carry the
# old numeric article numbers in the "sku" column.
CATALOGUE = [
    {"sku": "reed-diffuser", "title": "Reed diffuser, cedar", "price_cents": 1450},
    {"sku": "soy-candle-l", "title": "Soy candle, large", "price_cents": 2200},
    {"sku": "1008", "title": "Linen spray (legacy)", "price_cents": 990},
]

ORDER = {
    "number": "A-20417",
    "email": "kim@example.com",
    "lines": [("reed-diffuser", 2), ("1008", 1), ("soy-candle-l", 1)],
    "shipping": {"method": "parcel", "country": "DE"},
}


class DeliveryError(Exception):
    pass


@dataclass
class Event:
    kind: str
    data: Dict[str, Any]
    created: int = field(default_factory=lambda: int(time.time()))
    attempts: List[str] = field(default_factory=list)


def normalize_sku(raw: str):
    """Article numbers from the old shop are numbers; keep them numeric for the ERP."""
    raw = raw.strip()
    return int(raw) if raw.isdigit() else raw


def catalogue_index(rows):
    return {normalize_sku(r["sku"]): r for r in rows}


def quantities(order) -> Dict[Any, int]:
    out: Dict[Any, int] = {}
    for sku, qty in order["lines"]:
        key = normalize_sku(sku)
        out[key] = out.get(key, 0) + qty
    return out


def order_total(order, index) -> int:
    return sum(index[normalize_sku(sku)]["price_cents"] * qty for sku, qty in order["lines"])


def build_event(order, index) -> Event:
    data = {
        "order": {
            "number": order["number"],
            "email": order["email"],
            "total_cents": order_total(order, index),
            "currency": "EUR",
            "quantities": quantities(order),
        },
        "shipping": dict(order["shipping"]),
        "api_version": API_VERSION,
    }
    return Event(kind="order.paid", data=data)


def canonical_body(event: Event) -> bytes:
    payload = {"type": event.kind, "created": event.created, "data": event.data}
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def digest(body: bytes) -> str:
    return hmac.new(SECRET, body, hashlib.sha256).hexdigest()


def newest_first(events):
    # Events restored from the outbox table may lack a timestamp; keep them last.
    try:
        return sorted(events, key=lambda e: e.created, reverse=True)
    except TypeError as exc:
        log.warning("outbox order undefined (%s); keeping insertion order", exc)
        return list(events)


def post(url: str, body: bytes, signature: str, dry_run: bool) -> None:
    if dry_run:
        log.info("would POST %d bytes to %s (digest %s…)", len(body), url, signature[:12])
        return
    raise DeliveryError(f"network disabled in this repro: {url}")


def deliver(event: Event, subscribers, dry_run: bool) -> int:
    body = canonical_body(event)
    signature = digest(body)
    sent = 0
    for url in subscribers:
        try:
            post(url, body, signature, dry_run)
            sent += 1
        except DeliveryError as exc:
            event.attempts.append(str(exc))
            log.error("delivery to %s failed: %s", url, exc)
    return sent


def main() -> int:
    parser = argparse.ArgumentParser(description="send pending order webhooks (repro)")
    parser.add_argument("--live", action="store_true", help="really POST")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")

    index = catalogue_index(CATALOGUE)
    log.info("catalogue: %d articles", len(index))
    stale = Event(kind="order.paid", data={}, created=None)
    event = build_event(ORDER, index)
    pending = newest_first([stale, event])
    log.info("%d event(s) pending", len(pending))
    sent = deliver(event, SUBSCRIBERS, dry_run=not args.live)
    log.info("delivered to %d of %d subscribers", sent, len(SUBSCRIBERS))
    return 0 if sent == len(SUBSCRIBERS) else 1


if __name__ == "__main__":
    sys.exit(main())
