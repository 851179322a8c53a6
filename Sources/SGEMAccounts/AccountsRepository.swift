import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Every SQL statement of the accounts module, in domain terms. Methods take the store's
/// `Database` so that callers compose several of them in one read or one write transaction; a
/// second backend implements the same methods. Timestamps are INTEGER milliseconds since the
/// epoch (`Timestamp.milliseconds` when binding, `Row.timestamp` when reading).
struct AccountsRepository: Sendable {
    /// The columns `UserRecord.init(row:)` reads by position: every SELECT of users starts with them, in this order.
    static let userColumns = """
        id, username, email, display_name, role, active, position, phone, twitter, linkedin, bio, status, country,
        language, notifications_enabled, avatar_version, created_at, last_login_at, must_change_password, language_chosen
        """

    // MARK: Users

    func user(_ db: Database, id: Int64) throws -> UserRecord? {
        try db.queryOne("SELECT \(Self.userColumns) FROM accounts_users WHERE id = ?", id).map(UserRecord.init(row:))
    }

    /// The users among `ids` (active or not), in one statement per 500 ids.
    func users(_ db: Database, ids: [Int64]) throws -> [UserRecord] {
        var out: [UserRecord] = []
        var start = 0
        while start < ids.count {
            let chunk = Array(ids[start..<min(ids.count, start + 500)])
            start += chunk.count
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            out += try db.query("SELECT \(Self.userColumns) FROM accounts_users WHERE id IN (\(marks))",
                                bindings: chunk.map { $0 as any SQLBindable }).map(UserRecord.init(row:))
        }
        return out
    }

    /// The user whose username or lowercased email is `key`, with the stored password hash.
    func userWithPasswordHash(_ db: Database, login key: String) throws -> (UserRecord, String)? {
        try db.queryOne("SELECT \(Self.userColumns), password_hash FROM accounts_users WHERE username = ? OR email_lower = ? LIMIT 1", key, key)
            .map { (UserRecord(row: $0), $0.string("password_hash") ?? "") }
    }

    /// The distinct parameter parts (`scrypt$17$8$1`) of the stored password hashes: each hash
    /// without its last `saltAndKeyLength` characters. One scan of a table of a company's users.
    func passwordHashParameters(_ db: Database, saltAndKeyLength: Int) throws -> [String] {
        try db.query("SELECT DISTINCT substr(password_hash, 1, length(password_hash) - ?) AS parameters FROM accounts_users",
                     saltAndKeyLength).compactMap { $0.string("parameters") }
    }

    /// Users of whom every one of `words` (folded by `SearchKey.queryWords`) starts a search
    /// word (`accounts_user_words`), filtered by `status` (active, inactive, all), by folded name
    /// then username, after the user `after` (a keyset cursor), at most `limit`.
    func users(_ db: Database, words: [String], status: String, after: UserCursor?, limit: Int) throws -> [UserRecord] {
        let activeFilter: Int64 = status == "inactive" ? 0 : 1
        // One fixed fragment per query word (at most 8), each bound to its own values.
        let wordFilters = String(repeating: " AND id IN (SELECT user_id FROM accounts_user_words WHERE word >= ? AND word < ?)", count: words.count)
        var bindings: [any SQLBindable] = [status, activeFilter]
        for word in words { bindings += [word, SearchKey.upperBound(ofPrefix: word)] }
        bindings += [after?.nameKey, after?.nameKey, after?.nameKey, after?.username, limit] as [any SQLBindable]
        return try db.query("""
            SELECT \(Self.userColumns) FROM accounts_users
            WHERE (? = 'all' OR active = ?)\(wordFilters)
              AND (? IS NULL OR name_key > ? OR (name_key = ? AND username > ?))
            ORDER BY name_key, username LIMIT ?
            """, bindings: bindings).map(UserRecord.init(row:))
    }

    /// Rewrites the search words of `userID` from its name, position, username and email.
    func refreshSearchWords(_ db: Database, userID: Int64) throws {
        try db.execute("DELETE FROM accounts_user_words WHERE user_id = ?", userID)
        guard let row = try db.queryOne("SELECT display_name, position, username, email_lower FROM accounts_users WHERE id = ?", userID)
        else { return }
        let words = SearchKey.words(of: [row.string("display_name") ?? "", row.string("position") ?? ""],
                                    whole: [row.string("username") ?? "", row.string("email_lower") ?? ""])
        for word in words {
            try db.execute("INSERT INTO accounts_user_words (word, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING", word, userID)
        }
    }

