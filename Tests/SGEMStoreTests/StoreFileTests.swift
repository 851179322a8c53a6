#if canImport(Glibc)
import Glibc
#endif
@testable import SGEMStore
import SGEMSupport
import Testing

/// Opening only what exists, refusing what is not SQLite, and telling sgem's databases apart.
@Suite struct StoreFileTests {
    private static func writeFile(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    private static func readFile(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += chunk[0..<n]
        }
    }

    private static let sgemMigrations: MigrationList = {
        var list = MigrationList()
        list.add("test.001_create", sql: "CREATE TABLE t (n INTEGER)")
        return list
    }()

    @Test func openingWithoutCreateRefusesAMissingFileAndCreatesNothing() throws {
        let dir = TemporaryDirectory()
        let refused = #expect(throws: StoreError.self) { try makeStore(dir, name: "typo.db") { $0.createIfMissing = false } }
        #expect(refused?.code == .missingDatabase)
        #expect(refused?.message.contains(dir.file("typo.db")) == true)
        #expect(!fileExists(dir.file("typo.db")))
        #expect(!fileExists(dir.file("typo.db-wal")))
    }

    @Test func openingWithoutCreateOpensAnExistingDatabase() async throws {
        let dir = TemporaryDirectory()
        let first = try makeStore(dir)
        _ = try await first.migrate(Self.sgemMigrations)
        try await first.write { try $0.execute("INSERT INTO t (n) VALUES (7)") }
        await first.close()
        let again = try makeStore(dir) { $0.createIfMissing = false }
        #expect(try await again.read { try $0.scalar("SELECT n FROM t") } == .integer(7))
        await again.close()
    }

    @Test(arguments: [true, false])
    func aFileThatIsNotSQLiteIsRefusedUntouched(createIfMissing: Bool) throws {
        let dir = TemporaryDirectory()
        let path = dir.file("notes.db")
        let text = Array(String(repeating: "not a database, just some notes\n", count: 200).utf8)
        Self.writeFile(path, text)
        let refused = #expect(throws: StoreError.self) { try makeStore(dir, name: "notes.db") { $0.createIfMissing = createIfMissing } }
        #expect(refused?.code == .notADatabase)
        #expect(refused?.sqliteCode == 26)   // SQLITE_NOTADB
        #expect(refused?.message.contains(path) == true)
        #expect(Self.readFile(path) == text)
        #expect(try Store.probe(path) == .notSQLite)
    }

    @Test func probeTellsTheKindsOfFileApartWithoutChangingThem() async throws {
        let dir = TemporaryDirectory()
        #expect(try Store.probe(dir.file("none.db")) == .missing)
        #expect(!fileExists(dir.file("none.db")))

        Self.writeFile(dir.file("zero.db"), [])
        #expect(try Store.probe(dir.file("zero.db")) == .empty)
        #expect(Self.readFile(dir.file("zero.db")).isEmpty)

        let other = try makeStore(dir, name: "other.db")
        try await other.write { try $0.execute("CREATE TABLE notes (body TEXT)") }
        await other.close()
        #expect(try Store.probe(dir.file("other.db")) == .foreign(applicationID: 0))

        let tagged = try makeStore(dir, name: "tagged.db")
        try await tagged.write { try $0.execute("PRAGMA application_id = 42") }
        #expect(try await tagged.isSgemDatabase() == false)
        let refused = await #expect(throws: StoreError.self) { try await tagged.migrate(Self.sgemMigrations) }
        #expect(refused?.code == .foreignDatabase)
        await tagged.close()
        #expect(try Store.probe(dir.file("tagged.db")) == .foreign(applicationID: 42))

        let sgem = try makeStore(dir, name: "sgem.db")
        #expect(try await sgem.isSgemDatabase() == false)
        _ = try await sgem.migrate(Self.sgemMigrations)
        #expect(try await sgem.isSgemDatabase() == true)
        #expect(try await sgem.read { try $0.scalar("PRAGMA application_id") } == .integer(Int64(Store.applicationID)))
        #expect(try await sgem.quickCheck() == [])
        await sgem.close()
        #expect(try Store.probe(dir.file("sgem.db")) == .sgem(appliedMigrations: 1))
    }

    @Test func aDatabaseFromBeforeTheApplicationIDGetsItOnItsNextMigrate() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        _ = try await store.migrate(Self.sgemMigrations)
        // What an older release left: the migrations table, no application_id.
        try await store.write { try $0.execute("PRAGMA application_id = 0") }
        #expect(try await store.isSgemDatabase() == true)
        await store.close()
        #expect(try Store.probe(dir.file("test.db")) == .sgem(appliedMigrations: 1))

        let reopened = try makeStore(dir)
        #expect(try await reopened.migrate(Self.sgemMigrations) == [])
        #expect(try await reopened.read { try $0.scalar("PRAGMA application_id") } == .integer(Int64(Store.applicationID)))
        await reopened.close()
    }
}
