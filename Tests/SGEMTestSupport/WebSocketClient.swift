#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import Synchronization

/// Blocking reads of the WebSocket test clients run on these threads, never on the cooperative
/// pool an in-process server needs.
public let webSocketClientThreads = BlockingPool(name: "test-ws-client", threads: 24)

/// A minimal RFC 6455 client for end-to-end tests: upgrade, masked text and ping frames, frame
/// reads with a receive timeout. One reader at a time.
// @unchecked Sendable: a test drives one client from one task at a time; the buffer and the
// descriptor are only touched by the call in flight.
public final class WebSocketClient: @unchecked Sendable {
    public struct Frame: Sendable {
        public let opcode: UInt8
        public let payload: [UInt8]
        public var text: String { String(decoding: payload, as: UTF8.self) }
        /// The status code of a close frame (1005 when it carries none).
        public var closeCode: UInt16 { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005 }
    }

    public let fd: Int32
    private var buffer: [UInt8] = []
    private let open = Atomic<Bool>(true)

    /// A TCP connection to 127.0.0.1:`port`; reads give up after `timeout` seconds.
    /// `receiveBuffer` shrinks the kernel's buffer (a client that never reads fills it sooner).
    public init(port: Int, timeout: Int = 15, receiveBuffer: Int32? = nil) throws {
        fd = try connectLoopback(port: port, timeout: timeout, receiveBuffer: receiveBuffer)
    }

    deinit { close() }

    /// Closes the TCP connection.
    public func close() {
        if open.exchange(false, ordering: .relaxed) { Glibc.close(fd) }
    }

    /// Sends the upgrade request for `path` with `headers`; returns the response status and,
    /// when it is not 101, the body (the JSON error).
    public func upgrade(_ path: String, headers: [(String, String)] = []) throws -> (status: Int, body: String) {
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(Crypto.base64(Crypto.randomBytes(16)))\r\nSec-WebSocket-Version: 13\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try send(Array((request + "\r\n").utf8))
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                guard status != 101 else { return (status, "") }
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters()) } ?? 0
                while buffer.count < length { guard try fill() else { break } }
                return (status, String(decoding: buffer.prefix(length), as: UTF8.self))
            }
            guard try fill() else { throw TestFailure("connection closed before a response head") }
        }
    }

    /// Sends a masked text frame.
    public func send(text: String) throws { try send(frame(opcode: 0x1, Array(text.utf8))) }

    /// Sends a masked ping.
    public func ping(_ payload: [UInt8] = []) throws { try send(frame(opcode: 0x9, payload)) }

    /// Sends a masked close frame with `code`.
    public func sendClose(_ code: UInt16 = 1000) throws { try send(frame(opcode: 0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])) }

    /// The next frame from the server; nil when it closed the TCP connection. Throws on timeout.
    public func readFrame() throws -> Frame? {
        while true {
            if let frame = parseFrame() { return frame }
            guard try fill() else {
                if !buffer.isEmpty { throw TestFailure("connection closed inside a frame") }
                return nil
            }
        }
    }

    /// The next text frame's payload, skipping pings and pongs; nil at a close frame or EOF
    /// (`closeCode` then says which).
    public func readText() throws -> String? {
        if !unread.isEmpty { return unread.removeFirst() }
        while let frame = try readFrame() {
            switch frame.opcode {
            case 0x1: return frame.text
            case 0x8:
                closeCode = frame.closeCode
                return nil
            default: continue
            }
        }
        return nil
    }

    /// Texts read ahead that `readText` hands out first.
    private var unread: [String] = []

    /// Reads texts until one satisfies `isMarker`; the ones before it are kept for `readText`.
    public func readAhead(until isMarker: @escaping @Sendable (String) -> Bool) async throws {
        try await webSocketClientThreads.run {
            var before: [String] = []
            while true {
                guard let frame = try self.readFrame() else { throw TestFailure("the stream ended while reading ahead") }
                if frame.opcode == 0x8 { throw TestFailure("the stream closed (\(frame.closeCode)) while reading ahead") }
                guard frame.opcode == 0x1 else { continue }
                if isMarker(frame.text) { break }
                before.append(frame.text)
            }
            self.unread += before
        }
    }

    /// The close code the server sent, once `readText` met its close frame.
    public private(set) var closeCode: UInt16?

    /// `readText` on a client thread, parsed as JSON; nil when the stream ended.
    public func next() async throws -> JSONValue? {
        try await webSocketClientThreads.run { try self.readText().map { try JSONValue.parse(Array($0.utf8)) } }
    }

    /// Reads until the server closes; returns the close frame's code (nil for a bare EOF).
    public func waitForClose() async throws -> UInt16? {
        try await webSocketClientThreads.run {
            while try self.readText() != nil {}
            return self.closeCode
        }
    }

    private func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TestFailure("send failed: errno \(errno)")
            }
            sent += n
        }
    }

    private func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else {
            out += [0x80 | 126, UInt8(payload.count >> 8 & 0xFF), UInt8(payload.count & 0xFF)]
        }
        let mask = Crypto.randomBytes(4)
        out += mask
        for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i % 4]) }
        return out
    }

    private func parseFrame() -> Frame? {
        guard buffer.count >= 2 else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var start = 2
        if length == 126 {
            guard buffer.count >= 4 else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            start = 4
        } else if length == 127 {
            guard buffer.count >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | Int(buffer[2 + $1]) }
            start = 10
        }
        guard buffer.count >= start + length else { return nil }
        let frame = Frame(opcode: buffer[0] & 0x0F, payload: Array(buffer[start..<(start + length)]))
        buffer.removeFirst(start + length)
        return frame
    }

    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                return true
            }
            if n == 0 { return false }
            switch errno {
            case EINTR: continue
            case ECONNRESET: return false
            case EAGAIN: throw TestFailure("receive timed out")
            default: throw TestFailure("recv failed: errno \(errno)")
            }
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
