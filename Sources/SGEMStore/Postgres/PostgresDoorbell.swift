#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMSupport
import Synchronization

/// The doorbell on PostgreSQL: one dedicated thread owning one connection of its own (never the
/// writer's or a reader's, so a `NOTIFY` is never inside a write transaction), started by the
/// first ring or listener. It `LISTEN`s on the channel and waits with poll() on the connection's
/// socket and on an eventfd that `ring` writes to hand it a payload. A lost connection is made
/// again with a back-off of up to `maxBackoff`, listens again, and tells the listeners
/// `.listening` (what was sent meanwhile is gone).
final class PostgresDoorbell: Sendable {
    let url: PostgresURL
    let channel: String
    let logger: Logger
    let metrics: StoreMetrics
    /// Written by `ring` and `stop` to wake the thread out of poll(); -1 when it could not be made.
    private let wakeFD: Int32
    private let state = Mutex(State())

    /// Longest wait between two attempts to connect again.
    static let maxBackoff: Duration = .seconds(2)
    /// An idle connection is checked this often (`SELECT 1`): a server that went away without
    /// closing the socket (a restarted machine) is noticed by the next statement, not by poll().
    static let idleCheck: Duration = .seconds(30)

    struct State {
        var started = false
        var stopping = false
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []
        /// The payload of the newest ring not sent yet: rings while a NOTIFY is in flight become one.
        var pending: String?
        /// The eventfd was written and the thread has not taken `pending` since.
        var woken = false
        var listeners: [Int: AsyncStream<Doorbell.Ring>.Continuation] = [:]
        /// Called on this thread with each ring (`onRing`).
        var handlers: [@Sendable (Doorbell.Ring) -> Void] = []
        var nextListener = 0
        /// The listening connection's server process; nil while not listening.
        var listeningPID: Int32?
    }

    init(url: PostgresURL, channel: String, logger: Logger, metrics: StoreMetrics) {
        self.url = url
        self.channel = channel
        self.logger = logger.with("doorbell.channel", channel)
        self.metrics = metrics
        wakeFD = sgem_eventfd()
        if wakeFD < 0 {
            // Without it the thread could not be woken: rings stay local and listeners rely on their timers.
            logger.error("doorbell disabled: cannot create its eventfd", ["errno": String(errno)])
        }
    }

    deinit {
        // The thread holds `self` while it runs: this is after it ended.
        if wakeFD >= 0 { close(wakeFD) }
    }

    var listeningPID: Int32? { state.withLock { $0.listeningPID } }

    func ring(payload: String) {
        let (start, wake) = state.withLock { s -> (Bool, Bool) in
            guard !s.stopping else { return (false, false) }
            s.pending = payload
            defer { s.started = true; s.woken = true }
            return (!s.started, !s.woken)
        }
        if start { launch() }
        if wake { _ = sgem_eventfd_signal(wakeFD) }
    }

