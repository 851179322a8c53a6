#!/usr/bin/env bash
# Reading chats: GET /api/v1/chats/{id}/messages?limit=50 (the newest page) on a group of 100,000
# messages, and GET /api/v1/search/messages?q=… over 1,000,000 messages in 200 groups the reader
# is a member of (all of them: the widest search), beside GET /healthz on the same server in the
# same run. The messages are seeded through SQL (messaging-seed.py: the server's own tables,
# then FTS5 'rebuild' of the search index) before the server starts; the history runs with 64
# connections, the search with 4 (it measures latency, cycling through common, rare and prefix
# queries and two-word ones); 2 s warm-up, then 8 s each.
# Targets: history ≥ 8,000 requests/s; search p99 < 50 ms.
#
# usage: scripts/bench/messaging-read.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# BENCH_MESSAGES / BENCH_CHATS / BENCH_BIG_CHAT change the seed. Writes bench-results/messaging-read.json.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
bench_init messaging-read "${1:-}" wrk curl

MESSAGES="${BENCH_MESSAGES:-1000000}"
CHATS="${BENCH_CHATS:-200}"
BIG="${BENCH_BIG_CHAT:-100000}"
DURATION="${BENCH_DURATION:-8}"
WARMUP=2
DATA="$BENCH_TMP/data-read"
mkdir -p "$DATA"
"$BENCH_BIN" migrate --data-dir "$DATA" --log-level warning >/dev/null || bench_fail "migrate failed"
msg_admin "$DATA"
user="$(msg_count "$DATA/sgem.db" "SELECT id FROM accounts_users WHERE username = 'bench'")"
seed="$("$BENCH_PYTHON" "$BENCH_DIR/messaging-seed.py" "$DATA/sgem.db" "$user" "$CHATS" "$MESSAGES" "$BIG")" ||
  bench_fail "seeding failed"
echo "messaging-read: seeded $seed" >&2
chat="$("$BENCH_PYTHON" -c 'import json,sys; print(json.loads(sys.argv[1])["big_chat"])' "$seed")"

# The server reuses the seeded directory (bench_start_sgem's data directory for label "read").
bench_start_sgem read "" -- --password-hash-log-n 10
BASE="http://127.0.0.1:$SGEM_PORT"
TOKEN="$(msg_login "$BASE")"
AUTH="Authorization: Bearer $TOKEN"
HISTORY_URL="$BASE/api/v1/chats/$chat/messages?limit=50"
page="$(curl -fsS --max-time 5 -H "$AUTH" "$HISTORY_URL" | "$BENCH_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" ||
  bench_fail "history request failed"
[ "$page" = 50 ] || bench_fail "the history page held $page messages, not 50"

cat >"$BENCH_TMP/search.lua" <<'LUA'
local queries = {"zeppelin", "reunion", "cafe%20deadline", "ornitorrinco%20equipo", "quasar", "proj", "narval", "manana%20cliente",
                 "budget", "fjord%20team", "xilofono", "tundra%20report"}
local n = 0
function request()
  n = n + 1
  return wrk.format("GET", "/api/v1/search/messages?q=" .. queries[(n % #queries) + 1] .. "&limit=20")
end
LUA
hits="$(curl -fsS --max-time 10 -H "$AUTH" "$BASE/api/v1/search/messages?q=zeppelin&limit=20" |
  "$BENCH_PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" || bench_fail "search request failed"
[ "$hits" -gt 0 ] || bench_fail "searching for zeppelin found nothing"

load() {
  local label="$1" conns="$2" url="$3"
  shift 3
  bench_wrk "$BENCH_TMP/warm-$label.txt" wrk -t1 -c"$conns" -d"${WARMUP}s" "$@" "$url" >/dev/null
  bench_wrk "$BENCH_TMP/wrk-$label.txt" wrk -t1 -c"$conns" -d"${DURATION}s" --latency "$@" "$url"
}
healthz="$(load healthz 64 "$BASE/healthz")"
bench_check_alive "$SGEM_PID" read "$SGEM_LOG"
history="$(load history 64 "$HISTORY_URL" -H "$AUTH")"
bench_check_alive "$SGEM_PID" read "$SGEM_LOG"
search="$(load search 4 "$BASE/" -H "$AUTH" -s "$BENCH_TMP/search.lua")"
bench_check_alive "$SGEM_PID" read "$SGEM_LOG"
bench_stop_sgem "$SGEM_PID" read "$SGEM_LOG"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$healthz" "$history" "$search" "$seed" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir = sys.argv[2]
healthz, history, search, seed = (json.loads(a) for a in sys.argv[3:7])
for w in (healthz, history, search):
    w["ok_rps"] = (w["requests"] - w["non_2xx"]) / w["duration_s"]
anomalies = [f"{name}: non-2xx {w['non_2xx']}, socket errors {w['socket_errors']}"
             for name, w in (("healthz", healthz), ("history", history), ("search", search))
             if w["non_2xx"] or sum(w["socket_errors"].values())]
p99 = search.get("p99_ms")
rows = [
    row(f"history ?limit=50 on a {seed['big_chat_messages']:,}-message chat, req/s (64 conns)", history["ok_rps"],
        f"healthz {fmt(healthz['ok_rps'])}", ratio(history["ok_rps"], healthz["ok_rps"]), "≥ 8,000/s",
        history["ok_rps"] >= 8000 and not history["non_2xx"]),
    row(f"search p99 over {seed['messages']:,} messages in {seed['chats']} chats (4 conns)", p99, healthz.get("p99_ms"),
        ratio(p99, healthz.get("p99_ms")), "< 50 ms", p99 is not None and p99 < 50 and not search["non_2xx"], "ms"),
    row("search req/s (4 conns, context)", search["ok_rps"], "—", None, "— (recorded)", None),
]
write_result(results_dir, "messaging-read", {
    "config": {"seed": seed, "history_connections": 64, "search_connections": 4, "reference": "GET /healthz, same server, same run"},
    "healthz": healthz, "history": history, "search": search, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"messaging-read: note: {a}", file=sys.stderr)
print(f"messaging-read: {verdict(rows)}  history {fmt(history['ok_rps'])} req/s (p99 {fmt(history.get('p99_ms'))} ms, target ≥ 8,000/s); "
      f"search p99 {fmt(p99)} ms (target < 50 ms), {fmt(search['ok_rps'])} req/s; healthz {fmt(healthz['ok_rps'])} req/s")
PY
