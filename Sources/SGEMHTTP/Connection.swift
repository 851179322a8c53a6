#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMSupport

/// Something a route asks the connection to become after a successful `101` (a WebSocket).
protocol ConnectionUpgrade: Sendable {
    func start(on connection: Connection, context: RequestContext)
}

/// One accepted socket: reads and parses requests, runs them one at a time in order (so
/// pipelined requests are answered in order), writes responses, enforces deadlines.
// @unchecked Sendable: every field is used only on `loop`'s thread; handler tasks report back
// through `complete`, which hops to that thread when needed.
final class Connection: @unchecked Sendable {
    enum State { case idle, head, body, handling, closing, lingering, upgraded, closed }

    let loop: EventLoop
    let fd: Int32
    let generation: UInt32
    let remoteAddress: String
    /// Whether the peer is a configured trusted proxy (its forwarding headers are believed).
    let peerIsTrustedProxy: Bool
    var tls: TLSStream?
    var state = State.idle

    var inbuf: [UInt8] = []
    var inStart = 0
    var outbuf: [UInt8] = []
    var outStart = 0

    var head: RequestHead?
    var pending: Request?
    var body: [UInt8] = []
    var remainingLength = 0
    var chunked: ChunkedDecoder?
    var bodyLimit = 0

    /// When the current phase must be over (0 = none).
    var deadline: UInt64
    var lastWriteProgress: UInt64 = 0
    var peerClosed = false
    /// Reading stopped at a cap (pipelined input while handling, or unsent output); the bytes
    /// already in the kernel are read once the cap clears, without waiting for a new edge.
    var readPaused = false
    /// Already on the loop's list to be read again next turn.
    var readScheduled = false
    let isSecure: Bool
    /// The running handler, cancelled if it overruns its deadline.
    var handlerTask: Task<Void, Never>?

    /// Set while upgraded: where bytes read go, what runs on every tick, what runs on close.
    var upgradedReceiver: ((UnsafeRawBufferPointer) -> Void)?
    var onTick: ((UInt64) -> Void)?
    var onClose: (() -> Void)?
    /// Called after queued output was flushed while upgraded.
    var onDrain: (() -> Void)?
    /// Called instead of closing when the server shuts down while upgraded (a WebSocket says 1001).
    var onShutdown: (() -> Void)?

    /// Bytes read per wake-up before the connection yields to the others on its loop.
    static let readBudget = 4 * EventLoop.readChunk

    /// A connection over `fd`; on an HTTPS server `tls` is its (already created) TLS state.
    init(loop: EventLoop, fd: Int32, generation: UInt32, remoteAddress: String, peerIsTrustedProxy: Bool, tls: TLSStream?) {
        self.loop = loop
        self.fd = fd
        self.generation = generation
        self.remoteAddress = remoteAddress
        self.peerIsTrustedProxy = peerIsTrustedProxy
        self.tls = tls
        isSecure = tls != nil
        // A fresh connection must deliver its first request head within the header timeout.
        deadline = loop.now + loop.core.headerTimeout
    }

    var outboundBytes: Int { outbuf.count - outStart }
    private var core: ServerCore { loop.core }

    // MARK: Events

    func handle(_ events: UInt32) {
        if state == .closed { return }
        if isSecure, let tls, !tls.handshakeDone {
            switch tls.handshake() {
            case .done: break
            case .wouldBlock: return
            case .closed, .failed:
                close()
                return
            }
        }
        if outboundBytes > 0 {
            flush()
            if state == .closed { return }
            onDrain?()
        }
        let hangup = events & (SGEM_EPOLLRDHUP | SGEM_EPOLLHUP | SGEM_EPOLLERR) != 0
        if isSecure || hangup || readPaused || events & SGEM_EPOLLIN != 0 {
            readAvailable(drainFully: hangup || isSecure)
        }
        if state != .closed { process() }
    }

    /// The loop's second turn for a connection that stopped at its read budget.
    func resumeReading() {
        readScheduled = false
        handle(SGEM_EPOLLIN)
    }

