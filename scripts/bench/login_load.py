#!/usr/bin/env python3
"""Logs in repeatedly from N concurrent keep-alive clients for a fixed time and prints one JSON
object: login_load.py PORT LOGIN PASSWORD CLIENTS SECONDS.

Fields: logins (successful), failures, duration_s, logins_per_s, p50_ms, p99_ms.
The server does the work (one scrypt hash per login), so Python threads are fast enough.
"""
import http.client
import json
import sys
import threading
import time

port, login, password = int(sys.argv[1]), sys.argv[2], sys.argv[3]
clients, seconds = int(sys.argv[4]), float(sys.argv[5])
body = json.dumps({"login": login, "password": password})
deadline = time.monotonic() + seconds
lock = threading.Lock()
latencies, failures = [], [0]


def worker():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            conn.request("POST", "/api/v1/auth/login", body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            ok = resp.status == 200
        except (OSError, http.client.HTTPException):
            ok = False
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        elapsed = (time.monotonic() - started) * 1000
        with lock:
            if ok:
                latencies.append(elapsed)
            else:
                failures[0] += 1
    conn.close()


start = time.monotonic()
threads = [threading.Thread(target=worker) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
duration = time.monotonic() - start
latencies.sort()


def pct(p):
    return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))], 2) if latencies else None


print(json.dumps({"logins": len(latencies), "failures": failures[0], "duration_s": round(duration, 3),
                  "logins_per_s": round(len(latencies) / duration, 2), "p50_ms": pct(0.50), "p99_ms": pct(0.99)}))
