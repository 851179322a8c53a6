#if canImport(Glibc)
import Glibc
#endif
@testable import SGEMAccounts
import SGEMApp
import SGEMCompany
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport
import Synchronization
import SGEMTestSupport
import Testing

/// The settings every test server uses: loopback, port 0, cheap hashes.
func testSettings(_ dir: TempDir) -> [String: String] {
    ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"].merging(dir.storageSettings) { _, new in new }
}

let adminPassword = "correct horse battery"

/// A full server (every module) started in-process on a fresh data directory with one admin,
/// `boss`, whose password is `adminPassword`.
final class TestServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    var port: Int { running.port }

    private init(dir: TempDir, running: RunningServer) {
        self.dir = dir
        self.running = running
    }

    static func start(dir: TempDir = TempDir(), seedAdmin: Bool = true) async throws -> TestServer {
        if seedAdmin {
            try await createDatabase(dir)
            let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--name", "The Boss",
                                               "--role", "admin", "--password-stdin"], input: [adminPassword])
            guard code == 0 else { throw TestFailure("seeding the admin failed: \(io.errors)") }
        }
        let running = try await RunningServer.start(configuration: Configuration(overrides: testSettings(dir)))
        return TestServer(dir: dir, running: running)
    }

    func stop(removing: Bool = true) async {
        await running.stop()
        if removing { dir.cleanup() }
    }

    func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
              headers: [(String, String)] = []) async throws -> WireResponse {
        try await running.client.call(method, path, token: token, json: json, raw: raw, headers: headers)
    }

    func login(_ login: String = "boss", _ password: String = adminPassword) async throws -> LoggedIn {
        try await apiLogin(running.client, login, password)
    }

    /// Creates an employee (or admin) through the API and logs them in.
    func createUser(_ username: String, name: String? = nil, role: String = "employee", as admin: LoggedIn) async throws -> LoggedIn {
        try await apiCreateUser(running.client, username, displayName: name ?? username.capitalized, role: role, as: admin)
    }
}

extension String {
    var capitalized: String { prefix(1).uppercased() + dropFirst() }
}


/// Blocking socket I/O runs on these threads, never on the cooperative pool that the in-process
/// server's handlers need.
let clientThreads = BlockingPool(name: "test-client", threads: 8)

/// A clock the throttle tests move by hand.
final class ManualClock: Sendable {
    private let seconds = Atomic<Int64>(1_000_000)
    var now: Int64 { seconds.load(ordering: .relaxed) }
    func advance(_ by: Int64) { seconds.add(by, ordering: .relaxed) }
}

/// Only the company and accounts modules, booted by hand so the test chooses the throttle
/// policy; otherwise the same wiring as `RunningServer.start`.
final class ModuleServer: Sendable {
    let dir: TempDir
    let store: Store
    let server: HTTPServer
    let modules: [any Module]
    let runtimes: [any ModuleRuntime]
    let context: ModuleContext
    let router: Router
    var port: Int { server.port }

    /// - Parameter logN: the scrypt cost of new hashes (the seeded admin keeps the cheap test cost).
    /// - Parameter clock: the wall clock the accounts module reads (invitations expire by it).
    init(throttle: ThrottlePolicy, logN: Int = 10, clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) async throws {
        dir = TempDir()
        try await createDatabase(dir)
        let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin",
                                           "--password-stdin"], input: [adminPassword])
        guard code == 0 else { throw TestFailure("seeding failed: \(io.errors)") }
        var settings = testSettings(dir)
        settings["password-hash-log-n"] = String(logN)
        let configuration = Configuration(overrides: settings)
        modules = [CompanyModule(), AccountsModule(throttle: throttle, clock: clock)]
        var migrations = MigrationList()
        for m in modules { m.registerMigrations(&migrations) }
        store = try Store(location: configuration.databaseLocation, logger: Logger(label: "store"))
        _ = try await store.migrate(migrations)
        router = Router()
        context = ModuleContext(configuration: configuration, store: store, services: ServiceRegistry(), events: EventBus(),
                                metrics: MetricsRegistry(), logger: Logger(label: "test"), router: router)
        var runtimes: [any ModuleRuntime] = []
        for m in modules { runtimes.append(try await m.boot(context)) }
        self.runtimes = runtimes
        for r in runtimes { r.registerRoutes(router.group("/api/v1"), root: router.group("")) }
        var http = HTTPServerConfiguration()
        http.host = "127.0.0.1"
        http.port = 0
        server = HTTPServer(configuration: http, router: router, logger: Logger(label: "http"))
        _ = try server.start()
    }

    func stop() async {
        await server.shutdown()
        for r in runtimes.reversed() { await r.shutdown() }
        await store.close()
        dir.cleanup()
    }
}

extension ModuleServer {
    /// The accounts module's runtime.
    var accounts: AccountsRuntime? { runtimes.lazy.compactMap { $0 as? AccountsRuntime }.first }

    /// Derivations the accounts module's hasher has finished (the hash-time histogram's count).
    var hashesDone: UInt64 {
        context.metrics.histogram("sgem_accounts_password_hash_seconds", help: "").totals().count
    }

    /// One login answered in-process by the router, as if sent from `address`.
    func login(_ login: String, _ password: String, from address: String) async -> Response {
        let body = Array(JSONValue.object([("login", .string(login)), ("password", .string(password))]).serialized().utf8)
        let request = Request(method: .POST, target: "/api/v1/auth/login", headers: HTTPHeaders([("Content-Type", "application/json")]),
                              body: body, remoteAddress: address, clientAddress: address)
        return await router.respond(to: request)
    }
}

/// A value that concurrent test tasks share.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func withLock<R: Sendable>(_ body: (inout sending Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// Threads for tests that hold many sockets open at once (more than `clientThreads` has).
let burstThreads = BlockingPool(name: "test-burst", threads: 40)

// MARK: Images

let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]
let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 9, 9]
let webp: [UInt8] = Array("RIFF".utf8) + [40, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [1, 2, 3, 4]
let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0]
