#!/usr/bin/env bash
# Runs every benchmark in scripts/bench against one release binary, then writes and prints
# bench-results/summary.md: benchmark, sgem figure, reference figure, ratio, target, pass/fail.
# Every reference is measured in the same run, on the same machine.
#
# usage: scripts/bench/run-all.sh PATH_TO_RELEASE_BINARY
# Exit 0 when every benchmark ran (a missed target shows as FAIL in the table); non-zero when a
# benchmark could not run (missing binary or tool, server not starting, crash under load).
set -uo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$BENCH_DIR/../.." && pwd)"
RESULTS_DIR="$REPO_ROOT/bench-results"
PYTHON="${BENCH_PYTHON:-/usr/bin/python3}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"
BENCHMARKS=(healthz writes memory login login_timing directory holidays messaging-send messaging-read realtime-fanout realtime-idle translation push instances)

[ $# -eq 1 ] || { echo "usage: $0 PATH_TO_RELEASE_BINARY" >&2; exit 2; }
bin="$1"
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
[ -x "$bin" ] || { echo "run-all: ERROR: server binary not found or not executable: $bin" >&2; exit 2; }

mkdir -p "$RESULTS_DIR"
status_file="$(mktemp)"
trap 'rm -f "$status_file"' EXIT
failed=0
started=$SECONDS
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
for name in "${BENCHMARKS[@]}"; do
  echo "== $name"
  err="$(mktemp)"
  # stderr goes both to the terminal and to a file, so the table can quote the error line.
  { "$BENCH_DIR/$name.sh" "$bin" 2>&1 1>&3 | tee "$err" >&2; } 3>&1
  rc=${PIPESTATUS[0]}
  if [ $rc -ne 0 ]; then
    failed=1
    reason="$(grep -m1 'ERROR' "$err" || tail -n1 "$err")"
    printf '%s\t%s\t%s\n' "$name" "$rc" "${reason:-exit status $rc}" >>"$status_file"
  else
    printf '%s\t0\t\n' "$name" >>"$status_file"
  fi
  rm -f "$err"
done
echo "== all benchmarks took $((SECONDS - started)) s"

load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
commit="$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$PYTHON" - "$RESULTS_DIR" "$status_file" "$bin" "$commit" "$load_start" "$load_end" <<'PY'
import json, os, platform, sys, time

results_dir, status_file, binary, commit, load_start, load_end = sys.argv[1:7]
lines = [
    "# sgem-server benchmarks",
    "",
    f"{time.strftime('%Y-%m-%d %H:%M %Z')} · commit {commit} (working tree may differ) · "
    f"{os.cpu_count()} CPUs · Linux {platform.release()} · binary `{binary}`",
    "",
    "Every reference is measured in the same run; ratio = sgem ÷ reference.",
    f"Load average (1/5/15 min) at start {load_start}, at end {load_end}.",
    "",
    "| benchmark | sgem | reference | ratio | target | result |",
    "|---|---|---|---|---|---|",
]
notes = []
for line in open(status_file):
    name, rc, reason = line.rstrip("\n").split("\t")
    path = os.path.join(results_dir, f"{name}.json")
    if rc != "0" or not os.path.exists(path):
        lines.append(f"| {name} | — | — | — | — | **COULD NOT RUN**: {reason.replace('|', '/')} |")
        continue
    result = json.load(open(path))
    for r in result["rows"]:
        verdict = "n/a" if r["pass"] is None else ("PASS" if r["pass"] else "**FAIL**")
        lines.append(f"| {r['benchmark']} | {r['sgem']} | {r['reference']} | {r['ratio']} | {r['target']} | {verdict} |")
    notes += [f"- {name}: {a}" for a in result.get("anomalies", [])]
references = [
    "",
    "References: healthz — nginx 1 worker with its access log to a file, sgem-server at its default log level with stderr to a file, both pinned to CPU 0 with one event loop, wrk -t1 -c64 -d8s on CPU 1, best of 2 alternating rounds;",
    "writes — the same sgem-server with `--store-write-batch 1` (one transaction per insert), 64 conns, 8 s, only 201s counted; on the real disk and on emulated slow storage (LD_PRELOAD shim adding 2 ms to each fsync/fdatasync), the ≥ 10× target judged on the latter;",
    "raw SQLite — Python sqlite3, WAL, synchronous=FULL, one INSERT per transaction, one thread, 3 s, on both storages;",
    "memory — nginx 1 worker (master + worker RSS) holding the same 1,000 idle keep-alive connections;",
    "login — GET /api/v1/me p99 with a bearer token alone (wrk -c8), against the same while 8 clients log in with the production scrypt cost (N=2^17);",
    "directory — GET /healthz on the same server in the same run (sgem pinned to CPU 0, one event loop, wrk -c64 on CPU 1, 8 s each), beside GET /api/v1/users?q=…&limit=50 and ?limit=50 over 5,000 seeded people;",
    "holidays — GET /healthz on the same server in the same run, beside the team calendar of a month (GET /api/v1/holidays/calendar) and an employee's summary (GET /api/v1/holidays?year=) over 500 people seeded through the API with two or three June requests each, two in three approved;",
    "messaging-send — POST /api/v1/chats/{id}/messages (bearer token, a clientId each), 64 conns, 8 s, beside the same server with `--store-write-batch 1`, on the real disk and the slow-fsync shim; messages and message.created events counted in the database;",
    "messaging-read — GET /healthz on the same server in the same run, beside history ?limit=50 on a 100,000-message chat (64 conns) and search (4 conns, 12 queries in turn) over 1,000,000 messages in 200 chats seeded through SQL (messaging-seed.py, then FTS5 'rebuild');",
    "realtime-fanout — no reference server: latency from each send's 201 to its delivery at every member, checked for loss, duplicates and strays (journal mode through --bench-module; messages mode once messaging serves POST /chats);",
    "realtime-idle — the same server, restarted, holding the same number of idle HTTP keep-alive connections;",
    "instances — three instances on one durable throwaway PostgreSQL (scripts/pg-throwaway.sh): fan-out with 500 clients spread over them, no reference (p99 from the 201, loss and duplicates); sends and history pages with 64 connections split over the three beside the same load on one instance alone, rounds one/three/three/one (medians), with the CPU per request of the sgem-server and PostgreSQL processes;",
    "translation — the same 50-reader group with translation off, beside it with every reader (5 languages) in translation mode through a LibreTranslate stand-in (scripts/translate_stub.py) counting calls; 64 conns, 8 s of sends by the group's creator, 4 rounds of each mode in ABBA order (plain, translated, translated, plain, …), each mode judged by its median round; calls counted after the worker drained; the stand-in at idle priority on wrk's CPU.",
]
lines += references
# The end figure includes the benchmarks' own load; only the start says whether others were busy.
if float(load_start.split()[0]) > 1.0:
    lines += ["", "**Warning:** the machine was already busy when the run started (1-minute load average "
              f"{load_start.split()[0]} on {os.cpu_count()} CPUs); the figures are noisy, healthz most. "
              "Re-run on an idle machine."]
if notes:
    lines += ["", "Anomalies seen during the runs:", ""] + notes
text = "\n".join(lines) + "\n"
with open(os.path.join(results_dir, "summary.md"), "w", encoding="utf-8") as f:
    f.write(text)
print(text, end="")
PY

exit $failed
