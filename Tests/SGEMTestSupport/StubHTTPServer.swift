#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import Synchronization

/// A scripted HTTP/1.1 server on 127.0.0.1, port 0, for tests of outbound calls (feeds,
/// providers): each connection on its own thread, each request answered by the handler with raw
/// bytes, so a test can send anything — a 304, garbage, an oversized body, nothing at all.
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

    private let listener: StubListener
    private let handler: @Sendable (Request) -> Reply
    private let received = Mutex<[Request]>([])
    private let closedByClient = Atomic<Int>(0)

    public var port: Int { listener.port }
    /// Connections accepted so far.
    public var accepted: Int { listener.accepted.load(ordering: .sequentiallyConsistent) }
    /// Connections the client closed (while the stub waited for a request, or hung).
    public var clientClosed: Int { closedByClient.load(ordering: .sequentiallyConsistent) }
    /// Every request received so far, in order.
    public var requests: [Request] { received.withLock { $0 } }

    public init(_ handler: @escaping @Sendable (Request) -> Reply) throws {
        self.handler = handler
        listener = try StubListener()
        try listener.start(name: "stub") { [self] fd in serve(fd) }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Closes the listener and every open connection.
    public func stop() { listener.stop() }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        func fill() -> Bool { receiveSome(fd, into: &buffer) }
        while true {
            var headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            while headEnd == nil {
                guard fill() else {
                    closedByClient.add(1, ordering: .sequentiallyConsistent)
                    return
                }
                headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])
            }
            let head = String(decoding: buffer[..<headEnd!.lowerBound], as: UTF8.self)
            buffer.removeFirst(headEnd!.upperBound)
            let length = Request(head: head, body: []).header("Content-Length").flatMap { Int($0) } ?? 0
            while buffer.count < length { if !fill() { return } }
            let request = Request(head: head, body: Array(buffer[..<length]))
            buffer.removeFirst(length)
            received.withLock { $0.append(request) }
            switch handler(request) {
            case .hang:
                while fill() {}
                closedByClient.add(1, ordering: .sequentiallyConsistent)
                return
            case .bytes(let bytes, let close):
                guard sendAll(fd, bytes), !close else { return }
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
