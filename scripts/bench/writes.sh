#!/usr/bin/env bash
# The durable write path over HTTP: POST /api/v1/bench/writes (one SQLite insert each, answered
# 201 after commit) with 64 connections for 8 s. sgem-server with group commit (default
# --store-write-batch) against the same server with --store-write-batch 1 (one transaction per
# insert). Only acknowledged writes (201) count; the row count is cross-checked afterwards.
# Both pairs run twice: on the real disk, and on emulated slow storage — an LD_PRELOAD shim
# (slowfsync.c, built here with gcc) that adds 2 ms to every fsync/fdatasync, as a spinning or
# network disk would; the shim counts the calls it intercepted and the run fails if it saw none.
# Targets: ≥ 10 × the batch-1 rate on the slow storage (where a commit costs what it costs on
# such disks; an SSD's cheap flush hides the batching), ≥ 5,000 acknowledged writes/s on the
# real disk. Extra context: raw SQLite from Python (WAL, synchronous=FULL, one INSERT per
# transaction, one thread, ~3 s), on both. BENCH_SLOW_FSYNC_US changes the delay.
#
# usage: scripts/bench/writes.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/writes.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run. Data directories live under bench-results/tmp (the
# repository's filesystem) and are deleted afterwards.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init writes "${1:-}" wrk curl gcc

DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
SQLITE_SECONDS=3
SLOW_FSYNC_US="${BENCH_SLOW_FSYNC_US:-2000}"

SHIM="$BENCH_TMP/slowfsync.so"
gcc -shared -fPIC -O2 -o "$SHIM" "$BENCH_DIR/slowfsync.c" -ldl 2>"$BENCH_TMP/gcc.txt" ||
  bench_fail "cannot build the slow-fsync shim: $(head -c 300 "$BENCH_TMP/gcc.txt" | tr '\n' ' ')"

# slow_env COUNT_FILE: the environment words that put a process on the emulated slow storage.
slow_env() { echo "LD_PRELOAD=$SHIM SLOW_FSYNC_US=$SLOW_FSYNC_US SLOW_FSYNC_COUNT=$1"; }

# intercepted COUNT_FILE WHAT: the shim's call count; fails the benchmark when it saw none.
intercepted() {
  local n
  n="$(cat "$1" 2>/dev/null || echo 0)"
  [ "${n:-0}" -gt 0 ] || bench_fail "the slow-fsync shim intercepted no fsync/fdatasync in $2: the slow-storage figures would be the real disk's"
  echo "$n"
}

# sqlite_reference LABEL [ENV_WORDS]: the raw SQLite figure, as JSON.
sqlite_reference() {
  local dir="$BENCH_TMP/sqlite-$1" out
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  out="$(env ${2:-} "$BENCH_PYTHON" "$BENCH_DIR/sqlite_ref.py" "$dir" "$SQLITE_SECONDS")" ||
    bench_fail "raw SQLite reference ($1) failed"
  rm -rf "$dir"
  echo "$out"
}
sqlite_ref="$(sqlite_reference disk)"
sqlite_slow="$(sqlite_reference slow "$(slow_env "$BENCH_TMP/fsyncs-sqlite")")"
sqlite_fsyncs="$(intercepted "$BENCH_TMP/fsyncs-sqlite" "raw SQLite")"

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

# measure LABEL EXTRA_ARGS...: one server, warm-up, measured run; prints one JSON line. A label
# starting with "slow-" runs the server on the emulated slow storage.
measure() {
  local label="$1" count_file="$BENCH_TMP/fsyncs-$1" env_words=""
  shift
  [[ "$label" == slow-* ]] && env_words="$(slow_env "$count_file")"
  BENCH_SGEM_ENV="$env_words" bench_start_sgem "$label" "" -- --bench-module "$@"
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
  local fsyncs=null
  [ -n "$env_words" ] && fsyncs="$(intercepted "$count_file" "sgem-server ($label)")"
  echo "{\"label\":\"$label\",\"args\":\"$*\",\"rows_before\":$before,\"rows_after\":$after,\"log_error_lines\":$log_errors,\"fsyncs\":$fsyncs,\"wrk\":$result}"
}

