#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMTestSupport
import Testing

/// A fresh schema for one test on the shared throwaway server, dropped with everything in it when
/// released; connections from `connect()` work inside it through `search_path`.
final class PostgresSchema {
    let name: String
    private let admin: PostgresConnection

    init() throws {
        name = "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        admin = try PostgresConnection(url: try #require(testDatabaseURL))
        try admin.execute("CREATE SCHEMA \(name)")
    }

    /// A new connection whose unqualified names resolve in this schema.
    func connect() throws -> PostgresConnection {
        let connection = try PostgresConnection(url: try #require(testDatabaseURL))
        try enter(connection)
        return connection
    }

    /// Points `connection` at this schema (again, after a reconnect).
    func enter(_ connection: PostgresConnection) throws {
        try connection.execute("SET search_path TO \(name)")
    }

    deinit { _ = try? admin.execute("DROP SCHEMA \(name) CASCADE") }
}

/// The error `body` throws, as a `StoreError`; nil when it did not throw one.
func storeError(_ body: () throws -> Void) -> StoreError? {
    do { try body() } catch let error as StoreError { return error } catch { return nil }
    return nil
}

/// The values of each row, in order, for comparing results across backends.
func table(_ rows: [Row]) -> [[SQLValue]] {
    rows.map { row in row.columns.indices.map { row[$0] } }
}
