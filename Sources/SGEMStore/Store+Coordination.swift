/// Work that one instance does alone when several serve one database.
extension Store {
    /// True when other processes may serve this database at the same time (PostgreSQL): work one
    /// instance should do alone goes through `exclusively` or a `leadership`.
    public var isShared: Bool { location.isPostgreSQL }

    /// True when a write can take its rows' ids before storing them (`Database.reserveID`):
    /// PostgreSQL, where waiting for an INSERT's answer is a round trip.
    public var reservesIDs: Bool { location.isPostgreSQL }

    /// Runs `body` in a transaction of its own unless another instance holds `lock` at this
    /// moment; nil then, without waiting. On PostgreSQL the transaction runs on the coordination
    /// connection (neither the writer nor a reader) and takes `pg_try_advisory_xact_lock` first:
    /// what `body` reads and writes commits together, under the lock. On SQLite (one process)
    /// `body` runs as a write. Keep it short: instances that find the lock taken skip, they do not
    /// queue. `afterCommit` actions registered by `body` run at once on PostgreSQL.
    public func exclusively<T: Sendable>(_ lock: StoreLock, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T? {
        guard isShared else { return try await write(body) }
        return try await coordination.perform { session -> T? in
            let connection = try session.connection()
            try connection.connection.begin()
            do {
                guard try connection.connection.tryAdvisoryTransactionLock(lock.key) else {
                    try connection.connection.rollback()
                    return nil
                }
                let value = try connection.runGuarded { try body(Database(connection: connection)) }
                try connection.connection.commit()
                return value
            } catch {
                if connection.isUsable, connection.isInTransaction { try? connection.connection.rollback() }
                throw error
            }
        }
    }

    /// The leadership of `lock` among the instances serving this database (see `Leadership`).
    /// Every call for one lock on one store shares one hold.
    public func leadership(_ lock: StoreLock) -> Leadership {
        Leadership(lock: lock, coordination: coordination, hold: coordination.hold(lock), shared: isShared, logger: logger)
    }
}
