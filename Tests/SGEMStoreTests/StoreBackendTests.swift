#if canImport(Glibc)
import Glibc
#endif
@testable import SGEMStore
import SGEMSupport
import Synchronization
import SGEMTestSupport
import Testing

/// The store's contract, the same on SQLite and PostgreSQL: values, group commit with a savepoint
/// per write, the write guard, errors by category, migrations, readers' snapshots; and on
/// PostgreSQL what only several processes can show (commit order across writers, check-then-write
/// across stores, a lost connection).
@Suite struct StoreBackendTests {
    static let schema: SQL = "CREATE TABLE t (id \(.identityPrimaryKey), n \(.bigintType) NOT NULL UNIQUE, label TEXT, score \(.doubleType), data \(.blobType))"

    @Test(arguments: TestBackend.available)
    func valuesRoundTripAndIdentityKeysComeBack(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { try $0.run(Self.schema) }
        let samples: [(Int64, String?, Double?, [UInt8]?)] = [
            (1, "Zoë 日本 'quoted' ?", 2.5, [0, 1, 0xFF]), (2, nil, nil, nil), (Int64.max, "", -0.125, []),
        ]
        var ids: [Int64] = []
        for (n, label, score, data) in samples {
            ids.append(try await store.write { db in
                try db.execute("INSERT INTO t (n, label, score, data) VALUES (?, ?, ?, ?)", n, label, score, data)
                #expect(try db.changes == 1)
                return db.lastInsertRowID
            })
        }
        #expect(ids == [1, 2, 3])
        let rows = try await store.read { db in
            try db.query("SELECT n, label, score, data FROM t WHERE n >= ? ORDER BY id", Int64(0)).map { row in
                [row[0], row[1], row[2], row[3]]
            }
        }
        let expected: [[SQLValue]] = [
            [.integer(1), .text("Zoë 日本 'quoted' ?"), .real(2.5), .blob([0, 1, 0xFF])],
            [.integer(2), .null, .null, .null],
            [.integer(Int64.max), .text(""), .real(-0.125), .blob([])],
        ]
        #expect(rows == expected)
        // A question mark inside a literal is text, not a placeholder.
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t WHERE label = 'Zoë 日本 ''quoted'' ?' AND n = ?", Int64(1)) } == .integer(1))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func concurrentWritesAllLandAndAThrowingOneRollsBackAlone(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { try $0.run(Self.schema) }
        struct Refused: Error {}
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for n in 0..<60 {
                group.addTask {
                    do {
                        try await store.write { db in
                            try db.execute("INSERT INTO t (n) VALUES (?)", n)
                            // Every seventh write throws after writing: its row must not stay.
                            if n % 7 == 3 { throw Refused() }
                        }
                        return true
                    } catch {
                        return false
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let kept: [Int] = (0..<60).filter { $0 % 7 != 3 }
        let succeeded = outcomes.filter { $0 }.count
        #expect(succeeded == kept.count)
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == kept)
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func afterCommitRunsOnceTheWriteIsDurableAndNeverForOneRolledBack(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { try $0.run(Self.schema) }
        final class Ran: Sendable { let numbers = Mutex<[Int]>([]) }
        let ran = Ran()
        struct Refused: Error {}
        await withTaskGroup(of: Void.self) { group in
            for n in 0..<40 {
                group.addTask {
                    _ = try? await store.write { db in
                        try db.execute("INSERT INTO t (n) VALUES (?)", n)
                        db.afterCommit {
                            // Committed: another connection sees the row already.
                            ran.numbers.withLock { $0.append(n) }
                        }
                        if n % 5 == 0 { throw Refused() }
                    }
                }
            }
        }
        let expected: [Int] = (0..<40).filter { $0 % 5 != 0 }
        #expect(ran.numbers.withLock { $0.sorted() } == expected)
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == expected)
        // The caller resumes after its actions ran.
        let seen = Flag()
        try await store.write { db in
            try db.execute("INSERT INTO t (n) VALUES (?)", 100)
            db.afterCommit { seen.set() }
            #expect(!seen.isSet)
        }
        #expect(seen.isSet)
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func statementsBeforeCommitRunOncePerKeyAndBatchAndNeverForAFailedWrite(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { db in
            try db.run(Self.schema)
            try db.run("CREATE TABLE c (k \(.bigintType) PRIMARY KEY, runs \(.bigintType) NOT NULL, last \(.bigintType) NOT NULL)")
            try db.run("INSERT INTO c (k, runs, last) VALUES (0, 0, -1), (1, 0, -1)")
        }
        // Six writes queue behind a held one and commit as one batch: keys 0 (writes 0, 2, 4) and
        // 1 (writes 1, 3, 5); write 4 fails after giving its statement, which must not run.
        // (On PostgreSQL the batch runs twice — first without savepoints, then, as write 4 fails,
        // with them — and so does the held write: once released it stays released.)
        let entered = Flag()
        let released = Flag()
        let gate = Task {
            try await store.write { _ in
                entered.set()
                if blockUntil({ released.isSet || store.queueDepth >= 6 }) { released.set() }
                return released.isSet
            }
        }
        #expect(await eventually { entered.isSet })
        final class Committed: Sendable { let order = Mutex<[Int]>([]) }
        let committed = Committed()
        struct Refused: Error {}
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for n in 0..<6 {
                group.addTask {
                    do {
                        try await store.write { db in
                            try db.run("INSERT INTO t (n) VALUES (\(n))")
                            try db.runBeforeCommit("UPDATE c SET runs = runs + 1, last = \(n) WHERE k = \(n % 2)", key: "c\(n % 2)")
                            // The committed writes' order in the batch (after-commit actions run in it).
                            db.afterCommit { committed.order.withLock { $0.append(n) } }
                            if n == 4 { throw Refused() }
                        }
                        return (n, true)
                    } catch {
                        return (n, false)
                    }
                }
            }
            return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        #expect(try await gate.value)
        #expect(outcomes == [0: true, 1: true, 2: true, 3: true, 4: false, 5: true])
        let counters = try await store.read { db in
            try db.query("SELECT k, runs, last FROM c ORDER BY k").map { [$0.int("k"), $0.int("runs"), $0.int("last")] }
        }
        // One run per key; the last write of the batch to give one wins; the failed write's never runs.
        let order = committed.order.withLock { $0 }
        #expect(order.sorted() == [0, 1, 2, 3, 5])
        let lastOf = { (k: Int) in order.last { $0 % 2 == k } }
        #expect(counters == [[0, 1, lastOf(0)], [1, 1, lastOf(1)]])
        // A write alone runs its statement too, before its caller resumes.
        try await store.write { db in try db.runBeforeCommit("UPDATE c SET runs = runs + 1 WHERE k = 0", key: "c0") }
        #expect(try await store.read { try $0.scalar("SELECT runs FROM c WHERE k = 0") } == .integer(2))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func aReadAtOnceSeesWhatIsCommittedAndCannotWrite(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { db in
            try db.run(Self.schema)
            try db.execute("INSERT INTO t (n) VALUES (?)", 1)
        }
        #expect(try await store.readAtOnce { try $0.scalar("SELECT count(*) FROM t") } == .integer(1))
        await #expect(throws: StoreError.self) { try await store.readAtOnce { try $0.execute("INSERT INTO t (n) VALUES (?)", 2) } }
        // Neither does a read's snapshot leave the reader able to write afterwards.
        _ = try await store.read { try $0.scalar("SELECT 1") }
        await #expect(throws: StoreError.self) { try await store.readAtOnce { try $0.execute("DELETE FROM t") } }
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t") } == .integer(1))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func reservedIDsGrowAcrossBatchesAndStoresAndCountsArriveByTheWritesReturn(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let (first, second) = (try database.open(), try database.open())
        try await first.write { try $0.run(Self.schema) }
        #expect(first.reservesIDs == (backend == .postgresql))
        // Writes on two stores (two instances) in turn, each reserving ids and inserting with them.
        var seen: [Int64] = []
        for round in 0..<6 {
            let store = round % 2 == 0 ? first : second
            let (ids, counts) = try await store.write { db -> ([Int64], [RowCount]) in
                var ids: [Int64] = []
                var counts: [RowCount] = []
                for k in 0..<3 {
                    guard let id = try db.reserveID(in: "t") else { return ([], []) }
                    ids.append(id)
                    // The second insert of each round is refused by the unique n: it changes nothing.
                    let n = Int64(round * 10 + (k == 2 ? 0 : k))
                    counts.append(try db.runCounting("INSERT INTO t (id, n) VALUES (\(id), \(n)) ON CONFLICT DO NOTHING"))
                }
                return (ids, counts)
            }
            if backend == .sqlite { #expect(ids.isEmpty); continue }
            #expect(counts.map(\.value) == [1, 1, 0])
            #expect(ids == ids.sorted() && (seen.last ?? 0) < ids[0], "ids grow within a batch and from batch to batch, on either store")
            seen += ids
        }
        if backend == .postgresql {
            let stored = try await first.read { db in try db.query("SELECT id FROM t ORDER BY id").compactMap { $0.int64("id") } }
            #expect(stored.count == 12 && Set(stored).isSubset(of: Set(seen)))
        }
        // Outside a batched write there is nothing to reserve.
        let coordinated = try await first.exclusively(StoreLock("test.reserve")) { db in try db.reserveID(in: "t") }
        #expect(coordinated == .some(nil))
        await first.close()
        await second.close()
    }

    @Test(arguments: TestBackend.available)
    func transactionControlInAWriteFailsThatWriteAlone(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { try $0.run(Self.schema) }
        for statement in ["COMMIT", "BEGIN", "ROLLBACK", "SAVEPOINT x", "RELEASE sgem_job"] {
            let error = await #expect(throws: StoreError.self) {
                try await store.write { db in
                    try db.execute("INSERT INTO t (n) VALUES (?)", 100)
                    try? db.execute(statement)   // swallowed: the write still fails
                }
            }
            #expect(error?.code == .transactionControl, "\(statement)")
        }
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 1) }
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t") } == .integer(1))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func constraintErrorsCarryTheirCategoryAndFailOnlyTheirWrite(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { db in
            try db.run(Self.schema)
            try db.run("CREATE TABLE child (id \(.identityPrimaryKey), parent \(.bigintType) NOT NULL REFERENCES t (id))")
            try db.execute("INSERT INTO t (n) VALUES (?)", 1)
        }
        let duplicate = await #expect(throws: StoreError.self) { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 1) } }
        #expect(duplicate?.category == .uniqueViolation)
        let orphan = await #expect(throws: StoreError.self) { try await store.write { try $0.execute("INSERT INTO child (parent) VALUES (?)", 999) } }
        #expect(orphan?.category == .foreignKeyViolation)
        // The store goes on: the next write commits.
        try await store.write { try $0.execute("INSERT INTO child (parent) VALUES (?)", 1) }
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM child") } == .integer(1))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func readersSeeOneSnapshotAndCannotWrite(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        try await store.write { db in
            try db.run(Self.schema)
            try db.execute("INSERT INTO t (n) VALUES (?)", 1)
        }
        let refused = await #expect(throws: StoreError.self) { try await store.read { try $0.execute("INSERT INTO t (n) VALUES (?)", 2) } }
        #expect(refused != nil)
        // A read's two statements see the same data although a write commits between them.
        let entered = Flag()
        let proceed = Flag()
        let reading = Task {
            try await store.read { db -> (SQLValue, SQLValue) in
                let first = try db.scalar("SELECT count(*) FROM t")
                entered.set()
                _ = blockUntil { proceed.isSet }
                return (first, try db.scalar("SELECT count(*) FROM t"))
            }
        }
        #expect(await eventually { entered.isSet })
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 3) }
        proceed.set()
        let (first, second) = try await reading.value
        #expect(first == .integer(1) && second == .integer(1))
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t") } == .integer(2))
        await store.close()
    }

    @Test(arguments: TestBackend.available)
    func migrationsApplyOnceInOrderAndANewerSchemaIsRefused(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var list = MigrationList()
        list.add("notes.001_create", sqlite: "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
                 postgresql: "CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT NOT NULL)")
        list.add(portable: "notes.002_seed") { db in try db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", 1, "first") }
        #expect(try await store.migrate(list) == ["notes.001_create", "notes.002_seed"])
        #expect(try await store.migrate(list) == [])
        #expect(try await store.appliedMigrations() == ["notes.001_create", "notes.002_seed"])

        // A failing migration leaves nothing of itself and is not recorded.
        var failing = list
        failing.add(portable: "notes.003_broken") { db in
            try db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", 2, "second")
            try db.execute("INSERT INTO no_such_table VALUES (1)")
        }
        let error = await #expect(throws: StoreError.self) { try await store.migrate(failing) }
        #expect(error?.code == .migration)
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM notes") } == .integer(1))

        // A binary that knows fewer migrations than the database records refuses it.
        let older = list.before("notes.002_seed")
        let newer = await #expect(throws: StoreError.self) { try await store.migrate(older, refuseNewerSchema: true) }
        #expect(newer?.code == .schemaTooNew)
        #expect(try await store.migrate(older) == [], "a module's own list (tests, tools) may be a part of the whole")

        // A migration without a form for this backend: refused there before anything runs.
        var sqliteOnly = list
        sqliteOnly.add(portable: "notes.003_sqlite_only") { db in try db.execute("INSERT INTO notes (id, body) VALUES (?, ?)", 3, "third") }
        sqliteOnly.add("notes.004_sqlite_only", sql: "INSERT INTO notes (id, body) VALUES (4, 'fourth')")
        #expect(sqliteOnly.withoutPostgreSQLForm == ["notes.004_sqlite_only"])
        if backend == .postgresql {
            let refused = await #expect(throws: StoreError.self) { try await store.migrate(sqliteOnly) }
            #expect(refused?.message.contains("notes.004_sqlite_only has no PostgreSQL form") == true)
            #expect(try await store.read { try $0.scalar("SELECT count(*) FROM notes") } == .integer(1), "not even 003 ran")
        } else {
            #expect(try await store.migrate(sqliteOnly) == ["notes.003_sqlite_only", "notes.004_sqlite_only"])
        }
        await store.close()
    }
}

