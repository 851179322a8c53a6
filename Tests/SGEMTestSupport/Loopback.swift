#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import Synchronization

// Raw loopback sockets for test servers and clients: the listening socket, blocking reads and
// writes, and the accept loop every stub server shares.

/// A TCP socket bound to 127.0.0.1 on an ephemeral port, listening with `backlog` unless nil
/// (then connections to it are refused); throws after closing it if any step fails.
public func loopbackSocket(listening backlog: Int32?) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ready = withUnsafeMutablePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && (backlog.map { listen(fd, $0) == 0 } ?? true) && getsockname(fd, $0, &length) == 0
        }
    }
    guard ready else {
        let code = errno
        Glibc.close(fd)
        throw TestFailure("bind/listen failed: errno \(code)")
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// One blocking `recv` of at most `limit` bytes from `fd` appended to `buffer`; false on EOF,
/// reset or timeout.
public func receiveSome(_ fd: Int32, into buffer: inout [UInt8], limit: Int = 65536) -> Bool {
    var chunk = [UInt8](repeating: 0, count: limit)
    while true {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }
}

/// Sends all of `bytes` on `fd` (no SIGPIPE); false when the peer is gone first.
@discardableResult
public func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
    }
    return true
}

/// The listening side of a stub server on 127.0.0.1, port 0: once started, accepts on its own
/// thread and runs `serve` for each connection on another. `serve` must not close the descriptor: the listener
/// closes it when `serve` returns, and `stop()` shuts down every connection still open.
public final class StubListener: Sendable {
    public let port: Int
    /// Connections accepted so far.
    public let accepted = Atomic<Int>(0)
    private let listener: Int32
    private let state = Mutex<(open: Set<Int32>, stopped: Bool)>(([], false))

    /// Binds the listening socket; nothing is accepted before `start`.
    public init(backlog: Int32 = 64) throws {
        (listener, port) = try loopbackSocket(listening: backlog)
    }

    /// Starts accepting; `name` names the threads (`name`, `name-conn`).
    public func start(name: String, serve: @escaping @Sendable (Int32) -> Void) throws {
        try startThread(name: name) { [self] in acceptLoop(name: name + "-conn", serve: serve) }
    }

    deinit { Glibc.close(listener) }

    /// Closes the listener and every open connection; later connections are refused.
    public func stop() {
        // Under the lock: `finish` forgets a connection (under it too) before closing it, so
        // every number in `open` is still this stub's socket here, never one reused by another test.
        state.withLock { s in
            s.stopped = true
            for fd in s.open { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        _ = Glibc.shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop(name: String, serve: @escaping @Sendable (Int32) -> Void) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let registered = state.withLock { s -> Bool in
                if s.stopped { return false }
                s.open.insert(fd)
                return true
            }
            guard registered else {
                Glibc.close(fd)
                return
            }
            accepted.add(1, ordering: .sequentiallyConsistent)
            do {
                try startThread(name: name) { [self] in
                    serve(fd)
                    finish(fd)
                }
            } catch {
                finish(fd)
            }
        }
    }

    /// Forgets `fd`, then closes it (in that order, so `stop()` never shuts a reused number).
    private func finish(_ fd: Int32) {
        state.withLock { _ = $0.open.remove(fd) }
        Glibc.close(fd)
    }
}
