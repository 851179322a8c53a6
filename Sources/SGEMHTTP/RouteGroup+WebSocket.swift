import Synchronization

extension RouteGroup {
    /// A GET route that upgrades to a WebSocket once this group's middleware has let the request
    /// through and the handshake is valid; `handler` then serves the connection.
    public func webSocket(_ path: String, doc: RouteDoc? = nil, _ handler: @escaping WebSocketHandler) {
        on(.GET, path, doc: doc) { request, context in
            switch WebSocketHandshake.response(for: request) {
            case .success(let response):
                context.upgrade = WebSocketUpgrade(handler: handler, request: request)
                return response
            case .failure(let error):
                throw error
            }
        }
    }
}

/// Switches a connection to WebSocket mode after the 101 went out.
struct WebSocketUpgrade: ConnectionUpgrade {
    let handler: WebSocketHandler
    /// The upgrade request as the route saw it (path parameters filled in).
    let request: Request

    func start(on connection: Connection, context: RequestContext) {
        let loop = connection.loop
        let configuration = loop.core.configuration
        let transport = ConnectionTransport(connection: connection, cap: configuration.webSocketMaxBufferedBytes)
        let session = WebSocketSession(transport: transport, maxMessageBytes: configuration.webSocketMaxMessageBytes,
                                       pingInterval: configuration.webSocketPingInterval)
        connection.upgradedReceiver = { session.receive($0) }
        connection.onTick = { session.tick(now: $0) }
        connection.onDrain = { [unowned connection] in transport.update(buffered: connection.outboundBytes) }
        connection.onClose = {
            session.transportClosed()
            transport.wakeDrainWaiters(closed: true)
        }
        // Shutdown: a close handshake with 1001 (going away); the server waits for the handler.
        connection.onShutdown = { session.socket.close(code: WebSocketFrame.CloseCode.goingAway, reason: "server shutting down") }
        loop.inFlight += 1
        let handler = self.handler
        let request = self.request
        Task(executorPreference: loop) {
            await handler(request, context, session.socket)
            if !session.socket.isClosed { session.socket.close() }
            loop.execute { loop.inFlight -= 1 }
        }
    }
}

/// The session's byte pipe into a connection. Writes always hop onto the loop (even from the
/// loop thread) because the session calls in while holding its lock and a failed write closes
/// the connection, which calls back into the session. Writers of a backlog wait for the queue to
/// drain (`whenBuffered`): the loop wakes them as the peer takes bytes.
// Sendable: the counters are atomics and the drain waiters sit in a Mutex; the connection is
// only touched inside `loop.execute` (and `update`, which the loop calls).
final class ConnectionTransport: WebSocketTransport, @unchecked Sendable {
    struct DrainWaiters {
        var closed = false
        var waiting: [(lowWater: Int, resume: @Sendable () -> Void)] = []
    }

    let connection: Connection
    let cap: Int
    /// Bytes handed to `write` that the loop has not queued on the socket yet.
    let inTransit = Atomic<Int>(0)
    /// The connection's unsent bytes, as last seen by the loop.
    let buffered = Atomic<Int>(0)
    private let drainWaiters = Mutex(DrainWaiters())

    init(connection: Connection, cap: Int) {
        self.connection = connection
        self.cap = cap
    }

    var bufferedBytes: Int { inTransit.load(ordering: .relaxed) + buffered.load(ordering: .relaxed) }
    var bufferLimit: Int { cap }

    func write(_ bytes: [UInt8]) -> Bool {
        if bufferedBytes + bytes.count > cap { return false }
        enqueue(bytes)
        return true
    }

    func writePastCap(_ bytes: [UInt8]) -> Bool {
        enqueue(bytes)
        return true
    }

    private func enqueue(_ bytes: [UInt8]) {
        let count = bytes.count
        inTransit.add(count, ordering: .relaxed)
        let connection = self.connection
        connection.loop.execute {
            connection.write(bytes)
            self.inTransit.subtract(count, ordering: .relaxed)
            self.update(buffered: connection.outboundBytes)
        }
    }

    /// On the loop: the connection's unsent bytes changed.
    func update(buffered bytes: Int) {
        buffered.store(bytes, ordering: .relaxed)
        wakeDrainWaiters(closed: false)
    }

    func whenBuffered(atMost lowWater: Int, _ resume: @escaping @Sendable () -> Void) {
        // The level is read under the waiters' lock, after which every update takes that lock
        // too: a drain between the check and the registration cannot be missed.
        let now = drainWaiters.withLock { w -> Bool in
            if w.closed || bufferedBytes <= lowWater { return true }
            w.waiting.append((lowWater, resume))
            return false
        }
        if now { resume() }
    }

    /// Resumes the waiters whose low-water mark the queue is under (all of them once `closed`).
    func wakeDrainWaiters(closed: Bool) {
        let ready = drainWaiters.withLock { w -> [@Sendable () -> Void] in
            if closed { w.closed = true }
            guard !w.waiting.isEmpty else { return [] }
            let level = bufferedBytes
            let ready = w.waiting.filter { w.closed || level <= $0.lowWater }.map(\.resume)
            if !ready.isEmpty { w.waiting.removeAll { w.closed || level <= $0.lowWater } }
            return ready
        }
        for resume in ready { resume() }
    }

    func closeAfterFlush() {
        wakeDrainWaiters(closed: true)
        let connection = self.connection
        connection.loop.execute { connection.closeAfterFlush() }
    }

    func closeNow() {
        wakeDrainWaiters(closed: true)
        let connection = self.connection
        connection.loop.execute { connection.close() }
    }
}
