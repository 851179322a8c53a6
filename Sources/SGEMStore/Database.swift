/// A connection lent to one `read` or `write` closure, on the store's thread. Not Sendable:
/// it must not leave the closure.
public final class Database {
    let connection: any StoreConnection

    /// Work to run once the current write job's transaction has committed durably.
    private var afterCommitActions: [@Sendable () -> Void] = []
    /// True while a batched write job runs (its actions wait for the commit).
    private var collectingAfterCommit = false
    /// Ids reserved for the running batch by `reserveID`, per table: handed out in order, the
    /// rest dropped when the batch ends.
    private var reservedIDs: [String: ArraySlice<Int64>] = [:]
    /// How many ids `reserveID` takes from a table's sequence at a time.
    static let idBlock = 32
    /// The identity sequence of each table `reserveID` took ids for, looked up once (asking for
    /// it with every block scanned the catalogue once per id).
    private var sequences: [String: String] = [:]
    /// `runBeforeCommit` statements of the running job, and of the batch's jobs that succeeded.
    private var jobStatements = KeyedStatements()
    private var batchStatements = KeyedStatements()
    /// `ringAfterCommit` payloads by channel (the latest given) of the running job, and of the
    /// batch's jobs that succeeded: one ring per channel after the batch's commit.
    private var jobRings: [String: String] = [:]
    private var batchRings: [String: String] = [:]

    /// Statements by key in the order their keys were first given: the latest maker given for a
    /// key, called with every value given for it.
    private struct KeyedStatements {
        private var keys: [String] = []
        private var makers: [String: ([Int64]) -> SQL] = [:]
        private var values: [String: [Int64]] = [:]

        var isEmpty: Bool { keys.isEmpty }

        mutating func set(_ key: String, values more: [Int64], _ make: @escaping ([Int64]) -> SQL) {
            if makers.updateValue(make, forKey: key) == nil { keys.append(key) }
            values[key, default: []] += more
        }

        mutating func merge(_ other: KeyedStatements) {
            for key in other.keys { if let make = other.makers[key] { set(key, values: other.values[key] ?? [], make) } }
        }

        mutating func removeAll() {
            keys.removeAll(keepingCapacity: true)
            makers.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
        }

        var ordered: [SQL] { keys.compactMap { key in makers[key].map { $0(values[key] ?? []) } } }
    }

    /// The store's doorbells by channel, for `ringAfterCommit`; nil where none rings (readers).
    private let doorbells: (@Sendable (String) -> Doorbell)?

    init(connection: any StoreConnection, doorbells: (@Sendable (String) -> Doorbell)? = nil) {
        self.connection = connection
        self.doorbells = doorbells
    }

    /// Rings the doorbell on `channel` with `payload` once this write has committed (see
    /// `Doorbell`): the other processes on this database — server instances, and the server when
    /// this is a command-line verb — look now rather than at their next poll. Rings of one batch
    /// come to one, with the latest payload given: the writer rings once per channel after the
    /// batch's commit (each write ringing from its own after-commit action raced the doorbell's
    /// thread, and a batch of 21 sends went out as about three NOTIFYs, each waking every other
    /// instance). A failed write's ring is dropped with it. Nothing on SQLite.
    public func ringAfterCommit(channel: String, payload: String) {
        guard let doorbells else { return }
        if collectingAfterCommit { jobRings[channel] = payload } else { doorbells(channel).ring(payload: payload) }
    }

    /// Rings what the batch's writes asked for (the writer, once the batch has committed).
    func ringBatch() {
        guard let doorbells, !batchRings.isEmpty else { return }
        let rings = batchRings
        batchRings.removeAll(keepingCapacity: true)
        for (channel, payload) in rings { doorbells(channel).ring(payload: payload) }
    }

    /// Runs `action` once this write has committed durably — never when it is rolled back or its
    /// batch is lost (a wake-up for readers of the journal, a cache to drop). In a read, or in a
    /// migration that manages its own transactions, it runs at once. Keep it short: it runs on
    /// the writer's thread, before the write's caller resumes.
    public func afterCommit(_ action: @escaping @Sendable () -> Void) {
        if collectingAfterCommit { afterCommitActions.append(action) } else { action() }
    }

