import SGEMCore
import SGEMStore
import SGEMSupport

/// A device's subscription as stored.
struct PushSubscription: Sendable, Equatable {
    let id: Int64
    let userID: Int64
    let endpoint: String
    /// The receiver's uncompressed P-256 point and auth secret, base64url as the browser gave them.
    let p256dh: String
    let auth: String
    let createdAt: Timestamp

    var json: JSONValue {
        .object([("id", .number(Double(id))), ("endpoint", .string(endpoint)), ("createdAt", .string(createdAt.rfc3339()))])
    }
}

/// One push waiting to go out: its subscription, the clear payload (encrypted when sent, with a
/// fresh key and salt), and when it stops being worth sending.
struct PushDelivery: Sendable, Equatable {
    let id: Int64
    let subscriptionID: Int64
    let payload: String
    let urgency: String
    let ttl: Int
    /// Milliseconds since the epoch.
    let expiresAt: Int64
    let attempts: Int
}

/// All of the push module's SQL: subscriptions, the VAPID key, the worker's cursor and outbox.
enum PushRepository {
    static func registerMigrations(_ migrations: inout MigrationList) {
        // push_keys: the one VAPID key pair, its private half sealed (`Secrets`). push_cursor: the
        // last journal event the worker has turned into deliveries. push_outbox: deliveries not
        // yet answered; a row goes when the push service has answered for good or its TTL passed.
        migrations.add("push.001_subscriptions", sql: """
            CREATE TABLE push_subscriptions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user_id INTEGER NOT NULL,
                endpoint TEXT NOT NULL UNIQUE,
                p256dh TEXT NOT NULL,
                auth TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_error TEXT
            );
            CREATE INDEX push_subscriptions_user ON push_subscriptions (user_id);
            CREATE TABLE push_keys (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                public_key TEXT NOT NULL,
                private_key TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE push_cursor (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                event_id INTEGER NOT NULL
            );
            CREATE TABLE push_outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                subscription_id INTEGER NOT NULL,
                payload TEXT NOT NULL,
                urgency TEXT NOT NULL,
                ttl INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                next_at INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX push_outbox_next ON push_outbox (next_at, id);
            """)
    }

    // MARK: Subscriptions

    private static let columns = "id, user_id, endpoint, p256dh, auth, created_at"

    private static func subscription(_ row: Row) -> PushSubscription? {
        guard let id = row.int64("id"), let user = row.int64("user_id"), let endpoint = row.string("endpoint"),
              let p256dh = row.string("p256dh"), let auth = row.string("auth"), let at = row.timestamp("created_at") else { return nil }
        return PushSubscription(id: id, userID: user, endpoint: endpoint, p256dh: p256dh, auth: auth, createdAt: at)
    }

    static func subscriptions(of userID: Int64, in db: Database) throws -> [PushSubscription] {
        try db.query("SELECT \(columns) FROM push_subscriptions WHERE user_id = ? ORDER BY id", userID).compactMap(subscription)
    }

    static func subscription(_ id: Int64, in db: Database) throws -> PushSubscription? {
        try db.queryOne("SELECT \(columns) FROM push_subscriptions WHERE id = ?", id).flatMap(subscription)
    }

