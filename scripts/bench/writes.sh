#!/usr/bin/env bash
# The durable write path over HTTP: POST /api/v1/bench/writes (one SQLite insert each, answered
# 201 after commit) with 64 connections for 8 s. sgem-server with group commit (default
# --store-write-batch) against the same server with --store-write-batch 1 (one transaction per
# insert). Only acknowledged writes (201) count; the row count is cross-checked afterwards.
# Targets: ≥ 5,000 acknowledged writes/s and ≥ 10 × the batch-1 rate. Extra context: raw SQLite
# from Python (WAL, synchronous=FULL, one INSERT per transaction, one thread, ~3 s).
#
# usage: scripts/bench/writes.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/writes.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run. Data directories live under bench-results/tmp (the
# repository's filesystem) and are deleted afterwards.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init writes "${1:-}" wrk curl

DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
SQLITE_SECONDS=3

mkdir -p "$BENCH_TMP/sqlite"
sqlite_ref="$("$BENCH_PYTHON" "$BENCH_DIR/sqlite_ref.py" "$BENCH_TMP/sqlite" "$SQLITE_SECONDS")" ||
  bench_fail "raw SQLite reference failed"
rm -rf "$BENCH_TMP/sqlite"

# The bench module's row count; fails the benchmark when the endpoint does not answer.
count_rows() {
  local body
  body="$(curl -fsS --max-time 5 "http://127.0.0.1:$SGEM_PORT/api/v1/bench/writes/count")" ||
    bench_fail "GET /api/v1/bench/writes/count failed"
  "$BENCH_PYTHON" -c 'import json,sys; print(int(json.loads(sys.argv[1])["count"]))' "$body" ||
    bench_fail "GET /api/v1/bench/writes/count answered $body"
}

# Polls the row count until two reads a quarter second apart agree (writes in flight when wrk
# stopped have landed), at most 5 s.
settled_count() {
  local previous current i
  previous="$(count_rows)"
  for ((i = 0; i < 20; i++)); do
    sleep 0.25
    current="$(count_rows)"
    [ "$current" = "$previous" ] && break
    previous="$current"
  done
  echo "$current"
}

# measure LABEL EXTRA_ARGS...: one server, warm-up, measured run; prints one JSON line.
measure() {
  local label="$1"
  shift
  bench_start_sgem "$label" "" -- --bench-module "$@"
  local url="http://127.0.0.1:$SGEM_PORT/api/v1/bench/writes" status
  status="$(curl -sS -o "$BENCH_TMP/first-$label.json" -w '%{http_code}' --max-time 5 \
    -X POST -H 'Content-Type: application/json' --data '{"note":"bench write"}' "$url")" || status=000
  [ "$status" = 201 ] ||
    bench_fail "POST /api/v1/bench/writes ($label) answered $status: $(head -c 200 "$BENCH_TMP/first-$label.json")"
  bench_wrk "$BENCH_TMP/warm-$label.txt" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" --timeout 10s \
    -s "$BENCH_DIR/writes.lua" "$url" >/dev/null
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  local before after result
  before="$(settled_count)"
  result="$(bench_wrk "$BENCH_TMP/wrk-$label.txt" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s \
    --latency -s "$BENCH_DIR/writes.lua" "$url")"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  after="$(settled_count)"
  local log_errors
  log_errors="$(grep -ciE 'level=(error|critical)' "$SGEM_LOG" || true)"
  bench_stop_sgem "$SGEM_PID" "$label" "$SGEM_LOG"
  echo "{\"label\":\"$label\",\"args\":\"$*\",\"rows_before\":$before,\"rows_after\":$after,\"log_error_lines\":$log_errors,\"wrk\":$result}"
}

runs="$BENCH_TMP/runs.jsonl"
# Not in $(...): bench_start_sgem must set SGEM_PID in this shell for the cleanup trap.
measure group >"$runs.group"
measure batch1 --store-write-batch 1 >"$runs.batch1"
cat "$runs.group" "$runs.batch1" >"$runs"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$runs" "$sqlite_ref" "$CONNECTIONS" "$DURATION" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, runs_path, sqlite_ref = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
connections, duration = int(sys.argv[5]), int(sys.argv[6])
runs = {r["label"]: r for r in map(json.loads, open(runs_path))}
anomalies = []
for label, r in runs.items():
    w = r["wrk"]
    if "created" not in w:
        sys.exit(f"writes: ERROR: wrk printed no 'BENCH created=' line for {label}")
    # Acknowledged = 201 answers counted by the Lua script; wrk's own count must agree.
    acked = w["created"]
    r["acked"] = acked
    r["rate"] = acked / w["duration_s"]
    if acked != w["requests"] - w["non_2xx"]:
        anomalies.append(f"{label}: Lua counted {acked} × 201 but wrk reports {w['requests']} requests, "
                         f"{w['non_2xx']} non-2xx")
    if w["other"] or w["non_2xx"]:
        anomalies.append(f"{label}: {w['other']} answers were not 201")
    if sum(w["socket_errors"].values()):
        anomalies.append(f"{label}: socket errors {w['socket_errors']}")
    stored = r["rows_after"] - r["rows_before"]
    r["rows_stored"] = stored
    # Writes in flight when wrk stopped land without being counted: at most one per connection.
    if not acked <= stored <= acked + connections:
        anomalies.append(f"{label}: {acked} writes acknowledged but the row count grew by {stored}")
    if r["log_error_lines"]:
        anomalies.append(f"{label}: {r['log_error_lines']} error lines in the server log")

g, b = runs["group"], runs["batch1"]
speedup = ratio(g["rate"], b["rate"])
rows = [
    row("durable writes/s, group commit vs --store-write-batch 1", g["rate"], b["rate"], speedup,
        "≥ 10 × batch-1", speedup is not None and speedup >= 10),
    row("durable writes/s, absolute (64 conns)", g["rate"], "—", None, "≥ 5,000/s", g["rate"] >= 5000),
    row("raw SQLite, 1 txn/insert, WAL+FULL (context)", g["rate"], sqlite_ref["rate"],
        ratio(g["rate"], sqlite_ref["rate"]), "— (context)", None),
    row("write p99 latency, group vs batch-1", g["wrk"].get("p99_ms"), b["wrk"].get("p99_ms"),
        ratio(g["wrk"].get("p99_ms"), b["wrk"].get("p99_ms")), "— (recorded)", None, "ms"),
]
write_result(results_dir, "writes", {
    "config": {"connections": connections, "duration_s": duration, "wrk_threads": 1,
               "reference": "same server with --store-write-batch 1"},
    "group_rate": g["rate"], "batch1_rate": b["rate"], "ratio": speedup,
    "sqlite_reference": sqlite_ref, "runs": runs, "anomalies": anomalies,
    "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"writes: note: {a}", file=sys.stderr)
print(f"writes: {verdict(rows)}  group commit {fmt(g['rate'])} acked writes/s vs batch-1 {fmt(b['rate'])}/s "
      f"= {speedup:.1f}× (targets ≥ 5,000/s and ≥ 10×); raw SQLite 1 txn/insert {fmt(sqlite_ref['rate'])}/s")
PY