    /// Reads until the socket would block (edge-triggered), unless a cap says stop: enough
    /// pipelined input while a request is handled, too much unsent output, or this wake-up's
    /// read budget (then the loop comes back next turn, as no new edge would).
    private func readAvailable(drainFully: Bool) {
        readPaused = false
        var budget = Connection.readBudget
        while state != .closed && !peerClosed {
            if state == .handling && inbuf.count - inStart >= core.maxPipelineBuffer {
                readPaused = true
                return
            }
            if outStart != outbuf.count && state != .upgraded && outbuf.count - outStart >= core.maxOutboundBytes {
                readPaused = true
                return
            }
            if budget <= 0 {
                if !readScheduled {
                    readScheduled = true
                    core.readBudgetYields.value.add(1, ordering: .relaxed)
                    loop.readAgain.append(self)
                }
                return
            }
            let n: Int
            if let tls {
                switch tls.read(loop.scratch, EventLoop.readChunk) {
                case .done(let count): n = count
                case .wouldBlock: return
                case .closed: n = 0
                case .failed:
                    close()
                    return
                }
            } else {
                let r = Glibc.read(fd, loop.scratch, EventLoop.readChunk)
                if r < 0 {
                    if errno == EINTR { continue }
                    if errno != EAGAIN && errno != EWOULDBLOCK { close() }
                    return
                }
                n = r
            }
            if n == 0 {
                peerClosed = true
                return
            }
            budget -= n
            switch state {
            case .upgraded:
                upgradedReceiver?(UnsafeRawBufferPointer(start: loop.scratch, count: n))
            case .lingering, .closing:
                break // the answer is final; what the client still sends is discarded
            default:
                if state == .idle {
                    state = .head
                    deadline = loop.now + core.headerTimeout
                }
                if inStart == inbuf.count {
                    // Keep a small buffer for the next request; let a big body's memory go.
                    inbuf.removeAll(keepingCapacity: inbuf.capacity <= 64 * 1024)
                    inStart = 0
                } else if inStart > 32 * 1024 {
                    inbuf.removeFirst(inStart)
                    inStart = 0
                }
                inbuf.append(contentsOf: UnsafeRawBufferPointer(start: loop.scratch, count: n))
            }
            // A short read drained the socket; the next edge will report more.
            if !drainFully && n < EventLoop.readChunk { return }
        }
    }

    /// Parses and starts as many buffered requests as the state allows (one at a time).
    private func process() {
        while true {
            switch state {
            case .idle, .head:
                if inbuf.count == inStart {
                    // Half-closed and nothing left to answer: finish sending, then close.
                    if peerClosed { closeAfterFlush() }
                    return
                }
                // Back-pressure: no new request while the peer has not taken what it was sent.
                if outbuf.count - outStart >= core.maxOutboundBytes {
                    readPaused = true
                    return
                }
                if state == .idle {
                    state = .head
                    deadline = loop.now + core.headerTimeout
                }
                let result = inbuf.withUnsafeBytes {
                    RequestParser.parseHead(UnsafeRawBufferPointer(rebasing: $0[inStart...]),
                                            maxHeaderBytes: core.configuration.maxHeaderBytes,
                                            maxURIBytes: core.configuration.maxURIBytes)
                }
                switch result {
                case .incomplete:
                    if peerClosed { closeAfterFlush() }
                    return
                case .failure(let error):
                    fail(APIError(status: error.status, code: error.code, message: error.message))
                    return
                case .head(let head, let consumed):
                    inStart += consumed
                    begin(head)
                }
            case .body:
                if !consumeBody() {
                    if peerClosed && state == .body { close() }
                    return
                }
            case .lingering:
                if peerClosed { close() }
                return
            case .upgraded:
                // A WebSocket peer that went away without a close frame (a closed tab, a
                // dropped network): nothing more will come, so end it now, not at the ping timeout.
                if peerClosed { close() }
                return
            case .handling, .closing, .closed:
                return
            }
        }
    }

