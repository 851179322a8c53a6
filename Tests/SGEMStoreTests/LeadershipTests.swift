@testable import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Synchronization
import Testing

/// Work one instance does alone: a round under `exclusively`, a worker under a `Leadership`.
/// Stores on one PostgreSQL database stand for instances.
@Suite("Store: one instance at a time across stores on one PostgreSQL database",
       .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct StoreCoordinationTests {
    @Test("a round under exclusively: another store finds the lock taken and skips at once, its body never runs; after the commit it gets the lock")
    func exclusiveRoundSkipsWhileHeld() async throws {
        let database = try TestDatabase(.postgresql)
        let (first, second) = try await Self.twoStoresWithRounds(on: database)
        let lock = StoreLock("job:test.round")
        let (inside, finish) = (Flag(), Flag())
        let holding = Task {
            try await first.exclusively(lock) { db -> Int in
                try db.execute("INSERT INTO rounds (n) VALUES (1)")
                inside.set()
                // The coordination thread holds the transaction, and its lock, until the test says.
                blockUntil { finish.isSet }
                return 1
            }
        }
        #expect(await eventually { inside.isSet })
        let skipped = try await second.exclusively(lock) { db -> Int in
            try db.execute("INSERT INTO rounds (n) VALUES (2)")
            return 2
        }
        #expect(skipped == nil)
        #expect(try await second.exclusively(StoreLock("job:another")) { _ in 4 } == 4, "another lock is free meanwhile")
        finish.set()
        #expect(try await holding.value == 1)
        #expect(try await second.exclusively(lock) { db -> Int in
            try db.execute("INSERT INTO rounds (n) VALUES (3)")
            return 3
        } == 3)
        #expect(try await first.read { db in try db.query("SELECT n FROM rounds ORDER BY n").compactMap { $0.int64(at: 0) } } == [1, 3])
        await first.close()
        await second.close()
    }

    @Test("a round that throws rolls back what it wrote and frees the lock")
    func failingRoundRollsBack() async throws {
        let database = try TestDatabase(.postgresql)
        let (first, second) = try await Self.twoStoresWithRounds(on: database)
        struct Refused: Error {}
        let lock = StoreLock("job:test.round")
        await #expect(throws: Refused.self) {
            try await first.exclusively(lock) { db -> Int in
                try db.execute("INSERT INTO rounds (n) VALUES (1)")
                throw Refused()
            }
        }
        #expect(try await second.exclusively(lock) { _ in 2 } == 2)
        #expect(try await first.read { db in try db.scalar("SELECT count(*) FROM rounds") } == .integer(0))
        #expect(try await first.exclusively(lock) { _ in 3 } == 3, "the same session takes it again after its rollback")
        await first.close()
        await second.close()
    }

    enum Ending: String, CaseIterable, Sendable { case storeClosed, sessionTerminated }

    @Test("a worker's leadership: one store takes it, the other does not; when the holder's store closes or its session is ended, the other leads within a poll and the old holder steps down",
          arguments: Ending.allCases)
    func takeoverWithinAPoll(_ ending: Ending) async throws {
        let database = try TestDatabase(.postgresql)
        let first = try database.open()
        let second = try database.open()
        let lock = StoreLock("worker:test")
        let (leader, follower) = (first.leadership(lock), second.leadership(lock))
        #expect(await leader.refresh())
        #expect(await follower.refresh() == false)
        #expect(await leader.refresh(), "the holder checks it still holds it")
        #expect(first.leadership(lock).isHeld, "one hold per lock and store")
        #expect((leader.term, follower.term) == (1, 0))
        #expect(try holders(of: lock, in: database).count == 1)

        let poll: Duration = .seconds(1)
        let polls = Tally()
        let trying = Task { await follower.maintain(every: poll) { _ in polls.add() } }
        #expect(await eventually { polls.value >= 2 })
        #expect(!follower.isHeld, "the follower polled and found it taken")
        let leaderPIDs = try holders(of: lock, in: database)
        switch ending {
        case .storeClosed:
            await first.close()
        case .sessionTerminated:
            let admin = try PostgresConnection(url: try #require(testDatabaseURL))
            for pid in try holders(of: lock, in: database) {
                _ = try admin.query("SELECT pg_terminate_backend($1::int)", [.integer(pid)])
            }
        }
        // The lock frees when the old session has gone; from then on, the next poll takes it.
        // Counted in polls, not seconds (a busy machine stretches seconds, never the count):
        // the poll that was under way when the lock freed, then the one that takes it.
        #expect(await eventually { follower.isHeld || (try? holders(of: lock, in: database)).map { Set($0).isDisjoint(with: leaderPIDs) } == true })
        let pollsWhenFree = polls.value
        #expect(await eventually { follower.isHeld })
        #expect(polls.value - pollsWhenFree <= 2, "took over after \(polls.value - pollsWhenFree) polls")
        #expect(follower.term == 1)
        #expect(try holders(of: lock, in: database).count == 1)

        if ending == .sessionTerminated {
            // The old holder finds its session gone: it steps down, on a new session, without the lock.
            #expect(await leader.refresh() == false)
            #expect(!leader.isHeld)
            // The follower stops and lets go: the old holder takes it back, a new term.
            trying.cancel()
            await trying.value
            #expect(await leader.refresh())
            #expect(leader.term == 2)
            await first.close()
        } else {
            trying.cancel()
            await trying.value
        }
        #expect(!follower.isHeld, "stopping maintain gives the lead up")
        await second.close()
    }

    /// Two stores on `database`, which has a table `rounds (n)`.
    static func twoStoresWithRounds(on database: TestDatabase) async throws -> (Store, Store) {
        let first = try database.open()
        try await first.write { try $0.run("CREATE TABLE rounds (n \(.bigintType) NOT NULL)") }
        return (first, try database.open())
    }

    /// The server processes holding `lock`.
    func holders(of lock: StoreLock, in database: TestDatabase) throws -> [Int64] {
        guard case .postgresql(let url) = database.location else { return [] }
        let admin = try PostgresConnection(url: url)
        let bits = UInt64(bitPattern: lock.key)
        return try admin.query("""
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1
            """, [.integer(Int64(bits >> 32)), .integer(Int64(bits & 0xFFFF_FFFF))]).compactMap { $0.int64(at: 0) }
    }
}

