#!/usr/bin/env python3
# Repro: mailmerge 0.9.2 -> crash while rendering the renewal reminder.
#
# We hand-rolled a tiny Jinja-like lexer years ago.  With the new template
# from marketing, rendering dies with a bare KeyError.  Trimmed to the lexer +
# one template; still ~150 lines, sorry.
import argparse
import logging
import string
import sys
import textwrap
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

LOG = logging.getLogger("mailmerge")

RENEWAL_TEMPLATE = textwrap.dedent("""\
    Dear {{ first_name }},

    your subscription to {{ plan }} ends on {{ ends_on }}.
    {% if discount %}As a loyal customer you get {{ discount }} off.{% endif %}
    Items on your account:
    {% for item in items %}  * {{ item }}
    {% enfor %}
    Regards, {{ signature }}
    """)


@dataclass
class Token:
    kind: str          # "text", "var" or "tag"
    value: str
    offset: int


@dataclass
class Recipient:
    first_name: str
    plan: str
    ends_on: str
    items: List[str] = field(default_factory=list)
    discount: str = ""


def _tag_if(args: str) -> str:
    return "if:" + args


def _tag_for(args: str) -> str:
    return "for:" + args


def _tag_end(args: str) -> str:
    return "end"


TAGS: Dict[str, Callable[[str], str]] = {
    "if": _tag_if,
    "endif": _tag_end,
    "for": _tag_for,
    "endfor": _tag_end,
}


class Lexer:
    """Splits a template into text / {{ var }} / {% tag %} tokens."""

    def __init__(self, src: str):
        self.src = src
        self.pos = 0
        self.tokens: List[Token] = []

    def skip_ws(self) -> None:
        while self.pos < len(self.src) and self.src[self.pos] in " \t":
            self.pos += 1

    def read_word(self) -> str:
        start = self.pos
        while self.pos < len(self.src) and (self.src[self.pos].isalnum()
                                            or self.src[self.pos] == "_"):
            self.pos += 1
        return self.src[start:self.pos]

    def read_until(self, closer: str) -> str:
        end = self.src.find(closer, self.pos)
        if end < 0:
            raise ValueError("unclosed %r at offset %d" % (closer, self.pos))
        chunk = self.src[self.pos:end]
        self.pos = end + len(closer)
        return chunk.strip()

    def run(self) -> List[Token]:
        text_start = 0
        while self.pos < len(self.src):
            if self.src.startswith("{{", self.pos):
                self._flush(text_start)
                self.pos += 2
                self.skip_ws()
                name = self.read_word()
                self.read_until("}}")
                self.tokens.append(Token("var", name, self.pos))
                text_start = self.pos
            elif self.src.startswith("{%", self.pos):
                self._flush(text_start)
                self.pos += 2
                self.skip_ws()
                word = self.read_word()
                handler = TAGS[word]
                self.tokens.append(Token("tag", handler(self.read_until("%}")), self.pos))
                text_start = self.pos
            else:
                self.pos += 1
        self._flush(text_start)
        return self.tokens

    def _flush(self, text_start: int) -> None:
        if self.pos > text_start:
            self.tokens.append(Token("text", self.src[text_start:self.pos], text_start))


def lookup(context: Dict[str, object], name: str) -> str:
    try:
        return str(context[name])
    except KeyError:
        LOG.warning("template variable %r missing, rendering empty", name)
        return ""


def render(tokens: List[Token], context: Dict[str, object]) -> str:
    out = []
    for tok in tokens:
        if tok.kind == "text":
            out.append(tok.value)
        elif tok.kind == "var":
            out.append(lookup(context, tok.value))
    return "".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="mailmerge")
    ap.add_argument("--dry-run", action="store_true", default=True)
    ap.add_argument("--width", type=int, default=72)
    opts = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(message)s")

    who = Recipient("Ada", "Pro (annual)", "2024-03-01", items=["backup", "sso"])
    context = vars(who)
    # sanity check the lexer on a one-liner first
    print(render(Lexer("Hi {{ first_name }} {{ nickname }}!").run(), context))

    tokens = Lexer(RENEWAL_TEMPLATE).run()
    LOG.info("%d tokens", len(tokens))
    body = render(tokens, context)
    for line in body.splitlines():
        print(textwrap.fill(line, opts.width) if line else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
