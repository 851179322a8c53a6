import SGEMCore
import SGEMStore
import SGEMSupport

/// A column change of `accounts_users`; column names come from `AccountsRepository` only.
typealias ColumnChange = (column: String, value: SQLValue)

/// Every SQL statement of the accounts module, in domain terms, written once for SQLite and
/// PostgreSQL. The static methods take the caller's `Database` so that a service composes several
/// of them in one read or one write transaction; the instance methods are single reads and writes
/// of their own. Timestamps are INTEGER (BIGINT) milliseconds since the epoch.
struct AccountsRepository: Sendable {
    let store: Store

    /// The columns `UserRecord.init(row:)` reads by position: every SELECT of users starts with them, in this order.
    static let userColumns: SQL = """
        id, username, email, display_name, role, active, position, phone, twitter, linkedin, bio, status, country, \
        language, notifications_enabled, avatar_version, created_at, last_login_at, must_change_password, language_chosen
        """

    // MARK: Reads and writes of their own

    func user(id: Int64) async throws -> UserRecord? {
        try await store.read { db in try AccountsRepository.user(id: id, in: db) }
    }

    /// The users among `ids` (active or not).
    func users(ids: [Int64]) async throws -> [UserRecord] {
        try await store.read { db in try AccountsRepository.users(ids: ids, in: db) }
    }

    func userWithPasswordHash(login key: String) async throws -> (UserRecord, String)? {
        try await store.read { db in try AccountsRepository.userWithPasswordHash(login: key, in: db) }
    }

    func activeAdminIDs() async throws -> [Int64] {
        try await store.read { db in try AccountsRepository.activeAdminIDs(in: db) }
    }

    func userCounts() async throws -> (total: Int, active: Int) {
        try await store.read { db in try AccountsRepository.userCounts(in: db) }
    }

    func usersCreated(after time: Timestamp) async throws -> Int {
        try await store.read { db in try AccountsRepository.usersCreated(after: time, in: db) }
    }

    // MARK: Users

    static func user(id: Int64, in db: Database) throws -> UserRecord? {
        try db.fetchOne(UserRecord.self, "SELECT \(userColumns) FROM accounts_users WHERE id = \(id)")
    }

    /// The users among `ids` (active or not), in one statement per 500 ids.
    static func users(ids: [Int64], in db: Database) throws -> [UserRecord] {
        try stride(from: 0, to: ids.count, by: 500).flatMap { start in
            let chunk = Array(ids[start..<min(ids.count, start + 500)])
            return try db.fetchAll(UserRecord.self, "SELECT \(userColumns) FROM accounts_users WHERE id IN \(list: chunk)")
        }
    }

    /// The user whose username or lowercased email is `key`, with the stored password hash.
    static func userWithPasswordHash(login key: String, in db: Database) throws -> (UserRecord, String)? {
        try db.fetchOne(UserWithPasswordHash.self, """
            SELECT \(userColumns), password_hash FROM accounts_users WHERE username = \(key) OR email_lower = \(key) LIMIT 1
            """).map { ($0.user, $0.passwordHash) }
    }

    /// The distinct parameter parts (`scrypt$17$8$1`) of the stored password hashes: each hash
    /// without its last `saltAndKeyLength` characters. One scan of a table of a company's users.
    static func passwordHashParameters(saltAndKeyLength: Int, in db: Database) throws -> [String] {
        try db.fetchAll("""
            SELECT DISTINCT substr(password_hash, 1, length(password_hash) - \(saltAndKeyLength)) AS parameters FROM accounts_users
            """).compactMap { $0.string("parameters") }
    }

    /// Users of whom every one of `words` (folded by `SearchKey.queryWords`) starts a search
    /// word (`accounts_user_words`), filtered by `status` (active, inactive, all), by folded name
    /// then username, after the user `after` (a keyset cursor), at most `limit`. Words and keys
    /// compare as bytes on both backends (PostgreSQL's columns are `COLLATE "C"`).
    static func users(words: [String], status: UserStatusFilter, after: UserCursor?, limit: Int, in db: Database) throws -> [UserRecord] {
        var conditions: [SQL] = []
        switch status {
        case .active: conditions.append("active = 1")
        case .inactive: conditions.append("active = 0")
        case .all: break
        }
        // One fixed fragment per query word (at most 8), each an index range.
        for word in words {
            conditions.append("""
                id IN (SELECT user_id FROM accounts_user_words WHERE word >= \(word) AND word < \(SearchKey.upperBound(ofPrefix: word)))
                """)
        }
        if let after {
            conditions.append("(name_key > \(after.nameKey) OR (name_key = \(after.nameKey) AND username > \(after.username)))")
        }
        let filter: SQL = conditions.isEmpty ? "" : "WHERE \(conditions.joined(separator: " AND "))"
        return try db.fetchAll(UserRecord.self, """
            SELECT \(userColumns) FROM accounts_users \(filter) ORDER BY name_key, username LIMIT \(limit)
            """)
    }

