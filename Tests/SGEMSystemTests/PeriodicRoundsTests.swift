import Synchronization
import Testing
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMSystem

/// Periodic jobs on several instances: rounds claimed in `system_job_runs` under the job's lock.
@Suite("Periodic rounds across instances")
struct PeriodicRoundsTests {
    /// A store on `database` with the system module's tables.
    static func migrated(_ database: TestDatabase) async throws -> Store {
        try await database.openMigrated { SystemModule(version: "test").registerMigrations(&$0) }
    }

    @Test("three instances whose job fires every 200 ms run one round per interval between them, never one each",
          .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
    func oneRoundPerIntervalAcrossThree() async throws {
        let database = try TestDatabase(.postgresql)
        let stores = [try await Self.migrated(database), try database.open(), try database.open()]
        let interval: Duration = .milliseconds(200)
        let log = RoundLog()
        let jobs = stores.map { store in
            PeriodicJob(name: "test.round", every: interval, logger: Logger(label: "test"),
                        rounds: LoggingRounds(inner: StoredPeriodicRounds(store: store), log: log)) { log.ran() }
        }
        let running = jobs.map { job in Task { try await job.run() } }
        #expect(await eventually(60) { log.bodies >= 8 })
        for task in running { task.cancel() }
        for task in running { try await task.value }

        // The times rounds were claimed at, by the database's clock.
        let times = log.claims.sorted()
        #expect(log.bodies == times.count, "a round runs when, and only when, it was claimed")
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect(gaps.allSatisfy { $0 >= 200 }, "rounds \(gaps) ms apart: never two within one interval")
        // Every instance's timer fired about once per interval: most of those rounds were refused.
        #expect(log.attempts - times.count >= times.count, "\(log.attempts) attempts for \(times.count) rounds")
        for store in stores { await store.close() }
    }

    @Test("a claim on PostgreSQL: due the first time, not again within the interval, due again after it; a recorded round counts",
          .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
    func claimsOnPostgreSQL() async throws {
        let database = try TestDatabase(.postgresql)
        let first = try await Self.migrated(database)
        let second = try database.open()
        let (a, b) = (StoredPeriodicRounds(store: first), StoredPeriodicRounds(store: second))
        #expect(try await a.claim("test.job", every: .seconds(3600)))
        #expect(try await b.claim("test.job", every: .seconds(3600)) == false)
        #expect(try await a.claim("test.job", every: .seconds(3600)) == false, "not even the instance that ran it")
        #expect(try await b.claim("other.job", every: .seconds(3600)), "each job has its own rounds")
        #expect(try await b.claim("test.job", every: .zero), "due once the interval has passed")
        try await first.write { db in try db.execute("UPDATE system_job_runs SET last_run_at = last_run_at - 7200000") }
        #expect(try await a.claim("test.job", every: .seconds(3600)))
        try await b.record("test.job")
        #expect(try await a.claim("test.job", every: .seconds(3600)) == false, "a round run at once counts as the last")
        await first.close()
        await second.close()
    }

    @Test("on SQLite every round runs, as on one server it always did, and is recorded by the database's clock")
    func sqliteRunsEveryRound() async throws {
        let database = try TestDatabase(.sqlite)
        let store = try await Self.migrated(database)
        let rounds = StoredPeriodicRounds(store: store)
        let first = try #require(try await rounds.claimedAt("test.job", every: .seconds(3600)))
        let second = try #require(try await rounds.claimedAt("test.job", every: .seconds(3600)))
        #expect(try await rounds.claim("test.job", every: .seconds(3600)))
        let now = Timestamp.now().milliseconds
        #expect(abs(first - now) < 60_000, "epoch milliseconds: \(first) against \(now)")
        #expect(second >= first)
        #expect(try await store.read { db in try JobRunRepository.lastRun(of: "test.job", in: db) }.map { $0 >= second } == true)
        await store.close()
    }
}

/// What the instances of a test did: claims asked for, rounds claimed (when), bodies run.
final class RoundLog: Sendable {
    private let state = Mutex<(attempts: Int, claims: [Int64], bodies: Int)>((0, [], 0))
    func attempted() { state.withLock { $0.attempts += 1 } }
    func claimed(at time: Int64) { state.withLock { $0.claims.append(time) } }
    func ran() { state.withLock { $0.bodies += 1 } }
    var attempts: Int { state.withLock { $0.attempts } }
    var claims: [Int64] { state.withLock { $0.claims } }
    var bodies: Int { state.withLock { $0.bodies } }
}

/// The real rounds of one instance, noting each claim in the log.
struct LoggingRounds: PeriodicRounds {
    let inner: StoredPeriodicRounds
    let log: RoundLog

    func claim(_ job: String, every interval: Duration) async throws -> Bool {
        log.attempted()
        guard let at = try await inner.claimedAt(job, every: interval) else { return false }
        log.claimed(at: at)
        return true
    }

    func record(_ job: String) async throws { try await inner.record(job) }
}
