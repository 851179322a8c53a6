import Synchronization

/// One WebSocket connection as a handler sees it: incoming messages, sending, closing.
public final class WebSocket: Sendable {
    let core: WebSocketCore

    /// Complete (reassembled) messages from the peer; finishes when the connection closes.
    ///
    /// One consumer at a time. The stream pulls from a bounded queue: if the handler falls
    /// behind by more than the session's queue limits, the connection closes with 1008.
    public let messages: AsyncStream<WebSocketMessage>

    init(core: WebSocketCore) {
        self.core = core
        self.messages = AsyncStream(unfolding: { [core] in await core.nextMessage() })
    }

    /// Sends a message without waiting; false if the socket is closed or the peer is too slow
    /// (the connection is then dropped).
    @discardableResult
    public func send(_ message: WebSocketMessage) -> Bool {
        let frame = switch message {
        case .text(let text): WebSocketFrame.encode(.text, payload: text.utf8)
        case .binary(let bytes): WebSocketFrame.encode(.binary, payload: bytes)
        }
        return core.sendData(frame)
    }

    /// Sends a message encoded once for many sockets (a broadcast); see `send(_:)`.
    @discardableResult
    public func send(_ prepared: PreparedMessage) -> Bool { core.sendData(prepared.frame) }

    /// What became of a send that may close a slow peer.
    public enum SendOutcome: Sendable, Equatable {
        case sent
        /// The socket was closed already: nothing was sent.
        case closed
        /// The peer could not take it (the outbound buffer is full): it got the farewell and is being closed.
        case tooSlow
    }

    /// Sends `prepared`, or, when the peer is too slow to take it (the outbound buffer is full),
    /// sends `farewell` past the bound instead and closes with `code` once the peer took it: the
    /// peer learns that it missed something rather than being dropped in silence.
    @discardableResult
    public func send(_ prepared: PreparedMessage, orCloseWith farewell: PreparedMessage, code: UInt16, reason: String) -> SendOutcome {
        core.sendData(prepared.frame, orFinishWith: farewell.frame, code: code, reason: reason)
    }

    /// Sends `farewell` past the outbound bound (it must be short), then closes with `code` once
    /// the peer took what was queued before it, without waiting for the peer's close frame.
    public func close(after farewell: PreparedMessage, code: UInt16, reason: String) {
        core.finish(with: farewell.frame, code: code, reason: reason)
    }

    /// Bytes queued for the peer that it has not taken yet.
    public var bufferedBytes: Int { core.transport.bufferedBytes }

    /// Back-pressure for a writer of a large backlog: returns at once while at most half the
    /// outbound bound is queued, otherwise once the queue fell to `lowWater` (default: a quarter
    /// of the bound) as the peer reads, or the socket closed. False when closed.
    public func waitUntilWritable(lowWater: Int? = nil) async -> Bool {
        await core.waitUntilWritable(lowWater: lowWater)
    }

    /// Sends a text message; see `send(_:)`.
    @discardableResult
    public func send(text: String) -> Bool { send(.text(text)) }

    /// Starts the closing handshake: sends a close frame, then waits a short bound for the
    /// peer's close. Codes that may not appear on the wire (e.g. 1005) are sent as 1000.
    public func close(code: UInt16 = 1000, reason: String = "") {
        core.closeLocally(code: WebSocketFrame.isValidCloseCode(code) ? code : WebSocketFrame.CloseCode.normal, reason: reason)
    }

    /// Whether the connection is closing or closed: nothing more can be sent.
    public var isClosed: Bool { core.isClosed }

    /// The close code received from the peer or sent to it; 1005 for a close without a code,
    /// 1006 when the connection went away without a close frame.
    public var closeCode: UInt16? { core.closeCode }
}

/// A text message framed once and sent to any number of sockets: a server's frames are never
/// masked, so the bytes are the same for every peer (and shared, not copied, until written).
public struct PreparedMessage: Sendable {
    let frame: [UInt8]

    public init(text: String) { frame = WebSocketFrame.encode(.text, payload: text.utf8) }

    /// Bytes on the wire, frame header included.
    public var byteCount: Int { frame.count }
}

/// State shared by the loop-side session and the handler-side socket.
// Sendable: every mutable field is inside the Mutex; the transport is Sendable by contract.
final class WebSocketCore: Sendable {
    enum Phase: Sendable { case open, closeSent, closed }

