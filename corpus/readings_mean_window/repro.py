"""Nightly sensor report: the mean over the last window fails for every station.

The report reads the day's samples, keeps the ones inside the reporting window and
averages them per station.  Since the window was made configurable, every station
fails with "mean requires at least one data point", although the log shows plenty
of samples inside the window.  Stations with no samples at all are skipped on
purpose (the StatisticsError for those is caught); this is something else.
Run without arguments.
"""
import argparse
import logging
import statistics
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Tuple

log = logging.getLogger("nightly")


@dataclass
class Settings:
    window_start: int = 100
    window_end: int = 200
    stations: Tuple[str, ...] = ("north", "south", "harbour")
    precision: int = 2
    skip_empty: bool = True
    units: str = "C"


@dataclass
class Sample:
    station: str
    ts: int
    value: float


@dataclass
class StationLog:
    name: str
    samples: List[Sample] = field(default_factory=list)

    def add(self, ts: int, value: float) -> None:
        self.samples.append(Sample(self.name, ts, value))


class WindowedReadings:
    """The values of one station's samples inside [start, end)."""

    def __init__(self, samples: List[Sample], start: int, end: int):
        self.samples = samples
        self.start = start
        self.end = end

    def __iter__(self) -> Iterator[float]:
        for sample in self.samples:
            # keep samples inside the window
            if sample.ts >= self.end and sample.ts < self.start:
                yield sample.value

    def __len__(self) -> int:
        return len(self.samples)

    def __repr__(self) -> str:
        return "WindowedReadings(%d samples, %d..%d)" % (len(self.samples), self.start, self.end)


def synthetic_day(settings: Settings) -> Dict[str, StationLog]:
    logs = {}
    for k, name in enumerate(settings.stations):
        station = StationLog(name)
        for ts in range(0, 300, 25):
            station.add(ts, 10.0 + k + (ts % 7) * 0.5)
        logs[name] = station
    logs["spare"] = StationLog("spare")
    return logs


def safe_mean(values: List[float]) -> float:
    try:
        return statistics.mean(values)
    except statistics.StatisticsError:
        log.warning("no samples; reporting nan")
        return float("nan")


def station_mean(station: StationLog, settings: Settings) -> float:
    readings = WindowedReadings(station.samples, settings.window_start, settings.window_end)
    log.debug("%s: %r", station.name, readings)
    return statistics.mean(readings)


def format_row(name: str, value: float, settings: Settings) -> str:
    return "%-10s %8.*f %s" % (name, settings.precision, value, settings.units)


def report(settings: Settings) -> List[str]:
    logs = synthetic_day(settings)
    rows = []
    spare = logs.pop("spare")
    if settings.skip_empty and not spare.samples:
        rows.append(format_row(spare.name, safe_mean([s.value for s in spare.samples]), settings))
    for name in settings.stations:
        rows.append(format_row(name, station_mean(logs[name], settings), settings))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="nightly sensor report")
    parser.add_argument("--start", type=int, default=100)
    parser.add_argument("--end", type=int, default=200)
    parser.add_argument("--precision", type=int, default=2)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    settings = Settings(window_start=args.start, window_end=args.end, precision=args.precision)
    log.info("window %d..%d", settings.window_start, settings.window_end)
    for row in report(settings):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
