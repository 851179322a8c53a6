# Shared helpers for the benchmark scripts; sourced, never run. Each benchmark calls
# `bench_init NAME BINARY` first: it resolves paths, installs the cleanup trap and fails in one
# line when the binary is missing. Every process a script starts is registered with
# `bench_track` so the trap can stop it, and every temporary directory lives under
# bench-results/tmp (same filesystem as the repository, so fsync costs are the real disk's).

shopt -s inherit_errexit
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$BENCH_DIR/../.." && pwd)"
RESULTS_DIR="$REPO_ROOT/bench-results"
BENCH_PYTHON="${BENCH_PYTHON:-/usr/bin/python3}"
[ -x "$BENCH_PYTHON" ] || BENCH_PYTHON="$(command -v python3)"
BENCH_START_TIMEOUT=10
export PYTHONDONTWRITEBYTECODE=1

BENCH_NAME=""
BENCH_BIN=""
BENCH_TMP=""
BENCH_PIDS=()

# Prints one line on stderr and exits non-zero: the benchmark could not run.
bench_fail() {
  echo "$BENCH_NAME: ERROR: $*" >&2
  exit 2
}

bench_init() {
  BENCH_NAME="$1"
  local bin="${2:-$REPO_ROOT/.build/release/sgem-server}"
  case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
  [ -x "$bin" ] || bench_fail "server binary not found or not executable: $bin (build it with 'make release')"
  BENCH_BIN="$bin"
  for tool in "${@:3}"; do
    command -v "$tool" >/dev/null 2>&1 || bench_fail "'$tool' is not installed (run 'scripts/bootstrap.sh bench')"
  done
  mkdir -p "$RESULTS_DIR/tmp"
  BENCH_TMP="$(mktemp -d "$RESULTS_DIR/tmp/$BENCH_NAME.XXXXXX")"
  rm -f "$RESULTS_DIR/$BENCH_NAME.json"
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  # Thousands of sockets per process in memory.sh; inherited by the servers started below.
  if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4096 ]; then
    ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
  fi
}

bench_track() { BENCH_PIDS+=("$1"); }

# Stops a process politely (SIGTERM), then by force after `grace` seconds. Returns 0 when it
# exited in time, 1 when it had to be killed.
bench_stop_pid() {
  local pid="$1" grace="${2:-10}" i
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < grace * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  kill -KILL "$pid" 2>/dev/null || true
  return 1
}

bench_cleanup() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do bench_stop_pid "$pid" 5 || true; done
  wait 2>/dev/null || true
  [ -n "$BENCH_TMP" ] && rm -rf "$BENCH_TMP"
  rmdir "$RESULTS_DIR/tmp" 2>/dev/null || true
}

