import SGEMStore

/// The periodic jobs' rounds (`system_job_runs`): when each job last ran, on any instance, by the
/// database's clock.
struct JobRunRepository: Sendable {
    static func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("system.008_job_runs", sqlite: """
            CREATE TABLE system_job_runs (name TEXT PRIMARY KEY, last_run_at INTEGER NOT NULL);
            """, postgresql: """
            CREATE TABLE system_job_runs (name TEXT PRIMARY KEY, last_run_at BIGINT NOT NULL);
            """)
    }

    /// Records a round of `job` now when its last one is at least `interval` milliseconds old (or
    /// there was none); returns the time recorded, nil when the last round is too recent.
    static func claim(_ job: String, ifNotRunWithin interval: Int64, in db: Database) throws -> Int64? {
        try db.fetchOne("""
            INSERT INTO system_job_runs (name, last_run_at) VALUES (\(job), \(.nowMilliseconds))
            ON CONFLICT (name) DO UPDATE SET last_run_at = excluded.last_run_at
            WHERE system_job_runs.last_run_at <= excluded.last_run_at - \(interval)
            RETURNING last_run_at
            """)?.int64("last_run_at")
    }

    /// Records a round of `job` now, whenever the last one was; returns the time recorded.
    @discardableResult
    static func record(_ job: String, in db: Database) throws -> Int64 {
        guard let at = try db.fetchOne("""
            INSERT INTO system_job_runs (name, last_run_at) VALUES (\(job), \(.nowMilliseconds))
            \(upsertOn: ["name"], update: ["last_run_at"]) RETURNING last_run_at
            """)?.int64("last_run_at") else { throw StoreError(code: .system, message: "recording a round returned no time") }
        return at
    }

    /// When `job` last ran (epoch milliseconds); nil when it never did.
    static func lastRun(of job: String, in db: Database) throws -> Int64? {
        try db.fetchOne("SELECT last_run_at FROM system_job_runs WHERE name = \(job)")?.int64("last_run_at")
    }
}
