#!/usr/bin/env python3
"""Fills a fresh server with approved absences over the API, then parses its iCal feed with a
real RFC 5545 parser (icalendar, PyPI) and checks what a calendar app would see. Run by
`make test` (target test-ical). Ends with `ical: N passed, N failed`.
"""
import datetime
import json
import os
import sys
import urllib.error
import urllib.request

import icalendar

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Checks, Server  # noqa: E402

PASSWORD = "correct horse battery"
# Commas, semicolons, a backslash, quotes, accents and enough length to fold.
TRICKY = 'Zoë "Z" Ólafsdóttir; the, very \\ long-named colleague from accounts and payroll'


def main():
    server = Server(sys.argv[1], "ical", prepare=[
        (["migrate"], None),
        (["admin", "create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin", "--password-stdin"],
         PASSWORD + "\n"),
    ])
    base = f"http://127.0.0.1:{server.port}/api/v1"
    checks = Checks("ical")
    check = checks.check

    def call(method, path, token=None, body=None, raw=False):
        req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
        if body is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                payload = r.read()
                return r.status, dict(r.headers), (payload if raw else (json.loads(payload) if payload else None))
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    try:
        boss = call("POST", "/auth/login", body={"login": "boss", "password": PASSWORD})[2]["token"]
        tokens = {}
        for name, display in [("zoe", TRICKY), ("max", "Max Mustermann")]:
            st, _, _ = call("POST", "/admin/users", boss, {"username": name, "email": f"{name}@example.com", "displayName": display,
                                                           "role": "employee", "password": f"password-of-{name}"})
            assert st == 201, st
            tokens[name] = call("POST", "/auth/login", body={"login": name, "password": f"password-of-{name}"})[2]["token"]
        year = datetime.date.today().year + 1
        assert call("POST", "/admin/leave-types", boss, {"key": "sick", "name": "Sick leave", "needsApproval": False})[0] == 201
        made = [
            ("zoe", f"{year}-03-02", f"{year}-03-06", {"halfEnd": True}),
            ("zoe", f"{year}-12-29", f"{year + 1}-01-02", {}),
            ("max", f"{year}-05-03", f"{year}-05-07", {"type": "sick"}),
        ]
        ids = []
        for who, start, end, extra in made:
            st, _, r = call("POST", "/holidays", tokens[who], {"start": start, "end": end, **extra})
            assert st == 201, (st, r)
            ids.append(r["id"])
            if r["status"] == "pending":
                assert call("POST", f"/admin/holidays/{r['id']}/approve", boss, {})[0] == 200
        # A pending request stays out of the feed.
        assert call("POST", "/holidays", tokens["max"], {"start": f"{year}-06-01", "end": f"{year}-06-02"})[0] == 201

        def feed(who):
            url = call("POST", "/me/calendar-token", tokens[who])[2]["url"]
            status, headers, body = call("GET", url.split("/api/v1", 1)[1], raw=True)
            assert status == 200, status
            return url, headers, body

        url, headers, body = feed("max")

        def wire_format():
            assert headers.get("Content-Type", "").startswith("text/calendar"), headers
            assert body.endswith(b"\r\n") and b"\n" not in body.replace(b"\r\n", b""), "lines must end in CRLF"
            for line in body.split(b"\r\n"):
                assert len(line) <= 75, f"line of {len(line)} octets: {line[:40]!r}"
        check("CRLF lines of at most 75 octets", wire_format)

        cal = icalendar.Calendar.from_ical(body)
        events = [c for c in cal.walk("VEVENT")]

        def calendar_shape():
            assert cal.get("VERSION") == "2.0" and cal.get("PRODID"), "VERSION and PRODID"
            assert len(events) == 3, f"{len(events)} events"
            uids = [str(e.get("UID")) for e in events]
            assert len(set(uids)) == 3, uids
            for e in events:
                assert e.get("DTSTAMP") is not None, "DTSTAMP"
        check("the parser reads a VCALENDAR of the three approved absences", calendar_shape)

        def all_day_dates():
            by_start = {e.decoded("DTSTART"): e for e in events}
            first = by_start[datetime.date(year, 3, 2)]
            assert isinstance(first.decoded("DTSTART"), datetime.date) and not isinstance(first.decoded("DTSTART"), datetime.datetime)
            assert first.decoded("DTEND") == datetime.date(year, 3, 7), "DTEND is exclusive"
            across = by_start[datetime.date(year, 12, 29)]
            assert across.decoded("DTEND") == datetime.date(year + 1, 1, 3)
        check("all-day events with an exclusive end, across New Year too", all_day_dates)

        def escaped_text_round_trips():
            summaries = sorted(str(e.get("SUMMARY")) for e in events)
            assert any(s.startswith(TRICKY + ": away") for s in summaries), summaries
            assert "Max Mustermann: Sick leave" in summaries, summaries
        check("names with , ; \\ and accents read back exactly; types only for their owner", escaped_text_round_trips)

        def others_see_away():
            _, _, zoes = feed("zoe")
            parsed = [str(e.get("SUMMARY")) for e in icalendar.Calendar.from_ical(zoes).walk("VEVENT")]
            assert "Max Mustermann: away" in parsed and any(s.startswith(TRICKY + ": Vacation") for s in parsed), parsed
        check("another person's type reads 'away'", others_see_away)

        def revoked():
            new_url, _, _ = feed("max")
            assert new_url != url
            assert call("GET", url.split("/api/v1", 1)[1], raw=True)[0] == 401
        check("a new token revokes the old URL", revoked)
    finally:
        server.stop()
    checks.finish()


if __name__ == "__main__":
    main()
