#!/usr/bin/env bash
# Several instances on one PostgreSQL database (issue 18), all in one run on one durable throwaway
# PostgreSQL (scripts/pg-throwaway.sh with SGEM_PG_DURABLE=1: fsync and synchronous_commit on),
# every instance with its own data directory and port and one shared secret key file:
#   - fan-out: 3 instances, 500 WebSocket clients in groups of 10 spread over them (each group's
#     members on different instances), 200 messages/s sent through the instances in turn for 10 s
#     (realtime-fanout.py with several ports); latency from each send's 201 to each delivery.
#     Target: p99 < 100 ms, none lost or doubled.
#   - message sends: POST /api/v1/chats/{id}/messages into one group, 64 connections split over
#     3 instances (one wrk each, 22/21/21), against the same three wrk processes all on one
#     instance running alone; rounds one, three, three, one (ABBA), twice, medians. Before each
#     round's measured part, VACUUM ANALYZE (what autovacuum does within a minute). Target: ≥ 0.8×.
#   - history pages: GET /api/v1/chats/{id}/messages?limit=50, the same split, in the same rounds:
#     pages per instance and in all, and the CPU each page costs (the sgem-server processes and
#     the PostgreSQL cluster's, from /proc). Recorded: on this 2-core machine the instances share
#     the cores, so the sum cannot grow with instances; a level CPU cost per page is what lets it
#     grow with machines.
#
# usage: scripts/bench/instances.sh [PATH_TO_RELEASE_BINARY]   (default .build/release/sgem-server)
# Env: BENCH_DURATION (8), BENCH_FANOUT_CLIENTS (500), BENCH_FANOUT_GROUP (10), BENCH_FANOUT_RATE (200),
# BENCH_FANOUT_SECONDS (10), BENCH_ROUNDS (2: ABBA blocks). Writes bench-results/instances.json. Exit 0 when measured (PASS or FAIL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/messaging-lib.sh"
bench_init instances "${1:-}" wrk curl

INSTANCES=3
DURATION="${BENCH_DURATION:-8}"
WARMUP=2
CONNECTIONS=64
CLIENTS="${BENCH_FANOUT_CLIENTS:-500}"
GROUP="${BENCH_FANOUT_GROUP:-10}"
RATE="${BENCH_FANOUT_RATE:-200}"
SECONDS_RUN="${BENCH_FANOUT_SECONDS:-10}"
ROUNDS="${BENCH_ROUNDS:-2}"
case "$ROUNDS" in [1-9]) ;; *) echo "instances: BENCH_ROUNDS must be 1 to 9, not '$ROUNDS'" >&2; exit 2 ;; esac
bench_start_postgres
PG_POSTMASTER="$(head -n1 "$(cat "$SGEM_PG_STATE")/data/postmaster.pid")"
KEY_FILE="$BENCH_TMP/secret.key"

# seed DB USERNAME PASSWORD: a fresh database DB with its schema and the admin USERNAME, through
# the command line; prints its URL.
seed() {
  local url cli=("--data-dir" "$BENCH_TMP/cli" "--secret-key-file" "$KEY_FILE" "--log-level" "warning")
  pg_value "$PG_URL" "CREATE DATABASE $1" >/dev/null
  url="$(pg_url "$1")"
  "$BENCH_BIN" migrate "${cli[@]}" --database-url "$url" >/dev/null || bench_fail "migrate failed ($1)"
  echo "$3" | "$BENCH_BIN" admin create-user "${cli[@]}" --database-url "$url" --password-hash-log-n 10 \
    --username "$2" --email "$2@example.com" --name "Bench Admin" --role admin --password-stdin >/dev/null ||
    bench_fail "create-user failed ($1)"
  echo "$url"
}