/// What only PostgreSQL's several processes can show: two stores stand for two server instances
/// on one database.
@Suite(.enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct StoreOnPostgresTests {
    @Test("two stores writing at once: a reader tailing by id never skips one (ids are visible in commit order)")
    func idsBecomeVisibleInCommitOrderAcrossStores() async throws {
        let database = try TestDatabase(.postgresql)
        let first = try database.open()
        let second = try database.open()
        try await first.write { try $0.run(StoreBackendTests.schema) }
        let writersDone = Flag()
        // The tailer reads `id > cursor` as the journal's readers do, and keeps what it saw.
        let tail = Task { () throws -> [Int64] in
            var cursor: Int64 = 0
            var seen: [Int64] = []
            while true {
                let finished = writersDone.isSet
                let after = cursor
                let ids = try await first.read { db in
                    try db.query("SELECT id FROM t WHERE id > ? ORDER BY id", after).compactMap { $0.int64(at: 0) }
                }
                seen += ids
                cursor = ids.last ?? cursor
                if finished && ids.isEmpty { return seen }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<400 {
                let store = n % 2 == 0 ? first : second
                group.addTask { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", n) } }
            }
            try await group.waitForAll()
        }
        writersDone.set()
        let seen = try await tail.value
        let all = try await first.read { db in try db.query("SELECT id FROM t ORDER BY id").compactMap { $0.int64(at: 0) } }
        #expect(all.count == 400)
        #expect(seen == all, "the tailer missed \(Set(all).subtracting(seen).count) ids")
        await first.close()
        await second.close()
    }

    @Test("a check-then-write rule holds across two stores: 5 places, 30 tries on two instances, 5 booked")
    func checkThenWriteHoldsAcrossStores() async throws {
        let database = try TestDatabase(.postgresql)
        let first = try database.open()
        let second = try database.open()
        try await first.write { try $0.run("CREATE TABLE places (id \(.identityPrimaryKey), who \(.bigintType) NOT NULL)") }
        struct Full: Error {}
        let booked = try await withThrowingTaskGroup(of: Bool.self) { group in
            for who in 0..<30 {
                let store = who % 2 == 0 ? first : second
                group.addTask {
                    do {
                        try await store.write { db in
                            guard try db.scalar("SELECT count(*) FROM places") != .integer(5) else { throw Full() }
                            try db.execute("INSERT INTO places (who) VALUES (?)", who)
                        }
                        return true
                    } catch is Full {
                        return false
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(booked == 5)
        #expect(try await second.read { try $0.scalar("SELECT count(*) FROM places") } == .integer(5))
        await first.close()
        await second.close()
    }

    /// The libpq connection under a store connection, to count its round trips.
    private static func roundTrips(_ db: Database) throws -> Int {
        guard let postgres = db.connection as? PostgresStoreConnection else {
            throw StoreError(code: .system, message: "not a PostgreSQL connection")
        }
        return postgres.connection.roundTrips
    }

    @Test("pipelined: a write of two statements and a query costs two round trips a batch, a read of one query two")
    func writesAndReadsArePipelined() async throws {
        let database = try TestDatabase(.postgresql)
        let store = try database.open()
        try await store.write { try $0.run(StoreBackendTests.schema) }
        // Each batch: BEGIN, the lock, SET CONSTRAINTS, SAVEPOINT, INSERT and UPDATE wait in the
        // pipeline and go with the SELECT (one round trip); RELEASE goes with COMMIT (one more).
        func batch(_ n: Int) async throws -> (start: Int, afterWrites: Int, afterQuery: Int) {
            try await store.write { db in
                let start = try Self.roundTrips(db)
                try db.execute("INSERT INTO t (n) VALUES (?)", n)
                try db.execute("UPDATE t SET label = ? WHERE n = ?", "seen", n)
                let afterWrites = try Self.roundTrips(db)
                #expect(try db.scalar("SELECT count(*) FROM t WHERE label = ?", "seen") == .integer(Int64(n)))
                return (start, afterWrites, try Self.roundTrips(db))
            }
        }
        let first = try await batch(1)
        let second = try await batch(2)
        #expect(first.afterWrites == first.start)
        #expect(first.afterQuery == first.start + 1)
        #expect(second.start == first.afterQuery + 1, "the first batch's RELEASE and COMMIT took \(second.start - first.afterQuery) round trips")
        // A read: BEGIN goes with its first statement; COMMIT is the second round trip.
        let reads = try await store.read { db -> [Int] in
            let start = try Self.roundTrips(db)
            _ = try db.scalar("SELECT count(*) FROM t")
            let afterQuery = try Self.roundTrips(db)
            _ = try db.scalar("SELECT max(n) FROM t")
            return [start, afterQuery, try Self.roundTrips(db)]
        }
        #expect(reads[1] == reads[0] + 1 && reads[2] == reads[0] + 2)
        await store.close()
    }

    @Test("pipelined: the statements a batch runs before its commit go with the COMMIT in one round trip; when one fails, nothing is stored")
    func beforeCommitStatementsRideWithTheCommit() async throws {
        let database = try TestDatabase(.postgresql)
        let store = try database.open()
        try await store.write { db in
            try db.run(StoreBackendTests.schema)
            try db.run("CREATE TABLE c (k BIGINT PRIMARY KEY, runs BIGINT NOT NULL CHECK (runs < 2))")
            try db.run("INSERT INTO c (k, runs) VALUES (0, 0)")
        }
        // The job's INSERT settles with the batch's opening (one round trip); the UPDATE and the
        // COMMIT go together (one more) — three before the COMMIT was sent with them.
        func write(_ n: Int) async throws -> Int {
            try await store.write { db in
                try db.execute("INSERT INTO t (n) VALUES (?)", n)
                try db.runBeforeCommit("UPDATE c SET runs = runs + 1 WHERE k = 0", key: "c")
                return try Self.roundTrips(db)
            }
        }
        let first = try await write(1)
        let next = try await store.write { db in try Self.roundTrips(db) }
        #expect(next - first == 2, "the first write took \(next - first) round trips after its job ran")
        // The second run breaks the CHECK: the COMMIT sent after it does not run, the write fails
        // with the UPDATE's error, and its INSERT is not stored.
        let failed = await #expect(throws: StoreError.self) { try await write(2) }
        #expect(failed?.sql?.hasPrefix("UPDATE c") == true)
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t WHERE n = 2") } == .integer(0))
        #expect(try await store.read { try $0.scalar("SELECT runs FROM c") } == .integer(1))
        // The writer goes on.
        _ = try await store.write { db in try db.execute("INSERT INTO t (n) VALUES (?)", 3) }
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM t") } == .integer(2))
        await store.close()
    }

    @Test("a pipelined statement that fails fails its write alone, even when the write swallowed it; its batch lands")
    func aSwallowedPipelinedFailureFailsItsWriteAlone() async throws {
        let database = try TestDatabase(.postgresql)
        let store = try database.open()
        try await store.write { db in
            try db.run(StoreBackendTests.schema)
            try db.execute("INSERT INTO t (n) VALUES (?)", -1)
        }
        let outcomes = await withTaskGroup(of: (Int, StoreError?).self) { group in
            for n in 0..<40 {
                group.addTask {
                    do {
                        try await store.write { db in
                            try db.execute("INSERT INTO t (n) VALUES (?)", n)
                            // Every fifth write breaks the unique key and carries on regardless.
                            if n % 5 == 0 { try? db.execute("INSERT INTO t (n, label) VALUES (?, ?)", -1, "duplicate") }
                            try db.execute("UPDATE t SET label = ? WHERE n = ?", "kept", n)
                        }
                        return (n, nil)
                    } catch {
                        return (n, error as? StoreError ?? StoreError(code: .system, message: "\(error)"))
                    }
                }
            }
            return await group.reduce(into: [Int: StoreError?]()) { $0[$1.0] = $1.1 }
        }
        for (n, error) in outcomes {
            if n % 5 == 0 {
                #expect(error?.category == .uniqueViolation, "write \(n): \(String(describing: error))")
                #expect(error?.sql?.contains("label") == true, "the error names the statement that failed")
            } else {
                #expect(error == nil, "write \(n): \(String(describing: error))")
            }
        }
        let stored = try await store.read { db in
            try db.query("SELECT n FROM t WHERE label = ? ORDER BY n", "kept").compactMap { $0.int("n") }
        }
        #expect(stored == (0..<40).filter { $0 % 5 != 0 })
        await store.close()
    }

    @Test("a batch runs without savepoints; one failing write sends it round again with them: the others land once, it alone fails")
    func aBatchWithAFailingWriteRunsAgainWithSavepoints() async throws {
        let database = try TestDatabase(.postgresql)
        let registry = MetricsRegistry()
        let store = try Store(location: database.location, logger: Logger(label: "test-store"), metrics: registry)
        try await store.write { try $0.run(StoreBackendTests.schema) }
        let rerun = registry.counter("sgem_store_batches_rerun_total", help: "")
        // The writer is held until ten writes wait behind it, so they make one batch.
        let writes = store.writes
        let held = Task { try await store.onWriterExclusively { _ in while writes.depth < 10 { usleep(500) } } }
        struct Refused: Error {}
        let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
            for n in 0..<10 {
                group.addTask {
                    do {
                        try await store.write { db in
                            try db.execute("INSERT INTO t (n) VALUES (?)", n)
                            if n == 6 { throw Refused() }
                        }
                        return (n, true)
                    } catch {
                        return (n, false)
                    }
                }
            }
            return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
        }
        try await held.value
        #expect(outcomes == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, $0 != 6) }))
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == (0..<10).filter { $0 != 6 })
        #expect(rerun.series().value == 1)
        // A clean batch after it needs no second run.
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 100) }
        #expect(rerun.series().value == 1)
        await store.close()
    }

    @Test("writes queued while another instance holds the writers' lock join the batch that waits for it, one commit")
    func writesQueuedWhileTheLockIsHeldJoinTheWaitingBatch() async throws {
        let database = try TestDatabase(.postgresql)
        let registry = MetricsRegistry()
        let store = try Store(location: database.location, logger: Logger(label: "test-store"), metrics: registry)
        try await store.write { try $0.run(StoreBackendTests.schema) }
        let commitsBefore = commitsTotal(registry)
        // Another instance's writer: a transaction holding the lock.
        guard case .postgresql(let url) = database.location else { return }
        let other = try PostgresConnection(url: url)
        try other.execute("BEGIN")
        try other.execute("SELECT pg_advisory_xact_lock(\(PostgresStoreConnection.writerLockKey))")
        let writes = store.writes
        let first = Task { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 0) } }
        // The first write's batch waits for the lock (its backend is seen waiting); nine more queue meanwhile.
        let waiting = await eventually {
            (try? other.query("""
                SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """).first?.int64(at: 0)) == 1
        }
        #expect(waiting)
        let rest = (1..<10).map { n in Task { try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", n) } } }
        #expect(await eventually { writes.depth == 9 })
        try other.execute("COMMIT")
        try await first.value
        for task in rest { try await task.value }
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == Array(0..<10))
        #expect(commitsTotal(registry) - commitsBefore == 1, "the nine joined the waiting batch")
        #expect(registry.counter("sgem_store_batch_joined_total", help: "").value() == 9)
        await store.close()
    }

    @Test("the commit's wait counts the statements still running on the server when the COMMIT went out")
    func theCommitWaitCountsStatementsStillRunning() async throws {
        let database = try TestDatabase(.postgresql)
        let registry = MetricsRegistry()
        let store = try Store(location: database.location, logger: Logger(label: "test-store"), metrics: registry)
        try await store.write { try $0.run(StoreBackendTests.schema) }
        let wait = { registry.counter("sgem_store_commit_wait_seconds_total", help: "").value() }
        let busy = { registry.counter("sgem_store_writer_busy_seconds_total", help: "").value() }
        let (waitBefore, busyBefore) = (wait(), busy())
        // A statement whose rows nobody reads waits in the pipeline and runs with the COMMIT (the
        // read before it carries the writers' lock, so nothing settles it sooner).
        try await store.write { db in
            _ = try db.fetchOne("SELECT count(*) FROM t")
            _ = try db.runCounting("SELECT pg_sleep(0.2)")
            _ = try db.runCounting("INSERT INTO t (n) VALUES (1)")
        }
        let waited = wait() - waitBefore
        #expect(waited >= 0.19, "the COMMIT's answer came after the sleep: \(waited) s")
        #expect(busy() - busyBefore >= waited, "the wait is part of the writer's busy time")
        await store.close()
    }

    @Test("the writer's connection is killed: that write fails, the next one reconnects and commits")
    func aLostConnectionFailsItsBatchAndReconnects() async throws {
        let database = try TestDatabase(.postgresql)
        let store = try database.open()
        try await store.write { try $0.run(StoreBackendTests.schema) }
        let pid = try await store.write { db in try db.queryOne("SELECT pg_backend_pid()")?.int64(at: 0) ?? 0 }
        let admin = try PostgresConnection(url: try #require(testDatabaseURL))
        #expect(try admin.query("SELECT pg_terminate_backend(\(pid))").first?.bool(at: 0) == true)
        // The server may take a moment to end the session; a write either fails as lost or lands
        // on a new connection, never both or neither.
        var failedAsLost = false
        do {
            try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 1) }
        } catch let error as StoreError {
            failedAsLost = error.category == .connectionLost || error.code == .batchAborted
            #expect(failedAsLost, "\(error)")
        }
        try await store.write { try $0.execute("INSERT INTO t (n) VALUES (?)", 2) }
        let stored = try await store.read { db in try db.query("SELECT n FROM t ORDER BY n").compactMap { $0.int("n") } }
        #expect(stored == (failedAsLost ? [2] : [1, 2]))
        let newPID = try await store.write { db in try db.queryOne("SELECT pg_backend_pid()")?.int64(at: 0) ?? 0 }
        #expect(newPID != pid)
        await store.close()
    }

    /// Whether `connection`'s session holds the writers' advisory lock, asked from another session.
    private static func holdsWriterLock(_ connection: PostgresConnection) throws -> Bool {
        let admin = try PostgresConnection(url: try #require(testDatabaseURL))
        let key = PostgresStoreConnection.writerLockKey
        let rows = try admin.query("""
            SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1
                AND classid = $2 AND objid = $3 AND objsubid = 1
            """, [.integer(Int64(connection.backendPID)), .integer(key >> 32), .integer(key & 0xFFFF_FFFF)])
        return rows.first?.int64("n") == 1
    }

    @Test("a batch whose first write read rows has the writers' lock already: settling it costs no round trip of its own")
    func theFirstReadCarriesTheWritersLock() async throws {
        let database = try TestDatabase(.postgresql)
        guard case .postgresql(let url) = database.location else { throw StoreError(code: .system, message: "not PostgreSQL") }
        let writer = try PostgresStoreConnection(url: url, configuration: StoreConfiguration())
        writer.deferJobChecks(true)
        // The first job reads rows (BEGIN, the lock and SET CONSTRAINTS go with that read), then
        // sends a statement that waits in the pipeline.
        try writer.beginWriteBatch()
        let start = writer.connection.roundTrips
        let one = try writer.runGuarded { () -> [Row] in
            let rows = try writer.query("SELECT 1 AS one", [])
            try writer.execute("SET LOCAL application_name = 'sgem-test'", [])
            return rows
        }
        #expect(one.first?.int64("one") == 1)
        #expect(writer.connection.roundTrips == start + 1)
        try writer.settleWriteLock()
        #expect(writer.connection.roundTrips == start + 1, "settling the lock took a round trip after a read had carried it")
        #expect(writer.connection.hasPipelinedStatements, "the job's last statement waits for the batch's next round trip")
        #expect(try Self.holdsWriterLock(writer.connection))
        try writer.settleAndCommit()
        #expect(try !Self.holdsWriterLock(writer.connection))
        // The first job only sends: the lock is still in the pipeline, and settling it reads it back.
        try writer.beginWriteBatch()
        let second = writer.connection.roundTrips
        try writer.runGuarded { try writer.execute("SET LOCAL application_name = 'sgem-test'", []) }
        #expect(writer.connection.roundTrips == second)
        try writer.settleWriteLock()
        #expect(writer.connection.roundTrips == second + 1)
        #expect(try Self.holdsWriterLock(writer.connection))
        try writer.settleAndCommit()
        writer.close()
    }

    @Test("a job's pipelined statements reach the server before the batch's next round trip: it runs them meanwhile")
    func pushedStatementsRunBeforeTheSync() async throws {
        let schema = try PostgresSchema()
        let db = try schema.connect()
        let observer = try schema.connect()
        // A session lock taken in the pipeline, not yet synced: the server has run it once pushed.
        try db.send("SELECT pg_advisory_lock(4242)", [], control: false)
        try db.pushPipeline()
        #expect(db.hasPipelinedStatements)
        let deadline = ContinuousClock.now + .seconds(10)
        var seen = false
        while !seen, ContinuousClock.now < deadline {
            seen = try observer.query("""
                SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1 AND objid = 4242
                """, [.integer(Int64(db.backendPID))]).first?.int64("n") == 1
            if !seen { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(seen, "the pushed statement had not run after 10 s")
        try db.flushPipeline()
        #expect(!db.hasPipelinedStatements)
        #expect(try db.query("SELECT pg_advisory_unlock(4242) AS released").first?.bool(at: 0) == true)
    }
}
