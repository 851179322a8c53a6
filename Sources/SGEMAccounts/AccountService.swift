import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Who performs an account change, for the audit log: a user over the API, or the operator at
/// the command line (no user id).
struct Actor: Sendable {
    let userID: Int64?
    let ip: String?

    static let commandLine = Actor(userID: nil, ip: nil)
    static func user(_ id: Int64?, _ request: Request) -> Actor { Actor(userID: id, ip: request.clientAddress) }
}

/// A column change of `accounts_users`; column names come from this module's constants only.
typealias ColumnChange = (column: String, value: SQLValue)

/// The account operations the API and the admin commands share, so both enforce the same rules
/// (unique names, the last active admin, session revocation, the audit log).
final class AccountService: Sendable {
    let store: Store
    let hasher: PasswordHasher
    let sessions: SessionManager

    init(store: Store, hasher: PasswordHasher, sessions: SessionManager) {
        self.store = store
        self.hasher = hasher
        self.sessions = sessions
    }

    // MARK: Reading

    func user(id: Int64) async throws -> UserRecord? {
        try await store.read { db in
            try db.queryOne("SELECT \(UserRecord.columns) FROM accounts_users WHERE id = ?", id).map(UserRecord.init(row:))
        }
    }

    /// The user whose username or email is `login` (case-insensitive), with the password hash.
    func user(login: String) async throws -> (UserRecord, String)? {
        let key = login.trimmingWhitespace().lowercased()
        return try await store.read { db in
            try db.queryOne("SELECT \(UserRecord.columns), password_hash FROM accounts_users WHERE username = ? OR email_lower = ? LIMIT 1", key, key)
                .map { (UserRecord(row: $0), $0.string("password_hash") ?? "") }
        }
    }

    /// The directory: users matching `query` by name-word, username or email prefix, by name
    /// then username, at most `limit`; plus the company-wide total and active counts.
    func list(query: String, status: String, limit: Int = 500) async throws -> (items: [UserRecord], total: Int, active: Int) {
        let q = query.trimmingWhitespace().lowercased()
        let prefix = AccountService.likeEscaped(q) + "%"
        let activeFilter: Int64 = status == "inactive" ? 0 : 1
        return try await store.read { db in
            let rows = try db.query("""
                SELECT \(UserRecord.columns) FROM accounts_users
                WHERE (? = 'all' OR active = ?)
                  AND (? = '' OR name_key LIKE ? ESCAPE '\\' OR name_key LIKE ? ESCAPE '\\'
                       OR username LIKE ? ESCAPE '\\' OR email_lower LIKE ? ESCAPE '\\')
                ORDER BY name_key, username LIMIT ?
                """, status, activeFilter, q, prefix, "% " + prefix, prefix, prefix, limit)
            let counts = try db.queryOne("SELECT COUNT(*) AS total, COALESCE(SUM(active), 0) AS active FROM accounts_users")
            return (rows.map(UserRecord.init(row:)), counts?.int("total") ?? 0, counts?.int("active") ?? 0)
        }
    }

