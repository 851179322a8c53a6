@testable import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Synchronization
import Testing

/// The doorbell between instances: two stores on one PostgreSQL database stand for two instances.
@Suite(.enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct DoorbellOnPostgresTests {
    static let channel = "sgem_test_bell"

    /// A store standing for one instance, its doorbell, and what that doorbell heard.
    struct Instance {
        let store: Store
        let bell: Doorbell
        let heard: RingLog
    }

    /// Runs `body` with two stores on one fresh database whose doorbells listen; closes both after.
    private func withTwoInstances(_ body: (Instance, Instance) async throws -> Void) async throws {
        let database = try TestDatabase(.postgresql)
        let instances = try [database.open(), database.open()].map { store in
            let bell = store.doorbell(channel: Self.channel)
            return Instance(store: store, bell: bell, heard: RingLog(bell.rings()))
        }
        for instance in instances { #expect(await instance.heard.waitFor(.listening)) }
        do {
            try await body(instances[0], instances[1])
        } catch {
            for instance in instances { await instance.store.close() }
            throw error
        }
        for instance in instances { await instance.store.close() }
    }

    @Test("a ring on one store reaches the other's listeners with its payload, and never its own")
    func ringReachesTheOtherStore() async throws {
        try await withTwoInstances { first, second in
            first.bell.ring(payload: "41")
            #expect(await second.heard.waitFor(.rang(payload: "41")))
            // The first store's own ring went out before the second one's: had it come back, it would be first.
            second.bell.ring(payload: "42")
            #expect(await first.heard.waitFor(.rang(payload: "42")))
            #expect(first.heard.payloads == ["42"])
            #expect(second.heard.payloads == ["41"])
            // One doorbell per channel, and one connection each.
            #expect(first.store.doorbell(channel: Self.channel) === first.bell)
            #expect(first.store.doorbell(channel: "elsewhere") !== first.bell)
            #expect(first.store.metrics.doorbellSent.value() == 1 && first.store.metrics.doorbellReceived.value() == 1)
        }
    }

    @Test("a handler hears the other store's rings and the doorbell listening, on the doorbell's thread, and never its own")
    func handlersHearRings() async throws {
        try await withTwoInstances { first, second in
            let heard = Mutex<[Doorbell.Ring]>([])
            second.bell.onRing { ring in heard.withLock { $0.append(ring) } }
            // Registered on a doorbell that already listens: told so at once.
            #expect(heard.withLock { $0 } == [.listening])
            first.bell.ring(payload: "51")
            #expect(await eventually { heard.withLock { $0.contains(.rang(payload: "51")) } })
            second.bell.ring(payload: "52")
            #expect(await first.heard.waitFor(.rang(payload: "52")))
            #expect(heard.withLock { $0 } == [.listening, .rang(payload: "51")])
        }
    }

    @Test("a write rings after its commit from a store that never listened (a command-line verb), and closing sends it; never for a write rolled back")
    func writesRingAfterCommitFromAnyStore() async throws {
        let database = try TestDatabase(.postgresql)
        let server = try database.open()
        let heard = RingLog(server.doorbell(channel: Self.channel).rings())
        #expect(await heard.waitFor(.listening))
        let verb = try database.open()
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await verb.write { db in
                db.ringAfterCommit(channel: Self.channel, payload: "rolled back")
                throw Refused()
            }
        }
        try await verb.write { db in db.ringAfterCommit(channel: Self.channel, payload: "7") }
        // The verb ends at once: closing its store still sends the ring.
        await verb.close()
        #expect(await heard.waitFor(.rang(payload: "7")))
        #expect(heard.payloads == ["7"])
        // A ring and a close with nothing between: the stop comes before the doorbell's connection
        // is up, and the ring still goes out on a connection of its own.
        let quick = try database.open()
        quick.doorbell(channel: Self.channel).ring(payload: "8")
        await quick.close()
        #expect(await heard.waitFor(.rang(payload: "8")))
        await server.close()
    }

    @Test("writes that share a batch ring once for it: never more NOTIFYs than commits")
    func aBatchRingsOnce() async throws {
        let database = try TestDatabase(.postgresql)
        let server = try database.open()
        let heard = RingLog(server.doorbell(channel: Self.channel).rings())
        #expect(await heard.waitFor(.listening))
        let writer = try database.open()
        let (commits, sent) = (writer.metrics.commits.value(), writer.metrics.doorbellSent.value())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask { try await writer.write { db in db.ringAfterCommit(channel: Self.channel, payload: String(i)) } }
            }
            try await group.waitForAll()
        }
        await writer.close()
        let (batches, rings) = (writer.metrics.commits.value() - commits, writer.metrics.doorbellSent.value() - sent)
        #expect(batches >= 1 && batches <= 200)
        // Each write ringing after the commit on its own raced the doorbell's thread: a batch of
        // 21 sends went out as about three NOTIFYs.
        #expect(rings >= 1 && rings <= batches)
        #expect(await eventually(20) { !heard.payloads.isEmpty })
        await server.close()
    }

    @Test("10,000 rings in a row while connected: far fewer NOTIFYs, the last payload arrives")
    func ringsCoalesce() async throws {
        try await withTwoInstances { ringing, listening in
            for n in 1...10_000 { ringing.bell.ring(payload: String(n)) }
            #expect(await listening.heard.waitFor(.rang(payload: "10000")))
            // One payload waits at most: rings while a NOTIFY is in flight replace it.
            #expect(await eventually(20) {
                listening.store.metrics.doorbellReceived.value() == ringing.store.metrics.doorbellSent.value()
            })
            let sent = ringing.store.metrics.doorbellSent.value()
            #expect(sent >= 1 && sent <= 1000, "\(sent) NOTIFYs for 10,000 rings")
            let numbers = listening.heard.payloads.compactMap { Int($0) }
            #expect(numbers.count <= Int(sent) && numbers == numbers.sorted(), "in the order rung: \(numbers)")
        }
    }

    @Test("the listening connection is terminated: listeners hear .listening once it is back, and rings arrive again")
    func terminatedListenerListensAgain() async throws {
        try await withTwoInstances { ringing, listening in
            let pid = try #require(listening.bell.listenerPID)
            let admin = try PostgresConnection(url: try #require(testDatabaseURL))
            #expect(try admin.query("SELECT pg_terminate_backend($1::int, 5000) AS done", [.integer(Int64(pid))]).first?.bool("done") == true)
            #expect(await listening.heard.waitFor(.listening, count: 2))
            let newPID = try #require(listening.bell.listenerPID)
            #expect(newPID != pid)
            #expect(listening.store.metrics.doorbellReconnects.value() == 1)

            ringing.bell.ring(payload: "after")
            #expect(await listening.heard.waitFor(.rang(payload: "after")))
            // A listener that comes now hears at once that the doorbell listens.
            #expect(await RingLog(listening.bell.rings()).waitFor(.listening))
        }
    }

    @Test("close sends the last ring, ends the listeners' streams and the connection; a closed store's doorbell is silent")
    func closeStopsTheDoorbell() async throws {
        try await withTwoInstances { closing, staying in
            let pid = try #require(closing.bell.listenerPID)
            closing.bell.ring(payload: "last")
            await closing.store.close()
            #expect(await closing.heard.waitUntilEnded(), "the stream ends when the store closes")
            #expect(closing.bell.listenerPID == nil)
            #expect(await staying.heard.waitFor(.rang(payload: "last")))
            let admin = try PostgresConnection(url: try #require(testDatabaseURL))
            #expect(await eventually(10) {
                (try? admin.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [.integer(Int64(pid))]).isEmpty) == true
            }, "the doorbell's session ended")

            closing.bell.ring(payload: "ignored")
            #expect(await RingLog(closing.bell.rings()).waitUntilEnded())
            #expect(await RingLog(closing.store.doorbell(channel: "other").rings()).waitUntilEnded())
        }
    }

    @Test("a store closed without ever ringing or listening has no doorbell thread to wait for")
    func unusedDoorbellClosesAtOnce() async throws {
        let database = try TestDatabase(.postgresql)
        let store = try database.open()
        let bell = store.doorbell(channel: Self.channel)
        await store.close()
        #expect(bell.listenerPID == nil)
        #expect(await RingLog(bell.rings()).waitUntilEnded())
    }
}

