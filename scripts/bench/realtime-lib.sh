# Shared by the realtime benchmarks; sourced after lib.sh, never run.

# Creates a database in DIR with the admin `boss` whose password is PASSWORD (cheap hash):
# realtime_seed DIR PASSWORD
realtime_seed() {
  local dir="$1" password="$2"
  rm -rf "$dir" && mkdir -p "$dir"
  "$BENCH_BIN" migrate --data-dir "$dir" --log-level warning >/dev/null || bench_fail "migrate failed"
  echo "$password" | "$BENCH_BIN" admin create-user --data-dir "$dir" --log-level warning --password-hash-log-n 10 \
    --username boss --email boss@example.com --role admin --password-stdin >/dev/null || bench_fail "admin create-user failed"
}
