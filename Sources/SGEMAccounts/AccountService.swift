import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import Synchronization

/// Who performs an account change, for the audit log: a user over the API, or the operator at
/// the command line (no user id).
struct Actor: Sendable {
    let userID: Int64?
    let ip: String?

    static let commandLine = Actor(userID: nil, ip: nil)
}

/// The account operations the API and the admin commands share, so both enforce the same rules
/// (unique names, the last active admin, session revocation, the audit log). It holds no SQL:
/// each operation is one read or one write transaction of `AccountsRepository` calls.
final class AccountService: Sendable {
    let repository: AccountsRepository
    var store: Store { repository.store }
    let hasher: PasswordHasher
    let sessions: SessionManager
    /// Where ended sessions, deactivations and role changes are recorded, in their transaction,
    /// for the realtime hubs to act on (`StreamControl`); nil without the system module.
    let journal: (any EventJournal)?
    /// How long the dummy hash's cost is trusted before the stored hashes are read again
    /// (another process may have stored a costlier one).
    let dummyCostRefresh: Duration
    /// When the dummy hash's cost was last read from the store.
    private let dummyCostReadAt = Mutex<ContinuousClock.Instant?>(nil)
    /// The wall clock invitations expire by and accounts are created at; tests pin it.
    let clock: @Sendable () -> Timestamp

    init(store: Store, hasher: PasswordHasher, sessions: SessionManager,
         journal: (any EventJournal)? = nil, dummyCostRefresh: Duration = .seconds(5),
         clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) {
        self.repository = AccountsRepository(store: store)
        self.hasher = hasher
        self.sessions = sessions
        self.journal = journal
        self.dummyCostRefresh = dummyCostRefresh
        self.clock = clock
    }

    // MARK: Reading

    func user(id: Int64) async throws -> UserRecord? {
        try await repository.user(id: id)
    }

    /// The user whose username or email is `login` (case-insensitive), with the password hash.
    func user(login: String) async throws -> (UserRecord, String)? {
        let key = login.trimmingWhitespace().lowercased()
        return try await repository.userWithPasswordHash(login: key)
    }

    /// One page of the directory: users matching `query` by name-word, position-word, username or
    /// email prefix, ignoring case and accents, by name then username, after the user `after` (nil: from the start), at most `limit`;
    /// whether more follow; and the company-wide total and active counts. `unknownCursor` when `after` names
    /// no user.
    func list(query: String, status: UserStatusFilter, after: Int64? = nil, limit: Int = 500)
        async throws -> (items: [UserRecord], more: Bool, total: Int, active: Int) {
        let words = SearchKey.queryWords(query)
        return try await store.read { db in
            var cursor: UserCursor?
            if let after {
                guard let found = try AccountsRepository.cursor(after: after, in: db) else {
                    throw AccountsError.unknownCursor
                }
                cursor = found
            }
            // One more than asked tells whether another page follows.
            var items = try AccountsRepository.users(words: words, status: status, after: cursor, limit: limit + 1, in: db)
            let more = items.count > limit
            if more { items.removeLast() }
            let counts = try AccountsRepository.userCounts(in: db)
            return (items, more, counts.total, counts.active)
        }
    }

    /// Whom the login screen names for a forgotten password (`passwordHelpAdminName`).
    func passwordHelpAdminName() async throws -> String? {
        return try await store.read { db in try AccountsRepository.passwordHelpAdminName(in: db) }
    }

    func activeAdminIDs() async throws -> [Int64] {
        try await repository.activeAdminIDs()
    }

    // MARK: The dummy hash

    /// The hash to check an unknown user's password against, at the cost of the most expensive
    /// stored hash, read again from the store once `dummyCostRefresh` has passed.
    func dummyHash() async -> String {
        let refresh = dummyCostRefresh
        let stale = dummyCostReadAt.withLock { read in read.map { ContinuousClock.now - $0 >= refresh } ?? true }
        // An unreadable store keeps the last cost: the login answers either way.
        if stale { try? await readDummyCost() }
        return hasher.dummyHash
    }

    /// Sets the dummy hash's cost to that of the most expensive stored hash.
    func readDummyCost() async throws {
        let prefixes = try await store.read { db in
            try AccountsRepository.passwordHashParameters(saltAndKeyLength: PasswordHasher.saltAndKeyLength, in: db)
        }
        let costliest = prefixes.compactMap(PasswordHasher.parseParameters).filter(\.isUsable).max { $0.cost < $1.cost }
        hasher.setDummyCost(costliest)
        dummyCostReadAt.withLock { $0 = ContinuousClock.now }
    }

    // MARK: Creating

