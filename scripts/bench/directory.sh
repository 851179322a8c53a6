#!/usr/bin/env bash
# The team directory with 5,000 people (accented names, positions; one in ten inactive):
# GET /api/v1/users?q=<prefix>&limit=50 (search, accent- and case-insensitive) and
# GET /api/v1/users?limit=50 (the first page the console shows), with a bearer token, beside
# GET /healthz in the same run on the same server. sgem-server runs pinned to CPU 0 with one event
# loop, wrk on CPU 1, 64 keep-alive connections, 2 s warm-up then 8 s each. The ratio of each
# directory figure to healthz says what the directory query costs over the bare HTTP path.
#
# Seeding goes through the API (directory_seed.py: POST /admin/users and PATCH, 8 connections),
# so the folded keys and search words are the server's own; the server runs with a cheap password
# hash (--password-hash-log-n 10) for that, which the measured requests never use.
#
# usage: scripts/bench/directory.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/directory.json. Exit 0 when measured (figures are recorded, no target),
# non-zero when the benchmark could not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init directory "${1:-}" wrk taskset curl

SERVER_CPU=0
CLIENT_CPU=1
PEOPLE="${BENCH_PEOPLE:-5000}"
DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
QUERY="${BENCH_QUERY:-gar}"
PASSWORD="bench password $(date +%s)"
[ "$(nproc --all)" -ge 2 ] || bench_fail "needs 2 CPUs (server on CPU 0, wrk on CPU 1)"

bench_start_sgem directory "$SERVER_CPU" -- --event-loops 1 --password-hash-log-n 10
DATA="$BENCH_TMP/data-directory"
BASE="http://127.0.0.1:$SGEM_PORT"
bench_admin "$DATA" "$PASSWORD" bench "Ángel Admin"
TOKEN="$(bench_login "$BASE" bench "$PASSWORD")" || bench_fail "login failed"
AUTH="Authorization: Bearer $TOKEN"
seed_start=$SECONDS
"$BENCH_PYTHON" "$BENCH_DIR/directory_seed.py" "$BASE" "$TOKEN" "$((PEOPLE - 1))" >/dev/null || bench_fail "seeding failed"
echo "directory: seeded $PEOPLE people through the API in $((SECONDS - seed_start)) s" >&2
SEARCH_URL="$BASE/api/v1/users?q=$QUERY&limit=50"
LIST_URL="$BASE/api/v1/users?limit=50"
# What the two directory requests answer, for the record (and a check that seeding worked).
counts="$(curl -fsS --max-time 5 -H "$AUTH" "$SEARCH_URL" | "$BENCH_PYTHON" -c '
import json, sys
v = json.load(sys.stdin)
print(len(v["items"]), v["total"], v["active"], v["items"][0]["displayName"] if v["items"] else "")')" || bench_fail "search failed"
read -r search_items total active _ <<<"$counts"
[ "$total" -eq "$PEOPLE" ] || bench_fail "expected $PEOPLE people, the directory has $total"
[ "$search_items" -gt 0 ] || bench_fail "q=$QUERY found nobody"

healthz="$(bench_load healthz "$BASE/healthz")"
bench_check_alive "$SGEM_PID" directory "$SGEM_LOG"
search="$(bench_load search "$SEARCH_URL" -H "$AUTH")"
bench_check_alive "$SGEM_PID" directory "$SGEM_LOG"
list="$(bench_load list "$LIST_URL" -H "$AUTH")"
bench_check_alive "$SGEM_PID" directory "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" directory "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$healthz" "$search" "$list" "$PEOPLE" "$active" "$QUERY" "$search_items" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import beside_healthz, fmt, ratio, write_result

results_dir = sys.argv[2]
healthz, search, lst = (json.loads(a) for a in sys.argv[3:6])
people, active, query, found = int(sys.argv[6]), int(sys.argv[7]), sys.argv[8], int(sys.argv[9])
rows, anomalies = beside_healthz(healthz, [(f"directory search ?q={query}&limit=50 ({people:,} people)", search),
                                           ("directory first page ?limit=50", lst)])
write_result(results_dir, "directory", {
    "config": {"people": people, "active": active, "query": query, "query_matches_on_first_page": found,
               "connections": 64, "server_cpu": 0, "wrk_cpu": 1, "sgem": "--event-loops 1, log level warning"},
    "healthz": healthz, "search": search, "list": lst, "anomalies": anomalies, "rows": rows,
})
for a in anomalies:
    print(f"directory: note: {a}", file=sys.stderr)
print(f"directory: {people:,} people; search q={query}: {fmt(search['ok_rps'])} req/s (p99 {fmt(search.get('p99_ms'))} ms); "
      f"first page: {fmt(lst['ok_rps'])} req/s (p99 {fmt(lst.get('p99_ms'))} ms); healthz {fmt(healthz['ok_rps'])} req/s "
      f"(p99 {fmt(healthz.get('p99_ms'))} ms)")
print(f"directory: ratio to healthz: search {ratio(search['ok_rps'], healthz['ok_rps']):.2f}×, "
      f"first page {ratio(lst['ok_rps'], healthz['ok_rps']):.2f}×")
PY
