#!/usr/bin/env bash
# Where the time of message sends goes with several instances on one PostgreSQL: a diagnostic for
# issue 18's send target, not a benchmark with a verdict. One durable throwaway cluster with
# pg_stat_statements loaded; COUNT instances (default 3) on one database; three wrk processes
# (22/21/21 connections, the k-th on instance k mod COUNT) sending into one group for a 2 s
# warm-up and then DURATION seconds. Prints:
#   - messages stored per second, and each instance's CPU seconds during the measured part;
#   - every statement PostgreSQL ran in the measured part (calls, total and mean time, rows), most
#     called first: the writers' lock wait is `pg_advisory_xact_lock`'s mean;
#   - each instance's commit and batch counters (`/metrics`).
#
# usage: scripts/bench/instances-profile.sh [COUNT] [PATH_TO_RELEASE_BINARY]
# Env: BENCH_DURATION (8), BENCH_WARMUP (2), BENCH_SPREAD (COUNT: the wrk processes go to instance k mod SPREAD),
# BENCH_SGEM_ARGS (more options for every instance, such as --event-loops=1); BENCH_PERF=FILE also samples the whole machine with perf during the
# measured part (`perf report -i FILE --sort comm,dso`). Needs wrk, curl and Debian's postgresql package.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
COUNT="${1:-3}"
case "$COUNT" in [1-9]) ;; *) echo "instances-profile: COUNT must be 1 to 9, not '$COUNT'" >&2; exit 2 ;; esac
bench_init instances-profile "${2:-}" wrk curl
DURATION="${BENCH_DURATION:-8}"
# BENCH_SPREAD=1 sends everything to the first instance while the others run idle: the same
# processes, without the writers' lock changing hands.
SPREAD="${BENCH_SPREAD:-$COUNT}"
case "$SPREAD" in [1-9]) ;; *) echo "instances-profile: BENCH_SPREAD must be 1 to 9, not '$SPREAD'" >&2; exit 2 ;; esac
bench_start_postgres

# pg_stat_statements must be preloaded: set it, then restart the cluster with its other options.
"$PSQL" "$PG_URL" -qc "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
pg_dir="$(cat "$SGEM_PG_STATE")"
pg_ctl="$(dirname "$PSQL")/pg_ctl"
[ -x "$pg_ctl" ] || pg_ctl="$(ls -d /usr/lib/postgresql/*/bin/pg_ctl | sort -V | tail -1)"
if [ "$(id -u)" -eq 0 ]; then runuser -u "$(stat -c %U "$pg_dir/data")" -- "$pg_ctl" -D "$pg_dir/data" -w restart >/dev/null
else "$pg_ctl" -D "$pg_dir/data" -w restart >/dev/null; fi
PG_POSTMASTER="$(head -n1 "$pg_dir/data/postmaster.pid")"
# Time spent writing and flushing WAL (pg_stat_wal's *_time columns stay 0 without it).
"$PSQL" "$PG_URL" -qc "ALTER SYSTEM SET track_wal_io_timing = on" -c "SELECT pg_reload_conf()" >/dev/null

KEY_FILE="$BENCH_TMP/secret.key"
cli=(--data-dir "$BENCH_TMP/cli" --secret-key-file "$KEY_FILE" --log-level warning)
pg_value "$PG_URL" "CREATE DATABASE sends" >/dev/null
url="$(pg_url sends)"
"$BENCH_BIN" migrate "${cli[@]}" --database-url "$url" >/dev/null || bench_fail "migrate failed"
echo "$MSG_PASSWORD" | "$BENCH_BIN" admin create-user "${cli[@]}" --database-url "$url" --password-hash-log-n 10 \
  --username bench --email bench@example.com --name "Bench Admin" --role admin --password-stdin >/dev/null ||
  bench_fail "create-user failed"
pg_value "$url" "CREATE EXTENSION pg_stat_statements" >/dev/null
msg_send_lua "$BENCH_TMP/send.lua" "bench message, plain text with a few words"

PORTS=() PIDS=()
for ((i = 0; i < COUNT; i++)); do
  bench_start_sgem "instance$i" "" -- --database-url "$url" --secret-key-file "$KEY_FILE" --password-hash-log-n 10 ${BENCH_SGEM_ARGS:-}
  PORTS+=("$SGEM_PORT") PIDS+=("$SGEM_PID")
