import SGEMSupport
import Synchronization

/// The store's coordination connection on PostgreSQL: a session of its own, on a thread of its
/// own, neither the writer's nor a reader's, for what instances agree on through the database —
/// the advisory locks `Store.exclusively` takes per round and the session locks `Leadership`
/// holds. Opened on first use (commands and SQLite never open it) and again after it was lost;
/// closing it ends the session, which releases every lock it held.
final class Coordination: Sendable {
    private let jobs = JobQueue<CoordinationJob>()
    private let url: PostgresURL?
    private let configuration: StoreConfiguration
    private let started = Mutex(false)
    /// One holder's state per lock: a session takes a lock it already holds again, so two
    /// `Leadership`s of one lock on one store must share what they know.
    private let holds = Mutex<[StoreLock: LeadershipHold]>([:])

    init(location: StoreLocation, configuration: StoreConfiguration) {
        if case .postgresql(let url) = location { self.url = url } else { self.url = nil }
        self.configuration = configuration
    }

    /// Runs `body` on the coordination thread with its session.
    func perform<T: Sendable>(_ body: @escaping @Sendable (CoordinationSession) throws -> T) async throws -> T {
        guard let url else { throw StoreError(code: .unsupported, message: "the coordination connection exists on PostgreSQL only") }
        try startIfNeeded(url)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job: CoordinationJob = { session in continuation.resume(with: Result { try body(session) }) }
            if !jobs.enqueue(job) { continuation.resume(throwing: StoreError.closedStore) }
        }
    }

    private func startIfNeeded(_ url: PostgresURL) throws {
        try started.withLock { started in
            guard !started else { return }
            let (jobs, configuration) = (self.jobs, self.configuration)
            try jobs.startWorker(name: "sgem-coordination") {
                let session = CoordinationSession(url: url, configuration: configuration)
                while let taken = jobs.take(limit: 1) {
                    for job in taken { job(session) }
                }
                session.close()
            }
            started = true
        }
    }

    /// What this store knows of its hold on `lock`, made on first use.
    func hold(_ lock: StoreLock) -> LeadershipHold {
        holds.withLock { all in
            if let known = all[lock] { return known }
            let made = LeadershipHold()
            all[lock] = made
            return made
        }
    }

    /// Refuses new work; the thread finishes what is queued, then closes the session.
    func stop() { jobs.stop() }

    /// `stop`, then waits until the session is closed (its locks released).
    func close() async {
        jobs.stop()
        await jobs.waitUntilStopped()
    }
}

typealias CoordinationJob = @Sendable (CoordinationSession) -> Void

/// The coordination thread's session: connected on demand, again after a loss, each time a new
/// session (`generation`) whose session-level locks are its own. Confined to that thread.
final class CoordinationSession {
    private let url: PostgresURL
    private let configuration: StoreConfiguration
    private var current: PostgresStoreConnection?
    /// Sessions opened so far; a session-level lock belongs to the one that took it.
    private(set) var generation = 0

    init(url: PostgresURL, configuration: StoreConfiguration) {
        self.url = CoordinationSession.keepingAlive(url)
        self.configuration = configuration
    }

    /// The session's connection while it is usable; nil before the first use or once it broke.
    var usable: PostgresStoreConnection? { current?.isUsable == true ? current : nil }

    /// The connection, opened first when there is none or it broke (a new session).
    func connection() throws -> PostgresStoreConnection {
        if let usable { return usable }
        current = nil
        let opened = try PostgresStoreConnection(url: url, configuration: configuration)
        // The server notices a peer that went silent (a host gone, a cable pulled) within about
        // half a minute and ends its session, releasing the locks it held; a Unix socket ignores these.
        try opened.connection.execute("SET tcp_keepalives_idle = 10")
        try opened.connection.execute("SET tcp_keepalives_interval = 5")
        try opened.connection.execute("SET tcp_keepalives_count = 3")
        generation += 1
        current = opened
        return opened
    }

    func close() {
        current?.close()
        current = nil
    }

    /// `url` with libpq's keepalives and a TCP user timeout unless it sets them: a holder whose
    /// server went silent finds out in about half a minute and steps down, rather than waiting
    /// out the kernel's retransmissions (many minutes) while another instance has taken over.
    static func keepingAlive(_ url: PostgresURL) -> PostgresURL {
        let wanted = [("keepalives", "1"), ("keepalives_idle", "10"), ("keepalives_interval", "5"), ("keepalives_count", "3"),
                      ("tcp_user_timeout", "30000")]
        let query = url.raw.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
        let given = Set(query.split(separator: "&").map { String($0.prefix { $0 != "=" }) })
        let added = wanted.filter { !given.contains($0.0) }.map { "\($0.0)=\($0.1)" }
        guard !added.isEmpty else { return url }
        let separator = url.raw.contains("?") ? (url.raw.hasSuffix("?") || url.raw.hasSuffix("&") ? "" : "&") : "?"
        return PostgresURL(url.raw + separator + added.joined(separator: "&")) ?? url
    }
}
