import SGEMApp
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

public let bossPassword = "correct horse battery"

/// An in-process company (every module) on a fresh data directory: the admin `boss` and the
/// people asked for, logged in over the API.
public final class Office: Sendable {
    public let dir: TempDir
    public let running: RunningServer
    public let people: [String: LoggedIn]

    private init(dir: TempDir, running: RunningServer, people: [String: LoggedIn]) {
        self.dir = dir
        self.running = running
        self.people = people
    }

    /// Runs `body` with a fresh company (`boss` plus `employees`) and always stops it.
    public static func with(_ employees: [String] = ["ana", "bob"], admins: [String] = [], settings: JSONValue? = nil,
                            overrides: [String: String] = [:], _ body: (Office) async throws -> Void) async throws {
        let office = try await start(employees, admins: admins, overrides: overrides)
        do {
            if let settings { try await office.expect(200, "PUT", "/admin/settings", as: "boss", settings) }
            try await body(office)
        } catch {
            await office.stop()
            throw error
        }
        await office.stop()
    }

    public static func start(_ employees: [String], admins: [String] = [], overrides: [String: String] = [:]) async throws -> Office {
        let dir = TempDir()
        try await createDatabase(dir)
        let seed = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--name", "Boss",
                                   "--role", "admin", "--password-stdin"], input: [bossPassword])
        guard seed.code == 0 else { throw TestFailure("seeding boss failed: \(seed.io.errors)") }
        // The stubs feeds and providers are tested against listen on 127.0.0.1, which the outbound
        // policy refuses unless allowed; the policy's own tests override this.
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning",
                        "outbound-allow": "127.0.0.1"]
            .merging(dir.storageSettings) { _, new in new }
            .merging(overrides) { _, new in new }
        let running = try await RunningServer.start(configuration: Configuration(overrides: settings))
        let client = running.client
        var people = ["boss": try await apiLogin(client, "boss", bossPassword)]
        for name in employees { people[name] = try await apiCreateUser(client, name, displayName: name.capitalized, role: "employee", as: people["boss"]!) }
        for name in admins { people[name] = try await apiCreateUser(client, name, displayName: name.capitalized, role: "admin", as: people["boss"]!) }
        return Office(dir: dir, running: running, people: people)
    }

    public func stop() async {
        await running.stop()
        dir.cleanup()
    }

    /// Another instance of the server on this company's database and secret key file, with a
    /// data directory of its own (stop it, then remove the directory).
    public func secondInstance(overrides: [String: String] = [:]) async throws -> (RunningServer, TempDir) {
        let other = TempDir()
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": other.path, "password-hash-log-n": "10", "log-level": "warning",
                        "outbound-allow": "127.0.0.1", "secret-key-file": dir.path + "/secret.key",
                        "database-url": dir.storageSettings["database-url"] ?? "sqlite:\(dir.path)/sgem.db"]
            .merging(overrides) { _, new in new }
        return (try await RunningServer.start(configuration: Configuration(overrides: settings)), other)
    }

    public subscript(_ name: String) -> LoggedIn { people[name]! }
    public var port: Int { running.port }
    public var store: Store { running.store }
    public var services: ServiceRegistry { running.context.services }

    public func journal() throws -> any EventJournal {
        guard let journal = services.resolve((any EventJournal).self) else { throw TestFailure("no event journal") }
        return journal
    }

    /// In-process unless `SGEM_TEST_TRANSPORT=loopback` (see `TestClient`).
    public func call(_ method: String, _ path: String, as who: String, _ json: JSONValue? = nil) async throws -> WireResponse {
        try await running.client.call(method, "/api/v1" + path, token: who.isEmpty ? nil : self[who].token, json: json)
    }

    /// Calls and checks the status; returns the JSON body (null for an empty one).
    @discardableResult
    public func expect(_ status: Int, _ method: String, _ path: String, as who: String, _ json: JSONValue? = nil,
                code: String? = nil) async throws -> JSONValue {
        let r = try await call(method, path, as: who, json)
        guard r.status == status else { throw TestFailure("\(method) \(path) as \(who): \(r.status) \(r.text), expected \(status)") }
        if let code, r.errorCode != code { throw TestFailure("\(method) \(path): code \(r.errorCode ?? "-"), expected \(code)") }
        return r.body.isEmpty ? .null : try r.json()
    }

    public func userID(_ who: String) -> Int64 { self[who].userID }
}