    /// Rewrites the search words of `userID` from its name, position, username and email.
    static func refreshSearchWords(userID: Int64, in db: Database) throws {
        try db.run("DELETE FROM accounts_user_words WHERE user_id = \(userID)")
        guard let row = try db.fetchOne("SELECT display_name, position, username, email_lower FROM accounts_users WHERE id = \(userID)")
        else { return }
        let words = SearchKey.words(of: [row.string("display_name") ?? "", row.string("position") ?? ""],
                                    whole: [row.string("username") ?? "", row.string("email_lower") ?? ""])
        guard !words.isEmpty else { return }
        let values = words.sorted().map { word -> SQL in "(\(word), \(userID))" }.joined(separator: ", ")
        try db.run("INSERT INTO accounts_user_words (word, user_id) VALUES \(values) ON CONFLICT DO NOTHING")
    }

    /// Where the listing stands after the user `id`; nil when there is no such user.
    static func cursor(after id: Int64, in db: Database) throws -> UserCursor? {
        try db.fetchOne(UserCursor.self, "SELECT name_key, username FROM accounts_users WHERE id = \(id)")
    }

    /// The company-wide number of users and of active ones. Counted as all minus the inactive
    /// (an index range, usually short), not by summing every row.
    static func userCounts(in db: Database) throws -> (total: Int, active: Int) {
        let counts = try db.fetchOne("""
            SELECT (SELECT COUNT(*) FROM accounts_users) AS total, (SELECT COUNT(*) FROM accounts_users WHERE active = 0) AS inactive
            """)
        let total = counts?.int("total") ?? 0
        return (total, total - (counts?.int("inactive") ?? 0))
    }

    static func usersCreated(after time: Timestamp, in db: Database) throws -> Int {
        try db.fetchOne("SELECT COUNT(*) AS n FROM accounts_users WHERE created_at > \(time.milliseconds)")?.int("n") ?? 0
    }

    static func activeAdminIDs(in db: Database) throws -> [Int64] {
        try db.fetchAll("SELECT id FROM accounts_users WHERE role = 'admin' AND active = 1 ORDER BY id").compactMap { $0.int64("id") }
    }

    /// Active admins other than `userID`.
    static func otherActiveAdminCount(besides userID: Int64, in db: Database) throws -> Int {
        try db.fetchOne("SELECT COUNT(*) AS n FROM accounts_users WHERE role = 'admin' AND active = 1 AND id != \(userID)")?.int("n") ?? 0
    }

    static func isUsernameTaken(_ username: String, in db: Database) throws -> Bool {
        try db.fetchOne("SELECT 1 AS taken FROM accounts_users WHERE username = \(username)") != nil
    }

    /// Whether another user than `exceptUserID` has the (lowercased) email address.
    static func isEmailTaken(_ emailLower: String, exceptUserID: Int64? = nil, in db: Database) throws -> Bool {
        var sql: SQL = "SELECT 1 AS taken FROM accounts_users WHERE email_lower = \(emailLower)"
        if let exceptUserID { sql = sql + " AND id != \(exceptUserID)" }
        return try db.fetchOne(sql) != nil
    }

    /// Inserts an active user and returns its id.
    static func insertUser(username: String, email: String, displayName: String, role: UserRole, language: AccountLanguage,
                           passwordHash: String, mustChangePassword: Bool, createdAt: Timestamp, lastLoginAt: Timestamp?,
                           in db: Database) throws -> Int64 {
        try insertedID(db.fetchOne("""
            INSERT INTO accounts_users (username, email, email_lower, password_hash, role, active, display_name, name_key,
                                        language, language_chosen, must_change_password, created_at, last_login_at)
            VALUES (\(username), \(email), \(email.lowercased()), \(passwordHash), \(role.rawValue), 1, \(displayName),
                    \(SearchKey.fold(displayName)), \(language.code), \(language.chosen), \(mustChangePassword),
                    \(createdAt.milliseconds), \(lastLoginAt?.milliseconds))
            RETURNING id
            """))
    }