    static func count(of userID: Int64, in db: Database) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM push_subscriptions WHERE user_id = ?", userID)?.int("n") ?? 0
    }

    /// Stores the subscription, or replaces the keys (and owner) of the one with this endpoint;
    /// returns it and whether it is new. Nil when the user already has `cap` others.
    static func upsert(user: Int64, endpoint: String, p256dh: String, auth: String, cap: Int, at time: Timestamp,
                       in db: Database) throws -> (PushSubscription, created: Bool)? {
        if let old = try db.queryOne("SELECT \(columns) FROM push_subscriptions WHERE endpoint = ?", endpoint).flatMap(subscription) {
            if old.userID != user, try count(of: user, in: db) >= cap { return nil }
            try db.execute("UPDATE push_subscriptions SET user_id = ?, p256dh = ?, auth = ?, last_error = NULL WHERE id = ?",
                           user, p256dh, auth, old.id)
            return (PushSubscription(id: old.id, userID: user, endpoint: endpoint, p256dh: p256dh, auth: auth, createdAt: old.createdAt), false)
        }
        guard try count(of: user, in: db) < cap else { return nil }
        try db.execute("INSERT INTO push_subscriptions (user_id, endpoint, p256dh, auth, created_at) VALUES (?, ?, ?, ?, ?)",
                       user, endpoint, p256dh, auth, time)
        return (PushSubscription(id: db.lastInsertRowID, userID: user, endpoint: endpoint, p256dh: p256dh, auth: auth, createdAt: time), true)
    }

    /// Deletes subscription `id` of `user`; false when they have none with that id.
    static func delete(_ id: Int64, of user: Int64, in db: Database) throws -> Bool {
        try db.execute("DELETE FROM push_subscriptions WHERE id = ? AND user_id = ?", id, user)
        guard db.changes > 0 else { return false }
        try db.execute("DELETE FROM push_outbox WHERE subscription_id = ?", id)
        return true
    }

    /// Deletes a subscription the push service said is gone (404, 410), with what waited for it.
    static func delete(_ id: Int64, in db: Database) throws {
        try db.execute("DELETE FROM push_subscriptions WHERE id = ?", id)
        try db.execute("DELETE FROM push_outbox WHERE subscription_id = ?", id)
    }

    static func noteError(_ id: Int64, _ error: String?, in db: Database) throws {
        try db.execute("UPDATE push_subscriptions SET last_error = ? WHERE id = ?", error, id)
    }

    /// The ids of the subscriptions of `users`, by user (one statement per 500 users).
    static func subscriptionIDs(of users: [Int64], in db: Database) throws -> [Int64: [Int64]] {
        var out: [Int64: [Int64]] = [:]
        for start in stride(from: 0, to: users.count, by: 500) {
            let chunk = Array(users[start..<min(start + 500, users.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try db.query("SELECT id, user_id FROM push_subscriptions WHERE user_id IN (\(marks))", bindings: chunk) {
                if let id = row.int64("id"), let user = row.int64("user_id") { out[user, default: []].append(id) }
            }
        }
        return out
    }

    /// Every user with at least one subscription (a company notice's audience).
    static func subscribedUsers(in db: Database) throws -> [Int64] {
        try db.query("SELECT DISTINCT user_id FROM push_subscriptions").compactMap { $0.int64("user_id") }
    }

    // MARK: Keys

    static func keys(in db: Database) throws -> (publicKey: String, sealedPrivateKey: String)? {
        guard let row = try db.queryOne("SELECT public_key, private_key FROM push_keys WHERE id = 1"),
              let pub = row.string("public_key"), let priv = row.string("private_key") else { return nil }
        return (pub, priv)
    }

    /// Stores the key pair unless one is there already (another instance made it first).
    static func insertKeys(publicKey: String, sealedPrivateKey: String, at time: Timestamp, in db: Database) throws {
        try db.execute("INSERT INTO push_keys (id, public_key, private_key, created_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                       publicKey, sealedPrivateKey, time)
    }

    // MARK: Cursor and outbox

    static func cursor(in db: Database) throws -> Int64? {
        try db.queryOne("SELECT event_id FROM push_cursor WHERE id = 1")?.int64("event_id")
    }

    static func setCursor(_ eventID: Int64, in db: Database) throws {
        try db.execute("INSERT INTO push_cursor (id, event_id) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET event_id = excluded.event_id",
                       eventID)
    }

    /// Moves the cursor from `old` to `new`; false when it is no longer at `old` (another
    /// instance on the same database fanned that window out first).
    static func advanceCursor(from old: Int64, to new: Int64, in db: Database) throws -> Bool {
        try db.execute("UPDATE push_cursor SET event_id = ? WHERE id = 1 AND event_id = ?", new, old)
        return db.changes == 1
    }

    /// Takes delivery `id` for this worker until `until` (ms): another instance sees it due only
    /// after that (and so does this one after a crash); false when it was not due at `now`.
    static func lease(_ id: Int64, now: Int64, until: Int64, in db: Database) throws -> Bool {
        try db.execute("UPDATE push_outbox SET next_at = ? WHERE id = ? AND next_at <= ?", until, id, now)
        return db.changes == 1
    }

    static func enqueue(subscription: Int64, payload: String, urgency: String, ttl: Int, now: Int64, in db: Database) throws {
        try db.execute("""
            INSERT INTO push_outbox (subscription_id, payload, urgency, ttl, expires_at, next_at) VALUES (?, ?, ?, ?, ?, ?)
            """, subscription, payload, urgency, ttl, now + Int64(ttl) * 1000, now)
    }

    /// Deliveries due at `now`, oldest first.
    static func due(at now: Int64, limit: Int, in db: Database) throws -> [PushDelivery] {
        try db.query("""
            SELECT id, subscription_id, payload, urgency, ttl, expires_at, attempts FROM push_outbox
            WHERE next_at <= ? ORDER BY next_at, id LIMIT ?
            """, now, limit).compactMap { row in
            guard let id = row.int64("id"), let sub = row.int64("subscription_id"), let payload = row.string("payload"),
                  let urgency = row.string("urgency"), let ttl = row.int("ttl"), let expires = row.int64("expires_at") else { return nil }
            return PushDelivery(id: id, subscriptionID: sub, payload: payload, urgency: urgency, ttl: ttl, expiresAt: expires,
                                attempts: row.int("attempts") ?? 0)
        }
    }

    /// When the next delivery is due; nil when none waits.
    static func nextDue(in db: Database) throws -> Int64? {
        try db.queryOne("SELECT MIN(next_at) AS t FROM push_outbox")?.int64("t")
    }

    static func finish(_ id: Int64, in db: Database) throws {
        try db.execute("DELETE FROM push_outbox WHERE id = ?", id)
    }

    static func retry(_ id: Int64, at time: Int64, in db: Database) throws {
        try db.execute("UPDATE push_outbox SET next_at = ?, attempts = attempts + 1 WHERE id = ?", time, id)
    }

    static func outboxCount(in db: Database) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM push_outbox")?.int("n") ?? 0
    }
}