    /// Fails with `usernameTaken` / `emailTaken` before any expensive hashing.
    func checkAvailable(username: String, email: String) async throws {
        let (u, e) = try await store.read { db in
            (try AccountsRepository.isUsernameTaken(username, in: db), try AccountsRepository.isEmailTaken(email.lowercased(), in: db))
        }
        if u { throw AccountsError.usernameTaken }
        if e { throw AccountsError.emailTaken }
    }

    /// Inserts a user (and, for registration and setup, its first session), writing `event` to the
    /// audit log. With `onlyIfNoActiveAdmin` (first-run setup) it fails with `setupClosed`
    /// when an active admin exists, checked in the same write transaction, so of two concurrent
    /// setups one creates the admin.
    /// `mustChangePassword`: the password was generated, so it is not the person's own.
    /// `invite`: the invitation the account is made with; one of its uses is taken in the same
    /// transaction, and the account is not made (`inviteNotFound`) when none is left.
    func create(username: String, email: String, displayName: String, role: UserRole, language: AccountLanguage,
                passwordHash: String, mustChangePassword: Bool = false, event: String, actor: Actor, session: NewSession? = nil,
                client: SessionManager.ClientInfo = .unknown, onlyIfNoActiveAdmin: Bool = false, invite: Int64? = nil) async throws -> UserRecord {
        let now = clock()
        do {
            return try await store.write { db in
                if onlyIfNoActiveAdmin, try AccountsRepository.hasActiveAdmin(in: db) { throw AccountsError.setupClosed }
                if try AccountsRepository.isUsernameTaken(username, in: db) { throw AccountsError.usernameTaken }
                if try AccountsRepository.isEmailTaken(email.lowercased(), in: db) { throw AccountsError.emailTaken }
                if let invite, try !AccountsRepository.useInvite(id: invite, now: now, in: db) { throw AccountsError.inviteNotFound }
                let id = try AccountsRepository.insertUser(username: username, email: email, displayName: displayName, role: role, language: language,
                                                   passwordHash: passwordHash, mustChangePassword: mustChangePassword,
                                                   createdAt: now, lastLoginAt: session == nil ? nil : now, in: db)
                try AccountsRepository.refreshSearchWords(userID: id, in: db)
                if let session { try AccountsRepository.insertSession(session, userID: id, ip: client.ip, userAgent: client.userAgent, in: db) }
                try AccountService.audit(db, event, actor: Actor(userID: actor.userID ?? (session == nil ? nil : id), ip: actor.ip),
                                         targetID: id, login: username,
                                         detail: "role \(role.rawValue)" + (mustChangePassword ? ", must choose a password" : "")
                                            + (invite.map { ", invite \($0)" } ?? ""))
                return try AccountService.load(db, id)
            }
        } catch let error as StoreError where error.isUniqueViolation {
            throw AccountsError.usernameOrEmailTaken
        }
    }

    // MARK: Sessions

    /// Records a successful login: the session, the login time, an upgraded hash if any, the audit entry.
    func recordLogin(_ user: UserRecord, session: NewSession, upgradedHash: String?, login: String,
                     client: SessionManager.ClientInfo) async throws -> UserRecord {
        let now = Timestamp.now()
        let actor = Actor(userID: user.id, ip: client.ip)
        return try await store.write { db in
            try AccountsRepository.deleteExpiredSessions(now: now.milliseconds, userID: user.id, in: db)
            try AccountsRepository.insertSession(session, userID: user.id, ip: client.ip, userAgent: client.userAgent, in: db)
            try AccountsRepository.setLastLogin(userID: user.id, at: now, in: db)
            if let upgradedHash { try AccountsRepository.setPasswordHash(userID: user.id, upgradedHash, in: db) }
            try AccountService.audit(db, "login.success", actor: actor, targetID: user.id, login: login,
                                     detail: upgradedHash == nil ? nil : "password hash rehashed at the configured cost")
            return try AccountService.load(db, user.id)
        }
    }

    func recordLoginFailure(login: String, userID: Int64?, reason: String, ip: String) async throws {
        try await store.write { db in
            try AccountService.audit(db, "login.failure", actor: Actor(userID: nil, ip: ip), targetID: userID,
                                     login: String(login.prefix(254)), detail: reason)
        }
    }

    func logout(_ user: AuthenticatedUser, ip: String) async throws {
        let actor = Actor(userID: user.id, ip: ip)
        let journal = self.journal
        try await store.write { db in
            if let sessionID = user.sessionID {
                try AccountsRepository.deleteSession(id: sessionID, in: db)
                _ = try journal?.append(StreamControl.sessionsRevoked(userID: user.id, scope: .only(sessionID)).event, in: db)
            }
            try AccountService.audit(db, "logout", actor: actor, targetID: user.id, login: user.username, detail: nil)
        }
    }

