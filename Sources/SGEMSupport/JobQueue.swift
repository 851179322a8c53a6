import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// A FIFO of jobs served by dedicated threads: callers enqueue, workers block on a condition
/// variable until there is work, and `stop` lets the workers drain the queue and exit.
public final class JobQueue<Job: Sendable>: @unchecked Sendable {
    // Every stored property below `cond` is read and written only while `mutex` is held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [Job] = []
    private var head = 0
    private var stopping = false
    private var workers = 0
    private var exited = false
    private var exitWaiters: [CheckedContinuation<Void, Never>] = []

    public init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        cond.deallocate()
    }

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Jobs waiting, not yet taken by a worker.
    public var depth: Int { locked { jobs.count - head } }

    /// Queues `job`; false once the queue is stopping.
    public func enqueue(_ job: Job) -> Bool {
        locked {
            guard !stopping else { return false }
            jobs.append(job)
            pthread_cond_signal(cond)
            return true
        }
    }

    /// Puts `returned` back at the front, in order (jobs a worker took but could not run).
    public func requeue(_ returned: [Job]) {
        guard !returned.isEmpty else { return }
        locked {
            jobs = returned + jobs[head...]
            head = 0
            pthread_cond_signal(cond)
        }
    }

    /// Blocks until jobs are waiting and takes up to `limit` of them, or a leading job for which
    /// `alone` is true by itself. Nil when the queue is stopping and empty: the worker should exit.
    public func take(limit: Int, alone: (Job) -> Bool = { _ in false }) -> [Job]? {
        locked {
            while head == jobs.count {
                if stopping { return nil }
                pthread_cond_wait(cond, mutex)
            }
            var end = head + 1
            if !alone(jobs[head]) {
                while end < jobs.count, end - head < max(1, limit), !alone(jobs[end]) { end += 1 }
            }
            let taken = Array(jobs[head..<end])
            head = end
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return taken
        }
    }

    /// Takes up to `limit` waiting jobs without blocking, stopping before the first for which
    /// `alone` is true (it must run by itself); empty when none wait.
    public func takeWaiting(limit: Int, alone: (Job) -> Bool = { _ in false }) -> [Job] {
        guard limit > 0 else { return [] }
        return locked {
            var end = head
            while end < jobs.count, end - head < limit, !alone(jobs[end]) { end += 1 }
            let taken = Array(jobs[head..<end])
            head = end
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            return taken
        }
    }

    /// Refuses new jobs; workers finish what is queued, then exit.
    public func stop() {
        locked {
            stopping = true
            pthread_cond_broadcast(cond)
        }
    }

    public var isStopping: Bool { locked { stopping } }

    /// Starts a dedicated thread named `name` that runs `body`; it counts as a worker until
    /// `body` returns.
    public func startWorker(name: String, _ body: @escaping @Sendable () -> Void) throws {
        locked { workers += 1 }
        do {
            try startThread(name: name) { [self] in
                body()
                workerExited()
            }
        } catch {
            workerExited()
            throw error
        }
    }

    private func workerExited() {
        let waiters: [CheckedContinuation<Void, Never>] = locked {
            workers -= 1
            guard workers == 0 else { return [] }
            exited = true
            pthread_cond_broadcast(cond)
            defer { exitWaiters.removeAll() }
            return exitWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Blocks the calling thread until every worker has exited (for another queue's worker).
    public func blockUntilStopped() {
        locked {
            while !(exited || workers == 0) { pthread_cond_wait(cond, mutex) }
        }
    }

    /// Returns once every worker has exited.
    public func waitUntilStopped() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = locked { () -> Bool in
                if exited || workers == 0 { return true }
                exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// Carries a closure into a new pthread.
private final class ThreadStart: @unchecked Sendable {   // handed to exactly one thread, then released
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
}

/// Runs `body` on a new detached pthread named `name`, off Swift's cooperative pool.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws {
    let start = Unmanaged.passRetained(ThreadStart(name: name, body: body))
    var thread = pthread_t()
    let rc = pthread_create(&thread, nil, { raw in
        let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
        sgem_set_thread_name(start.name)
        start.body()
        return nil
    }, start.toOpaque())
    guard rc == 0 else {
        start.release()
        throw ThreadStartError(name: name, code: rc)
    }
    pthread_detach(thread)
}

/// A dedicated thread could not be started (`pthread_create` failed).
public struct ThreadStartError: Error, CustomStringConvertible {
    public let name: String
    public let code: Int32
    public var description: String { "cannot start thread \(name): \(String(cString: strerror(code)))" }
}
