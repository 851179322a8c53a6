import SGEMStore
import SGEMSupport
import Synchronization

/// How login failures are throttled, per account (the normalised login) and per client address.
/// After `accountFailures` failures within `window` the account is locked for `baseLock`
/// seconds, doubling with each further failure up to `maxLock` — so guessing stops, while the
/// real user waits minutes at most. Addresses get a higher threshold: a whole office may share one.
public struct ThrottlePolicy: Sendable {
    public var accountFailures: Int
    public var addressFailures: Int
    /// Registrations one address may make within `window` before it waits like a locked login.
    public var addressRegistrations: Int
    /// Seconds over which failures add up.
    public var window: Int64
    public var baseLock: Int64
    public var maxLock: Int64
    /// Most accounts and addresses remembered; the least recently seen are forgotten first.
    public var capacity: Int
    /// Seconds on the wall clock (instances on one database compare each other's times); tests
    /// substitute a manual clock.
    public var now: @Sendable () -> Int64

    public init(accountFailures: Int = 5, addressFailures: Int = 20, addressRegistrations: Int = 20, window: Int64 = 900,
                baseLock: Int64 = 30, maxLock: Int64 = 900, capacity: Int = 10_000,
                now: @escaping @Sendable () -> Int64 = { Timestamp.now().milliseconds / 1000 }) {
        self.accountFailures = accountFailures
        self.addressFailures = addressFailures
        self.addressRegistrations = addressRegistrations
        self.window = window
        self.baseLock = baseLock
        self.maxLock = maxLock
        self.capacity = capacity
        self.now = now
    }
}

/// What the login throttle needs wherever its counters live: in memory (`LoginThrottle`) or in
/// the database, shared by every instance (`SharedLoginThrottle`, what the server uses).
protocol LoginThrottling: Sendable {
    /// Reserves a login attempt for `account` from `address`, or throws `AccountsError.throttled`.
    func reserveLogin(account: String, address: String) async throws -> ThrottleAttempt
    /// Reserves a first-run setup attempt from `address`.
    func reserveSetup(address: String) async throws -> ThrottleAttempt
    /// Reserves an invitation lookup from `address`.
    func reserveInviteLookup(address: String) async throws -> ThrottleAttempt
    /// Reserves a registration from `address`.
    func reserveRegistration(address: String) async throws -> ThrottleAttempt
    /// The attempt failed: it counts, and may lock.
    func fail(_ attempt: ThrottleAttempt) async throws
    /// The password was right: the account's counter is cleared.
    func succeed(_ attempt: ThrottleAttempt) async throws
    /// The attempt ended without an answer about the password.
    func release(_ attempt: ThrottleAttempt) async throws
    /// Forgets entries whose window has passed; returns how many.
    func removeExpired() async throws -> Int
    /// How many accounts and addresses are being counted.
    func entryCount() async throws -> Int
}

/// What a reservation holds: the keys it counts against (for a login, the account's first; the
/// client address's key is always last). End it with exactly one of `fail`, `succeed` or `release`.
struct ThrottleAttempt: Sendable {
    let keys: [(key: String, threshold: Int)]

    /// The client address's key: its reservations in flight are its share of the hashing.
    var addressKey: String? { keys.last?.key }

    static func login(account: String, address: String, _ policy: ThrottlePolicy) -> ThrottleAttempt {
        ThrottleAttempt(keys: [(ThrottleRules.key(account: account), policy.accountFailures),
                               (ThrottleRules.key(address: address), policy.addressFailures)])
    }

    /// A wrong setup token counts against the address like a wrong password (never against an
    /// account, so guessing cannot lock out the person holding the link).
    static func setup(address: String, _ policy: ThrottlePolicy) -> ThrottleAttempt {
        ThrottleAttempt(keys: [(ThrottleRules.key(address: address), policy.addressFailures)])
    }

