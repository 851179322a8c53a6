import SGEMSupport
import Synchronization

/// The server's database — an SQLite file (the default) or PostgreSQL — behind one interface:
/// one writer thread that group-commits queued writes, and a small pool of reader threads, each
/// with its own connection. Callers await their work; no database call runs on Swift's pool.
public final class Store: Sendable {
    /// The database file, or the PostgreSQL URL with its password masked.
    public let path: String
    /// Where the data is.
    public let location: StoreLocation
    let configuration: StoreConfiguration
    let logger: Logger
    let writes = JobQueue<WriteJob>()
    let reads = JobQueue<ReadJob>()
    let metrics: StoreMetrics
    /// The doorbells asked for, by channel, each started on first use; closed with the store.
    let doorbells = Mutex<(closed: Bool, byChannel: [String: Doorbell])>((false, [:]))
    /// PostgreSQL: the session instances agree through (`exclusively`, `leadership`).
    let coordination: Coordination

    /// Opens the SQLite database at `path` (see `init(location:)`).
    public convenience init(path: String, configuration: StoreConfiguration = .init(), logger: Logger, metrics: MetricsRegistry = .shared) throws {
        try self.init(location: .sqlite(path: path), configuration: configuration, logger: logger, metrics: metrics)
    }

    /// Opens the database and starts the writer and reader threads. SQLite: the file's directory
    /// must exist; a missing file is created unless `configuration.createIfMissing` is false
    /// (`.missingDatabase`); a file that is not SQLite fails with `.notADatabase`. PostgreSQL:
    /// the database must exist and accept the URL's role (`.connectionFailed` otherwise).
    public init(location: StoreLocation, configuration: StoreConfiguration = .init(), logger: Logger, metrics: MetricsRegistry = .shared) throws {
        self.location = location
        self.path = location.description
        self.configuration = configuration
        self.logger = logger
        self.metrics = StoreMetrics(registry: metrics)
        self.coordination = Coordination(location: location, configuration: configuration)

        let writer: any StoreConnection
        var readers: [any StoreConnection] = []
        switch location {
        case .sqlite(let path):
            // The writer opens first: it creates the file and switches it to WAL, which readers need.
            writer = try Connection(path: path, role: .writer, configuration: configuration)
            for _ in 0..<max(1, configuration.readers) {
                readers.append(try Connection(path: path, role: .reader, configuration: configuration))
            }
        case .postgresql(let url):
            writer = try PostgresStoreConnection(url: url, configuration: configuration)
            for _ in 0..<max(1, configuration.readers) {
                readers.append(try PostgresStoreConnection(url: url, configuration: configuration, readOnly: true))
            }
        }

        let writes = self.writes
        self.metrics.queueDepth.sample { [weak writes] in Double(writes?.depth ?? 0) }
        do {
            let handoff = Handoff(writer)
            let doorbells: @Sendable (String) -> Doorbell = { [weak self] channel in
                self?.doorbell(channel: channel) ?? Doorbell(channel: channel, listener: nil)
            }
            try writes.startWorker(name: "sgem-writer") { [writes, reads, storeMetrics = self.metrics, logger, maxBatch = configuration.maxBatch] in
                WriterLoop(connection: handoff.value, queue: writes, readers: reads, maxBatch: maxBatch,
                           metrics: storeMetrics, logger: logger, doorbells: doorbells).run()
            }
            for (index, reader) in readers.enumerated() {
                let handoff = Handoff(reader)
                try reads.startWorker(name: "sgem-reader-\(index)") { [reads] in
                    let connection = handoff.value
                    let db = Database(connection: connection)
                    while let jobs = reads.take(limit: 1) {
                        for job in jobs { job(db) }
                    }
                    connection.close()
                }
            }
        } catch {
            // Threads already started drain nothing and close their own connections.
            writes.stop()
            reads.stop()
            throw StoreError(code: .system, message: "\(error)", cause: error)
        }
        logger.info("store opened", ["store.path": path, "store.backend": location.isPostgreSQL ? "postgresql" : "sqlite", "store.readers": String(readers.count), "store.max_batch": String(configuration.maxBatch)])
    }