    /// Runs `sql` once, just before this write's batch commits — unless a later write of the
    /// same batch gives another statement with the same `key`, which then runs instead. For rows
    /// that many writes of a batch touch and where only the latest value counts (a chat's last
    /// activity, a reader's marker): on PostgreSQL every update of a row writes a new version of
    /// it that the next update of the row in the transaction walks past, so thirty sends to one
    /// chat would cost thirty updates of one row, each slower than the last. Write the statement
    /// so that it cannot move a value backwards (`WHERE col < new`): other statements of the batch
    /// run before it. Dropped with the job when it fails; outside a batched write (a migration, an
    /// exclusive body) it runs at once.
    public func runBeforeCommit(_ sql: SQL, key: String) throws {
        if collectingAfterCommit { jobStatements.set(key, values: []) { _ in sql } } else { try run(sql) }
    }

    /// `runBeforeCommit` for a statement about several of the batch's rows: `make` is called once,
    /// just before the commit, with the `value` of every write of the batch that gave one for `key`
    /// (the ids of the messages a batch posted to one chat, say), in the order they ran; the
    /// latest `make` given for the key is the one called. A failed write's value is dropped with it.
    public func runBeforeCommit(key: String, collecting value: Int64, _ make: @escaping ([Int64]) -> SQL) throws {
        if collectingAfterCommit { jobStatements.set(key, values: [value], make) } else { try run(make([value])) }
    }

    /// The writer starts a job: its actions are collected from now on.
    func beginCollectingAfterCommit() {
        afterCommitActions.removeAll(keepingCapacity: true)
        jobStatements.removeAll()
        jobRings.removeAll(keepingCapacity: true)
        collectingAfterCommit = true
    }

    /// The writer starts a batch: nothing is waiting for its commit yet, and no id is reserved.
    func beginBatch() {
        batchStatements.removeAll()
        batchRings.removeAll(keepingCapacity: true)
        reservedIDs.removeAll(keepingCapacity: true)
    }

    /// On PostgreSQL, in a batched write: a new id for a row of `table` (its identity column
    /// `id`), taken from the table's sequence after the writers' lock, so that it is greater than
    /// every id of the batches before and smaller than those of the batches after, on any
    /// instance. A job that knows its row's id before the row is stored can send the INSERT and
    /// what refers to the row without waiting for the INSERT's answer (`runCounting`). Ids come
    /// `idBlock` at a time, one round trip per block; the ones a batch leaves unused are never
    /// handed out (ids have gaps, as ids of rolled-back rows always had). Nil on SQLite, where an
    /// INSERT's answer costs no round trip, and outside a batched write.
    public func reserveID(in table: String) throws -> Int64? {
        guard dialect == .postgresql, collectingAfterCommit else { return nil }
        if reservedIDs[table]?.isEmpty ?? true {
            let noSequence = StoreError(code: .system, message: "\(table) has no identity sequence to reserve ids from")
            guard let sequence = try identitySequence(of: table) else { throw noSequence }
            let block: [Int64]
            do {
                block = try connection.query("SELECT nextval(CAST(? AS regclass)) AS id FROM generate_series(1, CAST(? AS INTEGER))",
                                             [.text(sequence), .integer(Int64(Self.idBlock))]).compactMap { $0.int64("id") }
            } catch {
                // A schema change may have renamed it: look it up again next time.
                sequences[table] = nil
                throw error
            }
            guard !block.isEmpty else { throw noSequence }
            reservedIDs[table] = block[...]
        }
        return reservedIDs[table]?.popFirst()
    }

    /// The name of `table`'s identity sequence (its column `id`), asked of PostgreSQL once.
    private func identitySequence(of table: String) throws -> String? {
        if let known = sequences[table] { return known }
        let found = try connection.query("SELECT pg_get_serial_sequence(?, 'id') AS seq", [.text(table)]).first?.string("seq")
        sequences[table] = found
        return found
    }

    /// Runs `sql` and reports through the returned count how many rows it changed. Where the
    /// batch's statements run ahead (PostgreSQL, a batch without savepoints) it waits in the
    /// pipeline with no round trip of its own, and the count is known once the batch has run:
    /// after `Store.write` returns. Make what depends on the row conditional in SQL (`WHERE
    /// EXISTS …`) rather than on the count.
    public func runCounting(_ sql: SQL) throws -> RowCount {
        let (text, bindings) = sql.render(connection.dialect)
        let counter = RowCount()
        try connection.sendCounting(text, bindings, into: counter)
        return counter
    }

    /// The running job succeeded: its `runBeforeCommit` statements join the batch's.
    func keepJobStatements() {
        batchStatements.merge(jobStatements)
        jobStatements.removeAll()
        batchRings.merge(jobRings) { _, later in later }
        jobRings.removeAll(keepingCapacity: true)
    }

