@testable import SGEMAccounts
import SGEMApp
import SGEMCore
import SGEMHTTP
import SGEMSupport
import SGEMTestSupport
import Testing

/// Two instances on one database (an SQLite file both open, or one PostgreSQL database) share the
/// first-run setup link and the login throttle: N instances neither print N links nor allow N
/// times the guesses.
@Suite struct SharedLimitsTests {
    /// A second server on `first`'s database and secret key file, with a data directory of its own.
    static func secondInstance(of first: TestServer) async throws -> (RunningServer, TempDir) {
        let dir = TempDir()
        var settings = testSettings(dir)
        settings["database-url"] = first.dir.storageSettings["database-url"] ?? "sqlite:\(first.dir.path)/sgem.db"
        settings["secret-key-file"] = first.dir.path + "/secret.key"
        return (try await RunningServer.start(configuration: Configuration(overrides: settings)), dir)
    }

    @Test func bothInstancesPrintTheSameSetupLinkAndEitherAcceptsIt() async throws {
        let first = try await TestServer.start(seedAdmin: false)
        defer { Task { await first.stop() } }
        let (second, secondDir) = try await Self.secondInstance(of: first)
        defer { Task { await second.stop(); secondDir.cleanup() } }
        let token = try #require(first.running.setupToken())
        #expect(second.setupToken() == token, "one link for the company, whichever instance printed it")

        let body: JSONValue = ["token": .string(token), "username": "owner", "email": "owner@example.com",
                               "password": "a long first password", "displayName": "The Owner"]
        let created = try await httpCall(port: second.port, "POST", "/api/v1/auth/setup", json: body)
        #expect(created.status == 201, "\(created.text)")
        // The link is spent on every instance.
        #expect(try await first.call("GET", "/api/v1/auth/setup").json()["open"] == false)
        let again = try await first.call("POST", "/api/v1/auth/setup", json: body)
        #expect(again.status == 403)
        #expect(again.errorCode == "setup_closed")
    }

    @Test func wrongPasswordsOnEitherInstanceCountTowardsOneLock() async throws {
        let first = try await TestServer.start()
        defer { Task { await first.stop() } }
        let (second, secondDir) = try await Self.secondInstance(of: first)
        defer { Task { await second.stop(); secondDir.cleanup() } }
        let wrong: JSONValue = ["login": "boss", "password": "not the password"]
        // Five failures (the default threshold), alternating: each instance saw fewer than five.
        for attempt in 0..<5 {
            let port = attempt % 2 == 0 ? first.port : second.port
            let answer = try await httpCall(port: port, "POST", "/api/v1/auth/login", json: wrong)
            #expect(answer.status == 401, "attempt \(attempt): \(answer.text)")
        }
        for port in [first.port, second.port] {
            let locked = try await httpCall(port: port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)])
            #expect(locked.status == 429, "\(locked.text)")
            #expect(locked.errorCode == "rate_limited")
        }
    }
}

/// The hashing's share per client address, counted in the database: an address's attempts in
/// flight on one instance leave it fewer on another.
@Suite struct SharedHashingShareTests {
    @Test func anAddressAtItsShareOnOneInstanceIsBusyOnTheOther() async throws {
        let database = try TestDatabase(TestBackend.current)
        let first = try await database.openMigrated { AccountsModule().registerMigrations(&$0) }
        let second = try database.open()
        let policy = ThrottlePolicy()
        let a = SharedLoginThrottle(store: first, policy: policy, addressShare: 3)
        let b = SharedLoginThrottle(store: second, policy: policy, addressShare: 3)
        // Three logins from one address being checked on instance A (different accounts).
        var held: [ThrottleAttempt] = []
        for name in ["ana", "ben", "cai"] { held.append(try await a.reserveLogin(account: name, address: "198.51.100.7")) }
        // A fourth from that address on instance B waits its turn: 503 busy, nothing counted.
        await #expect(throws: AccountsError.hasherBusy(retryAfter: 1)) {
            _ = try await b.reserveLogin(account: "dee", address: "198.51.100.7")
        }
        #expect(AccountsError.hasherBusy(retryAfter: 1).apiError.code == "busy", "the API answers it 503 busy")
        // Another address is not held back by it.
        let other = try await b.reserveLogin(account: "dee", address: "203.0.113.9")
        try await b.release(other)
        // One check ends on A: B may go ahead.
        try await a.fail(held.removeFirst())
        let next = try await b.reserveLogin(account: "dee", address: "198.51.100.7")
        try await b.succeed(next)
        for attempt in held { try await a.release(attempt) }
        await first.close()
        await second.close()
    }
}
