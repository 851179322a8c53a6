#!/usr/bin/env python3
"""Runs the reference feed parser, feedparser (PyPI), over the company feed's test corpus
(Tests/SGEMCompanyTests/Fixtures/feeds) and checks it extracts what corpus.json expects: the
feed's title and each entry's plain-text title, link and date. FeedCorpusTests holds the server's
parser to the same file, so a feed passing both is read alike by both. Where feedparser
deliberately differs, corpus.json says so in an entry's "feedparser" object, and that is
checked instead. Ends with `feeds: N passed, N failed`.
"""
import html
import json
import os
import re
import sys
import time

import feedparser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Checks  # noqa: E402

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "SGEMCompanyTests", "Fixtures", "feeds")


def plain(value, detail):
    """feedparser keeps HTML titles as (sanitised) HTML; the server keeps plain text."""
    if value is None:
        return None
    if detail is not None and detail.get("type") in ("text/html", "application/xhtml+xml"):
        value = html.unescape(re.sub(r"<[^>]*>", "", value))
    return " ".join(value.split())


def utc(entry):
    stamp = entry.get("published_parsed") or entry.get("updated_parsed")
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp) if stamp else None


def check_feed(feed):
    def run():
        with open(os.path.join(CORPUS, feed["file"]), "rb") as f:
            data = f.read()
        headers = {"content-type": feed.get("contentType", "application/xml")}
        if "url" in feed:
            headers["content-location"] = feed["url"]
        parsed = feedparser.parse(data, response_headers=headers)
        problems = []
        title = plain(parsed.feed.get("title"), parsed.feed.get("title_detail"))
        want_title = feed.get("feedparser", {}).get("title", feed["title"])
        if title != want_title:
            problems.append(f"feed title {title!r}, expected {want_title!r}")
        if len(parsed.entries) != len(feed["entries"]):
            problems.append(f"{len(parsed.entries)} entries, expected {len(feed['entries'])}")
        for got, want in zip(parsed.entries, feed["entries"]):
            want = {**want, **want.get("feedparser", {})}
            seen = {"title": plain(got.get("title"), got.get("title_detail")), "link": got.get("link"), "date": utc(got)}
            for key in ("title", "link", "date"):
                if seen[key] != want[key]:
                    problems.append(f"{key} {seen[key]!r}, expected {want[key]!r}")
        if problems:
            raise AssertionError("; ".join(problems))
    return run


def main():
    with open(os.path.join(CORPUS, "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    checks = Checks("feeds")
    for feed in corpus["feeds"]:
        checks.check(f"feedparser {feedparser.__version__} reads {feed['file']} as expected", check_feed(feed))
    checks.finish()


if __name__ == "__main__":
    main()
