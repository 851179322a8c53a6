@testable import SGEMAccounts
import SGEMApp
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct PasswordHasherTests {
    @Test func hashesAreSelfDescribingSaltedAndVerifiable() async throws {
        let hasher = PasswordHasher(logN: 10, threads: 2, metrics: MetricsRegistry())
        defer { hasher.shutdown() }
        let a = try await hasher.hash("a long password", for: "t")
        let b = try await hasher.hash("a long password", for: "t")
        #expect(a.hasPrefix("scrypt$10$8$1$"))
        #expect(a != b, "every hash has its own salt")
        #expect(try await hasher.verify("a long password", against: a, for: "t"))
        #expect(try await hasher.verify("a long password", against: b, for: "t"))
        #expect(try await !hasher.verify("a long passwore", against: a, for: "t"))
        #expect(try await !hasher.verify("a long password", against: "plain text", for: "t"))
        #expect(try await !hasher.verify("anything at all", against: hasher.dummyHash, for: "t"))
        #expect(!hasher.needsRehash(a))
        let costlier = try await PasswordHasher(logN: 11, threads: 1, metrics: MetricsRegistry()).hash("x", for: "t")
        #expect(hasher.needsRehash(costlier), "a costlier hash is brought to the configured cost")
        let stronger = PasswordHasher(logN: 11, threads: 1, metrics: MetricsRegistry())
        defer { stronger.shutdown() }
        #expect(stronger.needsRehash(a))
        #expect(try await stronger.verify("a long password", against: a, for: "t"), "old parameters keep verifying")
    }

    @Test func matchesTheRFC7914TestVector() throws {
        // RFC 7914 §12, second vector, truncated to our 32-byte key: P="password", S="NaCl", N=1024, r=8, p=16.
        let key = try PasswordHasher.scrypt(Array("password".utf8), salt: Array("NaCl".utf8), ScryptParameters(logN: 10, r: 8, p: 16))
        #expect(Crypto.hex(key) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162")
    }
}

extension LoginThrottle {
    /// One failed login (reserved, then failed).
    func failOnce(account: String, address: String) {
        if let attempt = try? reserveLogin(account: account, address: address) { fail(attempt) }
    }

    /// The Retry-After a login would get now; nil when it may be tried (the probe is released).
    func retryAfter(account: String, address: String) -> Int? {
        do {
            release(try reserveLogin(account: account, address: address))
            return nil
        } catch let AccountsError.throttled(retryAfter) {
            return retryAfter
        } catch {
            return -1
        }
    }
}

