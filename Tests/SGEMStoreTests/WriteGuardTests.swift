@testable import SGEMStore
import SGEMSupport
import SGEMTestPolling
import Synchronization
import Testing

/// A write closure cannot break group commit: transaction control is refused inside it, and when
/// the batch transaction is lost or its COMMIT fails, a caller hears "failed" only for rows that
/// are not stored.
@Suite struct WriteGuardTests {
    /// A table `t (n UNIQUE)` and a write holding the writer until `release` is set, so that the
    /// writes queued meanwhile form one batch. Returns the store and the holding task.
    private static func storeWithHeldWriter(_ dir: TemporaryDirectory, registry: MetricsRegistry, release: Flag,
                                            schema: String = "CREATE TABLE t (n INTEGER NOT NULL UNIQUE)") async throws -> (Store, Task<Bool, any Error>) {
        let store = try makeStore(dir, metrics: registry)
        try await store.write { try $0.executeScript(schema) }
        // Warm the writer's own statement cache with its transaction-control statements.
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (-1)") }
        try await store.write { try $0.execute("DELETE FROM t") }
        let entered = Flag()
        let gate = Task { try await store.write { _ in entered.set(); return blockUntil { release.isSet } } }
        #expect(await eventually { entered.isSet })
        return (store, gate)
    }

    /// Enqueues `bodies` in order (each waits for the previous one to be queued).
    private static func enqueue(_ store: Store, _ bodies: [@Sendable (Database) throws -> Void]) async -> [Task<Void, any Error>] {
        var tasks: [Task<Void, any Error>] = []
        for (index, body) in bodies.enumerated() {
            tasks.append(Task { try await store.write(body) })
            #expect(await eventually { store.queueDepth == index + 1 })
        }
        return tasks
    }

    /// Queues `bodies` in order behind a held writer, then lets them run as one batch.
    private static func runBatch(schema: String = "CREATE TABLE t (n INTEGER NOT NULL UNIQUE)",
                                 _ bodies: [@Sendable (Database) throws -> Void])
        async throws -> (TemporaryDirectory, MetricsRegistry, Store, [Task<Void, any Error>]) {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let release = Flag()
        let (store, gate) = try await storeWithHeldWriter(dir, registry: registry, release: release, schema: schema)
        let tasks = await enqueue(store, bodies)
        release.set()
        #expect(try await gate.value)
        return (dir, registry, store, tasks)
    }

    private static func rows(_ store: Store) async throws -> [Int] {
        try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
    }

    private static func insert(_ n: Int) -> @Sendable (Database) throws -> Void {
        { try $0.execute("INSERT INTO t (n) VALUES (?)", n) }
    }

    static let transactionControl = [
        "COMMIT", "END", "ROLLBACK", "BEGIN", "BEGIN IMMEDIATE", "SAVEPOINT sgem_job", "RELEASE sgem_job",
        "RELEASE SAVEPOINT sgem_job", "ROLLBACK TO sgem_job", "SAVEPOINT mine",
    ]

    @Test(arguments: transactionControl)
    func transactionControlInAWriteFailsThatWriteAlone(_ statement: String) async throws {
        let (dir, registry, store, tasks) = try await Self.runBatch([
            Self.insert(1),
            { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                try db.execute(statement)
            },
            Self.insert(3),
        ])
        try await tasks[0].value
        let refused = await #expect(throws: StoreError.self) { try await tasks[1].value }
        #expect(refused?.code == .transactionControl)
        #expect(refused?.sql == statement)
        try await tasks[2].value
        #expect(try await Self.rows(store) == [1, 3])
        // The three shared one transaction: the culprit did not split the batch.
        let totals = histogramTotals(registry)
        #expect(totals.sum - Double(totals.count) == 2)
        // The writer still works afterwards.
        try await store.write(Self.insert(4))
        #expect(try await Self.rows(store) == [1, 3, 4])
        await store.close()
        withExtendedLifetime(dir) {}
    }

    @Test(arguments: ["COMMIT", "SAVEPOINT sgem_job", "INSERT INTO t (n) VALUES (5); COMMIT; INSERT INTO t (n) VALUES (6)"])
    func aWriteThatSwallowsTheRefusalStillFails(_ statement: String) async throws {
        let (dir, _, store, tasks) = try await Self.runBatch([
            Self.insert(1),
            { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                try? db.executeScript(statement)
            },
            Self.insert(3),
        ])
        try await tasks[0].value
        let refused = await #expect(throws: StoreError.self) { try await tasks[1].value }
        #expect(refused?.code == .transactionControl)
        try await tasks[2].value
        #expect(try await Self.rows(store) == [1, 3])
        await store.close()
        withExtendedLifetime(dir) {}
    }

