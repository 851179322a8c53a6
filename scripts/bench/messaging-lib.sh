# Helpers shared by the messaging benchmarks (messaging-send.sh, messaging-read.sh); sourced
# after lib.sh, never run.

MSG_PASSWORD="bench password for messaging"

# msg_admin DATA_DIR: creates the admin `bench` in the database of DATA_DIR with the CLI.
msg_admin() { bench_admin "$1" "$MSG_PASSWORD"; }

# msg_login BASE_URL: prints a bearer token for `bench`.
msg_login() { bench_login "$1" bench "$MSG_PASSWORD" || bench_fail "login failed"; }

# msg_count DB_PATH SQL: one number from the database (read while the server runs; WAL readers
# do not block its writer).
msg_count() {
  "$BENCH_PYTHON" -c 'import sqlite3,sys; c=sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5); print(c.execute(sys.argv[2]).fetchone()[0])' \
    "$1" "$2" || bench_fail "counting in $1 failed"
}

# msg_send_lua OUT TEXT: writes the wrk script that sends messages: writes.lua's counting of 201s,
# each body TEXT followed by the run's label (given after wrk's `--`), the thread and a counter,
# so no two bodies of a benchmark are alike, and a distinct clientId for each.
msg_send_lua() {
  cat >"$1" <<LUA
dofile("$BENCH_DIR/writes.lua")
local count_thread = setup
local started = 0
local counter = 0
local run = "run"
function setup(thread)
  started = started + 1
  thread:set("tid", started)
  count_thread(thread)
end
function init(args)
  run = args[1] or run
end
function request()
  counter = counter + 1
  local body = string.format('{"body":"$2 %s %d-%d","clientId":"%s-%d-%d"}', run, tid, counter, run, tid, counter)
  return wrk.format("POST", nil, nil, body)
end
LUA
}
