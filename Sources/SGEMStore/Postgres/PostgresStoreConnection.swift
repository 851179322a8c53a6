/// A `PostgresConnection` as the store uses it: the writer's and the readers' connection on
/// PostgreSQL. Statements come with `?` placeholders and are rendered to `$N` (cached); the
/// writer takes the store's advisory lock at the start of every batch; a lost connection is
/// reconnected before the next batch or read, with its session settings set again.
///
/// Round trips are what a serial writer waits on, so the connection pipelines: a batch's BEGIN,
/// lock and `SET CONSTRAINTS`, each job's savepoint and release, a read's BEGIN, and the
/// statements a write job runs without reading rows (`execute`) are sent without waiting and
/// read back with the next statement whose rows are needed, or when the job ends. A job's
/// failure is still its own: what it sent is settled before it is judged, and an error that a
/// job swallowed (`try?`) fails it all the same.
final class PostgresStoreConnection: StoreConnection {
    /// The advisory lock every writer of one database takes for its batch (`pg_advisory_xact_lock`):
    /// one writer at a time across processes and instances, as SQLite's `BEGIN IMMEDIATE` is.
    /// "SGEM" and 1.
    static let writerLockKey: Int64 = 0x5347_454D_0000_0001
    /// The lock migrations run under (session level), so two instances starting together do
    /// not both apply one.
    static let migrationLockKey: Int64 = 0x5347_454D_0000_0002

    let connection: PostgresConnection
    private let settings: StoreConfiguration
    /// A reader's connection: no transaction on it may write, whether `read` opened it or a
    /// statement runs alone (`readAtOnce`).
    private let readOnly: Bool
    private var rendered: [String: String] = [:]
    private var jobRunning = false
    private var refusedTransactionControl = false
    /// The first statement error of the running job, even one its body caught.
    private var jobError: StoreError?
    /// True from a read's BEGIN to its COMMIT or ROLLBACK: its rows-free statements (`SET LOCAL`)
    /// wait in the pipeline too.
    private var readOpen = false
    /// A job's last rows-free statements may stay in the pipeline for the next job's first round
    /// trip (see `deferJobChecks`).
    private var deferringJobChecks = false
    /// The connection's round-trip count when the running batch's lock was sent: any round trip
    /// after it has read the lock's result (`settleWriteLock`).
    private var lockSentAtRoundTrip: Int?

    init(url: PostgresURL, configuration: StoreConfiguration, readOnly: Bool = false) throws {
        connection = try PostgresConnection(url: url)
        settings = configuration
        self.readOnly = readOnly
        try applySessionSettings()
    }

    /// A lock held longer than this fails the statement waiting for it; a session left idle in a
    /// transaction this long is ended by the server, releasing what it held (a hung process
    /// cannot keep the writer's lock).
    private func applySessionSettings() throws {
        try connection.setLockTimeout(milliseconds: settings.busyTimeoutMilliseconds)
        try connection.setIdleInTransactionSessionTimeout(milliseconds: settings.idleInTransactionTimeoutMilliseconds)
        // Short statements only: JIT compiling one whose estimate crosses `jit_above_cost` costs
        // more than running it (130 ms for a search's 15 ms count).
        try connection.execute("SET jit = off")
        if readOnly { try connection.execute("SET default_transaction_read_only = on") }
    }

    private func reconnectIfLost() throws {
        guard !connection.isConnected else { return }
        readOpen = false
        try connection.reconnect()
        try applySessionSettings()
    }

    var dialect: SQLDialect { .postgresql }

    private func render(_ sql: String) throws -> String {
        if jobRunning, Self.isTransactionControl(sql) {
            refusedTransactionControl = true
            throw StoreError.transactionControlRefused(sql: sql)
        }
        if let text = rendered[sql] { return text }
        let text = Placeholders.postgres(sql)
        if rendered.count >= 512 { rendered.removeAll(keepingCapacity: true) }
        rendered[sql] = text
        return text
    }

    /// BEGIN, START, COMMIT, END, ROLLBACK, ABORT, SAVEPOINT, RELEASE, PREPARE (TRANSACTION):
    /// the statements a write job may not run.
    static func isTransactionControl(_ sql: String) -> Bool {
        let word = sql.utf8.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0x28 }
            .prefix { ($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x7A }
        let keyword = String(decoding: word, as: UTF8.self).uppercased()
        return ["BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "PREPARE"].contains(keyword)
    }

    func execute(_ sql: String, _ bindings: [SQLValue]) throws {
        let text = try render(sql)
        // A job's or a read's rows-free statements wait in the pipeline for the next round trip;
        // the store's own COMMIT and ROLLBACK do not.
        let ending = !jobRunning && Self.isTransactionControl(sql)
        if ending { readOpen = false }
        try settled {
            if jobRunning || (readOpen && !ending) {
                try connection.send(text, bindings, control: false)
            } else {
                try connection.execute(text, bindings)
            }
        }
    }

    @discardableResult
    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [Row] {
        let text = try render(sql)
        return try settled { try connection.query(text, bindings) }
    }

    func executeScript(_ sql: String) throws {
        if jobRunning, Self.isTransactionControl(sql) {
            refusedTransactionControl = true
            throw StoreError.transactionControlRefused(sql: sql)
        }
        try settled { try connection.executeScript(sql) }
    }

    /// Runs `body`; a pipelined statement's failure comes out as its `StoreError`. When it was a
    /// control statement (BEGIN, the lock, a savepoint) the transaction is rolled back whole, so
    /// the writer fails every job of the batch rather than keep work it cannot vouch for. During
    /// a job the first error is kept, so that the job fails even when its body caught it.
    @discardableResult
    private func settled<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let failure as PostgresPipelineFailure {
            if failure.control, connection.isConnected, connection.isInTransaction { try? connection.rollback() }
            if jobRunning, jobError == nil { jobError = failure.error }
            throw failure.error
        } catch let error as StoreError {
            if jobRunning, jobError == nil { jobError = error }
            throw error
        }
    }

