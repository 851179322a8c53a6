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
