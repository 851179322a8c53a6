import SGEMSupport

extension Store {
    /// Applies the migrations not yet recorded in `sgem_migrations`, in list order, each in its
    /// own transaction together with its record. Returns the ids applied now. A failing migration
    /// is rolled back and stops the run with a `.migration` error naming it. Marks the file with
    /// `Store.applicationID`; a file marked by another program fails with `.foreignDatabase`.
    public func migrate(_ migrations: MigrationList) async throws -> [String] {
        try migrations.validate()
        let logger = self.logger
        return try await onWriterExclusively { db in
            let connection = db.connection
            // The header's application_id marks the file as sgem's; databases from before it
            // was set get it here, on their next migrate.
            switch try connection.query("PRAGMA application_id", []).first?[0] {
            case .integer(0)?:
                try connection.execute("PRAGMA application_id = \(Store.applicationID)")
            case .integer(Int64(Store.applicationID))?:
                break
            case let other:
                throw StoreError(code: .foreignDatabase,
                                 message: "\(self.path) belongs to another program (application_id \(other.map { String(describing: $0) } ?? "unknown")); not migrating it")
            }
            try connection.execute("CREATE TABLE IF NOT EXISTS sgem_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            let applied = Set(try connection.query("SELECT id FROM sgem_migrations", []).compactMap { $0.string("id") })
            var newlyApplied: [String] = []
            for migration in migrations.migrations where !applied.contains(migration.id) {
                do {
                    try connection.execute("BEGIN IMMEDIATE")
                    try migration.apply(db)
                    try connection.execute("INSERT INTO sgem_migrations (id, applied_at) VALUES (?, ?)",
                                           [.text(migration.id), .text(Timestamp.now().rfc3339())])
                    try connection.execute("COMMIT")
                } catch {
                    if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                    let inner = error as? StoreError
                    logger.error("migration failed", ["migration.id": migration.id, "error": String(describing: error)])
                    throw StoreError(code: .migration, message: "migration \(migration.id) failed: \(inner?.message ?? String(describing: error))",
                                     sqliteCode: inner?.sqliteCode, sql: inner?.sql, cause: error)
                }
                logger.info("migration applied", ["migration.id": migration.id])
                newlyApplied.append(migration.id)
            }
            return newlyApplied
        }
    }

    /// The ids recorded in `sgem_migrations`, in the order they were applied.
    public func appliedMigrations() async throws -> [String] {
        try await read { db in
            let exists = try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sgem_migrations'")
            guard exists == .integer(1) else { return [] }
            return try db.query("SELECT id FROM sgem_migrations ORDER BY rowid").compactMap { $0.string("id") }
        }
    }
}
