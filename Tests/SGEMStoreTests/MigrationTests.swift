import SGEMStore
import SGEMSupport
import Testing

@Suite struct MigrationTests {
    private static func baseList() -> MigrationList {
        var list = MigrationList()
        list.add("accounts.001_create_users", sql: """
            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
            CREATE INDEX users_name ON users (name);
            """)
        list.add("accounts.002_seed_admin") { db in
            try db.execute("INSERT INTO users (name) VALUES (?)", "admin")
        }
        list.add("notices.001_create_notices", sql: "CREATE TABLE notices (id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
        return list
    }

    @Test func migrationsApplyOnceInOrder() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let list = Self.baseList()
        #expect(try await store.appliedMigrations() == [])
        #expect(try await store.migrate(list) == list.ids)
        #expect(try await store.migrate(list) == [])
        #expect(try await store.appliedMigrations() == list.ids)
        let admins = try await store.read { try $0.scalar("SELECT count(*) FROM users") }
        #expect(admins == .integer(1))   // the Swift migration did not run twice

        var extended = list
        extended.add("notices.002_add_body", sql: "ALTER TABLE notices ADD COLUMN body TEXT NOT NULL DEFAULT ''")
        #expect(try await store.migrate(extended) == ["notices.002_add_body"])
        #expect(try await store.appliedMigrations() == extended.ids)
        let stamps = try await store.read { db in try db.query("SELECT applied_at FROM sgem_migrations").compactMap { $0.timestamp("applied_at") } }
        #expect(stamps.count == extended.ids.count)
        await store.close()

        // A new process sees the same state.
        let reopened = try makeStore(dir)
        #expect(try await reopened.migrate(extended) == [])
        #expect(try await reopened.appliedMigrations() == extended.ids)
    }

    @Test("a database whose migrations were recorded with text times gets epoch milliseconds, order kept")
    func textTimesBecomeMilliseconds() async throws {
        let dir = TemporaryDirectory()
        let list = Self.baseList()
        do {
            // The bookkeeping as servers before the change wrote it.
            let store = try makeStore(dir)
            try await store.write { db in
                try db.execute("CREATE TABLE sgem_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                try db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
                try db.execute("CREATE INDEX users_name ON users (name)")
                try db.execute("INSERT INTO users (name) VALUES ('admin')")
                // Recorded out of alphabetical order: the order of application is the rowid's.
                try db.execute("INSERT INTO sgem_migrations (id, applied_at) VALUES ('accounts.002_seed_admin', '2026-11-01T10:00:00.250Z')")
                try db.execute("INSERT INTO sgem_migrations (id, applied_at) VALUES ('accounts.001_create_users', '2026-11-01T10:00:01Z')")
            }
            await store.close()
        }
        let store = try makeStore(dir)
        #expect(try await store.migrate(list) == ["notices.001_create_notices"])
        #expect(try await store.appliedMigrations() == ["accounts.002_seed_admin", "accounts.001_create_users", "notices.001_create_notices"])
        let rows = try await store.read { db in try db.query("SELECT id, applied_at, typeof(applied_at) AS kind FROM sgem_migrations ORDER BY rowid") }
        #expect(rows.allSatisfy { $0.string("kind") == "integer" })
        #expect(rows.prefix(2).map { $0.timestamp("applied_at")?.rfc3339(fractional: true) } == ["2026-11-01T10:00:00.250Z", "2026-11-01T10:00:01.000Z"])
        let type = try await store.read { db in
            try db.query("PRAGMA table_info(sgem_migrations)").first { $0.string("name") == "applied_at" }?.string("type")
        }
        #expect(type == "INTEGER")
        #expect(try await store.migrate(list) == [], "converting happens once and loses nothing")
        await store.close()
    }

    @Test func failingMigrationRollsBackAndNamesItself() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        var list = Self.baseList()
        list.add("notices.002_broken", sql: """
            CREATE TABLE half_done (x);
            INSERT INTO notices (missing_column) VALUES (1);
            """)
        list.add("notices.003_never", sql: "CREATE TABLE never (x)")
        let error = await #expect(throws: StoreError.self) { try await store.migrate(list) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("notices.002_broken") == true)
        #expect(error?.sql == "INSERT INTO notices (missing_column) VALUES (1);")
        #expect(try await store.appliedMigrations() == Self.baseList().ids)
        let leftovers = try await store.read { db in
            try db.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('half_done', 'never')")
        }
        #expect(leftovers == .integer(0))

        // Swift migrations that throw roll back the same way.
        var swiftList = Self.baseList()
        swiftList.add("notices.002_swift_broken") { db in
            try db.execute("INSERT INTO notices (title) VALUES ('kept?')")
            throw Boom(tag: 7)
        }
        let swiftError = await #expect(throws: StoreError.self) { try await store.migrate(swiftList) }
        #expect(swiftError?.message.contains("notices.002_swift_broken") == true)
        #expect((swiftError?.cause as? Boom) == Boom(tag: 7))
        let notices = try await store.read { try $0.scalar("SELECT count(*) FROM notices") }
        #expect(notices == .integer(0))
    }

    @Test(arguments: ["Accounts.001_create", "accounts.01_create", "accounts001_create", "accounts.001_", "accounts.001-create",
                      "1accounts.001_create", "", "accounts.", ".001_create", "accounts.001_Create", "accounts.0011create",
                      "ac-counts.001_create", "accounts.001_create.x"])
    func malformedIDsAreRejected(id: String) async throws {
        #expect(!Migration.isValidID(id))
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        var list = MigrationList()
        list.add("accounts.001_ok", sql: "CREATE TABLE ok (x)")
        list.add(id, sql: "CREATE TABLE t (x)")
        let error = await #expect(throws: StoreError.self) { try await store.migrate(list) }
        #expect(error?.code == .invalidMigrationID)
        // Validation happens before anything runs.
        #expect(try await store.appliedMigrations() == [])
    }

    @Test(arguments: ["accounts.001_create_users", "a.000_x", "holidays_v2.123_add_2_columns", "x9.999_9"])
    func wellFormedIDsAreAccepted(id: String) {
        #expect(Migration.isValidID(id))
    }

    @Test func duplicateIDsAreRejected() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        var list = Self.baseList()
        list.add("accounts.001_create_users", sql: "SELECT 1")
        let error = await #expect(throws: StoreError.self) { try await store.migrate(list) }
        #expect(error?.code == .invalidMigrationID)
        #expect(error?.message.contains("twice") == true)
        #expect(try await store.appliedMigrations() == [])
    }
}
