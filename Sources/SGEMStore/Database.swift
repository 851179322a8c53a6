/// A connection lent to one `read` or `write` closure, on the store's thread. Not Sendable:
/// it must not leave the closure.
public final class Database {
    let connection: Connection

    init(connection: Connection) { self.connection = connection }

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

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { connection.lastInsertRowID }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    public var changes: Int { connection.changes }
}

@available(*, unavailable, message: "a Database is confined to the store thread running its closure")
extension Database: Sendable {}
