#!/usr/bin/env bash
# The company feed's XML reader against FoundationXML's XMLParser (libxml2), the alternative
# shipped with the toolchain: both build the same tree from one generated 2 MiB feed (the
# fetcher's size limit), in one process, alternating rounds, medians compared. Then XMLParser is
# shown an entity bomb and an external entity, which the hand-written reader refuses.
# Prints the ratio FoundationXML / hand-written (above 1: the hand-written reader is faster).
#
# usage: scripts/bench/feed-xml.sh [ROUNDS]   (default 15)
# Writes bench-results/feed-xml.txt. Exit 0 when measured, non-zero when it could not run.
set -euo pipefail
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export PATH=/opt/swift/usr/bin:$PATH
OUT="$REPO_ROOT/bench-results"
TMP="$OUT/tmp/feed-xml"
mkdir -p "$TMP"

python3 - "$TMP/feed.xml" <<'PY'
import sys
n = 0
body = []
while sum(map(len, body)) < 2 * 1024 * 1024 - 4096:
    body.append(
        f'<item><title>Item {n}: caf\u00e9 &amp; \u201cquotes\u201d</title><link>https://bench.example/posts/{n}</link>'
        f'<guid isPermaLink="false">post-{n}</guid><pubDate>Mon, 01 Dec 2025 10:{n % 60:02d}:00 GMT</pubDate>'
        f'<description><![CDATA[<p>Paragraph {n} with <a href="https://bench.example/{n}">a link</a>. '
        f'{"Some words of the post, as a summary runs on for a while before it stops. " * 3}</p>]]></description>'
        f'<dc:creator>Writer {n % 7}</dc:creator></item>\n')
    n += 1
doc = ('<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">'
       '<channel><title>Bench</title>\n' + ''.join(body) + '</channel></rss>\n')
open(sys.argv[1], 'w', encoding='utf-8').write(doc)
PY

swiftc -O -module-name FeedXMLBench -o "$TMP/feed-xml" \
  "$REPO_ROOT/Sources/SGEMCompany/FeedXML.swift" "$REPO_ROOT/Sources/SGEMCompany/FeedEncoding.swift" \
  "$REPO_ROOT/Sources/SGEMSupport/String+Trimming.swift" "$REPO_ROOT/scripts/bench/feed-xml/main.swift"
"$TMP/feed-xml" "$TMP/feed.xml" "${1:-15}" | tee "$OUT/feed-xml.txt"
