#if canImport(Glibc)
import Glibc
#endif
import CLinux
import COpenSSL
import SGEMSupport
import Synchronization

/// Lets a cancelled caller interrupt the blocking I/O of its request from another thread:
/// `shutdown(2)` wakes a `poll` on the socket at once. The lock also keeps a closed descriptor
/// (whose number may be reused) from being shut down: the owner detaches before closing.
final class CancelHandle: Sendable {
    private let state = Mutex<(fd: Int32, cancelled: Bool)>((-1, false))

    /// Registers the request's socket; false when the request was already cancelled.
    func attach(_ fd: Int32) -> Bool {
        state.withLock { s in
            if s.cancelled { return false }
            s.fd = fd
            return true
        }
    }

    func detach() { state.withLock { $0.fd = -1 } }

    func cancel() {
        state.withLock { s in
            s.cancelled = true
            if s.fd >= 0 { _ = Glibc.shutdown(s.fd, Int32(SHUT_RDWR)) }
        }
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}

/// One outbound connection (plain or TLS) driven by blocking calls on a client thread, each
/// wait a `poll` bounded by the request's deadline.
// @unchecked Sendable: owned by exactly one request's job at a time, or by the pool's idle list
// (under its lock) in between; never used by two threads at once.
final class ClientConnection: @unchecked Sendable {
    let fd: Int32
    let origin: String
    private(set) var tls: TLSStream?
    private var inbound: [UInt8] = []
    private var readIndex = 0
    private var closed = false
    /// Whether any byte of a response arrived on this connection for the current request.
    private(set) var receivedAny = false
    var lastUsed = MonotonicClock.nanoseconds()
    /// Set once a response left bytes unread after it: the connection is not reused.
    private(set) var hasLeftover = false

    private init(fd: Int32, origin: String) {
        self.fd = fd
        self.origin = origin
    }

    deinit { close() }

    /// Closes the socket (the caller has detached it from any `CancelHandle` first).
    func close() {
        guard !closed else { return }
        closed = true
        tls?.shutdown()
        tls = nil
        Glibc.close(fd)
    }

    // MARK: Opening

