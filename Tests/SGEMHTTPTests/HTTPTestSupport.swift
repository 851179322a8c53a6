#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMSupport
import SGEMTestSupport
@testable import SGEMHTTP

/// Log lines of every server these tests start (installed once, process-wide).
enum TestLog {
    static let sink: MemorySink = {
        let sink = MemorySink()
        LogSettings.sink = sink
        return sink
    }()
}

/// A parsed response as the raw client saw it.
struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: JSONValue? { try? JSONValue.parse(body) }
    var errorCode: String? { json?["error"]?["code"]?.stringValue }
}

/// A small blocking TCP client with a receive timeout, for speaking raw HTTP to the server.
final class RawClient {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, e.g. 127.0.0.2)
    /// when given; `receiveBuffer` shrinks the kernel's receive buffer (set before connecting).
    init(port: Int, timeoutMilliseconds: Int = 5000, source: String? = nil, receiveBuffer: Int? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket failed") }
        var tv = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            guard bound == 0 else {
                let code = errno
                Glibc.close(fd)
                throw TestFailure("bind to \(source) failed: errno \(code)")
            }
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard rc == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestFailure("connect failed: errno \(code)")
        }
    }

    /// Set once the socket is closed; its number may then belong to someone else, so nothing
    /// touches it any more.
    private var closed = false

    deinit { close() }

    /// Closes the socket (a server lingering after its answer then closes at once too).
    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        guard !closed else { throw TestFailure("send on a closed client") }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { sgem_send(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw TestFailure("send failed: errno \(errno)")
            }
            offset += n
        }
    }

    /// Half-closes: the server sees end-of-stream but can still answer.
    func shutdownWrite() { if !closed { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) } }

    /// Reads more bytes (at most `limit`); false on EOF, reset or timeout.
    @discardableResult
    func fill(limit: Int = 65536) -> Bool {
        guard !closed else { return false }
        return receiveSome(fd, into: &buffer, limit: limit)
    }

    /// Bytes received and not yet consumed as a response.
    var bufferedCount: Int { buffer.count }
    var received: [UInt8] { buffer }

    /// One response (Content-Length framed, or bodiless, or until close); throws if the
    /// connection ends or times out first.
    func receiveResponse(headRequest: Bool = false) throws -> RawResponse {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A])?.upperBound
            if headEnd == nil && !fill() { throw TestFailure("connection ended before a response head; got \(String(decoding: buffer, as: UTF8.self).debugDescription)") }
        }
        let head = String(decoding: buffer[0..<headEnd! - 4], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else { throw TestFailure("bad status line \(statusLine)") }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters())
        }
        buffer.removeFirst(headEnd!)
        var response = RawResponse(status: status, headers: headers, body: [])
        if headRequest || status < 200 || status == 204 || status == 304 { return response }
        if let lengthText = response.header("Content-Length"), let length = Int(lengthText) {
            while buffer.count < length {
                if !fill() { throw TestFailure("connection ended inside a body") }
            }
            response.body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else {
            while fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// Whether the server closes the connection (EOF or reset) before the receive timeout;
    /// then this side closes too. What arrived meanwhile stays readable in `received`.
    func waitForClose() -> Bool {
        guard !closed else { return true }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            let ended = n == 0 || errno == ECONNRESET || errno == EPIPE
            if ended { close() }
            return ended
        }
    }
}

extension String {
    func trimmingCharacters() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}

/// A started server on an ephemeral port with the routes the wire tests use.
struct TestServer {
    let server: HTTPServer
    let port: Int
    let metrics: MetricsRegistry

    static func start(_ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                      routes: (Router) -> Void = { _ in }) throws -> TestServer {
        _ = TestLog.sink
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoops = 2
        // Production lingers 2 s after a closing response; tests need not wait for it.
        configuration.lingerTimeout = .milliseconds(50)
        configure(&configuration)
        let router = Router()
        let api = router.group("/")
        api.get("/hello/{name}") { request, _ in .text("hello \(request.parameters["name"] ?? "?")") }
        api.get("/path/{rest*}") { request, _ in .text(request.path) }
        api.post("/echo") { request, _ in Response(status: 200, body: request.body) }
        api.post("/small", maxBody: 16) { request, _ in Response(status: 200, body: request.body) }
        routes(router)
        let metrics = MetricsRegistry()
        let server = HTTPServer(configuration: configuration, router: router, logger: Logger(label: "http-test"), metrics: metrics)
        let port = try server.start()
        return TestServer(server: server, port: port, metrics: metrics)
    }

    func client(timeoutMilliseconds: Int = 5000, source: String? = nil, receiveBuffer: Int? = nil) throws -> RawClient {
        try RawClient(port: port, timeoutMilliseconds: timeoutMilliseconds, source: source, receiveBuffer: receiveBuffer)
    }
}

/// A fresh temporary directory.
func makeTemporaryDirectory() throws -> String {
    var template = Array("/tmp/sgem-http-test-XXXXXX".utf8CString)
    let ok = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
    guard ok else { throw TestFailure("mkdtemp failed") }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
