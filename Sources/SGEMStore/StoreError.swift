import CSQLite

/// An error from the store: a stable code, a message, and the SQLite details when SQLite failed.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; stable across releases.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable snake_case name, e.g. `invalid_migration_id`.
        public let rawValue: String
        /// A code by name; the static members are the ones the store uses.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// SQLite returned an error; `sqliteCode` holds its extended result code.
        public static let sqlite = Code("sqlite")
        /// The store was closed before or while the operation was queued.
        public static let closed = Code("closed")
        /// A migration failed and was rolled back.
        public static let migration = Code("migration")
        /// An online backup failed.
        public static let backup = Code("backup")
        /// A restore was refused or failed.
        public static let restore = Code("restore")
        /// An operating-system call failed (thread creation, file I/O).
        public static let system = Code("system")
        /// A write closure tried BEGIN, COMMIT, ROLLBACK, SAVEPOINT or RELEASE; the store owns
        /// the transaction. The closure's work was rolled back.
        public static let transactionControl = Code("transaction_control")
        /// The batch transaction a write shared was lost because another write in it failed
        /// (SQLite rolled it back); nothing of this write was stored. Retrying is safe.
        public static let batchAborted = Code("batch_aborted")
        /// No database exists at the path and the store was told not to create one.
        public static let missingDatabase = Code("missing_database")
        /// The file is not an SQLite database (SQLITE_NOTADB), or is encrypted or damaged beyond reading.
        public static let notADatabase = Code("not_a_database")
        /// The file is an SQLite database of some other program (its `application_id` is not sgem's).
        public static let foreignDatabase = Code("foreign_database")
        /// A migration id is malformed or duplicated.
        public static let invalidMigrationID = Code("invalid_migration_id")
        /// The operation exists for another backend only (an SQLite file backup on PostgreSQL).
        public static let unsupported = Code("unsupported")
        /// The database records migrations this binary does not know: a newer release wrote it.
        public static let schemaTooNew = Code("schema_too_new")
        /// PostgreSQL reported an error; `sqlState` holds its SQLSTATE.
        public static let postgres = Code("postgres")
        /// A connection to the database server could not be made (refused, bad URL, authentication).
        public static let connectionFailed = Code("connection_failed")
        /// The connection to the database server broke (terminated backend, server shut down,
        /// network failure); what was in flight did not commit. Reconnect and retry.
        public static let connectionLost = Code("connection_lost")
        /// A row lacked a column a `RowDecodable` type needs, or held the wrong kind of value.
        public static let decoding = Code("decoding")
    }

    /// What went wrong in terms every backend shares, for code that reacts to it (retry, 409…).
    public enum Category: Sendable, Equatable {
        case uniqueViolation
        case foreignKeyViolation
        /// The transaction must be retried (PostgreSQL 40001).
        case serializationFailure
        /// The transaction must be retried (PostgreSQL 40P01).
        case deadlock
        /// A lock was not granted within `lock_timeout` (PostgreSQL 55P03) or SQLite's busy timeout.
        case lockTimeout
        /// The connection broke or could not be made.
        case connectionLost
        /// Anything else.
        case other
    }

    /// What kind of failure this is.
    public let code: Code
    /// SQLite's extended result code, when SQLite reported the failure.
    public let sqliteCode: Int32?
    /// A human sentence: SQLite's own message when it reported the failure.
    public let message: String
    /// The statement that failed, when there is one.
    public let sql: String?
    /// The error this one wraps (for example the one a failing migration threw).
    public let cause: (any Error)?
    /// PostgreSQL's five-character SQLSTATE, when PostgreSQL reported the failure.
    public let sqlState: String?

    /// Creates an error; the store itself fills in the SQLite or PostgreSQL details.
    public init(code: Code, message: String, sqliteCode: Int32? = nil, sql: String? = nil, cause: (any Error)? = nil,
                sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
        self.sql = sql
        self.cause = cause
        self.sqlState = sqlState
    }

    /// The backend-neutral category: from the SQLSTATE on PostgreSQL, the extended result code on SQLite.
    public var category: Category {
        if code == .connectionLost || code == .connectionFailed { return .connectionLost }
        if let sqlState { return Self.category(sqlState: sqlState) }
        guard let sqliteCode else { return .other }
        if isUniqueViolation { return .uniqueViolation }
        if sqliteCode == SQLITE_CONSTRAINT_FOREIGNKEY_CODE { return .foreignKeyViolation }
        if sqliteCode & 0xFF == SQLITE_BUSY || sqliteCode & 0xFF == SQLITE_LOCKED { return .lockTimeout }
        return .other
    }

    /// The category of a PostgreSQL SQLSTATE (Appendix A of its manual).
    public static func category(sqlState: String) -> Category {
        switch sqlState {
        case "23505": .uniqueViolation
        case "23503": .foreignKeyViolation
        case "40001": .serializationFailure
        case "40P01": .deadlock
        case "55P03": .lockTimeout
        // admin_shutdown, crash_shutdown, cannot_connect_now, idle_session_timeout,
        // idle_in_transaction_session_timeout: the server closes the session after these.
        case "57P01", "57P02", "57P03", "57P05", "25P03": .connectionLost
        default: sqlState.hasPrefix("08") ? .connectionLost : .other
        }
    }

    /// True for the SQLITE_CONSTRAINT family (unique, foreign key, check, not null…).
    public var isConstraintViolation: Bool {
        if let sqlState { return sqlState.hasPrefix("23") }
        guard let sqliteCode else { return false }
        return sqliteCode & 0xFF == SQLITE_CONSTRAINT
    }

    /// True when a UNIQUE or PRIMARY KEY constraint failed.
    public var isUniqueViolation: Bool {
        sqliteCode == SQLITE_CONSTRAINT_UNIQUE_CODE || sqliteCode == SQLITE_CONSTRAINT_PRIMARYKEY_CODE
            || sqlState == "23505"
    }

    public var description: String {
        var text = "StoreError(\(code.rawValue)"
        if let sqliteCode { text += ", sqlite \(sqliteCode)" }
        if let sqlState { text += ", sqlstate \(sqlState)" }
        text += "): \(message)"
        if let sql { text += " [sql: \(sql)]" }
        return text
    }

    /// The error SQLite reports on `db` for the result code `rc`.
    static func sqlite(_ rc: Int32, db: OpaquePointer?, sql: String?, context: String? = nil) -> StoreError {
        var code = rc
        var message = String(cString: sqlite3_errstr(rc))
        if let db {
            let extended = sqlite3_extended_errcode(db)
            // The handle's last error describes `rc` only when both name the same primary code.
            if extended & 0xFF == rc & 0xFF {
                code = extended
                message = String(cString: sqlite3_errmsg(db))
            }
        }
        if let context { message = "\(context): \(message)" }
        return StoreError(code: .sqlite, message: message, sqliteCode: code, sql: sql)
    }

    static let closedStore = StoreError(code: .closed, message: "the store is closed")

    static func transactionControlRefused(sql: String?) -> StoreError {
        StoreError(code: .transactionControl,
                   message: "a write closure must not run BEGIN, COMMIT, ROLLBACK, SAVEPOINT or RELEASE: the store commits it; its work was rolled back",
                   sqliteCode: SQLITE_AUTH, sql: sql)
    }

    static func notADatabase(_ path: String, _ error: StoreError) -> StoreError {
        StoreError(code: .notADatabase, message: "\(path) is not an SQLite database: \(error.message)",
                   sqliteCode: error.sqliteCode, sql: error.sql, cause: error)
    }
}

// The extended constraint codes are macros built from shifts, which Swift does not import.
let SQLITE_CONSTRAINT_UNIQUE_CODE: Int32 = SQLITE_CONSTRAINT | (8 << 8)
let SQLITE_CONSTRAINT_PRIMARYKEY_CODE: Int32 = SQLITE_CONSTRAINT | (6 << 8)
let SQLITE_CONSTRAINT_FOREIGNKEY_CODE: Int32 = SQLITE_CONSTRAINT | (3 << 8)
