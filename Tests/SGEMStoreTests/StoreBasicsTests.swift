import SGEMStore
import SGEMSupport
import Testing

@Suite struct StoreBasicsTests {
    @Test func pragmasAreInEffectOnWriterAndReaders() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir) { $0.busyTimeoutMilliseconds = 1234 }
        let pragmas: @Sendable (Database) throws -> [SQLValue] = { db in
            [try db.scalar("PRAGMA journal_mode"), try db.scalar("PRAGMA synchronous"),
             try db.scalar("PRAGMA foreign_keys"), try db.scalar("PRAGMA busy_timeout")]
        }
        let onWriter = try await store.write(pragmas)
        let onReader = try await store.read(pragmas)
        let expected: [SQLValue] = [.text("wal"), .integer(2), .integer(1), .integer(1234)]
        #expect(onWriter == expected)
        #expect(onReader == expected)
        #expect(await store.ping())
        await store.close()
        #expect(await store.ping() == false)
    }

    static let roundTripValues: [SQLValue] = [
        .null, .integer(0), .integer(Int64.min), .integer(Int64.max), .real(3.25), .real(-1e-300),
        .text(""), .text("héllo wörld 🎉 日本語 עברית"), .text("nul\u{0}inside"), .text(String(repeating: "x", count: 100_000)),
        .blob([]), .blob([0, 1, 2, 255, 0]), .blob(Array(repeating: 0xAB, count: 70_000)),
    ]

    @Test(arguments: roundTripValues)
    func everyValueRoundTrips(_ value: SQLValue) async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        // No declared type: no affinity, so SQLite keeps each value's own storage class.
        let id = try await store.write { db in
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
            try db.execute("INSERT INTO t (v) VALUES (?)", value)
            return db.lastInsertRowID
        }
        let read = try await store.read { db in try db.queryOne("SELECT v, typeof(v) AS kind FROM t WHERE id = ?", id) }
        let row = try #require(read)
        #expect(row["v"] == value)
        #expect(row[0] == value)
        let kind: String = switch value {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
        #expect(row.string("kind") == kind)
        await store.close()
    }

    @Test func swiftValuesBindAndRowAccessorsConvert() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let stamp = Timestamp(seconds: 1_796_070_246)
        let row = try await store.write { db -> Row? in
            try db.execute("CREATE TABLE t (i INTEGER, i32 INTEGER, i64 INTEGER, d REAL, b INTEGER, s TEXT, bytes BLOB, missing TEXT, at INTEGER)")
            let none: String? = nil
            try db.execute("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           bindings: [42, Int32(-7), Int64(1) << 40, 2.5, true, "ünï", [UInt8]([9, 8]), none, stamp])
            #expect(try db.changes == 1)
            return try db.queryOne("SELECT * FROM t")
        }
        let r = try #require(row)
        #expect(r.columns == ["i", "i32", "i64", "d", "b", "s", "bytes", "missing", "at"])
        #expect(r.int("i") == 42)
        #expect(r.int("i32") == -7)
        #expect(r.int64("i64") == 1 << 40)
        #expect(r.double("d") == 2.5)
        #expect(r.double("i") == 42)
        #expect(r.bool("b") == true)
        #expect(r.string("s") == "ünï")
        #expect(r.blob("bytes") == [9, 8])
        #expect(r["missing"] == .null)
        #expect(r.string("missing") == nil)
        #expect(r["no_such_column"] == .null)
        #expect(r[99] == .null)
        #expect(r.timestamp("at") == stamp)
        #expect(r["at"] == .integer(1_796_070_246_000), "stored as epoch milliseconds")
        #expect(r.int("s") == nil)
        // The same by position, as repositories decoding many rows read them.
        #expect(r.int64(at: 2) == 1 << 40 && r.double(at: 3) == 2.5 && r.double(at: 0) == 42 && r.bool(at: 4) == true)
        #expect(r.string(at: 5) == "ünï" && r.string(at: 7) == nil && r.timestamp(at: 8) == stamp)
        #expect(r.int64(at: 5) == nil && r.string(at: 99) == nil && r.bool(at: -1) == nil)
    }

    @Test func syntaxErrorCarriesCodeAndSQL() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let sql = "SELEC 1"
        let error = await #expect(throws: StoreError.self) { try await store.read { try $0.query(sql) } }
        #expect(error?.code == .sqlite)
        #expect(error?.sqliteCode == 1)   // SQLITE_ERROR
        #expect(error?.sql == sql)
        #expect(error?.message.contains("syntax error") == true)
        #expect(error?.isConstraintViolation == false)
    }

    @Test func constraintViolationsAreFlagged() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await store.write { db in
            try db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            try db.execute("INSERT INTO users (id, name) VALUES (1, 'ann')")
        }
        let unique = await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("INSERT INTO users (name) VALUES (?)", "ann") }
        }
        #expect(unique?.isUniqueViolation == true)
        #expect(unique?.isConstraintViolation == true)
        #expect(unique?.sqliteCode == 2067)   // SQLITE_CONSTRAINT_UNIQUE
        let primaryKey = await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("INSERT INTO users (id, name) VALUES (1, 'bob')") }
        }
        #expect(primaryKey?.isUniqueViolation == true)
        let notNull = await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("INSERT INTO users (name) VALUES (?)", String?.none) }
        }
        #expect(notNull?.isConstraintViolation == true)
        #expect(notNull?.isUniqueViolation == false)
        let count = try await store.read { try $0.scalar("SELECT count(*) FROM users") }
        #expect(count == .integer(1))
    }

    @Test func foreignKeysAreEnforced() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await store.write { db in
            try db.executeScript("""
                CREATE TABLE parent (id INTEGER PRIMARY KEY);
                CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parent(id));
                CREATE TABLE lazy (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
                INSERT INTO parent (id) VALUES (1);
                """)
        }
        let immediate = await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("INSERT INTO child (parent_id) VALUES (?)", 99) }
        }
        #expect(immediate?.sqliteCode == 787)   // SQLITE_CONSTRAINT_FOREIGNKEY
        // A deferred violation fails its own write, not the batch's COMMIT.
        let deferred = await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("INSERT INTO lazy (parent_id) VALUES (?)", 99) }
        }
        #expect(deferred?.isConstraintViolation == true)
        try await store.write { try $0.execute("INSERT INTO lazy (parent_id) VALUES (?)", 1) }
        let counts = try await store.read { db in
            [try db.scalar("SELECT count(*) FROM child"), try db.scalar("SELECT count(*) FROM lazy")]
        }
        #expect(counts == [.integer(0), .integer(1)])
    }

    @Test func readersCannotWrite() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await store.write { try $0.execute("CREATE TABLE t (x)") }
        let error = await #expect(throws: StoreError.self) {
            try await store.read { try $0.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(error.flatMap(\.sqliteCode).map { $0 & 0xFF } == 8)   // SQLITE_READONLY family
    }

    @Test func wrongBindingCountIsAnError() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        let error = await #expect(throws: StoreError.self) {
            try await store.read { try $0.query("SELECT ?, ?", 1) }
        }
        #expect(error?.message.contains("expected 2 bindings, got 1") == true)
    }

    @Test func executeRefusesSeveralStatementsButScriptRunsThem() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        await #expect(throws: StoreError.self) {
            try await store.write { try $0.execute("CREATE TABLE a (x); CREATE TABLE b (x)") }
        }
        let tables = try await store.write { db in
            try db.executeScript("CREATE TABLE a (x);\n-- a comment\nCREATE TABLE b (x); INSERT INTO b VALUES (1);")
            return try db.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap { $0.string("name") }
        }
        #expect(tables == ["a", "b"])
    }

    @Test(arguments: [0, 2, 64])
    func cachedStatementsSurviveSchemaChangesAndEviction(cacheSize: Int) async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir) { $0.statementCacheSize = cacheSize }
        try await store.write { db in
            try db.execute("CREATE TABLE t (a INTEGER)")
            try db.execute("INSERT INTO t (a) VALUES (?)", 1)
        }
        let before = try await store.read { try $0.queryOne("SELECT * FROM t") }
        #expect(before?.columns == ["a"])
        try await store.write { db in
            try db.execute("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'new'")
            // The cached INSERT was prepared against the old schema.
            try db.execute("INSERT INTO t (a) VALUES (?)", 2)
        }
        let after = try await store.read { db in
            // More distinct statements than a small cache holds, then the first one again.
            let distinct = try (0..<5).map { i in try db.scalar("SELECT a + ? FROM t WHERE a = 1", i) }
            return (try db.query("SELECT * FROM t ORDER BY a"), distinct)
        }
        #expect(after.0.map(\.columns) == [["a", "b"], ["a", "b"]])
        #expect(after.0.map { $0.string("b") } == ["new", "new"])
        #expect(after.0.map { $0.int("a") } == [1, 2])
        #expect(after.1 == (0..<5).map { .integer(1 + Int64($0)) })
    }

    @Test func openingAMissingDirectoryFailsClearly() throws {
        let dir = TemporaryDirectory()
        let error = #expect(throws: StoreError.self) {
            _ = try Store(path: dir.file("missing/sub/db.sqlite"), logger: testLogger, metrics: MetricsRegistry())
        }
        #expect(error?.code == .sqlite)
        #expect(error?.sqliteCode == 14)   // SQLITE_CANTOPEN
        #expect(error?.message.contains("missing/sub/db.sqlite") == true)
    }
}
