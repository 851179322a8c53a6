#!/usr/bin/env python3
"""Raw-SQLite reference for writes.sh: sqlite_ref.py DIR [SECONDS].

One thread, WAL, synchronous=FULL, one INSERT per transaction into the same row shape as the
bench module's table, for about SECONDS (default 3). Prints JSON: inserts, seconds, rate.
"""
import json
import os
import sqlite3
import sys
import time
from datetime import datetime, timezone


def main():
    directory = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    path = os.path.join(directory, "reference.sqlite")
    db = sqlite3.connect(path, isolation_level=None)
    try:
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            sys.exit(f"sqlite_ref: journal_mode is {mode}, not wal")
        db.execute("PRAGMA synchronous=FULL")
        db.execute("CREATE TABLE bench_writes (id INTEGER PRIMARY KEY, payload TEXT NOT NULL, created_at TEXT NOT NULL)")
        payload = '{"note":"bench write"}'
        inserts = 0
        start = time.monotonic()
        deadline = start + seconds
        while time.monotonic() < deadline:
            now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO bench_writes (payload, created_at) VALUES (?, ?)", (payload, now))
            db.execute("COMMIT")
            inserts += 1
        elapsed = time.monotonic() - start
        stored = db.execute("SELECT count(*) FROM bench_writes").fetchone()[0]
        if stored != inserts:
            sys.exit(f"sqlite_ref: {inserts} inserts but {stored} rows")
    finally:
        db.close()
    print(json.dumps({"inserts": inserts, "seconds": round(elapsed, 3), "rate": inserts / elapsed,
                      "sqlite_version": sqlite3.sqlite_version}))


if __name__ == "__main__":
    main()