    struct State: Sendable {
        var phase: Phase = .open
        var closeCode: UInt16?
        var inbox: [WebSocketMessage] = []
        var inboxHead = 0
        var inboxBytes = 0
        var inboxFinished = false
        var waiter: CheckedContinuation<WebSocketMessage?, Never>?
    }

    let transport: any WebSocketTransport
    let maxQueuedBytes: Int
    let maxQueuedMessages: Int
    private let state = Mutex(State())

    init(transport: any WebSocketTransport, maxQueuedBytes: Int, maxQueuedMessages: Int) {
        self.transport = transport
        self.maxQueuedBytes = maxQueuedBytes
        self.maxQueuedMessages = maxQueuedMessages
    }

    var phase: Phase { state.withLock { $0.phase } }
    var isClosed: Bool { state.withLock { $0.phase != .open } }
    var closeCode: UInt16? { state.withLock { $0.closeCode } }

    // Writes happen under the lock so that no data frame can follow the close frame and
    // frames from the loop (pongs) and the handler (messages) never interleave.

    /// Writes a data frame while open; drops the peer if the transport refuses it.
    func sendData(_ frame: [UInt8]) -> Bool {
        let (sent, waiter): (Bool, CheckedContinuation<WebSocketMessage?, Never>?) = state.withLock { s in
            guard s.phase == .open else { return (false, nil) }
            if transport.write(frame) { return (true, nil) }
            return (false, drop(&s, code: WebSocketFrame.CloseCode.policyViolation, flush: false))
        }
        waiter?.resume(returning: nil)
        return sent
    }

    /// Writes a data frame while open; when the transport refuses it, finishes with `farewell`.
    func sendData(_ frame: [UInt8], orFinishWith farewell: [UInt8], code: UInt16, reason: String) -> WebSocket.SendOutcome {
        let (outcome, waiter): (WebSocket.SendOutcome, CheckedContinuation<WebSocketMessage?, Never>?) = state.withLock { s in
            guard s.phase == .open else { return (.closed, nil) }
            if transport.write(frame) { return (.sent, nil) }
            return (.tooSlow, finish(&s, farewell: farewell, code: code, reason: reason))
        }
        waiter?.resume(returning: nil)
        return outcome
    }

