#!/usr/bin/env bash
# A slow reader catching up (issue 15, item 8): 4,000 events of ~4 KB (16 MB) recorded while the
# user is away, then replayed with ?since= to a reader taking ~3 MB/s through a small receive
# buffer. Target: all 4,000, in order. 16 MB rather than 8: the kernel's socket buffers alone
# (tcp_wmem up to 4 MiB) can hide a missing back-pressure at 8. A measurement, not in run-all.
#
# usage: scripts/bench/realtime-slow-reader.sh [PATH_TO_RELEASE_BINARY]
# Env: BENCH_SLOW_COUNT (4000), BENCH_SLOW_SIZE (4000), BENCH_SLOW_RATE (3000000 bytes/s).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/realtime-lib.sh"
bench_init realtime-slow-reader "${1:-}" curl
PASSWORD="bench password $(date +%s)"
DATA="$BENCH_TMP/data-slow"
realtime_seed "$DATA" "$PASSWORD"
bench_start_sgem slow "" -- --bench-module --password-hash-log-n 10
cd "$BENCH_DIR"
"$BENCH_PYTHON" realtime-slow-reader.py "$SGEM_PORT" "$PASSWORD" "${BENCH_SLOW_COUNT:-4000}" "${BENCH_SLOW_SIZE:-4000}" \
  "${BENCH_SLOW_RATE:-3000000}" || bench_fail "the slow reader run failed"
bench_stop_sgem "$SGEM_PID" realtime-slow-reader "$SGEM_LOG"
