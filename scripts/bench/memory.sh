#!/usr/bin/env bash
# Resident memory: sgem-server's VmRSS idle (after start and a few requests), target < 30 MiB;
# then with 1,000 idle keep-alive connections open (each has sent one GET /healthz and read the
# answer), target: growth < 16 MiB. nginx (one worker; master + worker RSS) holds the same
# connections in the same run as context, without a target.
#
# usage: scripts/bench/memory.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/memory.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init memory "${1:-}" nginx curl

CONNECTIONS="${BENCH_IDLE_CONNECTIONS:-1000}"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((CONNECTIONS + 256)) ] ||
  bench_fail "open-file limit $(ulimit -n) is too low for $CONNECTIONS connections"

# 1,000 connections from one address: past the per-address default (256) on purpose.
bench_start_sgem memory "" -- --max-connections-per-address 0
sgem="$("$BENCH_PYTHON" "$BENCH_DIR/idle_conns.py" "$SGEM_PORT" "$CONNECTIONS" "$SGEM_PID")" ||
  bench_fail "holding $CONNECTIONS connections to sgem-server failed"
bench_check_alive "$SGEM_PID" memory "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" memory "$SGEM_LOG"

bench_start_nginx ""
nginx="$("$BENCH_PYTHON" "$BENCH_DIR/idle_conns.py" "$NGINX_PORT" "$CONNECTIONS" "$NGINX_PID" "$(bench_nginx_worker)")" ||
  bench_fail "holding $CONNECTIONS connections to nginx failed"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$sgem" "$nginx" "$CONNECTIONS" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, s, n, count = sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
mib = lambda kib: kib / 1024
anomalies = []
for name, m in (("sgem", s), ("nginx", n)):
    if m["opened"] != count or m["still_open"] != m["opened"]:
        anomalies.append(f"{name}: {m['opened']} of {count} connections opened, {m['still_open']} still open "
                         f"at the measurement; errors {m['errors']}")
# The delta only means something when the server really held every connection.
held = s["opened"] == count and s["still_open"] == count
rows = [
    row("idle RSS after start + a few requests", mib(s["idle_kib"]), mib(n["idle_kib"]),
        ratio(s["idle_kib"], n["idle_kib"]), "< 30 MiB", mib(s["idle_kib"]) < 30, "MiB"),
    row(f"RSS growth with {count:,} idle keep-alive conns", mib(s["delta_kib"]), mib(n["delta_kib"]),
        ratio(s["delta_kib"], n["delta_kib"]), "< 16 MiB", held and mib(s["delta_kib"]) < 16, "MiB"),
]
write_result(results_dir, "memory", {
    "config": {"connections": count, "reference": "nginx worker_processes 1 (master + worker RSS)"},
    "sgem": s, "nginx": n, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"memory: note: {a}", file=sys.stderr)
print(f"memory: {verdict(rows)}  sgem idle {fmt(mib(s['idle_kib']))} MiB (target < 30), "
      f"+{fmt(mib(s['delta_kib']))} MiB for {s['still_open']:,} conns (target < 16); "
      f"nginx idle {fmt(mib(n['idle_kib']))} MiB, +{fmt(mib(n['delta_kib']))} MiB")
PY