# start_instances DB_URL COUNT [SERVER_ARGS…]: sets PORTS, PIDS and LOGS.
start_instances() {
  local url="$1" count="$2" i
  shift 2
  PORTS=() PIDS=() LOGS=()
  for ((i = 0; i < count; i++)); do
    bench_start_sgem "instance$i" "" -- --database-url "$url" --secret-key-file "$KEY_FILE" --password-hash-log-n 10 "$@"
    PORTS+=("$SGEM_PORT") PIDS+=("$SGEM_PID") LOGS+=("$SGEM_LOG")
  done
}
check_instances() { local i; for i in "${!PIDS[@]}"; do bench_check_alive "${PIDS[$i]}" "instance$i" "${LOGS[$i]}"; done; }
stop_instances() { local i; for i in "${!PIDS[@]}"; do bench_stop_sgem "${PIDS[$i]}" "instance$i" "${LOGS[$i]}"; done; }

# cpu_snapshot: JSON of CPU clock ticks so far: each instance's (PIDS), the PostgreSQL cluster's
# (the postmaster with its reaped children and every live child), and the machine's total and idle.
cpu_snapshot() {
  "$BENCH_PYTHON" - "$PG_POSTMASTER" "${PIDS[@]}" <<'PY'
import json, os, sys

def fields(pid):
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()

def ticks(pid, reaped=False):
    f = fields(pid)   # after the name: f[1] ppid, f[11] utime, f[12] stime, f[13] cutime, f[14] cstime
    return int(f[11]) + int(f[12]) + (int(f[13]) + int(f[14]) if reaped else 0)

postmaster = int(sys.argv[1])
pg = ticks(postmaster, reaped=True)
for name in os.listdir("/proc"):
    if name.isdigit():
        try:
            if int(fields(name)[1]) == postmaster:
                pg += ticks(name)
        except (OSError, ValueError, IndexError):
            pass
cpu = [int(v) for v in open("/proc/stat").readline().split()[1:9]]
print(json.dumps({"sgem": [ticks(p) for p in sys.argv[2:]], "pg": pg, "total": sum(cpu), "idle": cpu[3] + cpu[4]}))
PY
}

# load NAME SECONDS URL_PATH [WRK_ARGS…]: three wrk processes (22, 21 and 21 connections) at
# the same time, the k-th on instance k mod COUNT of PORTS; prints a JSON list of their results.
load() {
  local name="$1" seconds="$2" path="$3" k conns=(22 21 21) pids=() outs=()
  shift 3
  for k in 0 1 2; do
    local port="${PORTS[$((k % ${#PORTS[@]}))]}" out="$BENCH_TMP/wrk-$name-$k.txt"
    local extra=()
    [ -n "${SEND_LUA:-}" ] && extra=(-s "$SEND_LUA")
    wrk -t1 -c"${conns[$k]}" -d"${seconds}s" --timeout 10s --latency "${extra[@]}" "$@" "http://127.0.0.1:$port$path" -- "$name-$k" >"$out" 2>&1 &
    pids+=($!) outs+=("$out")
  done
  for k in 0 1 2; do wait "${pids[$k]}" || bench_fail "wrk failed: $(tail -c 300 "${outs[$k]}" | tr '\n' ' ')"; done
  local parsed=()
  for k in 0 1 2; do parsed+=("$("$BENCH_PYTHON" "$BENCH_DIR/wrkparse.py" "${outs[$k]}")") || exit 2; done
  local IFS=,
  echo "[${parsed[*]}]"
}

# --- fan-out ---------------------------------------------------------------------------------
FANOUT_PASSWORD="bench password $(date +%s)"
fanout_url="$(seed fanout boss "$FANOUT_PASSWORD")"
# Cheap hashes: the run logs 500 users in; one address holds 500+ connections.
start_instances "$fanout_url" "$INSTANCES" --max-connections-per-address 0 --password-hash-per-client 64 --password-hash-queue 1024
ports_list="$(IFS=,; echo "${PORTS[*]}")"
(cd "$BENCH_DIR" && "$BENCH_PYTHON" realtime-fanout.py "$ports_list" "$FANOUT_PASSWORD" messages "$CLIENTS" "$GROUP" "$RATE" "$SECONDS_RUN") \
  >"$BENCH_TMP/fanout.json" || bench_fail "the fan-out run failed"
