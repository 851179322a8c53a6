#!/usr/bin/env bash
# SQLite and PostgreSQL side by side in one run, the same binary and the same load:
#   - message sends: POST /api/v1/chats/{id}/messages, 64 connections, 8 s, into one group
#     (201 only after the commit; stored messages counted in the database afterwards);
#   - history pages: GET /api/v1/chats/{id}/messages?limit=50, 64 connections, 8 s;
#   - search on PostgreSQL over 1,000,000 messages (seeded with SQL after the runs): a common word
#     (1 message in 20) and a rare one, 8 connections, 8 s, p99.
# Runs in the order SQLite, PostgreSQL, PostgreSQL, SQLite (ABBA) and judges the medians.
# PostgreSQL is a cluster of Debian's packages made for the run (scripts/pg-throwaway.sh) with
# its durable defaults: fsync and synchronous_commit on, a Unix socket.
# Targets: PostgreSQL sends ≥ 3,000/s with p99 < 50 ms and ≥ 0.5× SQLite; history ≥ 0.5× SQLite;
# search p99 < 50 ms over 1,000,000 messages.
#
# usage: scripts/bench/postgres.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Writes bench-results/postgres.json. Exit 0 when measured (the line says PASS or FAIL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
bench_init postgres "${1:-}" wrk curl

DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
SEARCH_MESSAGES="${BENCH_SEARCH_MESSAGES:-1000000}"
bench_start_postgres

msg_send_lua "$BENCH_TMP/send.lua" "bench message, plain text with a few words"

# measure LABEL BACKEND: one server on a fresh database, warm-up, sends, then history pages.
measure() {
  local label="$1" backend="$2" storage=() db_url=""
  if [ "$backend" = postgresql ]; then
    pg_value "$PG_URL" "CREATE DATABASE $label" >/dev/null
    db_url="$(pg_url "$label")"
    storage=(--database-url "$db_url")
  fi
  bench_start_sgem "$label" "" -- --password-hash-log-n 10 "${storage[@]}"
  local data="$BENCH_TMP/data-$label" base="http://127.0.0.1:$SGEM_PORT" token chat
  echo "$MSG_PASSWORD" | "$BENCH_BIN" admin create-user --data-dir "$data" "${storage[@]}" --log-level warning --password-hash-log-n 10 \
    --username bench --email bench@example.com --name "Bench Admin" --role admin --password-stdin >/dev/null || bench_fail "create-user failed ($label)"
  token="$(msg_login "$base")"
  chat="$(curl -fsS --max-time 10 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"Bench group"}' "$base/api/v1/chats" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')" ||
    bench_fail "creating the group failed ($label)"
  local url="$base/api/v1/chats/$chat/messages" wrk_args=(-t1 -c"$CONNECTIONS" --timeout 10s -H "Authorization: Bearer $token")
  bench_wrk "$BENCH_TMP/warm-$label.txt" wrk "${wrk_args[@]}" -s "$BENCH_TMP/send.lua" -H 'Content-Type: application/json' -d"${WARMUP}s" "$url" -- warm >/dev/null
  sleep 0.5
  count() {
    if [ "$backend" = postgresql ]; then pg_value "$db_url" "SELECT count(*) FROM messaging_messages"
    else msg_count "$data/sgem.db" "SELECT COUNT(*) FROM messaging_messages"; fi
  }
  local before after sends history
  before="$(count)"
  sends="$(bench_wrk "$BENCH_TMP/send-$label.txt" wrk "${wrk_args[@]}" -s "$BENCH_TMP/send.lua" -H 'Content-Type: application/json' -d"${DURATION}s" --latency "$url" -- measured)"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  sleep 0.5
  after="$(count)"
  history="$(bench_wrk "$BENCH_TMP/history-$label.txt" wrk "${wrk_args[@]}" -d"${DURATION}s" --latency "$url?limit=50")"
  bench_check_alive "$SGEM_PID" "$label" "$SGEM_LOG"
  local search="null"
  if [ "$backend" = postgresql ] && [ "${label: -1}" = 2 ]; then search="$(measure_search "$db_url" "$chat" "$base" "$token")"; fi
  bench_stop_sgem "$SGEM_PID" "$label" "$SGEM_LOG"
  echo "{\"label\":\"$label\",\"backend\":\"$backend\",\"stored\":$((after - before)),\"wrk\":$sends,\"history\":$history,\"search\":$search}"
}