    var isInTransaction: Bool { connection.isInTransaction }

    func lastInsertedID() throws -> Int64 {
        guard let id = try query("SELECT lastval()", []).first?.int64(at: 0) else {
            throw StoreError(code: .postgres, message: "no identity value was generated in this session")
        }
        return id
    }

    var changes: Int {
        get throws {
            try settled { try connection.flushPipeline() }
            return connection.lastChangedRows
        }
    }

    var isUsable: Bool { connection.isConnected }

    /// BEGIN, the writers' advisory lock and `SET CONSTRAINTS ALL IMMEDIATE`, sent ahead of the
    /// first job's first statement (a lock timeout fails that job and puts the rest back).
    func beginWriteBatch() throws {
        try reconnectIfLost()
        try settled {
            try connection.send("BEGIN ISOLATION LEVEL READ COMMITTED", [], control: true)
            try connection.send("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(Self.writerLockKey)], control: true)
            // Constraints declared deferrable are checked per statement, so a job that breaks
            // one fails alone (as SQLite's deferred foreign keys are checked per job).
            try connection.send("SET CONSTRAINTS ALL IMMEDIATE", [], control: true)
        }
        lockSentAtRoundTrip = connection.roundTrips
    }

    /// The batch's first job usually reads rows (an id block, a member list): that round trip
    /// carried the lock, so there is nothing to wait for; one less round trip under the lock.
    func settleWriteLock() throws {
        if let sent = lockSentAtRoundTrip, connection.roundTrips > sent, connection.isInTransaction { return }
        try settleJobs()
    }

    /// Every instance on the database takes the writers' advisory lock.
    var writeLockIsShared: Bool { true }

    /// A savepoint is a subtransaction here: two statements, an id, a multixact for each row a
    /// later job locks again. Most batches have no failing job and need none.
    var prefersBatchesWithoutSavepoints: Bool { true }

    func beginJob() throws {
        try settled { try connection.send("SAVEPOINT sgem_job", [], control: true) }
    }

    func releaseJob() throws {
        try settled { try connection.send("RELEASE sgem_job", [], control: true) }
    }

    func rollbackJob() throws {
        try settled {
            try connection.send("ROLLBACK TO sgem_job", [], control: true)
            try connection.send("RELEASE sgem_job", [], control: true)
        }
    }

    func runGuarded<T>(_ body: () throws -> T) throws -> T {
        jobRunning = true
        refusedTransactionControl = false
        jobError = nil
        let value: T
        do {
            value = try body()
        } catch {
            // What the job sent still runs (its savepoint undoes it); read it back, unjudged.
            jobRunning = false
            _ = try? settled { try connection.flushPipeline() }
            throw error
        }
        defer { jobRunning = false }
        if deferringJobChecks {
            // Its statements go to the server now, which runs them while the writer prepares the
            // next job's; their results are read with the next round trip.
            try settled { try connection.pushPipeline() }
        } else {
            try settled { try connection.flushPipeline() }
        }
        if refusedTransactionControl { throw StoreError.transactionControlRefused(sql: nil) }
        if let jobError { throw jobError }
        return value
    }

    func checkJobConstraints() throws {}

    func deferJobChecks(_ deferring: Bool) { deferringJobChecks = deferring }

    func settleJobs() throws {
        try settled { try connection.flushPipeline() }
    }

    /// The COMMIT rides at the end of the pipeline: when a statement before it fails, the server
    /// skips it and the transaction stays open (aborted) for the writer's ROLLBACK.
    func settleAndCommit() throws {
        guard connection.hasPipelinedStatements else {
            do { try execute("COMMIT") } catch { throw CommitFailure(error: error) }
            return
        }
        do {
            try connection.send("COMMIT", [], control: false)
            try connection.flushPipeline()
        } catch let failure as PostgresPipelineFailure {
            if failure.error.sql == "COMMIT" || !connection.isConnected || !connection.isInTransaction {
                throw CommitFailure(error: failure.error)
            }
            throw failure.error
        } catch {
            throw CommitFailure(error: error)
        }
    }

    func sendCounting(_ sql: String, _ bindings: [SQLValue], into counter: RowCount) throws {
        let text = try render(sql)
        try settled {
            if jobRunning {
                try connection.send(text, bindings, control: false, counter: counter)
            } else {
                try connection.execute(text, bindings)
                counter.set(connection.lastChangedRows)
            }
        }
    }

    /// BEGIN (snapshot, read only), sent with the read's first statement.
    func beginRead() throws {
        try reconnectIfLost()
        try settled { try connection.send("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", [], control: true) }
        readOpen = true
    }

    func close() {
        // The connection itself closes when this object goes, with the thread that owned it.
        _ = try? connection.flushPipeline()
        if connection.isConnected && connection.isInTransaction { try? connection.rollback() }
    }
}
