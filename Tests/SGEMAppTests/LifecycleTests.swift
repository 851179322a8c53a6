import SGEMApp
import SGEMCore
import SGEMShell
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct LifecycleTests {
    @Test func moduleServicesRunWhileServingAndStopBeforeTheStoreCloses() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let running = try await RunningServer.start(configuration: Configuration(overrides: [
            "port": "0", "host": "127.0.0.1", "data-dir": dir.path, "log-level": "warning", "password-hash-log-n": "10",
        ].merging(dir.storageSettings) { _, new in new }))
        #expect(running.serviceNames == ["company.feeds", "accounts.expiry", "realtime.hub", "realtime.retention", "translation.chats",
                                         "translation.watch", "translation.cache", "push.worker"])
        #expect(running.context.runtimeSettings != nil, "the runtime settings service is published at boot")
        let metrics = try httpRequest(port: running.port, path: "/metrics")
        #expect(metrics.status == 200, "loopback reads the metrics")
        await running.stop()
        #expect(running.serviceNames.isEmpty)
        #expect(await running.store.ping() == false, "the store closed after the services stopped")
    }
}

/// How a test service's `run` ends.
enum Ending: Sendable, CustomTestStringConvertible {
    case throwing, returning
    var testDescription: String { self == .throwing ? "throws" : "returns" }
}

/// A service that ends at once, as the test asks; `optional` ones may end without consequence.
struct EndingService: ModuleService {
    let name: String
    let ending: Ending
    var optional = false

    var successTerminationBehavior: ServiceTermination { optional ? .ignore : .gracefullyShutdownGroup }
    var failureTerminationBehavior: ServiceTermination { optional ? .ignore : .gracefullyShutdownGroup }

    func run() async throws {
        if ending == .throwing { throw TestFailure("the test service broke") }
    }
}

/// A service some module requires, which no module publishes.
protocol Unpublished: Sendable {}

/// A module added to the real assembly: it runs `services`, and with `needsUnpublished` asks at
/// boot for a service nobody publishes.
struct TestModule: Module {
    let id: ModuleID
    var services: [any ModuleService] = []
    var needsUnpublished = false

    struct Runtime: ModuleRuntime {
        let services: [any ModuleService]
    }

    func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        if needsUnpublished { _ = try context.require((any Unpublished).self) }
        return Runtime(services: services)
    }
}

@Suite struct ServiceFailureTests {
    static func settings(_ dir: TempDir) -> [String: String] {
        ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "log-level": "warning", "password-hash-log-n": "10"]
            .merging(dir.storageSettings) { _, new in new }
    }

    @Test(arguments: [(Ending.throwing, ServiceGroupError.Code.serviceFailed), (.returning, .serviceFinishedUnexpectedly)])
    func aRequiredServiceThatEndsFailsReadinessAndStopsTheServer(ending: Ending, code: ServiceGroupError.Code) async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let broken = TestModule(id: "broken", services: [EndingService(name: "broken.worker", ending: ending)])
        let running = try await RunningServer.start(configuration: Configuration(overrides: Self.settings(dir)), adding: [broken])
        let failure = await running.context.serviceGroup.waitForFailure()
        #expect(failure?.service == "broken.worker")
        #expect(failure?.code == code)

        let ready = try await httpCall(port: running.port, "GET", "/readyz")
        #expect(ready.status == 503, "not ready while a required service is dead")
        #expect(ready.errorCode == "unavailable" && ready.text.contains("broken.worker"), "\(ready.text)")

        // The server's run ends by itself (no signal comes), with the failure, after a graceful stop.
        let error = await #expect(throws: ServiceGroupError.self) {
            try await running.run(untilSignal: { try? await Task.sleep(for: .seconds(3600)); return 15 })
        }
        #expect(error?.service == "broken.worker")
        #expect(running.serviceNames.isEmpty, "every other service was stopped")
        #expect(await running.store.ping() == false, "the store closed")
    }

    @Test func anOptionalServiceMayFinishWithoutStoppingTheServer() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let module = TestModule(id: "oneshot", services: [EndingService(name: "oneshot.task", ending: .returning, optional: true)])
        let running = try await RunningServer.start(configuration: Configuration(overrides: Self.settings(dir)), adding: [module])
        #expect(await eventually { !running.serviceNames.contains("oneshot.task") }, "the optional service ended")
        #expect(running.context.serviceGroup.failure == nil)
        #expect(try await httpCall(port: running.port, "GET", "/readyz").status == 200)
        #expect(running.serviceNames.contains("realtime.hub"), "the others run on")
        await running.stop()
    }

    @Test func aMissingRequiredServiceFailsTheBootNamingTheModuleAndTheService() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let needy = TestModule(id: "needy", needsUnpublished: true)
        let error = await #expect(throws: CommandError.self) {
            _ = try await RunningServer.start(configuration: Configuration(overrides: Self.settings(dir)), adding: [needy])
        }
        let message = error?.message ?? ""
        #expect(message.contains("module 'needy'") && message.contains("Unpublished"), "\(message)")
    }

    @Test func translationDeclaresTheModulesItReadsFrom() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // Without messaging, translation has no `MessageLookup`: the module list is refused up front.
        let error = await #expect(throws: ModuleError.self) {
            _ = try await RunningServer.start(configuration: Configuration(overrides: Self.settings(dir)), excluding: ["messaging"])
        }
        #expect(error?.code == .missingDependency)
        #expect(error?.message.contains("module 'translation' needs messaging") == true, "\(error?.message ?? "")")
    }
}
