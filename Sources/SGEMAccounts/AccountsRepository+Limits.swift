import SGEMCore
import SGEMStore
import SGEMSupport

/// The stored first-run setup token: its SHA-256 (hex) and the token sealed under the secret key.
struct SetupTokenRow: RowDecodable {
    let hash: String
    let sealed: String

    init(row: Row) throws {
        hash = try row.required("token_hash", Row.string)
        sealed = try row.required("sealed", Row.string)
    }
}

extension AccountsRepository {
    static func setupToken(in db: Database) throws -> SetupTokenRow? {
        try db.fetchOne(SetupTokenRow.self, "SELECT token_hash, sealed FROM accounts_setup_token WHERE id = 1")
    }

    /// Stores this token unless one is stored already; returns the stored one.
    static func insertSetupTokenIfNone(hash: String, sealed: String, at time: Timestamp, in db: Database) throws -> SetupTokenRow {
        if let stored = try setupToken(in: db) { return stored }
        try db.run("""
            INSERT INTO accounts_setup_token (id, token_hash, sealed, created_at) VALUES (1, \(hash), \(sealed), \(time.milliseconds))
            """)
        return try setupToken(in: db) ?? SetupTokenRow(hash: hash, sealed: sealed)
    }

    static func replaceSetupToken(hash: String, sealed: String, at time: Timestamp, in db: Database) throws {
        try deleteSetupToken(in: db)
        try db.run("""
            INSERT INTO accounts_setup_token (id, token_hash, sealed, created_at) VALUES (1, \(hash), \(sealed), \(time.milliseconds))
            """)
    }

    static func deleteSetupToken(in db: Database) throws {
        try db.run("DELETE FROM accounts_setup_token")
    }
}

extension SetupTokenRow {
    init(hash: String, sealed: String) {
        self.hash = hash
        self.sealed = sealed
    }
}

/// One row of the shared login throttle.
private struct ThrottleRow: RowDecodable {
    let key: String
    let entry: ThrottleEntry
    let pendingUntil: Int64

    init(row: Row) throws {
        key = try row.required("key", Row.string)
        entry = ThrottleEntry(failures: try row.required("failures", Row.int), pending: try row.required("pending", Row.int),
                              windowStart: try row.required("window_start", Row.int64),
                              lockedUntil: try row.required("locked_until", Row.int64), lastSeen: try row.required("last_seen", Row.int64))
        pendingUntil = try row.required("pending_until", Row.int64)
    }
}

extension AccountsRepository {
    /// The throttle's entries for `keys`; reservations past their lease (an instance that died
    /// mid-attempt) no longer count.
    static func throttleEntries(_ keys: [String], now: Int64, in db: Database) throws -> [String: ThrottleEntry] {
        let rows = try db.fetchAll(ThrottleRow.self, """
            SELECT key, failures, pending, pending_until, window_start, locked_until, last_seen
            FROM accounts_throttle WHERE key IN \(list: keys)
            """)
        var entries: [String: ThrottleEntry] = [:]
        for row in rows {
            var entry = row.entry
            if row.pendingUntil < now { entry.pending = 0 }
            entries[row.key] = entry
        }
        return entries
    }

    static func saveThrottleEntry(_ key: String, _ e: ThrottleEntry, pendingUntil: Int64, in db: Database) throws {
        try db.run("""
            INSERT INTO accounts_throttle (key, failures, pending, pending_until, window_start, locked_until, last_seen)
            VALUES (\(key), \(e.failures), \(e.pending), \(pendingUntil), \(e.windowStart), \(e.lockedUntil), \(e.lastSeen))
            ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, pending = excluded.pending,
              pending_until = excluded.pending_until, window_start = excluded.window_start,
              locked_until = excluded.locked_until, last_seen = excluded.last_seen
            """)
    }

    static func deleteThrottleEntry(_ key: String, in db: Database) throws {
        try db.run("DELETE FROM accounts_throttle WHERE key = \(key)")
    }

    /// Removes entries whose window has passed with no lock running and no live reservation, then
    /// the least recently seen beyond `capacity`; returns how many went.
    static func removeExpiredThrottleEntries(now: Int64, window: Int64, capacity: Int, leaseSeconds: Int64, in db: Database) throws -> Int {
        try db.run("""
            DELETE FROM accounts_throttle
            WHERE (pending = 0 OR pending_until < \(now)) AND locked_until <= \(now) AND \(now) - window_start > \(window)
            """)
        var removed = try db.changes
        try db.run("""
            DELETE FROM accounts_throttle
            WHERE last_seen < (SELECT last_seen FROM accounts_throttle ORDER BY last_seen DESC LIMIT 1 OFFSET \(capacity))
            """)
        removed += try db.changes
        return removed
    }

    /// How many entries the shared throttle holds (for tests and status).
    static func throttleEntryCount(in db: Database) throws -> Int {
        if case .integer(let n) = try db.fetchValue("SELECT COUNT(*) AS n FROM accounts_throttle") { return Int(n) }
        return 0
    }
}