# A TCP port free on 127.0.0.1 right now.
bench_free_port() {
  "$BENCH_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# Waits until something accepts HTTP on 127.0.0.1:PORT and answers /healthz with 200, while
# PID is alive. Returns non-zero on timeout or when the process exits.
bench_wait_http() {
  local pid="$1" port="$2" deadline=$((SECONDS + BENCH_START_TIMEOUT))
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || return 1
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port/healthz" 2>/dev/null; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# Starts sgem-server in the background: bench_start_sgem LABEL CPU_LIST -- EXTRA_ARGS...
# (CPU_LIST "" = not pinned). Sets SGEM_PID, SGEM_PORT, SGEM_LOG (stdout+stderr) and a fresh
# data directory under BENCH_TMP. Fails the benchmark when it does not answer within 10 s.
# It runs with --log-level $BENCH_SGEM_LOG_LEVEL (default warning); "default" passes no
# --log-level, so the server logs as it does out of the box (info: one access line per request).
bench_start_sgem() {
  local label="$1" cpus="$2"
  shift 3
  local data="$BENCH_TMP/data-$label"
  mkdir -p "$data"
  SGEM_PORT="$(bench_free_port)"
  SGEM_LOG="$BENCH_TMP/sgem-$label.log"
  local level="${BENCH_SGEM_LOG_LEVEL:-warning}" level_args=()
  [ "$level" = default ] || level_args=(--log-level "$level")
  local cmd=("$BENCH_BIN" serve --host 127.0.0.1 --port "$SGEM_PORT" --data-dir "$data" "${level_args[@]}" "$@")
  [ -n "$cpus" ] && cmd=(taskset -c "$cpus" "${cmd[@]}")
  # BENCH_SGEM_ENV: NAME=VALUE words for the server's environment alone (writes.sh's LD_PRELOAD).
  # shellcheck disable=SC2206
  [ -n "${BENCH_SGEM_ENV:-}" ] && cmd=(env ${BENCH_SGEM_ENV} "${cmd[@]}")
  "${cmd[@]}" >"$SGEM_LOG" 2>&1 &
  SGEM_PID=$!
  bench_track "$SGEM_PID"
  if ! bench_wait_http "$SGEM_PID" "$SGEM_PORT"; then
    local why="did not answer GET /healthz within ${BENCH_START_TIMEOUT}s"
    kill -0 "$SGEM_PID" 2>/dev/null || why="exited at start"
    bench_fail "sgem-server ($label) $why: $(tail -c 300 "$SGEM_LOG" | tr '\n' ' ')"
  fi
  grep -q "listening on http://127.0.0.1:$SGEM_PORT/" "$SGEM_LOG" ||
    echo "$BENCH_NAME: note: sgem-server ($label) answers but printed no 'listening on' line" >&2
}

# Starts a durable throwaway PostgreSQL for the run (scripts/pg-throwaway.sh with SGEM_PG_DURABLE=1:
# fsync and synchronous_commit on, a Unix socket), stopped at exit before the rest is cleaned up.
# Sets PG_URL (its database `sgem`) and PSQL; pg_url and pg_value speak to it.
bench_start_postgres() {
  PSQL="$(command -v psql || ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)"
  [ -x "$PSQL" ] || bench_fail "psql is not installed (apt install postgresql)"
  export SGEM_PG_STATE="$BENCH_TMP/pg.dir"
  PG_URL="$(SGEM_PG_DURABLE=1 "$REPO_ROOT/scripts/pg-throwaway.sh" start)" || bench_fail "cannot start PostgreSQL"
  trap '"$REPO_ROOT/scripts/pg-throwaway.sh" stop >/dev/null 2>&1 || true; bench_cleanup' EXIT
}

# pg_url DB: the cluster's URL naming database DB.
pg_url() { echo "$PG_URL" | sed -E "s#^(postgresql://[^/]*)/[^?]*#\1/$1#"; }

# pg_value URL SQL: one value from the database at URL.
pg_value() { "$PSQL" "$1" -tAqc "$2"; }

# Stops sgem-server politely and fails the benchmark if it had crashed or would not stop.
bench_stop_sgem() {
  local pid="$1" label="$2" log="$3" rc=0
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || rc=$?
    bench_fail "sgem-server ($label) died during the run (exit status $rc): $(tail -c 300 "$log" | tr '\n' ' ')"
  fi
  if ! bench_stop_pid "$pid" 10; then
    bench_fail "sgem-server ($label) ignored SIGTERM for 10 s and was killed"
  fi
  wait "$pid" 2>/dev/null || rc=$?
  # 143 = killed by the SIGTERM itself (no handler installed); anything else non-zero is odd.
  if [ "$rc" -ne 0 ]; then
    echo "$BENCH_NAME: note: sgem-server ($label) exited with status $rc after SIGTERM" >&2
  fi
}

# Fails the benchmark when the server died under load (checked right after each load run).
bench_check_alive() {
  local pid="$1" label="$2" log="$3" rc=0
  if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || rc=$?
    bench_fail "sgem-server ($label) died under load (exit status $rc): $(tail -c 300 "$log" | tr '\n' ' ')"
  fi
}

# Writes an nginx configuration for the reference server into DIR: bench_nginx_conf DIR PORT
# [ACCESS_LOG_FILE] (without a file the access log is off).
bench_nginx_conf() {
  local dir="$1" port="$2" access_log="off"
  [ -n "${3:-}" ] && access_log="$3"
  mkdir -p "$dir/tmp"
  cat >"$dir/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile 8192;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log $access_log;
  keepalive_requests 1000000;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  server {
    listen 127.0.0.1:$port;
    location = /healthz { default_type application/json; return 200 '{"status":"ok"}'; }
  }
}
EOF
}

# Starts the nginx reference: bench_start_nginx CPU_LIST [access-log]. Sets NGINX_PID (the
# master), NGINX_PORT and NGINX_DIR; with "access-log", every request is logged (nginx's default
# combined format, unbuffered) to NGINX_ACCESS_LOG.
bench_start_nginx() {
  local cpus="$1"
  NGINX_DIR="$BENCH_TMP/nginx"
  NGINX_PORT="$(bench_free_port)"
  NGINX_ACCESS_LOG=""
  [ "${2:-}" = access-log ] && NGINX_ACCESS_LOG="$NGINX_DIR/access.log"
  bench_nginx_conf "$NGINX_DIR" "$NGINX_PORT" "$NGINX_ACCESS_LOG"
  local cmd=(nginx -p "$NGINX_DIR" -c "$NGINX_DIR/nginx.conf" -e "$NGINX_DIR/error.log")
  [ -n "$cpus" ] && cmd=(taskset -c "$cpus" "${cmd[@]}")
  "${cmd[@]}" >"$NGINX_DIR/stdout.log" 2>&1 &
  NGINX_PID=$!
  bench_track "$NGINX_PID"
  bench_wait_http "$NGINX_PID" "$NGINX_PORT" ||
    bench_fail "nginx reference did not start: $(tail -c 300 "$NGINX_DIR/error.log" "$NGINX_DIR/stdout.log" 2>/dev/null | tr '\n' ' ')"
}

# The PID of nginx's single worker process (the child of the master).
bench_nginx_worker() {
  local w
  w="$(pgrep -P "$NGINX_PID" | head -n1)"
  [ -n "$w" ] || bench_fail "nginx has no worker process"
  echo "$w"
}

# Resident set size of PID in KiB (VmRSS from /proc/PID/status).
bench_rss_kib() {
  awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

# Runs a wrk command line and prints its parsed result as JSON on stdout:
# bench_wrk OUTFILE [taskset -c N] wrk ARGS...
bench_wrk() {
  local out="$1"
  shift
  # Runs inside $(...): a failure exits this subshell and `set -e` stops the caller.
  "$@" >"$out" 2>&1 || bench_fail "wrk failed: $(tail -c 300 "$out" | tr '\n' ' ')"
  "$BENCH_PYTHON" "$BENCH_DIR/wrkparse.py" "$out" || exit 2
}

# Warms up, then measures URL with wrk on CPU $CLIENT_CPU, $CONNECTIONS connections, $WARMUP s
# then $DURATION s: bench_load LABEL URL [WRK_ARGS...]; prints wrkparse.py's JSON.
bench_load() {
  local label="$1" url="$2"
  shift 2
  bench_wrk "$BENCH_TMP/warm-$label.txt" taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${WARMUP}s" "$@" "$url" >/dev/null
  bench_wrk "$BENCH_TMP/wrk-$label.txt" taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" "$url"
}

# Creates the admin USERNAME (default bench) with PASSWORD in the database of DATA_DIR through the
# command line, at the cheap hash cost the benchmarks' servers run with (--password-hash-log-n 10):
# bench_admin DATA_DIR PASSWORD [USERNAME] [DISPLAY_NAME]
bench_admin() {
  local user="${3:-bench}"
  echo "$2" | "$BENCH_BIN" admin create-user --data-dir "$1" --log-level warning --password-hash-log-n 10 \
    --username "$user" --email "$user@example.com" --name "${4:-Bench Admin}" --role admin --password-stdin >/dev/null ||
    bench_fail "admin create-user failed"
}

# The bearer token of a login over the API: bench_login BASE_URL LOGIN PASSWORD.
bench_login() {
  curl -fsS --max-time 10 -H 'Content-Type: application/json' -d "{\"login\":\"$2\",\"password\":\"$3\"}" \
    "$1/api/v1/auth/login" | "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["token"])'
}
