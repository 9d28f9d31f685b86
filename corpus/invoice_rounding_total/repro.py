"""Repro: the monthly invoice self-check fails by one cent on invoice INV-2024-0117.

Our contract with customers says every invoice line is rounded to the cent
(half up) on its own, and the invoice total is the sum of the rounded lines.
billing/invoice.py was refactored last sprint and the self-check that runs
before the PDFs go out now fails for one customer.  This is a trimmed copy of
the module with that customer's lines; run it with no arguments.
"""
import argparse
import csv
import io
import logging
import sys
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Dict, List

log = logging.getLogger("billing.invoice")

CENT = Decimal("0.01")
VAT_RATES: Dict[str, Decimal] = {"standard": Decimal("0.19"), "reduced": Decimal("0.07"), "zero": Decimal("0")}

LINES_CSV = """invoice;sku;qty;unit_price;vat
INV-2024-0116;PAPER-A4;4;3.99;standard
INV-2024-0116;TONER-K;1;64.90;standard
INV-2024-0117;COFFEE-1KG;3;12.45;reduced
INV-2024-0117;MUG-WHITE;7;2.45;standard
INV-2024-0117;BOOK-TAX;1;38.00;reduced
INV-2024-0117;SERVICE-H;5;41.15;standard
"""

# Totals the finance team computed by hand from the signed order forms.
EXPECTED_CENTS = {"INV-2024-0116": 9622, "INV-2024-0117": 34587}


@dataclass
class Line:
    sku: str
    qty: int
    unit_price: Decimal
    vat: str

    def net(self) -> Decimal:
        return self.unit_price * self.qty

    def gross(self) -> Decimal:
        return self.net() * (1 + VAT_RATES[self.vat])


@dataclass
class Invoice:
    number: str
    lines: List[Line] = field(default_factory=list)

    def add(self, line: Line) -> None:
        if line.qty <= 0:
            raise ValueError(f"{self.number}: quantity must be positive for {line.sku}")
        self.lines.append(line)

    def total(self) -> Decimal:
        # Refactored: one rounding at the end instead of one per line.
        exact = sum((line.gross() for line in self.lines), Decimal(0))
        return exact.quantize(CENT, rounding=ROUND_HALF_UP)

    def total_cents(self) -> int:
        return int(self.total() * 100)


def read_invoices(text: str) -> Dict[str, Invoice]:
    invoices: Dict[str, Invoice] = {}
    for row in csv.DictReader(io.StringIO(text), delimiter=";"):
        invoice = invoices.setdefault(row["invoice"], Invoice(row["invoice"]))
        invoice.add(Line(row["sku"], int(row["qty"]), Decimal(row["unit_price"]), row["vat"]))
    return invoices


def format_cents(cents: int) -> str:
    return f"{cents // 100},{cents % 100:02d} EUR"


def self_check(invoice: Invoice) -> None:
    got = invoice.total_cents()
    expected = EXPECTED_CENTS[invoice.number]
    assert got == expected, f"invoice {invoice.number} total mismatch: expected {expected} cents, got {got} cents"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="invoice self-check")
    parser.add_argument("--only", default=None, help="check one invoice number")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    invoices = read_invoices(LINES_CSV)
    for number, invoice in sorted(invoices.items()):
        if args.only and number != args.only:
            continue
        log.info("checking %s (%d lines)", number, len(invoice.lines))
        print(f"{number}: {format_cents(invoice.total_cents())}")
        self_check(invoice)
    return 0


if __name__ == "__main__":
    sys.exit(main())
