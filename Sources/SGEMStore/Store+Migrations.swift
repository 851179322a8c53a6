import SGEMSupport

extension Store {
    /// Applies the migrations not yet recorded in `sgem_migrations`, in list order, each in its
    /// own transaction together with its record. Returns the ids applied now. A failing migration
    /// is rolled back and stops the run with a `.migration` error naming it. Marks the file with
    /// `Store.applicationID`; a file marked by another program fails with `.foreignDatabase`.
    ///
    /// With `refuseNewerSchema` (the server and its commands, which hold every module's list), a
    /// database that records a migration the list does not hold — written by a newer release —
    /// fails with `.schemaTooNew` before anything is changed.
    public func migrate(_ migrations: MigrationList, refuseNewerSchema: Bool = false) async throws -> [String] {
        try migrations.validate()
        let logger = self.logger
        return try await onWriterExclusively { db in
            let connection = db.connection
            if let sqlite = connection as? Connection {
                try Store.markAsSgem(sqlite, path: self.path)
                try sqlite.execute("CREATE TABLE IF NOT EXISTS sgem_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
                try Store.convertMigrationTimes(sqlite)
            } else {
                // Instances starting together take turns; the second finds the work done.
                try connection.execute("SELECT pg_advisory_lock(?)", [.integer(PostgresStoreConnection.migrationLockKey)])
                try connection.execute("""
                    CREATE TABLE IF NOT EXISTS sgem_migrations (seq BIGINT GENERATED ALWAYS AS IDENTITY, id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)
                    """)
            }
            defer {
                if !(connection is Connection) {
                    try? connection.execute("SELECT pg_advisory_unlock(?)", [.integer(PostgresStoreConnection.migrationLockKey)])
                }
            }
            let applied = Set(try connection.query("SELECT id FROM sgem_migrations", []).compactMap { $0.string("id") })
            // A newer release's migrations: this binary would not know that schema.
            let unknown = applied.subtracting(migrations.ids).sorted()
            guard unknown.isEmpty || !refuseNewerSchema else {
                throw StoreError(code: .schemaTooNew, message: """
                    \(self.path) was written by a newer release of sgem-server (it records migrations this one does not know: \(unknown.prefix(3).joined(separator: ", "))\(unknown.count > 3 ? ", …" : "")); start the newer release or restore a backup
                    """)
            }
            let pending = migrations.migrations.filter { !applied.contains($0.id) }
            // Nothing is applied when one of them cannot run on this backend.
            if let missing = pending.first(where: { $0.body(for: connection.dialect) == nil }) {
                throw StoreError(code: .migration, message: """
                    migration \(missing.id) has no PostgreSQL form yet: this release runs that module on SQLite only
                    """)
            }
            var newlyApplied: [String] = []
            for migration in pending {
                do {
                    try connection.beginWriteBatch()
                    try migration.body(for: connection.dialect)?(db)
                    try connection.execute("INSERT INTO sgem_migrations (id, applied_at) VALUES (?, ?)",
                                           [.text(migration.id), .integer(Timestamp.now().milliseconds)])
                    try connection.execute("COMMIT")
                } catch {
                    if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                    let inner = error as? StoreError
                    logger.error("migration failed", ["migration.id": migration.id, "error": String(describing: error)])
                    throw StoreError(code: .migration, message: "migration \(migration.id) failed: \(inner?.message ?? String(describing: error))",
                                     sqliteCode: inner?.sqliteCode, sql: inner?.sql, cause: error, sqlState: inner?.sqlState)
                }
                logger.info("migration applied", ["migration.id": migration.id])
                newlyApplied.append(migration.id)
            }
            return newlyApplied
        }
    }

    /// The header's application_id marks the file as sgem's; databases from before it was set
    /// get it here, on their next migrate. Another program's file is refused.
    static func markAsSgem(_ connection: Connection, path: String) throws {
        switch try connection.query("PRAGMA application_id", []).first?[0] {
        case .integer(0)?:
            try connection.execute("PRAGMA application_id = \(Store.applicationID)")
        case .integer(Int64(Store.applicationID))?:
            break
        case let other:
            throw StoreError(code: .foreignDatabase,
                             message: "\(path) belongs to another program (application_id \(other.map { String(describing: $0) } ?? "unknown")); not migrating it")
        }
    }

    /// Databases from before the server kept one timestamp representation recorded when each
    /// migration was applied as RFC 3339 text; this turns the table into epoch milliseconds, as
    /// every other time is stored, keeping the order (rowid) — once, in one transaction.
    static func convertMigrationTimes(_ connection: Connection) throws {
        let columns = try connection.query("PRAGMA table_info(sgem_migrations)", [])
        guard let column = columns.first(where: { $0.string("name") == "applied_at" }),
              column.string("type")?.uppercased() == "TEXT" else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let rows = try connection.query("SELECT rowid, id, applied_at FROM sgem_migrations ORDER BY rowid", [])
            try connection.execute("CREATE TABLE sgem_migrations_ms (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
            for row in rows {
                let at = row.timestamp("applied_at")?.milliseconds ?? 0
                try connection.execute("INSERT INTO sgem_migrations_ms (rowid, id, applied_at) VALUES (?, ?, ?)",
                                       [row[0], row[1], .integer(at)])
            }
            try connection.execute("DROP TABLE sgem_migrations")
            try connection.execute("ALTER TABLE sgem_migrations_ms RENAME TO sgem_migrations")
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// The ids recorded in `sgem_migrations`, in the order they were applied.
    public func appliedMigrations() async throws -> [String] {
        let postgres = location.isPostgreSQL
        return try await read { db in
            let exists = postgres
                ? try db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'sgem_migrations'")
                : try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sgem_migrations'")
            guard exists == .integer(1) else { return [] }
            return try db.query("SELECT id FROM sgem_migrations ORDER BY \(postgres ? "seq" : "rowid")").compactMap { $0.string("id") }
        }
    }
}
