import SGEMSupport

/// The server side of one upgraded connection: parses the peer's frames, answers pings and
/// closes, keeps the connection alive with pings, and feeds complete messages to `socket`.
///
/// The connection owns it and calls `receive`, `transportClosed` and `tick` from its event loop.
// @unchecked Sendable: the parser and the timer fields are touched only by those three methods,
// which the owning event loop calls one at a time; everything the handler's task shares
// (phase, close code, message queue, writes) is behind the Mutex in `WebSocketCore`.
public final class WebSocketSession: @unchecked Sendable {
    /// What the handler uses.
    public let socket: WebSocket

    let core: WebSocketCore
    private var parser: WebSocketFrameParser
    private var events: [WebSocketFrameParser.Event] = []
    private let pingInterval: UInt64?
    private let closeTimeout: UInt64
    /// Clock fields in the `tick` clock; set lazily so the session never reads a clock itself.
    private var heardSinceTick = false
    private var lastHeard: UInt64?
    private var lastPing: UInt64?
    private var closingSince: UInt64?

    /// A session over `transport`.
    ///
    /// - Parameters:
    ///   - maxMessageBytes: the largest message (after reassembly) accepted from the peer; larger → 1009.
    ///   - pingInterval: how often to ping; the peer is dropped after two intervals of silence. nil: no pings.
    ///   - maxQueuedBytes: message bytes the handler may leave unread before the session closes with 1008;
    ///     nil means four messages' worth (at least 64 KiB).
    ///   - maxQueuedMessages: the same limit counted in messages.
    ///   - closeTimeout: how long a local close waits for the peer's close frame.
    public init(transport: any WebSocketTransport, maxMessageBytes: Int, pingInterval: Duration?,
                maxQueuedBytes: Int? = nil, maxQueuedMessages: Int = 1024, closeTimeout: Duration = .seconds(3)) {
        core = WebSocketCore(transport: transport,
                             maxQueuedBytes: maxQueuedBytes ?? max(4 * maxMessageBytes, 64 * 1024),
                             maxQueuedMessages: maxQueuedMessages)
        socket = WebSocket(core: core)
        parser = WebSocketFrameParser(maxMessageBytes: maxMessageBytes)
        self.pingInterval = pingInterval?.wholeNanoseconds
        self.closeTimeout = closeTimeout.wholeNanoseconds
    }

    /// Bytes from the peer, in any split.
    public func receive(_ bytes: UnsafeRawBufferPointer) {
        guard core.phase != .closed else { return }
        heardSinceTick = true
        events.removeAll(keepingCapacity: true)
        let failure = parser.parse(bytes, into: &events)
        for event in events {
            switch event {
            case .message(let message): core.deliver(message)
            case .ping(let payload): core.sendControl(WebSocketFrame.encode(.pong, payload: payload))
            case .pong: break
            case .close(let code, _): core.peerClosed(code: code)
            }
            if core.phase == .closed { return }
        }
        if let failure { core.fail(code: failure.code, reason: failure.reason) }
    }

    /// The TCP connection went away.
    public func transportClosed() {
        core.transportClosed()
    }

    /// Timer hook (monotonic nanoseconds): pings every interval, drops a silent peer after two
    /// intervals, and ends a close handshake the peer does not finish.
    public func tick(now: UInt64) {
        if heardSinceTick || lastHeard == nil {
            lastHeard = now
            heardSinceTick = false
        }
        switch core.phase {
        case .closed:
            return
        case .closeSent:
            if let since = closingSince {
                if now &- since >= closeTimeout { core.abort(code: WebSocketFrame.CloseCode.abnormal) }
            } else {
                closingSince = now
            }
        case .open:
            guard let interval = pingInterval, let heard = lastHeard else { return }
            if now &- heard >= 2 * interval {
                core.fail(code: WebSocketFrame.CloseCode.goingAway, reason: "ping timeout", flush: false)
                return
            }
            guard let pinged = lastPing else {
                lastPing = now
                return
            }
            if now &- pinged >= interval {
                lastPing = now
                core.sendControl(WebSocketFrame.encode(.ping, payload: [UInt8]()))
            }
        }
    }
}
