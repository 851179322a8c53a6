import CSQLite
import Glibc
import SGEMSupport

/// One SQLite connection with its statement cache. Opened by `Store.init`, then handed to exactly
/// one dedicated thread that uses and closes it (it is opened NOMUTEX: never shared).
final class Connection: StoreConnection {
    enum Role { case writer, reader }

    private(set) var handle: OpaquePointer?
    let path: String
    /// Statements prepared outside write jobs: the writer's own BEGIN/SAVEPOINT/RELEASE/COMMIT,
    /// migrations, readers.
    private var cache: StatementCache
    /// Statements prepared while a write job runs. Kept apart so that a job never reuses a
    /// transaction-control statement that the writer prepared unguarded (the authorizer only
    /// runs at prepare time).
    private var guardedCache: StatementCache
    /// The writer's transaction guard, read by the SQLite callbacks; nil on readers.
    private var guardState: UnsafeMutablePointer<WriteGuardState>?

    /// Opens `path` for `role` and applies the store's pragmas. A writer creates the file only
    /// when `configuration.createIfMissing` is true.
    init(path: String, role: Role, configuration: StoreConfiguration) throws {
        self.path = path
        self.cache = StatementCache(capacity: configuration.statementCacheSize)
        self.guardedCache = StatementCache(capacity: role == .writer ? configuration.statementCacheSize : 0)
        var flags = role == .writer
            ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        if role == .writer && configuration.createIfMissing { flags |= SQLITE_OPEN_CREATE }
        if !configuration.createIfMissing && !FileOps.exists(path) {
            throw StoreError(code: .missingDatabase, message: "no database at \(path)")
        }
        let isNew = role == .writer && configuration.createIfMissing && !FileOps.exists(path)
        do {
            handle = try Connection.open(path, flags: flags)
            // A new database holds every password hash: readable by its owner only, whatever the
            // umask (SQLite creates files 0644, and its WAL and shared-memory files copy the mode).
            if isNew && chmod(path, 0o600) != 0 {
                let code = errno
                close()
                throw StoreError(code: .sqlite, message: "cannot restrict \(path) to mode 0600 (errno \(code))")
            }
        } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_CANTOPEN }) == true && !configuration.createIfMissing {
            // Removed between the check and the open, or not openable: either way nothing was created.
            throw StoreError(code: .missingDatabase, message: "cannot open the database at \(path): \(error.message)",
                             sqliteCode: error.sqliteCode, cause: error)
        }
        do {
            if role == .writer { installGuard() }
            try configure(role: role, busyTimeout: configuration.busyTimeoutMilliseconds)
        } catch let error as StoreError where error.sqliteCode.map({ $0 & 0xFF == SQLITE_NOTADB }) == true {
            close()
            throw StoreError.notADatabase(path, error)
        } catch {
            close()
            throw error
        }
    }

    /// Opens a raw handle with `flags`; extended result codes are on.
    static func open(_ path: String, flags: Int32) throws -> OpaquePointer {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = StoreError.sqlite(rc, db: db, sql: nil, context: "cannot open database at \(path)")
            // SQLite hands out a handle even on failure; it must still be released.
            sqlite3_close_v2(db)
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        return db
    }

    private func configure(role: Role, busyTimeout: Int) throws {
        let rc = sqlite3_busy_timeout(handle, Int32(clamping: busyTimeout))
        guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, db: handle, sql: nil, context: "setting busy timeout") }
        if role == .writer {
            // WAL lets readers run beside the one writer; only the writer may switch the mode.
            let mode = try query("PRAGMA journal_mode=WAL", []).first?[0]
            guard mode == .text("wal") else {
                throw StoreError(code: .sqlite, message: "cannot enable WAL journal mode (got \(String(describing: mode)))",
                                 sql: "PRAGMA journal_mode=WAL")
            }
        }
        // FULL makes every COMMIT durable before the caller is told it succeeded.
        try execute("PRAGMA synchronous=FULL")
        try execute("PRAGMA foreign_keys=ON")
    }

    // MARK: The write-job guard

    /// Registers the authorizer and commit hook that enforce `runGuarded`.
    private func installGuard() {
        let state = UnsafeMutablePointer<WriteGuardState>.allocate(capacity: 1)
        state.initialize(to: WriteGuardState())
        guardState = state
        sqlite3_set_authorizer(handle, { context, action, _, _, _, _ in
            guard let state = context?.assumingMemoryBound(to: WriteGuardState.self), state.pointee.jobRunning else { return SQLITE_OK }
            if action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT {
                state.pointee.deniedTransactionControl = true
                return SQLITE_DENY
            }
            return SQLITE_OK
        }, state)
        sqlite3_commit_hook(handle, { context in
            guard let state = context?.assumingMemoryBound(to: WriteGuardState.self) else { return 0 }
            // Non-zero turns the COMMIT into a rollback: nothing a job does can commit the batch early.
            if state.pointee.jobRunning { return 1 }
            if state.pointee.failNextCommit {
                state.pointee.failNextCommit = false
                return 1
            }
            return 0
        }, state)
    }

    /// Runs a write job's `body` with transaction control forbidden: BEGIN, COMMIT, ROLLBACK,
    /// SAVEPOINT and RELEASE fail to prepare, and no commit can happen. A body that tried one
    /// fails with `.transactionControl` even if it caught the error.
    func runGuarded<T>(_ body: () throws -> T) throws -> T {
        guard let state = guardState else { return try body() }
        state.pointee.jobRunning = true
        state.pointee.deniedTransactionControl = false
        defer { state.pointee.jobRunning = false }
        let value = try body()
        if state.pointee.deniedTransactionControl { throw StoreError.transactionControlRefused(sql: nil) }
        return value
    }

    /// Test hook: runs `body` as the writer itself, with the guard lifted (to simulate SQLite
    /// leaving the transaction under a job, as an I/O error would).
    func withGuardSuspended<T>(_ body: () throws -> T) rethrows -> T {
        guard let state = guardState, state.pointee.jobRunning else { return try body() }
        state.pointee.jobRunning = false
        defer { state.pointee.jobRunning = true }
        return try body()
    }

    /// Test hook: the next COMMIT fails (SQLITE_CONSTRAINT_COMMITHOOK) and rolls back.
    func failNextCommit() { guardState?.pointee.failNextCommit = true }

    private var isGuarded: Bool { guardState?.pointee.jobRunning ?? false }

    /// The error for a failed prepare: a refused transaction-control statement is named as such.
    private func prepareFailure(_ rc: Int32, db: OpaquePointer, sql: String) -> StoreError {
        if rc == SQLITE_AUTH && isGuarded { return StoreError.transactionControlRefused(sql: sql) }
        return StoreError.sqlite(rc, db: db, sql: sql)
    }

    var isInTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    func lastInsertedID() throws -> Int64 { sqlite3_last_insert_rowid(handle) }

    var dialect: SQLDialect { .sqlite }

    var isUsable: Bool { handle != nil }

    /// The writer's batch: `BEGIN IMMEDIATE` takes the write lock now, not at the first write.
    func beginWriteBatch() throws { try execute("BEGIN IMMEDIATE") }

    /// A snapshot: the first read of a deferred transaction pins the WAL's state.
    func beginRead() throws { try execute("BEGIN DEFERRED") }

    /// Deferred foreign-key violations pending after a job would fail the batch's COMMIT.
    func checkJobConstraints() throws {
        if hasDeferredForeignKeyViolations {
            throw StoreError(code: .sqlite, message: "FOREIGN KEY constraint failed (deferred)",
                             sqliteCode: SQLITE_CONSTRAINT_FOREIGNKEY_CODE)
        }
    }

    var changes: Int { Int(sqlite3_changes(handle)) }

    /// True when deferred foreign-key violations are pending (the COMMIT would fail).
    var hasDeferredForeignKeyViolations: Bool {
        var current: Int32 = 0
        var highwater: Int32 = 0
        return sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highwater, 0) == SQLITE_OK && current > 0
    }

    /// Prepares one statement; anything but whitespace after it is an error (use `executeScript`).
    func prepare(_ sql: String, persistent: Bool) throws -> Statement {
        guard let db = handle else { throw StoreError.closedStore }
        var statement: OpaquePointer?
        var trailing = false
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sql.withCString { text -> Int32 in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(db, text, -1, flags, &statement, &tail)
            if let tail {
                var p = tail
                while p.pointee != 0 {
                    let c = UInt8(bitPattern: p.pointee)
                    if c != 0x20 && c != 0x0A && c != 0x0D && c != 0x09 && c != 0x3B { trailing = true; break }
                    p += 1
                }
            }
            return rc
        }
        guard rc == SQLITE_OK else { throw prepareFailure(rc, db: db, sql: sql) }
        guard let statement else {
            throw StoreError(code: .sqlite, message: "no statement in SQL", sqliteCode: SQLITE_MISUSE, sql: sql)
        }
        let prepared = Statement(handle: statement, sql: sql, db: db)
        guard !trailing else {
            throw StoreError(code: .sqlite, message: "more than one statement; use executeScript", sqliteCode: SQLITE_MISUSE, sql: sql)
        }
        return prepared
    }

    private func cachedStatement(_ sql: String) throws -> Statement {
        // Cached statements live long: tell SQLite so it allocates them accordingly.
        let persistent = cache.capacity > 0
        if isGuarded { return try guardedCache.statement(for: sql) { try prepare($0, persistent: persistent) } }
        return try cache.statement(for: sql) { try prepare($0, persistent: persistent) }
    }

    /// Runs `sql` with `bindings` through the statement cache and collects the rows.
    @discardableResult
    func query(_ sql: String, _ bindings: [SQLValue]) throws -> [Row] {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        var rows: [Row] = []
        var columns: [String]?
        while try statement.step() {
            let names = columns ?? statement.columnNames()
            columns = names
            rows.append(Row(columns: names, values: statement.values(count: names.count)))
        }
        return rows
    }

    /// Runs `sql` with `bindings` through the statement cache, ignoring any rows.
    func execute(_ sql: String, _ bindings: [SQLValue]) throws {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(bindings)
        while try statement.step() {}
    }

    /// Runs every statement of `sql` in order, uncached.
    func executeScript(_ sql: String) throws {
        guard let db = handle else { throw StoreError.closedStore }
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(db, current, -1, &statement, &tail)
                let text = tail.map {
                    String(decoding: UnsafeRawBufferPointer(start: current, count: $0 - current), as: UTF8.self)
                        .trimmingWhitespace()
                }
                guard rc == SQLITE_OK else { throw prepareFailure(rc, db: db, sql: text ?? sql) }
                next = tail
                // Whitespace or a comment alone prepares to no statement.
                guard let statement else { continue }
                let prepared = Statement(handle: statement, sql: text ?? sql, db: db)
                while try prepared.step() {}
            }
        }
    }

    /// Finalizes every statement, then closes the handle.
    func close() {
        cache.removeAll()
        guardedCache.removeAll()
        guard let db = handle else { return }
        handle = nil
        if guardState != nil {
            // The callbacks point at the guard state, which `deinit` frees.
            sqlite3_set_authorizer(db, nil, nil)
            sqlite3_commit_hook(db, nil, nil)
        }
        // close_v2 never fails with BUSY: a statement still alive elsewhere defers the close.
        sqlite3_close_v2(db)
    }

    deinit {
        close()
        guardState?.deinitialize(count: 1)
        guardState?.deallocate()
    }
}

/// What the writer's SQLite callbacks read: plain memory, touched only on the writer thread.
struct WriteGuardState {
    /// A write job's body is running: transaction control is refused and commits are vetoed.
    var jobRunning = false
    /// The running body tried a transaction-control statement.
    var deniedTransactionControl = false
    /// Test hook: veto the next commit.
    var failNextCommit = false
}

