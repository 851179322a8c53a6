#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMHTTP
import SGEMSupport
import SGEMTestPolling
import Synchronization
import Testing

/// A blocking WebSocket client over a raw TCP socket, with a receive timeout.
final class WSWireClient {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeoutMilliseconds: Int = 5000, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        var tv = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect failed: errno \(code)")
        }
    }

    private var isOpen = true

    deinit { close() }

    /// Closes the client socket (so the server's lingering close ends at once).
    func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send failed: errno \(errno)")
            }
            sent += n
        }
    }

    /// Reads more bytes into the buffer; false on EOF or connection reset. Throws on timeout.
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
            case EAGAIN: throw Failure(description: "receive timed out")
            default: throw Failure(description: "recv failed: errno \(errno)")
            }
        }
    }

    /// Sends an upgrade request for `path` and returns the response head (status line + headers).
    func upgrade(path: String = "/ws", key: String = "dGhlIHNhbXBsZSBub25jZQ==", extraHeaders: String = "", then frames: [UInt8] = []) throws -> (status: Int, head: String) {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\(extraHeaders)\r\n"
        try send(Array(request.utf8) + frames)
        return try readHead()
    }

    /// Reads one HTTP response head; the bytes after it stay buffered.
    func readHead() throws -> (status: Int, head: String) {
        while true {
            if let end = buffer.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                return (status, head)
            }
            guard try fill() else { throw Failure(description: "connection closed before a response head") }
        }
    }

    /// Reads a response body of `Content-Length` bytes from a head read by `readHead`.
    func readBody(contentLength: Int) throws -> [UInt8] {
        while buffer.count < contentLength {
            guard try fill() else { throw Failure(description: "connection closed inside a body") }
        }
        defer { buffer.removeFirst(contentLength) }
        return Array(buffer[..<contentLength])
    }

    /// The next server frame, or nil when the server closed the TCP connection.
    func readFrame() throws -> WSFrame? {
        while true {
            if buffer.count >= 2 {
                let b1 = buffer[1]
                var length = Int(b1 & 0x7F)
                var start = 2
                if length == 126, buffer.count >= 4 {
                    length = Int(buffer[2]) << 8 | Int(buffer[3])
                    start = 4
                } else if length == 127, buffer.count >= 10 {
                    length = (0..<8).reduce(0) { $0 << 8 | Int(buffer[2 + $1]) }
                    start = 10
                }
                if length < 126 || start > 2, buffer.count >= start + length {
                    if b1 & 0x80 != 0 { throw Failure(description: "server sent a masked frame") }
                    let frame = WSFrame(fin: buffer[0] & 0x80 != 0, opcode: buffer[0] & 0x0F, payload: Array(buffer[start..<(start + length)]))
                    buffer.removeFirst(start + length)
                    return frame
                }
            }
            guard try fill() else {
                if !buffer.isEmpty { throw Failure(description: "connection closed inside a frame") }
                return nil
            }
        }
    }

    /// Whether the server closes the connection (EOF) before the receive timeout, discarding data.
    func readsUntilClosed() -> Bool {
        do {
            while try fill() { buffer.removeAll(keepingCapacity: true) }
            return true
        } catch {
            return false
        }
    }
}

/// A server on an ephemeral port with the WebSocket routes the wire tests use.
struct WSTestServer {
    let server: HTTPServer
    let port: Int
    /// Facts handlers report back to the test.
    let events: AsyncStream<String>

