#!/usr/bin/env python3
"""Monthly VAT summary printer.

SUP-3310: since the `vat_rate` column was added to the export, printing the
summary fails with

    TypeError: attribute name must be string, not 'NoneType'

Reproduce with the sample rows below:  python3 repro.py --month 2024-05
"""
import argparse
import logging
import os
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

log = logging.getLogger("vatsum")

SAMPLE_ROWS = [
    {"invoice": "INV-0412", "customer": "Brandt GmbH", "net": "1200.00", "vat_rate": "19"},
    {"invoice": "INV-0413", "customer": "Okafor & Sons", "net": "89.50", "vat_rate": "7"},
    {"invoice": "INV-0414", "customer": "Lindqvist AB", "net": "455.20", "vat_rate": "19"},
    {"invoice": "INV-0415", "customer": "Brandt GmbH", "net": "60.00", "vat_rate": "0"},
]

# Which Config attribute holds the width of each printed column.
WIDTH_SETTINGS = {
    "invoice": "invoice_width",
    "customer": "customer_width",
    "net": "amount_width",
    "vat": "amount_width",
    "gross": "amount_width",
}


class Config:
    """Printer settings: defaults, then the environment, then the command line."""

    currency = "EUR"
    invoice_width = 10
    customer_width = 18
    amount_width = 11
    separator = " | "
    show_totals = True

    def __init__(self, args=None):
        self.places = Decimal("0.01")
        self.currency = os.environ.get("VATSUM_CURRENCY", self.currency)
        if args is not None and args.narrow:
            self.customer_width = 12
            self.amount_width = 9
        if args is not None and args.no_totals:
            self.show_totals = False


class ReportError(Exception):
    pass


def money(value, cfg):
    return Decimal(value).quantize(cfg.places, rounding=ROUND_HALF_UP)


def enrich(row, cfg):
    net = money(row["net"], cfg)
    rate = Decimal(row["vat_rate"]) / 100
    vat = (net * rate).quantize(cfg.places, rounding=ROUND_HALF_UP)
    return dict(row, net=net, vat=vat, gross=net + vat)


def column_width(cfg, column):
    return getattr(cfg, WIDTH_SETTINGS.get(column), 12)


def format_cell(value, width):
    text = str(value)
    if len(text) > width:
        text = text[: width - 1] + "~"
    return text.rjust(width) if isinstance(value, Decimal) else text.ljust(width)


def render_table(rows, columns, cfg):
    widths = [column_width(cfg, c) for c in columns]
    header = cfg.separator.join(c.upper().ljust(w) for c, w in zip(columns, widths))
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(cfg.separator.join(format_cell(row[c], w) for c, w in zip(columns, widths)))
    return "\n".join(lines)


def totals_by_customer(rows):
    out = defaultdict(lambda: Decimal("0"))
    for row in rows:
        out[row["customer"]] += row["gross"]
    return dict(out)


def check_month(text):
    try:
        year, month = (int(part) for part in text.split("-"))
    except ValueError:
        raise ReportError(f"bad month {text!r}, expected YYYY-MM") from None
    if not 1 <= month <= 12:
        raise ReportError(f"bad month {text!r}")
    return year, month


LEGACY_WIDTHS = {"invoice": "invoice_width", "customer": "customer_width"}


def legacy_width(cfg, column):
    # The 2022 layout only knew two columns; still used by the CSV exporter.
    try:
        return getattr(cfg, LEGACY_WIDTHS.get(column))
    except (TypeError, AttributeError):
        return 12


def build_parser():
    parser = argparse.ArgumentParser(prog="vatsum")
    parser.add_argument("--month", default="2024-05")
    parser.add_argument("--narrow", action="store_true")
    parser.add_argument("--no-totals", action="store_true")
    parser.add_argument("--columns", default="invoice,customer,net,vat_rate,vat,gross")
    parser.add_argument("--verbose", action="store_true")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    year, month = check_month(args.month)
    cfg = Config(args)
    log.debug("printing %04d-%02d in %s", year, month, cfg.currency)

    rows = [enrich(r, cfg) for r in SAMPLE_ROWS]
    columns = args.columns.split(",")
    log.debug("legacy width of net: %s", legacy_width(cfg, "net"))
    print(f"VAT summary {year:04d}-{month:02d} ({cfg.currency})")
    print(render_table(rows, columns, cfg))
    if cfg.show_totals:
        for customer, gross in sorted(totals_by_customer(rows).items()):
            print(f"{customer:<{cfg.customer_width}}{gross:>{cfg.amount_width}}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
