# Helpers shared by the messaging benchmarks (messaging-send.sh, messaging-read.sh); sourced
# after lib.sh, never run.

MSG_PASSWORD="bench password for messaging"

# msg_admin DATA_DIR: creates the admin `bench` in the database of DATA_DIR with the CLI.
msg_admin() {
  echo "$MSG_PASSWORD" | "$BENCH_BIN" admin create-user --data-dir "$1" --log-level warning --password-hash-log-n 10 \
    --username bench --email bench@example.com --name "Bench Admin" --role admin --password-stdin >/dev/null ||
    bench_fail "admin create-user failed"
}

# msg_login BASE_URL: prints a bearer token for `bench`.
msg_login() {
  curl -fsS --max-time 10 -H 'Content-Type: application/json' \
    -d "{\"login\":\"bench\",\"password\":\"$MSG_PASSWORD\"}" "$1/api/v1/auth/login" |
    "$BENCH_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["token"])' || bench_fail "login failed"
}

# msg_count DB_PATH SQL: one number from the database (read while the server runs; WAL readers
# do not block its writer).
msg_count() {
  "$BENCH_PYTHON" -c 'import sqlite3,sys; c=sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=5); print(c.execute(sys.argv[2]).fetchone()[0])' \
    "$1" "$2" || bench_fail "counting in $1 failed"
}