@Suite struct DoorbellOnSQLiteTests {
    @Test("on SQLite the doorbell does nothing: rings go nowhere, listeners' streams end at once")
    func silentOnSQLite() async throws {
        let database = try TestDatabase(.sqlite)
        let store = try database.open()
        let bell = store.doorbell(channel: "sgem_events")
        bell.ring(payload: "1")
        #expect(await RingLog(bell.rings()).waitUntilEnded())
        #expect(bell.listenerPID == nil)
        #expect(store.metrics.doorbellSent.value() == 0)
        await store.close()
    }
}

/// What a doorbell's stream delivered, gathered by a task of its own.
final class RingLog: Sendable {
    private let state = Mutex<(rings: [Doorbell.Ring], ended: Bool)>(([], false))

    init(_ stream: AsyncStream<Doorbell.Ring>) {
        Task { [weak self] in
            for await ring in stream { self?.state.withLock { $0.rings.append(ring) } }
            self?.state.withLock { $0.ended = true }
        }
    }

    var rings: [Doorbell.Ring] { state.withLock { $0.rings } }
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// The payloads of the `.rang` rings, in order.
    var payloads: [String] {
        rings.compactMap { ring in
            if case .rang(let payload) = ring { return payload }
            return nil
        }
    }

    /// True once `ring` came `count` times (within 20 s).
    func waitFor(_ ring: Doorbell.Ring, count: Int = 1) async -> Bool {
        await eventually(20) { self.rings.filter { $0 == ring }.count >= count }
    }

    /// True once the stream ended (within 20 s).
    func waitUntilEnded() async -> Bool {
        await eventually(20) { self.hasEnded }
    }
}
