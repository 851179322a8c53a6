@testable import SGEMPush
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The push module's SQL on every backend: its schema (PostgreSQL's baseline), subscriptions and
/// their cap, the key row, the cursor, the outbox and its leases; on PostgreSQL, the leases of two
/// stores standing for two instances.
@Suite("Push: the repository on every backend")
struct RepositoryBackendTests {
    static func migrated(_ database: TestDatabase) async throws -> Store {
        let store = try database.open()
        var migrations = MigrationList()
        PushRepository.registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        return store
    }

    @Test("every migration of the module has a PostgreSQL form")
    func everyMigrationRunsOnPostgreSQL() {
        var migrations = MigrationList()
        PushRepository.registerMigrations(&migrations)
        #expect(!migrations.ids.isEmpty && migrations.withoutPostgreSQLForm.isEmpty)
    }

    @Test("subscriptions with their cap and owner changes, the key row, the cursor, the outbox's lease, retry and finish",
          arguments: TestBackend.available)
    func repository(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try await Self.migrated(database)
        let repository = PushRepository(store: store)
        let at = Timestamp(milliseconds: 1_000)
        try await store.write { db in
            let (a, created) = try #require(try PushRepository.upsert(user: 1, endpoint: "https://p/a", p256dh: "k", auth: "s", cap: 2,
                                                                      at: at, in: db))
            #expect(created && a.id == 1 && a.createdAt == at)
            _ = try PushRepository.upsert(user: 1, endpoint: "https://p/b", p256dh: "k", auth: "s", cap: 2, at: at, in: db)
            #expect(try PushRepository.upsert(user: 1, endpoint: "https://p/c", p256dh: "k", auth: "s", cap: 2, at: at, in: db) == nil)
            // The same endpoint again: new keys, no new row.
            let (again, createdAgain) = try #require(try PushRepository.upsert(user: 1, endpoint: "https://p/a", p256dh: "k2", auth: "s2",
                                                                               cap: 2, at: at, in: db))
            #expect(!createdAgain && again.id == a.id && again.p256dh == "k2")
            // Another person on that device takes it over.
            let (taken, _) = try #require(try PushRepository.upsert(user: 2, endpoint: "https://p/a", p256dh: "k3", auth: "s3", cap: 2,
                                                                    at: at, in: db))
            #expect(taken.id == a.id && taken.userID == 2)
            try PushRepository.noteError(a.id, "410", in: db)
            #expect(try !PushRepository.delete(a.id, of: 1, in: db))

            #expect(try PushRepository.keys(in: db) == nil)
            try PushRepository.insertKeys(publicKey: "pub", sealedPrivateKey: "sealed", at: at, in: db)
            try PushRepository.insertKeys(publicKey: "other", sealedPrivateKey: "other", at: at, in: db)
            #expect(try PushRepository.keys(in: db)?.publicKey == "pub")

            #expect(try PushRepository.cursor(in: db) == nil)
            try PushRepository.setCursor(10, in: db)
            #expect(try PushRepository.advanceCursor(from: 10, to: 20, in: db))
            #expect(try !PushRepository.advanceCursor(from: 10, to: 30, in: db))
            #expect(try PushRepository.cursor(in: db) == 20)
        }
        #expect(try await repository.subscriptions(of: 1).map(\.endpoint) == ["https://p/b"])
        #expect(try await repository.subscriptionIDs(of: Array(1...1_200)) == [1: [2], 2: [1]])
        #expect(try await repository.subscriptionIDs(of: []).isEmpty)
        #expect(try await repository.subscribedUsers().sorted() == [1, 2])
        #expect(try await repository.keys()?.sealedPrivateKey == "sealed")

        try await store.write { db in
            for n in 0..<3 { try PushRepository.enqueue(subscription: 2, payload: "p\(n)", urgency: "normal", ttl: 60, now: 5_000 + Int64(n), in: db) }
            let due = try PushRepository.due(at: 5_001, limit: 10, in: db)
            #expect(due.map(\.payload) == ["p0", "p1"] && due[0].expiresAt == 65_000 && due[0].attempts == 0 && due[0].ttl == 60)
            #expect(try PushRepository.lease(due.map(\.id), now: 5_001, until: 9_000, in: db) == Set(due.map(\.id)))
            // Leased: no longer due, and not taken twice.
            #expect(try PushRepository.lease(due.map(\.id), now: 5_001, until: 9_000, in: db).isEmpty)
            #expect(try PushRepository.lease([], now: 5_001, until: 9_000, in: db).isEmpty)
            #expect(try PushRepository.due(at: 5_002, limit: 10, in: db).map(\.payload) == ["p2"])
            try PushRepository.retry(due[0].id, at: 7_000, in: db)
            try PushRepository.finish(due[1].id, in: db)
        }
        #expect(try await repository.nextDue() == 5_002)
        #expect(try await store.read { db in try PushRepository.due(at: 7_000, limit: 10, in: db) }.map(\.attempts) == [0, 1])
        // A subscription deleted takes what waited for it.
        try await store.write { db in try PushRepository.delete(2, in: db) }
        #expect(try await store.read { db in try PushRepository.outboxCount(in: db) } == 0)
        #expect(try await repository.nextDue() == nil)
        await store.close()
    }
}

/// What only several processes on one PostgreSQL can show.
@Suite("Push: the outbox's leases across instances",
       .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct PushOnPostgresTests {
    @Test("two stores lease 300 due deliveries in rounds of 25 at once: each is taken exactly once")
    func leasesAreExclusiveAcrossStores() async throws {
        let database = try TestDatabase(.postgresql)
        let first = try await RepositoryBackendTests.migrated(database)
        let second = try database.open()
        try await first.write { db in
            for n in 0..<300 { try PushRepository.enqueue(subscription: 1, payload: "p\(n)", urgency: "normal", ttl: 60, now: 1_000, in: db) }
        }
        // As `PushWorker.deliverDue` takes a round: the due rows, then the lease of those still due.
        let taken = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for n in 0..<24 {
                let store = n % 2 == 0 ? first : second
                group.addTask {
                    try await store.write { db in
                        let due = try PushRepository.due(at: 2_000, limit: 25, in: db)
                        let leased = try PushRepository.lease(due.map(\.id), now: 2_000, until: 100_000, in: db)
                        return due.map(\.id).filter(leased.contains)
                    }
                }
            }
            return try await group.reduce(into: [Int64]()) { $0 += $1 }
        }
        #expect(taken.count == 300 && Set(taken).count == 300)
        #expect(try await second.read { db in try PushRepository.due(at: 2_000, limit: 10, in: db) }.isEmpty)
        await first.close()
        await second.close()
    }
}