    deinit {
        // Without `close()`, the threads still finish the queued work and close their connections.
        writes.stop()
        reads.stop()
        for doorbell in doorbells.withLock({ $0.byChannel.values }) { doorbell.requestStop() }
        coordination.stop()
    }

    /// Runs `body` in the writer's transaction and returns once that transaction has committed
    /// durably. Concurrent writes share one transaction (group commit), each inside its own
    /// savepoint: a body that throws is rolled back alone and its error is rethrown here. The
    /// store owns the transaction: a body that runs BEGIN, COMMIT, ROLLBACK, SAVEPOINT or RELEASE
    /// fails with `.transactionControl` and is rolled back. An error with `.batchAborted` means
    /// another write lost the shared transaction and nothing of this one was stored.
    /// `background` marks work nobody waits for (see `foregroundBusyNanoseconds`).
    public func write<T: Sendable>(background: Bool = false, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob.batched(
                perform: { db in
                    let value = try body(db)
                    return { continuation.resume(returning: value) }
                },
                fail: { continuation.resume(throwing: $0) },
                background: background)
            if !writes.enqueue(job) { continuation.resume(throwing: StoreError.closedStore) }
        }
    }

    /// Runs `body` in a read transaction on a reader connection: a consistent snapshot of
    /// committed data, concurrent with the writer. Writing from here fails (read-only connection).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onReader { db in
            try db.connection.beginRead()
            do {
                let value = try body(db)
                try db.connection.execute("COMMIT")
                return value
            } catch {
                if db.connection.isInTransaction { try? db.connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Runs `body` on a reader connection without a transaction: each statement sees the data
    /// committed when it starts (its own snapshot). For reads of one statement — a session by its
    /// token, a page of messages — where `read`'s snapshot buys nothing: on PostgreSQL it saves
    /// the BEGIN and COMMIT around the statement. Writing fails as in `read` (reader connections
    /// are read-only).
    public func readAtOnce<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onReader { db in try body(db) }
    }

    /// Runs `body` on a reader thread without opening a transaction.
    func onReader<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job: ReadJob = { db in continuation.resume(with: Result { try body(db) }) }
            if !reads.enqueue(job) { continuation.resume(throwing: StoreError.closedStore) }
        }
    }

    /// Runs `body` on the writer thread alone, outside any batch, managing its own transactions.
    func onWriterExclusively<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = WriteJob.exclusive { db in continuation.resume(with: Result { try body(db) }) }
            if !writes.enqueue(job) { continuation.resume(throwing: StoreError.closedStore) }
        }
    }

    /// True when a reader answers `SELECT 1` (readiness probe).
    public func ping() async -> Bool {
        (try? await onReader { try $0.scalar("SELECT 1") }) == .integer(1)
    }

    /// Write jobs waiting for the writer (not counting the batch being committed).
    public var queueDepth: Int { writes.depth }

    /// Nanoseconds the writer thread has spent running and committing batches that held a write
    /// someone waits for (not `background` ones alone) since the store opened: background work
    /// compares it with the clock to see how busy others keep the writer, and takes only a
    /// small share of it then.
    public var foregroundBusyNanoseconds: UInt64 { metrics.writerBusyNanoseconds.value.load(ordering: .relaxed) }

    /// Finishes every queued write and read, sends the doorbells' last rings, closes all
    /// connections, then returns. Later calls
    /// to `write` and `read` throw `StoreError` with code `.closed`.
    public func close() async {
        writes.stop()
        reads.stop()
        // Its session ends first: another instance takes over what this one led.
        await coordination.close()
        // The writer drains its queue and closes after the readers have closed theirs.
        await reads.waitUntilStopped()
        await writes.waitUntilStopped()
        // Last: the final commits' rings go out before the doorbells stop.
        let open = doorbells.withLock { all in
            all.closed = true
            return Array(all.byChannel.values)
        }
        for doorbell in open { await doorbell.stop() }
        logger.info("store closed", ["store.path": path])
    }
}

