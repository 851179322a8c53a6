/// A connection lent to one `read` or `write` closure, on the store's thread. Not Sendable:
/// it must not leave the closure.
public final class Database {
    let connection: any StoreConnection

    /// Work to run once the current write job's transaction has committed durably.
    private var afterCommitActions: [@Sendable () -> Void] = []
    /// True while a batched write job runs (its actions wait for the commit).
    private var collectingAfterCommit = false

    init(connection: any StoreConnection) { self.connection = connection }

    /// Runs `action` once this write has committed durably — never when it is rolled back or its
    /// batch is lost (a wake-up for readers of the journal, a cache to drop). In a read, or in a
    /// migration that manages its own transactions, it runs at once. Keep it short: it runs on
    /// the writer's thread, before the write's caller resumes.
    public func afterCommit(_ action: @escaping @Sendable () -> Void) {
        if collectingAfterCommit { afterCommitActions.append(action) } else { action() }
    }

    /// The writer starts a job: its actions are collected from now on.
    func beginCollectingAfterCommit() {
        afterCommitActions.removeAll(keepingCapacity: true)
        collectingAfterCommit = true
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