    /// A wrong invitation token counts against the address on a counter of its own, so guessing
    /// links never locks an office's logins.
    static func inviteLookup(address: String, _ policy: ThrottlePolicy) -> ThrottleAttempt {
        ThrottleAttempt(keys: [(ThrottleRules.key(inviteLookupsFrom: address), policy.addressFailures)])
    }

    /// Every registration that reaches hashing counts, successful or not (each one costs a hash
    /// and may be a throw-away account).
    static func registration(address: String, _ policy: ThrottlePolicy) -> ThrottleAttempt {
        ThrottleAttempt(keys: [(ThrottleRules.key(registrationsFrom: address), policy.addressRegistrations)])
    }
}

/// One account's or address's counters.
struct ThrottleEntry: Sendable, Equatable {
    var failures = 0
    /// Reserved attempts still being verified.
    var pending = 0
    var windowStart: Int64
    var lockedUntil: Int64 = 0
    var lastSeen: Int64
}

/// Failure counters with exponential lockout, as rules over the entries an attempt touches. An
/// attempt is *reserved* before its password is hashed, atomically per account and per address:
/// a burst of simultaneous guesses cannot all pass a check that only later failures would close.
/// Reserved attempts count as failures until they end, so at most `accountFailures` of them are
/// ever verified before the lock; a success releases its reservation and clears the account.
struct ThrottleRules: Sendable {
    let policy: ThrottlePolicy

    /// The seconds to wait when `attempt` may not go ahead now; else nil, and it is reserved.
    func reserve(_ attempt: ThrottleAttempt, in all: inout [String: ThrottleEntry], now: Int64) -> Int64? {
        var waits: [Int64] = []
        for (key, threshold) in attempt.keys {
            var e = fresh(all[key], now: now)
            if e.lockedUntil > now {
                waits.append(e.lockedUntil - now)
            } else if e.pending > 0 && e.failures + e.pending >= threshold {
                // Enough attempts are being verified to reach the lock if they fail: wait as long as that lock.
                // (With none in flight one may go ahead, even past the threshold once a lock has ended.)
                waits.append(lock(for: e.failures + e.pending, threshold: threshold))
            }
            e.lastSeen = now
            all[key] = e
        }
        if let longest = waits.max() { return longest }
        for (key, _) in attempt.keys { all[key]?.pending += 1 }
        return nil
    }

    func fail(_ attempt: ThrottleAttempt, in all: inout [String: ThrottleEntry], now: Int64) {
        for (key, threshold) in attempt.keys {
            var e = fresh(all[key], now: now)
            e.pending = max(0, e.pending - 1)
            e.failures += 1
            e.lastSeen = now
            if e.failures >= threshold { e.lockedUntil = now + lock(for: e.failures, threshold: threshold) }
            all[key] = e
        }
    }

    func succeed(_ attempt: ThrottleAttempt, in all: inout [String: ThrottleEntry]) {
        for (index, (key, _)) in attempt.keys.enumerated() {
            guard var e = all[key] else { continue }
            e.pending = max(0, e.pending - 1)
            if index == 0 {
                e.failures = 0
                e.lockedUntil = 0
            }
            if index == 0 && e.pending == 0 { all.removeValue(forKey: key) } else { all[key] = e }
        }
    }

    func release(_ attempt: ThrottleAttempt, in all: inout [String: ThrottleEntry]) {
        for (key, _) in attempt.keys where all[key] != nil { all[key]!.pending = max(0, all[key]!.pending - 1) }
    }

    func isExpired(_ e: ThrottleEntry, now: Int64) -> Bool {
        e.pending == 0 && e.lockedUntil <= now && now - e.windowStart > policy.window
    }

    /// The entry, restarted when its window has passed without a lock still running.
    private func fresh(_ entry: ThrottleEntry?, now: Int64) -> ThrottleEntry {
        guard var e = entry else { return ThrottleEntry(windowStart: now, lastSeen: now) }
        if now - e.windowStart > policy.window && e.lockedUntil <= now {
            e = ThrottleEntry(pending: e.pending, windowStart: now, lastSeen: now)
        }
        return e
    }

