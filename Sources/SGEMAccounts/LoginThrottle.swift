import SGEMHTTP
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
    /// Seconds on a monotonic clock; tests substitute a manual clock.
    public var now: @Sendable () -> Int64

    public init(accountFailures: Int = 5, addressFailures: Int = 20, addressRegistrations: Int = 20, window: Int64 = 900,
                baseLock: Int64 = 30, maxLock: Int64 = 900, capacity: Int = 10_000,
                now: @escaping @Sendable () -> Int64 = { Int64(MonotonicClock.nanoseconds() / 1_000_000_000) }) {
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

/// In-memory failure counters with exponential lockout; bounded in size. An attempt is
/// *reserved* before its password is hashed, atomically per account and per address: a burst of
/// simultaneous guesses cannot all pass a check that only later failures would close. Reserved
/// attempts count as failures until they end, so at most `accountFailures` of them are ever
/// verified before the lock; a success releases its reservation and clears the account.
final class LoginThrottle: Sendable {
    struct Entry {
        var failures = 0
        /// Reserved attempts still being verified.
        var pending = 0
        var windowStart: Int64
        var lockedUntil: Int64 = 0
        var lastSeen: Int64
    }

    /// What a reservation holds: the keys it counts against (for a login, the account's first).
    /// End it with exactly one of `fail`, `succeed` or `release`.
    struct Attempt: Sendable {
        fileprivate let keys: [(key: String, threshold: Int)]
    }

    let policy: ThrottlePolicy
    private let entries = Mutex<[String: Entry]>([:])

    init(policy: ThrottlePolicy) { self.policy = policy }

    /// Reserves a login attempt for `account` from `address`, or throws 429 `rate_limited` with
    /// the seconds until one may be tried again.
    func reserveLogin(account: String, address: String) throws -> Attempt {
        try reserve(Attempt(keys: [(Self.key(account: account), policy.accountFailures), (Self.key(address: address), policy.addressFailures)]))
    }

    /// Reserves a first-run setup attempt from `address`: a wrong token counts against the
    /// address like a wrong password (never against an account, so guessing cannot lock out the
    /// person holding the link).
    func reserveSetup(address: String) throws -> Attempt {
        try reserve(Attempt(keys: [(Self.key(address: address), policy.addressFailures)]))
    }

    /// Reserves an invitation lookup from `address`: a wrong token counts against the address on
    /// a counter of its own, so guessing links never locks an office's logins.
    func reserveInviteLookup(address: String) throws -> Attempt {
        try reserve(Attempt(keys: [(Self.key(inviteLookupsFrom: address), policy.addressFailures)]))
    }

    /// Reserves a registration from `address`; every registration that reaches hashing counts,
    /// successful or not (each one costs a hash and may be a throw-away account).
    func reserveRegistration(address: String) throws -> Attempt {
        try reserve(Attempt(keys: [(Self.key(registrationsFrom: address), policy.addressRegistrations)]))
    }

    private func reserve(_ attempt: Attempt) throws -> Attempt {
        let now = policy.now()
        let wait: Int64? = entries.withLock { all in
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
            if let longest = waits.max() {
                if all.count > policy.capacity { evict(&all) }
                return longest
            }
            for (key, _) in attempt.keys { all[key]?.pending += 1 }
            if all.count > policy.capacity { evict(&all, keeping: attempt.keys.map(\.key)) }
            return nil
        }
        if let wait { throw APIError.rateLimited(retryAfter: Int(max(1, wait))) }
        return attempt
    }

    /// The attempt failed (wrong password, or a registration was made): it counts, and may lock.
    func fail(_ attempt: Attempt) {
        let now = policy.now()
        entries.withLock { all in
            for (key, threshold) in attempt.keys {
                var e = fresh(all[key], now: now)
                e.pending = max(0, e.pending - 1)
                e.failures += 1
                e.lastSeen = now
                if e.failures >= threshold { e.lockedUntil = now + lock(for: e.failures, threshold: threshold) }
                all[key] = e
            }
            if all.count > policy.capacity { evict(&all) }
        }
    }

    /// The password was right: the account's counter is cleared (the address keeps its own).
    func succeed(_ attempt: Attempt) {
        entries.withLock { all in
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
    }

    /// The attempt ended without an answer about the password (the hasher was busy, a store error).
    func release(_ attempt: Attempt) {
        entries.withLock { all in
            for (key, _) in attempt.keys where all[key] != nil { all[key]!.pending = max(0, all[key]!.pending - 1) }
        }
    }

    /// Forgets entries whose window has passed with no lock and no attempt in flight; returns how many.
    @discardableResult
    func removeExpired() -> Int {
        let now = policy.now()
        return entries.withLock { all in
            let before = all.count
            all = all.filter { !isExpired($0.value, now: now) }
            return before - all.count
        }
    }

    var trackedCount: Int { entries.withLock { $0.count } }

    /// The tracked keys (for tests).
    var trackedKeys: [String] { entries.withLock { $0.keys.sorted() } }

    private func isExpired(_ e: Entry, now: Int64) -> Bool {
        e.pending == 0 && e.lockedUntil <= now && now - e.windowStart > policy.window
    }

    /// The entry, restarted when its window has passed without a lock still running.
    private func fresh(_ entry: Entry?, now: Int64) -> Entry {
        guard var e = entry else { return Entry(windowStart: now, lastSeen: now) }
        if now - e.windowStart > policy.window && e.lockedUntil <= now {
            e = Entry(pending: e.pending, windowStart: now, lastSeen: now)
        }
        return e
    }

    /// Seconds of lock after `failures` failures: `baseLock`, doubling per failure past the threshold.
    private func lock(for failures: Int, threshold: Int) -> Int64 {
        let doublings = min(max(0, failures - threshold), 20)
        return min(policy.maxLock, policy.baseLock << Int64(doublings))
    }

    /// Drops the least recently seen tenth (at least one), expired or not, but never `keeping`.
    private func evict(_ all: inout [String: Entry], keeping: [String] = []) {
        let excess = all.count - policy.capacity
        let drop = max(excess, policy.capacity / 10, 1)
        let candidates = all.filter { !keeping.contains($0.key) }
        for (key, _) in candidates.sorted(by: { $0.value.lastSeen < $1.value.lastSeen }).prefix(drop) {
            all.removeValue(forKey: key)
        }
    }

    static func key(account: String) -> String { "a:" + account }
    static func key(address: String) -> String { "i:" + address }
    static func key(registrationsFrom address: String) -> String { "r:" + address }
    static func key(inviteLookupsFrom address: String) -> String { "v:" + address }
}