done
base="http://127.0.0.1:${PORTS[0]}"
token="$(msg_login "$base")"
chat="$(curl -fsS --max-time 10 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"name":"Bench group"}' "$base/api/v1/chats" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')" ||
  bench_fail "creating the group failed"

# send NAME SECONDS: the three wrk processes; NAME keeps each round's client ids its own.
send() {
  local conns=(22 21 21) pids=() k
  for k in 0 1 2; do
    wrk -t1 -c"${conns[$k]}" -d"$2s" --timeout 10s -s "$BENCH_TMP/send.lua" -H "Authorization: Bearer $token" \
      -H 'Content-Type: application/json' "http://127.0.0.1:${PORTS[$((k % SPREAD))]}/api/v1/chats/$chat/messages" -- "$1-$k" \
      >"$BENCH_TMP/wrk-$1-$k.txt" 2>&1 &
    pids+=($!)
  done
  for k in 0 1 2; do wait "${pids[$k]}" || bench_fail "wrk failed: $(tail -c 300 "$BENCH_TMP/wrk-$1-$k.txt" | tr '\n' ' ')"; done
}
cpu() { local p; for p in "${PIDS[@]}"; do awk '{print $14 + $15}' "/proc/$p/stat"; done; }
# threads FILE: each instance's threads as "instance name ticks" lines (name from comm, spaces kept out).
threads() {
  local i t
  for i in "${!PIDS[@]}"; do
    for t in /proc/"${PIDS[$i]}"/task/*; do
      [ -r "$t/stat" ] || continue
      printf '%s %s %s\n' "$i" "$(tr ' ' '_' <"$t/comm")" "$(sed 's/^.*) //' "$t/stat" | awk '{print $12 + $13}')"
    done
  done >"$1"
}
# pgcpu FILE: the cluster's processes as "pid ticks" lines.
pgcpu() {
  local p
  for p in $(pgrep -P "$PG_POSTMASTER") "$PG_POSTMASTER"; do
    [ -r "/proc/$p/stat" ] && printf '%s %s\n' "$p" "$(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')"
  done >"$1"
}

send warm "${BENCH_WARMUP:-2}"
# What autovacuum would do within a minute, done before the measured part (see instances.sh).
pg_value "$url" "VACUUM ANALYZE" >/dev/null
pg_value "$url" "SELECT pg_stat_statements_reset()" >/dev/null
wal0="$(pg_value "$url" "SELECT wal_bytes || ' ' || wal_sync || ' ' || wal_sync_time || ' ' || wal_write_time FROM pg_stat_wal")"
before="$(pg_value "$url" "SELECT count(*) FROM messaging_messages")"
mapfile -t cpu0 < <(cpu)
read -r -a machine0 < <(head -n1 /proc/stat)
switches0="$(awk '$1 == "ctxt" { print $2 }' /proc/stat)"
threads "$BENCH_TMP/threads0"
pgcpu "$BENCH_TMP/pg0"
if [ -n "${BENCH_PERF:-}" ]; then
  # The whole machine sampled during the measured part: `perf report -i FILE --sort comm,dso`.
  perf record -a -F 499 -o "$BENCH_PERF" -- sleep "$DURATION" >/dev/null 2>&1 &
  perf_pid=$!
fi
send measured "$DURATION"
[ -n "${BENCH_PERF:-}" ] && wait "$perf_pid"
mapfile -t cpu1 < <(cpu)
read -r -a machine1 < <(head -n1 /proc/stat)
switches1="$(awk '$1 == "ctxt" { print $2 }' /proc/stat)"
threads "$BENCH_TMP/threads1"
pgcpu "$BENCH_TMP/pg1"
after="$(pg_value "$url" "SELECT count(*) FROM messaging_messages")"
wal1="$(pg_value "$url" "SELECT wal_bytes || ' ' || wal_sync || ' ' || wal_sync_time || ' ' || wal_write_time FROM pg_stat_wal")"
hz="$(getconf CLK_TCK)"

echo "$COUNT instance(s), $DURATION s: $((after - before)) messages stored, $(((after - before) / DURATION))/s"
for i in "${!PIDS[@]}"; do
  echo "  instance$i CPU: $(awk -v a="${cpu0[$i]}" -v b="${cpu1[$i]}" -v hz="$hz" 'BEGIN { printf "%.2f s", (b - a) / hz }')"
done
# CPU per message (every instance's, and the cluster's processes alive at both ends) and how busy
# the whole machine was: steadier than messages/s from one run to the next on a shared machine.
sgem_ticks=0
for i in "${!PIDS[@]}"; do sgem_ticks=$((sgem_ticks + cpu1[i] - cpu0[i])); done
pg_ticks="$(awk 'NR == FNR { before[$1] = $2; next } ($1 in before) { t += $2 - before[$1] } END { print t + 0 }' "$BENCH_TMP/pg0" "$BENCH_TMP/pg1")"
total=0 idle=0
for k in 1 2 3 4 5 6 7 8; do total=$((total + machine1[k] - machine0[k])); done
idle=$((machine1[4] - machine0[4] + machine1[5] - machine0[5]))
awk -v s="$sgem_ticks" -v p="$pg_ticks" -v n="$((after - before))" -v hz="$hz" -v t="$total" -v i="$idle" \
  -v c="$((switches1 - switches0))" 'BEGIN {
  printf "  CPU per message: sgem-server %.3f ms, PostgreSQL %.3f ms, both %.3f ms; machine busy %.1f %%; %.1f context switches a message\n",
    1000 * s / hz / n, 1000 * p / hz / n, 1000 * (s + p) / hz / n, 100 * (t - i) / t, c / n }'
# The WAL: bytes a message, and the flushes to disk (each commit waits for one, under the
# writers' lock): how many, and how long one took.
read -r -a w0 <<<"$wal0"
read -r -a w1 <<<"$wal1"
awk -v b="$((${w1[0]} - ${w0[0]}))" -v s="$((${w1[1]} - ${w0[1]}))" -v st0="${w0[2]}" -v st1="${w1[2]}" -v wt0="${w0[3]}" -v wt1="${w1[3]}" \
  -v n="$((after - before))" -v d="$DURATION" 'BEGIN {
  printf "  WAL: %.0f bytes a message; %d flushes (%.0f a second), %.3f ms each; writes %.3f ms a flush\n",
    b / n, s, s / d, s ? (st1 - st0) / s : 0, s ? (wt1 - wt0) / s : 0 }'
# Each instance's threads by name, summed (a pool's threads share one), busiest first.
awk -v hz="$hz" 'NR == FNR { before[$1 " " $2] += $3; next } { after[$1 " " $2] += $3 }
  END { for (k in after) { d = (after[k] - before[k]) / hz; if (d >= 0.05) printf "    instance%s %-16s %.2f s\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), d } }' \
  "$BENCH_TMP/threads0" "$BENCH_TMP/threads1" | sort -k3 -rn
# The cluster's processes during the measured part, by what each last ran (a backend's last
# statement tells a writer, a reader and a listening connection apart), busiest first.
"$PSQL" "$url" -AtF ' ' -c "SELECT pid, coalesce(nullif(backend_type, 'client backend'), '') ||
    left(regexp_replace(coalesce(query, ''), '\s+', '_', 'g'), 40) FROM pg_stat_activity" >"$BENCH_TMP/pgroles"
echo "  PostgreSQL CPU by last statement:"
awk -v hz="$hz" 'FILENAME ~ /pgroles$/ { role[$1] = $2; next } FILENAME ~ /pg0$/ { before[$1] = $2; next }
  { r = ($1 in role) ? role[$1] : "other"; if (r == "") r = "idle"; cpu[r] += ($2 - before[$1]) / hz; n[r]++ }
  END { for (r in cpu) if (cpu[r] >= 0.02) printf "    %-42s %2d  %.2f s\n", r, n[r], cpu[r] }' \
  "$BENCH_TMP/pgroles" "$BENCH_TMP/pg0" "$BENCH_TMP/pg1" | sort -k3 -rn
echo
"$PSQL" "$url" -P pager=off -c "SELECT calls, round(total_exec_time::numeric, 0) AS total_ms,
    round((total_exec_time / calls)::numeric, 3) AS mean_ms, rows,
    left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
  FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC LIMIT 30"
for i in "${!PORTS[@]}"; do
  echo "instance$i:"
  curl -fsS --max-time 10 -H "Authorization: Bearer $token" "http://127.0.0.1:${PORTS[$i]}/metrics" |
    grep -E '^sgem_store_(commits_total|commit_batch_size_(sum|count)|batch_joined_total|batches_rerun_total|write_lock_(wait|held)_seconds_total|commit_wait_seconds_total|writer_busy_seconds_total)' | sed 's/^/  /' || true
done
