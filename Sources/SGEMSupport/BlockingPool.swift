#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Synchronization

/// A fixed set of dedicated threads for blocking work (password hashing, file I/O), so that it
/// never occupies Swift's cooperative pool. Callers await the result through one continuation.
public final class BlockingPool: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var stopping = false
    }

    /// The queue and its condition variable. The pthread primitives live in heap memory that
    /// never moves; the Mutex around `State` serialises the queue itself.
    private final class Signal: @unchecked Sendable {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        init() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(cond, nil)
        }
        deinit {
            pthread_cond_destroy(cond)
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
            cond.deallocate()
        }
    }

    private let signal = Signal()
    private let state = Mutex(State())
    private let running = Atomic<Int>(0)
    public let threadCount: Int
    public let name: String

    /// Starts `threads` dedicated threads named `name`.
    public init(name: String, threads: Int) {
        self.name = name
        self.threadCount = max(1, threads)
        for _ in 0..<threadCount { startThread() }
    }

    /// Jobs queued or running right now.
    public var load: Int { state.withLock { $0.jobs.count } + running.load(ordering: .relaxed) }

    /// Runs `body` on one of the pool's threads and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
            enqueue {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Stops the threads after the queued jobs have run.
    public func shutdown() {
        pthread_mutex_lock(signal.mutex)
        state.withLock { $0.stopping = true }
        pthread_cond_broadcast(signal.cond)
        pthread_mutex_unlock(signal.mutex)
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(signal.mutex)
        state.withLock { $0.jobs.append(job) }
        pthread_cond_signal(signal.cond)
        pthread_mutex_unlock(signal.mutex)
    }

    private func startThread() {
        let box = Unmanaged.passRetained(ThreadBody { [self] in
            sgem_set_thread_name("sgem-" + self.name)
            self.work()
        })
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        precondition(rc == 0, "pthread_create failed: \(rc)")
        pthread_detach(thread)
    }

    private func work() {
        while true {
            pthread_mutex_lock(signal.mutex)
            var job: (@Sendable () -> Void)?
            while true {
                let (next, stop) = state.withLock { s -> ((@Sendable () -> Void)?, Bool) in
                    s.jobs.isEmpty ? (nil, s.stopping) : (s.jobs.removeFirst(), false)
                }
                if let next { job = next; break }
                if stop { pthread_mutex_unlock(signal.mutex); return }
                pthread_cond_wait(signal.cond, signal.mutex)
            }
            pthread_mutex_unlock(signal.mutex)
            running.add(1, ordering: .relaxed)
            job?()
            running.subtract(1, ordering: .relaxed)
        }
    }
}

/// Carries a closure into a new pthread.
final class ThreadBody: @unchecked Sendable {   // handed to exactly one thread, then released
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}
