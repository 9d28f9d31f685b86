"""Rendering the release feed crashes in the pretty printer.

We escape item descriptions ourselves before building the XML text; the feed title comes from
the project settings. The raw text is then pretty-printed for the web page.
"""
import datetime
import xml.dom.minidom
import xml.sax.saxutils
from dataclasses import dataclass, field


@dataclass
class Item:
    title: str
    description: str
    published: datetime.date


@dataclass
class Feed:
    title: str
    link: str
    items: list = field(default_factory=list)


def escape(text):
    return xml.sax.saxutils.escape(text, {'"': "&quot;"})


def item_xml(item):
    return (
        "<item>"
        f"<title>{escape(item.title)}</title>"
        f"<description>{escape(item.description)}</description>"
        f"<pubDate>{item.published.isoformat()}</pubDate>"
        "</item>"
    )


def feed_xml(feed):
    items = "".join(item_xml(i) for i in feed.items)
    # The title is trusted: it comes from our own settings.
    return f"<rss><channel><title>{feed.title}</title><link>{feed.link}</link>{items}</channel></rss>"


def newest_first(items):
    return sorted(items, key=lambda i: i.published, reverse=True)


def summary(feed):
    """A line for the build log: how many items, and the newest."""
    if not feed.items:
        return f"{feed.title}: empty"
    newest = newest_first(feed.items)[0]
    return f"{len(feed.items)} items, newest {newest.title} ({newest.published:%d %b %Y})"


class Page:
    """The web page the feed is shown on: a header and the pretty-printed XML."""

    def __init__(self, heading):
        self.heading = heading
        self.parts = []

    def add(self, text):
        self.parts.append(text)
        return self

    def render(self):
        body = "\n".join(self.parts)
        return f"<h1>{escape(self.heading)}</h1>\n<pre>{escape(body)}</pre>"


def pretty(text):
    return xml.dom.minidom.parseString(text).toprettyxml(indent="  ")


def main():
    feed = Feed("Releases: tips & fixes", "https://example.invalid/releases")
    feed.items.append(Item("2.1", "Faster <import> & smaller wheels", datetime.date(2026, 3, 1)))
    feed.items.append(Item("2.2", 'Fixes "quoted" paths', datetime.date(2026, 4, 2)))
    feed.items = newest_first(feed.items)
    print(summary(feed))
    page = Page("Release feed").add(pretty(feed_xml(feed)))
    print(page.render())


if __name__ == "__main__":
    main()
