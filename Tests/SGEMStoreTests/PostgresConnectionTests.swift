#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMSupport
import Synchronization
import SGEMTestSupport
import Testing

/// Fails in CI when the PostgreSQL suites would be skipped: `make test` must export the URL.
@Suite struct PostgresGuardTests {
    @Test(.enabled(if: getenv("CI") != nil, "only CI promises a throwaway PostgreSQL"))
    func ciRunsThePostgresSuites() {
        #expect(testDatabaseURL != nil, "SGEM_TEST_DATABASE_URL is not set: run the tests through `make test`")
    }
}

/// The libpq connection against a real server: values, errors by SQLSTATE, notifications, locks.
// Needs the throwaway server `make test` starts (scripts/pg-throwaway.sh start prints its URL).
@Suite(.enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct PostgresConnectionTests {
    @Test func connectsIntoItsOwnSchema() throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        #expect(db.isConnected)
        #expect(db.backendPID > 0)
        #expect(db.serverVersion >= 120000)
        let row = try #require(try db.query("SELECT current_schema() AS s, current_setting('server_encoding') AS e").first)
        #expect(row.string("s") == schema.name)
        #expect(row.string("e") == "UTF8")
    }

    @Test func passwordNeverAppearsInErrorsOrDescriptions() throws {
        let url = try #require(PostgresURL("postgresql://sgem:hunter2%25secret@/nodb?host=/nonexistent-dir-for-test&password=other%2Dpw"))
        #expect(!url.description.contains("hunter2"))
        #expect(!url.description.contains("other"))
        #expect(url.description.contains("sgem:***@"))
        let error = try #require(storeError { _ = try PostgresConnection(url: url) })
        #expect(error.code == .connectionFailed)
        #expect(error.category == .connectionLost)
        #expect(!error.description.contains("hunter2"))
        #expect(!error.description.contains("other-pw"))
        // A malformed escape makes libpq quote the raw userinfo back; it is masked too.
        let bad = storeError { _ = try PostgresConnection(url: "postgresql://sgem:hunter2%zz@/nodb?host=/nonexistent-dir-for-test") }
        #expect(bad?.code == .connectionFailed)
        #expect(bad.map { !$0.description.contains("hunter2") } == true)
        #expect(storeError { _ = try PostgresConnection(url: "mysql://x@y/z") }?.code == .connectionFailed)
    }

    static let roundTrips: [(String, SQLValue)] = [
        ("BIGINT", .integer(Int64.max)), ("BIGINT", .integer(Int64.min)), ("INTEGER", .integer(-42)), ("SMALLINT", .integer(7)),
        ("DOUBLE PRECISION", .real(3.141592653589793)), ("DOUBLE PRECISION", .real(-1e-300)),
        ("DOUBLE PRECISION", .real(.infinity)), ("REAL", .real(0.5)), ("NUMERIC", .real(12.25)),
        ("TEXT", .text("héllo — 日本語 🎉 \"quotes\" 'and' \\backslash")), ("TEXT", .text("")),
        ("BYTEA", .blob([0, 1, 2, 0x5C, 0x78, 0xFF, 0])), ("BYTEA", .blob([])), ("BYTEA", .blob((0..<65_536).map { UInt8($0 & 0xFF) })),
        ("BOOLEAN", .integer(1)), ("BOOLEAN", .integer(0)),
        ("TEXT", .null), ("BYTEA", .null), ("BIGINT", .null), ("BOOLEAN", .null), ("DOUBLE PRECISION", .null),
    ]

    @Test(arguments: roundTrips)
    func valuesRoundTripByColumnType(_ type: String, _ value: SQLValue) throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        try db.execute("CREATE TABLE v (x \(type))")
        #expect(try db.execute("INSERT INTO v (x) VALUES ($1)", [value]) == 1)
        let rows = try db.query("SELECT x FROM v")
        #expect(rows.count == 1)
        #expect(rows.first?[0] == value)
        // The binding compares as the column's type, too.
        let matched = try db.query("SELECT count(*) AS n FROM v WHERE x IS NOT DISTINCT FROM $1", [value])
        #expect(matched.first?.int("n") == 1)
    }

    @Test func textWithNulIsRefusedBeforeTheServer() throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        let error = storeError { try db.query("SELECT $1::text", [.text("a\u{0}b")]) }
        #expect(error?.sqlState == "22021")
        #expect(db.isConnected)
    }

    @Test func uniqueViolationIsCategorised() throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        try db.execute("CREATE TABLE u (email TEXT UNIQUE)")
        try db.execute("INSERT INTO u VALUES ($1)", [.text("a@example.com")])
        let error = try #require(storeError { try db.execute("INSERT INTO u VALUES ($1)", [.text("a@example.com")]) })
        #expect(error.code == .postgres)
        #expect(error.sqlState == "23505")
        #expect(error.category == .uniqueViolation)
        #expect(error.isUniqueViolation && error.isConstraintViolation)
        #expect(error.sql == "INSERT INTO u VALUES ($1)")
        #expect(!error.message.isEmpty)
    }

    @Test func foreignKeyViolationIsCategorised() throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        try db.executeScript("CREATE TABLE p (id BIGINT PRIMARY KEY); CREATE TABLE c (p BIGINT REFERENCES p(id))")
        let error = try #require(storeError { try db.execute("INSERT INTO c VALUES ($1)", [.integer(9)]) })
        #expect(error.sqlState == "23503")
        #expect(error.category == .foreignKeyViolation)
        #expect(!error.isUniqueViolation)
    }

    @Test func conflictingSerializableTransactionsFailWithSerializationFailure() throws {
        let schema = try PostgresSchema()
        let a = try schema.connect()
        let b = try schema.connect()
        try a.executeScript("CREATE TABLE counter (id BIGINT PRIMARY KEY, n BIGINT); INSERT INTO counter VALUES (1, 0)")
        try a.begin(.serializable)
        #expect(try a.query("SELECT n FROM counter WHERE id = 1").first?.int("n") == 0)
        try b.transaction(.serializable) { b in
            try b.execute("UPDATE counter SET n = n + 1 WHERE id = 1")
        }
        let error = try #require(storeError {
            try a.execute("UPDATE counter SET n = n + 10 WHERE id = 1")
            try a.commit()
        })
        #expect(error.sqlState == "40001")
        #expect(error.category == .serializationFailure)
        try a.rollback()
        #expect(try a.query("SELECT n FROM counter").first?.int("n") == 1)
    }

    @Test func lockTimeoutIsCategorisedAndTheConnectionStaysUsable() throws {
        let schema = try PostgresSchema()
        let holder = try schema.connect()
        let waiter = try schema.connect()
        try holder.executeScript("CREATE TABLE r (id BIGINT PRIMARY KEY, v TEXT); INSERT INTO r VALUES (1, 'a')")
        try holder.begin()
        try holder.execute("UPDATE r SET v = 'b' WHERE id = 1")
        try waiter.setLockTimeout(milliseconds: 100)
        let error = try #require(storeError { try waiter.execute("UPDATE r SET v = 'c' WHERE id = 1") })
        #expect(error.sqlState == "55P03")
        #expect(error.category == .lockTimeout)
        try holder.commit()
        #expect(try waiter.execute("UPDATE r SET v = 'c' WHERE id = 1") == 1)
    }

    @Test func crossedRowLocksFailOneSideWithDeadlock() async throws {
        let schema = try PostgresSchema()
        try schema.connect().executeScript("CREATE TABLE r (id BIGINT PRIMARY KEY, v BIGINT); INSERT INTO r VALUES (1, 0), (2, 0)")
        let url = try #require(testDatabaseURL)
        let name = schema.name
        // Each side blocks in libpq, so each gets a thread of its own, not the cooperative pool.
        let pool = BlockingPool(name: "pg-deadlock-test", threads: 2)
        defer { pool.shutdown() }
        let holding = Counter()
        async let a = pool.run { try Self.deadlockSide(url: url, schema: name, holding: holding, first: 1, then: 2) }
        async let b = pool.run { try Self.deadlockSide(url: url, schema: name, holding: holding, first: 2, then: 1) }
        let outcomes = try await [a, b]
        #expect(outcomes.filter { $0 == .deadlock }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == nil }.count == 1, "the other side commits")
        let values = try schema.connect().query("SELECT v FROM r ORDER BY id").map { $0.int("v") }
        #expect(values == [1, 1])
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    /// One side of the crossed locks: updates `first`, waits until both sides hold a row, then
    /// updates `second`; nil when it committed, else its error's category.
    static func deadlockSide(url: String, schema: String, holding: Counter, first: Int64, then second: Int64) throws -> StoreError.Category? {
        let db = try PostgresConnection(url: url)
        try db.execute("SET search_path TO \(schema)")
        try db.execute("SET deadlock_timeout = '50ms'")
        try db.begin()
        try db.execute("UPDATE r SET v = v + 1 WHERE id = $1", [.integer(first)])
        holding.value.add(1, ordering: .sequentiallyConsistent)
        // Both hold their first row before either reaches for the other's: a certain deadlock.
        guard blockUntil(timeout: 30, { holding.value.load(ordering: .sequentiallyConsistent) == 2 }) else { return .other }
        do {
            try db.execute("UPDATE r SET v = v + 1 WHERE id = $1", [.integer(second)])
            try db.commit()
            return nil
        } catch let error as StoreError {
            try db.rollback()
            return error.category
        }
    }

    @Test func terminatedBackendIsConnectionLostAndReconnects() throws {
        let schema = try PostgresSchema()
        let victim = try schema.connect()
        let admin = try schema.connect()
        let pid = victim.backendPID
        // The two-argument form waits (up to 5 s) until the backend is gone.
        #expect(try admin.query("SELECT pg_terminate_backend($1::int, 5000) AS done", [.integer(Int64(pid))]).first?.bool("done") == true)
        let error = try #require(storeError { try victim.query("SELECT 1") })
        #expect(error.code == .connectionLost)
        #expect(error.category == .connectionLost)
        #expect(!victim.isConnected)
        try victim.reconnect()
        #expect(victim.isConnected)
        #expect(victim.backendPID != pid)
        try schema.enter(victim)
        #expect(try victim.query("SELECT current_schema() AS s").first?.string("s") == schema.name)
    }

    @Test func idleInTransactionTimeoutEndsTheSessionAndReleasesItsLock() throws {
        let schema = try PostgresSchema()
        let idle = try schema.connect()
        let other = try schema.connect()
        try idle.setIdleInTransactionSessionTimeout(milliseconds: 50)
        try idle.begin()
        #expect(try idle.tryAdvisoryTransactionLock(7))
        let pid = Int64(idle.backendPID)
        // Wait on the condition: the server ends the idle session by itself.
        let ended = blockUntil(timeout: 30) {
            (try? other.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [.integer(pid)]).isEmpty) == true
        }
        #expect(ended)
        try other.begin()
        #expect(try other.tryAdvisoryTransactionLock(7), "the ended session's lock is released")
        try other.commit()
        let error = storeError { try idle.query("SELECT 1") }
        #expect(error?.category == .connectionLost)
    }

    @Test func listenReceivesNotificationsOnlyAfterTheSenderCommits() throws {
        let schema = try PostgresSchema()
        let listener = try schema.connect()
        let sender = try schema.connect()
        try listener.listen("journal")
        #expect(try listener.waitForNotification(timeoutMilliseconds: 20) == nil)
        try sender.begin()
        try sender.notify("journal", payload: "42 ✓")
        #expect(try listener.waitForNotification(timeoutMilliseconds: 50) == nil, "not delivered before COMMIT")
        try sender.commit()
        let note = try #require(try listener.waitForNotification(timeoutMilliseconds: 10_000))
        #expect(note == PostgresNotification(channel: "journal", payload: "42 ✓", senderPID: sender.backendPID))
        // Several at once are all read; another channel is not heard.
        try sender.notify("elsewhere", payload: "x")
        for i in 1...3 { try sender.notify("journal", payload: "\(i)") }
        var payloads: [String] = []
        while payloads.count < 3, let next = try listener.waitForNotification(timeoutMilliseconds: 10_000) {
            payloads.append(next.payload)
        }
        #expect(payloads == ["1", "2", "3"])
        try listener.unlisten("journal")
        try sender.notify("journal", payload: "after")
        try sender.query("SELECT 1")
        #expect(try listener.pendingNotifications().isEmpty)
    }

    @Test func advisoryTransactionLockExcludesASecondConnection() throws {
        let schema = try PostgresSchema()
        let a = try schema.connect()
        let b = try schema.connect()
        try a.begin()
        try a.advisoryTransactionLock(17_0001)
        try b.begin()
        #expect(try b.tryAdvisoryTransactionLock(17_0001) == false)
        #expect(try b.tryAdvisoryTransactionLock(17_0002) == true, "another key is free")
        try b.rollback()
        try b.setLockTimeout(milliseconds: 100)
        let error = try #require(storeError { try b.transaction { try $0.advisoryTransactionLock(17_0001) } })
        #expect(error.category == .lockTimeout)
        try a.commit()
        // COMMIT released it.
        try b.transaction { b in try b.advisoryTransactionLock(17_0001) }
    }

    @Test func transactionsAndSavepoints() throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        try db.execute("CREATE TABLE t (v TEXT)")
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try db.transaction { db in
                try db.execute("INSERT INTO t VALUES ('rolled back')")
                throw Refused()
            }
        }
        try db.transaction { db in
            try db.execute("INSERT INTO t VALUES ('kept')")
            try db.savepoint("job_1")
            try db.execute("INSERT INTO t VALUES ('undone')")
            // A failed statement aborts the transaction; rolling back to the savepoint recovers it.
            _ = storeError { try db.execute("INSERT INTO missing_table VALUES (1)") }
            try db.rollbackToSavepoint("job_1")
            try db.savepoint("job_2")
            try db.execute("INSERT INTO t VALUES ('released')")
            try db.releaseSavepoint("job_2")
        }
        #expect(try db.query("SELECT v FROM t ORDER BY v").map { $0.string("v") } == ["kept", "released"])
        #expect(storeError { try db.savepoint("x; DROP TABLE t") }?.code == .postgres)
        try db.begin(.repeatableRead, readOnly: true)
        #expect(storeError { try db.execute("INSERT INTO t VALUES ('no')") }?.sqlState == "25006")
        try db.rollback()
    }
}
