"""Repro: quote reconciliation crashes instead of reporting drift.

quotedesk re-prices every open quote each night with the current price list
and compares the recomputed line totals with the ones the customer saw.  The
comparison used to go through numpy; it was ported to plain floats last week
so that the job runs on the small box.  Since then the nightly run dies on the
first quote whose line count matches.  Trimmed copy of jobs/reconcile.py with
two quotes inlined; run with no arguments.
"""
import argparse
import logging
import math
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Dict, List, Sequence

log = logging.getLogger("quotedesk.reconcile")

CENT = Decimal("0.01")
VAT = {"DE": Decimal("0.19"), "AT": Decimal("0.20"), "CH": Decimal("0.081")}
# Volume discounts: (minimum quantity, discount)
TIERS = [(100, Decimal("0.12")), (50, Decimal("0.08")), (10, Decimal("0.03"))]

PRICE_LIST: Dict[str, Decimal] = {
    "HX-200": Decimal("4.15"),
    "HX-240": Decimal("5.05"),
    "CL-9": Decimal("0.37"),
    "RL-3": Decimal("18.90"),
}

OPEN_QUOTES = [
    {
        "id": "Q-2291",
        "country": "AT",
        "lines": [("HX-200", 12), ("CL-9", 400), ("RL-3", 2)],
        "stored_totals": [59.19, 156.28, 45.36, 12.0],
    },
    {
        "id": "Q-2304",
        "country": "DE",
        "lines": [("HX-240", 60), ("CL-9", 150), ("RL-3", 1)],
        "stored_totals": [332.89, 58.13, 22.49],
    },
]


class QuoteMismatch(Exception):
    """A stored quote that cannot be compared with its recomputation."""


@dataclass
class Line:
    sku: str
    qty: int
    unit: Decimal

    def discount(self) -> Decimal:
        for minimum, rate in TIERS:
            if self.qty >= minimum:
                return rate
        return Decimal(0)

    def net(self) -> Decimal:
        gross = self.unit * self.qty
        return (gross * (1 - self.discount())).quantize(CENT, rounding=ROUND_HALF_UP)


def price_lines(raw_lines, prices) -> List[Line]:
    return [Line(sku, qty, prices[sku]) for sku, qty in raw_lines]


def line_totals(lines: Sequence[Line], country: str) -> List[float]:
    rate = VAT[country]
    return [float((line.net() * (1 + rate)).quantize(CENT, rounding=ROUND_HALF_UP))
            for line in lines]


def totals_match(actual: Sequence[float], expected: Sequence[float], *,
                 rel_tol: float = 1e-9, abs_tol: float = 0.0) -> bool:
    """Element-wise comparison, same semantics as the old np.allclose call."""
    if len(actual) != len(expected):
        raise QuoteMismatch(
            f"{len(actual)} lines recomputed, {len(expected)} stored")
    for got, want in zip(actual, expected):
        if not math.isclose(got, want, rtol=rel_tol, atol=abs_tol):
            log.debug("line differs: %.2f recomputed, %.2f stored", got, want)
            return False
    return True


def reconcile(quote, prices, rel_tol: float) -> bool:
    lines = price_lines(quote["lines"], prices)
    actual = line_totals(lines, quote["country"])
    log.info("%s: %d lines, %.2f total", quote["id"], len(lines), sum(actual))
    return totals_match(actual, quote["stored_totals"], rel_tol=rel_tol, abs_tol=0.005)


def report(drifted: List[str], skipped: List[str]) -> None:
    if skipped:
        log.warning("skipped %d quote(s): %s", len(skipped), ", ".join(skipped))
    if drifted:
        print("quotes whose totals drifted:")
        for quote_id in drifted:
            print("  " + quote_id)
    else:
        print("all open quotes still match the price list")


def main() -> int:
    parser = argparse.ArgumentParser(description="nightly quote reconciliation (repro)")
    parser.add_argument("--rel-tol", type=float, default=1e-9)
    parser.add_argument("--only", help="reconcile one quote id")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)-7s %(message)s")

    drifted: List[str] = []
    skipped: List[str] = []
    for quote in OPEN_QUOTES:
        if args.only and quote["id"] != args.only:
            continue
        try:
            ok = reconcile(quote, PRICE_LIST, args.rel_tol)
        except QuoteMismatch as exc:
            log.warning("%s: %s", quote["id"], exc)
            skipped.append(quote["id"])
            continue
        if not ok:
            drifted.append(quote["id"])
    report(drifted, skipped)
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main())
