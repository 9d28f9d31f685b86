"""Repro: month-end invoice run aborts with decimal.InvalidOperation.

billing-batch reads supplier invoice lines, converts them to the ledger
currency and computes margins.  Since the Berlin supplier was onboarded the
run aborts.  Everything below is a trimmed copy of billing/batch.py plus the
offending rows; run with no arguments.
"""
import argparse
import csv
import decimal
import io
import logging
import sys
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Dict, Iterable, Iterator, List, NamedTuple

log = logging.getLogger("billing.batch")

CENT = Decimal("0.01")
FX_RATES: Dict[str, Decimal] = {"EUR": Decimal("1.0"), "USD": Decimal("0.92"), "GBP": Decimal("1.17")}

SUPPLIER_CSV = """supplier;sku;qty;unit_price;currency;cost
acme-us;W-1;10;4.20;USD;30.00
acme-us;W-2;0;0;USD;0
tinker-uk;G-7;3;19.99;GBP;45.10
bauhaus-de;S-3;12;12,50;EUR;120.00
bauhaus-de;S-4;2;7.10;EUR;9.80
"""


class InvoiceLine(NamedTuple):
    supplier: str
    sku: str
    qty: int
    unit_price: Decimal
    currency: str
    cost: Decimal


def money(value: str) -> Decimal:
    """Parse a money amount exactly as written in the feed."""
    return Decimal(value.strip())


def read_lines(text: str) -> Iterator[InvoiceLine]:
    reader = csv.DictReader(io.StringIO(text), delimiter=";")
    for row in reader:
        yield InvoiceLine(
            supplier=row["supplier"],
            sku=row["sku"],
            qty=int(row["qty"]),
            unit_price=money(row["unit_price"]),
            currency=row["currency"],
            cost=money(row["cost"]),
        )


def to_ledger(amount: Decimal, currency: str) -> Decimal:
    return (amount * FX_RATES[currency]).quantize(CENT, rounding=ROUND_HALF_EVEN)


def margin(revenue: Decimal, cost: Decimal) -> Decimal:
    """Margin as a fraction of revenue; 0/0 (free samples) counts as 0."""
    try:
        return (revenue - cost) / revenue
    except (InvalidOperation, decimal.DivisionByZero) as exc:
        log.debug("margin undefined for %s/%s: %r", revenue, cost, exc)
        return Decimal(0)


def sanity_check_context() -> None:
    # make sure traps are on, we had a silent-NaN incident in 2022
    ctx = decimal.getcontext()
    ctx.traps[InvalidOperation] = True
    try:
        Decimal("1e-30").quantize(Decimal("1e10"), context=decimal.Context(prec=5))
        Decimal(1).quantize(Decimal("1e-30"), context=decimal.Context(prec=5))
    except InvalidOperation:
        log.info("quantize traps armed")


def summarize(lines: Iterable[InvoiceLine]) -> Dict[str, Decimal]:
    totals: Dict[str, Decimal] = {}
    for line in lines:
        revenue = to_ledger(line.unit_price * line.qty, line.currency)
        cost = to_ledger(line.cost, line.currency)
        m = margin(revenue, cost)
        totals[line.supplier] = totals.get(line.supplier, Decimal(0)) + revenue
        log.info("%-10s %-4s revenue=%8s margin=%s", line.supplier, line.sku, revenue,
                 m.quantize(Decimal("0.001")))
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(description="month-end billing batch (repro)")
    parser.add_argument("--precision", type=int, default=28)
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.DEBUG,
                        format="%(message)s")
    decimal.getcontext().prec = args.precision
    sanity_check_context()

    totals = summarize(read_lines(SUPPLIER_CSV))
    for supplier, total in sorted(totals.items()):
        print("%-12s %12s EUR" % (supplier, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
