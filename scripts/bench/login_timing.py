#!/usr/bin/env python3
"""Times failed logins one at a time and prints one JSON object:
login_timing.py PORT KNOWN_USERS ATTEMPTS_PER_USER.

Each attempt is either an unknown login or a known one (KNOWN_USERS, comma-separated) with a wrong
password, interleaved so both see the same machine load. Every attempt comes from its own
X-Forwarded-For address (the server trusts 127.0.0.1 as a proxy) and stays under the per-account
threshold, so the throttle never answers instead of the password check.

Fields: unknown_ms and known_ms (median), samples of each, and unknown_over_known (their ratio).
"""
import http.client
import json
import statistics
import sys
import time

port = int(sys.argv[1])
known = sys.argv[2].split(",")
per_user = int(sys.argv[3])


def attempt(login, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"login": login, "password": "not the password"})
    headers = {"Content-Type": "application/json", "X-Forwarded-For": f"10.9.{n // 250}.{n % 250 + 1}"}
    started = time.monotonic()
    conn.request("POST", "/api/v1/auth/login", body=body, headers=headers)
    resp = conn.getresponse()
    resp.read()
    elapsed = (time.monotonic() - started) * 1000
    conn.close()
    if resp.status != 401:
        sys.exit(f"login_timing: {login} answered {resp.status}, expected 401")
    return elapsed


unknown, wrong = [], []
n = 0
for round_ in range(per_user):
    for user in known:
        wrong.append(attempt(user, n))
        unknown.append(attempt(f"nobody-{round_}-{user}", n + 1))
        n += 2
u, k = statistics.median(unknown), statistics.median(wrong)
print(json.dumps({"unknown_ms": round(u, 2), "known_ms": round(k, 2), "samples": len(unknown),
                  "unknown_over_known": round(u / k, 3)}))
