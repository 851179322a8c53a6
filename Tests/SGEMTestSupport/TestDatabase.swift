#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMSupport
import Testing

/// The throwaway PostgreSQL that `make test` starts (scripts/pg-throwaway.sh) and exports; nil
/// when the tests run by hand without it. Suites that need PostgreSQL run only when it is set,
/// and `make test` (which CI runs) always sets it; `PostgresGuardTests` fails in CI if not.
public let testDatabaseURL: String? = getenv("SGEM_TEST_DATABASE_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

/// The backends the store runs on; PostgreSQL only when `make test`'s throwaway server is there.
public enum TestBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgresql

    public var testDescription: String { rawValue }

    /// Every backend this run can reach: the arguments of a test that runs on both.
    public static var available: [TestBackend] { testDatabaseURL == nil ? [.sqlite] : [.sqlite, .postgresql] }
}

/// A fresh database for one test on `backend`: a file in a temporary directory, or a schema of
/// its own on the throwaway PostgreSQL (every connection a store opens enters it through the URL's
/// `options`). Removed when released.
public final class TestDatabase: Sendable {
    public let backend: TestBackend
    public let location: StoreLocation
    /// The temporary directory (the SQLite file's; other files of a test may go there too).
    public let directory: TempDir
    private let schemaName: String?

    public init(_ backend: TestBackend) throws {
        self.backend = backend
        directory = TempDir()
        switch backend {
        case .sqlite:
            schemaName = nil
            location = .sqlite(path: directory.path + "/sgem.db")
        case .postgresql:
            let base = try #require(testDatabaseURL)
            let name = "t_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            let admin = try PostgresConnection(url: base)
            try admin.execute("CREATE SCHEMA \(name)")
            schemaName = name
            let separator = base.contains("?") ? "&" : "?"
            location = .postgresql(try #require(PostgresURL(base + separator + "options=-csearch_path%3D" + name)))
        }
    }

    /// A store on this database.
    public func open(configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> Store {
        var configuration = StoreConfiguration()
        configure(&configuration)
        return try Store(location: location, configuration: configuration, logger: Logger(label: "test-store"), metrics: MetricsRegistry())
    }

    deinit {
        if let schemaName, let base = testDatabaseURL, let admin = try? PostgresConnection(url: base) {
            _ = try? admin.execute("DROP SCHEMA \(schemaName) CASCADE")
        }
        directory.cleanup()
    }
}
