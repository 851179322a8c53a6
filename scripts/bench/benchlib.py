"""Helpers shared by the benchmark scripts' Python parts: result rows and JSON files.

A result file is bench-results/NAME.json: {"benchmark": NAME, "rows": [...], ...details}.
Each row is one line of summary.md: benchmark, sgem, reference, ratio, target, pass
(true / false / null when the row has no target and is only context).
"""
import json
import sys
import os
import time


def fmt(value, digits=None):
    """A figure for the table: thousands separated, a sensible number of decimals."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if digits is None:
        digits = 0 if abs(value) >= 100 else (1 if abs(value) >= 10 else 2)
    return f"{value:,.{digits}f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def row(benchmark, sgem, reference, ratio_value, target, passed, unit=""):
    suffix = f" {unit}" if unit else ""
    return {
        "benchmark": benchmark,
        "sgem": fmt(sgem) + (suffix if sgem is not None else ""),
        "reference": reference if isinstance(reference, str) else fmt(reference) + (suffix if reference is not None else ""),
        "ratio": "—" if ratio_value is None else f"{ratio_value:.2f}×",
        "target": target,
        "pass": passed,
    }


def write_result(results_dir, name, payload):
    payload = {"benchmark": name, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **payload}
    path = os.path.join(results_dir, f"{name}.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def verdict(rows):
    """PASS when every row with a target passed, FAIL otherwise."""
    judged = [r["pass"] for r in rows if r["pass"] is not None]
    return "PASS" if all(judged) else "FAIL"


def beside_healthz(healthz, measured):
    """Rows for endpoints measured beside GET /healthz in the same run: for each (label, wrk
    result) its successful req/s and its p99, each with its ratio to healthz; and the anomalies
    (non-2xx answers, socket errors) of every run, healthz included. Sets each result's ok_rps."""
    for w in [healthz] + [w for _, w in measured]:
        w["ok_rps"] = (w["requests"] - w["non_2xx"]) / w["duration_s"]
    rows = []
    for label, w in measured:
        rows.append(row(f"{label} req/s", w["ok_rps"], f"healthz {fmt(healthz['ok_rps'])}", ratio(w["ok_rps"], healthz["ok_rps"]),
                        "— (recorded)", None))
        rows.append(row(f"{label} p99", w.get("p99_ms"), healthz.get("p99_ms"), ratio(w.get("p99_ms"), healthz.get("p99_ms")),
                        "— (recorded)", None, "ms"))
    anomalies = [f"{name}: non-2xx {w['non_2xx']}, socket errors {w['socket_errors']}"
                 for name, w in [("healthz", healthz)] + list(measured)
                 if w["non_2xx"] or sum(w["socket_errors"].values())]
    return rows, anomalies


class ApiClient:
    """One keep-alive connection to the server's API for seeding scripts: JSON in and out, a
    503 (the hashing queue is full) retried shortly, other failures collected in `failures`."""

    def __init__(self, base, failures):
        import http.client
        import urllib.parse
        url = urllib.parse.urlsplit(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        self.failures = failures

    def call(self, method, path, payload, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for _ in range(100):
            self.conn.request(method, path, json.dumps(payload), headers)
            r = self.conn.getresponse()
            data = r.read()
            if r.status != 503:
                break
            time.sleep(0.05)
        if r.status >= 300:
            self.failures.append(f"{method} {path}: {r.status} {data[:200]!r}")
            return None
        return json.loads(data) if data else {}

    def close(self):
        self.conn.close()


def seed_in_threads(seed, people, *args, threads=8):
    """Runs seed(share_of_people, *args, failures, thread_index) on `threads` threads; exits
    naming the first failed call, if any."""
    import threading
    failures = []
    workers = [threading.Thread(target=seed, args=(people[i::threads], *args, failures, i)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    if failures:
        sys.exit(f"seeding: {len(failures)} failed calls, first: {failures[0]}")


def count_created(runs, anomalies):
    """Sets each wrk run's `acked` (201s counted by writes.lua) and `rate`; answers other than 201
    and socket errors are added to `anomalies`."""
    for label, r in runs.items():
        w = r["wrk"]
        r["acked"] = w.get("created", 0)
        r["rate"] = r["acked"] / w["duration_s"]
        if w.get("other") or w["non_2xx"] or sum(w["socket_errors"].values()):
            anomalies.append(f"{label}: {w.get('other')} answers not 201, socket errors {w['socket_errors']}")
