"""Theme loader: every colour written as #rrggbb fails to load.

Palettes may write colours as `0xRRGGBB`, `#RRGGBB` or as plain decimal channel
triples.  Since `#` colours were added, loading any theme that uses them fails with
"invalid literal for int() with base 16": the base is right, the digits are not.
A malformed decimal triple in the fallback palette raises the same kind of error on
purpose and is caught.  Run without arguments.
"""
import argparse
import logging
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

log = logging.getLogger("themes")

RGB = Tuple[int, int, int]


@dataclass
class ThemeOptions:
    name: str = "harbour"
    strict: bool = True
    fallback: str = "12,34,x"
    dim_factor: float = 0.8
    channels: int = 3


@dataclass
class Palette:
    name: str
    colours: Dict[str, RGB] = field(default_factory=dict)

    def dimmed(self, factor: float) -> "Palette":
        out = Palette(self.name + "-dim")
        for key, (r, g, b) in self.colours.items():
            out.colours[key] = (int(r * factor), int(g * factor), int(b * factor))
        return out


THEMES = {
    "harbour": {"background": "#1d2b3a", "accent": "0xff8800", "text": "230,230,230"},
    "plain": {"background": "0", "accent": "0", "text": "255,255,255"},
}


def radix(spec: str) -> int:
    """The base of a colour's digits: hexadecimal for 0x and # colours."""
    return 16 if spec.startswith(("0x", "#")) else 10


def strip_prefix(spec: str) -> str:
    for prefix in ("0x",):
        if spec.startswith(prefix):
            return spec[len(prefix):]
    return spec


def parse_triple(spec: str) -> RGB:
    parts = [int(p) for p in spec.split(",")]
    if len(parts) != 3:
        raise ValueError("a colour triple has three channels: %r" % spec)
    return parts[0], parts[1], parts[2]


def parse_colour(spec: str) -> RGB:
    if "," in spec:
        return parse_triple(spec)
    base = radix(spec)
    digits = strip_prefix(spec)
    value = int(digits, base)
    return (value >> 16) & 255, (value >> 8) & 255, value & 255


def load_fallback(options: ThemeOptions) -> RGB:
    try:
        return parse_colour(options.fallback)
    except ValueError as exc:
        log.warning("fallback colour ignored: %s", exc)
        return (0, 0, 0)


def load_theme(options: ThemeOptions) -> Palette:
    palette = Palette(options.name)
    for key, spec in THEMES[options.name].items():
        log.debug("parsing %s = %s", key, spec)
        palette.colours[key] = parse_colour(spec)
    return palette


def describe(palette: Palette) -> List[str]:
    return ["%-12s #%02x%02x%02x" % (key, *rgb) for key, rgb in sorted(palette.colours.items())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="load and print a theme")
    parser.add_argument("--theme", default="harbour")
    parser.add_argument("--dim", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO)
    options = ThemeOptions(name=args.theme)
    log.info("fallback colour: %s", load_fallback(options))
    palette = load_theme(options)
    if args.dim:
        palette = palette.dimmed(options.dim_factor)
    for line in describe(palette):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