    static func likeEscaped(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ch == "\\" || ch == "%" || ch == "_" { out.append("\\") }
            out.append(ch)
        }
        return out
    }

    func activeAdminIDs() async throws -> [Int64] {
        try await store.read { db in
            try db.query("SELECT id FROM accounts_users WHERE role = 'admin' AND active = 1 ORDER BY id").compactMap { $0.int64("id") }
        }
    }

    // MARK: Creating

    /// Fails with 409 `username_taken` / `email_taken` before any expensive hashing.
    func checkAvailable(username: String, email: String) async throws {
        let (u, e) = try await store.read { db in
            (try db.queryOne("SELECT 1 FROM accounts_users WHERE username = ?", username) != nil,
             try db.queryOne("SELECT 1 FROM accounts_users WHERE email_lower = ?", email.lowercased()) != nil)
        }
        if u { throw AccountService.usernameTaken }
        if e { throw AccountService.emailTaken }
    }

    static let usernameTaken = APIError.conflict("username_taken", "that username is taken")
    static let emailTaken = APIError.conflict("email_taken", "that email address is already used")

    /// Inserts a user (and, for registration, its first session), writing `event` to the audit log.
    func create(username: String, email: String, displayName: String, role: UserRole, language: String,
                passwordHash: String, event: String, actor: Actor, session: NewSession? = nil, request: Request? = nil) async throws -> UserRecord {
        let now = Timestamp.now()
        do {
            return try await store.write { db in
                if try db.queryOne("SELECT 1 FROM accounts_users WHERE username = ?", username) != nil { throw AccountService.usernameTaken }
                if try db.queryOne("SELECT 1 FROM accounts_users WHERE email_lower = ?", email.lowercased()) != nil { throw AccountService.emailTaken }
                try db.execute("""
                    INSERT INTO accounts_users (username, email, email_lower, password_hash, role, active, display_name, name_key,
                                                language, created_at, last_login_at)
                    VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)
                    """, username, email, email.lowercased(), passwordHash, role.rawValue, displayName, displayName.lowercased(),
                    language, now, session == nil ? nil : now)
                let id = db.lastInsertRowID
                if let session { try SessionManager.insert(session, userID: id, request: request, db: db) }
                try AccountService.audit(db, event, actor: Actor(userID: actor.userID ?? (session == nil ? nil : id), ip: actor.ip),
                                         targetID: id, login: username, detail: "role \(role.rawValue)")
                return try AccountService.load(db, id)
            }
        } catch let error as StoreError where error.isUniqueViolation {
            throw APIError.conflict("username_taken", "that username or email address is taken")
        }
    }

    // MARK: Sessions

    /// Records a successful login: the session, the login time, an upgraded hash if any, the audit entry.
    func recordLogin(_ user: UserRecord, session: NewSession, upgradedHash: String?, login: String, request: Request) async throws -> UserRecord {
        let now = Timestamp.now()
        return try await store.write { db in
            try db.execute("DELETE FROM accounts_sessions WHERE user_id = ? AND expires_at <= ?", user.id, now.seconds)
            try SessionManager.insert(session, userID: user.id, request: request, db: db)
            try db.execute("UPDATE accounts_users SET last_login_at = ? WHERE id = ?", now, user.id)
            if let upgradedHash {
                try db.execute("UPDATE accounts_users SET password_hash = ? WHERE id = ?", upgradedHash, user.id)
            }
            try AccountService.audit(db, "login.success", actor: .user(user.id, request), targetID: user.id, login: login,
                                     detail: upgradedHash == nil ? nil : "password hash upgraded")
            return try AccountService.load(db, user.id)
        }
    }

    func recordLoginFailure(login: String, userID: Int64?, reason: String, request: Request) async throws {
        try await store.write { db in
            try AccountService.audit(db, "login.failure", actor: Actor(userID: nil, ip: request.clientAddress), targetID: userID,
                                     login: String(login.prefix(254)), detail: reason)
        }
    }

    func logout(_ user: AuthenticatedUser, request: Request) async throws {
        try await store.write { db in
            if let sessionID = user.sessionID { try db.execute("DELETE FROM accounts_sessions WHERE id = ?", sessionID) }
            try AccountService.audit(db, "logout", actor: .user(user.id, request), targetID: user.id, login: user.username, detail: nil)
        }
    }

    // MARK: Changing

    /// Sets a new password hash and ends sessions: every one but `keepSession` (nil: all).
    func setPassword(userID: Int64, hash: String, keepSession: Int64?, event: String, actor: Actor) async throws {
        try await store.write { db in
            guard try db.queryOne("SELECT 1 FROM accounts_users WHERE id = ?", userID) != nil else { throw APIError.notFound("no such user") }
            try db.execute("UPDATE accounts_users SET password_hash = ? WHERE id = ?", hash, userID)
            if let keepSession {
                try db.execute("DELETE FROM accounts_sessions WHERE user_id = ? AND id != ?", userID, keepSession)
            } else {
                try db.execute("DELETE FROM accounts_sessions WHERE user_id = ?", userID)
            }
            try AccountService.audit(db, event, actor: actor, targetID: userID, login: nil, detail: nil)
        }
    }

    /// Applies profile changes and, for admins, role and active changes. Never leaves the company
    /// without an active admin (409 `last_admin`, checked inside the write); deactivation ends
    /// every session of the user at once.
    func update(userID: Int64, changes: [ColumnChange], role: UserRole? = nil, active: Bool? = nil, actor: Actor) async throws -> UserRecord {
        do {
            return try await store.write { db in
                guard let current = try db.queryOne("SELECT role, active, email_lower FROM accounts_users WHERE id = ?", userID) else {
                    throw APIError.notFound("no such user")
                }
                let wasAdmin = current.string("role") == UserRole.admin.rawValue && current.bool("active") == true
                let newRole = role ?? UserRole(rawValue: current.string("role") ?? "") ?? .employee
                let newActive = active ?? (current.bool("active") ?? false)
                if wasAdmin && (newRole != .admin || !newActive) {
                    let others = try db.scalar("SELECT COUNT(*) FROM accounts_users WHERE role = 'admin' AND active = 1 AND id != ?", userID)
                    if others == .integer(0) {
                        throw APIError.conflict("last_admin", "this would leave the company without an active admin")
                    }
                }
                var all = changes
                for change in changes where change.column == "email_lower" {
                    if case let .text(e) = change.value, e != current.string("email_lower"),
                       try db.queryOne("SELECT 1 FROM accounts_users WHERE email_lower = ? AND id != ?", e, userID) != nil {
                        throw AccountService.emailTaken
                    }
                }
                if let role, role.rawValue != current.string("role") {
                    all.append(("role", .text(role.rawValue)))
                    try AccountService.audit(db, "role.change", actor: actor, targetID: userID, login: nil,
                                             detail: "\(current.string("role") ?? "?") → \(role.rawValue)")
                }
                if let active, active != current.bool("active") {
                    all.append(("active", .integer(active ? 1 : 0)))
                    try AccountService.audit(db, active ? "user.activate" : "user.deactivate", actor: actor, targetID: userID, login: nil, detail: nil)
                    if !active { try db.execute("DELETE FROM accounts_sessions WHERE user_id = ?", userID) }
                }
                if !all.isEmpty {
                    let assignments = all.map { "\($0.column) = ?" }.joined(separator: ", ")
                    try db.execute("UPDATE accounts_users SET \(assignments) WHERE id = ?", bindings: all.map { $0.value as any SQLBindable } + [userID as any SQLBindable])
                }
                return try AccountService.load(db, userID)
            }
        } catch let error as StoreError where error.isUniqueViolation {
            throw AccountService.emailTaken
        }
    }

    // MARK: Avatars

    /// Stores the picture and returns the user's new avatar URL version.
    func setAvatar(userID: Int64, data: [UInt8], contentType: String) async throws -> UserRecord {
        let etag = "\"" + Crypto.hex(Crypto.sha256(data).prefix(12)) + "\""
        return try await store.write { db in
            try db.execute("UPDATE accounts_users SET avatar_counter = avatar_counter + 1, avatar_version = avatar_counter + 1 WHERE id = ?", userID)
            let record = try AccountService.load(db, userID)
            try db.execute("INSERT OR REPLACE INTO accounts_avatars (user_id, content_type, data, version, etag) VALUES (?, ?, ?, ?, ?)",
                           userID, contentType, data, record.avatarVersion ?? 0, etag)
            return record
        }
    }

    func deleteAvatar(userID: Int64) async throws {
        try await store.write { db in
            try db.execute("UPDATE accounts_users SET avatar_version = NULL WHERE id = ?", userID)
            try db.execute("DELETE FROM accounts_avatars WHERE user_id = ?", userID)
        }
    }

    func avatar(userID: Int64) async throws -> (contentType: String, data: [UInt8], version: Int64, etag: String)? {
        try await store.read { db in
            try db.queryOne("SELECT content_type, data, version, etag FROM accounts_avatars WHERE user_id = ?", userID).map {
                ($0.string("content_type") ?? "application/octet-stream", $0.blob("data") ?? [], $0.int64("version") ?? 0, $0.string("etag") ?? "")
            }
        }
    }

    // MARK: Audit

    static func audit(_ db: Database, _ event: String, actor: Actor, targetID: Int64?, login: String?, detail: String?) throws {
        try db.execute("INSERT INTO accounts_audit (at, event, actor_id, target_id, login, ip, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       Timestamp.now(), event, actor.userID, targetID, login, actor.ip, detail)
    }

    /// Newest first, ids below `before`.
    func auditPage(before: Int64?, limit: Int) async throws -> [JSONValue] {
        try await store.read { db in
            try db.query("""
                SELECT a.id, a.at, a.event, a.actor_id, au.username AS actor_username, a.target_id, tu.username AS target_username,
                       a.login, a.ip, a.detail
                FROM accounts_audit a
                LEFT JOIN accounts_users au ON au.id = a.actor_id
                LEFT JOIN accounts_users tu ON tu.id = a.target_id
                WHERE a.id < ? ORDER BY a.id DESC LIMIT ?
                """, before ?? Int64.max, limit).map { row in
                func text(_ c: String) -> JSONValue { row.string(c).map(JSONValue.string) ?? .null }
                func int(_ c: String) -> JSONValue { row.int64(c).map { .number(Double($0)) } ?? .null }
                return [
                    "id": int("id"), "at": text("at"), "event": text("event"),
                    "actorId": int("actor_id"), "actorUsername": text("actor_username"),
                    "targetId": int("target_id"), "targetUsername": text("target_username"),
                    "login": text("login"), "ip": text("ip"), "detail": text("detail"),
                ]
            }
        }
    }

    static func load(_ db: Database, _ id: Int64) throws -> UserRecord {
        guard let row = try db.queryOne("SELECT \(UserRecord.columns) FROM accounts_users WHERE id = ?", id) else {
            throw APIError.notFound("no such user")
        }
        return UserRecord(row: row)
    }
}

/// `UserDirectory` for other modules.
struct AccountsDirectory: UserDirectory {
    let service: AccountService

    func user(id: Int64) async throws -> DirectoryUser? { try await service.user(id: id)?.directoryUser }
    func activeAdminIDs() async throws -> [Int64] { try await service.activeAdminIDs() }
}