    @Test func migrationsStillManageTheirOwnTransactions() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        var list = MigrationList()
        list.add("test.001_create", sql: "CREATE TABLE t (n INTEGER)")
        list.add("test.002_fill") { db in try db.execute("INSERT INTO t (n) VALUES (1)") }
        #expect(try await store.migrate(list) == ["test.001_create", "test.002_fill"])
        // A guarded write after the writer's own BEGIN/COMMIT still refuses COMMIT.
        let refused = await #expect(throws: StoreError.self) { try await store.write { try $0.execute("COMMIT") } }
        #expect(refused?.code == .transactionControl)
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t") } == .integer(1))
        await store.close()
        withExtendedLifetime(dir) {}
    }

    @Test(arguments: [false, true])
    func aLostTransactionFailsTheJobsThatRanAndRequeuesTheRest(culpritThrows: Bool) async throws {
        let (dir, registry, store, tasks) = try await Self.runBatch([
            Self.insert(1),
            { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                throw Boom(tag: 2)
            },
            { db in
                try db.execute("INSERT INTO t (n) VALUES (3)")
                // What an I/O error or a full disk does: SQLite ends the transaction under the job.
                let sqlite = try db.sqliteConnection(for: "test")
                try sqlite.withGuardSuspended { try sqlite.execute("ROLLBACK") }
                if culpritThrows { throw Boom(tag: 3) }
            },
            Self.insert(4),
            Self.insert(5),
        ])
        // The job that had succeeded learns its work is gone (and may retry safely).
        let lost = await #expect(throws: StoreError.self) { try await tasks[0].value }
        #expect(lost?.code == .batchAborted)
        await #expect(throws: Boom(tag: 2)) { try await tasks[1].value }
        if culpritThrows {
            await #expect(throws: Boom(tag: 3)) { try await tasks[2].value }
        } else {
            let culprit = await #expect(throws: StoreError.self) { try await tasks[2].value }
            #expect(culprit?.code == .transactionControl)
        }
        // The untouched jobs were requeued and committed.
        try await tasks[3].value
        try await tasks[4].value
        #expect(try await Self.rows(store) == [4, 5])
        #expect(registry.counter("sgem_store_write_errors_total", help: "").value() == 3)
        await store.close()

        // On disk too: exactly the rows of the callers told "done".
        let reopened = try makeStore(dir)
        #expect(try await Self.rows(reopened) == [4, 5])
        // A retry of the lost write lands once.
        try await reopened.write(Self.insert(1))
        #expect(try await Self.rows(reopened) == [1, 4, 5])
        await reopened.close()
    }

    @Test func aFailedCommitFailsEveryCallerAndStoresNothing() async throws {
        let (dir, _, store, tasks) = try await Self.runBatch([
            Self.insert(1),
            { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                try db.sqliteConnection(for: "test").failNextCommit()
            },
            { db in
                try db.execute("INSERT INTO t (n) VALUES (3)")
                throw Boom(tag: 3)
            },
        ])
        for index in [0, 1] {
            let failed = await #expect(throws: StoreError.self) { try await tasks[index].value }
            #expect(failed?.code == .sqlite)
            // SQLITE_CONSTRAINT_COMMITHOOK: the COMMIT itself failed and rolled back.
            #expect(failed?.sqliteCode == SQLITE_CONSTRAINT_CODE | (2 << 8))
        }
        await #expect(throws: Boom(tag: 3)) { try await tasks[2].value }
        #expect(try await Self.rows(store) == [])
        // Retrying is safe: each row lands once.
        try await store.write(Self.insert(1))
        try await store.write(Self.insert(2))
        #expect(try await Self.rows(store) == [1, 2])
        await store.close()
        let reopened = try makeStore(dir)
        #expect(try await Self.rows(reopened) == [1, 2])
        await reopened.close()
    }

    @Test func aDeferredForeignKeyViolationFailsOnlyItsWrite() async throws {
        let (dir, _, store, tasks) = try await Self.runBatch(schema: """
            CREATE TABLE t (n INTEGER NOT NULL UNIQUE);
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
            """, [
            Self.insert(1),
            { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                try db.execute("INSERT INTO child (parent_id) VALUES (42)")
            },
            Self.insert(3),
        ])
        try await tasks[0].value
        let violation = await #expect(throws: StoreError.self) { try await tasks[1].value }
        #expect(violation?.isConstraintViolation == true)
        try await tasks[2].value
        #expect(try await Self.rows(store) == [1, 3])
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM child") } == .integer(0))
        await store.close()
        withExtendedLifetime(dir) {}
    }
}

let SQLITE_CONSTRAINT_CODE: Int32 = 19
