#!/usr/bin/env bash
# Idle realtime WebSockets: RSS growth of sgem-server holding 2,000 subscribed, idle streams;
# target < 64 KiB each. Reference in the same run: the same server holding 2,000 idle HTTP
# keep-alive connections (scripts/bench/idle_conns.py), so the ratio is what a stream costs
# beyond a plain connection.
#
# usage: scripts/bench/realtime-idle.sh [PATH_TO_RELEASE_BINARY]   (env BENCH_RT_IDLE_CONNECTIONS, default 2000)
# Writes bench-results/realtime-idle.json. Exit 0 when measured, non-zero when it could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/realtime-lib.sh"
bench_init realtime-idle "${1:-}" curl

COUNT="${BENCH_RT_IDLE_CONNECTIONS:-2000}"
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((COUNT + 256)) ] ||
  bench_fail "open-file limit $(ulimit -n) is too low for $COUNT connections"
PASSWORD="bench password $(date +%s)"
realtime_seed "$BENCH_TMP/data-idle" "$PASSWORD"
cd "$BENCH_DIR"
# Each measurement on a fresh process, so neither inherits the other's freed memory.
bench_start_sgem plain "" -- --max-connections-per-address 0
plain="$("$BENCH_PYTHON" idle_conns.py "$SGEM_PORT" "$COUNT" "$SGEM_PID")" || bench_fail "holding $COUNT HTTP connections failed"
bench_check_alive "$SGEM_PID" realtime-idle "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" realtime-idle "$SGEM_LOG"

bench_start_sgem idle "" -- --max-connections-per-address 0 --password-hash-log-n 10
streams="$("$BENCH_PYTHON" realtime-idle.py "$SGEM_PORT" "$PASSWORD" "$SGEM_PID" "$COUNT")" ||
  bench_fail "holding $COUNT streams failed"
bench_check_alive "$SGEM_PID" realtime-idle "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" realtime-idle "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$streams" "$plain" "$COUNT" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, s, p, count = sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), int(sys.argv[5])
held = s["opened"] == count and s["still_open"] == count
per_stream = s["delta_kib"] / max(1, s["opened"])
per_plain = p["delta_kib"] / max(1, p["opened"])
rows = [row(f"RSS per idle realtime stream, {count:,} streams", per_stream, f"{fmt(per_plain)} KiB per idle HTTP keep-alive conn",
            ratio(per_stream, per_plain) if per_plain > 0 else None, "< 64 KiB", held and per_stream < 64, "KiB")]
anomalies = [] if held else [f"{s['opened']} of {count} streams opened, {s['still_open']} still open at the measurement"]
write_result(results_dir, "realtime-idle", {"streams": s, "plain": p, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows)})
for a in anomalies:
    print(f"realtime-idle: note: {a}", file=sys.stderr)
print(f"realtime-idle: {verdict(rows)}  +{fmt(s['delta_kib'] / 1024)} MiB for {s['still_open']:,} streams = {fmt(per_stream)} KiB each "
      f"(target < 64); plain keep-alive {fmt(per_plain)} KiB each")
PY