    /// Runs the batch's `runBeforeCommit` statements (the writer, just before COMMIT), as a job's
    /// are run: on PostgreSQL they wait in the pipeline and go with the COMMIT in one round trip
    /// (`StoreConnection.settleAndCommit`); a failure among them fails the batch as a job's would.
    func runBatchStatements() throws {
        guard !batchStatements.isEmpty else { return }
        let statements = batchStatements.ordered
        batchStatements.removeAll()
        try connection.runGuarded {
            for sql in statements { try run(sql) }
        }
    }

    /// The writer ends a job: the actions it registered (run them after the commit if it stays).
    func endCollectingAfterCommit() -> [@Sendable () -> Void] {
        collectingAfterCommit = false
        defer { afterCommitActions.removeAll(keepingCapacity: true) }
        return afterCommitActions
    }

    /// The SQLite connection underneath, for what only SQLite does (online backup, file checks);
    /// on PostgreSQL an error that says to use PostgreSQL's own tools.
    func sqliteConnection(for operation: String) throws -> Connection {
        guard let sqlite = connection as? Connection else {
            throw StoreError(code: .unsupported, message: "\(operation) works on SQLite only; on PostgreSQL use its own tools (pg_dump, amcheck)")
        }
        return sqlite
    }

    /// Runs one statement with `?` bindings.
    public func execute(_ sql: String, _ bindings: any SQLBindable...) throws {
        try connection.execute(sql, bindings.map(\.sqlValue))
    }

    /// Runs one statement with `?` bindings given as an array.
    public func execute(_ sql: String, bindings: [any SQLBindable]) throws {
        try connection.execute(sql, bindings.map(\.sqlValue))
    }

    /// Runs several statements separated by `;`, without bindings (migrations, schema scripts).
    public func executeScript(_ sql: String) throws {
        try connection.executeScript(sql)
    }

    /// Runs a query and returns every row.
    public func query(_ sql: String, _ bindings: any SQLBindable...) throws -> [Row] {
        try connection.query(sql, bindings.map(\.sqlValue))
    }

    /// Runs a query with bindings given as an array and returns every row.
    public func query(_ sql: String, bindings: [any SQLBindable]) throws -> [Row] {
        try connection.query(sql, bindings.map(\.sqlValue))
    }

    /// The first row of a query, or nil when there is none.
    public func queryOne(_ sql: String, _ bindings: any SQLBindable...) throws -> Row? {
        try connection.query(sql, bindings.map(\.sqlValue)).first
    }

    /// The first row of a query with bindings given as an array, or nil when there is none.
    public func queryOne(_ sql: String, bindings: [any SQLBindable]) throws -> Row? {
        try connection.query(sql, bindings.map(\.sqlValue)).first
    }

    /// The first column of the first row; `.null` when there is no row.
    public func scalar(_ sql: String, _ bindings: any SQLBindable...) throws -> SQLValue {
        try connection.query(sql, bindings.map(\.sqlValue)).first?[0] ?? .null
    }

    /// The first column of the first row with bindings given as an array; `.null` when there is no row.
    public func scalar(_ sql: String, bindings: [any SQLBindable]) throws -> SQLValue {
        try connection.query(sql, bindings.map(\.sqlValue)).first?[0] ?? .null
    }

    /// Runs `body` so that what it overwrites or deletes leaves no old bytes in the file's free
    /// space (SQLite's `secure_delete`). PostgreSQL keeps old row versions until VACUUM whatever
    /// is done here; there, `body` simply runs.
    public func overwritingSecurely<T>(_ body: () throws -> T) throws -> T {
        guard connection is Connection else { return try body() }
        try execute("PRAGMA secure_delete = ON")
        defer { try? execute("PRAGMA secure_delete = OFF") }
        return try body()
    }

    /// The id the most recent INSERT on this connection gave a row with an identity key
    /// (SQLite's rowid; PostgreSQL's `lastval()`); 0 when there is none.
    public var lastInsertRowID: Int64 { (try? connection.lastInsertedID()) ?? 0 }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE. On PostgreSQL a write job's
    /// statements may wait in a pipeline; reading this runs them first, and reports their failure.
    public var changes: Int { get throws { try connection.changes } }
}

@available(*, unavailable, message: "a Database is confined to the store thread running its closure")
extension Database: Sendable {}
