#!/usr/bin/env bash
# A throwaway PostgreSQL for tests: `start` initdb's a cluster in a fresh temp dir, serves it on a
# Unix socket in that dir only (no TCP port to clash with) and prints its URL; `url` prints the URL
# again; `stop` stops it and removes the dir. Uses Debian's `postgresql` package binaries.
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user (the
# package creates it; created here if missing), through runuser.
# The state (the temp dir's path) lives in $SGEM_PG_STATE, by default .build/pg-throwaway.dir of
# this checkout, so several checkouts on one machine each have their own server.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
state="${SGEM_PG_STATE:-$repo/.build/pg-throwaway.dir}"
db_user=sgem
db_name=sgem

bindir() {
  if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
  # Debian keeps the server binaries out of PATH (/usr/bin/pg_ctl is a wrapper script of
  # postgresql-common); take the newest installed major version.
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
    echo "pg-throwaway: no PostgreSQL server found under /usr/lib/postgresql (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "$found"
}

# as_owner CMD…: runs CMD as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$owner" -- "$@"; else "$@"; fi
}

url_for() { echo "postgresql://$db_user@/$db_name?host=$1"; }

start() {
  # A server left by a run that was killed before its `stop`: this checkout's own, so it goes.
  if [ -f "$state" ]; then stop; fi
  local bin dir
  bin="$(bindir)"
  owner="$(id -un)"
  if [ "$(id -u)" -eq 0 ]; then
    owner=postgres
    id -u "$owner" >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin "$owner"
  fi
  dir="$(mktemp -d "${TMPDIR:-/tmp}/sgem-pg-XXXXXX")"
  chmod 755 "$dir"
  chown "$owner" "$dir"
  mkdir -p "$(dirname "$state")"
  echo "$dir" > "$state"
  if ! as_owner "$bin/initdb" -D "$dir/data" -U "$db_user" --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2; echo "pg-throwaway: initdb failed" >&2; cleanup "$dir"; exit 1
  fi
  # Tests: fsync off (a throwaway cluster need not survive a power cut); benchmarks set
  # SGEM_PG_DURABLE=1 for PostgreSQL's durable defaults (fsync, synchronous_commit). No TCP listener.
  local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  [ "${SGEM_PG_DURABLE:-0}" = 1 ] && durability="-c fsync=on -c synchronous_commit=on"
  if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
      -o "-c listen_addresses='' -k $dir $durability -c max_connections=1000 -c shared_buffers=128MB" >/dev/null; then
    cat "$dir/server.log" >&2 2>/dev/null || true; echo "pg-throwaway: server did not start" >&2; cleanup "$dir"; exit 1
  fi
  as_owner "$bin/createdb" -h "$dir" -U "$db_user" "$db_name"
  url_for "$dir"
}

cleanup() {
  rm -rf "$1"
  rm -f "$state"
}

stop() {
  [ -f "$state" ] || { echo "pg-throwaway: not running" >&2; return 0; }
  local dir bin
  dir="$(cat "$state")"
  bin="$(bindir)"
  owner="$(stat -c %U "$dir" 2>/dev/null || id -un)"
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -w -t 60 -m fast stop >/dev/null || true
  fi
  cleanup "$dir"
}

url() {
  [ -f "$state" ] || { echo "pg-throwaway: not running" >&2; exit 1; }
  url_for "$(cat "$state")"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) echo "usage: $0 start|stop|url" >&2; exit 2 ;;
esac
