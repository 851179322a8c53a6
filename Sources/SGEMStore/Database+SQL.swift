/// Statements written as `SQL` values, rendered in the dialect of the store's backend.
extension Database {
    /// The dialect this connection renders `SQL` with.
    public var dialect: SQLDialect { connection.dialect }

    /// Runs one statement.
    public func run(_ sql: SQL) throws {
        let (text, bindings) = sql.render(connection.dialect)
        try connection.execute(text, bindings)
    }

    /// Runs a query and returns every row.
    public func fetchAll(_ sql: SQL) throws -> [Row] {
        let (text, bindings) = sql.render(connection.dialect)
        return try connection.query(text, bindings)
    }

    /// The first row of a query, or nil when there is none.
    public func fetchOne(_ sql: SQL) throws -> Row? {
        try fetchAll(sql).first
    }
}
