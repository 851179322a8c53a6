/// A `PostgresConnection` as the store uses it: the writer's and the readers' connection on
/// PostgreSQL. Statements come with `?` placeholders and are rendered to `$N` (cached); the
/// writer takes the store's advisory lock at the start of every batch; a lost connection is
/// reconnected before the next batch or read, with its session settings set again.
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
    private var rendered: [String: String] = [:]
    private var jobRunning = false
    private var refusedTransactionControl = false

    init(url: PostgresURL, configuration: StoreConfiguration) throws {
        connection = try PostgresConnection(url: url)
        settings = configuration
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
    }

    private func reconnectIfLost() throws {
        guard !connection.isConnected else { return }
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
        try connection.execute(try render(sql), bindings)
    }

    @discardableResult
    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [Row] {
        try connection.query(try render(sql), bindings)
    }

    func executeScript(_ sql: String) throws {
        if jobRunning, Self.isTransactionControl(sql) {
            refusedTransactionControl = true
            throw StoreError.transactionControlRefused(sql: sql)
        }
        try connection.executeScript(sql)
    }

    var isInTransaction: Bool { connection.isInTransaction }

    func lastInsertedID() throws -> Int64 {
        guard let id = try connection.query("SELECT lastval()").first?.int64(at: 0) else {
            throw StoreError(code: .postgres, message: "no identity value was generated in this session")
        }
        return id
    }

    var changes: Int { connection.lastChangedRows }

    var isUsable: Bool { connection.isConnected }

    func beginWriteBatch() throws {
        try reconnectIfLost()
        try connection.begin(.readCommitted)
        do {
            try connection.advisoryTransactionLock(Self.writerLockKey)
            // Constraints declared deferrable are checked per statement, so a job that breaks
            // one fails alone (as SQLite's deferred foreign keys are checked per job).
            try connection.execute("SET CONSTRAINTS ALL IMMEDIATE")
        } catch {
            if connection.isConnected { try? connection.rollback() }
            throw error
        }
    }

    func runGuarded<T>(_ body: () throws -> T) throws -> T {
        jobRunning = true
        refusedTransactionControl = false
        defer { jobRunning = false }
        let value = try body()
        if refusedTransactionControl { throw StoreError.transactionControlRefused(sql: nil) }
        return value
    }

    func checkJobConstraints() throws {}

    func beginRead() throws {
        try reconnectIfLost()
        try connection.begin(.repeatableRead, readOnly: true)
    }

    func close() {
        // The connection itself closes when this object goes, with the thread that owned it.
        if connection.isConnected && connection.isInTransaction { try? connection.rollback() }
    }
}
