import SGEMApp
import SGEMCore
@testable import SGEMHolidays
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport

// An in-process company (every module) on a fresh data directory: the admin `boss` and the
// employees asked for, logged in over the API; helpers that speak the holidays API.

let bossPassword = "correct horse battery"

final class Office: Sendable {
    let dir: TempDir
    let running: RunningServer
    let people: [String: LoggedIn]

    private init(dir: TempDir, running: RunningServer, people: [String: LoggedIn]) {
        self.dir = dir
        self.running = running
        self.people = people
    }

    /// Runs `body` with a fresh company (`boss` plus `employees`) and always stops it.
    static func with(_ employees: [String] = ["ana", "bob"], admins: [String] = [], settings: JSONValue? = nil,
                     _ body: (Office) async throws -> Void) async throws {
        let office = try await start(employees, admins: admins)
        do {
            if let settings { try await office.expect(200, "PUT", "/admin/settings", as: "boss", settings) }
            try await body(office)
        } catch {
            await office.stop()
            throw error
        }
        await office.stop()
    }

    static func start(_ employees: [String], admins: [String]) async throws -> Office {
        let dir = TempDir()
        let migrate = await sgem(dir, ["migrate"])
        guard migrate.code == 0 else { throw TestFailure("migrate failed: \(migrate.io.errors)") }
        let seed = await sgem(dir, ["admin", "create-user", "--username", "boss", "--email", "boss@example.com", "--name", "Boss",
                                   "--role", "admin", "--password-stdin"], input: [bossPassword])
        guard seed.code == 0 else { throw TestFailure("seeding boss failed: \(seed.io.errors)") }
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"]
        let running = try await RunningServer.start(configuration: Configuration(overrides: settings))
        var people = ["boss": try await apiLogin(port: running.port, "boss", bossPassword)]
        for name in employees { people[name] = try await apiCreateUser(port: running.port, name, displayName: name.capitalized, role: "employee", as: people["boss"]!) }
        for name in admins { people[name] = try await apiCreateUser(port: running.port, name, displayName: name.capitalized, role: "admin", as: people["boss"]!) }
        return Office(dir: dir, running: running, people: people)
    }

    func stop() async {
        await running.stop()
        dir.cleanup()
    }

    subscript(_ name: String) -> LoggedIn { people[name]! }
    var port: Int { running.port }
    var store: Store { running.store }
    var services: ServiceRegistry { running.context.services }

    /// The module's clock, to pin "now".
    var clock: HolidaysClock { services.resolve(HolidaysClock.self)! }

    /// Pins the clock at `rfc3339` (e.g. "2026-06-01T10:00:00Z").
    func pin(_ rfc3339: String) { clock.pin(Timestamp(rfc3339: rfc3339)!) }

    func journal() throws -> any EventJournal {
        guard let journal = services.resolve((any EventJournal).self) else { throw TestFailure("no event journal") }
        return journal
    }

    func call(_ method: String, _ path: String, as who: String, _ json: JSONValue? = nil) async throws -> WireResponse {
        try await httpCall(port: port, method, "/api/v1" + path, token: who.isEmpty ? nil : self[who].token, json: json)
    }

    /// Calls and checks the status; returns the JSON body (null for an empty one).
    @discardableResult
    func expect(_ status: Int, _ method: String, _ path: String, as who: String, _ json: JSONValue? = nil,
                code: String? = nil) async throws -> JSONValue {
        let r = try await call(method, path, as: who, json)
        guard r.status == status else { throw TestFailure("\(method) \(path) as \(who): \(r.status) \(r.text), expected \(status)") }
        if let code, r.errorCode != code { throw TestFailure("\(method) \(path): code \(r.errorCode ?? "-"), expected \(code)") }
        return r.body.isEmpty ? .null : try r.json()
    }

    /// Files a request as `who`; returns the created request.
    @discardableResult
    func request(_ who: String, _ start: String, _ end: String, type: String? = nil, halfStart: Bool = false, halfEnd: Bool = false,
                 note: String? = nil) async throws -> JSONValue {
        var body: [(String, JSONValue)] = [("start", .string(start)), ("end", .string(end))]
        if let type { body.append(("type", .string(type))) }
        if halfStart { body.append(("halfStart", true)) }
        if halfEnd { body.append(("halfEnd", true)) }
        if let note { body.append(("note", .string(note))) }
        return try await expect(201, "POST", "/holidays", as: who, .object(body))
    }

    /// `who`'s summary of `year`.
    func summary(_ who: String, _ year: Int) async throws -> JSONValue {
        try await expect(200, "GET", "/holidays?year=\(year)", as: who)["summary"] ?? .null
    }

    func userID(_ who: String) -> Int64 { self[who].userID }
}

extension JSONValue {
    var double: Double? { numberValue }
    var int64: Int64? { numberValue.map { Int64($0) } }
}
