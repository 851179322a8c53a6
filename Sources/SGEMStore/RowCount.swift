import Synchronization

/// How many rows a statement given to `Database.runCounting` changed. Where the statement waits
/// in a pipeline (PostgreSQL, a batch without savepoints) the count is known once the batch's
/// statements have run — after `Store.write` returns, at the latest — and `value` is nil until
/// then; elsewhere it is known at once.
public final class RowCount: Sendable {
    private let count = Mutex<Int?>(nil)

    public init() {}

    /// The rows changed; nil while the statement has not run (or its batch failed).
    public var value: Int? { count.withLock { $0 } }

    func set(_ rows: Int) { count.withLock { $0 = rows } }
}
