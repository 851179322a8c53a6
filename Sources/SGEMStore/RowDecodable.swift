/// A value read from one result row, the one shape repositories decode rows with on every backend:
/// `try db.fetchAll(Notice.self, "SELECT … WHERE id = \(id)")`.
public protocol RowDecodable {
    /// Builds the value from `row`; throws `StoreError.decoding` (through `Row.required`) when a
    /// column it needs is missing or of the wrong kind.
    init(row: Row) throws
}

extension Database {
    /// Every row of a query, decoded as `T`.
    public func fetchAll<T: RowDecodable>(_ type: T.Type, _ sql: SQL) throws -> [T] {
        try fetchAll(sql).map { try T(row: $0) }
    }

    /// The first row of a query decoded as `T`, or nil when there is none.
    public func fetchOne<T: RowDecodable>(_ type: T.Type, _ sql: SQL) throws -> T? {
        try fetchOne(sql).map { try T(row: $0) }
    }

    /// The first column of the first row (`.null` when there is none): counts, ids from `RETURNING`.
    public func fetchValue(_ sql: SQL) throws -> SQLValue {
        try fetchOne(sql)?[0] ?? .null
    }
}

extension Row {
    /// The non-null value of `column` read by `read`, or a decoding error naming the column.
    public func required<T>(_ column: String, _ read: (Row) -> (String) -> T?) throws -> T {
        guard let value = read(self)(column) else {
            throw StoreError(code: .decoding, message: "column \(column) is missing, null or of the wrong kind")
        }
        return value
    }
}
