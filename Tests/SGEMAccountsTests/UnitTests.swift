@testable import SGEMAccounts
import SGEMApp
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct PasswordHasherTests {
    @Test func hashesAreSelfDescribingSaltedAndVerifiable() async throws {
        let hasher = PasswordHasher(logN: 10, threads: 2, metrics: MetricsRegistry())
        defer { hasher.shutdown() }
        let a = try await hasher.hash("a long password")
        let b = try await hasher.hash("a long password")
        #expect(a.hasPrefix("scrypt$10$8$1$"))
        #expect(a != b, "every hash has its own salt")
        #expect(try await hasher.verify("a long password", against: a))
        #expect(try await hasher.verify("a long password", against: b))
        #expect(try await !hasher.verify("a long passwore", against: a))
        #expect(try await !hasher.verify("a long password", against: "plain text"))
        #expect(try await !hasher.verify("anything at all", against: hasher.dummyHash))
        #expect(!hasher.needsRehash(a))
        let stronger = PasswordHasher(logN: 11, threads: 1, metrics: MetricsRegistry())
        defer { stronger.shutdown() }
        #expect(stronger.needsRehash(a))
        #expect(try await stronger.verify("a long password", against: a), "old parameters keep verifying")
    }

    @Test func matchesTheRFC7914TestVector() throws {
        // RFC 7914 §12, second vector, truncated to our 32-byte key: P="password", S="NaCl", N=1024, r=8, p=16.
        let key = try PasswordHasher.scrypt(Array("password".utf8), salt: Array("NaCl".utf8), ScryptParameters(logN: 10, r: 8, p: 16))
        #expect(Crypto.hex(key) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162")
    }

    @Test func base64RoundTrips() {
        for n in 0..<40 {
            let bytes = Crypto.randomBytes(n)
            #expect(base64Decode(Crypto.base64(bytes)) == bytes)
        }
        #expect(base64Decode("not*base64") == nil)
    }
}

@Suite struct LoginThrottleTests {
    @Test func locksExponentiallyUpToTheCap() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 2, addressFailures: 1000, window: 600, baseLock: 10, maxLock: 35,
                                                            now: { clock.now }))
        throttle.recordFailure(account: "bob", address: "10.0.0.1")
        #expect(throttle.retryAfter(account: "bob", address: "10.0.0.1") == nil)
        var waits: [Int] = []
        for _ in 0..<4 {
            throttle.recordFailure(account: "bob", address: "10.0.0.1")
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
        for name in ["a", "b", "c"] { throttle.recordFailure(account: name, address: "10.0.0.7") }
        #expect(throttle.retryAfter(account: "d", address: "10.0.0.7") == 30)
        #expect(throttle.retryAfter(account: "d", address: "10.0.0.8") == nil)
    }

    @Test func failuresOutsideTheWindowAreForgotten() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(accountFailures: 3, window: 100, now: { clock.now }))
        for _ in 0..<2 { throttle.recordFailure(account: "bob", address: "x") }
        clock.advance(101)
        throttle.recordFailure(account: "bob", address: "x")
        #expect(throttle.retryAfter(account: "bob", address: "x") == nil)
    }

    @Test func memoryIsBounded() {
        let clock = ManualClock()
        let throttle = LoginThrottle(policy: ThrottlePolicy(capacity: 100, now: { clock.now }))
        for i in 0..<1000 {
            clock.advance(1)
            throttle.recordFailure(account: "user\(i)", address: "10.0.\(i / 256).\(i % 256)")
        }
        #expect(throttle.trackedCount <= 100)
        #expect(throttle.trackedCount > 50)
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
}