    static func start(configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> WSTestServer {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.lingerTimeout = .milliseconds(50)
        configure(&configuration)
        let (events, report) = AsyncStream.makeStream(of: String.self)
        let router = Router()
        let root = router.group("")
        root.webSocket("/ws") { _, _, ws in
            for await message in ws.messages { ws.send(message) }
            report.yield("echo ended \(ws.closeCode.map(String.init) ?? "nil")")
        }
        root.webSocket("/linger") { _, _, ws in
            for await _ in ws.messages {}
            // Cleanup after the close that shutdown must wait for.
            try? await Task.sleep(for: .milliseconds(300))
            report.yield("linger finished \(ws.closeCode.map(String.init) ?? "nil")")
        }
        root.webSocket("/hello") { request, _, ws in
            ws.send(text: "hello \(request.query["name"] ?? "")")
        }
        root.webSocket("/flood") { _, _, ws in
            let chunk = WebSocketMessage.binary(Array(repeating: 0x5A, count: 64 * 1024))
            var sent = 0
            // Bounded so a broken back-pressure path fails the test instead of eating memory.
            while sent < 16_384, ws.send(chunk) {
                sent += 1
                await Task.yield()
            }
            report.yield("flood stopped closed=\(ws.isClosed) sent=\(sent)")
        }
        root.webSocket("/paced") { _, _, ws in
            // 10 MiB in 16 KiB frames numbered in their first two bytes, at the reader's pace:
            // more than the bound and the kernel's buffers (4 MiB at most) together.
            var sent = 0
            var waited = false
            while sent < 640 {
                if !waited && ws.bufferedBytes > 128 * 1024 {
                    waited = true
                    report.yield("paced waiting")
                }
                guard await ws.waitUntilWritable(),
                      ws.send(.binary([UInt8(sent >> 8), UInt8(sent & 0xFF)] + Array(repeating: 0x5A, count: 16 * 1024 - 2))) else { break }
                sent += 1
            }
            report.yield("paced stopped closed=\(ws.isClosed) sent=\(sent)")
        }
        root.group("/private", middleware: [WSRequireHeader()]).webSocket("/ws") { _, _, ws in
            ws.send(text: "inside")
        }
        let server = HTTPServer(configuration: configuration, router: router, logger: Logger(label: "ws-wire-test"))
        let port = try server.start()
        return WSTestServer(server: server, port: port, events: events)
    }

    /// The next fact reported by a handler, or nil after `seconds`.
    func nextEvent(within seconds: Int = 10) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                var iterator = events.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

/// Lets a request through only with `X-Let-In: yes`.
struct WSRequireHeader: Middleware {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        guard request.headers["X-Let-In"] == "yes" else { throw APIError.unauthenticated() }
        return try await next(request, context)
    }
}

@Suite(.serialized) struct WebSocketWireTests {
    @Test func echoPingAndCloseHandshakeOnTheWire() async throws {
        let harness = try WSTestServer.start()
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        // The first frame rides in the same packet as the upgrade request.
        let (status, head) = try client.upgrade(then: WSFrame.client(text: "early"))
        #expect(status == 101)
        #expect(head.lowercased().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="))
        #expect(head.lowercased().contains("upgrade: websocket"))
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.text, payload: Array("early".utf8)))