    /// Resolves the host, connects in turn to those of its addresses `policy` lets through (the
    /// very `sockaddr` checked: no second lookup) within the connect timeout, and completes the
    /// TLS handshake for https. The socket stays attached to `handle`.
    static func open(_ url: HTTPClientURL, tls: ClientTLSContext?, policy: OutboundPolicy, connectTimeout: Duration, deadline: UInt64,
                     handle: CancelHandle) throws(HTTPClientError) -> ClientConnection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        // getaddrinfo cannot be interrupted or bounded: it runs here, on a client thread.
        let rc = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard rc == 0, let list else {
            throw HTTPClientError(.resolveFailed, "cannot resolve \(url.host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        if handle.isCancelled { throw HTTPClientError(.cancelled, "the request was cancelled") }

        let connectDeadline = min(deadline, MonotonicClock.nanoseconds() + connectTimeout.nanoseconds)
        var lastFailure = "no address"
        var refusals: [String] = []
        var attempted = false
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let info = cursor {
            cursor = info.pointee.ai_next
            guard let sa = info.pointee.ai_addr, let address = IPAddress(UnsafePointer(sa)) else { continue }
            if let why = policy.refusal(host: url.host, address: address, port: url.port, localAddresses: OutboundPolicy.localAddresses()) {
                refusals.append(why)
                continue
            }
            attempted = true
            let fd = sgem_socket_nonblocking(info.pointee.ai_family)
            guard fd >= 0 else {
                lastFailure = "socket: \(String(cString: strerror(errno)))"
                continue
            }
            let connection = ClientConnection(fd: fd, origin: url.origin)
            guard handle.attach(fd) else { throw HTTPClientError(.cancelled, "the request was cancelled") }
            do {
                try connection.connect(info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: connectDeadline, totalDeadline: deadline, handle: handle)
            } catch let error where error.code == .connectFailed {
                handle.detach()
                connection.close()
                lastFailure = error.message
                continue
            } catch {
                handle.detach()
                connection.close()
                throw error
            }
            _ = sgem_set_nodelay(fd)
            if let tls {
                do {
                    try connection.handshake(tls.makeStream(fd: fd, url: url), deadline: deadline, handle: handle)
                } catch {
                    handle.detach()
                    connection.close()
                    throw error
                }
            }
            return connection
        }
        if !attempted && !refusals.isEmpty {
            throw HTTPClientError(.refusedDestination, "\(url.host) refused: \(refusals.joined(separator: ", "))")
        }
        throw HTTPClientError(.connectFailed, "cannot connect to \(url.hostHeader): \(lastFailure)")
    }

    private func connect(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, deadline: UInt64, totalDeadline: UInt64,
                         handle: CancelHandle) throws(HTTPClientError) {
        var rc = Glibc.connect(fd, address, length)
        while rc != 0 && errno == EINTR { rc = Glibc.connect(fd, address, length) }
        if rc == 0 { return }
        guard errno == EINPROGRESS else { throw HTTPClientError(.connectFailed, String(cString: strerror(errno))) }
        // Cancellation reaches this wait too: on Linux shutdown(2) aborts a connect in progress.
        let expired = deadline < totalDeadline ? HTTPClientError(.connectTimeout, "no connection within the connect timeout")
                                               : HTTPClientError(.timeout, "the request timed out while connecting")
        try wait(Int16(POLLOUT), until: deadline, expired: expired, handle: handle)
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { throw HTTPClientError(.connectFailed, String(cString: strerror(errno))) }
        guard error == 0 else { throw HTTPClientError(.connectFailed, String(cString: strerror(error))) }
    }

    private func handshake(_ stream: TLSStream, deadline: UInt64, handle: CancelHandle) throws(HTTPClientError) {
        tls = stream
        while true {
            switch stream.handshake() {
            case .done: return
            case .wouldBlock:
                try wait(Int16(stream.wantsWrite ? POLLOUT : POLLIN), until: deadline,
                         expired: HTTPClientError(.timeout, "the request timed out during the TLS handshake"), handle: handle)
            case .closed, .failed:
                if handle.isCancelled { throw HTTPClientError(.cancelled, "the request was cancelled") }
                throw ClientTLSContext.handshakeFailure(stream)
            }
        }
    }

    // MARK: Reuse

    /// Whether an idle connection can carry another request: not closed or written to by the
    /// server meanwhile (either makes it readable).
    var isReusable: Bool {
        guard !closed, !hasLeftover else { return false }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0
    }

    // MARK: One exchange

    /// Sends `request` and reads one complete response (interim 1xx answers skipped).
    func exchange(_ request: [UInt8], method: HTTPMethod, maxHeaderBytes: Int, maxBodyBytes: Int, deadline: UInt64,
                  handle: CancelHandle) throws(HTTPClientError) -> (ResponseHead, [UInt8]) {
        receivedAny = false
        try send(request, deadline: deadline, handle: handle)
        var head: ResponseHead
        repeat {
            head = try readHead(method: method, maxHeaderBytes: maxHeaderBytes, deadline: deadline, handle: handle)
        } while head.status < 200 && head.status != 101
        var body: [UInt8] = []
        switch head.framing {
        case .none:
            break
        case .length(let length):
            guard length <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "the response announces \(length) bytes, over the \(maxBodyBytes)-byte cap") }
            while inbound.count - readIndex < length {
                guard try receive(deadline: deadline, handle: handle) else { throw closedEarly("inside the body") }
            }
            body = Array(inbound[readIndex..<readIndex + length])
            readIndex += length
        case .chunked:
            var decoder = ChunkedDecoder()
            decoding: while true {
                let (consumed, step) = inbound[readIndex...].withUnsafeBytes { decoder.feed($0, into: &body, limit: maxBodyBytes) }
                readIndex += consumed
                // Chunk framing and trailers are not counted against the cap: drop what was
                // decoded so they cannot grow the buffer either.
                if readIndex >= 65536 {
                    inbound.removeFirst(readIndex)
                    readIndex = 0
                }
                switch step {
                case .done: break decoding
                case .tooLarge: throw HTTPClientError(.tooLarge, "the chunked response exceeds the \(maxBodyBytes)-byte cap")
                case .failure(let error): throw HTTPClientError(.badResponse, error.message)
                case .needMore:
                    guard try receive(deadline: deadline, handle: handle) else { throw closedEarly("inside the chunked body") }
                }
            }
        case .untilClose:
            repeat {
                guard inbound.count - readIndex <= maxBodyBytes else { throw HTTPClientError(.tooLarge, "the response exceeds the \(maxBodyBytes)-byte cap") }
            } while try receive(deadline: deadline, handle: handle)
            body = Array(inbound[readIndex...])
            readIndex = inbound.count
        }
        hasLeftover = readIndex < inbound.count
        inbound.removeAll(keepingCapacity: inbound.capacity <= 65536)
        readIndex = 0
        lastUsed = MonotonicClock.nanoseconds()
        return (head, body)
    }

