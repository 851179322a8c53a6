import SGEMApp
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMCompany

// An in-process server with one admin for the company feed tests (the other targets' copies are
// internal to them), with short feed timeouts.

let adminPassword = "correct horse battery"

/// `sgem-server admin …`.
@discardableResult
func admin(_ dir: TempDir, _ words: [String], input: [String] = []) async -> (code: Int32, io: MemoryIO) {
    await sgem(dir, ["admin"] + words, input: input)
}

/// `sgem-server migrate`: creates the database that admin verbs refuse to create.
func createDatabase(_ dir: TempDir) async throws {
    let (code, io) = await sgem(dir, ["migrate"])
    guard code == 0 else { throw TestFailure("migrate failed: \(io.errors)") }
}

/// A full server (every module) on a fresh data directory with the admin `boss` and the employee
/// `ana`, both logged in.
final class TestServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    let boss: LoggedIn
    let ana: LoggedIn
    var port: Int { running.port }

    private init(dir: TempDir, running: RunningServer, boss: LoggedIn, ana: LoggedIn) {
        self.dir = dir
        self.running = running
        self.boss = boss
        self.ana = ana
    }

    /// `feedTimeout` bounds each feed fetch, so a hanging feed ends the test quickly.
    static func start(feedTimeout: Int = 3) async throws -> TestServer {
        let dir = TempDir()
        try await createDatabase(dir)
        let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--name", "The Boss",
                                           "--role", "admin", "--password-stdin"], input: [adminPassword])
        guard code == 0 else { throw TestFailure("seeding the admin failed: \(io.errors)") }
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "error",
                        "feed-timeout": String(feedTimeout)]
        let running = try await RunningServer.start(configuration: Configuration(overrides: settings))
        let boss = try await apiLogin(port: running.port, "boss", adminPassword)
        let ana = try await apiCreateUser(port: running.port, "ana", displayName: "Ana", role: "employee", as: boss)
        return TestServer(dir: dir, running: running, boss: boss, ana: ana)
    }

    /// The company module's fetcher, to run a round and wait for it.
    func fetcher() throws -> FeedFetcher {
        guard let fetcher = running.context.services.resolve(FeedFetcher.self) else { throw TestFailure("no feed fetcher") }
        return fetcher
    }

    func stop() async {
        await running.stop()
        dir.cleanup()
    }

    func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil) async throws -> WireResponse {
        try await httpCall(port: port, method, path, token: token, json: json)
    }

    /// `PUT /admin/company/feeds` as the admin; the answer's items.
    @discardableResult
    func setFeeds(_ urls: [String]) async throws -> [JSONValue] {
        let r = try await call("PUT", "/api/v1/admin/company/feeds", token: boss.token, json: ["urls": .array(urls.map(JSONValue.string))])
        guard r.status == 200 else { throw TestFailure("setting feeds answered \(r.status): \(r.text)") }
        return try r.json()["items"]?.arrayValue ?? []
    }

    /// `GET /admin/company/feeds`'s items.
    func feedStatuses() async throws -> [JSONValue] {
        try await call("GET", "/api/v1/admin/company/feeds", token: boss.token).json()["items"]?.arrayValue ?? []
    }

    /// `GET /company/feed` as the employee.
    func feedItems(_ query: String = "") async throws -> [JSONValue] {
        let r = try await call("GET", "/api/v1/company/feed\(query)", token: ana.token)
        guard r.status == 200 else { throw TestFailure("the feed answered \(r.status): \(r.text)") }
        return try r.json()["items"]?.arrayValue ?? []
    }
}
