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
        connection.onDrain = { [unowned connection] in transport.buffered.store(connection.outboundBytes, ordering: .relaxed) }
        connection.onClose = { session.transportClosed() }
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
/// the connection, which calls back into the session.
// Sendable: the counters are atomics; the connection is only touched inside `loop.execute`.
final class ConnectionTransport: WebSocketTransport, @unchecked Sendable {
    let connection: Connection
    let cap: Int
    /// Bytes handed to `write` that the loop has not queued on the socket yet.
    let inTransit = Atomic<Int>(0)
    /// The connection's unsent bytes, as last seen by the loop.
    let buffered = Atomic<Int>(0)

    init(connection: Connection, cap: Int) {
        self.connection = connection
        self.cap = cap
    }

    func write(_ bytes: [UInt8]) -> Bool {
        let count = bytes.count
        if inTransit.load(ordering: .relaxed) + buffered.load(ordering: .relaxed) + count > cap { return false }
        inTransit.add(count, ordering: .relaxed)
        let connection = self.connection
        connection.loop.execute {
            connection.write(bytes)
            self.inTransit.subtract(count, ordering: .relaxed)
            self.buffered.store(connection.outboundBytes, ordering: .relaxed)
        }
        return true
    }

    func closeAfterFlush() {
        let connection = self.connection
        connection.loop.execute { connection.closeAfterFlush() }
    }

    func closeNow() {
        let connection = self.connection
        connection.loop.execute { connection.close() }
    }
}