runs="$BENCH_TMP/runs.jsonl"
# Not in $(...): bench_start_sgem must set SGEM_PID in this shell for the cleanup trap.
measure group >"$runs.group"
measure batch1 --store-write-batch 1 >"$runs.batch1"
measure slow-group >"$runs.slow-group"
measure slow-batch1 --store-write-batch 1 >"$runs.slow-batch1"
cat "$runs.group" "$runs.batch1" "$runs.slow-group" "$runs.slow-batch1" >"$runs"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$runs" "$sqlite_ref" "$CONNECTIONS" "$DURATION" \
  "$sqlite_slow" "$sqlite_fsyncs" "$SLOW_FSYNC_US" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, runs_path, sqlite_ref = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
connections, duration = int(sys.argv[5]), int(sys.argv[6])
sqlite_slow, sqlite_fsyncs, slow_us = json.loads(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
sqlite_slow["fsyncs"] = sqlite_fsyncs
slow = f"{slow_us / 1000:g} ms-fsync storage"


def times(value):
    return "n/a" if value is None else f"{value:.1f}×"

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

for r in runs.values():
    # Flushes per stored row over the server's life (warm-up included): the batching made
    # visible (one transaction per insert needs at least one).
    r["fsyncs_per_write"] = r["fsyncs"] / r["rows_after"] if r.get("fsyncs") and r["rows_after"] else None

g, b = runs["group"], runs["batch1"]
sg, sb = runs["slow-group"], runs["slow-batch1"]
speedup = ratio(g["rate"], b["rate"])
slow_speedup = ratio(sg["rate"], sb["rate"])
rows = [
    row(f"durable writes/s on {slow}, group commit vs --store-write-batch 1", sg["rate"], sb["rate"],
        slow_speedup, "≥ 10 × batch-1", slow_speedup is not None and slow_speedup >= 10),
    row("durable writes/s on the real disk, group commit vs --store-write-batch 1", g["rate"], b["rate"],
        speedup, "— (context)", None),
    row("durable writes/s on the real disk, absolute (64 conns)", g["rate"], "—", None, "≥ 5,000/s", g["rate"] >= 5000),
    row("raw SQLite, 1 txn/insert, WAL+FULL, real disk (context)", g["rate"], sqlite_ref["rate"],
        ratio(g["rate"], sqlite_ref["rate"]), "— (context)", None),
    row(f"raw SQLite, 1 txn/insert, WAL+FULL, {slow} (context)", sg["rate"], sqlite_slow["rate"],
        ratio(sg["rate"], sqlite_slow["rate"]), "— (context)", None),
    row("write p99 latency, group vs batch-1, real disk", g["wrk"].get("p99_ms"), b["wrk"].get("p99_ms"),
        ratio(g["wrk"].get("p99_ms"), b["wrk"].get("p99_ms")), "— (recorded)", None, "ms"),
    row(f"write p99 latency, group vs batch-1, {slow}", sg["wrk"].get("p99_ms"), sb["wrk"].get("p99_ms"),
        ratio(sg["wrk"].get("p99_ms"), sb["wrk"].get("p99_ms")), "— (recorded)", None, "ms"),
]
write_result(results_dir, "writes", {
    "config": {"connections": connections, "duration_s": duration, "wrk_threads": 1,
               "reference": "same server with --store-write-batch 1",
               "slow_storage": f"LD_PRELOAD slowfsync.so, +{slow_us} µs per fsync/fdatasync"},
    "group_rate": g["rate"], "batch1_rate": b["rate"], "ratio": speedup,
    "slow_group_rate": sg["rate"], "slow_batch1_rate": sb["rate"], "slow_ratio": slow_speedup,
    "sqlite_reference": sqlite_ref, "sqlite_reference_slow": sqlite_slow, "runs": runs, "anomalies": anomalies,
    "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"writes: note: {a}", file=sys.stderr)
print(f"writes: {verdict(rows)}  {slow}: group commit {fmt(sg['rate'])} acked writes/s vs batch-1 "
      f"{fmt(sb['rate'])}/s = {times(slow_speedup)} (target ≥ 10×), raw SQLite 1 txn/insert {fmt(sqlite_slow['rate'])}/s; "
      f"real disk: group {fmt(g['rate'])}/s (target ≥ 5,000/s) vs batch-1 {fmt(b['rate'])}/s = {times(speedup)}, "
      f"raw SQLite {fmt(sqlite_ref['rate'])}/s")
PY
