import SGEMApp
import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct LifecycleTests {
    @Test func moduleServicesRunWhileServingAndStopBeforeTheStoreCloses() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let running = try await RunningServer.start(configuration: Configuration(overrides: [
            "port": "0", "host": "127.0.0.1", "data-dir": dir.path, "log-level": "warning", "password-hash-log-n": "10",
        ]))
        #expect(running.serviceNames == ["company.feeds", "accounts.expiry", "realtime.hub", "realtime.retention", "translation.chats",
                                         "translation.cache"])
        #expect(running.context.runtimeSettings != nil, "the runtime settings service is published at boot")
        let metrics = try httpRequest(port: running.port, path: "/metrics")
        #expect(metrics.status == 200, "loopback reads the metrics")
        await running.stop()
        #expect(running.serviceNames.isEmpty)
        #expect(await running.store.ping() == false, "the store closed after the services stopped")
    }
}
