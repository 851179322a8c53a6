#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import Synchronization

/// A scripted HTTP/1.1 server on 127.0.0.1, port 0, for tests of outbound calls (feeds,
/// providers): each connection on its own thread, each request answered by the handler with raw
/// bytes, so a test can send anything — a 304, garbage, an oversized body, nothing at all.
/// (Tests/SGEMHTTPTests has the client tests' own copy.)
public final class StubHTTPServer: Sendable {
    public enum Reply: Sendable {
        /// These bytes, then keep reading requests (or close when `close`).
        case bytes([UInt8], close: Bool)
        /// Nothing: read on until the client goes away.
        case hang
    }

    public struct Request: Sendable {
        public let head: String
        public let body: [UInt8]
        public var requestLine: String { String(head.split(separator: "\r\n").first ?? "") }
        /// The path of the request line.
        public var path: String { String(requestLine.split(separator: " ").dropFirst().first ?? "") }
        /// A request header's value (first match, name compared without case).
        public func header(_ name: String) -> String? {
            for line in head.split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingWhitespaceSubstring() }
            }
            return nil
        }
    }

    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    private let state = Mutex<(requests: [Request], open: Set<Int32>, stopped: Bool)>(([], [], false))

    /// Every request received so far, in order.
    public var requests: [Request] { state.withLock { $0.requests } }

    public init(_ handler: @escaping @Sendable (Request) -> Reply) throws {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            Glibc.close(fd)
            throw TestFailure("bind/listen failed: errno \(errno)")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        try startThread(name: "stub-accept") { [self] in acceptLoop() }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Closes the listener and every open connection.
    public func stop() {
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
            do { try startThread(name: "stub-conn") { [self] in serve(fd) } } catch { Glibc.close(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.open.remove(fd) }
            Glibc.close(fd)
        }
        var buffer: [UInt8] = []
        func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
        }
        while true {
            var headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            while headEnd == nil {
                guard fill() else { return }
                headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            }
            let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self)
            buffer.removeFirst(headEnd!.upperBound)
            let length = Request(head: head, body: []).header("Content-Length").flatMap { Int($0) } ?? 0
            while buffer.count < length { if !fill() { return } }
            let request = Request(head: head, body: Array(buffer[..<length]))
            buffer.removeFirst(length)
            state.withLock { $0.requests.append(request) }
            switch handler(request) {
            case .hang:
                while fill() {}
                return
            case .bytes(let bytes, let close):
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    offset += n
                }
                if close { return }
            }
        }
    }

    /// A complete response with a Content-Length body.
    public static func response(_ status: Int = 200, _ body: String = "", headers: [String] = []) -> [UInt8] {
        response(status, Array(body.utf8), headers: headers)
    }

    /// A complete response with a Content-Length body of raw bytes.
    public static func response(_ status: Int = 200, _ body: [UInt8], headers: [String] = []) -> [UInt8] {
        Array(("HTTP/1.1 \(status) X\r\n" + headers.map { $0 + "\r\n" }.joined() + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
    }
}

extension Substring {
    fileprivate func trimmingWhitespaceSubstring() -> String { String(self).trimmingWhitespace() }
}