check_instances
stop_instances

# --- sends and history pages, one instance alone against three --------------------------------
sends_url="$(seed sends bench "$MSG_PASSWORD")"
msg_send_lua "$BENCH_TMP/send.lua" "bench message, plain text with a few words"
CHAT=""

# measure LABEL COUNT: COUNT instances on the sends database; warm-up, sends, then history pages,
# each with the CPU snapshots around it; prints the round's JSON.
measure() {
  local label="$1" count="$2" token before after sends history cpu0 cpu1 cpu2 cpu3
  start_instances "$sends_url" "$count"
  local base="http://127.0.0.1:${PORTS[0]}"
  token="$(msg_login "$base")"
  if [ -z "$CHAT" ]; then
    CHAT="$(curl -fsS --max-time 10 -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
      -d '{"name":"Bench group"}' "$base/api/v1/chats" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')" ||
      bench_fail "creating the group failed"
  fi
  local auth=(-H "Authorization: Bearer $token") path="/api/v1/chats/$CHAT/messages"
  SEND_LUA="$BENCH_TMP/send.lua" load "warm-$label" "$WARMUP" "$path" "${auth[@]}" -H 'Content-Type: application/json' >/dev/null
  # What autovacuum does on its own within a minute, done before the measured part rather than
  # during it: statistics — the warm-up's statements were prepared on tables just created, and a
  # generic plan made then can scan a whole table ever after — and the vacuum of the rows the
  # previous round inserted, which otherwise lands in whichever round comes next.
  pg_value "$sends_url" "VACUUM ANALYZE" >/dev/null
  sleep 0.5
  before="$(pg_value "$sends_url" "SELECT count(*) FROM messaging_messages")"
  cpu0="$(cpu_snapshot)"
  sends="$(SEND_LUA="$BENCH_TMP/send.lua" load "send-$label" "$DURATION" "$path" "${auth[@]}" -H 'Content-Type: application/json')"
  cpu1="$(cpu_snapshot)"
  check_instances
  sleep 0.5
  after="$(pg_value "$sends_url" "SELECT count(*) FROM messaging_messages")"
  cpu2="$(cpu_snapshot)"
  history="$(load "history-$label" "$DURATION" "$path?limit=50" "${auth[@]}")"
  cpu3="$(cpu_snapshot)"
  check_instances
  stop_instances
  echo "{\"label\":\"$label\",\"instances\":$count,\"stored\":$((after - before)),\"sends\":$sends,\"history\":$history,"\
"\"cpu\":{\"sends\":[$cpu0,$cpu1],\"history\":[$cpu2,$cpu3]}}"
}

# ABBA blocks (one, three, three, one), ROUNDS of them: a drift over the run (the tables grow)
# weighs on both sides alike, and the medians of several rounds each keep one noisy round from
# deciding the ratio (on a shared 2-core machine one round can come out 20 % off the next).
run_files=()
for ((block = 1; block <= ROUNDS; block++)); do
  for label in "one$((2 * block - 1))" "three$((2 * block - 1))" "three$((2 * block))" "one$((2 * block))"; do
    count=1
    [[ "$label" == three* ]] && count="$INSTANCES"
    measure "$label" "$count" >"$BENCH_TMP/run-$label.json"
    run_files+=("$BENCH_TMP/run-$label.json")
  done
done

"$BENCH_PYTHON" - "$BENCH_DIR" "$RESULTS_DIR" "$BENCH_TMP/fanout.json" "$(getconf CLK_TCK)" "${run_files[@]}" <<'PY'
import json, statistics, sys
sys.path.insert(0, sys.argv[1])
from benchlib import fmt, ratio, row, verdict, write_result