    /// The role, active flag and email of a user, for checks before a change.
    static func userState(id: Int64, in db: Database) throws -> (role: UserRole, active: Bool, emailLower: String)? {
        try db.fetchOne("SELECT role, active, email_lower FROM accounts_users WHERE id = \(id)").map {
            (UserRole(rawValue: $0.string("role") ?? "") ?? .employee, $0.bool("active") ?? false, $0.string("email_lower") ?? "")
        }
    }

    /// Applies a profile edit and, for admins, a new role and active flag to one user.
    static func update(userID: Int64, _ profile: ProfileChanges, role: UserRole? = nil, active: Bool? = nil, in db: Database) throws {
        var changes: [ColumnChange] = []
        if let name = profile.displayName {
            changes.append(("display_name", .text(name)))
            changes.append(("name_key", .text(SearchKey.fold(name))))
        }
        for (field, value) in profile.fields {
            guard let column = profileColumns[field.json] else { continue }
            changes.append((column, value.map(SQLValue.text) ?? .null))
        }
        if let language = profile.language {
            changes.append(("language", .text(language)))
            changes.append(("language_chosen", .integer(1)))
        }
        if let enabled = profile.notificationsEnabled { changes.append(("notifications_enabled", .integer(enabled ? 1 : 0))) }
        if let email = profile.email {
            changes.append(("email", .text(email)))
            changes.append(("email_lower", .text(email.lowercased())))
        }
        if let role { changes.append(("role", .text(role.rawValue))) }
        if let active { changes.append(("active", .integer(active ? 1 : 0))) }
        try update(userID: userID, changes, in: db)
    }

    /// The column of each profile field (`ProfileField.all`).
    static let profileColumns = ["position": "position", "phone": "phone", "twitter": "twitter", "linkedin": "linkedin", "bio": "bio",
                                 "status": "status", "country": "country"]

    /// Sets columns of one user; column names come from this type's constants only.
    static func update(userID: Int64, _ changes: [ColumnChange], in db: Database) throws {
        guard !changes.isEmpty else { return }
        let assignments = changes.map { change -> SQL in "\(raw: change.column) = \(change.value)" }.joined(separator: ", ")
        try db.run("UPDATE accounts_users SET \(assignments) WHERE id = \(userID)")
    }

    static func setPasswordHash(userID: Int64, _ hash: String, in db: Database) throws {
        try db.run("UPDATE accounts_users SET password_hash = \(hash) WHERE id = \(userID)")
    }

    /// Sets a new password hash and whether the person must replace it before anything else.
    static func setPassword(userID: Int64, hash: String, mustChange: Bool, in db: Database) throws {
        try db.run("UPDATE accounts_users SET password_hash = \(hash), must_change_password = \(mustChange) WHERE id = \(userID)")
    }

    /// The display name of the first active admin (by id: usually whoever set the company up)
    /// whose display name is not their username nor their email address, ignoring ASCII case, so
    /// the login screen names no login; nil when none. Compared here rather than with SQL's
    /// `lower()`, which folds ASCII only on SQLite but by the database's locale on PostgreSQL.
    static func passwordHelpAdminName(in db: Database) throws -> String? {
        let admins = try db.fetchAll("""
            SELECT display_name, username, email_lower FROM accounts_users WHERE role = 'admin' AND active = 1 ORDER BY id
            """)
        for admin in admins {
            guard let name = admin.string("display_name") else { continue }
            let folded = asciiLowercased(name)
            if !folded.elementsEqual((admin.string("username") ?? "").utf8), !folded.elementsEqual((admin.string("email_lower") ?? "").utf8) {
                return name
            }
        }
        return nil
    }

    /// The UTF-8 bytes of `text` with A–Z lowercased, as SQLite's `lower()` does.
    private static func asciiLowercased(_ text: String) -> [UInt8] {
        text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
    }

    static func setLastLogin(userID: Int64, at time: Timestamp, in db: Database) throws {
        try db.run("UPDATE accounts_users SET last_login_at = \(time.milliseconds) WHERE id = \(userID)")
    }

    // MARK: Sessions

