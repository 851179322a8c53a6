#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMSupport
import Synchronization
@testable import SGEMHTTP

/// A scripted HTTP/1.1 server for the client tests on 127.0.0.1, port 0: each connection on its
/// own thread, each request answered by the handler with raw bytes, so tests can send anything
/// (chunked bodies, garbage, nothing at all).
final class StubServer: Sendable {
    enum Reply: Sendable {
        /// These bytes, then keep reading requests (or close when `close`).
        case bytes([UInt8], close: Bool)
        /// Nothing: read on until the client goes away.
        case hang
    }

    struct Request: Sendable {
        let head: String
        let body: [UInt8]
        var requestLine: String { String(head.split(separator: "\r\n").first ?? "") }
    }

    let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    /// Connections accepted, and those the client has closed since.
    let accepted = Atomic<Int>(0)
    let clientClosed = Atomic<Int>(0)
    private let state = Mutex<(requests: [Request], open: Set<Int32>, stopped: Bool)>(([], [], false))

    var requests: [Request] { state.withLock { $0.requests } }

    init(_ handler: @escaping @Sendable (Request) -> Reply) throws {
        self.handler = handler
        (listener, port) = try loopbackSocket(listening: 64)
        try startThread(name: "stub-accept") { [self] in acceptLoop() }
    }

    /// Closes the listener and every open connection.
    func stop() {
        let open = state.withLock { s -> Set<Int32> in
            s.stopped = true
            return s.open
        }
        _ = Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit { Glibc.close(listener) }

    private func acceptLoop() {
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
            do { try startThread(name: "stub-conn") { [self] in serve(fd) } } catch { Glibc.close(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.open.remove(fd) }
            Glibc.close(fd)
        }
        var buffer: [UInt8] = []
        func fill() -> Bool { receiveSome(fd, into: &buffer) }
        while true {
            var headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            while headEnd == nil {
                guard fill() else {
                    clientClosed.add(1, ordering: .sequentiallyConsistent)
                    return
                }
                headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            }
            let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self)
            buffer.removeFirst(headEnd!.upperBound)
            let length = head.split(separator: "\r\n").compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingASCIISpaces())
            }.first ?? 0
            while buffer.count < length { if !fill() { return } }
            let request = Request(head: head, body: Array(buffer[..<length]))
            buffer.removeFirst(length)
            state.withLock { $0.requests.append(request) }
            switch handler(request) {
            case .hang:
                while fill() {}
                clientClosed.add(1, ordering: .sequentiallyConsistent)
                return
            case .bytes(let bytes, let close):
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { sgem_send(fd, $0.baseAddress! + offset, $0.count - offset) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    offset += n
                }
                if close { return }
            }
        }
    }

    /// A complete response with a Content-Length body.
    static func response(_ status: Int = 200, _ body: String = "", headers: [String] = []) -> [UInt8] {
        Array(("HTTP/1.1 \(status) X\r\n" + headers.map { $0 + "\r\n" }.joined() + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
    }
}
