import SGEMCore
@testable import SGEMRealtime
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Realtime module", .serialized)
struct RealtimeModuleTests {
    @Test("boots after the system and accounts modules")
    func dependencies() {
        #expect(RealtimeModule().dependencies == ["system", "accounts"])
    }

    @Test("the server runs the hub and the retention job, and documents the stream")
    func servicesAndDocument() async throws {
        try await RealtimeServer.with() { s in
            #expect(s.running.serviceNames.contains("realtime.hub"))
            #expect(s.running.serviceNames.contains("realtime.retention"))
            let doc = try await s.call("GET", "/api/v1/openapi.json").json()
            let get = doc["paths"]?["/api/v1/realtime"]?["get"]
            #expect(get?["responses"]?["101"] != nil)
            #expect(get?["responses"]?["403"] != nil)
        }
    }

    @Test("retention removes the events older than the window, and only those", arguments: [(6, 0), (8, 2)])
    func retention(daysLater: Int, removed: Int) async throws {
        try await RealtimeServer.with() { s in
            let journal = try s.journal()
            try await s.append("test.n", to: .everyone, n: 1)
            try await s.append("test.n", to: .everyone, n: 2)
            let hub = RealtimeHub(journal: journal, services: s.running.context.services, cursor: 0, limits: .init(),
                                  metrics: RealtimeMetrics(MetricsRegistry()), logger: Logger(label: "test"))
            let runtime = RealtimeRuntime(hub: hub, journal: journal, registry: s.running.context.services,
                                          retention: .seconds(7 * 86_400), logger: Logger(label: "test"))
            let later = Timestamp(milliseconds: Timestamp.now().milliseconds + Int64(daysLater) * 86_400_000)
            #expect(try await runtime.removeExpiredEvents(now: later) == removed)
            #expect(try await journal.events(after: 0, limit: 10).count == 2 - removed)
        }
    }
}