    /// Stores `session` for `userID`.
    static func insertSession(_ session: NewSession, userID: Int64, ip: String?, userAgent: String?, in db: Database) throws {
        try db.run("""
            INSERT INTO accounts_sessions (user_id, token_digest, csrf_digest, created_at, last_used_at, expires_at, ip, user_agent)
            VALUES (\(userID), \(session.tokenDigest), \(session.csrfDigest), \(session.createdAt), \(session.createdAt),
                    \(session.expiresAt), \(ip), \(userAgent))
            """)
    }

    /// The session whose token has `digest`, with its user's name, role and active flag.
    static func session(tokenDigest digest: String, in db: Database) throws -> StoredSession? {
        try db.fetchOne(StoredSession.self, """
            SELECT s.id, s.user_id, s.csrf_digest, s.created_at, s.last_used_at, s.expires_at, u.username, u.role, u.active,
                   u.must_change_password
            FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id WHERE s.token_digest = \(digest)
            """)
    }

    /// Records a use of the session and its new expiry (both epoch milliseconds).
    static func renewSession(id: Int64, usedAt: Int64, expiresAt: Int64, in db: Database) throws {
        try db.run("UPDATE accounts_sessions SET last_used_at = \(usedAt), expires_at = \(expiresAt) WHERE id = \(id)")
    }

    static func deleteSession(id: Int64, in db: Database) throws {
        try db.run("DELETE FROM accounts_sessions WHERE id = \(id)")
    }

    /// Ends every session of `userID` except `keep` (nil: all).
    static func deleteSessions(userID: Int64, except keep: Int64? = nil, in db: Database) throws {
        var sql: SQL = "DELETE FROM accounts_sessions WHERE user_id = \(userID)"
        if let keep { sql = sql + " AND id != \(keep)" }
        try db.run(sql)
    }

    /// Removes sessions expired at `now` (epoch milliseconds), of one user or of everyone; returns how many.
    @discardableResult
    static func deleteExpiredSessions(now: Int64, userID: Int64? = nil, in db: Database) throws -> Int {
        var sql: SQL = "DELETE FROM accounts_sessions WHERE expires_at <= \(now)"
        if let userID { sql = sql + " AND user_id = \(userID)" }
        try db.run(sql)
        return try db.changes
    }

    // MARK: Avatars

    /// Gives the user a new avatar version and returns it.
    static func nextAvatarVersion(userID: Int64, in db: Database) throws -> Int64 {
        guard let version = try db.fetchOne("""
            UPDATE accounts_users SET avatar_counter = avatar_counter + 1, avatar_version = avatar_counter + 1
            WHERE id = \(userID) RETURNING avatar_version
            """)?.int64("avatar_version") else { throw AccountsError.userNotFound }
        return version
    }

    static func saveAvatar(userID: Int64, contentType: String, data: [UInt8], version: Int64, etag: String, in db: Database) throws {
        try db.run("""
            INSERT INTO accounts_avatars (user_id, content_type, data, version, etag)
            VALUES (\(userID), \(contentType), \(data), \(version), \(etag))
            \(upsertOn: ["user_id"], update: ["content_type", "data", "version", "etag"])
            """)
    }

    static func deleteAvatar(userID: Int64, in db: Database) throws {
        try db.run("UPDATE accounts_users SET avatar_version = NULL WHERE id = \(userID)")
        try db.run("DELETE FROM accounts_avatars WHERE user_id = \(userID)")
    }

    static func avatar(userID: Int64, in db: Database) throws -> StoredAvatar? {
        try db.fetchOne(StoredAvatar.self, "SELECT content_type, data, version, etag FROM accounts_avatars WHERE user_id = \(userID)")
    }

    // MARK: Audit

    static func appendAudit(at time: Timestamp, event: String, actorID: Int64?, targetID: Int64?, login: String?,
                            ip: String?, detail: String?, in db: Database) throws {
        try db.run("""
            INSERT INTO accounts_audit (at, event, actor_id, target_id, login, ip, detail)
            VALUES (\(time.milliseconds), \(event), \(actorID), \(targetID), \(login), \(ip), \(detail))
            """)
    }