    /// Seconds of lock after `failures` failures: `baseLock`, doubling per failure past the threshold.
    private func lock(for failures: Int, threshold: Int) -> Int64 {
        let doublings = min(max(0, failures - threshold), 20)
        return min(policy.maxLock, policy.baseLock << Int64(doublings))
    }

    static func key(account: String) -> String { "a:" + account }
    static func key(address: String) -> String { "i:" + address }
    static func key(registrationsFrom address: String) -> String { "r:" + address }
    static func key(inviteLookupsFrom address: String) -> String { "v:" + address }
}

/// The rules with their counters in memory, bounded in size (one process; the unit tests').
final class LoginThrottle: LoginThrottling {
    typealias Attempt = ThrottleAttempt
    let policy: ThrottlePolicy
    private let rules: ThrottleRules
    private let entries = Mutex<[String: ThrottleEntry]>([:])

    init(policy: ThrottlePolicy) {
        self.policy = policy
        rules = ThrottleRules(policy: policy)
    }

    func reserveLogin(account: String, address: String) throws -> Attempt { try reserve(.login(account: account, address: address, policy)) }
    func reserveSetup(address: String) throws -> Attempt { try reserve(.setup(address: address, policy)) }
    func reserveInviteLookup(address: String) throws -> Attempt { try reserve(.inviteLookup(address: address, policy)) }
    func reserveRegistration(address: String) throws -> Attempt { try reserve(.registration(address: address, policy)) }

    private func reserve(_ attempt: Attempt) throws -> Attempt {
        let now = policy.now()
        let wait: Int64? = entries.withLock { all in
            let wait = rules.reserve(attempt, in: &all, now: now)
            if all.count > policy.capacity { evict(&all, keeping: wait == nil ? attempt.keys.map(\.key) : []) }
            return wait
        }
        if let wait { throw AccountsError.throttled(retryAfter: Int(max(1, wait))) }
        return attempt
    }

    func fail(_ attempt: Attempt) {
        let now = policy.now()
        entries.withLock { all in
            rules.fail(attempt, in: &all, now: now)
            if all.count > policy.capacity { evict(&all) }
        }
    }

    func succeed(_ attempt: Attempt) { entries.withLock { rules.succeed(attempt, in: &$0) } }

    func release(_ attempt: Attempt) { entries.withLock { rules.release(attempt, in: &$0) } }

    @discardableResult
    func removeExpired() -> Int {
        let now = policy.now()
        return entries.withLock { all in
            let before = all.count
            all = all.filter { !rules.isExpired($0.value, now: now) }
            return before - all.count
        }
    }

    var trackedCount: Int { entries.withLock { $0.count } }

    func entryCount() -> Int { trackedCount }

    /// The tracked keys (for tests).
    var trackedKeys: [String] { entries.withLock { $0.keys.sorted() } }

    /// Drops the least recently seen tenth (at least one), expired or not, but never `keeping`.
    private func evict(_ all: inout [String: ThrottleEntry], keeping: [String] = []) {
        let excess = all.count - policy.capacity
        let drop = max(excess, policy.capacity / 10, 1)
        let candidates = all.filter { !keeping.contains($0.key) }
        for (key, _) in candidates.sorted(by: { $0.value.lastSeen < $1.value.lastSeen }).prefix(drop) {
            all.removeValue(forKey: key)
        }
    }

    static func key(account: String) -> String { ThrottleRules.key(account: account) }
    static func key(address: String) -> String { ThrottleRules.key(address: address) }
}

