import SGEMCompany
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing
@testable import SGEMAccounts

/// The accounts repository's statements on every backend the run reaches: the same answers from
/// SQLite and PostgreSQL.
@Suite("Accounts: the repository on every backend")
struct AccountsRepositoryTests {
    /// A fresh database with the company and accounts schemas.
    static func migrated(_ backend: TestBackend) async throws -> (TestDatabase, Store) {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var migrations = MigrationList()
        CompanyModule().registerMigrations(&migrations)
        AccountsRepository.registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        return (database, store)
    }

    /// Inserts a user as the service does (search words included); returns its id.
    @discardableResult
    static func insert(_ username: String, _ name: String, position: String? = nil, role: UserRole = .employee, active: Bool = true,
                       email: String? = nil, in db: Database) throws -> Int64 {
        let id = try AccountsRepository.insertUser(username: username, email: email ?? "\(username)@example.com", displayName: name, role: role,
                                                   language: AccountLanguage(code: "en", chosen: true), passwordHash: "scrypt$10$8$1$x",
                                                   mustChangePassword: false, createdAt: Timestamp(milliseconds: 1_000), lastLoginAt: nil,
                                                   in: db)
        var changes: [ColumnChange] = []
        if let position { changes.append(("position", .text(position))) }
        if !active { changes.append(("active", .integer(0))) }
        try AccountsRepository.update(userID: id, changes, in: db)
        try AccountsRepository.refreshSearchWords(userID: id, in: db)
        return id
    }

    @Test("every migration of the two modules has a PostgreSQL form")
    func everyMigrationRunsOnPostgreSQL() {
        var migrations = MigrationList()
        CompanyModule().registerMigrations(&migrations)
        AccountsRepository.registerMigrations(&migrations)
        #expect(migrations.withoutPostgreSQLForm.isEmpty, "\(migrations.withoutPostgreSQLForm)")
    }

    static let people: [(String, String, String?, Bool)] = [
        ("alvaro", "Álvaro Gómez", "Jefe Técnico", true), ("alvaro2", "ÁLVARO GÓMEZ", nil, true), ("alvaroz", "álvaro Zapata", nil, true),
        ("zoe", "Zoë Ñúñez", nil, true), ("emile", "ÉMILE Durand", nil, true), ("obrien", "Seán O'Brien", nil, true),
        ("omega", "Ωmega Test", nil, true), ("bea", "Beatriz Ávila", nil, false),
    ]

    /// Directory searches: folded words, prefixes of every query word, accents and case ignored.
    static let searches: [(query: String, status: String, expected: [String])] = [
        ("", "active", ["alvaro", "alvaro2", "alvaroz", "emile", "obrien", "zoe", "omega"]),
        ("", "all", ["alvaro", "alvaro2", "alvaroz", "bea", "emile", "obrien", "zoe", "omega"]),
        ("", "inactive", ["bea"]),
        ("ÁLV", "active", ["alvaro", "alvaro2", "alvaroz"]),
        ("gómez", "active", ["alvaro", "alvaro2"]),
        ("GOMEZ", "active", ["alvaro", "alvaro2"]),
        ("alvaro z", "active", ["alvaroz"]),
        ("ÑÚ", "active", ["zoe"]),
        ("nunez zo", "active", ["zoe"]),
        ("brien", "active", ["obrien"]),
        ("o'b", "active", ["obrien"]),
        ("técn", "active", ["alvaro"]),
        ("ΩM", "active", ["omega"]),
        ("avi", "active", []),
        ("avi", "all", ["bea"]),
        ("alvaro@", "all", ["alvaro"]),
        ("%", "all", []),
        ("_", "all", []),
    ]

