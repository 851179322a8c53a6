#!/usr/bin/env bash
# Sending messages: POST /api/v1/chats/{id}/messages (a bearer token, a distinct clientId each,
# answered 201 only after the commit) with 64 connections for 8 s into one group, beside the
# same server with --store-write-batch 1 (each message, its search row, its chat update and its
# realtime event in a transaction of their own). Both run twice: on the real disk and on the
# emulated slow storage of writes.sh (slowfsync.c: +2 ms per fsync/fdatasync). Only 201s count;
# the messages and journal rows are counted in the database afterwards and must match.
# Targets (real disk, group commit): ≥ 5,000 durable messages/s, p99 < 20 ms, no errors.
#
# usage: scripts/bench/messaging-send.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/messaging-send.json. Exit 0 when measured (the result line says PASS or
# FAIL), non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
bench_init messaging-send "${1:-}" wrk curl gcc

DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
SLOW_FSYNC_US="${BENCH_SLOW_FSYNC_US:-2000}"
SHIM="$BENCH_TMP/slowfsync.so"
gcc -shared -fPIC -O2 -o "$SHIM" "$BENCH_DIR/slowfsync.c" -ldl 2>"$BENCH_TMP/gcc.txt" ||
  bench_fail "cannot build the slow-fsync shim: $(head -c 300 "$BENCH_TMP/gcc.txt" | tr '\n' ' ')"

# The wrk script (messaging-lib.sh): a distinct body and clientId per request.
msg_send_lua "$BENCH_TMP/send.lua" "bench message, plain text with a few words"

# measure LABEL EXTRA_ARGS...: one server, one group, warm-up, measured run; one JSON line.
measure() {
  local label="$1" env_words="" count_file="$BENCH_TMP/fsyncs-$1"
  shift
  [[ "$label" == slow-* ]] && env_words="LD_PRELOAD=$SHIM SLOW_FSYNC_US=$SLOW_FSYNC_US SLOW_FSYNC_COUNT=$count_file"
  BENCH_SGEM_ENV="$env_words" bench_start_sgem "$label" "" -- --password-hash-log-n 10 "$@"
  local data="$BENCH_TMP/data-$label" base="http://127.0.0.1:$SGEM_PORT" token chat
  msg_admin "$data"
  token="$(msg_login "$base")"
  chat="$(curl -fsS --max-time 10 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"Bench group"}' "$base/api/v1/chats" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')" ||
    bench_fail "creating the group failed ($label)"
  local url="$base/api/v1/chats/$chat/messages" wrk_args=(-t1 -c"$CONNECTIONS" --timeout 10s -s "$BENCH_TMP/send.lua"
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json')
  bench_wrk "$BENCH_TMP/warm-$label.txt" wrk "${wrk_args[@]}" -d"${WARMUP}s" "$url" -- warm >/dev/null
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  local db="$data/sgem.db" before events_before result after events_after
  sleep 0.5 # writes in flight when the warm-up stopped land
  before="$(msg_count "$db" "SELECT COUNT(*) FROM messaging_messages")"
  events_before="$(msg_count "$db" "SELECT COUNT(*) FROM system_events WHERE type = 'message.created'")"
  result="$(bench_wrk "$BENCH_TMP/wrk-$label.txt" wrk "${wrk_args[@]}" -d"${DURATION}s" --latency "$url" -- measured)"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  sleep 0.5
  after="$(msg_count "$db" "SELECT COUNT(*) FROM messaging_messages")"
  events_after="$(msg_count "$db" "SELECT COUNT(*) FROM system_events WHERE type = 'message.created'")"
  local log_errors fsyncs=null
  log_errors="$(grep -ciE 'level=(error|critical)' "$SGEM_LOG" || true)"
  bench_stop_sgem "$SGEM_PID" "$label" "$SGEM_LOG"
  [ -n "$env_words" ] && fsyncs="$(cat "$count_file" 2>/dev/null || echo 0)"
  echo "{\"label\":\"$label\",\"args\":\"$*\",\"stored\":$((after - before)),\"events\":$((events_after - events_before)),\"log_error_lines\":$log_errors,\"fsyncs\":$fsyncs,\"wrk\":$result}"
}

runs="$BENCH_TMP/runs"
measure group >"$runs.group"
measure batch1 --store-write-batch 1 >"$runs.batch1"
measure slow-group >"$runs.slow-group"
measure slow-batch1 --store-write-batch 1 >"$runs.slow-batch1"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$CONNECTIONS" "$DURATION" "$SLOW_FSYNC_US" \
  "$runs.group" "$runs.batch1" "$runs.slow-group" "$runs.slow-batch1" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import count_created, fmt, ratio, row, verdict, write_result

results_dir, connections, duration, slow_us = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
runs = {r["label"]: r for r in (json.load(open(p)) for p in sys.argv[6:10])}
anomalies = []
count_created(runs, anomalies)
for label, r in runs.items():
    # Messages in flight when wrk stopped land uncounted: at most one per connection.
    if not r["acked"] <= r["stored"] <= r["acked"] + connections:
        anomalies.append(f"{label}: {r['acked']} messages acknowledged but {r['stored']} stored")
    if r["events"] != r["stored"]:
        anomalies.append(f"{label}: {r['stored']} messages stored but {r['events']} message.created events")
    if r["log_error_lines"]:
        anomalies.append(f"{label}: {r['log_error_lines']} error lines in the server log")
g, b, sg, sb = runs["group"], runs["batch1"], runs["slow-group"], runs["slow-batch1"]
slow = f"{slow_us / 1000:g} ms-fsync storage"
clean = not any(a.startswith("group:") for a in anomalies)
p99 = g["wrk"].get("p99_ms")
rows = [
    row("messages sent/s, real disk, group commit vs one transaction each (64 conns)", g["rate"], b["rate"],
        ratio(g["rate"], b["rate"]), "≥ 5,000/s, no errors", g["rate"] >= 5000 and clean),
    row("message send p99, real disk, group commit vs one transaction each", p99, b["wrk"].get("p99_ms"),
        ratio(p99, b["wrk"].get("p99_ms")), "< 20 ms", p99 is not None and p99 < 20, "ms"),
    row(f"messages sent/s, {slow}, group commit vs one transaction each", sg["rate"], sb["rate"],
        ratio(sg["rate"], sb["rate"]), "— (context)", None),
    row(f"message send p99, {slow}, group commit vs one transaction each", sg["wrk"].get("p99_ms"), sb["wrk"].get("p99_ms"),
        ratio(sg["wrk"].get("p99_ms"), sb["wrk"].get("p99_ms")), "— (recorded)", None, "ms"),
]
write_result(results_dir, "messaging-send", {
    "config": {"connections": connections, "duration_s": duration, "reference": "same server with --store-write-batch 1",
               "slow_storage": f"LD_PRELOAD slowfsync.so, +{slow_us} µs per fsync/fdatasync"},
    "runs": runs, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"messaging-send: note: {a}", file=sys.stderr)
print(f"messaging-send: {verdict(rows)}  real disk: {fmt(g['rate'])} messages/s (p99 {fmt(p99)} ms) vs one transaction each "
      f"{fmt(b['rate'])}/s (p99 {fmt(b['wrk'].get('p99_ms'))} ms); {slow}: {fmt(sg['rate'])}/s vs {fmt(sb['rate'])}/s")
PY
