#if canImport(Glibc)
import Glibc
#endif
import CSQLite

extension Store {
    /// Pages copied per backup step: small enough that no step holds anything for long.
    static let backupPagesPerStep: Int32 = 256

    /// Copies a consistent snapshot of the database to `path` with SQLite's online backup, on a
    /// reader thread, so writers keep going. The copy is written to `path.tmp`, synced, then
    /// renamed: a half-written backup never sits at `path`. Both files are mode 0600 whatever the
    /// umask: a backup holds every password hash.
    public func backup(to path: String) async throws {
        let logger = self.logger
        try await onReader { db in
            let temporary = path + ".tmp"
            for leftover in [temporary, temporary + "-journal", temporary + "-wal", temporary + "-shm"] {
                try FileOps.removeIfPresent(leftover, code: .backup)
            }
            // SQLite keeps the mode of a file that exists (and gives its journal the same one).
            try FileOps.createPrivate(temporary, code: .backup)
            let source = try db.sqliteConnection(for: "backup")
            // Holding a read transaction pins one WAL snapshot for every step, so concurrent
            // commits neither block the copy nor make it restart.
            try source.execute("BEGIN DEFERRED")
            defer { if source.isInTransaction { try? source.execute("ROLLBACK") } }
            try source.execute("SELECT count(*) FROM sqlite_master")
            guard let sourceHandle = source.handle else { throw StoreError.closedStore }
            do {
                try Store.copy(from: sourceHandle, to: temporary, pagesPerStep: Store.backupPagesPerStep, code: .backup)
            } catch {
                try? FileOps.removeIfPresent(temporary, code: .backup)
                throw error
            }
            try source.execute("COMMIT")
            try FileOps.makePrivate(temporary, code: .backup)
            try FileOps.sync(temporary, code: .backup)
            try FileOps.rename(temporary, to: path, code: .backup)
            try FileOps.syncDirectory(of: path, code: .backup)
            logger.info("backup written", ["backup.path": path])
        }
    }

    /// Replaces the database at `target` with the one at `source`, after checking that the source
    /// is intact (`PRAGMA integrity_check`) and is an sgem database (has `sgem_migrations`).
    /// The target must not be open in any store; its stale `-wal`/`-shm` files are removed first.
    public static func restore(from source: String, to target: String) throws {
        guard FileOps.exists(source) else {
            throw StoreError(code: .restore, message: "backup file \(source) does not exist")
        }
        let sourceHandle: OpaquePointer
        do {
            sourceHandle = try Connection.open(source, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX)
        } catch let error as StoreError {
            throw StoreError(code: .restore, message: "cannot open backup \(source): \(error.message)",
                             sqliteCode: error.sqliteCode, cause: error)
        }
        defer { sqlite3_close_v2(sourceHandle) }
        let check: [SQLValue]
        do {
            check = try Store.restoreQuery(sourceHandle, "PRAGMA integrity_check")
        } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_CORRUPT || $0 & 0xFF == SQLITE_NOTADB }) == true {
            // Damage bad enough to stop the check fails it just the same.
            throw StoreError(code: .restore, message: "backup \(source) failed its integrity check: \(error.message)",
                             sqliteCode: error.sqliteCode, cause: error)
        }
        guard check == [.text("ok")] else {
            let problems = check.prefix(5).map { value -> String in
                if case .text(let s) = value { return s }
                return String(describing: value)
            }
            throw StoreError(code: .restore, message: "backup \(source) failed its integrity check: \(problems.joined(separator: "; "))")
        }
        let marker = try Store.restoreQuery(sourceHandle, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sgem_migrations'")
        guard marker == [.integer(1)] else {
            throw StoreError(code: .restore, message: "\(source) is not an sgem database (no sgem_migrations table)")
        }
        // A stale WAL would be replayed over the restored pages.
        for stale in [target + "-wal", target + "-shm", target + "-journal"] {
            try FileOps.removeIfPresent(stale, code: .restore)
        }
        // The restored database holds the same secrets as the backup: private too.
        if !FileOps.exists(target) { try FileOps.createPrivate(target, code: .restore) }
        try Store.copy(from: sourceHandle, to: target, pagesPerStep: -1, code: .restore)
        try FileOps.makePrivate(target, code: .restore)
        try FileOps.sync(target, code: .restore)
        try FileOps.syncDirectory(of: target, code: .restore)
    }

    /// First column of every row of `sql` on a raw handle; errors become `.restore`.
    private static func restoreQuery(_ db: OpaquePointer, _ sql: String) throws -> [SQLValue] {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw restoreError(StoreError.sqlite(rc, db: db, sql: sql))
        }
        let prepared = Statement(handle: statement, sql: sql, db: db)
        var values: [SQLValue] = []
        do {
            while try prepared.step() { values.append(prepared.values(count: 1)[0]) }
        } catch let error as StoreError {
            throw restoreError(error)
        }
        return values
    }

    private static func restoreError(_ error: StoreError) -> StoreError {
        StoreError(code: .restore, message: "cannot read the backup: \(error.message)", sqliteCode: error.sqliteCode,
                   sql: error.sql, cause: error)
    }

    /// Copies the main database of `source` into the file `destination` with the backup API,
    /// `pagesPerStep` pages at a time (-1: all in one step).
    static func copy(from source: OpaquePointer, to destination: String, pagesPerStep: Int32, code: StoreError.Code) throws {
        let target: OpaquePointer
        do {
            target = try Connection.open(destination, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        } catch let error as StoreError {
            throw StoreError(code: code, message: error.message, sqliteCode: error.sqliteCode, cause: error)
        }
        defer { sqlite3_close_v2(target) }
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            let error = StoreError.sqlite(sqlite3_errcode(target), db: target, sql: nil, context: "starting the backup")
            throw StoreError(code: code, message: error.message, sqliteCode: error.sqliteCode, cause: error)
        }
        var rc: Int32 = SQLITE_OK
        while true {
            rc = sqlite3_backup_step(backup, pagesPerStep)
            if rc == SQLITE_OK { continue }
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED {
                // Someone else holds the destination briefly; give them a moment.
                sqlite3_sleep(5)
                continue
            }
            break
        }
        let finish = sqlite3_backup_finish(backup)
        let failure = rc != SQLITE_DONE ? rc : finish
        guard failure == SQLITE_OK || failure == SQLITE_DONE else {
            let error = StoreError.sqlite(failure, db: target, sql: nil, context: "copying pages")
            throw StoreError(code: code, message: error.message, sqliteCode: error.sqliteCode, cause: error)
        }
    }

    /// `PRAGMA integrity_check` and `PRAGMA foreign_key_check` problems; empty when the database is sound.
    public func integrityCheck() async throws -> [String] {
        try await onReader { db in
            var problems: [String] = []
            do {
                for row in try db.query("PRAGMA integrity_check") {
                    if case .text(let line) = row[0], line != "ok" { problems.append(line) }
                }
                for row in try db.query("PRAGMA foreign_key_check") {
                    let table = row.string("table") ?? "?"
                    let parent = row.string("parent") ?? "?"
                    let rowid = row.int64("rowid").map(String.init) ?? "?"
                    problems.append("foreign key violation: \(table) rowid \(rowid) references missing \(parent) row")
                }
            } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_CORRUPT || $0 & 0xFF == SQLITE_NOTADB }) == true {
                // Damage bad enough to stop the check is itself the finding.
                problems.append(error.message)
            }
            return problems
        }
    }
}