    /// Sends `farewell` and a close frame past the cap, then closes after flushing them.
    func finish(with farewell: [UInt8], code: UInt16, reason: String) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            guard s.phase == .open else { return nil }
            return finish(&s, farewell: farewell, code: code, reason: reason)
        }
        waiter?.resume(returning: nil)
    }

    func waitUntilWritable(lowWater: Int?) async -> Bool {
        let limit = transport.bufferLimit
        guard !isClosed else { return false }
        if transport.bufferedBytes <= limit / 2 { return true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            transport.whenBuffered(atMost: lowWater ?? limit / 4) { continuation.resume() }
        }
        return !isClosed
    }

    /// Writes a control frame (ping/pong) while open.
    func sendControl(_ frame: [UInt8]) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            guard s.phase == .open, !transport.write(frame) else { return nil }
            return drop(&s, code: WebSocketFrame.CloseCode.policyViolation, flush: false)
        }
        waiter?.resume(returning: nil)
    }

    /// Our side starts the closing handshake.
    func closeLocally(code: UInt16, reason: String) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            guard s.phase == .open else { return nil }
            s.phase = .closeSent
            s.closeCode = code
            if !transport.write(WebSocketFrame.encodeClose(code: code, reason: reason)) {
                return drop(&s, code: code, flush: false)
            }
            return finishInbox(&s)
        }
        waiter?.resume(returning: nil)
    }

    /// The peer sent a close frame: echo it (unless we started) and close after flushing.
    func peerClosed(code: UInt16?) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            switch s.phase {
            case .closed:
                return nil
            case .open:
                s.closeCode = code ?? WebSocketFrame.CloseCode.noStatus
                _ = transport.write(WebSocketFrame.encodeClose(code: code, reason: ""))
            case .closeSent:
                break
            }
            s.phase = .closed
            transport.closeAfterFlush()
            return finishInbox(&s)
        }
        waiter?.resume(returning: nil)
    }

    /// Fails the connection: a close frame with `code` (if we may still send one), then close
    /// without waiting for the peer's answer. `flush: false` for a peer that stopped reading.
    func fail(code: UInt16, reason: String, flush: Bool = true) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            guard s.phase != .closed else { return nil }
            var sent = false
            if s.phase == .open {
                sent = transport.write(WebSocketFrame.encodeClose(code: code, reason: reason))
            }
            s.closeCode = code
            return drop(&s, code: code, flush: flush && sent)
        }
        waiter?.resume(returning: nil)
    }

    /// Closes the TCP connection now, e.g. when the peer stopped answering during the close handshake.
    func abort(code: UInt16) {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            guard s.phase != .closed else { return nil }
            return drop(&s, code: code, flush: false)
        }
        waiter?.resume(returning: nil)
    }

    /// The TCP connection went away; nothing can be written any more.
    func transportClosed() {
        let waiter: CheckedContinuation<WebSocketMessage?, Never>? = state.withLock { s in
            if s.closeCode == nil { s.closeCode = WebSocketFrame.CloseCode.abnormal }
            s.phase = .closed
            return finishInbox(&s)
        }
        waiter?.resume(returning: nil)
    }

    /// Hands a complete message to the handler, or fails with 1008 when the handler's queue is full.
    func deliver(_ message: WebSocketMessage) {
        enum Outcome { case none, resume(CheckedContinuation<WebSocketMessage?, Never>), overflow }
        let outcome: Outcome = state.withLock { s in
            guard s.phase == .open else { return .none }
            if let waiter = s.waiter {
                s.waiter = nil
                return .resume(waiter)
            }
            let queued = s.inbox.count - s.inboxHead
            guard queued < maxQueuedMessages, s.inboxBytes + message.byteCount <= maxQueuedBytes else { return .overflow }
            s.inbox.append(message)
            s.inboxBytes += message.byteCount
            return .none
        }
        switch outcome {
        case .none: break
        case .resume(let waiter): waiter.resume(returning: message)
        case .overflow: fail(code: WebSocketFrame.CloseCode.policyViolation, reason: "handler too slow")
        }
    }

    /// The next queued message, waiting for one; nil once the connection closed and the queue drained.
    func nextMessage() async -> WebSocketMessage? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WebSocketMessage?, Never>) in
                enum Outcome { case wait, value(WebSocketMessage?) }
                let outcome: Outcome = state.withLock { s in
                    if s.inboxHead < s.inbox.count {
                        let message = s.inbox[s.inboxHead]
                        s.inboxHead += 1
                        s.inboxBytes -= message.byteCount
                        if s.inboxHead == s.inbox.count {
                            s.inbox.removeAll(keepingCapacity: true)
                            s.inboxHead = 0
                        }
                        return .value(message)
                    }
                    // A cancelled or second concurrent consumer gets the end of the stream.
                    if s.inboxFinished || Task.isCancelled || s.waiter != nil { return .value(nil) }
                    s.waiter = continuation
                    return .wait
                }
                if case .value(let message) = outcome { continuation.resume(returning: message) }
            }
        } onCancel: {
            let waiter = state.withLock { s in
                let w = s.waiter
                s.waiter = nil
                return w
            }
            waiter?.resume(returning: nil)
        }
    }

    // MARK: - Helpers called with the lock held

    /// Queues `farewell` and the close frame whatever the cap (a slow but reading peer gets
    /// them; the connection's stall timeout cuts off one that reads nothing), then closes after flushing.
    private func finish(_ s: inout State, farewell: [UInt8], code: UInt16, reason: String) -> CheckedContinuation<WebSocketMessage?, Never>? {
        let sent = transport.writePastCap(farewell) && transport.writePastCap(WebSocketFrame.encodeClose(code: code, reason: reason))
        s.closeCode = code
        return drop(&s, code: code, flush: sent)
    }

    /// Closes the TCP connection without waiting for the peer's close frame (after flushing
    /// what is queued, or at once); returns the waiter to resume outside the lock.
    private func drop(_ s: inout State, code: UInt16, flush: Bool) -> CheckedContinuation<WebSocketMessage?, Never>? {
        if s.closeCode == nil { s.closeCode = code }
        s.phase = .closed
        if flush { transport.closeAfterFlush() } else { transport.closeNow() }
        return finishInbox(&s)
    }

    /// Marks the queue finished; a waiting consumer (queue empty) is handed back to be resumed with nil.
    private func finishInbox(_ s: inout State) -> CheckedContinuation<WebSocketMessage?, Never>? {
        s.inboxFinished = true
        let waiter = s.waiter
        s.waiter = nil
        return waiter
    }
}