    @Test("the directory finds and orders people alike on every backend", arguments: TestBackend.available)
    func directory(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        try await store.write { db in
            for (username, name, position, active) in Self.people {
                try Self.insert(username, name, position: position, active: active, in: db)
            }
        }
        for (query, status, expected) in Self.searches {
            let found = try await store.read { db in
                try AccountsRepository.users(words: SearchKey.queryWords(query), status: UserStatusFilter(rawValue: status)!, after: nil, limit: 100, in: db)
            }
            #expect(found.map(\.username) == expected, "\(backend): q=\(query) status=\(status)")
        }
        // Keyset pages of two give the same order.
        var paged: [String] = []
        var cursor: UserCursor?
        while true {
            let after = cursor
            let page = try await store.read { db in
                try AccountsRepository.users(words: [], status: .all, after: after, limit: 2, in: db)
            }
            paged += page.map(\.username)
            guard let last = page.last, page.count == 2 else { break }
            cursor = try await store.read { db in try AccountsRepository.cursor(after: last.id, in: db) }
        }
        #expect(paged == ["alvaro", "alvaro2", "alvaroz", "bea", "emile", "obrien", "zoe", "omega"], "\(backend)")
        let counts = try await store.read { db in try AccountsRepository.userCounts(in: db) }
        #expect(counts.total == 8 && counts.active == 7)
        await store.close()
    }

    @Test("users by id: more than one statement's chunk, none, unknown ids", arguments: TestBackend.available)
    func usersByID(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let ids = try await store.write { db in
            try (0..<520).map { try Self.insert("user\($0)", "User \($0)", in: db) }
        }
        let repository = AccountsRepository(store: store)
        #expect(try await repository.users(ids: ids + [999_999]).count == 520)
        #expect(try await repository.users(ids: []).isEmpty)
        #expect(try await repository.user(id: ids[7])?.username == "user7")
        #expect(try await repository.userWithPasswordHash(login: "user7@example.com")?.1 == "scrypt$10$8$1$x")
        #expect(try await repository.usersCreated(after: Timestamp(milliseconds: 999)) == 520)
        let parameters = try await store.read { db in try AccountsRepository.passwordHashParameters(saltAndKeyLength: 2, in: db) }
        #expect(parameters == ["scrypt$10$8$1"])
        await store.close()
    }

    @Test("sessions: expiry per user or for everyone, all of a user's but one", arguments: TestBackend.available)
    func sessions(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let (ann, bob, keep) = try await store.write { db in
            let ann = try Self.insert("ann", "Ann", in: db)
            let bob = try Self.insert("bob", "Bob", in: db)
            for (user, token, expires) in [(ann, "a1", 100), (ann, "a2", 5_000), (ann, "a3", 6_000), (bob, "b1", 200), (bob, "b2", 7_000)] {
                let session = NewSession(token: token, csrfToken: "c" + token, createdAt: 10, expiresAt: Int64(expires))
                try AccountsRepository.insertSession(session, userID: user, ip: nil, userAgent: "test", in: db)
            }
            let keep = try #require(try AccountsRepository.session(tokenDigest: SessionManager.digest("a2"), in: db))
            return (ann, bob, keep.id)
        }
        let removed = try await store.write { db in
            (try AccountsRepository.deleteExpiredSessions(now: 1_000, userID: ann, in: db),
             try AccountsRepository.deleteExpiredSessions(now: 1_000, in: db))
        }
        #expect(removed == (1, 1))
        try await store.write { db in try AccountsRepository.deleteSessions(userID: ann, except: keep, in: db) }
        let left = try await store.read { db in
            try ["a1", "a2", "a3", "b1", "b2"].filter { try AccountsRepository.session(tokenDigest: SessionManager.digest($0), in: db) != nil }
        }
        #expect(left == ["a2", "b2"])
        try await store.write { db in try AccountsRepository.deleteSessions(userID: bob, in: db) }
        let session = try await store.read { db in try AccountsRepository.session(tokenDigest: SessionManager.digest("a2"), in: db) }
        #expect(session?.userID == ann && session?.username == "ann" && session?.userActive == true && session?.expiresAt == 5_000)
        #expect(try await store.read { db in try AccountsRepository.session(tokenDigest: SessionManager.digest("b2"), in: db) } == nil)
        await store.close()
    }

