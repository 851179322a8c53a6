#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import Testing

/// The throwaway PostgreSQL that `make test` starts (scripts/pg-throwaway.sh) and exports; nil
/// when the tests run by hand without it. Suites that need PostgreSQL are enabled only when it is
/// set, and `make test` (which CI runs) always sets it; `PostgresGuardTests` fails in CI if not.
let testDatabaseURL: String? = getenv("SGEM_TEST_DATABASE_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

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
