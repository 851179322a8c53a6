import CSQLite

/// What a file is, as far as the store can tell without changing it.
public enum DatabaseFileKind: Sendable, Equatable, CustomStringConvertible {
    /// Nothing exists at the path.
    case missing
    /// The file is not an SQLite database (SQLITE_NOTADB: text, another format, encrypted).
    case notSQLite
    /// An SQLite database with no schema at all (for example a zero-length file).
    case empty
    /// An SQLite database of another program: tables, but neither sgem's `application_id` nor
    /// its `sgem_migrations` table. `applicationID` is what the file's header holds.
    case foreign(applicationID: Int32)
    /// An sgem database, with the number of migrations it records.
    case sgem(appliedMigrations: Int)

    public var description: String {
        switch self {
        case .missing: "no database"
        case .notSQLite: "not an SQLite database"
        case .empty: "an empty SQLite database"
        case .foreign(let id): "an SQLite database of another program (application_id \(id))"
        case .sgem(let count): "an sgem database (\(count) migrations applied)"
        }
    }
}

extension Store {
    /// The `application_id` in the header of every sgem database ("SGEM" in ASCII), set by `migrate`.
    public static let applicationID: Int32 = 0x5347_454D

    /// Tells what the file at `path` is — missing, not SQLite, empty, another program's, or
    /// sgem's — opening it read-only: nothing is created or changed. Throws `StoreError` only
    /// when the file cannot be read at all (permissions, I/O).
    public static func probe(_ path: String) throws -> DatabaseFileKind {
        guard FileOps.exists(path) else { return .missing }
        let handle = try Connection.open(path, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX)
        defer { sqlite3_close_v2(handle) }
        do {
            let applicationID = try probeQuery(handle, "PRAGMA application_id")
            let hasMigrations = try probeQuery(handle, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sgem_migrations'") == 1
            if applicationID == Int64(Store.applicationID) || (applicationID == 0 && hasMigrations) {
                let applied = hasMigrations ? try probeQuery(handle, "SELECT count(*) FROM sgem_migrations") : 0
                return .sgem(appliedMigrations: Int(applied))
            }
            if applicationID == 0, try probeQuery(handle, "SELECT count(*) FROM sqlite_master") == 0 { return .empty }
            return .foreign(applicationID: Int32(truncatingIfNeeded: applicationID))
        } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_NOTADB }) == true {
            return .notSQLite
        }
    }

    /// The first column of the first row of `sql`, as an integer (0 when there is none).
    private static func probeQuery(_ db: OpaquePointer, _ sql: String) throws -> Int64 {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw StoreError.sqlite(rc, db: db, sql: sql) }
        let prepared = Statement(handle: statement, sql: sql, db: db)
        guard try prepared.step() else { return 0 }
        if case .integer(let value) = prepared.values(count: 1)[0] { return value }
        return 0
    }

    /// `PRAGMA quick_check` problems (the cheap structural check, without index contents);
    /// empty when the database passes. Damage bad enough to stop the check is itself reported.
    public func quickCheck() async throws -> [String] {
        try await onReader { db in
            _ = try db.sqliteConnection(for: "quick_check")
            do {
                return try db.query("PRAGMA quick_check").compactMap { row -> String? in
                    if case .text(let line) = row[0], line != "ok" { return line }
                    return nil
                }
            } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_CORRUPT || $0 & 0xFF == SQLITE_NOTADB }) == true {
                return [error.message]
            }
        }
    }

    /// True when the open database is sgem's: it carries sgem's `application_id` or records
    /// migrations in `sgem_migrations` (databases from before the id was set).
    public func isSgemDatabase() async throws -> Bool {
        if location.isPostgreSQL {
            return try await onReader { db in
                try db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'sgem_migrations'") == .integer(1)
            }
        }
        return try await onReader { db in
            let applicationID = try db.scalar("PRAGMA application_id")
            if applicationID == .integer(Int64(Store.applicationID)) { return true }
            let marker = try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sgem_migrations'")
            return applicationID == .integer(0) && marker == .integer(1)
        }
    }
}

/// What a PostgreSQL database holds in the schema its connections use, as far as the store can
/// tell without changing it.
public enum PostgresDatabaseKind: Sendable, Equatable {
    /// No tables at all: a database made for sgem and not yet migrated.
    case empty
    /// Tables, but no `sgem_migrations`: another program's.
    case foreign(tables: Int)
    /// An sgem database, with the number of migrations it records.
    case sgem(appliedMigrations: Int)
}

extension Store {
    /// Connects to `url` and tells what its current schema holds: nothing, another program's
    /// tables, or sgem's. Throws `connectionFailed` when it cannot connect.
    public static func probe(_ url: PostgresURL) throws -> PostgresDatabaseKind {
        let connection = try PostgresConnection(url: url)
        let hasMigrations = try connection.query("SELECT to_regclass('sgem_migrations') IS NOT NULL AS present").first?.bool("present") ?? false
        if hasMigrations {
            let applied = try connection.query("SELECT count(*) AS n FROM sgem_migrations").first?.int("n") ?? 0
            return .sgem(appliedMigrations: applied)
        }
        let tables = try connection.query("""
            SELECT count(*) AS n FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            """).first?.int("n") ?? 0
        return tables == 0 ? .empty : .foreign(tables: tables)
    }
}