# measure_search DB_URL CHAT BASE TOKEN: seeds the chat to SEARCH_MESSAGES messages with SQL
# (PostgreSQL computes each one's search vector), then times two searches.
measure_search() {
  local db_url="$1" chat="$2" base="$3" token="$4" have
  have="$(pg_value "$db_url" "SELECT count(*) FROM messaging_messages")"
  pg_value "$db_url" "INSERT INTO messaging_messages (chat_id, sender_id, body, created_at)
    SELECT $chat, 1, 'Mensaje ' || i || ' sobre ' || (ARRAY['la reunión del lunes','el informe trimestral','las vacaciones de agosto',
      'el cliente nuevo','la oficina','el presupuesto','la factura pendiente','el proyecto','la formación','el almacén',
      'la entrega','el servidor','la nómina','el viaje','la auditoría','el contrato','la campaña','el inventario',
      'la revisión','el pedido'])[1 + i % 20] || CASE WHEN i % 100000 = 7 THEN ' zarzaparrilla' ELSE '' END,
      1700000000000 + i
    FROM generate_series(1, $SEARCH_MESSAGES - $have) AS i" >/dev/null
  # After a bulk load, as PostgreSQL's manual advises: what autovacuum does over days of ordinary
  # sends (the GIN index's pending list merged, the visibility map set, statistics).
  pg_value "$db_url" "VACUUM (ANALYZE) messaging_messages" >/dev/null
  local total common rare
  total="$(pg_value "$db_url" "SELECT count(*) FROM messaging_messages")"
  local args=(-t1 -c8 --timeout 10s -H "Authorization: Bearer $token" -d"${DURATION}s" --latency)
  common="$(bench_wrk "$BENCH_TMP/search-common.txt" wrk "${args[@]}" "$base/api/v1/search/messages?q=informe&limit=20")"
  rare="$(bench_wrk "$BENCH_TMP/search-rare.txt" wrk "${args[@]}" "$base/api/v1/search/messages?q=zarzapa&limit=20")"
  echo "{\"messages\":$total,\"common\":$common,\"rare\":$rare}"
}

runs="$BENCH_TMP/runs"
measure sqlite1 sqlite >"$runs.1"
measure postgresql1 postgresql >"$runs.2"
measure postgresql2 postgresql >"$runs.3"
measure sqlite2 sqlite >"$runs.4"

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$CONNECTIONS" "$DURATION" "$runs.1" "$runs.2" "$runs.3" "$runs.4" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[1])
from benchlib import count_created, fmt, ratio, row, verdict, write_result

results_dir, connections, duration = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runs = {r["label"]: r for r in (json.load(open(p)) for p in sys.argv[5:9])}
anomalies = []
count_created(runs, anomalies)
for label, r in runs.items():
    if not r["acked"] <= r["stored"] <= r["acked"] + connections:
        anomalies.append(f"{label}: {r['acked']} messages acknowledged but {r['stored']} stored")
    h = r["history"]
    if h.get("non_2xx"):
        anomalies.append(f"{label}: {h['non_2xx']} history pages not 200")
    h["ok_rps"] = (h["requests"] - h.get("non_2xx", 0)) / h["duration_s"]

def median(backend, pick):
    values = [pick(r) for r in runs.values() if r["backend"] == backend and pick(r) is not None]
    return statistics.median(values) if values else None

send_rate = {b: median(b, lambda r: r["rate"]) for b in ("sqlite", "postgresql")}
send_p99 = {b: median(b, lambda r: r["wrk"].get("p99_ms")) for b in ("sqlite", "postgresql")}
history = {b: median(b, lambda r: r["history"]["ok_rps"]) for b in ("sqlite", "postgresql")}
history_p99 = {b: median(b, lambda r: r["history"].get("p99_ms")) for b in ("sqlite", "postgresql")}
clean = not anomalies
search = runs["postgresql2"]["search"]
rows = [
    row("messages sent/s, 64 connections: PostgreSQL vs SQLite", send_rate["postgresql"], send_rate["sqlite"],
        ratio(send_rate["postgresql"], send_rate["sqlite"]), "≥ 3,000/s and ≥ 0.5×",
        send_rate["postgresql"] >= 3000 and ratio(send_rate["postgresql"], send_rate["sqlite"]) >= 0.5 and clean),
    row("message send p99: PostgreSQL vs SQLite", send_p99["postgresql"], send_p99["sqlite"],
        ratio(send_p99["postgresql"], send_p99["sqlite"]), "< 50 ms", send_p99["postgresql"] is not None and send_p99["postgresql"] < 50, "ms"),
    row("history pages/s (50 messages), 64 connections: PostgreSQL vs SQLite", history["postgresql"], history["sqlite"],
        ratio(history["postgresql"], history["sqlite"]), "≥ 0.5×", ratio(history["postgresql"], history["sqlite"]) >= 0.5 and clean),
    row("history page p99: PostgreSQL vs SQLite", history_p99["postgresql"], history_p99["sqlite"],
        ratio(history_p99["postgresql"], history_p99["sqlite"]), "— (recorded)", None, "ms"),
]
if search:
    for name, label in (("common", "a common word (1 in 20)"), ("rare", "a rare word (prefix)")):
        w = search[name]
        rows.append(row(f"search p99 over {search['messages']:,} messages on PostgreSQL, {label}", w.get("p99_ms"), "—", None,
                        "< 50 ms", w.get("p99_ms") is not None and w["p99_ms"] < 50 and not w.get("non_2xx"), "ms"))
write_result(results_dir, "postgres", {
    "config": {"connections": connections, "duration_s": duration, "order": "SQLite, PostgreSQL, PostgreSQL, SQLite (medians)",
               "postgresql": "Debian's packages, fsync and synchronous_commit on, Unix socket, shared_buffers 128MB"},
    "runs": runs, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"postgres: note: {a}", file=sys.stderr)
for r in rows:
    print(f"  {r['benchmark']}: {r['sgem']} vs {r['reference']} ({r['ratio']})")
print(f"postgres: {verdict(rows)}")
PY
