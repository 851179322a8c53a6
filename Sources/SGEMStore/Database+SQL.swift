/// Statements written as `SQL` values, rendered for SQLite. The same `SQL` runs on a
/// `PostgresConnection` with the PostgreSQL dialect.
extension Database {
    /// The dialect this connection renders `SQL` with.
    public var dialect: SQLDialect { .sqlite }

    /// Runs one statement.
    public func run(_ sql: SQL) throws {
        let (text, bindings) = sql.render(.sqlite)
        try connection.execute(text, bindings)
    }

    /// Runs a query and returns every row.
    public func fetchAll(_ sql: SQL) throws -> [Row] {
        let (text, bindings) = sql.render(.sqlite)
        return try connection.query(text, bindings)
    }

    /// The first row of a query, or nil when there is none.
    public func fetchOne(_ sql: SQL) throws -> Row? {
        try fetchAll(sql).first
    }
}