    /// Removes every session expired at `now`; returns how many.
    func deleteExpiredSessions(now: Timestamp) async throws -> Int {
        return try await store.write { db in try AccountsRepository.deleteExpiredSessions(now: now.milliseconds, in: db) }
    }

    // MARK: Changing

    /// Sets a new password hash and ends sessions: every one but `keepSession` (nil: all).
    /// `mustChange`: a reset password, which the person must replace before anything else; a
    /// password they chose themselves clears that.
    func setPassword(userID: Int64, hash: String, mustChange: Bool, keepSession: Int64?, event: String, actor: Actor) async throws {
        let journal = self.journal
        try await store.write { db in
            guard try AccountsRepository.userState(id: userID, in: db) != nil else { throw AccountsError.userNotFound }
            try AccountsRepository.setPassword(userID: userID, hash: hash, mustChange: mustChange, in: db)
            try AccountsRepository.deleteSessions(userID: userID, except: keepSession, in: db)
            let ended = StreamControl.sessionsRevoked(userID: userID, scope: keepSession.map { .allBut($0) } ?? .all)
            _ = try journal?.append(ended.event, in: db)
            try AccountService.audit(db, event, actor: actor, targetID: userID, login: nil, detail: nil)
        }
    }

    /// Applies profile changes and, for admins, role and active changes. Never leaves the company
    /// without an active admin (`lastAdmin`, checked inside the write); deactivation ends
    /// every session of the user at once.
    func update(userID: Int64, changes: ProfileChanges, role: UserRole? = nil, active: Bool? = nil, actor: Actor) async throws -> UserRecord {
        let journal = self.journal
        do {
            let updated = try await store.write { db in
                guard let current = try AccountsRepository.userState(id: userID, in: db) else { throw AccountsError.userNotFound }
                let wasAdmin = current.role == .admin && current.active
                let newRole = role ?? current.role
                let newActive = active ?? current.active
                if wasAdmin && (newRole != .admin || !newActive), try AccountsRepository.otherActiveAdminCount(besides: userID, in: db) == 0 {
                    throw AccountsError.lastAdmin
                }
                if let email = changes.email?.lowercased(), email != current.emailLower,
                   try AccountsRepository.isEmailTaken(email, exceptUserID: userID, in: db) {
                    throw AccountsError.emailTaken
                }
                if let role, role != current.role {
                    try AccountService.audit(db, "role.change", actor: actor, targetID: userID, login: nil,
                                             detail: "\(current.role.rawValue) → \(role.rawValue)")
                    _ = try journal?.append(StreamControl.roleChanged(userID: userID).event, in: db)
                }
                if let active, active != current.active {
                    try AccountService.audit(db, active ? "user.activate" : "user.deactivate", actor: actor, targetID: userID,
                                             login: nil, detail: nil)
                    if !active {
                        try AccountsRepository.deleteSessions(userID: userID, in: db)
                        _ = try journal?.append(StreamControl.accountDeactivated(userID: userID).event, in: db)
                    }
                }
                // Someone else's profile (an admin, or the command line): which fields, never their values.
                if !changes.isEmpty, actor.userID != userID {
                    try AccountService.audit(db, "user.update", actor: actor, targetID: userID, login: nil,
                                             detail: changes.auditedFields.joined(separator: ", ") + (actor.userID == nil ? " (command line)" : ""))
                }
                try AccountsRepository.update(userID: userID, changes, role: role == current.role ? nil : role,
                                              active: active == current.active ? nil : active, in: db)
                if changes.changesSearchWords {
                    try AccountsRepository.refreshSearchWords(userID: userID, in: db)
                }
                return try AccountService.load(db, userID)
            }
            return updated
        } catch let error as StoreError where error.isUniqueViolation {
            throw AccountsError.emailTaken
        }
    }

    // MARK: Avatars

    /// Stores the picture and returns the user with its new avatar URL version; `userNotFound` for no such
    /// user. `auditedAs`: an admin changing someone's picture, written to the audit log.
    func setAvatar(userID: Int64, data: [UInt8], contentType: String, auditedAs actor: Actor? = nil) async throws -> UserRecord {
        let etag = "\"" + Crypto.hex(Crypto.sha256(data).prefix(12)) + "\""
        return try await store.write { db in
            let version = try AccountsRepository.nextAvatarVersion(userID: userID, in: db)
            try AccountsRepository.saveAvatar(userID: userID, contentType: contentType, data: data, version: version, etag: etag, in: db)
            if let actor { try AccountService.audit(db, "avatar.set", actor: actor, targetID: userID, login: nil, detail: contentType) }
            return try AccountService.load(db, userID)
        }
    }

