import SGEMCore
import SGEMStore

/// `PeriodicRounds` kept in the store. On PostgreSQL a round is claimed under the job's advisory
/// lock (`Store.exclusively`), in the transaction that checks and records its last run: an
/// instance that finds the lock taken, or the last round younger than the interval, skips its
/// own. With one process on the database (SQLite) every round runs, as on one server it always
/// did, and is recorded all the same.
struct StoredPeriodicRounds: PeriodicRounds {
    let store: Store

    func claim(_ job: String, every interval: Duration) async throws -> Bool {
        try await claimedAt(job, every: interval) != nil
    }

    func record(_ job: String) async throws {
        _ = try await recordedAt(job)
    }

    /// The time (the database's clock, epoch milliseconds) of the round of `job` this instance
    /// claimed now; nil when another instance has it.
    func claimedAt(_ job: String, every interval: Duration) async throws -> Int64? {
        guard store.isShared else { return try await recordedAt(job) }
        let milliseconds = Int64(interval / .milliseconds(1))
        let claimed = try await store.exclusively(StoreLock("job:" + job)) { db in
            try JobRunRepository.claim(job, ifNotRunWithin: milliseconds, in: db)
        }
        // nil: another instance holds the lock; .some(nil): the last round is too recent.
        return claimed ?? nil
    }

    private func recordedAt(_ job: String) async throws -> Int64 {
        try await store.write(background: true) { db in try JobRunRepository.record(job, in: db) }
    }
}