@Suite struct LoginThrottleTests {
    @Test func locksExponentiallyUpToTheCap() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 2, addressFailures: 1000, window: 600, baseLock: 10, maxLock: 35,
                                                            now: { clock.now }))
        throttle.failOnce(account: "bob", address: "10.0.0.1")
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.1") == nil)
        var waits: [Int] = []
        for _ in 0..<4 {
            throttle.failOnce(account: "bob", address: "10.0.0.1")
            let wait = throttle.retryAfter(account: "bob", address: "10.0.0.9")
            waits.append(wait ?? 0)
            clock.advance(Int64(wait ?? 0))
        }
        #expect(waits == [10, 20, 35, 35])
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.1") == nil, "the lock ends when its time is up")
        #expect(throttle.retryAfter(account: "alice", address: "10.0.0.1") == nil, "other accounts are not locked")
    }

    @Test func locksAnAddressThatGuessesManyAccounts() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 5, addressFailures: 3, baseLock: 30, now: { clock.now }))
        for name in ["a", "b", "c"] { throttle.failOnce(account: name, address: "10.0.0.7") }
        #expect(throttle.retryAfter(account: "d", address: "10.0.0.7") == 30)
        #expect(throttle.retryAfter(account: "d", address: "10.0.0.8") == nil)
    }

    @Test func failuresOutsideTheWindowAreForgotten() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 3, window: 100, now: { clock.now }))
        for _ in 0..<2 { throttle.failOnce(account: "bob", address: "x") }
        clock.advance(101)
        throttle.failOnce(account: "bob", address: "x")
        #expect(throttle.retryAfter(account: "bob", address: "x") == nil)
    }

    @Test func memoryIsBounded() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(capacity: 100, now: { clock.now }))
        for i in 0..<1000 {
            clock.advance(1)
            throttle.failOnce(account: "user\(i)", address: "10.0.\(i / 256).\(i % 256)")
        }
        #expect(throttle.trackedCount <= 100)
        #expect(throttle.trackedCount > 50)
    }

    @Test func reservationsInFlightCountAgainstTheThreshold() throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 5, addressFailures: 1000, baseLock: 30, now: { clock.now }))
        // Thirty simultaneous attempts: the first five are admitted before any of them ends.
        var admitted: [LoginThrottle.Attempt] = []
        var refused: [Int] = []
        for _ in 0..<30 {
            do { admitted.append(try throttle.reserveLogin(account: "bob", address: "10.0.0.1")) } catch let AccountsError.throttled(retryAfter) {
                refused.append(retryAfter)
            }
        }
        #expect(admitted.count == 5)
        #expect(refused.count == 25)
        #expect(refused.allSatisfy { $0 == 30 }, "told to wait as long as the lock the pending guesses lead to")
        // A release (no answer about the password) frees its place; a failure keeps it.
        throttle.release(admitted.removeLast())
        admitted.append(try throttle.reserveLogin(account: "bob", address: "10.0.0.2"))
        for attempt in admitted { throttle.fail(attempt) }
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.3") == 30, "five failures lock the account")
    }

    @Test func aSuccessReleasesItsPlaceAndClearsTheAccount() throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 2, addressFailures: 3, baseLock: 30, now: { clock.now }))
        throttle.failOnce(account: "bob", address: "10.0.0.1")
        let right = try throttle.reserveLogin(account: "bob", address: "10.0.0.1")
        throttle.succeed(right)
        throttle.failOnce(account: "bob", address: "10.0.0.1")
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.9") == nil, "the success cleared the account's earlier failure")
        throttle.failOnce(account: "eve", address: "10.0.0.1")
        #expect(throttle.retryAfter(account: "zed", address: "10.0.0.1") == 30, "the address keeps its failures")
    }

    @Test func registrationsAreThrottledPerAddress() throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(addressRegistrations: 2, baseLock: 30, now: { clock.now }))
        for _ in 0..<2 { throttle.fail(try throttle.reserveRegistration(address: "10.0.0.1")) }
        #expect(throws: AccountsError.self) { try throttle.reserveRegistration(address: "10.0.0.1") }
        throttle.release(try throttle.reserveRegistration(address: "10.0.0.2"))
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.1") == nil, "registrations do not lock logins")
    }

    @Test func expiredEntriesAreRemoved() throws {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 2, window: 100, baseLock: 300, maxLock: 300, now: { clock.now }))
        throttle.failOnce(account: "old", address: "10.0.0.1")
        for _ in 0..<2 { throttle.failOnce(account: "locked", address: "10.0.0.2") }
        let inFlight = try throttle.reserveLogin(account: "pending", address: "10.0.0.3")
        #expect(throttle.trackedCount == 6)
        clock.advance(150)
        // The window of all has passed; the lock (300 s) and the attempt in flight still hold.
        #expect(throttle.removeExpired() == 3)
        #expect(throttle.trackedKeys == ["a:locked", "a:pending", "i:10.0.0.3"])
        #expect(throttle.retryAfter(account: "locked", address: "10.0.0.9") == 150)
        throttle.fail(inFlight)
        clock.advance(200)
        #expect(throttle.removeExpired() == 4, "the three left and the probe's address")
        #expect(throttle.trackedCount == 0)
    }
}

@Suite struct HashSchedulerTests {
    /// A job that records its client's name when it runs.
    func job(_ client: String, _ log: Shared<[String]>) -> HashScheduler.Job {
        HashScheduler.Job(run: { log.withLock { $0.append(client) } }, cancel: { _ in log.withLock { $0.append("cancelled " + client) } })
    }

    @Test func servesClientsInTurnAndBoundsEach() throws {
        let scheduler = HashScheduler(capacity: 10, perClient: 3)
        let log = Shared<[String]>([])
        for _ in 0..<3 { try scheduler.add(job("flood", log), client: "10.0.0.1") }
        do {
            try scheduler.add(job("flood", log), client: "10.0.0.1")
            Issue.record("a fourth job of one client must be refused")
        } catch let error as AccountsError {
            #expect(error == .hasherBusy(retryAfter: 1))
            #expect(error.apiError.status == 503)
            #expect(error.apiError.code == "busy")
            #expect(error.apiError.headers["Retry-After"] == "1")
        }
        try scheduler.add(job("real", log), client: "10.0.0.2")
        scheduler.runNext()
        scheduler.runNext()
        #expect(log.value == ["flood", "real"], "the second client is served right after the first one's current job")
        #expect(scheduler.activeCount("10.0.0.1") == 2)
        scheduler.runNext()
        scheduler.runNext()
        #expect(scheduler.activeCount("10.0.0.1") == 0)
        #expect(scheduler.queuedCount == 0)
    }

