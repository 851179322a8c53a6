#!/usr/bin/env python3
"""Parses the text wrk prints into one JSON object on stdout: wrkparse.py WRK_OUTPUT_FILE.

Fields: requests, duration_s, rps, p50_ms/p75_ms/p90_ms/p99_ms (with --latency), non_2xx,
socket_errors {connect, read, write, timeout}, and created/other when the Lua script in
writes.lua printed its "BENCH created=N other=M" line.
"""
import json
import re
import sys

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0, "h": 3600000.0}


def to_ms(text):
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m|h)", text)
    if not m:
        raise ValueError(f"unknown duration {text!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


def parse(text):
    result = {"non_2xx": 0, "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0}}
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m|h),", text)
    if not m:
        raise ValueError("no 'N requests in T' line in wrk output")
    result["requests"] = int(m.group(1))
    result["duration_s"] = to_ms(m.group(2) + m.group(3)) / 1000.0
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if not m:
        raise ValueError("no 'Requests/sec' line in wrk output")
    result["rps"] = float(m.group(1))
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+(?:us|ms|s|m|h))\s*$", text, re.M)
        if m:
            result[f"p{pct}_ms"] = round(to_ms(m.group(1)), 3)
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    if m:
        result["non_2xx"] = int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        result["socket_errors"] = dict(zip(("connect", "read", "write", "timeout"), map(int, m.groups())))
    m = re.search(r"^BENCH created=(\d+) other=(\d+)", text, re.M)
    if m:
        result["created"] = int(m.group(1))
        result["other"] = int(m.group(2))
    return result


def main():
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        text = f.read()
    try:
        print(json.dumps(parse(text)))
    except ValueError as e:
        sys.exit(f"wrkparse: {e}; wrk said: {' '.join(text.split())[:300]}")


if __name__ == "__main__":
    main()
