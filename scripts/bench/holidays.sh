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
# The same on PostgreSQL in the same run (a throwaway cluster with fsync on, scripts/pg-throwaway.sh)
# unless BENCH_POSTGRES=0.
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

# measure BACKEND: one server on a fresh database of BACKEND (sqlite, or postgresql on the
# throwaway cluster), seeded, then healthz, calendar and summary; prints their JSON on one line.
measure() {
  local backend="$1" label="holidays-$1"
  if [ "$backend" = postgresql ]; then
    "$PSQL" "$PG_URL" -tAqc "CREATE DATABASE bench_holidays" >/dev/null || bench_fail "cannot create the database"
    export SGEM_DATABASE_URL="${PG_URL%%/sgem\?*}/bench_holidays?${PG_URL#*\?}"
  else
    unset SGEM_DATABASE_URL
  fi
  bench_start_sgem "$label" "$SERVER_CPU" -- --event-loops 1 --password-hash-log-n 10
  DATA="$BENCH_TMP/data-$label"
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
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  calendar="$(bench_load calendar "$CALENDAR_URL" -H "$AUTH")"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  summary="$(bench_load summary "$SUMMARY_URL" -H "$AUTH")"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  bench_stop_sgem "$SGEM_PID" "$label" "$SGEM_LOG"
  echo "{\"backend\":\"$backend\",\"absences\":$absences,\"healthz\":$healthz,\"calendar\":$calendar,\"summary\":$summary}"
}

backends=(sqlite)
if [ "${BENCH_POSTGRES:-1}" = 1 ]; then
  PSQL="$(command -v psql || ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)"
  [ -x "$PSQL" ] || bench_fail "psql is not installed (apt install postgresql), or run with BENCH_POSTGRES=0"
  export SGEM_PG_STATE="$BENCH_TMP/pg.dir"
  PG_URL="$(SGEM_PG_DURABLE=1 "$REPO_ROOT/scripts/pg-throwaway.sh" start)" || bench_fail "cannot start PostgreSQL"
  trap '"$REPO_ROOT/scripts/pg-throwaway.sh" stop >/dev/null 2>&1 || true; bench_cleanup' EXIT
  backends+=(postgresql)
fi
for backend in "${backends[@]}"; do measure "$backend" >"$BENCH_TMP/run-$backend.json"; done

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$PEOPLE" "$BENCH_TMP"/run-*.json <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import beside_healthz, fmt, write_result

results_dir, people = sys.argv[2], int(sys.argv[3])
runs = [json.load(open(p)) for p in sys.argv[4:]]
runs.sort(key=lambda r: r["backend"] != "sqlite")
rows, anomalies, result = [], [], {"config": {"people": people, "connections": 64, "server_cpu": 0, "wrk_cpu": 1,
                                              "sgem": "--event-loops 1, log level warning",
                                              "postgresql": "Debian's packages, fsync and synchronous_commit on, Unix socket"}}
for r in runs:
    b, absences = r["backend"], r["absences"]
    got, odd = beside_healthz(r["healthz"], [(f"{b}: team calendar, a month ({people:,} people, {absences:,} absences)", r["calendar"]),
                                            (f"{b}: employee holiday summary", r["summary"])])
    rows += got
    anomalies += odd
    result[b] = r
    print(f"holidays ({b}): {people:,} people; calendar (a month, {absences:,} absences): {fmt(r['calendar']['ok_rps'])} req/s "
          f"(p99 {fmt(r['calendar'].get('p99_ms'))} ms); summary: {fmt(r['summary']['ok_rps'])} req/s (p99 {fmt(r['summary'].get('p99_ms'))} ms); "
          f"healthz {fmt(r['healthz']['ok_rps'])} req/s (p99 {fmt(r['healthz'].get('p99_ms'))} ms)")
if len(runs) == 2:
    s, p = runs[0]["calendar"]["ok_rps"], runs[1]["calendar"]["ok_rps"]
    print(f"holidays: calendar PostgreSQL vs SQLite: {p / s:.2f}×")
result.update({"anomalies": anomalies, "rows": rows})
write_result(results_dir, "holidays", result)
for a in anomalies:
    print(f"holidays: note: {a}", file=sys.stderr)
PY
