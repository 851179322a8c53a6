#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMSupport
import Testing

@Suite struct BackupTests {
    private static func seed(_ store: Store, rows: Int) async throws {
        var list = MigrationList()
        list.add("files.001_create", sql: """
            CREATE TABLE files (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, body BLOB NOT NULL);
            CREATE INDEX files_body ON files (body);
            """)
        _ = try await store.migrate(list)
        try await store.write { db in
            for i in 0..<rows {
                try db.execute("INSERT INTO files (name, body) VALUES (?, ?)", "file-\(i)", Crypto.randomBytes(300))
            }
        }
    }

    private static func snapshot(_ store: Store) async throws -> [Row] {
        try await store.read { try $0.query("SELECT id, name, body FROM files ORDER BY id") }
    }

    @Test func backupWhileWritingThenRestore() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await Self.seed(store, rows: 2000)
        let backupPath = dir.file("backup.db")
        // Writers keep committing while the backup copies a snapshot.
        async let writes: Void = withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask { try await store.write { try $0.execute("INSERT INTO files (name, body) VALUES (?, ?)", "late-\(i)", [UInt8(i)]) } }
            }
            try await group.waitForAll()
        }
        try await store.backup(to: backupPath)
        try await writes
        #expect(fileExists(backupPath))
        #expect(!fileExists(backupPath + ".tmp"))

        // The copy holds the seed, maybe some of the late rows, and is consistent.
        let copy = try makeStore(dir, name: "backup.db")
        #expect(try await copy.integrityCheck() == [])
        let copied = try await copy.read { try $0.scalar("SELECT count(*) FROM files WHERE name LIKE 'file-%'") }
        #expect(copied == .integer(2000))
        await copy.close()

        let original = try await Self.snapshot(store)
        let restoredRows = try await store.read { try $0.scalar("SELECT count(*) FROM files") }
        #expect(restoredRows == .integer(2050))
        try await store.backup(to: backupPath)   // replaces the previous backup
        await store.close()

        // Restore over a different database with a stale WAL lying around.
        let target = dir.file("target.db")
        let other = try makeStore(dir, name: "target.db")
        try await other.write { try $0.execute("CREATE TABLE unrelated (x)") }
        await other.close()
        let stale = open(target + "-wal", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        #expect(stale >= 0)
        _ = write(stale, "garbage", 7)
        close(stale)

        try Store.restore(from: backupPath, to: target)
        let restored = try makeStore(dir, name: "target.db")
        #expect(try await restored.integrityCheck() == [])
        #expect(try await restored.appliedMigrations() == ["files.001_create"])
        let rows = try await Self.snapshot(restored)
        #expect(rows.count == original.count)
        #expect(rows.map { $0["body"] } == original.map { $0["body"] })
        #expect(rows.map { $0.string("name") } == original.map { $0.string("name") })
        let unrelated = try await restored.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'unrelated'") }
        #expect(unrelated == .integer(0))
        await restored.close()
    }

    @Test func restoreRefusesWhatIsNotAnIntactSgemDatabase() async throws {
        let dir = TemporaryDirectory()
        let plain = try makeStore(dir, name: "plain.db")
        try await plain.write { try $0.execute("CREATE TABLE t (x)") }
        await plain.close()
        let notSgem = #expect(throws: StoreError.self) { try Store.restore(from: dir.file("plain.db"), to: dir.file("target.db")) }
        #expect(notSgem?.code == .restore)
        #expect(notSgem?.message.contains("sgem_migrations") == true)

        let missing = #expect(throws: StoreError.self) { try Store.restore(from: dir.file("nope.db"), to: dir.file("target.db")) }
        #expect(missing?.code == .restore)

        let junk = dir.file("junk.db")
        let fd = open(junk, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let bytes = Array(repeating: UInt8(0x5A), count: 8192)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        let notADatabase = #expect(throws: StoreError.self) { try Store.restore(from: junk, to: dir.file("target.db")) }
        #expect(notADatabase?.code == .restore)
        #expect(!fileExists(dir.file("target.db")))
    }

    @Test func backupsAndRestoredDatabasesAreOwnerOnlyWhateverTheUmask() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await Self.seed(store, rows: 10)
        let backupPath = dir.file("backup.db")
        let target = dir.file("restored.db")
        // A permissive umask would leave SQLite's default 0644 as is.
        let previous = umask(0)
        defer { umask(previous) }
        try await store.backup(to: backupPath)
        #expect(Self.mode(backupPath) == 0o600)
        // Replacing an existing backup made world-readable by hand restores the mode too.
        chmod(backupPath, 0o666)
        try await store.backup(to: backupPath)
        #expect(Self.mode(backupPath) == 0o600)
        await store.close()
        try Store.restore(from: backupPath, to: target)
        #expect(Self.mode(target) == 0o600)
    }

    @Test func aNewDatabaseAndItsWALAreOwnerOnlyWhateverTheUmask() async throws {
        let dir = TemporaryDirectory()
        let previous = umask(0)
        defer { umask(previous) }
        let store = try makeStore(dir)
        try await Self.seed(store, rows: 10)
        let path = dir.file("test.db")
        #expect(Self.mode(path) == 0o600)
        #expect(Self.mode(path + "-wal") == 0o600)
        await store.close()
    }

    private static func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0o7777 }
        return info.st_mode & 0o7777
    }

    @Test func integrityCheckFindsCorruption() async throws {
        let dir = TemporaryDirectory()
        let store = try makeStore(dir)
        try await Self.seed(store, rows: 3000)
        #expect(try await store.integrityCheck() == [])
        let corruptPath = dir.file("corrupt.db")
        try await store.backup(to: corruptPath)
        await store.close()

        // Overwrite a run of bytes in the middle of the file: several b-tree pages get garbage.
        var info = stat()
        #expect(stat(corruptPath, &info) == 0)
        let size = Int(info.st_size)
        #expect(size > 200 * 4096)
        let fd = open(corruptPath, O_WRONLY)
        #expect(fd >= 0)
        let garbage = (0..<(3 * 4096)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let written = garbage.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(size / 2 / 4096 * 4096 + 100)) }
        #expect(written == garbage.count)
        close(fd)

        let damaged = try makeStore(dir, name: "corrupt.db")
        let problems = try await damaged.integrityCheck()
        #expect(!problems.isEmpty)
        #expect(try await damaged.quickCheck().isEmpty == false)
        await damaged.close()
        let refused = #expect(throws: StoreError.self) { try Store.restore(from: corruptPath, to: dir.file("target.db")) }
        #expect(refused?.code == .restore)
        #expect(refused?.message.contains("integrity") == true)
    }
}