/// A job for the writer thread.
enum WriteJob: Sendable {
    /// A `write` body: runs inside the batch transaction; `perform` returns the resumption to
    /// call once the batch has committed, `fail` reports an error instead.
    case batched(perform: @Sendable (Database) throws -> @Sendable () -> Void, fail: @Sendable (any Error) -> Void, background: Bool)
    /// Work that manages its own transactions (migrations): runs alone, between batches.
    case exclusive(@Sendable (Database) -> Void)

    var isExclusive: Bool {
        if case .exclusive = self { return true }
        return false
    }

    var isBackground: Bool {
        if case .batched(_, _, true) = self { return true }
        return false
    }
}

/// A job for a reader thread.
typealias ReadJob = @Sendable (Database) -> Void

/// The store's metric families.
struct StoreMetrics: Sendable {
    let queueDepth: Gauge
    let batchSize: Histogram
    let commits: Counter
    let writeErrors: Counter
    let batchesRerun: Counter
    let batchJoined: Counter
    let writerBusy: Counter
    let writeLockWait: Counter
    let writeLockHeld: Counter
    let commitWait: Counter
    let doorbellSent: Counter
    let doorbellReceived: Counter
    let doorbellReconnects: Counter
    /// The writer's time on batches with a foreground write (see `Store.foregroundBusyNanoseconds`).
    let writerBusyNanoseconds = NanosecondTotal()

    init(registry: MetricsRegistry) {
        queueDepth = registry.gauge("sgem_store_write_queue_depth", help: "Write jobs waiting for the writer thread.")
        batchSize = registry.histogram("sgem_store_commit_batch_size", help: "Write jobs committed per transaction.",
                                       buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256])
        commits = registry.counter("sgem_store_commits_total", help: "Write transactions committed.")
        writeErrors = registry.counter("sgem_store_write_errors_total", help: "Write jobs that failed.")
        batchesRerun = registry.counter("sgem_store_batches_rerun_total",
                                        help: "Batches run without savepoints that had a failing write and ran again with them.")
        batchJoined = registry.counter("sgem_store_batch_joined_total",
                                       help: "Writes taken into a batch while it waited for the writers' lock another instance held.")
        writerBusy = registry.counter("sgem_store_writer_busy_seconds_total",
                                      help: "Seconds the writer thread spent running and committing writes.")
        writeLockWait = registry.counter("sgem_store_write_lock_wait_seconds_total",
                                         help: "Seconds batches waited for the writers' lock other instances share (with the batch's first write).")
        writeLockHeld = registry.counter("sgem_store_write_lock_held_seconds_total",
                                         help: "Seconds committed batches held the writers' lock other instances share, up to their commit.")
        commitWait = registry.counter("sgem_store_commit_wait_seconds_total",
                                      help: "Seconds the writer waited for its COMMIT's answer (with the batch's statements still running on the server, and the flush to disk).")
        doorbellSent = registry.counter("sgem_store_doorbell_rings_sent_total",
                                        help: "Doorbell rings sent to the other instances (PostgreSQL NOTIFY); rings given together count once.")
        doorbellReceived = registry.counter("sgem_store_doorbell_rings_received_total",
                                            help: "Doorbell rings received from the other instances (PostgreSQL notifications).")
        doorbellReconnects = registry.counter("sgem_store_doorbell_reconnects_total",
                                              help: "Times the doorbell's listening connection was lost and made again.")
    }
}

/// A running total of nanoseconds, read while it grows.
final class NanosecondTotal: Sendable {
    let value = Atomic<UInt64>(0)
}

/// Moves a non-Sendable value to the one thread that will own it.
final class Handoff<Value>: @unchecked Sendable {   // written once before the thread starts, then only read by that thread
    let value: Value
    init(_ value: Value) { self.value = value }
}