        try client.send(WSFrame.client(text: "héllo"))
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.text, payload: Array("héllo".utf8)))

        let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        // Fragmented and sent one small write at a time.
        let fragmented = WSFrame.client(WSFrame.binary, Array(big[..<50_000]), fin: false)
            + WSFrame.client(WSFrame.ping, Array("are you there".utf8))
            + WSFrame.client(WSFrame.continuation, Array(big[50_000...]))
        var offset = 0
        while offset < fragmented.count {
            let end = min(fragmented.count, offset + 4_999)
            try client.send(Array(fragmented[offset..<end]))
            offset = end
        }
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.pong, payload: Array("are you there".utf8)))
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.binary, payload: big))

        try client.send(WSFrame.clientClose(1000, Array("bye".utf8)))
        let close = try client.readFrame()
        #expect(close?.opcode == WSFrame.close)
        #expect(close?.closeCode == 1000)
        #expect(try client.readFrame() == nil)
        client.close()
        #expect(await harness.nextEvent() == "echo ended 1000")
        #expect(await eventually { harness.server.openConnections == 0 })
    }

    @Test func oversizeMessageIsRefusedWith1009() async throws {
        let harness = try WSTestServer.start { $0.webSocketMaxMessageBytes = 1024 }
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade().status == 101)
        try client.send(WSFrame.client(WSFrame.binary, Array(repeating: 1, count: 1024)))
        #expect(try client.readFrame()?.payload.count == 1024)
        // Only the header of a too-big frame: the answer must not wait for the payload.
        try client.send(Array(WSFrame.client(WSFrame.binary, Array(repeating: 1, count: 1025)).prefix(8)))
        let close = try client.readFrame()
        #expect(close?.opcode == WSFrame.close)
        #expect(close?.closeCode == 1009)
        #expect(try client.readFrame() == nil)
        client.close()
        #expect(await harness.nextEvent() == "echo ended 1009")
    }

    @Test func protocolErrorOnTheWireClosesWith1002() async throws {
        let harness = try WSTestServer.start()
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade().status == 101)
        try client.send(WSFrame.client(WSFrame.text, Array("unmasked".utf8), masked: false))
        #expect(try client.readFrame()?.closeCode == 1002)
        #expect(try client.readFrame() == nil)
        client.close()
    }

    @Test func shutdownSaysGoingAwayAndWaitsForTheHandler() async throws {
        // A grace period no test waits out: shutdown returns because the handler finished.
        let harness = try WSTestServer.start { $0.shutdownGrace = .seconds(600) }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade(path: "/linger").status == 101)
        #expect(await eventually { harness.server.openConnections == 1 })
        let started = ContinuousClock.now
        let stopped = Mutex<Duration?>(nil)
        Task {
            await harness.server.shutdown()
            stopped.withLock { $0 = ContinuousClock.now - started }
        }
        let close = try client.readFrame()
        #expect(close?.opcode == WSFrame.close)
        #expect(close?.closeCode == 1001)
        try client.send(WSFrame.clientClose(1001))
        #expect(try client.readFrame() == nil)
        client.close()
        #expect(await eventually { stopped.withLock { $0 } != nil }, "shutdown waited out the grace period")
        // Not before the handler's 300 ms of cleanup after the close.
        let took = try #require(stopped.withLock { $0 })
        #expect(took >= .milliseconds(300), "shutdown took \(took)")
        #expect(await harness.nextEvent(within: 1) == "linger finished 1001")
    }

    @Test func returningHandlerClosesTheSocketWithNormalClosure() async throws {
        let harness = try WSTestServer.start()
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade(path: "/hello?name=ana").status == 101)
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.text, payload: Array("hello ana".utf8)))
        let close = try client.readFrame()
        #expect(close?.opcode == WSFrame.close)
        #expect(close?.closeCode == 1000)
        try client.send(WSFrame.clientClose(1000))
        #expect(try client.readFrame() == nil)
        client.close()
        #expect(await eventually { harness.server.openConnections == 0 })
    }

    @Test func serverPingsAndDropsAPeerThatStopsAnswering() async throws {
        let harness = try WSTestServer.start { $0.webSocketPingInterval = .milliseconds(300) }
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade().status == 101)
        // Answer two pings: the connection stays up past two intervals.
        for _ in 0..<2 {
            let ping = try client.readFrame()
            #expect(ping?.opcode == WSFrame.ping)
            try client.send(WSFrame.client(WSFrame.pong, ping?.payload ?? []))
        }
        // Then go silent: more pings, then the server gives up with 1001 and closes.
        var last: WSFrame?
        while let frame = try client.readFrame() {
            #expect(frame.opcode == WSFrame.ping || frame.opcode == WSFrame.close)
            last = frame
        }
        client.close()
        #expect(last == nil || last?.closeCode == 1001)
        #expect(await harness.nextEvent() == "echo ended 1001")
        #expect(await eventually { harness.server.openConnections == 0 })
    }

    @Test func aClientThatNeverReadsIsDisconnected() async throws {
        let harness = try WSTestServer.start { $0.webSocketMaxBufferedBytes = 256 * 1024 }
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port, timeoutMilliseconds: 10_000, receiveBuffer: 16 * 1024)
        #expect(try client.upgrade(path: "/flood").status == 101)
        // Never read: the kernel buffers fill, then the server's capped buffer, then it gives up.
        let event = await harness.nextEvent(within: 20)
        #expect(event?.hasPrefix("flood stopped closed=true") == true)
        let sent = event.flatMap { $0.split(separator: "=").last.flatMap { Int($0) } } ?? .max
        #expect(sent < 16_384)
        #expect(await eventually(60) { harness.server.openConnections == 0 })
        #expect(client.readsUntilClosed())
    }

    @Test func aWriterThatWaitsUntilWritableGetsASlowReaderEverythingInOrder() async throws {
        let harness = try WSTestServer.start { $0.webSocketMaxBufferedBytes = 256 * 1024 }
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port, timeoutMilliseconds: 10_000, receiveBuffer: 8 * 1024)
        #expect(try client.upgrade(path: "/paced").status == 101)
        // 40 times the bound, read with a pause every 256 KiB.
        var numbers: [Int] = []
        while numbers.count < 640, let frame = try client.readFrame(), frame.opcode == WSFrame.binary {
            numbers.append(Int(frame.payload[0]) << 8 | Int(frame.payload[1]))
            if numbers.count % 16 == 0 { usleep(5_000) }
        }
        #expect(numbers == Array(0..<640))
        #expect(await harness.nextEvent() == "paced waiting", "the queue reached its high-water mark: the writer had to wait")
        #expect(await harness.nextEvent() == "paced stopped closed=false sent=640")
    }

    @Test func aWriterWaitingUntilWritableIsReleasedWhenThePeerGoesAway() async throws {
        let harness = try WSTestServer.start { $0.webSocketMaxBufferedBytes = 256 * 1024 }
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port, timeoutMilliseconds: 10_000, receiveBuffer: 8 * 1024)
        #expect(try client.upgrade(path: "/paced").status == 101)
        // Never read, so the writer waits on the full queue; then hang up.
        #expect(await harness.nextEvent(within: 20) == "paced waiting")
        client.close()
        let event = await harness.nextEvent(within: 20)
        #expect(event?.hasPrefix("paced stopped closed=true") == true)
        #expect(event != "paced stopped closed=true sent=640")
    }

    struct BadUpgrade: CustomTestStringConvertible, Sendable {
        let name: String
        let request: String
        let status: Int
        var testDescription: String { name }
    }

    static let badUpgrades = [
        BadUpgrade(name: "missing key", request: "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", status: 400),
        BadUpgrade(name: "version 8", request: "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n", status: 426),
        BadUpgrade(name: "plain GET", request: "GET /ws HTTP/1.1\r\nHost: x\r\n\r\n", status: 400),
        BadUpgrade(name: "middleware refuses", request: "GET /private/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", status: 401),
    ]

    @Test(arguments: badUpgrades)
    func badUpgradesGetAJSONErrorInsteadOf101(bad: BadUpgrade) async throws {
        let harness = try WSTestServer.start()
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        try client.send(Array(bad.request.utf8))
        let (status, head) = try client.readHead()
        #expect(status == bad.status)
        #expect(head.lowercased().contains("content-type: application/json"))
        if bad.status == 426 { #expect(head.lowercased().contains("sec-websocket-version: 13")) }
    }

    @Test func middlewareThatLetsTheRequestThroughUpgrades() async throws {
        let harness = try WSTestServer.start()
        defer { Task { await harness.server.shutdown() } }
        let client = try WSWireClient(port: harness.port)
        #expect(try client.upgrade(path: "/private/ws", extraHeaders: "X-Let-In: yes\r\n").status == 101)
        #expect(try client.readFrame() == WSFrame(opcode: WSFrame.text, payload: Array("inside".utf8)))
    }
}
