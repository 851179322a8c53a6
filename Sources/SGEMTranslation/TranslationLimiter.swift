import SGEMStore
import SGEMSupport

/// A per-person bound on translation requests, so nobody can spend the company's provider quota
/// by themselves: `perMinute` requests in any minute (a token bucket), then 429 `rate_limited`
/// with `Retry-After`. Answers from the cache count too; they are cheap, but the bound is simple.
/// The buckets live in the database (one small write per request), shared by every instance.
final class TranslationLimiter: Sendable {
    let perMinute: Int
    private let store: Store
    /// Epoch milliseconds; tests substitute a manual clock.
    private let now: @Sendable () -> Int64

    init(perMinute: Int, store: Store, now: @escaping @Sendable () -> Int64 = { Timestamp.now().milliseconds }) {
        self.perMinute = perMinute
        self.store = store
        self.now = now
    }

    func admit(_ user: Int64) async throws {
        let now = self.now(), capacity = Double(perMinute)
        let perMillisecond = capacity / 60_000
        let wait = try await store.write { db -> Double? in
            var bucket = try TranslationRepository.allowance(of: user, in: db) ?? (capacity, now)
            // A clock that went back adds nothing.
            bucket.tokens = min(capacity, bucket.tokens + Double(max(0, now - bucket.at)) * perMillisecond)
            bucket.at = now
            var wait: Double?
            if bucket.tokens >= 1 { bucket.tokens -= 1 } else { wait = (1 - bucket.tokens) / perMillisecond / 1000 }
            try TranslationRepository.setAllowance(of: user, tokens: bucket.tokens, at: bucket.at, in: db)
            return wait
        }
        if let wait {
            let seconds = max(1, Int(wait.rounded(FloatingPointRoundingRule.up)))
            throw TranslationError.rateLimited(retryAfter: seconds)
        }
    }
}
