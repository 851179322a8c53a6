# Shared by the realtime benchmarks; sourced after lib.sh, never run.

# Creates a database in DIR with the admin `boss` whose password is PASSWORD (cheap hash):
# realtime_seed DIR PASSWORD
realtime_seed() {
  local dir="$1" password="$2"
  rm -rf "$dir" && mkdir -p "$dir"
  "$BENCH_BIN" migrate --data-dir "$dir" --log-level warning >/dev/null || bench_fail "migrate failed"
  bench_admin "$dir" "$password" boss "Boss"
}
