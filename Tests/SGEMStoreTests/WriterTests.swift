@testable import SGEMStore
import SGEMSupport
import SGEMTestPolling
import Synchronization
import Testing

@Suite struct WriterTests {
    /// Occupies the writer thread until `release` returns true, so that writes queue up behind it.
    private static func holdWriter(_ store: Store, entered: Flag, until release: @escaping @Sendable () -> Bool) -> Task<Bool, any Error> {
        Task {
            try await store.write { _ in
                entered.set()
                return blockUntil(release)
            }
        }
    }

    @Test("the writer's busy time counts batches with a write someone waits for, not background ones alone")
    func foregroundBusyTime() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry)
        try await store.write { try $0.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)") }
        let before = store.foregroundBusyNanoseconds
        #expect(before > 0)
        try await store.write(background: true) { db in
            for n in 0..<500 { try db.execute("INSERT INTO t (n) VALUES (?)", n) }
        }
        #expect(store.foregroundBusyNanoseconds == before)
        #expect(registry.render().contains("sgem_store_writer_busy_seconds_total"))
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (1)") }
        #expect(store.foregroundBusyNanoseconds > before)
        #expect(try await store.read { try $0.scalar("SELECT COUNT(*) FROM t") } == .integer(501))
        await store.close()
    }

    @Test func concurrentWritersShareCommits() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry)
        try await store.write { try $0.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL UNIQUE)") }

        let entered = Flag()
        let gate = Self.holdWriter(store, entered: entered) { store.queueDepth >= 64 }
        #expect(await eventually { entered.isSet })
        let ids = try await withThrowingTaskGroup(of: Int64.self) { group in
            for n in 0..<64 {
                group.addTask { try await store.write { db in
                    try db.execute("INSERT INTO t (n) VALUES (?)", n)
                    return db.lastInsertRowID
                } }
            }
            var ids: [Int64] = []
            for try await id in group { ids.append(id) }
            return ids
        }
        #expect(try await gate.value)
        #expect(Set(ids).count == 64)
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == Array(0..<64))
        // CREATE TABLE, the gate, then all 64 inserts in one transaction.
        let totals = histogramTotals(registry)
        #expect(totals.count == 3)
        #expect(totals.sum == 66)
        #expect(commitsTotal(registry) == 3)
        #expect(registry.render().contains("sgem_store_commit_batch_size_bucket{le=\"32\"} 2\nsgem_store_commit_batch_size_bucket{le=\"64\"} 3"))
        await store.close()
    }

    @Test func unsynchronisedWritersAllLand() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry)
        try await store.write { try $0.execute("CREATE TABLE t (n INTEGER NOT NULL UNIQUE)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<64 { group.addTask { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", n) } } }
            try await group.waitForAll()
        }
        let count = try await store.read { try $0.scalar("SELECT count(*) FROM t") }
        #expect(count == .integer(64))
        let totals = histogramTotals(registry)
        #expect(totals.sum == 65)
        #expect(totals.count <= 65)
        #expect(commitsTotal(registry) == Double(totals.count))
    }

    @Test func aThrowingJobRollsBackAloneInsideItsBatch() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry)
        try await store.write { try $0.execute("CREATE TABLE t (n INTEGER NOT NULL UNIQUE)") }
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (100)") }

        let entered = Flag()
        let gate = Self.holdWriter(store, entered: entered) { store.queueDepth >= 4 }
        #expect(await eventually { entered.isSet })
        async let first: Void = store.write { try $0.execute("INSERT INTO t (n) VALUES (1)") }
        let thrower = Task {
            try await store.write { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                throw Boom(tag: 2)
            }
        }
        let duplicate = Task {
            try await store.write { db in
                try db.execute("INSERT INTO t (n) VALUES (3)")
                try db.execute("INSERT INTO t (n) VALUES (100)")
            }
        }
        async let last: Void = store.write { try $0.execute("INSERT INTO t (n) VALUES (4)") }

        try await first
        try await last
        await #expect(throws: Boom(tag: 2)) { try await thrower.value }
        let violation = await #expect(throws: StoreError.self) { try await duplicate.value }
        #expect(violation?.isUniqueViolation == true)
        #expect(try await gate.value)

        let rows = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(rows == [1, 4, 100])
        // CREATE, INSERT 100, the gate, and one batch of four.
        #expect(histogramTotals(registry).count == 4)
        #expect(histogramTotals(registry).sum == 7)
        #expect(registry.counter("sgem_store_write_errors_total", help: "").value() == 2)
    }

    @Test func maxBatchOneCommitsEachWriteAlone() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry) { $0.maxBatch = 1 }
        try await store.write { try $0.execute("CREATE TABLE t (n INTEGER)") }
        let entered = Flag()
        let gate = Self.holdWriter(store, entered: entered) { store.queueDepth >= 10 }
        #expect(await eventually { entered.isSet })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<10 { group.addTask { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", n) } } }
            try await group.waitForAll()
        }
        #expect(try await gate.value)
        #expect(commitsTotal(registry) == 12)
        #expect(histogramTotals(registry).sum == 12)
        let count = try await store.read { try $0.scalar("SELECT count(*) FROM t") }
        #expect(count == .integer(10))
    }

    @Test func readersSeeCommittedDataWhileTheWriterWorks() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await store.write { db in
            try db.execute("CREATE TABLE t (n INTEGER)")
            try db.execute("INSERT INTO t (n) VALUES (1)")
        }
        let inserted = Flag()
        let readDone = Flag()
        let writer = Task {
            try await store.write { db in
                try db.execute("INSERT INTO t (n) VALUES (2)")
                inserted.set()
                // Keep the transaction open until a reader has looked.
                return blockUntil { readDone.isSet }
            }
        }
        #expect(await eventually { inserted.isSet })
        let during = try await store.read { try $0.scalar("SELECT count(*) FROM t") }
        readDone.set()
        #expect(during == .integer(1))
        #expect(try await writer.value)
        let after = try await store.read { try $0.scalar("SELECT count(*) FROM t") }
        #expect(after == .integer(2))
    }

    @Test func readersRunConcurrently() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir) { $0.readers = 2 }
        let firstEntered = Flag()
        let secondRan = Flag()
        async let first = store.read { _ in
            firstEntered.set()
            return blockUntil { secondRan.isSet }
        }
        #expect(await eventually { firstEntered.isSet })
        // With a single reader thread this would wait behind `first` until its deadline.
        let second = try await store.read { db in
            secondRan.set()
            return try db.scalar("SELECT 1")
        }
        #expect(second == .integer(1))
        #expect(try await first)
    }

    @Test func closeDrainsQueuedWritesThenRefusesWork() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await store.write { try $0.execute("CREATE TABLE t (n INTEGER)") }
        let entered = Flag()
        let gate = Self.holdWriter(store, entered: entered) { store.writes.isStopping }
        #expect(await eventually { entered.isSet })
        let writers = (0..<20).map { n in Task { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", n) } } }
        #expect(await eventually { store.queueDepth == 20 })
        await store.close()
        #expect(try await gate.value)
        for writer in writers { try await writer.value }

        let write = await #expect(throws: StoreError.self) { try await store.write { _ in 1 } }
        #expect(write?.code == .closed)
        let read = await #expect(throws: StoreError.self) { try await store.read { _ in 1 } }
        #expect(read?.code == .closed)
        // Closing again is harmless.
        await store.close()

        let reopened = try makeStore(dir)
        let count = try await reopened.read { try $0.scalar("SELECT count(*) FROM t") }
        #expect(count == .integer(20))
        // The last close checkpointed and removed the WAL.
        await reopened.close()
        #expect(!fileExists(dir.file("test.db-wal")))
    }

    @Test func queueDepthIsSampledByTheGauge() async throws {
        let dir = TemporaryDirectory()
        let registry = MetricsRegistry()
        let store = try makeStore(dir, metrics: registry)
        let entered = Flag()
        let release = Flag()
        let gate = Self.holdWriter(store, entered: entered) { release.isSet }
        #expect(await eventually { entered.isSet })
        let writers = (0..<3).map { _ in Task { try await store.write { _ in () } } }
        #expect(await eventually { store.queueDepth == 3 })
        #expect(registry.gauge("sgem_store_write_queue_depth", help: "").value() == 3)
        release.set()
        #expect(try await gate.value)
        for writer in writers { try await writer.value }
        #expect(registry.gauge("sgem_store_write_queue_depth", help: "").value() == 0)
    }
}