    /// Newest first, ids below `before`; only the events `events` names when given (each an
    /// exact name, `holiday.approved`, or a kind, `holiday`, which keeps every `holiday.…`), only
    /// events `userID` did or underwent when given.
    static func auditPage(before: Int64?, limit: Int, events: [String] = [], userID: Int64? = nil, in db: Database) throws -> [AuditEntry] {
        var conditions: [SQL] = ["a.id < \(before ?? Int64.max)"]
        if !events.isEmpty {
            // A kind compares the name's first characters with `kind.`: no LIKE pattern to escape,
            // and the same answer under any collation (a text range would not be on PostgreSQL).
            let each = events.map { filter -> SQL in
                filter.contains(".") ? "a.event = \(filter)" : "substr(a.event, 1, \((filter + ".").utf8.count)) = \(filter + ".")"
            }
            conditions.append("(\(each.joined(separator: " OR ")))")
        }
        if let userID { conditions.append("(a.actor_id = \(userID) OR a.target_id = \(userID))") }
        return try db.fetchAll(AuditEntry.self, """
            SELECT a.id, a.at, a.event, a.actor_id, au.username AS actor_username, a.target_id, tu.username AS target_username,
                   a.login, a.ip, a.detail
            FROM accounts_audit a
            LEFT JOIN accounts_users au ON au.id = a.actor_id
            LEFT JOIN accounts_users tu ON tu.id = a.target_id
            WHERE \(conditions.joined(separator: " AND "))
            ORDER BY a.id DESC LIMIT \(limit)
            """)
    }

    /// Every event name the log holds.
    static func auditEventNames(in db: Database) throws -> [String] {
        try db.fetchAll("SELECT DISTINCT event FROM accounts_audit").compactMap { $0.string("event") }
    }

    // MARK: Setup

    /// Whether any admin is active.
    static func hasActiveAdmin(in db: Database) throws -> Bool {
        try db.fetchOne("SELECT 1 AS found FROM accounts_users WHERE role = 'admin' AND active = 1 LIMIT 1") != nil
    }

    /// The id an `INSERT … RETURNING id` gave its row.
    static func insertedID(_ row: Row?) throws -> Int64 {
        guard let id = row?.int64("id") else {
            throw StoreError(code: .decoding, message: "INSERT … RETURNING id returned no id")
        }
        return id
    }
}

/// A user row with its stored password hash.
private struct UserWithPasswordHash: RowDecodable {
    let user: UserRecord
    let passwordHash: String

    init(row: Row) throws {
        user = UserRecord(row: row)
        passwordHash = try row.required("password_hash", Row.string(_:))
    }
}

/// A position in the directory's order (display name, then username).
struct UserCursor: Sendable, RowDecodable {
    let nameKey: String
    let username: String

    init(nameKey: String, username: String) {
        self.nameKey = nameKey
        self.username = username
    }

    init(row: Row) throws {
        nameKey = try row.required("name_key", Row.string(_:))
        username = try row.required("username", Row.string(_:))
    }
}

/// A session row with what authentication needs of its user. Times are epoch milliseconds.
struct StoredSession: Sendable, RowDecodable {
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

    init(row: Row) throws {
        id = try row.required("id", Row.int64(_:))
        userID = try row.required("user_id", Row.int64(_:))
        csrfDigest = row.string("csrf_digest") ?? ""
        createdAt = row.int64("created_at") ?? 0
        lastUsedAt = row.int64("last_used_at") ?? 0
        expiresAt = row.int64("expires_at") ?? 0
        username = row.string("username") ?? ""
        role = UserRole(rawValue: row.string("role") ?? "") ?? .employee
        userActive = row.bool("active") ?? false
        mustChangePassword = row.bool("must_change_password") ?? false
    }
}

/// A stored profile picture.
struct StoredAvatar: Sendable, RowDecodable {
    let contentType: String
    let data: [UInt8]
    let version: Int64
    let etag: String

    init(row: Row) throws {
        contentType = row.string("content_type") ?? "application/octet-stream"
        data = row.blob("data") ?? []
        version = row.int64("version") ?? 0
        etag = row.string("etag") ?? ""
    }
}

/// One security event of the audit log.
struct AuditEntry: Sendable, RowDecodable {
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

    init(row: Row) throws {
        id = try row.required("id", Row.int64(_:))
        at = row.timestamp("at")
        event = row.string("event") ?? ""
        actorID = row.int64("actor_id")
        actorUsername = row.string("actor_username")
        targetID = row.int64("target_id")
        targetUsername = row.string("target_username")
        login = row.string("login")
        ip = row.string("ip")
        detail = row.string("detail")
    }
}