    @Test func theWholeQueueIsBounded() throws {
        let scheduler = HashScheduler(capacity: 4, perClient: 2)
        let log = Shared<[String]>([])
        for i in 0..<2 { for _ in 0..<2 { try scheduler.add(job("c\(i)", log), client: "c\(i)") } }
        #expect(throws: AccountsError.self) { try scheduler.add(self.job("late", log), client: "another") }
        scheduler.close(cancelling: BlockingPoolStopped(name: "hash"))
        #expect(log.value.filter { $0.hasPrefix("cancelled") }.count == 4, "closing answers every queued caller")
        #expect(throws: BlockingPoolStopped.self) { try scheduler.add(self.job("after", log), client: "c0") }
    }
}

@Suite struct HashUpgradeTests {
    @Test func loginUpgradesAWeakerHash() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let first = try await TestServer.start(dir: dir)   // hashes with log N 10
        await first.stop(removing: false)
        var settings = testSettings(dir)
        settings["password-hash-log-n"] = "11"
        let running = try await RunningServer.start(configuration: Configuration(overrides: settings))
        let r = try await httpCall(port: running.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)])
        #expect(r.status == 200)
        let stored = try await running.store.read { db in try db.queryOne("SELECT password_hash FROM accounts_users WHERE username = 'boss'") }
        #expect(stored?.string("password_hash")?.hasPrefix("scrypt$11$8$1$") == true)
        let again = try await httpCall(port: running.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)])
        #expect(again.status == 200, "the upgraded hash verifies")
        await running.stop()
    }

    @Test func loginRehashesACostlierHashAtTheConfiguredCost() async throws {
        let server = try await TestServer.start()   // the server hashes with log N 10
        defer { Task { await server.stop() } }
        let (code, io) = await admin(server.dir, ["create-user", "--username", "dear", "--email", "dear@example.com", "--password-stdin"],
                                     input: ["password of dear"], hashLogN: 12)
        #expect(code == 0, "\(io.errors)")
        let stored = { try await server.running.store.read { db in
            try db.queryOne("SELECT password_hash FROM accounts_users WHERE username = 'dear'")?.string("password_hash") } }
        #expect(try await stored()?.hasPrefix("scrypt$12$8$1$") == true)
        let first = try await server.call("POST", "/api/v1/auth/login", json: ["login": "dear", "password": "password of dear"])
        #expect(first.status == 200)
        #expect(try await stored()?.hasPrefix("scrypt$10$8$1$") == true, "rehashed at the server's cost")
        let again = try await server.call("POST", "/api/v1/auth/login", json: ["login": "dear", "password": "password of dear"])
        #expect(again.status == 200, "the password still works")
    }
}

@Suite struct DummyHashTests {
    /// Creates `username` from the command line (another Store on the file) at cost 2^`logN`.
    func createUser(_ dir: TempDir, _ username: String, logN: Int) async throws {
        let (code, io) = await admin(dir, ["create-user", "--username", username, "--email", "\(username)@example.com", "--password-stdin"],
                                     input: ["password of \(username)"], hashLogN: logN)
        guard code == 0 else { throw TestFailure("create-user failed: \(io.errors)") }
    }

    @Test func theDummyHashCostsWhatTheCostliestStoredHashCosts() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        try await createUser(dir, "cheap", logN: 10)
        let store = try Store(location: dir.storeLocation, logger: Logger(label: "test"))
        let hasher = PasswordHasher(logN: 10, threads: 1, metrics: MetricsRegistry())
        defer { hasher.shutdown() }
        let sessions = SessionManager(store: store, idleHours: 1, maxDays: 1, logger: Logger(label: "test"))
        let service = AccountService(store: store, hasher: hasher, sessions: sessions, dummyCostRefresh: .zero)
        try await service.readDummyCost()
        #expect(hasher.dummyCost.logN == 10)

        // Written by another Store on the same file: seen at the next read.
        try await createUser(dir, "dear", logN: 12)
        let dummy = try #require(PasswordHasher.parse(await service.dummyHash()))
        #expect(dummy.parameters == ScryptParameters(logN: 12), "the unknown-user path verifies at the stored maximum")

        // A costlier hash this process reads raises the cost at once, before any store read.
        let dearer = try await PasswordHasher(logN: 13, threads: 1, metrics: MetricsRegistry()).hash("x", for: "t")
        _ = try await hasher.verify("y", against: dearer, for: "t")
        #expect(hasher.dummyCost.logN == 13)

        // Once the costly hash is gone, the cost comes back down with the next read.
        let dear = try #require(try await service.user(login: "dear")?.0)
        try await service.setPassword(userID: dear.id, hash: try await hasher.hash("new", for: "t"), mustChange: true, keepSession: nil,
                                      event: "password.reset", actor: .commandLine)
        #expect(try #require(PasswordHasher.parse(await service.dummyHash())).parameters.logN == 10)
        await store.close()
    }
}