    private func readHead(method: HTTPMethod, maxHeaderBytes: Int, deadline: UInt64, handle: CancelHandle) throws(HTTPClientError) -> ResponseHead {
        var searchFrom = readIndex
        while true {
            if let end = findHeadEnd(from: searchFrom) {
                let head = try ResponseParser.parseHead(inbound[readIndex..<end], requestMethod: method)
                readIndex = end + 4
                return head
            }
            guard inbound.count - readIndex <= maxHeaderBytes else { throw HTTPClientError(.badResponse, "the response head exceeds \(maxHeaderBytes) bytes") }
            searchFrom = max(readIndex, inbound.count - 3)
            guard try receive(deadline: deadline, handle: handle) else {
                throw closedEarly(inbound.count == readIndex ? "before answering" : "inside the response head")
            }
        }
    }

    private func findHeadEnd(from start: Int) -> Int? {
        var i = start
        while i + 3 < inbound.count {
            if inbound[i] == 0x0D, inbound[i + 1] == 0x0A, inbound[i + 2] == 0x0D, inbound[i + 3] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    private func closedEarly(_ where: String) -> HTTPClientError {
        HTTPClientError(.badResponse, "the server closed the connection \(`where`)")
    }

    // MARK: Bytes

    private func send(_ bytes: [UInt8], deadline: UInt64, handle: CancelHandle) throws(HTTPClientError) {
        var offset = 0
        let expired = HTTPClientError(.timeout, "the request timed out while sending")
        while offset < bytes.count {
            if let tls {
                let result = bytes.withUnsafeBytes { tls.write($0.baseAddress! + offset, $0.count - offset) }
                switch result {
                case .done(let n): offset += n
                case .wouldBlock: try wait(Int16(tls.wantsWrite ? POLLOUT : POLLIN), until: deadline, expired: expired, handle: handle)
                case .closed, .failed: throw HTTPClientError(.badResponse, "the connection failed while sending" + tls.lastError)
                }
            } else {
                let n = bytes.withUnsafeBytes { sgem_send(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n >= 0 {
                    offset += n
                } else if errno == EINTR {
                    continue
                } else if errno == EAGAIN || errno == EWOULDBLOCK {
                    try wait(Int16(POLLOUT), until: deadline, expired: expired, handle: handle)
                } else {
                    throw HTTPClientError(.badResponse, "the connection failed while sending: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    /// Appends what arrives to `inbound`; false at end of stream (or a reset).
    private func receive(deadline: UInt64, handle: CancelHandle) throws(HTTPClientError) -> Bool {
        let expired = HTTPClientError(.timeout, "the request timed out waiting for the response")
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            if let tls {
                let result = chunk.withUnsafeMutableBytes { tls.read($0.baseAddress!, $0.count) }
                switch result {
                case .done(let n):
                    inbound.append(contentsOf: chunk[0..<n])
                    receivedAny = true
                    return true
                case .wouldBlock: try wait(Int16(tls.wantsWrite ? POLLOUT : POLLIN), until: deadline, expired: expired, handle: handle)
                case .closed, .failed: return false
                }
            } else {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    inbound.append(contentsOf: chunk[0..<n])
                    receivedAny = true
                    return true
                }
                if n == 0 { return false }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: try wait(Int16(POLLIN), until: deadline, expired: expired, handle: handle)
                default: return false
                }
            }
        }
    }

    /// Waits until the socket is ready for `events` (or hung up), throwing `expired` at
    /// `deadline` and `cancelled` once the caller went away (its shutdown(2) wakes the poll).
    private func wait(_ events: Int16, until deadline: UInt64, expired: HTTPClientError, handle: CancelHandle) throws(HTTPClientError) {
        while true {
            if handle.isCancelled { throw HTTPClientError(.cancelled, "the request was cancelled") }
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else { throw expired }
            let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, 60_000))
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, milliseconds)
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw HTTPClientError(.badResponse, "poll failed: \(String(cString: strerror(errno)))") }
        }
    }
}
