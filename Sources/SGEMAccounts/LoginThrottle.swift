import SGEMSupport
import Synchronization

/// How login failures are throttled, per account (the normalised login) and per client address.
/// After `accountFailures` failures within `window` the account is locked for `baseLock`
/// seconds, doubling with each further failure up to `maxLock` — so guessing stops, while the
/// real user waits minutes at most. Addresses get a higher threshold: a whole office may share one.
public struct ThrottlePolicy: Sendable {
    public var accountFailures: Int
    public var addressFailures: Int
    /// Seconds over which failures add up.
    public var window: Int64
    public var baseLock: Int64
    public var maxLock: Int64
    /// Most accounts and addresses remembered; the least recently seen are forgotten first.
    public var capacity: Int
    /// Seconds on a monotonic clock; tests substitute a manual clock.
    public var now: @Sendable () -> Int64

    public init(accountFailures: Int = 5, addressFailures: Int = 20, window: Int64 = 900, baseLock: Int64 = 30,
                maxLock: Int64 = 900, capacity: Int = 10_000,
                now: @escaping @Sendable () -> Int64 = { Int64(MonotonicClock.nanoseconds() / 1_000_000_000) }) {
        self.accountFailures = accountFailures
        self.addressFailures = addressFailures
        self.window = window
        self.baseLock = baseLock
        self.maxLock = maxLock
        self.capacity = capacity
        self.now = now
    }
}

/// In-memory failure counters with exponential lockout; bounded in size.
final class LoginThrottle: Sendable {
    struct Entry {
        var failures = 0
        var windowStart: Int64
        var lockedUntil: Int64 = 0
        var lastSeen: Int64
    }

    let policy: ThrottlePolicy
    private let entries = Mutex<[String: Entry]>([:])

    init(policy: ThrottlePolicy) { self.policy = policy }

    /// Seconds until a login for `account` from `address` may be tried again; nil when it may now.
    func retryAfter(account: String, address: String) -> Int? {
        let now = policy.now()
        return entries.withLock { all in
            let waits = [Self.key(account: account), Self.key(address: address)].compactMap { key -> Int64? in
                guard let e = all[key], e.lockedUntil > now else { return nil }
                return e.lockedUntil - now
            }
            return waits.max().map { Int(max(1, $0)) }
        }
    }

    /// Counts one failed login against both the account and the address.
    func recordFailure(account: String, address: String) {
        let now = policy.now()
        entries.withLock { all in
            count(&all, Self.key(account: account), threshold: policy.accountFailures, now: now)
            count(&all, Self.key(address: address), threshold: policy.addressFailures, now: now)
            if all.count > policy.capacity { evict(&all) }
        }
    }

    /// A successful login clears the account's counter (the address keeps its own).
    func recordSuccess(account: String) {
        _ = entries.withLock { $0.removeValue(forKey: Self.key(account: account)) }
    }

    var trackedCount: Int { entries.withLock { $0.count } }

    private func count(_ all: inout [String: Entry], _ key: String, threshold: Int, now: Int64) {
        var e = all[key] ?? Entry(windowStart: now, lastSeen: now)
        if now - e.windowStart > policy.window && e.lockedUntil <= now {
            e = Entry(windowStart: now, lastSeen: now)
        }
        e.failures += 1
        e.lastSeen = now
        if e.failures >= threshold {
            let doublings = min(e.failures - threshold, 20)
            e.lockedUntil = now + min(policy.maxLock, policy.baseLock << Int64(doublings))
        }
        all[key] = e
    }

    /// Drops the least recently seen tenth (at least one), expired or not.
    private func evict(_ all: inout [String: Entry]) {
        let excess = all.count - policy.capacity
        let drop = max(excess, policy.capacity / 10, 1)
        for (key, _) in all.sorted(by: { $0.value.lastSeen < $1.value.lastSeen }).prefix(drop) {
            all.removeValue(forKey: key)
        }
    }

    static func key(account: String) -> String { "a:" + account }
    static func key(address: String) -> String { "i:" + address }
}