    /// Where the listing stands after the user `id`; nil when there is no such user.
    func cursor(_ db: Database, after id: Int64) throws -> UserCursor? {
        try db.queryOne("SELECT name_key, username FROM accounts_users WHERE id = ?", id).map {
            UserCursor(nameKey: $0.string("name_key") ?? "", username: $0.string("username") ?? "")
        }
    }

    /// The company-wide number of users and of active ones. Counted as all minus the inactive
    /// (an index range, usually short), not by summing every row.
    func userCounts(_ db: Database) throws -> (total: Int, active: Int) {
        let counts = try db.queryOne("""
            SELECT (SELECT COUNT(*) FROM accounts_users) AS total, (SELECT COUNT(*) FROM accounts_users WHERE active = 0) AS inactive
            """)
        let total = counts?.int("total") ?? 0
        return (total, total - (counts?.int("inactive") ?? 0))
    }

    func usersCreated(_ db: Database, after time: Timestamp) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM accounts_users WHERE created_at > ?", time.milliseconds)?.int("n") ?? 0
    }

    func activeAdminIDs(_ db: Database) throws -> [Int64] {
        try db.query("SELECT id FROM accounts_users WHERE role = 'admin' AND active = 1 ORDER BY id").compactMap { $0.int64("id") }
    }

    /// Active admins other than `userID`.
    func otherActiveAdminCount(_ db: Database, besides userID: Int64) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM accounts_users WHERE role = 'admin' AND active = 1 AND id != ?", userID)?.int("n") ?? 0
    }

    func isUsernameTaken(_ db: Database, _ username: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM accounts_users WHERE username = ?", username) != nil
    }

    /// Whether another user than `exceptUserID` has the (lowercased) email address.
    func isEmailTaken(_ db: Database, _ emailLower: String, exceptUserID: Int64? = nil) throws -> Bool {
        try db.queryOne("SELECT 1 FROM accounts_users WHERE email_lower = ? AND (? IS NULL OR id != ?)",
                        emailLower, exceptUserID, exceptUserID) != nil
    }

    /// Inserts an active user and returns its id.
    func insertUser(_ db: Database, username: String, email: String, displayName: String, role: UserRole, language: AccountLanguage,
                    passwordHash: String, mustChangePassword: Bool, createdAt: Timestamp, lastLoginAt: Timestamp?) throws -> Int64 {
        let row = try db.queryOne("""
            INSERT INTO accounts_users (username, email, email_lower, password_hash, role, active, display_name, name_key,
                                        language, language_chosen, must_change_password, created_at, last_login_at)
            VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, username, email, email.lowercased(), passwordHash, role.rawValue, displayName, SearchKey.fold(displayName),
            language.code, language.chosen, mustChangePassword, createdAt.milliseconds, lastLoginAt?.milliseconds)
        return row?.int64("id") ?? db.lastInsertRowID
    }

    /// The role, active flag and email of a user, for checks before a change.
    func userState(_ db: Database, id: Int64) throws -> (role: UserRole, active: Bool, emailLower: String)? {
        try db.queryOne("SELECT role, active, email_lower FROM accounts_users WHERE id = ?", id).map {
            (UserRole(rawValue: $0.string("role") ?? "") ?? .employee, $0.bool("active") ?? false, $0.string("email_lower") ?? "")
        }
    }

    /// Sets columns of one user; column names come from this module's constants only.
    func update(_ db: Database, userID: Int64, _ changes: [ColumnChange]) throws {
        guard !changes.isEmpty else { return }
        let assignments = changes.map { "\($0.column) = ?" }.joined(separator: ", ")
        try db.execute("UPDATE accounts_users SET \(assignments) WHERE id = ?",
                       bindings: changes.map { $0.value as any SQLBindable } + [userID as any SQLBindable])
    }

    func setPasswordHash(_ db: Database, userID: Int64, _ hash: String) throws {
        try db.execute("UPDATE accounts_users SET password_hash = ? WHERE id = ?", hash, userID)
    }

    /// Sets a new password hash and whether the person must replace it before anything else.
    func setPassword(_ db: Database, userID: Int64, hash: String, mustChange: Bool) throws {
        try db.execute("UPDATE accounts_users SET password_hash = ?, must_change_password = ? WHERE id = ?", hash, mustChange, userID)
    }

    /// The display name of the first active admin (by id: usually whoever set the company up)
    /// whose display name is not their username, so the login screen names no login; nil when none.
    func passwordHelpAdminName(_ db: Database) throws -> String? {
        try db.queryOne("""
            SELECT display_name FROM accounts_users
            WHERE role = 'admin' AND active = 1 AND lower(display_name) != username AND lower(display_name) != email_lower
            ORDER BY id LIMIT 1
            """)?.string("display_name")
    }

    func setLastLogin(_ db: Database, userID: Int64, at time: Timestamp) throws {
        try db.execute("UPDATE accounts_users SET last_login_at = ? WHERE id = ?", time.milliseconds, userID)
    }

    // MARK: Sessions

    /// Stores `session` for `userID`.
    func insertSession(_ db: Database, _ session: NewSession, userID: Int64, ip: String?, userAgent: String?) throws {
        try db.execute("""
            INSERT INTO accounts_sessions (user_id, token_digest, csrf_digest, created_at, last_used_at, expires_at, ip, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, userID, session.tokenDigest, session.csrfDigest, session.createdAt, session.createdAt, session.expiresAt, ip, userAgent)
    }

    /// The session whose token has `digest`, with its user's name, role and active flag.
    func session(_ db: Database, tokenDigest digest: String) throws -> StoredSession? {
        try db.queryOne("""
            SELECT s.id, s.user_id, s.csrf_digest, s.created_at, s.last_used_at, s.expires_at, u.username, u.role, u.active,
                   u.must_change_password
            FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id WHERE s.token_digest = ?
            """, digest).flatMap { row in
            guard let id = row.int64("id"), let userID = row.int64("user_id") else { return nil }
            return StoredSession(id: id, userID: userID, csrfDigest: row.string("csrf_digest") ?? "",
                                 createdAt: row.int64("created_at") ?? 0, lastUsedAt: row.int64("last_used_at") ?? 0,
                                 expiresAt: row.int64("expires_at") ?? 0, username: row.string("username") ?? "",
                                 role: UserRole(rawValue: row.string("role") ?? "") ?? .employee, userActive: row.bool("active") ?? false,
                                 mustChangePassword: row.bool("must_change_password") ?? false)
        }
    }

    /// Records a use of the session and its new expiry (both epoch milliseconds).
    func renewSession(_ db: Database, id: Int64, usedAt: Int64, expiresAt: Int64) throws {
        try db.execute("UPDATE accounts_sessions SET last_used_at = ?, expires_at = ? WHERE id = ?", usedAt, expiresAt, id)
    }

    func deleteSession(_ db: Database, id: Int64) throws {
        try db.execute("DELETE FROM accounts_sessions WHERE id = ?", id)
    }

    /// Ends every session of `userID` except `keep` (nil: all).
    func deleteSessions(_ db: Database, userID: Int64, except keep: Int64? = nil) throws {
        try db.execute("DELETE FROM accounts_sessions WHERE user_id = ? AND (? IS NULL OR id != ?)", userID, keep, keep)
    }

    /// Removes sessions expired at `now` (epoch milliseconds), of one user or of everyone; returns how many.
    @discardableResult
    func deleteExpiredSessions(_ db: Database, now: Int64, userID: Int64? = nil) throws -> Int {
        try db.execute("DELETE FROM accounts_sessions WHERE expires_at <= ? AND (? IS NULL OR user_id = ?)", now, userID, userID)
        return db.changes
    }

    // MARK: Avatars

    /// Gives the user a new avatar version and returns it.
    func nextAvatarVersion(_ db: Database, userID: Int64) throws -> Int64 {
        guard let version = try db.queryOne("""
            UPDATE accounts_users SET avatar_counter = avatar_counter + 1, avatar_version = avatar_counter + 1
            WHERE id = ? RETURNING avatar_version
            """, userID)?.int64("avatar_version") else { throw APIError.notFound("no such user") }
        return version
    }

    func saveAvatar(_ db: Database, userID: Int64, contentType: String, data: [UInt8], version: Int64, etag: String) throws {
        try db.execute("""
            INSERT INTO accounts_avatars (user_id, content_type, data, version, etag) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET content_type = excluded.content_type, data = excluded.data,
                                                version = excluded.version, etag = excluded.etag
            """, userID, contentType, data, version, etag)
    }

    func deleteAvatar(_ db: Database, userID: Int64) throws {
        try db.execute("UPDATE accounts_users SET avatar_version = NULL WHERE id = ?", userID)
        try db.execute("DELETE FROM accounts_avatars WHERE user_id = ?", userID)
    }

    func avatar(_ db: Database, userID: Int64) throws -> StoredAvatar? {
        try db.queryOne("SELECT content_type, data, version, etag FROM accounts_avatars WHERE user_id = ?", userID).map {
            StoredAvatar(contentType: $0.string("content_type") ?? "application/octet-stream", data: $0.blob("data") ?? [],
                         version: $0.int64("version") ?? 0, etag: $0.string("etag") ?? "")
        }
    }

    // MARK: Audit

    func appendAudit(_ db: Database, at time: Timestamp, event: String, actorID: Int64?, targetID: Int64?, login: String?,
                     ip: String?, detail: String?) throws {
        try db.execute("INSERT INTO accounts_audit (at, event, actor_id, target_id, login, ip, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       time.milliseconds, event, actorID, targetID, login, ip, detail)
    }

    /// Newest first, ids below `before`; only the events `events` names when given (each an
    /// exact name, `holiday.approved`, or a kind, `holiday`, which keeps every `holiday.…`), only
    /// events `userID` did or underwent when given.
    func auditPage(_ db: Database, before: Int64?, limit: Int, events: [String] = [], userID: Int64? = nil) throws -> [AuditEntry] {
        var bindings: [any SQLBindable] = [before ?? Int64.max]
        var eventClause = ""
        if !events.isEmpty {
            // A kind compares the name's first characters with `kind.`: no LIKE pattern to escape,
            // and the same answer under any collation (a text range would not be on PostgreSQL).
            let each = events.map { filter -> String in
                if filter.contains(".") { bindings.append(filter); return "a.event = ?" }
                bindings.append((filter + ".").utf8.count); bindings.append(filter + ".")
                return "substr(a.event, 1, ?) = ?"
            }
            eventClause = " AND (" + each.joined(separator: " OR ") + ")"
        }
        var userClause = ""
        if let userID { userClause = " AND (a.actor_id = ? OR a.target_id = ?)"; bindings += [userID, userID] }
        bindings.append(limit)
        return try db.query("""
            SELECT a.id, a.at, a.event, a.actor_id, au.username AS actor_username, a.target_id, tu.username AS target_username,
                   a.login, a.ip, a.detail
            FROM accounts_audit a
            LEFT JOIN accounts_users au ON au.id = a.actor_id
            LEFT JOIN accounts_users tu ON tu.id = a.target_id
            WHERE a.id < ?\(eventClause)\(userClause)
            ORDER BY a.id DESC LIMIT ?
            """, bindings: bindings).map { row in
            AuditEntry(id: row.int64("id") ?? 0, at: row.timestamp("at"), event: row.string("event") ?? "",
                       actorID: row.int64("actor_id"), actorUsername: row.string("actor_username"),
                       targetID: row.int64("target_id"), targetUsername: row.string("target_username"),
                       login: row.string("login"), ip: row.string("ip"), detail: row.string("detail"))
        }
    }

    /// Every event name the log holds.
    func auditEventNames(_ db: Database) throws -> [String] {
        try db.query("SELECT DISTINCT event FROM accounts_audit").compactMap { $0.string("event") }
    }

    // MARK: Setup

    /// Whether any admin is active.
    func hasActiveAdmin(_ db: Database) throws -> Bool {
        try db.queryOne("SELECT 1 FROM accounts_users WHERE role = 'admin' AND active = 1 LIMIT 1") != nil
    }
}

/// A position in the directory's order (display name, then username).
struct UserCursor: Sendable {
    let nameKey: String
    let username: String
}

/// A session row with what authentication needs of its user. Times are epoch milliseconds.
struct StoredSession: Sendable {
    let id: Int64
    let userID: Int64
    let csrfDigest: String
    let createdAt: Int64
    let lastUsedAt: Int64
    let expiresAt: Int64
    let username: String
    let role: UserRole
    let userActive: Bool
    /// The password was generated or reset: only setting a new one is allowed.
    let mustChangePassword: Bool
}

/// A stored profile picture.
struct StoredAvatar: Sendable {
    let contentType: String
    let data: [UInt8]
    let version: Int64
    let etag: String
}

/// One security event of the audit log.
struct AuditEntry: Sendable {
    let id: Int64
    let at: Timestamp?
    let event: String
    let actorID: Int64?
    let actorUsername: String?
    let targetID: Int64?
    let targetUsername: String?
    let login: String?
    let ip: String?
    let detail: String?

    /// The API's form: times as RFC 3339 UTC strings.
    var json: JSONValue {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func int(_ v: Int64?) -> JSONValue { v.map { .number(Double($0)) } ?? .null }
        return [
            "id": int(id), "at": text(at?.rfc3339()), "event": .string(event),
            "actorId": int(actorID), "actorUsername": text(actorUsername),
            "targetId": int(targetID), "targetUsername": text(targetUsername),
            "login": text(login), "ip": text(ip), "detail": text(detail),
        ]
    }
}