/// The rules with their counters in the database: every instance on one database counts the
/// same attempts, so N instances do not allow N times the guesses. Each reservation and each
/// outcome is one write (group-committed with the others); the store's writer serializes them,
/// on PostgreSQL across instances too. A reservation an instance never ended (it died while the
/// password was hashed) stops counting after `pendingLease` seconds.
///
/// The reservations also share out the password hashing between client addresses across
/// instances: an address with `addressShare` attempts in flight (being hashed or waiting for a
/// hashing thread, on any instance) is told 503 `busy`, as each instance's hashing queue tells an
/// address over its share there. Without it, an address flooding N instances would hold N shares.
final class SharedLoginThrottle: LoginThrottling {
    static let pendingLease: Int64 = 120
    let policy: ThrottlePolicy
    /// Most attempts from one address in flight at once across instances.
    let addressShare: Int
    private let rules: ThrottleRules
    private let store: Store

    init(store: Store, policy: ThrottlePolicy, addressShare: Int = 8) {
        self.store = store
        self.policy = policy
        self.addressShare = max(1, addressShare)
        rules = ThrottleRules(policy: policy)
    }

    private enum Reservation: Sendable {
        case reserved
        case wait(Int64)
        case busy
    }

    func reserveLogin(account: String, address: String) async throws -> ThrottleAttempt { try await reserve(.login(account: account, address: address, policy)) }
    func reserveSetup(address: String) async throws -> ThrottleAttempt { try await reserve(.setup(address: address, policy)) }
    func reserveInviteLookup(address: String) async throws -> ThrottleAttempt { try await reserve(.inviteLookup(address: address, policy)) }
    func reserveRegistration(address: String) async throws -> ThrottleAttempt { try await reserve(.registration(address: address, policy)) }

    private func reserve(_ attempt: ThrottleAttempt) async throws -> ThrottleAttempt {
        let rules = self.rules, share = addressShare
        let outcome = try await update(attempt) { all, now -> Reservation in
            if let key = attempt.addressKey, let entry = all[key], entry.pending >= share { return .busy }
            return rules.reserve(attempt, in: &all, now: now).map(Reservation.wait) ?? .reserved
        }
        switch outcome {
        case .reserved: return attempt
        case .wait(let seconds): throw AccountsError.throttled(retryAfter: Int(max(1, seconds)))
        case .busy: throw AccountsError.hasherBusy(retryAfter: 1)
        }
    }

    func fail(_ attempt: ThrottleAttempt) async throws {
        let rules = self.rules
        try await update(attempt) { all, now in rules.fail(attempt, in: &all, now: now) }
    }

    func succeed(_ attempt: ThrottleAttempt) async throws {
        let rules = self.rules
        try await update(attempt) { all, _ in rules.succeed(attempt, in: &all) }
    }

    func release(_ attempt: ThrottleAttempt) async throws {
        let rules = self.rules
        try await update(attempt) { all, _ in rules.release(attempt, in: &all) }
    }

    /// Removes the entries past their window, then the least recently seen beyond `capacity`.
    func removeExpired() async throws -> Int {
        let now = policy.now(), window = policy.window, capacity = policy.capacity, lease = Self.pendingLease
        return try await store.write { db in
            try AccountsRepository.removeExpiredThrottleEntries(now: now, window: window, capacity: capacity, leaseSeconds: lease, in: db)
        }
    }

    func entryCount() async throws -> Int {
        try await store.read { db in try AccountsRepository.throttleEntryCount(in: db) }
    }

    /// Reads the attempt's entries, applies `body`, writes back what changed: one write job.
    @discardableResult
    private func update<T: Sendable>(_ attempt: ThrottleAttempt,
                                     _ body: @escaping @Sendable (inout [String: ThrottleEntry], Int64) -> T) async throws -> T {
        let keys = attempt.keys.map(\.key)
        let now = policy.now(), lease = Self.pendingLease
        return try await store.write { db in
            var all = try AccountsRepository.throttleEntries(keys, now: now, in: db)
            let before = all
            let value = body(&all, now)
            for key in keys where all[key] != before[key] {
                if let entry = all[key] {
                    try AccountsRepository.saveThrottleEntry(key, entry, pendingUntil: now + lease, in: db)
                } else {
                    try AccountsRepository.deleteThrottleEntry(key, in: db)
                }
            }
            return value
        }
    }
}
