/// One complete (reassembled) WebSocket message.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])

    /// Payload size in bytes, used for buffer accounting.
    var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}

/// Serves one upgraded connection; the socket is closed when the handler returns.
public typealias WebSocketHandler = @Sendable (Request, RequestContext, WebSocket) async -> Void

/// The byte pipe a `WebSocketSession` writes to: the upgraded HTTP connection.
///
/// Both methods may be called from any thread. They must not call back into the session
/// synchronously (the session calls them while holding its lock); hop to the loop instead.
public protocol WebSocketTransport: AnyObject, Sendable {
    /// Queues `bytes` for sending; false when the outbound buffer would exceed its cap,
    /// in which case the session drops the peer.
    func write(_ bytes: [UInt8]) -> Bool
    /// Flushes what is queued, then closes the TCP connection.
    func closeAfterFlush()
    /// Closes the TCP connection now, discarding what is queued: used when the peer stopped
    /// reading (buffer full) or answering (ping or close-handshake timeout), where a flush
    /// could wait forever. Defaults to `closeAfterFlush()`.
    func closeNow()
    /// Queues `bytes` even past the cap: a short last frame (a notice, then the close) for a
    /// peer that could not keep up, so it learns why it was closed. False once closed.
    func writePastCap(_ bytes: [UInt8]) -> Bool
    /// Bytes queued and not yet taken by the peer.
    var bufferedBytes: Int { get }
    /// The cap `write` enforces on `bufferedBytes`.
    var bufferLimit: Int { get }
    /// Calls `resume` once, when at most `lowWater` bytes are queued or the connection closed
    /// (at once if that is so already). It may run on any thread and must not block.
    func whenBuffered(atMost lowWater: Int, _ resume: @escaping @Sendable () -> Void)
}

extension WebSocketTransport {
    public func closeNow() { closeAfterFlush() }
    public func writePastCap(_ bytes: [UInt8]) -> Bool { write(bytes) }
    // A transport that keeps no queue of its own (a test's) is always writable.
    public var bufferedBytes: Int { 0 }
    public var bufferLimit: Int { .max }
    public func whenBuffered(atMost lowWater: Int, _ resume: @escaping @Sendable () -> Void) { resume() }
}
