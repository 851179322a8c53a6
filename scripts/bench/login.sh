#!/usr/bin/env bash
# Logins with the production password hash (scrypt N=2^17, r=8, p=1) from 8 concurrent
# keep-alive clients for ~10 s, and GET /api/v1/me with a bearer token (wrk -c8) measured alone
# and again while those logins run. Hashing runs on dedicated threads, so the target is:
# p99 of /me during the logins < 2 × its p99 alone. Logins/s is recorded.
#
# usage: scripts/bench/login.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/login.json. Exit 0 when measured (the result line says PASS or FAIL),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init login "${1:-}" wrk curl

CLIENTS=8
LOGIN_SECONDS="${BENCH_LOGIN_SECONDS:-10}"
DURATION="${BENCH_DURATION:-8}"
PASSWORD="bench password $(date +%s)"

# Production hash parameters: --password-hash-log-n is left at its default (17).
bench_start_sgem login "" --
DATA="$BENCH_TMP/data-login"
echo "$PASSWORD" | "$BENCH_BIN" admin create-user --data-dir "$DATA" --log-level warning \
  --username bench --email bench@example.com --role admin --password-stdin >/dev/null ||
  bench_fail "admin create-user failed"
TOKEN="$(curl -fsS --max-time 10 -H 'Content-Type: application/json' \
  -d "{\"login\":\"bench\",\"password\":\"$PASSWORD\"}" "http://127.0.0.1:$SGEM_PORT/api/v1/auth/login" |
  "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["token"])')" || bench_fail "login failed"
ME_URL="http://127.0.0.1:$SGEM_PORT/api/v1/me"
curl -fsS --max-time 2 -H "Authorization: Bearer $TOKEN" "$ME_URL" >/dev/null || bench_fail "GET /api/v1/me failed"

# Warm-up, then /me alone.
bench_wrk "$BENCH_TMP/warm.txt" wrk -t2 -c"$CLIENTS" -d2s -H "Authorization: Bearer $TOKEN" "$ME_URL" >/dev/null
alone="$(bench_wrk "$BENCH_TMP/alone.txt" wrk -t2 -c"$CLIENTS" -d"${DURATION}s" --latency -H "Authorization: Bearer $TOKEN" "$ME_URL")"
bench_check_alive "$SGEM_PID" login "$SGEM_LOG"

# Logins for LOGIN_SECONDS; /me measured inside that window (starting 1 s in).
"$BENCH_PYTHON" "$BENCH_DIR/login_load.py" "$SGEM_PORT" bench "$PASSWORD" "$CLIENTS" "$LOGIN_SECONDS" >"$BENCH_TMP/logins.json" &
LOAD_PID=$!
bench_track "$LOAD_PID"
sleep 1
during="$(bench_wrk "$BENCH_TMP/during.txt" wrk -t2 -c"$CLIENTS" -d"$((LOGIN_SECONDS - 2))s" --latency -H "Authorization: Bearer $TOKEN" "$ME_URL")"
wait "$LOAD_PID" || bench_fail "the login load failed"
bench_check_alive "$SGEM_PID" login "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" login "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$BENCH_TMP/logins.json" "$alone" "$during" "$CLIENTS" "$(nproc)" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir = sys.argv[2]
logins = json.load(open(sys.argv[3]))
alone, during = json.loads(sys.argv[4]), json.loads(sys.argv[5])
clients, cpus = int(sys.argv[6]), int(sys.argv[7])
p99_ratio = ratio(during.get("p99_ms"), alone.get("p99_ms"))
rows = [
    row(f"logins/s (scrypt N=2^17, {clients} clients, {cpus} CPUs)", logins["logins_per_s"], "—", None, "— (recorded)", None),
    row("GET /me p99 during logins vs alone", during.get("p99_ms"), alone.get("p99_ms"), p99_ratio, "< 2 × alone",
        p99_ratio is not None and p99_ratio < 2.0, "ms"),
]
problems = []
if logins["failures"]:
    problems.append(f"{logins['failures']} failed logins")
for name, w in (("alone", alone), ("during", during)):
    if w["non_2xx"] or sum(w["socket_errors"].values()):
        problems.append(f"/me {name}: non-2xx {w['non_2xx']}, socket errors {w['socket_errors']}")
result = verdict(rows) if not problems else "FAIL"
write_result(results_dir, "login", {
    "config": {"login_clients": clients, "me_connections": clients, "hash": "scrypt N=2^17 r=8 p=1", "cpus": cpus},
    "logins": logins, "me_alone": alone, "me_during_logins": during, "p99_ratio": p99_ratio,
    "problems": problems, "rows": rows, "result": result,
})
print(f"login: {result}: {fmt(logins['logins_per_s'])} logins/s; GET /me p99 {fmt(alone.get('p99_ms'))} ms alone, "
      f"{fmt(during.get('p99_ms'))} ms during logins ({fmt(p99_ratio)}×, target < 2×); "
      f"/me {fmt(alone['rps'])} req/s alone, {fmt(during['rps'])} during" + (f"; {'; '.join(problems)}" if problems else ""))
PY
