/// Transactions, savepoints, advisory locks and session timeouts.
extension PostgresConnection {
    /// How much a transaction sees of others running beside it.
    public enum IsolationLevel: String, Sendable {
        case readCommitted = "READ COMMITTED"
        case repeatableRead = "REPEATABLE READ"
        case serializable = "SERIALIZABLE"
    }

    /// `BEGIN ISOLATION LEVEL … [READ ONLY]`.
    public func begin(_ isolation: IsolationLevel = .readCommitted, readOnly: Bool = false) throws {
        try execute("BEGIN ISOLATION LEVEL \(isolation.rawValue)" + (readOnly ? " READ ONLY" : ""))
    }

    /// `COMMIT`; a deferred failure (serialization, deferred constraint) throws.
    public func commit() throws { try execute("COMMIT") }

    /// `ROLLBACK`.
    public func rollback() throws { try execute("ROLLBACK") }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    @discardableResult
    public func transaction<T>(_ isolation: IsolationLevel = .readCommitted, readOnly: Bool = false,
                               _ body: (PostgresConnection) throws -> T) throws -> T {
        try begin(isolation, readOnly: readOnly)
        do {
            let value = try body(self)
            try commit()
            return value
        } catch {
            // A lost connection has nothing left to roll back; the first error is the one to report.
            if isConnected { try? rollback() }
            throw error
        }
    }

    /// `SAVEPOINT name` (a plain identifier: letters, digits, underscores).
    public func savepoint(_ name: String) throws { try execute("SAVEPOINT \(try Self.savepointName(name))") }

    /// `RELEASE SAVEPOINT name`: keeps what was done since the savepoint.
    public func releaseSavepoint(_ name: String) throws { try execute("RELEASE SAVEPOINT \(try Self.savepointName(name))") }

    /// `ROLLBACK TO SAVEPOINT name`: undoes what was done since the savepoint, and clears an
    /// aborted transaction's error state.
    public func rollbackToSavepoint(_ name: String) throws {
        try execute("ROLLBACK TO SAVEPOINT \(try Self.savepointName(name))")
    }

    private static func savepointName(_ name: String) throws -> String {
        let valid = !name.isEmpty && name.utf8.count <= 63 && name.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: "_")
        } && !(name.utf8.first! >= UInt8(ascii: "0") && name.utf8.first! <= UInt8(ascii: "9"))
        guard valid else { throw StoreError(code: .postgres, message: "invalid savepoint name \"\(name)\"") }
        return name
    }

    /// Waits for the transaction-level advisory lock `key` (`pg_advisory_xact_lock`), held until
    /// COMMIT or ROLLBACK; `lock_timeout` bounds the wait (then a `lockTimeout` error).
    public func advisoryTransactionLock(_ key: Int64) throws {
        try query("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(key)])
    }

    /// Takes the transaction-level advisory lock `key` if it is free; false when another holds it.
    public func tryAdvisoryTransactionLock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_try_advisory_xact_lock($1::bigint) AS taken", [.integer(key)]).first?.bool("taken") == true
    }

    /// `SET lock_timeout`: a statement waiting longer than this for a lock fails with `lockTimeout`
    /// (0 waits for ever).
    public func setLockTimeout(milliseconds: Int) throws {
        try execute("SET lock_timeout = \(max(0, milliseconds))")
    }

    /// `SET idle_in_transaction_session_timeout`: the server ends a session left idle inside a
    /// transaction this long, releasing its locks (0 never).
    public func setIdleInTransactionSessionTimeout(milliseconds: Int) throws {
        try execute("SET idle_in_transaction_session_timeout = \(max(0, milliseconds))")
    }
}
