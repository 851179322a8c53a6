#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMSupport

/// The throwaway PostgreSQL that `make test` starts (scripts/pg-throwaway.sh) and exports; nil
/// when the tests run by hand without it. Suites that need PostgreSQL run only when it is set,
/// and `make test` (which CI runs) always sets it; `PostgresGuardTests` fails in CI if not.
public let testDatabaseURL: String? = getenv("SGEM_TEST_DATABASE_URL").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

/// The backends the store runs on; PostgreSQL only when `make test`'s throwaway server is there.
public enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgresql

    public var description: String { rawValue }

    /// The backend this run's servers and commands use: `SGEM_TEST_BACKEND=postgresql` (with
    /// `SGEM_TEST_DATABASE_URL`) runs every suite built on the harness (`Office`, the modules'
    /// servers, `sgem(dir, …)`) on PostgreSQL; SQLite otherwise. `make test` runs those suites
    /// once each way.
    public static let current: TestBackend = {
        let chosen = getenv("SGEM_TEST_BACKEND").map { String(cString: $0) } ?? ""
        return chosen == "postgresql" && testDatabaseURL != nil ? .postgresql : .sqlite
    }()

    /// Every backend this run can reach: the arguments of a test that runs on both. In the
    /// PostgreSQL pass (`current` is PostgreSQL) only PostgreSQL: the SQLite pass covered SQLite.
    public static var available: [TestBackend] {
        if current == .postgresql { return [.postgresql] }
        return testDatabaseURL == nil ? [.sqlite] : [.sqlite, .postgresql]
    }
}

/// A fresh database for one test on `backend`: a file in a temporary directory, or a database of
/// its own on the throwaway PostgreSQL. Removed when released.
public final class TestDatabase: Sendable {
    public let backend: TestBackend
    public let location: StoreLocation
    /// The temporary directory (the SQLite file's; other files of a test may go there too).
    public let directory: TempDir

    public init(_ backend: TestBackend) throws {
        self.backend = backend
        directory = TempDir()
        switch backend {
        case .sqlite:
            location = .sqlite(path: directory.path + "/sgem.db")
        case .postgresql:
            guard let url = PostgresURL(try directory.postgresURL()) else { throw TestDatabaseError("SGEM_TEST_DATABASE_URL is not a PostgreSQL URL") }
            location = .postgresql(url)
        }
    }

    /// A store on this database.
    public func open(configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> Store {
        var configuration = StoreConfiguration()
        configure(&configuration)
        return try Store(location: location, configuration: configuration, logger: Logger(label: "test-store"), metrics: MetricsRegistry())
    }

    /// A store on this database with the migrations `register` lists applied.
    public func openMigrated(_ register: (inout MigrationList) -> Void) async throws -> Store {
        let store = try open()
        var migrations = MigrationList()
        register(&migrations)
        _ = try await store.migrate(migrations)
        return store
    }

    deinit { directory.cleanup() }
}

extension TempDir {
    /// The database of this directory's test on the throwaway PostgreSQL, made on first use and
    /// dropped by `cleanup()`: named after the directory, so a test's servers, commands and stores
    /// given the same directory share it.
    public var postgresDatabaseName: String {
        let suffix = path.split(separator: "/").last.map(String.init) ?? path
        return "sgem_t_" + suffix.utf8.map { String($0, radix: 16) }.joined()
    }

    /// The URL of this directory's PostgreSQL database, creating the database if needed.
    public func postgresURL() throws -> String {
        guard let base = testDatabaseURL else { throw TestDatabaseError("SGEM_TEST_DATABASE_URL is not set") }
        let name = postgresDatabaseName
        let admin = try PostgresConnection(url: base)
        if try admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [.text(name)]).isEmpty {
            do {
                _ = try admin.execute("CREATE DATABASE \(name)")
            } catch let error as StoreError where error.sqlState == "42P04" {
                // Made meanwhile by another call for the same directory.
            }
        }
        return replacingDatabase(in: base, with: name)
    }

    /// The settings that put a server or command of this test on the run's backend (none for SQLite).
    public var storageSettings: [String: String] {
        guard TestBackend.current == .postgresql else { return [:] }
        do { return ["database-url": try postgresURL()] } catch { fatalError("cannot make the test's PostgreSQL database: \(error)") }
    }

    /// Where a store of this test lives on the run's backend: `sgem.db` in the directory, or its
    /// PostgreSQL database.
    public var storeLocation: StoreLocation {
        guard TestBackend.current == .postgresql else { return .sqlite(path: path + "/sgem.db") }
        do {
            guard let url = PostgresURL(try postgresURL()) else { fatalError("SGEM_TEST_DATABASE_URL is not a PostgreSQL URL") }
            return .postgresql(url)
        } catch {
            fatalError("cannot make the test's PostgreSQL database: \(error)")
        }
    }

    /// The same as command-line flags.
    public var storageFlags: [String] { storageSettings.flatMap { ["--" + $0.key, $0.value] } }

    /// Drops this directory's PostgreSQL database if one was made.
    func dropPostgresDatabase() {
        guard let base = testDatabaseURL, let admin = try? PostgresConnection(url: base) else { return }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \(postgresDatabaseName) WITH (FORCE)")
    }
}

/// `base` (`postgresql://user@host/db?query`) naming database `name` instead.
func replacingDatabase(in base: String, with name: String) -> String {
    let parts = base.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    var head = String(parts[0])
    // The path starts at the first "/" after "scheme://".
    let scheme = head.split(separator: ":", maxSplits: 1).first.map { $0.count + 3 } ?? 0
    let authority = head.dropFirst(scheme)
    if let slash = authority.firstIndex(of: "/") {
        head = String(head[..<slash]) + "/" + name
    } else {
        head += "/" + name
    }
    return parts.count > 1 ? head + "?" + parts[1] : head
}

/// Why a test database could not be made.
public struct TestDatabaseError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
