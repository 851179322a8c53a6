#!/usr/bin/env bash
# The team calendar of a 500-person company over a month and an employee's holiday summary:
# GET /api/v1/holidays/calendar?from=Y-06-01&to=Y-06-30 (who is away, with display names) and
# GET /api/v1/holidays?year=Y (summary and requests) with an employee's bearer token, beside
# GET /healthz in the same run on the same server. sgem-server runs pinned to CPU 0 with one event
# loop, wrk on CPU 1, 64 keep-alive connections, 2 s warm-up then 8 s each.
#
# Seeding goes through the API (holidays_seed.py: 500 employees filing two or three June requests
# each, about two in three approved, 8 connections); the server runs with a cheap password hash
# (--password-hash-log-n 10) for the logins, which the measured requests never use.
#
# usage: scripts/bench/holidays.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/holidays.json. Exit 0 when measured (figures are recorded, no target),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init holidays "${1:-}" wrk taskset curl

SERVER_CPU=0
CLIENT_CPU=1
PEOPLE="${BENCH_PEOPLE:-500}"
DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
YEAR="$(($(date +%Y) + 1))"
PASSWORD="bench password $(date +%s)"
[ "$(nproc --all)" -ge 2 ] || bench_fail "needs 2 CPUs (server on CPU 0, wrk on CPU 1)"

bench_start_sgem holidays "$SERVER_CPU" -- --event-loops 1 --password-hash-log-n 10
DATA="$BENCH_TMP/data-holidays"
BASE="http://127.0.0.1:$SGEM_PORT"
bench_admin "$DATA" "$PASSWORD"
ADMIN="$(bench_login "$BASE" bench "$PASSWORD")" || bench_fail "admin login failed"
seed_start=$SECONDS
EMPLOYEE="$("$BENCH_PYTHON" "$BENCH_DIR/holidays_seed.py" "$BASE" "$ADMIN" "$PEOPLE" "$YEAR")" || bench_fail "seeding failed"
echo "holidays: seeded $PEOPLE people and their June requests through the API in $((SECONDS - seed_start)) s" >&2
TOKEN="$(bench_login "$BASE" "$EMPLOYEE" "bench password 1")" || bench_fail "employee login failed"
AUTH="Authorization: Bearer $TOKEN"
CALENDAR_URL="$BASE/api/v1/holidays/calendar?from=$YEAR-06-01&to=$YEAR-06-30"
SUMMARY_URL="$BASE/api/v1/holidays?year=$YEAR"
# What the two requests answer, for the record (and a check that seeding worked).
absences="$(curl -fsS --max-time 5 -H "$AUTH" "$CALENDAR_URL" | "$BENCH_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" ||
  bench_fail "calendar failed"
own="$(curl -fsS --max-time 5 -H "$AUTH" "$SUMMARY_URL" | "$BENCH_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["requests"]))')" ||
  bench_fail "summary failed"
[ "$absences" -gt "$PEOPLE" ] || bench_fail "expected more than $PEOPLE approved absences in June, the calendar has $absences"
[ "$own" -gt 0 ] || bench_fail "the employee has no requests"

healthz="$(bench_load healthz "$BASE/healthz")"
bench_check_alive "$SGEM_PID" holidays "$SGEM_LOG"
calendar="$(bench_load calendar "$CALENDAR_URL" -H "$AUTH")"
bench_check_alive "$SGEM_PID" holidays "$SGEM_LOG"
summary="$(bench_load summary "$SUMMARY_URL" -H "$AUTH")"
bench_check_alive "$SGEM_PID" holidays "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" holidays "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$healthz" "$calendar" "$summary" "$PEOPLE" "$absences" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import beside_healthz, fmt, write_result

results_dir = sys.argv[2]
healthz, calendar, summary = (json.loads(a) for a in sys.argv[3:6])
people, absences = int(sys.argv[6]), int(sys.argv[7])
rows, anomalies = beside_healthz(healthz, [(f"team calendar, a month ({people:,} people, {absences:,} absences)", calendar),
                                           ("employee holiday summary", summary)])
write_result(results_dir, "holidays", {
    "config": {"people": people, "june_absences_seen_by_employee": absences, "connections": 64, "server_cpu": 0, "wrk_cpu": 1,
               "sgem": "--event-loops 1, log level warning"},
    "healthz": healthz, "calendar": calendar, "summary": summary, "anomalies": anomalies, "rows": rows,
})
for a in anomalies:
    print(f"holidays: note: {a}", file=sys.stderr)
print(f"holidays: {people:,} people; calendar (a month, {absences:,} absences): {fmt(calendar['ok_rps'])} req/s "
      f"(p99 {fmt(calendar.get('p99_ms'))} ms); summary: {fmt(summary['ok_rps'])} req/s (p99 {fmt(summary.get('p99_ms'))} ms); "
      f"healthz {fmt(healthz['ok_rps'])} req/s (p99 {fmt(healthz.get('p99_ms'))} ms)")
PY
