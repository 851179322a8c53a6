/// Which instance runs a periodic job's round when several serve one database: one round per
/// interval among them all, not one per instance (published by the system module, which keeps
/// the rounds in the store). With one process on the database every round simply runs.
public protocol PeriodicRounds: Sendable {
    /// True when this instance should run `job`'s round now — no other instance is deciding the
    /// same at this moment, and none ran it less than `interval` ago — and then the round is
    /// recorded as run now. False: another instance has it.
    func claim(_ job: String, every interval: Duration) async throws -> Bool

    /// Records a round of `job` run now outside its schedule (asked for at once), so that other
    /// instances count their interval from it.
    func record(_ job: String) async throws
}
