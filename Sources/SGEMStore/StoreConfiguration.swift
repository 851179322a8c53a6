/// Tuning knobs of a `Store`.
public struct StoreConfiguration: Sendable {
    /// Reader connections, each on its own thread.
    public var readers = 2
    /// How long a connection waits for a lock before failing with SQLITE_BUSY.
    public var busyTimeoutMilliseconds = 5000
    /// Most write jobs committed in one transaction; 1 disables group commit.
    public var maxBatch = 256
    /// Prepared statements kept per connection (least recently used go first); 0 disables the cache.
    public var statementCacheSize = 64
    /// PostgreSQL: the server ends a session left idle inside a transaction this long, releasing
    /// its locks (so a hung process cannot hold the writer's lock).
    public var idleInTransactionTimeoutMilliseconds = 60_000
    /// Whether opening creates a missing database file; false opens an existing one only
    /// (admin verbs, start-up checks) and fails with `.missingDatabase` otherwise.
    public var createIfMissing = true

    /// The defaults: 2 readers, 5 s busy timeout, batches of up to 256, 64 cached statements.
    public init() {}
}
