#!/usr/bin/env bash
# A chat in translation mode: 50 readers in 5 languages (10 each) all reading one group in their
# language, while its creator sends messages with wrk (64 connections, a distinct body and
# clientId each) — beside the same chat with translation off. Translation runs in the background
# through a LibreTranslate stand-in (scripts/translate_stub.py, a separate process that counts
# calls), so sending must not wait on it. After the measured run the worker is given time to
# drain; the stub's call count divided by the messages sent must be the number of distinct
# languages (5), not the number of readers (50).
# The server is pinned to CPU 0, wrk and the stand-in to CPU 1, the stand-in at idle priority (a
# real provider is elsewhere: its work must not slow the load generator).
# Targets: send rate and p99 within 10 % of the chat without translation; 5 calls per message.
#
# usage: scripts/bench/translation.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/translation.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
bench_init translation "${1:-}" wrk curl

DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
DRAIN_LIMIT="${BENCH_DRAIN_LIMIT:-600}"
# The server on one CPU, wrk and the provider's stand-in on the other: a real provider runs on
# another machine, so its work must not be charged to the server's sends.
SERVER_CPU=0
CLIENT_CPU=1

msg_send_lua "$BENCH_TMP/send.lua" "Good morning everyone, this is a message about the plan"

# The LibreTranslate stand-in, its port announced on its first line.
# At idle priority (SCHED_IDLE) on wrk's CPU: a real provider is another machine, so answering
# must not take CPU from the load generator.
chrt --idle 0 taskset -c "$CLIENT_CPU" "$BENCH_PYTHON" "$BENCH_DIR/../translate_stub.py" --detected en >"$BENCH_TMP/stub.log" 2>&1 &
STUB_PID=$!
bench_track "$STUB_PID"
for _ in $(seq 100); do grep -q "listening on" "$BENCH_TMP/stub.log" && break; sleep 0.1; done
STUB_URL="$(grep -o 'http://[0-9.:]*' "$BENCH_TMP/stub.log" | head -1)"
[ -n "$STUB_URL" ] || bench_fail "the translation stub did not start: $(cat "$BENCH_TMP/stub.log")"
stub_calls() { curl -fsS --max-time 5 "$STUB_URL/_stats" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["calls"])'; }

