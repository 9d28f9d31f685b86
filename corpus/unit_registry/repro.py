"""
survey_import.py -- minimal-ish repro for the "NoneType is not callable" crash
when importing field survey CSVs that use spelled-out units.

Originally reported by @mkowalski on the #surveys channel.  The CSV below is
an anonymised excerpt of site_42.csv.
"""
from __future__ import annotations

import argparse
import csv
import io
import logging
import math
import re
import statistics
from collections import defaultdict
from typing import Callable, Dict, Iterable, List, Tuple

logger = logging.getLogger("survey_import")

SAMPLE_CSV = """station,quantity,value,unit
A1,depth,12.5,m
A1,depth,40,ft
A2,depth,3.2,fathom
A2,span,0.25,mi
A3,span,880,yd
A3,depth,7,feet
A4,span,1.5,km
"""

# --- unit handler registry -------------------------------------------------

CONVERTERS: Dict[str, Callable[[float], float]] = {}
ALIASES = {"meter": "m", "metre": "m", "foot": "ft", "yard": "yd", "mile": "mi"}


def converter(*units: str):
    """Register a to-metres conversion for one or more unit symbols."""
    def deco(fn: Callable[[float], float]) -> Callable[[float], float]:
        for u in units:
            CONVERTERS[u] = fn
        return fn
    return deco


@converter("m")
def _metres(v: float) -> float:
    return v


@converter("km")
def _kilometres(v: float) -> float:
    return v * 1000.0


@converter("ft")
def _feet(v: float) -> float:
    return v * 0.3048


@converter("yd")
def _yards(v: float) -> float:
    return v * 0.9144


@converter("mi")
def _miles(v: float) -> float:
    return v * 1609.344


@converter("fathom", "fm")
def _fathoms(v: float) -> float:
    return v * 1.8288


def get_converter(unit: str) -> Callable[[float], float]:
    unit = unit.strip().lower()
    unit = ALIASES.get(unit, unit)
    return CONVERTERS.get(unit)


# --- parsing ---------------------------------------------------------------

def coerce_value(raw) -> float:
    """Accept '12.5', '1,5' (EU decimal comma) or already-numeric values."""
    try:
        return float(raw)
    except TypeError:
        logger.debug("value %r is not a string/number, treating as NaN", raw)
        return math.nan
    except ValueError:
        return float(raw.replace(",", "."))


def read_rows(text: str) -> Iterable[dict]:
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        yield row


def station_label(row: dict) -> str:
    try:
        return row["station"] + row.get("suffix", 0)
    except TypeError:
        # old exports had a numeric suffix column; ignore it
        return row["station"]


def normalise(rows: Iterable[dict]) -> List[Tuple[str, str, float]]:
    out = []
    for row in rows:
        label = station_label(row)
        value = coerce_value(row["value"])
        convert = get_converter(row["unit"])
        metres = convert(value)
        logger.debug("%s %s: %s %s -> %.3f m", label, row["quantity"],
                     row["value"], row["unit"], metres)
        out.append((label, row["quantity"], metres))
    return out


def summarise(records: List[Tuple[str, str, float]]) -> Dict[str, float]:
    groups = defaultdict(list)
    for _station, quantity, metres in records:
        groups[quantity].append(metres)
    return {q: statistics.mean(vs) for q, vs in groups.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--log-file", default="survey_import.log")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--quantity", default=None, help="only this quantity")
    opts = parser.parse_args()

    logging.basicConfig(filename=opts.log_file, level=logging.DEBUG,
                        format="%(levelname)s:%(name)s:%(message)s")
    logger.info("registered units: %s", ", ".join(sorted(CONVERTERS)))
    print("NaN check:", coerce_value(None))

    rows = list(read_rows(SAMPLE_CSV))
    if opts.quantity:
        rows = [r for r in rows if r["quantity"] == opts.quantity]
    if opts.strict and any(not re.match(r"^[A-Z]\d+$", r["station"]) for r in rows):
        raise SystemExit("bad station id")

    records = normalise(rows)
    for quantity, mean in sorted(summarise(records).items()):
        print(f"{quantity:>8}: {mean:10.2f} m")


if __name__ == "__main__":
    main()
