/// What the store needs of a backend's connection: the seam under `Store` and `Database`.
/// SQLite's `Connection` and PostgreSQL's `PostgresStoreConnection` implement it; the writer
/// loop, the readers, migrations and every repository (through `Database`) speak only to this.
///
/// Statements arrive in the store's one placeholder form — `?` (or `?N`, numbered) — and each
/// backend renders them its own way. A connection is confined to the one thread that uses it.
protocol StoreConnection: AnyObject {
    /// How `SQL` values render on this connection.
    var dialect: SQLDialect { get }

    /// Runs one statement with `bindings`, ignoring any rows.
    func execute(_ sql: String, _ bindings: [SQLValue]) throws

    /// Runs one statement with `bindings` and returns its rows.
    @discardableResult
    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [Row]

    /// Runs several statements separated by `;`, without bindings (schema scripts).
    func executeScript(_ sql: String) throws

    /// True while a transaction is open.
    var isInTransaction: Bool { get }

    /// The id the most recent INSERT into a table with an identity key received.
    func lastInsertedID() throws -> Int64

    /// Rows changed by the most recent INSERT, UPDATE or DELETE (on PostgreSQL, once what was
    /// pipelined has run: it can fail).
    var changes: Int { get throws }

    // MARK: The writer

    /// Opens the writer's batch transaction: exclusive among writers (SQLite's `BEGIN IMMEDIATE`;
    /// on PostgreSQL an advisory lock taken first thing, so check-then-write rules hold across
    /// processes and ids become visible in commit order). Reconnects a lost connection first.
    func beginWriteBatch() throws

    /// True when other processes take the writers' lock too (PostgreSQL), so that a batch may
    /// wait for it: the writer then takes in the writes queued meanwhile.
    var writeLockIsShared: Bool { get }

    /// Runs a write job's body with transaction control refused (the store owns the transaction).
    /// Everything the body sent has run, and succeeded, when it returns.
    func runGuarded<T>(_ body: () throws -> T) throws -> T

    /// True when a batch should first run without a savepoint per job (rolled back and run again
    /// with them when one fails): where savepoints are expensive (PostgreSQL's subtransactions).
    var prefersBatchesWithoutSavepoints: Bool { get }

    /// While on, a job may end with its last rows-free statements not yet run (PostgreSQL's
    /// pipeline): they go with the next job's first round trip, and a failure among them fails
    /// whichever job is running then, or `settleJobs`. For batches without savepoints, where any
    /// failure runs the whole batch again with them.
    func deferJobChecks(_ deferring: Bool)

    /// Runs what the batch's jobs left waiting; throws the first failure among it.
    func settleJobs() throws

    /// Returns once the writers' lock that `beginWriteBatch` asked for is known to be held: at
    /// once when a round trip since has already run past it (the batch's first job read rows),
    /// otherwise after `settleJobs`. Throws what `settleJobs` throws.
    func settleWriteLock() throws

    /// Runs what the batch's jobs left waiting and commits — on PostgreSQL in the same round
    /// trip, so the writers' lock is let go one round trip sooner. A failure among the waiting
    /// statements comes out as it is: the COMMIT did not run and the transaction is still open.
    /// When the COMMIT itself failed, or its outcome is unknown (the connection broke), throws
    /// `CommitFailure`: nothing may be run again.
    func settleAndCommit() throws

    /// Sends a statement whose rows-changed count `counter` receives once it has run; where
    /// nothing runs ahead, runs it at once.
    func sendCounting(_ sql: String, _ bindings: [SQLValue], into counter: RowCount) throws

    /// A job starts: `SAVEPOINT sgem_job`.
    func beginJob() throws

    /// A job's work stays: `RELEASE sgem_job`.
    func releaseJob() throws

    /// A job failed: `ROLLBACK TO sgem_job`, then `RELEASE sgem_job`.
    func rollbackJob() throws

    /// After a job ran: an error when it left a constraint violation that would fail the COMMIT
    /// of the whole batch (SQLite's deferred foreign keys), so that job alone is rolled back.
    func checkJobConstraints() throws

    /// True when the connection can still be used (false after the server went away).
    var isUsable: Bool { get }

    // MARK: Readers

    /// Opens a read-only snapshot transaction for a multi-statement read.
    func beginRead() throws

    /// Finalizes what it holds and closes.
    func close()
}

extension StoreConnection {
    var prefersBatchesWithoutSavepoints: Bool { false }

    var writeLockIsShared: Bool { false }

    func deferJobChecks(_ deferring: Bool) {}

    func settleJobs() throws {}

    func settleWriteLock() throws { try settleJobs() }

    func settleAndCommit() throws {
        try settleJobs()
        do { try execute("COMMIT") } catch { throw CommitFailure(error: error) }
    }

    func sendCounting(_ sql: String, _ bindings: [SQLValue], into counter: RowCount) throws {
        try execute(sql, bindings)
        counter.set(try changes)
    }

    func beginJob() throws { try execute("SAVEPOINT sgem_job") }

    func releaseJob() throws { try execute("RELEASE sgem_job") }

    func rollbackJob() throws {
        try execute("ROLLBACK TO sgem_job")
        try execute("RELEASE sgem_job")
    }

    /// Runs one statement without bindings.
    func execute(_ sql: String) throws { try execute(sql, []) }

    /// The first column of the first row of `sql`; `.null` when there is none.
    func scalar(_ sql: String, _ bindings: [SQLValue] = []) throws -> SQLValue {
        try query(sql, bindings).first?[0] ?? .null
    }
}

/// Where a store keeps its data: an SQLite file (the default) or a PostgreSQL database.
public enum StoreLocation: Sendable, CustomStringConvertible {
    case sqlite(path: String)
    case postgresql(PostgresURL)

    /// Reads `--database-url`: `sqlite:PATH` (also `sqlite://PATH`) or a libpq URI
    /// (`postgresql://…`, `postgres://…`); nil for anything else.
    public init?(databaseURL text: String) {
        if let url = PostgresURL(text) {
            self = .postgresql(url)
        } else if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path.removeFirst(2) }
            guard !path.isEmpty else { return nil }
            self = .sqlite(path: path)
        } else {
            return nil
        }
    }

    /// The file's path, or the URL with its password masked: safe for logs.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgresql(let url): url.description
        }
    }

    /// True for PostgreSQL.
    public var isPostgreSQL: Bool {
        if case .postgresql = self { return true }
        return false
    }
}

/// The batch's COMMIT failed, or its outcome is unknown: no job of the batch may run again.
struct CommitFailure: Error {
    let error: any Error
}