@Suite("Store: one instance at a time, on SQLite")
struct StoreCoordinationOnSQLiteTests {
    @Test("one process: the store always leads, and a round under exclusively always runs, as a write")
    func sqliteAlwaysLeads() async throws {
        let database = try TestDatabase(.sqlite)
        let store = try database.open()
        let leadership = store.leadership(StoreLock("worker:test"))
        #expect(!store.isShared)
        #expect(await leadership.refresh())
        #expect(await leadership.refresh())
        #expect(leadership.term == 1)
        try await store.write { try $0.run("CREATE TABLE rounds (n \(.bigintType) NOT NULL)") }
        let ran = try await store.exclusively(StoreLock("job:test")) { db -> Int in
            try db.execute("INSERT INTO rounds (n) VALUES (1)")
            return 1
        }
        #expect(ran == 1)
        #expect(try await store.read { try $0.scalar("SELECT count(*) FROM rounds") } == .integer(1))
        await leadership.release()
        #expect(!leadership.isHeld)
        await store.close()
    }

    @Test("lock keys: the same name gives the same key in every process, names give different keys, none is the store's own")
    func lockKeys() {
        #expect(StoreLock("job:realtime.retention").key == StoreLock("job:realtime.retention").key)
        let names = ["job:accounts.expiry", "job:realtime.retention", "job:translation.cache", "job:company.feeds",
                     "worker:push", "worker:translation.chats"]
        let keys = names.map { StoreLock($0).key }
        #expect(Set(keys).count == names.count)
        for key in keys {
            #expect(UInt64(bitPattern: key) >> 32 == 0x5347_454D, "\"SGEM\" in the high half")
            #expect(key & 0xFFFF_FFFF >= 0x100)
            #expect(key != PostgresStoreConnection.writerLockKey && key != PostgresStoreConnection.migrationLockKey)
        }
        // Instances of different releases must agree: the key of a name never changes.
        #expect(StoreLock("worker:push").key == 0x5347_454D_CB14_4D03)
    }
}

/// A count a callback adds to and a test reads.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
