/// A fixed set of dedicated threads for blocking work (password hashing, file I/O), so that it
/// never occupies Swift's cooperative pool. Callers await the result through one continuation.
public final class BlockingPool: Sendable {
    private let queue = JobQueue<@Sendable () -> Void>()
    public let threadCount: Int
    public let name: String

    /// Starts `threads` dedicated threads named `sgem-<name>`. Traps if none can be started:
    /// the pools are created at start-up, where carrying on without them would be worse.
    public init(name: String, threads: Int) {
        self.name = name
        self.threadCount = max(1, threads)
        for _ in 0..<threadCount {
            do {
                try queue.startWorker(name: "sgem-" + name) { [queue] in
                    while let jobs = queue.take(limit: 1) {
                        for job in jobs { job() }
                    }
                }
            } catch {
                fatalError("\(error)")
            }
        }
    }

    /// Jobs queued and not yet taken by a thread.
    public var load: Int { queue.depth }

    /// Runs `body` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
            let queued = queue.enqueue {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
            if !queued { continuation.resume(throwing: BlockingPoolStopped(name: name)) }
        }
    }

    /// Queues `body` to run on one of the pool's threads without waiting for it; false once the
    /// pool is shut down (then `body` never runs).
    public func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
        queue.enqueue(body)
    }

    /// Stops the threads after the queued jobs have run.
    public func shutdown() { queue.stop() }
}

/// Work handed to a pool after `shutdown()`.
public struct BlockingPoolStopped: Error, CustomStringConvertible {
    public let name: String
    /// The error for work handed to the pool named `name`.
    public init(name: String) { self.name = name }
    public var description: String { "the \(name) pool is shut down" }
}
