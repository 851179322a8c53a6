import SGEMApp
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport

// The minimal part of Tests/SGEMAccountsTests/Support.swift these tests need (that file's
// helpers are internal to its target): an in-process server with one admin and logins.

let adminPassword = "correct horse battery"

func testSettings(_ dir: TempDir) -> [String: String] {
    ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"].merging(dir.storageSettings) { _, new in new }
}

/// A full server (every module) in-process on a fresh data directory with one admin, `boss`.
final class TestServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    var port: Int { running.port }
    var store: Store { running.store }
    var services: ServiceRegistry { running.context.services }

    private init(dir: TempDir, running: RunningServer) {
        self.dir = dir
        self.running = running
    }

    static func start() async throws -> TestServer {
        let dir = TempDir()
        try await createDatabase(dir)
        return try await startOn(dir)
    }

    /// Seeds `boss` in the existing database in `dir` and starts a server on it.
    static func startOn(_ dir: TempDir) async throws -> TestServer {
        let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--name", "The Boss",
                                           "--role", "admin", "--password-stdin"], input: [adminPassword])
        guard code == 0 else { throw TestFailure("seeding the admin failed: \(io.errors)") }
        let running = try await RunningServer.start(configuration: Configuration(overrides: testSettings(dir)))
        return TestServer(dir: dir, running: running)
    }

    /// A server with the admin `boss` and the employee `ana`, both logged in.
    static func startWithEmployee() async throws -> (TestServer, LoggedIn, LoggedIn) {
        let s = try await start()
        let boss = try await s.login()
        return (s, boss, try await s.createUser("ana", as: boss))
    }

    /// The system module's event journal.
    func journal() throws -> any EventJournal {
        guard let journal = services.resolve((any EventJournal).self) else { throw TestFailure("no event journal") }
        return journal
    }

    func stop() async {
        await running.stop()
        dir.cleanup()
    }

    func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
              headers: [(String, String)] = []) async throws -> WireResponse {
        try await running.client.call(method, path, token: token, json: json, raw: raw, headers: headers)
    }

    func login(_ login: String = "boss", _ password: String = adminPassword) async throws -> LoggedIn {
        try await apiLogin(running.client, login, password)
    }

    /// Creates an employee (or admin) through the API and logs them in.
    func createUser(_ username: String, role: String = "employee", as admin: LoggedIn) async throws -> LoggedIn {
        try await apiCreateUser(running.client, username, displayName: username, role: role, as: admin)
    }
}