    private func begin(_ head: RequestHead) {
        self.head = head
        var clientAddress = remoteAddress
        var secure = isSecure
        if peerIsTrustedProxy {
            if let forwarded = Connection.forwardedClient(head.headers) { clientAddress = forwarded }
            if let proto = head.headers.values("X-Forwarded-Proto").last?.split(separator: ",").last {
                secure = HTTPHeaders.equalsIgnoringCase(proto.trimmingASCIISpaces(), "https")
            }
        }
        // Built in place: a local copy would retain and release every string and array in it.
        pending = Request(method: head.method, target: head.target, headers: head.headers,
                          remoteAddress: remoteAddress, clientAddress: clientAddress, isSecure: secure)
        let hasBody = head.chunked || (head.contentLength ?? 0) > 0
        guard hasBody else {
            dispatch()
            return
        }
        bodyLimit = core.router.maxBodyBytes(method: head.method, path: pending!.path)
        if let length = head.contentLength, length > bodyLimit {
            fail(.payloadTooLarge(limit: bodyLimit))
            return
        }
        if head.expectContinue { write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
        if head.chunked {
            chunked = ChunkedDecoder()
        } else {
            remainingLength = head.contentLength!
            // Reserve what is likely to arrive soon, not what the client merely announces.
            body.reserveCapacity(min(remainingLength, 64 * 1024))
        }
        state = .body
        deadline = loop.now + core.bodyTimeout
    }

    /// True once the body is complete (and the request dispatched) or the connection failed.
    private func consumeBody() -> Bool {
        let available = inbuf.count - inStart
        if var decoder = chunked {
            let (consumed, step) = inbuf.withUnsafeBytes {
                decoder.feed(UnsafeRawBufferPointer(rebasing: $0[inStart...]), into: &body, limit: bodyLimit)
            }
            inStart += consumed
            chunked = decoder
            switch step {
            case .needMore: return false
            case .done:
                chunked = nil
                dispatch()
            case .tooLarge: fail(.payloadTooLarge(limit: bodyLimit))
            case .failure(let error): fail(APIError(status: error.status, code: error.code, message: error.message))
            }
            return true
        }
        if available == 0 { return remainingLength == 0 ? { dispatch(); return true }() : false }
        let take = min(available, remainingLength)
        body.append(contentsOf: inbuf[inStart..<inStart + take])
        inStart += take
        remainingLength -= take
        guard remainingLength == 0 else { return false }
        dispatch()
        return true
    }

    private func dispatch() {
        // `take()` moves the request out: no copy of its strings and arrays to retain and release.
        guard var request = pending.take() else { return }
        request.body = body
        body = []
        state = .handling
        let router = core.router
        let instruments = core.instruments
        let prepared = router.prepare(&request, instruments: instruments)
        if let handler = router.synchronousHandler(for: prepared) {
            // Answered here and now, without a task: a synchronous handler cannot suspend, so
            // there is nothing to wait for or time out. `process` goes on with the next request
            // (calling it from here would nest one call deeper per pipelined request).
            respond(with: router.respondSynchronously(to: request, prepared, handler: handler, instruments: instruments,
                                                      setsRequestIDHeader: false))
            return
        }
        // While handling, `deadline` is the handler's: `tick` answers 503 when it passes.
        deadline = loop.now + core.handlerTimeout
        loop.inFlight += 1
        handlerTask = Task(executorPreference: loop) {
            let outcome = await router.respond(to: request, prepared, instruments: instruments, setsRequestIDHeader: false)
            self.complete(outcome)
        }
    }

    /// The right-most `X-Forwarded-For` entry (the one the trusted proxy itself added), if it
    /// is an IP address.
    static func forwardedClient(_ headers: HTTPHeaders) -> String? {
        guard let last = headers.values("X-Forwarded-For").last?.split(separator: ",").last else { return nil }
        let entry = last.trimmingASCIISpaces()
        return ServerCore.isIPAddress(entry) ? ServerCore.normalise(entry) : nil
    }

    /// The handler overran `handlerTimeout`: answer 503 and close, cancel it, and let `finish`
    /// discard whatever it returns later (the state is no longer `.handling`).
    private func handlerTimedOut() {
        handlerTask?.cancel()
        handlerTask = nil
        core.handlerTimeouts.increment()
        if let head {
            core.logger.warning("request handler timed out", ["method": head.method.rawValue, "remote": remoteAddress])
        }
        fail(APIError(status: 503, code: "timeout", message: "the request took too long to handle; retry later"))
    }

    /// Called by the handler task when the response is ready; hops to the loop thread if needed.
    func complete(_ outcome: Router.Outcome) {
        if loop.isOnLoopThread {
            finish(outcome)
        } else {
            let box = OutcomeBox(outcome: outcome)
            loop.execute { self.finish(box.outcome) }
        }
    }

    private func finish(_ outcome: Router.Outcome) {
        loop.inFlight -= 1
        guard state == .handling else { return }
        handlerTask = nil
        guard respond(with: outcome) else { return }
        if readPaused { readAvailable(drainFully: isSecure) }
        process()
    }

    /// Writes the answer to the request being handled; true when the connection is ready for the
    /// next request, false when it upgraded, is closing or closed.
    @discardableResult
    private func respond(with outcome: Router.Outcome) -> Bool {
        guard state == .handling, let head else { return false }
        self.head = nil
        let response = outcome.response
        if response.status == 101, let upgrade = outcome.context.upgrade as? any ConnectionUpgrade {
            write(response, head: head, keepAlive: true, upgrade: true, requestID: outcome.context.requestID)
            guard state != .closed else { return false }
            state = .upgraded
            deadline = 0
            upgrade.start(on: self, context: outcome.context)
            // Bytes that followed the upgrade request belong to the new protocol.
            if inStart < inbuf.count {
                let leftover = Array(inbuf[inStart...])
                inbuf = []
                inStart = 0
                leftover.withUnsafeBytes { upgradedReceiver?($0) }
            }
            return false
        }
        // A peer that half-closed still gets answers to what it already sent; `process` closes
        // once the buffer is empty.
        let keepAlive = head.keepAlive && !loop.shuttingDown
            && !response.headers.hasToken("Connection", "close")
        write(response, head: head, keepAlive: keepAlive, upgrade: false, requestID: outcome.context.requestID)
        if state == .closed { return false }
        if !keepAlive {
            closeAfterFlush()
            return false
        }
        state = .idle
        deadline = loop.now + core.idleTimeout
        return true
    }

    /// Answers with an error and closes: used when the request cannot be trusted or read further.
    private func fail(_ error: APIError) {
        let head = self.head ?? RequestHead(method: .GET, target: "/", minorVersion: 1, headers: HTTPHeaders())
        pending = nil
        self.head = nil
        write(ResponseWriter.serialize(.error(error), head: head, keepAlive: false, upgrade: false))
        if state != .closed { closeAfterFlush() }
    }

    // MARK: Writing

    /// Serialises a handler's answer in the loop's reused writer (no buffer per response) and
    /// queues it like `write(_:)`. Nothing reached from here serialises another response, so
    /// the writer is never in use twice.
    private func write(_ response: Response, head: RequestHead, keepAlive: Bool, upgrade: Bool, requestID: String) {
        guard state != .closed else { return }
        loop.responseBuffer.reset(keeping: 64 * 1024)
        ResponseWriter.serialize(response, head: head, keepAlive: keepAlive, upgrade: upgrade, requestID: requestID,
                                 into: &loop.responseBuffer)
        loop.responseBuffer.withBytes { write($0) }
    }

    /// Queues `bytes`, sending at once what the socket takes.
    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Queues `bytes`, sending at once what the socket takes.
    private func write(_ bytes: UnsafeRawBufferPointer) {
        guard state != .closed else { return }
        if outboundBytes == 0 {
            let n = send(bytes)
            if n < 0 {
                close()
                return
            }
            if n == bytes.count { return }
            outbuf.removeAll(keepingCapacity: true)
            outbuf.append(contentsOf: bytes[n...])
            outStart = 0
            // The stall clock starts when bytes begin to wait; only bytes the socket takes
            // (in `flush`) move it on, so queueing more never looks like progress.
            lastWriteProgress = loop.now
            core.queuedOutbound.value.add(bytes.count - n, ordering: .relaxed)
        } else {
            outbuf.append(contentsOf: bytes)
            core.queuedOutbound.value.add(bytes.count, ordering: .relaxed)
        }
    }

    /// Bytes accepted by the socket, or -1 when the connection failed.
    private func send(_ buffer: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while offset < buffer.count {
            if let tls {
                switch tls.write(buffer.baseAddress! + offset, buffer.count - offset) {
                case .done(let n): offset += n
                case .wouldBlock: return offset
                case .closed, .failed: return -1
                }
            } else {
                let n = sgem_send(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { return offset }
                    return -1
                }
                offset += n
            }
        }
        return offset
    }

    private func flush() {
        let n = outbuf.withUnsafeBytes { send(UnsafeRawBufferPointer(rebasing: $0[outStart...])) }
        if n < 0 {
            close()
            return
        }
        if n > 0 {
            lastWriteProgress = loop.now
            core.queuedOutbound.value.subtract(n, ordering: .relaxed)
        }
        outStart += n
        if outStart == outbuf.count {
            outbuf.removeAll(keepingCapacity: outbuf.capacity <= 64 * 1024)
            outStart = 0
            if state == .idle { deadline = loop.now + core.idleTimeout }
            if state == .closing { finishClosing() }
        }
    }

    /// Closes once everything queued has been sent.
    func closeAfterFlush() {
        guard state != .closed else { return }
        state = .closing
        // No deadline for the whole transfer: a slow but steady reader gets everything; `tick`
        // cuts off one that takes nothing for the idle timeout.
        deadline = 0
        if outboundBytes == 0 { finishClosing() }
    }

    /// After the last byte: half-close and drain briefly, so unread request bytes do not turn
    /// the close into a reset that destroys the response in flight.
    private func finishClosing() {
        if tls != nil || peerClosed {
            close()
            return
        }
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        state = .lingering
        deadline = loop.now + core.lingerTimeout
        readAvailable(drainFully: true)
        if peerClosed { close() }
    }

    func close() {
        guard state != .closed else { return }
        state = .closed
        let unsent = outbuf.count - outStart
        if unsent > 0 { core.queuedOutbound.value.subtract(unsent, ordering: .relaxed) }
        tls?.shutdown()
        tls = nil
        Glibc.close(fd)
        loop.remove(self)
        let closed = onClose
        upgradedReceiver = nil
        onTick = nil
        onClose = nil
        onDrain = nil
        onShutdown = nil
        handlerTask = nil
        inbuf = []
        outbuf = []
        pending = nil
        closed?()
    }

    // MARK: Timers and shutdown

    func tick(_ now: UInt64) {
        if deadline != 0 && now >= deadline {
            if state == .handling {
                handlerTimedOut()
                return
            }
            // A keep-alive connection still sending its last answer is not idle: the progress
            // check below decides, and the idle clock restarts when the last byte is taken.
            if !(state == .idle && outboundBytes > 0) {
                close()
                return
            }
        }
        // A peer that stops reading our output is cut off after the idle timeout.
        if outboundBytes > 0 && now &- lastWriteProgress > core.idleTimeout {
            close()
            return
        }
        onTick?(now)
    }

    func shutdownRequested() {
        switch state {
        case .idle: close()
        case .upgraded:
            if let onShutdown { onShutdown() } else { close() }
        default: break
        }
    }
}

/// Carries a finished outcome across threads; the values inside are only read on the loop.
// @unchecked Sendable: built by the handler task, then read once by the loop thread after the
// hand-off through the loop's Mutex-protected queue.
private final class OutcomeBox: @unchecked Sendable {
    let outcome: Router.Outcome
    init(outcome: Router.Outcome) { self.outcome = outcome }
}