# measure LABEL [--translated]: one server, 50 readers, one group, warm-up, measured run, drain.
measure() {
  local label="$1" mode="${2:-}"
  bench_start_sgem "$label" "$SERVER_CPU" -- --password-hash-log-n 10 --translation-per-minute 100000
  local data="$BENCH_TMP/data-$label" base="http://127.0.0.1:$SGEM_PORT" token chat
  msg_admin "$data"
  "$BENCH_BIN" admin translation set url "$STUB_URL" --data-dir "$data" --log-level warning >/dev/null ||
    bench_fail "setting the provider failed"
  token="$(msg_login "$base")"
  chat="$("$BENCH_PYTHON" "$BENCH_DIR/translation_seed.py" "$base" "$token" $mode)" || bench_fail "seeding failed ($label)"
  local url="$base/api/v1/chats/$chat/messages" wrk_args=(-t1 -c"$CONNECTIONS" --timeout 10s -s "$BENCH_TMP/send.lua"
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json')
  bench_wrk "$BENCH_TMP/warm-$label.txt" taskset -c "$CLIENT_CPU" wrk "${wrk_args[@]}" -d"${WARMUP}s" "$url" -- "warm$label" >/dev/null
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  # The warm-up's translations drain before the measured run starts, so both runs begin idle.
  local last=-1 calls waited=0
  while true; do
    calls="$(stub_calls)"
    [ "$calls" = "$last" ] && break
    last="$calls"; sleep 2; waited=$((waited + 2))
    [ "$waited" -ge "$DRAIN_LIMIT" ] && bench_fail "the warm-up's translations did not drain in ${DRAIN_LIMIT}s"
  done
  local db="$data/sgem.db" before calls_before result after events_before
  before="$(msg_count "$db" "SELECT COUNT(*) FROM messaging_messages")"
  calls_before="$(stub_calls)"
  events_before="$(msg_count "$db" "SELECT COUNT(*) FROM system_events WHERE audience_kind = 'chat_users'")"
  result="$(bench_wrk "$BENCH_TMP/wrk-$label.txt" taskset -c "$CLIENT_CPU" wrk "${wrk_args[@]}" -d"${DURATION}s" --latency "$url" -- "run$label")"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  sleep 0.5
  after="$(msg_count "$db" "SELECT COUNT(*) FROM messaging_messages")"
  local started drained calls_after
  started="$(date +%s.%N)"
  last=-1; waited=0
  while true; do
    calls_after="$(stub_calls)"
    [ "$calls_after" = "$last" ] && break
    last="$calls_after"; sleep 2; waited=$((waited + 2))
    [ "$waited" -ge "$DRAIN_LIMIT" ] && break
  done
  drained="$("$BENCH_PYTHON" -c "import sys,time; print(round(time.time() - float(sys.argv[1]) - 2, 1))" "$started")"
  local events log_errors
  events="$(( $(msg_count "$db" "SELECT COUNT(*) FROM system_events WHERE audience_kind = 'chat_users'") - events_before ))"
  log_errors="$(grep -ciE 'level=(error|critical)' "$SGEM_LOG" || true)"
  bench_stop_sgem "$SGEM_PID" "$label" "$SGEM_LOG"
  echo "{\"label\":\"$label\",\"stored\":$((after - before)),\"calls\":$((calls_after - calls_before)),\"translation_events\":$events,\"drain_s\":$drained,\"log_error_lines\":$log_errors,\"wrk\":$result}"
}

# Two alternating rounds (as healthz.sh does); each mode is judged by its better run.
runs="$BENCH_TMP/runs"
measure plain1 >"$runs.plain1"
measure translated1 --translated >"$runs.translated1"
measure plain2 >"$runs.plain2"
measure translated2 --translated >"$runs.translated2"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$CONNECTIONS" "$DURATION" "$runs.plain1" "$runs.translated1" "$runs.plain2" "$runs.translated2" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import count_created, fmt, ratio, row, verdict, write_result

results_dir, connections, duration = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = {r["label"]: r for r in (json.load(open(p)) for p in sys.argv[5:9])}
anomalies = []
count_created(runs, anomalies)
for label, r in runs.items():
    if r["log_error_lines"]:
        anomalies.append(f"{label}: {r['log_error_lines']} error lines in the server log")
p = max((runs["plain1"], runs["plain2"]), key=lambda r: r["rate"])
t = max((runs["translated1"], runs["translated2"]), key=lambda r: r["rate"])
per_message = t["calls"] / t["stored"] if t["stored"] else None
for label in ("plain1", "plain2"):
    if runs[label]["calls"]:
        anomalies.append(f"{label}: {runs[label]['calls']} provider calls without translation mode")
for label in ("translated1", "translated2"):
    r = runs[label]
    if not r["stored"] or r["calls"] != 5 * r["stored"]:
        anomalies.append(f"{label}: {r['calls']} provider calls for {r['stored']} messages (5 each expected)")
rows = [
    row("messages sent/s into a 50-reader chat, 5 languages in translation mode vs translation off (64 conns)",
        t["rate"], p["rate"], ratio(t["rate"], p["rate"]), "≥ 0.90×", t["rate"] >= 0.9 * p["rate"] and not anomalies),
    row("message send p99, translation mode vs off", t["wrk"].get("p99_ms"), p["wrk"].get("p99_ms"),
        ratio(t["wrk"].get("p99_ms"), p["wrk"].get("p99_ms")), "≤ 1.10×",
        t["wrk"].get("p99_ms") is not None and t["wrk"]["p99_ms"] <= 1.1 * p["wrk"]["p99_ms"], "ms"),
    row("provider calls per message (5 languages, 50 readers)", per_message, "5 languages", None, "= 5",
        per_message is not None and abs(per_message - 5) < 0.01 and not any("calls for" in a for a in anomalies)),
    row("seconds for the background worker to finish after the run", t["drain_s"], "—", None, "— (context)", None, "s"),
]
write_result(results_dir, "translation", {
    "config": {"connections": connections, "duration_s": duration, "readers": 50, "languages": 5, "rounds": 2,
               "reference": "the same chat with translation off", "provider": "scripts/translate_stub.py (LibreTranslate shapes)"},
    "runs": runs, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"translation: note: {a}", file=sys.stderr)
print(f"translation: {verdict(rows)}  (better of 2 rounds each; rounds: "
      + ", ".join(f"{k} {fmt(v['rate'])}/s p99 {fmt(v['wrk'].get('p99_ms'))} ms" for k, v in runs.items()) + ")")
print(f"translation: translated: {fmt(t['rate'])} messages/s (p99 {fmt(t['wrk'].get('p99_ms'))} ms) vs off "
      f"{fmt(p['rate'])}/s (p99 {fmt(p['wrk'].get('p99_ms'))} ms); {t['calls']} calls for {t['stored']} messages "
      f"({fmt(per_message)} per message; {t['translation_events']} translation events), drained in {t['drain_s']} s")
PY
