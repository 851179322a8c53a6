import SGEMCore
import SGEMHTTP
@testable import SGEMRealtime
import SGEMSupport
import SGEMTestSupport
import Synchronization
import Testing

extension RealtimeStreamTests {
    /// How the session of a connecting socket ends.
    enum Ending: String, Sendable, CaseIterable {
        case logout, deactivation
    }

    @Test("a session ended between the upgrade's credential check and the subscription closes the socket with 1008; nothing reaches it",
          arguments: Ending.allCases, [false, true])
    func sessionEndedWhileSubscribing(ending: Ending, replaying: Bool) async throws {
        // No recheck during the test: only the connect itself can notice the ended session.
        try await RealtimeServer.with(["realtime-recheck-seconds": "3600"]) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let since = try await s.append("test.n", to: .everyone, n: 1)
            let window = Window()
            // In ana's window her session ends and the hub moves past its control event (boss, on
            // the same hub, gets the mark recorded after it); one more event follows. Unchecked,
            // ana's socket would stay open, its replay (`since`) carrying the mark, and the last
            // event could reach it live.
            try await HookedRealtime.with(on: s, beforeSubscribe: { user in
                guard user.id == ana.userID, let watcher = window.watcher.withLock({ $0 }) else { return }
                do {
                    let ended: WireResponse
                    switch ending {
                    case .logout: ended = try await s.call("POST", "/api/v1/auth/logout", token: ana.token)
                    case .deactivation:
                        ended = try await s.call("PATCH", "/api/v1/admin/users/\(ana.userID)", token: boss.token, json: ["active": false])
                    }
                    window.note("ended \(ended.status)")
                    try await s.append("test.mark", to: .everyone)
                    _ = try await watcher.numbers(until: "test.mark")
                    window.note("hub past the end")
                    try await s.append("test.n", to: .everyone, n: 2)
                } catch {
                    window.note("failed: \(error)")
                }
            }) { hooked in
                let watcher = try await hooked.stream(boss)
                // The hook keeps it: closed here, so the shutdown need not wait out its close handshake.
                defer { watcher.close() }
                window.watcher.withLock { $0 = watcher }

                let anaStream = try await hooked.upgrade(ana, since: replaying ? since : nil)
                let (frames, code) = try await anaStream.framesUntilClose()
                #expect(window.notes.withLock { $0 } == ["ended \(ending == .logout ? 204 : 200)", "hub past the end"])
                #expect(code == 1008)
                #expect(frames.isEmpty, "after its session ended ana got \(frames.map { $0.serialized() })")
                // There were events to send: boss, connected throughout, gets the last one.
                #expect(try await watcher.event()["data"]?["n"]?.numberValue == 2)
            }
        }
    }

    /// What happened in the window, and boss's stream, which the hook reads.
    final class Window: Sendable {
        let notes = Mutex<[String]>([])
        let watcher = Mutex<WebSocketClient?>(nil)
        func note(_ line: String) { notes.withLock { $0.append(line) } }
    }

    @Test("a hub nobody is connected to lets commits go by without looking; a socket resuming with since gets exactly what it missed at once")
    func anIdleHubCatchesUpWhenASocketSubscribes() async throws {
        try await RealtimeServer.with { s in
            let boss = try await s.login()
            // The hooked hub's own look an hour away: once it has looked at boot, commits with
            // nobody connected leave its cursor where it was.
            try await HookedRealtime.with(on: s, limits: RealtimeHub.Limits(poll: .seconds(3600), recheck: .seconds(3600))) { hooked in
                var ids: [Int64] = []
                for n in 1...5 { ids.append(try await s.append("test.n", to: .everyone, n: n)) }
                let client = try await hooked.upgrade(boss, since: ids[1])
                defer { client.close() }
                try await client.ready()
                // Events 3 to 5 come from the hub catching up on the subscription, not from the
                // next commit: nothing else is committed before they are read.
                var got: [Double] = []
                for _ in 0..<3 { got.append(try await client.event()["data"]?["n"]?.numberValue ?? -1) }
                #expect(got == [3, 4, 5])
                _ = try await s.append("test.n", to: .everyone, n: 6)
                #expect(try await client.event()["data"]?["n"]?.numberValue == 6)
            }
        }
    }
}

/// A second realtime endpoint on the test server's journal and services, as another instance
/// would run it, with its own hub's `limits`, whose routes run `beforeSubscribe` in the window
/// between the upgrade's credential check and the subscription.
struct HookedRealtime {
    let server: HTTPServer
    let tail: Task<Void, Never>

    static func start(on s: RealtimeServer, limits: RealtimeHub.Limits = RealtimeHub.Limits(recheck: .seconds(3600)),
                      beforeSubscribe: @escaping @Sendable (AuthenticatedUser) async -> Void = { _ in }) async throws -> HookedRealtime {
        let journal = try s.journal()
        let services = s.running.context.services
        let hub = RealtimeHub(journal: journal, services: services, cursor: try await journal.lastEventID(),
                              limits: limits, metrics: RealtimeMetrics(MetricsRegistry()),
                              logger: Logger(label: "hooked-realtime"))
        let router = Router()
        RealtimeRoutes(hub: hub, journal: journal, services: services, logger: Logger(label: "hooked-realtime"),
                       beforeSubscribe: beforeSubscribe).register(router.group("/api/v1"))
        var http = HTTPServerConfiguration()
        http.host = "127.0.0.1"
        http.port = 0
        let server = HTTPServer(configuration: http, router: router, logger: Logger(label: "hooked-http"), metrics: MetricsRegistry())
        _ = try server.start()
        return HookedRealtime(server: server, tail: Task { await hub.run() })
    }

    /// Runs `body` with a hooked endpoint and stops it before returning, whatever `body` does.
    static func with(on s: RealtimeServer, limits: RealtimeHub.Limits = RealtimeHub.Limits(recheck: .seconds(3600)),
                     beforeSubscribe: @escaping @Sendable (AuthenticatedUser) async -> Void = { _ in },
                     _ body: (HookedRealtime) async throws -> Void) async throws {
        let hooked = try await start(on: s, limits: limits, beforeSubscribe: beforeSubscribe)
        do {
            try await body(hooked)
        } catch {
            await hooked.stop()
            throw error
        }
        await hooked.stop()
    }

    func stop() async {
        await server.shutdown()
        tail.cancel()
        await tail.value
    }

    /// An upgraded stream client of `who` (`?token=`), without waiting for its replay.
    func upgrade(_ who: LoggedIn, since: Int64? = nil) async throws -> WebSocketClient {
        let client = try WebSocketClient(port: server.port)
        let query = "?token=\(who.token)" + (since.map { "&since=\($0)" } ?? "")
        let (status, body) = try await webSocketClientThreads.run { try client.upgrade("/api/v1/realtime" + query) }
        guard status == 101 else { throw TestFailure("upgrade answered \(status): \(body)") }
        return client
    }

    /// An upgraded stream client past its subscription.
    func stream(_ who: LoggedIn) async throws -> WebSocketClient {
        let client = try await upgrade(who)
        try await client.ready()
        return client
    }
}
