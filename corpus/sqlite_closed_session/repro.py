#!/usr/bin/env python3
"""
inventory-sync: "Cannot operate on a closed database" after the first batch

Version: inventory-sync 2.3.1 (sqlite backend)
Steps to reproduce: run this script.  It seeds an in-memory database,
applies one batch of stock movements inside `repo.session()` and then asks
for the low-stock report, which blows up.

I suspect the refactor that made `session()` a context manager (#318).
"""

import argparse
import contextlib
import logging
import sqlite3
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Tuple

_log = logging.getLogger("inventory")

SCHEMA = """
CREATE TABLE items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, qty INTEGER NOT NULL);
CREATE TABLE movements (id INTEGER PRIMARY KEY AUTOINCREMENT, sku TEXT, delta INTEGER);
"""

SEED = [
    ("A-100", "hex bolt M6", 120),
    ("A-101", "hex nut M6", 80),
    ("B-200", "washer 6mm", 15),
    ("C-310", "cable tie", 4),
]


@dataclass(frozen=True)
class Movement:
    sku: str
    delta: int
    reason: str = "sale"


class InventoryRepo:
    def __init__(self, dsn: str = ":memory:"):
        self.dsn = dsn
        self.conn = sqlite3.connect(dsn)
        self.conn.row_factory = sqlite3.Row

    def migrate(self) -> None:
        try:
            self.conn.execute("SELECT count(*) FROM items").fetchone()
            _log.info("schema already present")
        except sqlite3.OperationalError:
            self.conn.executescript(SCHEMA)
            _log.info("schema created")

    def seed(self, rows: Iterable[Tuple[str, str, int]]) -> None:
        self.conn.executemany("INSERT INTO items VALUES (?, ?, ?)", rows)
        self.conn.commit()

    @contextlib.contextmanager
    def session(self) -> Iterator[sqlite3.Connection]:
        """Transaction scope. BUG? closes the shared connection on exit."""
        try:
            yield self.conn
            self.conn.commit()
        except Exception:
            self.conn.rollback()
            raise
        finally:
            self.conn.close()

    def apply(self, conn: sqlite3.Connection, mv: Movement) -> None:
        try:
            # newer schema has a `reason` column; fall back if not
            conn.execute("INSERT INTO movements (sku, delta) VALUES (?, ?)",
                         (mv.sku, mv.delta, mv.reason))
        except sqlite3.ProgrammingError as exc:
            _log.debug("legacy movements table (%s)", exc)
            conn.execute("INSERT INTO movements (sku, delta) VALUES (?, ?)", (mv.sku, mv.delta))
        conn.execute("UPDATE items SET qty = qty + ? WHERE sku = ?", (mv.delta, mv.sku))

    def low_stock(self, threshold: int) -> List[sqlite3.Row]:
        cur = self.conn.execute("SELECT sku, name, qty FROM items WHERE qty < ? ORDER BY qty",
                                (threshold,))
        return cur.fetchall()


def batch_from_orders(orders: List[Tuple[str, int]]) -> List[Movement]:
    per_sku = Counter()
    for sku, n in orders:
        per_sku[sku] += n
    return [Movement(sku, -n) for sku, n in sorted(per_sku.items())]


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="inventory-sync")
    parser.add_argument("--threshold", type=int, default=20)
    parser.add_argument("--dsn", default=":memory:")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(message)s")

    repo = InventoryRepo(args.dsn)
    repo.migrate()
    repo.seed(SEED)

    orders = [("A-100", 10), ("B-200", 3), ("A-100", 5), ("C-310", 1)]
    batch = batch_from_orders(orders)
    with repo.session() as conn:
        for mv in batch:
            repo.apply(conn, mv)
    _log.info("applied %d movements", len(batch))

    for row in repo.low_stock(args.threshold):
        print("LOW  %-6s %-12s %3d" % (row["sku"], row["name"], row["qty"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