    /// Removes the picture; `userNotFound` for no such user. `auditedAs` as for `setAvatar`.
    func deleteAvatar(userID: Int64, auditedAs actor: Actor? = nil) async throws {
        try await store.write { db in
            guard try AccountsRepository.userState(id: userID, in: db) != nil else { throw AccountsError.userNotFound }
            try AccountsRepository.deleteAvatar(userID: userID, in: db)
            if let actor { try AccountService.audit(db, "avatar.remove", actor: actor, targetID: userID, login: nil, detail: nil) }
        }
    }

    func avatar(userID: Int64) async throws -> StoredAvatar? {
        return try await store.read { db in try AccountsRepository.avatar(userID: userID, in: db) }
    }

    // MARK: Audit

    static func audit(_ db: Database, _ event: String, actor: Actor, targetID: Int64?, login: String?, detail: String?) throws {
        try AccountsRepository.appendAudit(at: .now(), event: event, actorID: actor.userID, targetID: targetID, login: login,
                                           ip: actor.ip, detail: detail, in: db)
    }

    /// Newest first, ids below `before`, optionally one event name or one user (actor or
    /// target); and whether older entries follow.
    func auditPage(before: Int64?, limit: Int, events: [String] = [], userID: Int64? = nil) async throws -> (items: [AuditEntry], more: Bool) {
        var items = try await store.read { db in
            try AccountsRepository.auditPage(before: before, limit: limit + 1, events: events, userID: userID, in: db)
        }
        let more = items.count > limit
        if more { items.removeLast() }
        return (items, more)
    }

    /// The events this module writes, for filters.
    static let auditEvents = ["login.success", "login.failure", "logout", "user.register", "user.create", "setup.admin_created",
                              "role.change", "user.activate", "user.deactivate", "password.change", "password.reset",
                              "avatar.set", "avatar.remove", "user.update", "invite.created", "invite.revoked"]

    /// The known event names (this module's and every other module's, `declared`) and any other
    /// name the log holds (from older releases), sorted.
    func auditEventNames(declared: [String] = []) async throws -> [String] {
        let stored = try await store.read { db in try AccountsRepository.auditEventNames(in: db) }
        return Set(AccountService.auditEvents + declared + stored).sorted()
    }

    static func load(_ db: Database, _ id: Int64) throws -> UserRecord {
        guard let user = try AccountsRepository.user(id: id, in: db) else { throw AccountsError.userNotFound }
        return user
    }
}

/// `UserDirectory` for other modules.
struct AccountsDirectory: UserDirectory {
    let service: AccountService

    func user(id: Int64) async throws -> DirectoryUser? { try await service.user(id: id)?.directoryUser }
    func activeAdminIDs() async throws -> [Int64] { try await service.activeAdminIDs() }
    func activeUserCount() async throws -> Int { try await service.repository.userCounts().active }
    func usersCreated(after time: Timestamp) async throws -> Int { try await service.repository.usersCreated(after: time) }
    func users(ids: [Int64]) async throws -> [Int64: DirectoryUser] { try await StoreDirectory.users(ids: ids, in: service.repository) }
    func user(login: String) async throws -> DirectoryUser? { try await service.user(login: login)?.0.directoryUser }
}

/// `UserDirectory` for other modules' admin verbs (`notices post` counts its audience), reading
/// the database the verb opened; the server uses `AccountsDirectory`.
struct StoreDirectory: UserDirectory {
    let openStore: @Sendable () async throws -> Store

    private var repository: AccountsRepository {
        get async throws { AccountsRepository(store: try await openStore()) }
    }

    func user(id: Int64) async throws -> DirectoryUser? { try await repository.user(id: id)?.directoryUser }
    func activeAdminIDs() async throws -> [Int64] { try await repository.activeAdminIDs() }
    func activeUserCount() async throws -> Int { try await repository.userCounts().active }
    func usersCreated(after time: Timestamp) async throws -> Int { try await repository.usersCreated(after: time) }
    func users(ids: [Int64]) async throws -> [Int64: DirectoryUser] { try await StoreDirectory.users(ids: ids, in: try await repository) }
    func user(login: String) async throws -> DirectoryUser? {
        try await repository.userWithPasswordHash(login: login.trimmingWhitespace().lowercased())?.0.directoryUser
    }

    /// `ids` looked up in one read: the one batch lookup both directories share.
    static func users(ids: [Int64], in repository: AccountsRepository) async throws -> [Int64: DirectoryUser] {
        guard !ids.isEmpty else { return [:] }
        let records = try await repository.users(ids: Array(Set(ids)))
        var out: [Int64: DirectoryUser] = [:]
        for record in records { out[record.id] = record.directoryUser }
        return out
    }
}
