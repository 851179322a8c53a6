#!/usr/bin/env bash
# GET /healthz over keep-alive, 64 connections: sgem-server (one event loop) against nginx
# (one worker), both pinned to CPU 0, wrk pinned to CPU 1. Each logs every request as it does
# by default: sgem-server at its default log level (info: one access line per request) with
# stderr redirected to a file, nginx with its access log written to a file (default combined
# format). Two alternating rounds, each side's best counts. Target: sgem ≥ 0.9 × nginx
# requests/s; p99 latency recorded for both. The log line counts are checked against the
# requests served (a server that silently stopped logging would not be a fair comparison).
#
# usage: scripts/bench/healthz.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/healthz.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init healthz "${1:-}" wrk nginx taskset curl

SERVER_CPU=0
CLIENT_CPU=1
ROUNDS="${BENCH_ROUNDS:-2}"
DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
[ "$(nproc --all)" -ge 2 ] || bench_fail "needs 2 CPUs (server on CPU 0, wrk on CPU 1)"

BENCH_SGEM_LOG_LEVEL=default bench_start_sgem healthz "$SERVER_CPU" -- --event-loops 1
body="$(curl -fsS --max-time 2 "http://127.0.0.1:$SGEM_PORT/healthz")" ||
  bench_fail "sgem-server GET /healthz failed"
[ "$body" = '{"status":"ok"}' ] || echo "healthz: note: sgem-server answered $body" >&2
bench_start_nginx "$SERVER_CPU" access-log

# load SIDE PORT ROUND: warm-up, then the measured run; prints the parsed JSON.
load() {
  local side="$1" port="$2" round="$3" url
  url="http://127.0.0.1:$port/healthz"
  bench_wrk "$BENCH_TMP/warm-$side-$round.txt" \
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "$url" >/dev/null
  bench_wrk "$BENCH_TMP/wrk-$side-$round.txt" \
    taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$url"
}

runs="$BENCH_TMP/runs.jsonl"
: >"$runs"
for ((round = 1; round <= ROUNDS; round++)); do
  result="$(load sgem "$SGEM_PORT" "$round")"
  bench_check_alive "$SGEM_PID" healthz "$SGEM_LOG"
  echo "{\"side\":\"sgem\",\"round\":$round,\"wrk\":$result}" >>"$runs"
  result="$(load nginx "$NGINX_PORT" "$round")"
  echo "{\"side\":\"nginx\",\"round\":$round,\"wrk\":$result}" >>"$runs"
done
bench_stop_sgem "$SGEM_PID" healthz "$SGEM_LOG"
sgem_log_lines="$(grep -c 'msg=request' "$SGEM_LOG" || true)"
nginx_log_lines="$(grep -c 'GET /healthz' "$NGINX_ACCESS_LOG" || true)"
sgem_dropped="$({ grep -o 'log.dropped=[0-9]*' "$SGEM_LOG" || true; } | awk -F= '{ n += $2 } END { print n + 0 }')"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$runs" "$CONNECTIONS" "$DURATION" \
  "$sgem_log_lines" "$nginx_log_lines" "$sgem_dropped" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, runs_path = sys.argv[2], sys.argv[3]
connections, duration = int(sys.argv[4]), int(sys.argv[5])
log_lines = {"sgem": int(sys.argv[6]), "nginx": int(sys.argv[7])}
sgem_dropped = int(sys.argv[8])
runs = [json.loads(line) for line in open(runs_path)]
for r in runs:
    w = r["wrk"]
    # Only successful answers count: wrk's Requests/sec includes errors.
    w["ok_rps"] = (w["requests"] - w["non_2xx"]) / w["duration_s"]

def best(side):
    return max((r for r in runs if r["side"] == side), key=lambda r: r["wrk"]["ok_rps"])["wrk"]

s, n = best("sgem"), best("nginx")
rps_ratio = ratio(s["ok_rps"], n["ok_rps"])
rows = [
    row("healthz req/s (1 core, 64 keep-alive conns)", s["ok_rps"], n["ok_rps"], rps_ratio,
        "≥ 0.9 × nginx", rps_ratio >= 0.9),
    row("healthz p99 latency (best run)", s.get("p99_ms"), n.get("p99_ms"), ratio(s.get("p99_ms"), n.get("p99_ms")),
        "— (recorded)", None, "ms"),
]
anomalies = []
# Warm-ups log too, so each log holds at least one line per measured request.
for side in ("sgem", "nginx"):
    measured = sum(r["wrk"]["requests"] for r in runs if r["side"] == side)
    if log_lines[side] < measured:
        anomalies.append(f"{side} logged {log_lines[side]} request lines for {measured} measured requests")
if sgem_dropped:
    anomalies.append(f"sgem dropped {sgem_dropped} log lines (its log writer fell behind the disk)")
for r in runs:
    w = r["wrk"]
    errors = sum(w["socket_errors"].values())
    if w["non_2xx"] or errors:
        anomalies.append(f"{r['side']} round {r['round']}: non-2xx {w['non_2xx']}, socket errors {w['socket_errors']}")
write_result(results_dir, "healthz", {
    "config": {"connections": connections, "duration_s": duration, "server_cpu": 0, "wrk_cpu": 1,
               "sgem": "--event-loops 1, default log level, stderr to a file",
               "reference": "nginx worker_processes 1, access_log to a file"},
    "log_lines": log_lines, "sgem_log_lines_dropped": sgem_dropped,
    "sgem_rps": s["ok_rps"], "nginx_rps": n["ok_rps"], "ratio": rps_ratio,
    "sgem_p99_ms": s.get("p99_ms"), "nginx_p99_ms": n.get("p99_ms"),
    "runs": runs, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"healthz: note: {a}", file=sys.stderr)
print(f"healthz: {verdict(rows)}  sgem {fmt(s['ok_rps'])} req/s (p99 {fmt(s.get('p99_ms'))} ms) vs "
      f"nginx {fmt(n['ok_rps'])} req/s (p99 {fmt(n.get('p99_ms'))} ms) = {rps_ratio:.2f}× (target ≥ 0.9×), "
      f"both logging every request ({log_lines['sgem']} / {log_lines['nginx']} lines)")
PY
