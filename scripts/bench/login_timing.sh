#!/usr/bin/env bash
# Whether a failed login tells an unknown account from a known one by its time. Accounts are
# made on the command line at the default cost (scrypt N=2^17) while the server runs at a lower
# one (N=2^12), the case where the dummy hash used to be cheaper than the stored hashes. Medians
# of failed logins, unknown vs known-with-a-wrong-password, measured interleaved in the same run;
# the target is a ratio unknown/known between 0.8 and 1.25.
#
# usage: scripts/bench/login_timing.sh [PATH_TO_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/login_timing.json. Exit 0 when measured (PASS or FAIL), non-zero when the
# benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init login_timing "${1:-}" curl

USERS=(ann bob cid)
PER_USER="${BENCH_LOGIN_TIMING_PER_USER:-4}"   # under the throttle's 5 failures per account

bench_start_sgem login_timing "" -- --password-hash-log-n 12 --trusted-proxy 127.0.0.1
DATA="$BENCH_TMP/data-login_timing"
for u in "${USERS[@]}"; do
  echo "password of $u" | "$BENCH_BIN" admin create-user --data-dir "$DATA" --log-level warning \
    --username "$u" --email "$u@example.com" --password-stdin >/dev/null || bench_fail "admin create-user $u failed"
done
users="$(IFS=,; echo "${USERS[*]}")"
"$BENCH_PYTHON" "$BENCH_DIR/login_timing.py" "$SGEM_PORT" "$users" "$PER_USER" >"$BENCH_TMP/timing.json" ||
  bench_fail "the timed logins failed"
bench_check_alive "$SGEM_PID" login_timing "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" login_timing "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$BENCH_TMP/timing.json" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, row, verdict, write_result

results_dir = sys.argv[2]
t = json.load(open(sys.argv[3]))
r = t["unknown_over_known"]
rows = [row("failed login median, unknown / known account (stored N=2^17, server N=2^12)",
            t["unknown_ms"], t["known_ms"], r, "0.8–1.25", 0.8 <= r <= 1.25, "ms")]
result = verdict(rows)
write_result(results_dir, "login_timing", {"config": {"stored": "scrypt N=2^17", "server": "scrypt N=2^12"},
                                           "timing": t, "rows": rows, "result": result})
print(f"login_timing: {result}: unknown {fmt(t['unknown_ms'])} ms, known with a wrong password {fmt(t['known_ms'])} ms "
      f"(median of {t['samples']} each): ratio {fmt(r)} (target 0.8–1.25)")
PY
