import SGEMSupport
import Synchronization

/// The password-hashing queue: bounded, and fair between clients. Each client (a client
/// address; the command line is one client) may have at most `perClient` hashes queued or
/// running, the queue holds at most `capacity`, and the hashing threads serve clients
/// round-robin — so one address flooding logins fills only its own share and a login from
/// anywhere else waits for at most one hash per thread. Work beyond the bounds is refused at
/// once with `AccountsError.hasherBusy` (503 `busy` with `Retry-After`), never queued.
final class HashScheduler: Sendable {
    /// One queued derivation: `run` does the work and answers the caller; `cancel` answers it with an error.
    struct Job: Sendable {
        let run: @Sendable () -> Void
        let cancel: @Sendable (any Error) -> Void
    }

    private struct State {
        var queues: [String: [Job]] = [:]
        /// Clients with queued work, in the order they are served next.
        var ring: [String] = []
        /// Jobs queued or running, per client.
        var active: [String: Int] = [:]
        var queued = 0
        var closed = false
    }

    let capacity: Int
    let perClient: Int
    /// Seconds a refused caller is told to wait.
    let retryAfter: Int
    private let state = Mutex(State())

    init(capacity: Int, perClient: Int, retryAfter: Int = 1) {
        self.capacity = max(1, capacity)
        self.perClient = max(1, perClient)
        self.retryAfter = max(1, retryAfter)
    }

    /// The answer to work beyond the bounds.
    var busy: AccountsError { .hasherBusy(retryAfter: retryAfter) }

    /// Queues `job` for `client`; throws `hasherBusy` when the client's share or the queue is full.
    func add(_ job: Job, client: String) throws {
        let refusal: (any Error)? = state.withLock { s in
            if s.closed { return BlockingPoolStopped(name: "hash") }
            let mine = s.active[client] ?? 0
            guard mine < perClient, s.queued < capacity else { return busy }
            if s.queues[client, default: []].isEmpty { s.ring.append(client) }
            s.queues[client, default: []].append(job)
            s.active[client] = mine + 1
            s.queued += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Runs the next job, taking clients in turn; called once per added job, on a hashing thread.
    func runNext() {
        let next: (String, Job)? = state.withLock { s in
            guard !s.ring.isEmpty else { return nil }
            let client = s.ring.removeFirst()
            let job = s.queues[client]!.removeFirst()
            if s.queues[client]!.isEmpty { s.queues.removeValue(forKey: client) } else { s.ring.append(client) }
            s.queued -= 1
            return (client, job)
        }
        guard let (client, job) = next else { return }
        job.run()
        state.withLock { s in
            let left = (s.active[client] ?? 1) - 1
            if left > 0 { s.active[client] = left } else { s.active.removeValue(forKey: client) }
        }
    }

    /// Refuses new work and cancels what is queued (used when the threads are gone).
    func close(cancelling error: any Error) {
        let stranded: [Job] = state.withLock { s in
            s.closed = true
            let jobs = s.ring.flatMap { s.queues[$0] ?? [] }
            s.queues = [:]
            s.ring = []
            s.active = [:]
            s.queued = 0
            return jobs
        }
        for job in stranded { job.cancel(error) }
    }

    /// Jobs waiting for a thread.
    var queuedCount: Int { state.withLock { $0.queued } }
    /// Jobs queued or running for `client`.
    func activeCount(_ client: String) -> Int { state.withLock { $0.active[client] ?? 0 } }
}
