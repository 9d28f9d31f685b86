"""Repro: the label printer service no longer starts.

labelhouse prints shipping labels for the packing tables.  Yesterday's change
added the carrier to the shipment record so that the DHL and UPS labels can
be told apart; since then the service dies on start-up, before it reads a
single order.  This file is labels/model.py and labels/cli.py pasted
together; run with no arguments.
"""
import argparse
import csv
import io
import logging
import os
import sys
from dataclasses import dataclass, field
from enum import Enum

log = logging.getLogger("labelhouse")

GRAMS_PER_KG = 1000
MAX_PARCEL_GRAMS = 31_500
DEFAULT_SENDER = "Labelhouse GmbH, Hafenstr. 4, 20457 Hamburg"

PACKING_LIST = """order;sku;qty;grams
B-311;mug-blue;2;420
B-311;tea-tin;1;180
B-312;kettle;1;1650
B-312;mug-blue;4;420
"""


def copies_from_env(default: int = 1) -> int:
    """LABELHOUSE_COPIES lets a packing table print duplicates; unset means one."""
    try:
        return max(1, int(os.environ.get("LABELHOUSE_COPIES")))
    except (TypeError, ValueError):
        return default


LABEL_COPIES = copies_from_env()


class Service(Enum):
    STANDARD = "standard"
    EXPRESS = "express"


@dataclass(frozen=True)
class ShipmentLine:
    sku: str
    qty: int
    grams: int

    @property
    def total_grams(self) -> int:
        return self.qty * self.grams


@dataclass
class Shipment:
    order: str
    service: Service = Service.STANDARD
    lines: list[ShipmentLine] = field(default_factory=list)
    weights: dict[str, int] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    recipient: "Address" = None
    carrier: str

    def add(self, line: ShipmentLine) -> None:
        self.lines.append(line)
        self.weights[line.sku] = self.weights.get(line.sku, 0) + line.total_grams

    @property
    def grams(self) -> int:
        return sum(self.weights.values())

    def parcels(self) -> int:
        return max(1, -(-self.grams // MAX_PARCEL_GRAMS))


@dataclass
class Address:
    name: str
    street: str
    city: str
    country: str = "DE"

    def one_line(self) -> str:
        return f"{self.name}, {self.street}, {self.city} ({self.country})"


def read_packing_list(text: str) -> dict[str, Shipment]:
    shipments: dict[str, Shipment] = {}
    for row in csv.DictReader(io.StringIO(text), delimiter=";"):
        order = row["order"]
        shipment = shipments.setdefault(order, Shipment(order=order, carrier="dhl"))
        shipment.add(ShipmentLine(row["sku"], int(row["qty"]), int(row["grams"])))
    return shipments


def label_text(shipment: Shipment, sender: str) -> str:
    to = shipment.recipient.one_line() if shipment.recipient else "(address missing)"
    kg = shipment.grams / GRAMS_PER_KG
    return "\n".join([
        f"FROM {sender}",
        f"TO   {to}",
        f"{shipment.carrier.upper()} {shipment.service.value} · {kg:.2f} kg · "
        f"{shipment.parcels()} parcel(s)",
        f"REF  {shipment.order} {' '.join(shipment.tags)}".rstrip(),
    ])


def main() -> int:
    parser = argparse.ArgumentParser(description="print shipping labels (repro)")
    parser.add_argument("--sender", default=DEFAULT_SENDER)
    parser.add_argument("--express", action="store_true")
    parser.add_argument("-q", "--quiet", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")

    shipments = read_packing_list(PACKING_LIST)
    for shipment in shipments.values():
        if args.express:
            shipment.service = Service.EXPRESS
        shipment.recipient = Address("Packing table 3", "Hafenstr. 4", "Hamburg")
        for _ in range(LABEL_COPIES):
            print(label_text(shipment, args.sender))
            print()
    log.info("printed %d label(s)", len(shipments))
    return 0


if __name__ == "__main__":
    sys.exit(main())