    func rings() -> AsyncStream<Doorbell.Ring> {
        let (stream, continuation) = AsyncStream<Doorbell.Ring>.makeStream(bufferingPolicy: .bufferingNewest(Doorbell.buffered))
        let registered = state.withLock { s -> (id: Int, start: Bool, listening: Bool)? in
            guard !s.stopping else { return nil }
            s.nextListener += 1
            s.listeners[s.nextListener] = continuation
            defer { s.started = true }
            return (s.nextListener, !s.started, s.listeningPID != nil)
        }
        // Yielded and finished outside the lock: a termination handler takes it.
        guard let registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: registered.id) }
        }
        if registered.listening { continuation.yield(.listening) }
        if registered.start { launch() }
        return stream
    }

    func onRing(_ handler: @escaping @Sendable (Doorbell.Ring) -> Void) {
        let registered = state.withLock { s -> (start: Bool, listening: Bool)? in
            guard !s.stopping else { return nil }
            s.handlers.append(handler)
            defer { s.started = true }
            return (!s.started, s.listeningPID != nil)
        }
        guard let registered else { return }
        if registered.listening { handler(.listening) }
        if registered.start { launch() }
    }

    func requestStop() {
        let (wake, ended) = state.withLock { s -> (Bool, [AsyncStream<Doorbell.Ring>.Continuation]) in
            guard !s.stopping else { return (false, []) }
            s.stopping = true
            guard s.started else {
                // Never started: nothing to wait for.
                s.exited = true
                defer { s.listeners.removeAll() }
                return (false, Array(s.listeners.values))
            }
            return (true, [])
        }
        for continuation in ended { continuation.finish() }
        if wake { _ = sgem_eventfd_signal(wakeFD) }
    }

    func stop() async {
        requestStop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { s -> Bool in
                if s.exited { return true }
                s.exitWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func launch() {
        guard wakeFD >= 0 else { return threadEnded() }
        do {
            try startThread(name: "sgem-doorbell") { [self] in
                run()
                threadEnded()
            }
        } catch {
            logger.error("doorbell disabled: cannot start its thread", ["error": String(describing: error)])
            threadEnded()
        }
    }

    private func threadEnded() {
        let (waiters, listeners) = state.withLock { s in
            s.exited = true
            s.listeningPID = nil
            defer { s.exitWaiters.removeAll(); s.listeners.removeAll(); s.handlers.removeAll() }
            return (s.exitWaiters, Array(s.listeners.values))
        }
        for listener in listeners { listener.finish() }
        for waiter in waiters { waiter.resume() }
    }

    // MARK: The thread

    private var isStopping: Bool { state.withLock { $0.stopping } }

    private func run() {
        var connection: PostgresConnection?
        var backoff: Duration = .zero
        var lost = false
        func drop(_ error: (any Error)?) {
            logger.warning("doorbell connection lost; listening again", ["error": error.map { String(describing: $0) } ?? "closed"])
            lost = true
            connection = nil
            state.withLock { $0.listeningPID = nil }
        }
        while !isStopping {
            guard let listening = connection, listening.isConnected else {
                if connection != nil { drop(nil) }
                if backoff > .zero {
                    pause(backoff)
                    if isStopping { break }
                }
                do {
                    let fresh = try PostgresConnection(url: url)
                    try fresh.listen(channel)
                    connection = fresh
                    backoff = .zero
                    if lost {
                        lost = false
                        metrics.doorbellReconnects.increment()
                        logger.notice("doorbell listening again")
                    }
                    broadcast(.listening, pid: fresh.backendPID)
                } catch {
                    if !lost { logger.warning("doorbell cannot listen; retrying", ["error": String(describing: error)]) }
                    lost = true
                    backoff = backoff == .zero ? .milliseconds(50) : min(backoff * 2, PostgresDoorbell.maxBackoff)
                }
                continue
            }
            _ = sgem_eventfd_drain(wakeFD)
            if let payload = takePending() {
                do {
                    try listening.notify(channel, payload: payload)
                    metrics.doorbellSent.increment()
                } catch where listening.isConnected {
                    // Refused (a full notification queue): dropped, the listeners' timers cover it.
                    logger.error("doorbell ring failed", ["error": String(describing: error)])
                } catch {
                    // Sent once listening again, unless a newer ring replaced it.
                    state.withLock { s in if s.pending == nil { s.pending = payload } }
                }
            }
            do {
                // A statement's answer may have brought notifications along: read them before waiting.
                deliver(try listening.pendingNotifications(), ownPID: listening.backendPID)
                if try !wait(on: listening) { try listening.execute("SELECT 1") }
            } catch {
                drop(error)
            }
        }
        // The last ring (the store's final commits) goes out before the thread ends — on a
        // connection of its own when the stop came before the listening one was up (an admin verb
        // rings and closes its store at once).
        if let payload = takePending() {
            let sender = connection.flatMap { $0.isConnected ? $0 : nil } ?? (try? PostgresConnection(url: url))
            if let sender, (try? sender.notify(channel, payload: payload)) != nil { metrics.doorbellSent.increment() }
        }
    }

    /// The payload to send, if a ring came since the last one was taken.
    private func takePending() -> String? {
        state.withLock { s in
            s.woken = false
            defer { s.pending = nil }
            return s.pending
        }
    }

    /// Waits for the server (a notification, or a closed socket) or a ring or a stop; false
    /// when nothing came for `idleCheck`.
    private func wait(on connection: PostgresConnection) throws -> Bool {
        var descriptors = [pollfd(fd: connection.socketDescriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        let rc = poll(&descriptors, 2, Int32(PostgresDoorbell.idleCheck.components.seconds * 1000))
        if rc < 0 {
            guard errno == EINTR else { throw StoreError(code: .system, message: "poll on the doorbell's connection failed: errno \(errno)") }
            return true
        }
        return rc > 0
    }

    /// Sleeps for `duration` before connecting again; a stop cuts it short, a ring does not.
    private func pause(_ duration: Duration) {
        let deadline = MonotonicClock.nanoseconds() + duration.wholeNanoseconds
        while !isStopping {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { return }
            var descriptor = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, Int32((deadline - now + 999_999) / 1_000_000)) > 0 {
                // A ring stays pending in `state` for when the connection is back.
                _ = sgem_eventfd_drain(wakeFD)
            }
        }
    }

    /// Hands other instances' notifications on this channel to the listeners, as one ring (the
    /// newest payload): every ring means "look", one look covers them all.
    private func deliver(_ notifications: [PostgresNotification], ownPID: Int32) {
        let remote = notifications.filter { $0.senderPID != ownPID && $0.channel == channel }
        guard let newest = remote.last else { return }
        metrics.doorbellReceived.increment(by: Double(remote.count))
        broadcast(.rang(payload: newest.payload))
    }

    /// Yields `ring` to every listener (outside the lock); `pid` marks the doorbell listening.
    private func broadcast(_ ring: Doorbell.Ring, pid: Int32? = nil) {
        let (listeners, handlers) = state.withLock { s in
            if let pid { s.listeningPID = pid }
            return (Array(s.listeners.values), s.handlers)
        }
        for listener in listeners { listener.yield(ring) }
        for handler in handlers { handler(ring) }
    }
}
