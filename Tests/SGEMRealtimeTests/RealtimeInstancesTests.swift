import SGEMCore
@testable import SGEMRealtime
@testable import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Two instances on one PostgreSQL database: what one commits reaches the other's streams through
/// the store's doorbell (`NOTIFY`), long before the other's timer would have found it.
@Suite(.enabled(if: TestBackend.current == .postgresql, "runs in the PostgreSQL pass (SGEM_TEST_BACKEND=postgresql)"))
struct RealtimeInstancesTests {
    /// A hub that looks on its own only every 30 s: anything sooner came by the doorbell.
    /// B's own look at the journal an hour away: what reaches its stream came by the doorbell, or
    /// by the look it takes when it listens again.
    static let slowPoll = RealtimeHub.Limits(poll: .seconds(3600), recheck: .seconds(3600))

    @Test("an event committed on instance A reaches a stream on instance B at once; after B's listening connection is cut, what was missed arrives when it listens again")
    func eventsCrossInstancesByTheDoorbell() async throws {
        try await RealtimeServer.with { a in
            let b = try await RealtimeServer.start(on: a.dir)
            do {
                try await HookedRealtime.with(on: b, limits: Self.slowPoll) { onB in
                    try await crossInstances(from: a, to: b, stream: onB)
                }
            } catch {
                await b.stop(keeping: true)
                throw error
            }
            await b.stop(keeping: true)
        }
    }

    private func crossInstances(from a: RealtimeServer, to b: RealtimeServer, stream onB: HookedRealtime) async throws {
        let boss = try await a.login()
        let stream = try await onB.stream(boss)
        defer { stream.close() }
        let bell = b.running.store.doorbell(channel: "sgem_events")
        #expect(await eventually(20) { bell.listenerPID != nil })
        // B's own commit: its hub runs and follows B's journal.
        try await b.append("test.n", to: .everyone, n: 0)
        #expect(try await stream.event()["data"]?["n"]?.numberValue == 0)

        try await a.append("test.n", to: .everyone, n: 1)
        #expect(try await stream.event()["data"]?["n"]?.numberValue == 1)

        // Recorded by a command-line verb, which rings no doorbell: B would find it at its next look.
        #expect(await sgem(a.dir, ["admin", "notices", "post", "--title", "Unrung", "--body-stdin"], input: ["From the shell"]).code == 0)
        let pid = try #require(bell.listenerPID)
        let admin = try PostgresConnection(url: try #require(testDatabaseURL))
        #expect(try admin.query("SELECT pg_terminate_backend($1::int, 5000) AS done", [.integer(Int64(pid))]).first?.bool("done") == true)
        // Listening again, B looks once: the notice arrives, with its own look an hour away.
        let frames = try await stream.frames(untilTitle: "Unrung")
        #expect(frames.count == 1, "\(frames.map { $0.serialized() })")

        #expect(await eventually(20) { bell.listenerPID.map { $0 != pid } ?? false })
        try await a.append("test.n", to: .everyone, n: 2)
        #expect(try await stream.event()["data"]?["n"]?.numberValue == 2)
    }
}