    @Test("an invitation gives exactly its uses to racing registrations, then none; revoking keeps the first time",
          arguments: TestBackend.available)
    func invites(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        // A second store on the same database stands for a second instance.
        let other = try database.open()
        let now = Timestamp(milliseconds: 1_000_000)
        let id = try await store.write { db in
            try AccountsRepository.insertInvite(tokenHash: "h", InviteRequest(role: .employee, days: 7, maxUses: 3, note: "team"),
                                                expiresAt: Timestamp(milliseconds: 2_000_000), createdBy: nil, createdAt: now, in: db)
        }
        let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<12 {
                let target = n % 2 == 0 ? store : other
                group.addTask { try await target.write { db in try AccountsRepository.useInvite(id: id, now: now, in: db) } }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(taken == 3)
        let spent = try await store.read { db in try AccountsRepository.invite(id: id, in: db) }
        #expect(spent?.uses == 3 && spent?.maxUses == 3 && spent?.note == "team" && spent?.status(at: now) == "used")
        let second = try await store.write { db in
            try AccountsRepository.insertInvite(tokenHash: "h2", InviteRequest(), expiresAt: Timestamp(milliseconds: 2_000_000),
                                                createdBy: nil, createdAt: now, in: db)
        }
        #expect(second > id)
        let (live, all) = try await store.read { db in
            (try AccountsRepository.invites(liveOnly: true, now: now, limit: 10, in: db).map(\.id),
             try AccountsRepository.invites(liveOnly: false, now: now, limit: 10, in: db).map(\.id))
        }
        #expect(live == [second] && all == [second, id])
        #expect(try await store.read { db in try AccountsRepository.liveInvite(tokenHash: "h2", now: now, in: db) }?.id == second)
        #expect(try await store.read { db in try AccountsRepository.liveInvite(tokenHash: "h", now: now, in: db) } == nil)
        let revoked = try await store.write { db in
            (try AccountsRepository.revokeInvite(id: second, now: Timestamp(milliseconds: 1_500_000), in: db),
             try AccountsRepository.revokeInvite(id: second, now: Timestamp(milliseconds: 1_600_000), in: db),
             try AccountsRepository.revokeInvite(id: 999, now: now, in: db))
        }
        #expect(revoked == (true, true, false))
        let withdrawn = try await store.read { db in try AccountsRepository.invite(id: second, in: db) }
        #expect(withdrawn?.revokedAt?.milliseconds == 1_500_000)
        #expect(try await store.read { db in try AccountsRepository.liveInvite(tokenHash: "h2", now: now, in: db) } == nil)
        await other.close()
        await store.close()
    }

    @Test("first-run setup: of racing setups on two instances exactly one creates the admin", arguments: TestBackend.available)
    func setupCreatesOneAdmin(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        let other = try database.open()
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<10 {
                let target = n % 2 == 0 ? store : other
                group.addTask {
                    try await target.write { db in
                        // The service's check-then-write, in one write transaction.
                        guard try !AccountsRepository.hasActiveAdmin(in: db) else { return false }
                        try Self.insert("admin\(n)", "Admin \(n)", role: .admin, in: db)
                        return true
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(created == 1)
        #expect(try await AccountsRepository(store: store).activeAdminIDs().count == 1)
        await other.close()
        await store.close()
    }

    @Test("the login screen names the first admin whose name is no login, ignoring ASCII case", arguments: TestBackend.available)
    func passwordHelpAdmin(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let name = { try await store.read { db in try AccountsRepository.passwordHelpAdminName(in: db) } }
        try await store.write { db in
            try Self.insert("boss", "BOSS", role: .admin, in: db)
            try Self.insert("emp", "Emp Loyee", in: db)
            try Self.insert("ana", "Ana@Example.COM", role: .admin, email: "ana@example.com", in: db)
        }
        #expect(try await name() == nil)
        _ = try await store.write { db in try Self.insert("angel", "Ángel Ruiz", role: .admin, in: db) }
        #expect(try await name() == "Ángel Ruiz")
        await store.close()
    }

    @Test("avatars: versions grow, an upsert replaces the picture, removal clears it", arguments: TestBackend.available)
    func avatars(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let bytes: [UInt8] = [0x89, 0x50, 0x00, 0xFF, 0x0A]
        let (user, v1, v2) = try await store.write { db in
            let user = try Self.insert("ann", "Ann", in: db)
            let v1 = try AccountsRepository.nextAvatarVersion(userID: user, in: db)
            try AccountsRepository.saveAvatar(userID: user, contentType: "image/png", data: [1], version: v1, etag: "\"1\"", in: db)
            let v2 = try AccountsRepository.nextAvatarVersion(userID: user, in: db)
            try AccountsRepository.saveAvatar(userID: user, contentType: "image/webp", data: bytes, version: v2, etag: "\"2\"", in: db)
            return (user, v1, v2)
        }
        #expect(v1 == 1 && v2 == 2)
        let avatar = try await store.read { db in try AccountsRepository.avatar(userID: user, in: db) }
        #expect(avatar?.data == bytes && avatar?.contentType == "image/webp" && avatar?.version == 2 && avatar?.etag == "\"2\"")
        try await store.write { db in try AccountsRepository.deleteAvatar(userID: user, in: db) }
        #expect(try await store.read { db in try AccountsRepository.avatar(userID: user, in: db) } == nil)
        #expect(try await AccountsRepository(store: store).user(id: user)?.avatarVersion == nil)
        await store.close()
    }

    @Test("the audit log: newest first, by exact name or kind, by user as actor or target", arguments: TestBackend.available)
    func audit(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        try await store.write { db in
            let ann = try Self.insert("ann", "Ann", in: db)
            let bob = try Self.insert("bob", "Bob", in: db)
            for (n, (event, actor, target)) in [("login.success", ann, ann), ("holiday.approved", bob, ann), ("holiday.rejected", bob, nil),
                                                 ("holidays.x", nil, bob), ("logout", ann, ann)].enumerated() {
                try AccountsRepository.appendAudit(at: Timestamp(milliseconds: Int64(n)), event: event, actorID: actor, targetID: target,
                                                   login: nil, ip: "10.0.0.\(n)", detail: nil, in: db)
            }
        }
        func events(_ filters: [String] = [], user: String? = nil, before: Int64? = nil, limit: Int = 10) async throws -> [String] {
            try await store.read { db in
                let userID = try user.flatMap { try AccountsRepository.userWithPasswordHash(login: $0, in: db)?.0.id }
                return try AccountsRepository.auditPage(before: before, limit: limit, events: filters, userID: userID, in: db).map(\.event)
            }
        }
        #expect(try await events() == ["logout", "holidays.x", "holiday.rejected", "holiday.approved", "login.success"])
        #expect(try await events(["holiday"]) == ["holiday.rejected", "holiday.approved"])
        #expect(try await events(["holiday", "login.success"]) == ["holiday.rejected", "holiday.approved", "login.success"])
        #expect(try await events(["logout"]) == [], "a name without a dot is a kind")
        #expect(try await events(["holiday.approved"]) == ["holiday.approved"])
        #expect(try await events(user: "bob") == ["holidays.x", "holiday.rejected", "holiday.approved"])
        #expect(try await events(limit: 2) == ["logout", "holidays.x"])
        let page = try await store.read { db in try AccountsRepository.auditPage(before: nil, limit: 1, in: db) }
        #expect(try await events(before: page.first?.id, limit: 1) == ["holidays.x"])
        #expect(page.first?.actorUsername == "ann" && page.first?.targetUsername == "ann" && page.first?.at?.milliseconds == 4)
        let names = try await store.read { db in try AccountsRepository.auditEventNames(in: db) }
        #expect(names.sorted() == ["holiday.approved", "holiday.rejected", "holidays.x", "login.success", "logout"])
        await store.close()
    }
}
