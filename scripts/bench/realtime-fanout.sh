#!/usr/bin/env bash
# Realtime fan-out: 500 WebSocket clients (one user each) in 50 groups of 10 while 200 events/s
# are sent to random groups for 10 s; target: p99 from the send's 201 to delivery < 100 ms,
# nothing lost, nothing doubled, nobody outside the group reached.
# Two ways to send, each measured when available in the same run:
#   journal  — POST /api/v1/bench/events (--bench-module): one durable journal append per send
#              for the group's ten users; the hub's full path without messaging.
#   messages — POST /api/v1/chats/{id}/messages into real groups, once messaging serves them.
# Reference (context, no target): the p99 of the same sends' own 201 (send → 201).
#
# usage: scripts/bench/realtime-fanout.sh [PATH_TO_RELEASE_BINARY]
# Env: BENCH_FANOUT_CLIENTS (500), BENCH_FANOUT_GROUP (10), BENCH_FANOUT_RATE (200), BENCH_FANOUT_SECONDS (10).
# Writes bench-results/realtime-fanout.json. Exit 0 when measured, non-zero when it could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/realtime-lib.sh"
bench_init realtime-fanout "${1:-}" curl

CLIENTS="${BENCH_FANOUT_CLIENTS:-500}"
GROUP="${BENCH_FANOUT_GROUP:-10}"
RATE="${BENCH_FANOUT_RATE:-200}"
SECONDS_RUN="${BENCH_FANOUT_SECONDS:-10}"
PASSWORD="bench password $(date +%s)"

DATA="$BENCH_TMP/data-fanout"
realtime_seed "$DATA" "$PASSWORD"
# Cheap hashes: the benchmark logs 500 users in; one address holds 500+ connections.
bench_start_sgem fanout "" -- --bench-module --password-hash-log-n 10 --max-connections-per-address 0 \
  --password-hash-per-client 64 --password-hash-queue 1024

cd "$BENCH_DIR"
"$BENCH_PYTHON" realtime-fanout.py "$SGEM_PORT" "$PASSWORD" journal "$CLIENTS" "$GROUP" "$RATE" "$SECONDS_RUN" \
  >"$BENCH_TMP/journal.json" || bench_fail "the journal fan-out run failed"
bench_check_alive "$SGEM_PID" realtime-fanout "$SGEM_LOG"
chats_status="$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$SGEM_PORT/api/v1/chats")"
if [ "$chats_status" != 404 ] && [ "$chats_status" != 405 ]; then
  # A second set of users: the run creates fan0… again otherwise.
  bench_stop_sgem "$SGEM_PID" realtime-fanout "$SGEM_LOG"
  realtime_seed "$DATA" "$PASSWORD"
  bench_start_sgem fanout "" -- --bench-module --password-hash-log-n 10 --max-connections-per-address 0 \
    --password-hash-per-client 64 --password-hash-queue 1024
  "$BENCH_PYTHON" realtime-fanout.py "$SGEM_PORT" "$PASSWORD" messages "$CLIENTS" "$GROUP" "$RATE" "$SECONDS_RUN" \
    >"$BENCH_TMP/messages.json" || bench_fail "the messages fan-out run failed"
  bench_check_alive "$SGEM_PID" realtime-fanout "$SGEM_LOG"
else
  echo "realtime-fanout: note: POST /api/v1/chats answers $chats_status: messaging is not there yet, journal mode only" >&2
fi
bench_stop_sgem "$SGEM_PID" realtime-fanout "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$BENCH_TMP" <<'PY'
import json, os, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, row, verdict, write_result

results_dir, tmp = sys.argv[2], sys.argv[3]
runs, rows, anomalies = {}, [], []
for mode in ("journal", "messages"):
    path = os.path.join(tmp, f"{mode}.json")
    if not os.path.exists(path):
        continue
    r = runs[mode] = json.load(open(path))
    clean = r["lost"] == 0 and r["doubled"] == 0 and r["stray"] == 0 and r["errors"] == 0
    label = (f"fan-out ({mode}), {r['clients']} clients in groups of {r['group']}, {r['rate']} sends/s for {r['seconds']} s: "
             f"p99 201 → delivery")
    rows.append(row(label, r["p99_from_201_ms"], f"send → delivery p99 {fmt(r['p99_from_send_ms'])} ms", None,
                    "< 100 ms, none lost or doubled", clean and r["p99_from_201_ms"] is not None and r["p99_from_201_ms"] < 100, "ms"))
    if not clean:
        anomalies.append(f"{mode}: lost {r['lost']}, doubled {r['doubled']}, stray {r['stray']}, errors {r['errors']} "
                         f"of {r['expected']} deliveries")
write_result(results_dir, "realtime-fanout", {"runs": runs, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows)})
for a in anomalies:
    print(f"realtime-fanout: note: {a}", file=sys.stderr)
for mode, r in runs.items():
    print(f"realtime-fanout ({mode}): {verdict(rows)}  p50 {fmt(r['p50_from_201_ms'])} ms, p99 {fmt(r['p99_from_201_ms'])} ms, "
          f"max {fmt(r['max_from_201_ms'])} ms from the 201; {r['delivered']:,} of {r['expected']:,} delivered, "
          f"{r['lost']} lost, {r['doubled']} doubled, {r['stray']} stray, {r['errors']} send errors; "
          f"server lag (recorded → handed to sockets) mean {fmt(r['server_lag']['mean_ms'])} ms, "
          f"{r['server_lag']['over_100ms']} of {r['server_lag']['events']} events over 100 ms")
PY
