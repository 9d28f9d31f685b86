"""Runs pysource-minimize for `scrub bench --vs`: `driver.py FILE BEST` minimizes the script
FILE with the interestingness test beside this file (`interesting.py`, called in this process),
and writes every script it accepts to BEST at once, so that a run cut off by its budget still
leaves its best so far there. Candidates run one at a time, as pysource-minimize runs them.
It exits 3 when pysource-minimize gives up: its check of the script it starts a strategy from
did not pass (BEST holds what it accepted before)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import interesting  # noqa: E402
from pysource_minimize import CouldNotMinimize, minimize  # noqa: E402

# The exit status that says pysource-minimize gave up.
GAVE_UP = 3


def write(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(path, best):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    candidate = os.path.join(HERE, "candidate.py")

    def checker(text):
        write(candidate, text)
        accepted = interesting.interesting(candidate)
        if accepted:
            write(best, text)
        return accepted

    try:
        result = minimize(source, checker)
    except CouldNotMinimize as e:
        # Its first check of the (unparsed) original did not pass: a flaky original, or one
        # whose failure hangs on how its source is written.
        print(f"gave up: {e}", file=sys.stderr)
        sys.exit(GAVE_UP)
    except ValueError as e:
        # Each of its strategies checks the script it starts from again, and stops when that
        # check does not pass (a flaky original): what it accepted so far is in BEST.
        if "checker return False" not in str(e):
            raise
        print(f"gave up: {e}", file=sys.stderr)
        sys.exit(GAVE_UP)
    write(best, result)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
