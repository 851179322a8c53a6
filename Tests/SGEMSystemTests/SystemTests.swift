import Testing
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMSystem

/// The system module booted alone on a fresh database, with two runtime settings declared.
struct SystemFixture {
    let database: TestDatabase
    var dir: TempDir { database.directory }
    let store: Store
    let context: ModuleContext
    let runtime: any ModuleRuntime
    let router = Router()

    static let declared = [
        RuntimeSetting("translation.provider", default: "none", "which provider translates",
                       check: { ["none", "libretranslate", "deepl"].contains($0) ? nil : "must be none, libretranslate or deepl" }),
        RuntimeSetting("translation.api_key", secret: true, "the provider's key"),
    ]

    /// `secrets` seals under the key file of that name in the fixture's directory; `beforeBoot`
    /// sees the migrated store first (what an older release left in it).
    init(backend: TestBackend = .sqlite, metricsToken: String? = nil, keyFile: String = "secret.key",
         beforeBoot: @Sendable (Store) async throws -> Void = { _ in }) async throws {
        var migrations = MigrationList()
        let module = SystemModule(version: "test")
        module.registerMigrations(&migrations)
        database = try TestDatabase(backend)
        store = try database.open()
        _ = try await store.migrate(migrations)
        try await beforeBoot(store)
        var overrides: [String: String] = [:]
        if let metricsToken { overrides["metrics-token"] = metricsToken }
        context = ModuleContext(configuration: Configuration(overrides: overrides), store: store, services: ServiceRegistry(),
                                events: EventBus(), metrics: MetricsRegistry(), logger: Logger(label: "test"), router: router,
                                declaredRuntimeSettings: SystemFixture.declared, secrets: Secrets(keyFile: database.directory.path + "/" + keyFile))
        runtime = try await module.boot(context)
        runtime.registerRoutes(router.group("/api/v1"), root: router.group(""))
    }

    var settings: any RuntimeSettings { context.runtimeSettings! }

    func close() async {
        await store.close()
    }
}

@Suite struct RuntimeSettingsTests {
    @Test(arguments: TestBackend.available)
    func valuesDefaultPersistAndSecretsAreWriteOnly(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        #expect(try await f.settings.value("translation.provider") == "none")
        #expect(try await f.settings.value("translation.api_key") == nil)
        try await f.settings.set("translation.provider", to: "deepl")
        try await f.settings.set("translation.api_key", to: "k-123:fx")
        #expect(try await f.settings.value("translation.provider") == "deepl")
        #expect(try await f.settings.value("translation.api_key") == "k-123:fx", "the declaring module reads its secret")
        let views = try await f.settings.views()
        #expect(views == [RuntimeSettingView(key: "translation.provider", secret: false, value: "deepl", isSet: true),
                          RuntimeSettingView(key: "translation.api_key", secret: true, value: nil, isSet: true)])
        try await f.settings.set("translation.api_key", to: nil)
        #expect(try await f.settings.views().last?.isSet == false)
        await f.close()
    }

    @Test(arguments: TestBackend.available)
    func unknownKeysAndRefusedValuesChangeNothing(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        await #expect(throws: RuntimeSettingError.unknown("translation.colour")) { try await f.settings.set("translation.colour", to: "red") }
        await #expect(throws: RuntimeSettingError.invalid("translation.provider", "must be none, libretranslate or deepl")) {
            try await f.settings.set("translation.provider", to: "babelfish")
        }
        #expect(try await f.settings.value("translation.provider") == "none")
        await #expect(throws: RuntimeSettingError.unknown("nope")) { _ = try await f.settings.value("nope") }
        await f.close()
    }

    @Test(arguments: TestBackend.available)
    func aSettingWrittenInsideAFailedWriteIsRolledBackWithIt(_ backend: TestBackend) async throws {
        struct Refused: Error {}
        let f = try await SystemFixture(backend: backend)
        let settings = f.settings
        await #expect(throws: Refused.self) {
            try await f.store.write { db in
                try settings.set("translation.provider", to: "deepl", in: db)
                throw Refused()
            }
        }
        #expect(try await settings.value("translation.provider") == "none")
        try await f.store.write { db in try settings.set("translation.provider", to: "libretranslate", in: db) }
        #expect(try await settings.value("translation.provider") == "libretranslate")
        await f.close()
    }
}

@Suite struct MetricsAccessTests {
    @Test(arguments: [
        ("127.0.0.1", nil, 200), ("::1", nil, 200), ("10.1.2.3", nil, 403), ("192.168.1.9", "Bearer wrong-token-0123456789", 403),
        ("192.168.1.9", "Bearer metrics-token-0123456789", 200),
    ] as [(String, String?, Int)])
    func metricsAreReadableFromLoopbackOrWithTheToken(address: String, authorization: String?, status: Int) async throws {
        let f = try await SystemFixture(metricsToken: "metrics-token-0123456789")
        var headers = HTTPHeaders()
        if let authorization { headers.set("Authorization", authorization) }
        let response = await f.router.respond(to: Request(method: .GET, target: "/metrics", headers: headers), remoteAddress: address)
        #expect(response.status == status)
        if status == 200 { #expect(String(decoding: response.body, as: UTF8.self).contains("# TYPE")) }
        await f.close()
    }

    @Test func aLoopbackProxyForwardingAnOutsideClientIsNotLoopback() async throws {
        let f = try await SystemFixture()
        let request = Request(method: .GET, target: "/metrics", remoteAddress: "127.0.0.1", clientAddress: "203.0.113.7")
        #expect(await f.router.respond(to: request).status == 403)
        await f.close()
    }
}