results_dir, fanout, hz = sys.argv[2], json.load(open(sys.argv[3])), int(sys.argv[4])
runs = [json.load(open(p)) for p in sys.argv[5:]]
anomalies = []

def cpu_use(before, after, requests):
    """CPU milliseconds per request (sgem-server processes, PostgreSQL) and the machine's busy share."""
    sgem = sum(a - b for a, b in zip(after["sgem"], before["sgem"])) / hz * 1000
    pg = (after["pg"] - before["pg"]) / hz * 1000
    total = after["total"] - before["total"]
    return {"sgem_ms_per_request": sgem / requests if requests else None, "pg_ms_per_request": pg / requests if requests else None,
            "per_instance_cpu_s": [(a - b) / hz for a, b in zip(after["sgem"], before["sgem"])],
            "machine_busy": 1 - (after["idle"] - before["idle"]) / total if total else None}

for r in runs:
    n = r["instances"]
    r["acked"] = sum(w.get("created", 0) for w in r["sends"])
    duration = max(w["duration_s"] for w in r["sends"])
    r["send_rate"] = r["acked"] / duration
    r["send_p99_ms"] = max(w.get("p99_ms", 0) for w in r["sends"])
    for w in r["sends"]:
        if w.get("other") or w["non_2xx"] or sum(w["socket_errors"].values()):
            anomalies.append(f"{r['label']}: sends: {w.get('other')} answers not 201, socket errors {w['socket_errors']}")
    if not r["acked"] <= r["stored"] <= r["acked"] + 64:
        anomalies.append(f"{r['label']}: {r['acked']} messages acknowledged but {r['stored']} stored")
    # Pages per instance: wrk k went to instance k mod n.
    per_instance = [0.0] * n
    for k, w in enumerate(r["history"]):
        if w["non_2xx"] or sum(w["socket_errors"].values()):
            anomalies.append(f"{r['label']}: history: non-2xx {w['non_2xx']}, socket errors {w['socket_errors']}")
        per_instance[k % n] += (w["requests"] - w["non_2xx"]) / w["duration_s"]
    r["history_per_instance"] = per_instance
    r["history_rate"] = sum(per_instance)
    r["history_p99_ms"] = max(w.get("p99_ms", 0) for w in r["history"])
    pages = sum(w["requests"] - w["non_2xx"] for w in r["history"])
    r["history_cpu"] = cpu_use(*r["cpu"]["history"], pages)
    r["sends_cpu"] = cpu_use(*r["cpu"]["sends"], r["acked"])

def median(n, pick):
    return statistics.median(pick(r) for r in runs if r["instances"] == n)

one, three = 1, max(r["instances"] for r in runs)
send = {n: median(n, lambda r: r["send_rate"]) for n in (one, three)}
send_p99 = {n: median(n, lambda r: r["send_p99_ms"]) for n in (one, three)}
pages = {n: median(n, lambda r: r["history_rate"]) for n in (one, three)}
per_instance = {n: [statistics.median(r["history_per_instance"][i] for r in runs if r["instances"] == n) for i in range(n)] for n in (one, three)}
cpu_page = {n: median(n, lambda r: r["history_cpu"]["sgem_ms_per_request"] + r["history_cpu"]["pg_ms_per_request"]) for n in (one, three)}
sgem_page = {n: median(n, lambda r: r["history_cpu"]["sgem_ms_per_request"]) for n in (one, three)}
busy = {n: median(n, lambda r: r["history_cpu"]["machine_busy"]) for n in (one, three)}
cpu_send = {n: median(n, lambda r: r["sends_cpu"]["sgem_ms_per_request"] + r["sends_cpu"]["pg_ms_per_request"]) for n in (one, three)}
clean = not anomalies
# Each ABBA block's own ratio (its two rounds of three over its two of one): the spread says how
# much one block can tell on this machine.
block_ratios = []
for b in range(0, len(runs) - 3, 4):
    ones = [r["send_rate"] for r in runs[b:b + 4] if r["instances"] == one]
    threes = [r["send_rate"] for r in runs[b:b + 4] if r["instances"] == three]
    if ones and threes:
        block_ratios.append(round(statistics.mean(threes) / statistics.mean(ones), 3))