/// The few file-system calls backup and restore need, checked on the spot, EINTR retried.
enum FileOps {
    /// Up to `count` bytes from the start of the file (fewer when it is shorter or unreadable).
    static func firstBytes(_ path: String, count: Int) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, count) }
        return n > 0 ? Array(buffer[0..<n]) : []
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func removeIfPresent(_ path: String, code: StoreError.Code) throws {
        if unlink(path) != 0 && errno != ENOENT {
            throw failure("removing \(path)", code: code)
        }
    }

    static func sync(_ path: String, code: StoreError.Code) throws {
        let fd = try openRetrying(path, O_RDONLY, code: code)
        defer { close(fd) }
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw failure("syncing \(path)", code: code)
        }
    }

    static func syncDirectory(of path: String, code: StoreError.Code) throws {
        let directory: String
        if let slash = path.lastIndex(of: "/") {
            directory = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            directory = "."
        }
        let fd = try openRetrying(directory, O_RDONLY | O_DIRECTORY, code: code)
        defer { close(fd) }
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            throw failure("syncing directory \(directory)", code: code)
        }
    }

    /// Creates `path` (which must not exist) readable and writable by the owner only.
    static func createPrivate(_ path: String, code: StoreError.Code) throws {
        let fd = try openRetrying(path, O_WRONLY | O_CREAT | O_EXCL, mode: 0o600, code: code)
        defer { close(fd) }
        // The umask may have removed bits from 0600; set it exactly.
        guard fchmod(fd, 0o600) == 0 else { throw failure("restricting \(path) to mode 0600", code: code) }
    }

    /// Sets `path` to mode 0600.
    static func makePrivate(_ path: String, code: StoreError.Code) throws {
        guard chmod(path, 0o600) == 0 else { throw failure("restricting \(path) to mode 0600", code: code) }
    }

    static func rename(_ from: String, to: String, code: StoreError.Code) throws {
        guard Glibc.rename(from, to) == 0 else { throw failure("renaming \(from) to \(to)", code: code) }
    }

    private static func openRetrying(_ path: String, _ flags: Int32, mode: mode_t = 0, code: StoreError.Code) throws -> Int32 {
        while true {
            let fd = open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw failure("opening \(path)", code: code)
        }
    }

    private static func failure(_ action: String, code: StoreError.Code) -> StoreError {
        let reason = String(cString: strerror(errno))
        return StoreError(code: code, message: "\(action): \(reason)")
    }
}
