"""ledgerx: `ledgerx export --dry-run` crashes at shutdown.

FIN-2207.  A normal export run is fine.  With --dry-run the batches are only
logged, and then the tool dies while waiting for its export workers:

    RuntimeError: cannot join thread before it is started

The ledger rows are inlined below so this runs on its own:  python3 repro.py
"""
import argparse
import csv
import io
import logging
import queue
import threading
import time
from decimal import Decimal

LOG = logging.getLogger("ledgerx")

LEDGER = """\
entry,account,amount,currency
1001,4000-sales,1250.00,EUR
1002,4000-sales,99.90,EUR
1003,6100-rent,-2400.00,EUR
1004,6200-travel,-318.45,EUR
1005,4000-sales,760.10,EUR
1006,6300-software,-49.00,EUR
"""

STOP = object()  # put once per worker to tell it the queue is drained


class ExportError(Exception):
    """An export batch could not be written."""


class NullSink:
    """Stands in for the CSV file when nothing must be written."""

    def __init__(self, path):
        pass


class CsvSink:
    def __init__(self, path):
        self.path = path
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer)
        self.lock = threading.Lock()
        self.closed = False

    def write(self, rows):
        with self.lock:
            if self.closed:
                raise ExportError(f"sink {self.path} already closed")
            for row in rows:
                self.writer.writerow(row)

    def close(self):
        self.closed = True
        LOG.info("would flush %d bytes to %s", len(self.buffer.getvalue()), self.path)


class ExportWorker(threading.Thread):
    """Takes batches off the queue and hands them to the sink."""

    def __init__(self, jobs, sink, index):
        super().__init__(name=f"export-{index}", daemon=True)
        self.jobs = jobs
        self.sink = sink
        self.exported = 0

    def run(self):
        while True:
            batch = self.jobs.get()
            if batch is STOP:
                break
            try:
                self.sink.write(batch)
                self.exported += len(batch)
            except ExportError as exc:
                LOG.error("%s: %s", self.name, exc)


def parse_ledger(text):
    rows = []
    for record in csv.DictReader(io.StringIO(text)):
        record["amount"] = Decimal(record["amount"])
        rows.append(record)
    return rows


def batches(rows, size):
    for start in range(0, len(rows), size):
        yield [[r["entry"], r["account"], str(r["amount"])] for r in rows[start:start + size]]


def check_balance(rows):
    total = sum(r["amount"] for r in rows)
    if total != Decimal("-658.45"):
        LOG.warning("ledger does not balance: %s", total)
    return total


def retry(action, attempts=3, delay=0.0):
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except RuntimeError as exc:
            LOG.debug("attempt %d failed: %s", attempt, exc)
            time.sleep(delay)
    return None


def probe_lock():
    # The old exporter released its lock twice; keep the check it used.
    lock = threading.Lock()
    lock.release()


def build_parser():
    parser = argparse.ArgumentParser(prog="ledgerx")
    parser.add_argument("command", choices=["export", "check"])
    parser.add_argument("--out", default="ledger-export.csv")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=2)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    rows = parse_ledger(LEDGER)
    check_balance(rows)
    if args.command == "check":
        return 0
    retry(probe_lock, attempts=1)

    sink = NullSink(args.out) if args.dry_run else CsvSink(args.out)
    jobs = queue.Queue()
    workers = [ExportWorker(jobs, sink, i) for i in range(args.workers)]
    if not args.dry_run:
        for worker in workers:
            worker.start()

    for batch in batches(rows, args.batch_size):
        if args.dry_run:
            LOG.info("dry run: %d rows, first entry %s", len(batch), batch[0][0])
        else:
            jobs.put(batch)

    for _ in workers:
        jobs.put(STOP)
    for worker in workers:
        worker.join(timeout=5)
    if not args.dry_run:
        sink.close()
        LOG.info("exported %d rows", sum(w.exported for w in workers))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(["export", "--dry-run", "--workers", "2"]))