f = fanout
fan_clean = f["lost"] == 0 and f["doubled"] == 0 and f["stray"] == 0 and f["errors"] == 0
if not fan_clean:
    anomalies.append(f"fan-out: lost {f['lost']}, doubled {f['doubled']}, stray {f['stray']}, errors {f['errors']} of {f['expected']} deliveries")
rows = [
    row(f"fan-out, {three} instances, {f['clients']} clients in groups of {f['group']} spread over them, {f['rate']} messages/s for "
        f"{f['seconds']} s: p99 201 → delivery", f["p99_from_201_ms"],
        f"same instance {fmt(f['p99_from_201_same_instance_ms'])} ms / another {fmt(f['p99_from_201_other_instance_ms'])} ms",
        None, "< 100 ms, none lost or doubled", fan_clean and f["p99_from_201_ms"] is not None and f["p99_from_201_ms"] < 100, "ms"),
    row(f"messages sent/s, 64 connections over {three} instances vs one instance alone", send[three], send[one],
        ratio(send[three], send[one]), "≥ 0.8×", ratio(send[three], send[one]) >= 0.8 and clean),
    row(f"message send p99, {three} instances vs one", send_p99[three], send_p99[one], ratio(send_p99[three], send_p99[one]),
        "— (recorded)", None, "ms"),
    row(f"CPU per message sent (sgem-server + PostgreSQL), {three} instances vs one", cpu_send[three], cpu_send[one],
        ratio(cpu_send[three], cpu_send[one]), "— (recorded)", None, "ms"),
    row(f"history pages/s (50 messages), 64 connections, {three} instances in all (per instance "
        + " / ".join(fmt(v) for v in per_instance[three]) + ") vs one alone", pages[three], pages[one],
        ratio(pages[three], pages[one]), "— (recorded; the cores are shared)", None),
    row(f"CPU per history page (sgem-server + PostgreSQL), {three} instances vs one; sgem-server alone "
        f"{fmt(sgem_page[three], 3)} vs {fmt(sgem_page[one], 3)} ms", cpu_page[three], cpu_page[one], ratio(cpu_page[three], cpu_page[one]),
        "— (recorded; level = scales with machines)", None, "ms"),
    row(f"machine CPU busy during the history runs, {three} instances vs one", busy[three] * 100, busy[one] * 100,
        ratio(busy[three], busy[one]), "— (recorded)", None, "%"),
]
write_result(results_dir, "instances", {
    "config": {"instances": three, "connections": 64, "wrk": "three wrk processes of 22/21/21 connections, on instance k mod n",
               "order": f"one, three, three, one, {len(runs) // 4} times (medians of every round)",
               "postgresql": "Debian's packages, fsync and synchronous_commit on, Unix socket, shared_buffers 128MB"},
    "fanout": fanout, "runs": runs, "send_ratio_per_block": block_ratios, "anomalies": anomalies, "rows": rows, "verdict": verdict(rows),
})
for a in anomalies:
    print(f"instances: note: {a}", file=sys.stderr)
for r in rows:
    print(f"  {r['benchmark']}: {r['sgem']} vs {r['reference']} ({r['ratio']})")
print("  sends, each ABBA block's own ratio: " + ", ".join(f"{v:.2f}×" for v in block_ratios))
print(f"instances: {verdict(rows)}  fan-out p99 {fmt(f['p99_from_201_ms'])} ms, {f['delivered']:,} of {f['expected']:,} delivered, "
      f"{f['lost']} lost, {f['doubled']} doubled; sends {fmt(send[three])}/s on {three} vs {fmt(send[one])}/s on one "
      f"({fmt(ratio(send[three], send[one]))}×); pages {fmt(pages[three])}/s on {three} vs {fmt(pages[one])}/s on one")
PY
