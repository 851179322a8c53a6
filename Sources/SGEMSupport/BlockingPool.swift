import CLinux
/// A fixed set of dedicated threads for blocking work (password hashing, file I/O), so that it
/// never occupies Swift's cooperative pool. Callers await the result through one continuation.
public final class BlockingPool: Sendable {
    private let queue = JobQueue<@Sendable () -> Void>()
    public let threadCount: Int
    public let name: String

    /// Starts `threads` dedicated threads named `sgem-<name>`. Traps if none can be started:
    /// the pools are created at start-up, where carrying on without them would be worse.
    /// - Parameter priority: `.background` for work that must never slow what people wait for.
    public init(name: String, threads: Int, priority: ThreadPriority = .normal) {
        self.name = name
        self.threadCount = max(1, threads)
        for _ in 0..<threadCount {
            do {
                try queue.startWorker(name: "sgem-" + name) { [queue] in
                    if priority == .background { _ = sgem_set_thread_idle() }
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

/// How the scheduler treats a pool's threads.
public enum ThreadPriority: Sendable, Equatable {
    case normal
    /// SCHED_IDLE: the threads run only when no ordinary thread wants the CPU, and give it up as
    /// soon as one does. Under sustained full load their work waits; it never delays requests.
    case background
}

/// A task executor on dedicated background-priority threads: tasks that prefer it (`withTaskExecutorPreference`)
/// run their code there, so background work such as translating chats takes CPU only when
/// requests do not need it. Awaited calls into other pools (the store, the HTTP client) run there.
public final class BackgroundExecutor: TaskExecutor, @unchecked Sendable {
    private let pool: BlockingPool

    public init(name: String, threads: Int = 1) {
        pool = BlockingPool(name: name, threads: threads, priority: .background)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        _ = pool.execute { job.runSynchronously(on: executor) }
    }

    public func shutdown() { pool.shutdown() }
}
