#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMSupport
import SGEMTestSupport
import Synchronization
@testable import SGEMHTTP

/// The outbound client against local servers: stub servers speaking raw HTTP/1.1 for framing,
/// limits and failures, and the project's own HTTPS server with certificates from a test CA.
@Suite("HTTPClient")
struct HTTPClientTests {
    static func client(_ configure: (inout HTTPClient.Configuration) -> Void = { _ in }) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .seconds(20)
        configuration.outboundPolicy = try OutboundPolicy(allowing: "127.0.0.1") // the stubs' address
        configuration.connectTimeout = .seconds(5)
        configure(&configuration)
        return try HTTPClient(configuration: configuration)
    }

    /// The error `body` throws, or nil when it succeeds.
    static func failure(_ body: () async throws -> Void) async -> HTTPClientError? {
        do {
            try await body()
            return nil
        } catch let error as HTTPClientError {
            return error
        } catch {
            Issue.record("not an HTTPClientError: \(error)")
            return nil
        }
    }

    // MARK: URLs

    @Test(arguments: [
        ("http://example.com", "http", "example.com", 80, "/"),
        ("HTTPS://Example.COM:8443/a/b?q=1#frag", "https", "example.com", 8443, "/a/b?q=1"),
        ("http://127.0.0.1:9/x", "http", "127.0.0.1", 9, "/x"),
        ("https://[::1]:444?x", "https", "::1", 444, "/?x"),
    ])
    func parsesURLs(text: String, scheme: String, host: String, port: Int, target: String) throws {
        let url = try HTTPClientURL(text)
        #expect(url.scheme.rawValue == scheme)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.target == target)
    }

    @Test(arguments: ["ftp://example.com/", "example.com/x", "http://", "http://user:pw@example.com/", "http://exa mple.com/",
                      "http://example.com:0/", "http://example.com:65536/", "http://example.com:/", "http://-bad-.com/",
                      "http://a..b/", "http://[::1/", "http://é.com/", "http://example.com/\u{7F}"])
    func refusesInvalidURLs(text: String) {
        #expect(throws: HTTPClientError.self) { try HTTPClientURL(text) }
        do { _ = try HTTPClientURL(text) } catch { #expect(error.code == .invalidURL) }
    }

    @Test func resolvesRedirectLocations() throws {
        let base = try HTTPClientURL("http://h:8080/a/b?x=1")
        #expect(try base.resolving("/c").description == "http://h:8080/c")
        #expect(try base.resolving("c?d").description == "http://h:8080/a/c?d")
        #expect(try base.resolving("?y=2").description == "http://h:8080/a/b?y=2")
        #expect(try base.resolving("//other/z").origin == "http://other:80")
        #expect(try base.resolving("https://h:8080/").origin == "https://h:8080")
    }

    @Test func refusesHeadersThatCouldSmuggleLines() async throws {
        let client = try Self.client()
        let request = try HTTPClientRequest(url: "http://127.0.0.1:1/", headers: HTTPHeaders([("X-A", "1\r\nX-B: 2")]))
        #expect(await Self.failure { _ = try await client.send(request) }?.code == .invalidRequest)
    }

    // MARK: Framing

    @Test func contentLengthAndChunkedBodies() async throws {
        let stub = try StubHTTPServer { request in
            switch request.requestLine {
            case "POST /echo HTTP/1.1":
                .bytes(StubHTTPServer.response(201, String(decoding: request.body, as: UTF8.self), headers: ["X-Seen: yes"]), close: false)
            case "GET /chunked HTTP/1.1":
                .bytes(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n".utf8), close: false)
            default:
                .bytes(Array("HTTP/1.0 200 OK\r\n\r\nuntil close".utf8), close: true)
            }
        }
        defer { stub.stop() }
        let client = try Self.client()
        let base = "http://127.0.0.1:\(stub.port)"
        let echoed = try await client.send(HTTPClientRequest(method: .POST, url: base + "/echo", headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Array("ping".utf8)))
        #expect(echoed.status == 201)
        #expect(echoed.text == "ping")
        #expect(echoed.headers["x-seen"] == "yes")
        let chunked = try await client.send(HTTPClientRequest(url: base + "/chunked"))
        #expect(chunked.text == "hello, world")
        let closing = try await client.send(HTTPClientRequest(url: base + "/close"))
        #expect(closing.text == "until close")
        let heads = stub.requests.map(\.head)
        #expect(heads[0].contains("\r\nHost: 127.0.0.1:\(stub.port)\r\n"))
        #expect(heads[0].contains("\r\nContent-Length: 4"))
        #expect(heads[0].contains("\r\nUser-Agent: sgem-server"))
    }

    @Test(arguments: [
        ("HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok", "ok"),
        ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nyes", "yes"),
        ("HTTP/1.1 204 No Content\r\n\r\n", ""),
    ])
    func acceptsWellFormedResponses(raw: String, body: String) async throws {
        let stub = try StubHTTPServer { _ in .bytes(Array(raw.utf8), close: false) }
        defer { stub.stop() }
        let response = try await Self.client().send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/"))
        #expect(response.text == body)
    }

    /// Framing is not body: many tiny chunks and long trailers pass under a small cap.
    @Test func chunkFramingAndTrailersDoNotCountAgainstTheCap() async throws {
        let chunks = String(repeating: "1\r\nx\r\n", count: 4000)
        let trailers = String(repeating: "X-Trailer: \(String(repeating: "t", count: 1000))\r\n", count: 200)
        let stub = try StubHTTPServer { _ in
            .bytes(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(chunks)0\r\n\(trailers)\r\n".utf8), close: false)
        }
        defer { stub.stop() }
        let client = try Self.client { $0.maxResponseBytes = 4096 }
        let response = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/"))
        #expect(response.body == Array(repeating: UInt8(ascii: "x"), count: 4000))
        // The connection stays usable after the trailers.
        #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")).body.count == 4000)
        #expect(stub.accepted == 1)
    }

    @Test(arguments: [
        "HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 0\n\n",
        "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\n folded\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
        "garbage\r\n\r\n",
        "",
    ])
    func refusesMalformedResponses(raw: String) async throws {
        let stub = try StubHTTPServer { _ in .bytes(Array(raw.utf8), close: true) }
        defer { stub.stop() }
        let error = await Self.failure { _ = try await Self.client().send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")) }
        #expect(error?.code == .badResponse, "\(raw.debugDescription): \(String(describing: error))")
    }

    // MARK: Limits

    @Test(arguments: ["length", "chunked", "close"])
    func capsTheResponseBody(framing: String) async throws {
        let big = String(repeating: "x", count: 5000)
        let stub = try StubHTTPServer { _ in
            switch framing {
            case "length": .bytes(Array("HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n".utf8), close: false)   // refused up front
            case "chunked": .bytes(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n\(big)\r\n0\r\n\r\n".utf8), close: false)
            default: .bytes(Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n\(big)".utf8), close: true)
            }
        }
        defer { stub.stop() }
        let client = try Self.client { $0.maxResponseBytes = 4096 }
        let error = await Self.failure { _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")) }
        #expect(error?.code == .tooLarge, "\(String(describing: error))")
        // A body at the cap is fine.
        let fits = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, String(repeating: "y", count: 4096)), close: false) }
        defer { fits.stop() }
        #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(fits.port)/")).body.count == 4096)
    }

    @Test func aServerThatNeverAnswersTimesOutWithinBound() async throws {
        let stub = try StubHTTPServer { _ in .hang }
        defer { stub.stop() }
        let client = try Self.client { $0.timeout = .milliseconds(400) }
        let started = MonotonicClock.nanoseconds()
        let error = await Self.failure { _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")) }
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        // The stub never answers: only the deadline ends the call, and not before it is due (a
        // lower bound, which a loaded machine cannot break).
        #expect(error?.code == .timeout)
        #expect(elapsed >= 0.35, "took \(elapsed) s")
        // The client closed its socket: the server sees it go.
        #expect(await eventually(10) { stub.clientClosed == 1 })
    }

    /// With its one thread held by a slow call, a short call still ends at its own deadline.
    @Test func aCallWaitingForAThreadEndsAtItsOwnTimeout() async throws {
        let slow = try StubHTTPServer { _ in .hang }
        let quick = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "q"), close: false) }
        defer { slow.stop(); quick.stop() }
        let client = try Self.client { $0.threads = 1 }
        let heldEnded = Mutex(false)
        let held = Task {
            defer { heldEnded.withLock { $0 = true } }
            return try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(slow.port)/", timeout: .seconds(600)))
        }
        #expect(await eventually(10) { slow.requests.count == 1 })
        let error = await Self.failure { _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(quick.port)/", timeout: .milliseconds(300))) }
        #expect(error?.code == .timeout)
        // It ended while the slow call still held the thread: it did not wait for it.
        #expect(!heldEnded.withLock { $0 }, "the short call outlived the slow one")
        held.cancel()
        #expect(await Self.failure { _ = try await held.value }?.code == .cancelled)
        // The thread is free again, and the late job left nothing behind.
        #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(quick.port)/")).text == "q")
    }

    @Test func aRefusedPortIsConnectFailed() async throws {
        // Bound but not listening: connections to it are refused, and no one else can take the port.
        let (fd, port) = try loopbackSocket(listening: nil)
        defer { close(fd) }
        let error = await Self.failure { _ = try await Self.client().send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/")) }
        #expect(error?.code == .connectFailed, "\(String(describing: error))")
    }

    /// A listener with a full accept queue drops further SYNs: connecting hangs. Past the connect
    /// timeout that is `connect_timeout`; when the total timeout comes first, `timeout`.
    @Test(arguments: [(300, 10_000, HTTPClientError.Code.connectTimeout), (10_000, 300, .timeout)])
    func aConnectionThatNeverCompletesTimesOut(connectMilliseconds: Int, totalMilliseconds: Int, code: HTTPClientError.Code) async throws {
        let (fd, port, filler) = try Self.fullListener()
        defer { filler.close(); close(fd) }
        let client = try Self.client { $0.connectTimeout = .milliseconds(connectMilliseconds); $0.timeout = .milliseconds(totalMilliseconds) }
        let started = MonotonicClock.nanoseconds()
        let error = await Self.failure { _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/")) }
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(error?.code == code, "\(String(describing: error))")
        // Not before the timeout; the code says which timeout fired (an upper bound on seconds
        // would measure the machine's load, not the client).
        #expect(elapsed >= 0.25, "took \(elapsed) s")
    }

    @Test func aCallStillConnectingCanBeCancelled() async throws {
        let (fd, port, filler) = try Self.fullListener()
        defer { filler.close(); close(fd) }
        let client = try Self.client { $0.connectTimeout = .seconds(30); $0.timeout = .seconds(60) }
        let call = Task { try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(port)/")) }
        // Nothing to wait on here: the SYN is dropped unseen. Cancelling early or late, the call ends.
        try await Task.sleep(for: .milliseconds(100))
        call.cancel()
        // Not `connectTimeout` (30 s) nor `timeout`: the cancellation ended it.
        #expect(await Self.failure { _ = try await call.value }?.code == .cancelled)
    }

    /// A listener whose one-place accept queue is taken: connecting to it hangs.
    static func fullListener() throws -> (fd: Int32, port: Int, filler: RawClient) {
        let (fd, port) = try loopbackSocket(listening: 0)
        do { return (fd, port, try RawClient(port: port)) } catch {
            close(fd)
            throw error
        }
    }

    @Test func anUnknownHostIsResolveFailed() async throws {
        let error = await Self.failure { _ = try await Self.client().send(HTTPClientRequest(url: "http://no-such-host.invalid/")) }
        #expect(error?.code == .resolveFailed, "\(String(describing: error))")
    }

    @Test func cancellationClosesTheSocketPromptly() async throws {
        let stub = try StubHTTPServer { _ in .hang }
        defer { stub.stop() }
        let client = try Self.client { $0.timeout = .seconds(60) }
        let call = Task { try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")) }
        #expect(await eventually(10) { stub.requests.count == 1 })
        call.cancel()
        // Not `timeout` (60 s): the cancellation ended it, and closed the socket.
        let error = await Self.failure { _ = try await call.value }
        #expect(error?.code == .cancelled)
        #expect(await eventually(10) { stub.clientClosed == 1 })
    }

    // MARK: Redirects

    @Test func sameOriginRedirectsAreFollowedOthersRefused() async throws {
        let stub = try StubHTTPServer { request in
            let path = request.requestLine.split(separator: " ")[1]
            return switch path {
            case "/start": .bytes(StubHTTPServer.response(303, headers: ["Location: /next?x=1"]), close: false)
            case "/next?x=1": .bytes(StubHTTPServer.response(200, "arrived"), close: false)
            case "/away": .bytes(StubHTTPServer.response(302, headers: ["Location: http://localhost:1/"]), close: false)
            default: .bytes(StubHTTPServer.response(307, headers: ["Location: /loop"]), close: false)
            }
        }
        defer { stub.stop() }
        let client = try Self.client()
        let base = "http://127.0.0.1:\(stub.port)"
        let followed = try await client.send(HTTPClientRequest(method: .POST, url: base + "/start", body: Array("b".utf8)))
        #expect(followed.text == "arrived")
        #expect(followed.url.target == "/next?x=1")
        #expect(stub.requests.last?.requestLine == "GET /next?x=1 HTTP/1.1", "303 turns a POST into a GET")
        #expect(await Self.failure { _ = try await client.send(HTTPClientRequest(url: base + "/away")) }?.code == .redirectRefused)
        let before = stub.requests.count
        #expect(await Self.failure { _ = try await client.send(HTTPClientRequest(url: base + "/loop")) }?.code == .tooManyRedirects)
        #expect(stub.requests.count - before == 6, "the first request and five redirects")
    }

    // MARK: Keep-alive

    @Test func keepAliveReusesOneConnection() async throws {
        let stub = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "k"), close: false) }
        defer { stub.stop() }
        let client = try Self.client()
        for _ in 0..<3 { #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")).text == "k") }
        #expect(stub.accepted == 1)
        #expect(stub.requests.count == 3)
        #expect(client.connections.idleCount("http://127.0.0.1:\(stub.port)") == 1)
    }

    @Test func aKeptConnectionTheServerClosedIsReplaced() async throws {
        // Every answer closes without saying so: the kept connection is dead by the next call.
        let stub = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "once"), close: true) }
        defer { stub.stop() }
        let client = try Self.client()
        for _ in 0..<3 { #expect(try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(stub.port)/")).text == "once") }
        #expect(stub.accepted == 3)
    }

    @Test func connectionsPerHostAreBoundedAndCallersWait() async throws {
        let gate = Mutex(false)
        let stub = try StubHTTPServer { _ in
            // Hold answers until the test has seen how many connections were opened.
            let until = MonotonicClock.nanoseconds() + 10_000_000_000
            while !gate.withLock({ $0 }) && MonotonicClock.nanoseconds() < until { usleep(1000) }
            return .bytes(StubHTTPServer.response(200, "w"), close: false)
        }
        defer { stub.stop() }
        let client = try Self.client { $0.maxConnectionsPerHost = 2; $0.threads = 6 }
        let url = "http://127.0.0.1:\(stub.port)/"
        let calls = (0..<5).map { _ in Task { try await client.send(HTTPClientRequest(url: url)) } }
        #expect(await eventually(10) { stub.requests.count == 2 })
        #expect(stub.accepted == 2)
        gate.withLock { $0 = true }
        for call in calls { #expect(try await call.value.text == "w") }
        #expect(stub.accepted == 2, "waiting callers took over the two connections")
        #expect(stub.requests.count == 5)
    }

    @Test func aCallerWaitingForAConnectionCanBeCancelled() async throws {
        let stub = try StubHTTPServer { _ in .hang }
        defer { stub.stop() }
        let client = try Self.client { $0.maxConnectionsPerHost = 1; $0.timeout = .seconds(60) }
        let url = "http://127.0.0.1:\(stub.port)/"
        let first = Task { try await client.send(HTTPClientRequest(url: url)) }
        #expect(await eventually(10) { stub.requests.count == 1 })
        let second = Task { try await client.send(HTTPClientRequest(url: url)) }
        second.cancel()
        #expect(await Self.failure { _ = try await second.value }?.code == .cancelled)
        first.cancel()
        #expect(await Self.failure { _ = try await first.value }?.code == .cancelled)
        #expect(stub.accepted == 1)
    }

    @Test func idleConnectionsPastTheIdleTimeoutAreClosed() async throws {
        let a = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "a"), close: false) }
        let b = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "b"), close: false) }
        defer { a.stop(); b.stop() }
        let client = try Self.client { $0.idleTimeout = .milliseconds(50) }
        let originA = "http://127.0.0.1:\(a.port)"
        _ = try await client.send(HTTPClientRequest(url: originA + "/"))
        #expect(client.connections.idleCount(originA) == 1)
        // Calls to another origin sweep A's expired connection; the server sees it closed.
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while client.connections.idleCount(originA) == 1 && MonotonicClock.nanoseconds() < deadline {
            _ = try await client.send(HTTPClientRequest(url: "http://127.0.0.1:\(b.port)/"))
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(client.connections.idleCount(originA) == 0)
        #expect(await eventually(10) { a.clientClosed == 1 })
    }

    @Test func aCallerWaitingForAConnectionTimesOut() async throws {
        let stub = try StubHTTPServer { _ in .hang }
        defer { stub.stop() }
        let client = try Self.client { $0.maxConnectionsPerHost = 1; $0.timeout = .milliseconds(500) }
        let url = "http://127.0.0.1:\(stub.port)/"
        async let first = Self.failure { _ = try await client.send(HTTPClientRequest(url: url)) }
        async let second = Self.failure { _ = try await client.send(HTTPClientRequest(url: url)) }
        let (a, b) = await (first, second)
        #expect(a?.code == .timeout && b?.code == .timeout)
        #expect(stub.accepted == 1)
    }
}

/// HTTPS against the project's own server, with a fresh set of `TestCertificates` (a test CA
/// made by the `openssl` CLI in a temporary directory) for each test.
@Suite("HTTPClient TLS", .serialized)
struct HTTPClientTLSTests {
    static func server(_ certificates: TestCertificates, _ leaf: TestCertificates.Leaf) throws -> TestServer {
        try TestServer.start({ $0.tls = TLSConfiguration(certificatePath: certificates.certificate(leaf), keyPath: certificates.key(leaf)) })
    }

    static func client(_ certificates: TestCertificates) throws -> HTTPClient {
        try HTTPClientTests.client { $0.caFile = certificates.ca }
    }

    @Test func aCertificateFromTheTrustedCAIsAcceptedByNameAndAddress() async throws {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        let t = try Self.server(certificates, .good)
        let client = try Self.client(certificates)
        for host in ["localhost", "127.0.0.1"] {
            let response = try await client.send(HTTPClientRequest(url: "https://\(host):\(t.port)/hello/tls"))
            #expect(response.status == 200)
            #expect(response.text == "hello tls")
        }
        // Kept alive over TLS too: a second call to the same origin opens nothing new.
        let url = "https://localhost:\(t.port)/hello/again"
        #expect(try await client.send(HTTPClientRequest(url: url)).text == "hello again")
        #expect(client.connections.idleCount("https://localhost:\(t.port)") == 1)
        let echoed = try await client.send(HTTPClientRequest(method: .POST, url: "https://localhost:\(t.port)/echo", body: Array(repeating: 7, count: 100_000)))
        #expect(echoed.body == Array(repeating: 7, count: 100_000))
        client.shutdown()
        await t.server.shutdown()
    }

    @Test(arguments: [(TestCertificates.Leaf.expired, "expired"), (.wrongHost, "mismatch"), (.selfSigned, "self-signed")])
    func untrustedCertificatesAreRefused(leaf: TestCertificates.Leaf, reason: String) async throws {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        let t = try Self.server(certificates, leaf)
        let client = try Self.client(certificates)
        let error = await HTTPClientTests.failure { _ = try await client.send(HTTPClientRequest(url: "https://localhost:\(t.port)/hello/x")) }
        #expect(error?.code == .tlsFailed)
        #expect(error?.message.contains(reason) == true, "\(String(describing: error))")
        await t.server.shutdown()
    }

    /// `openssl s_server` on an ephemeral port for one connection, answering `-www` pages.
    final class OpenSSLServer {
        let pipe: UnsafeMutablePointer<FILE>
        let port: Int
        private(set) var output = ""

        init(_ arguments: String) throws {
            guard let pipe = popen("timeout 20 openssl s_server -accept 127.0.0.1:0 -naccept 1 -www \(arguments) 2>&1", "r") else { throw TestFailure("popen failed") }
            self.pipe = pipe
            var port: Int?
            while port == nil, let text = Self.line(pipe) {
                output += text
                if text.hasPrefix("ACCEPT "), let colon = text.lastIndex(of: ":") { port = Int(text[text.index(after: colon)...].filter(\.isNumber)) }
            }
            guard let port else {
                pclose(pipe)
                throw TestFailure("s_server did not start: \(output)")
            }
            self.port = port
        }

        /// Everything s_server printed, once it has exited (after its one connection, or the timeout).
        func finish() -> String {
            while let text = Self.line(pipe) { output += text }
            pclose(pipe)
            return output
        }

        private static func line(_ pipe: UnsafeMutablePointer<FILE>) -> String? {
            var line = [CChar](repeating: 0, count: 1024)
            guard fgets(&line, Int32(line.count), pipe) != nil else { return nil }
            return String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// SNI as `openssl s_server` sees it: with a second context for "localhost" it prints the
    /// name the client sent.
    @Test func theHostNameIsSentAsSNI() async throws {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        let good = "-cert \(certificates.certificate(.good)) -key \(certificates.key(.good))"
        let server = try OpenSSLServer("\(good) -servername localhost -cert2 \(certificates.certificate(.good)) -key2 \(certificates.key(.good))")
        let response = try await Self.client(certificates).send(HTTPClientRequest(url: "https://localhost:\(server.port)/"))
        #expect(response.status == 200)
        let output = server.finish()
        #expect(output.contains("Hostname in TLS extension: \"localhost\""), "\(output)")
    }

    @Test func aServerOfferingOnlyTLS11IsRefused() async throws {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        // SECLEVEL=0 lets s_server speak TLS 1.1 at all, so the refusal is the client's.
        let server = try OpenSSLServer("-cert \(certificates.certificate(.good)) -key \(certificates.key(.good)) -tls1_1 -cipher DEFAULT@SECLEVEL=0")
        let error = await HTTPClientTests.failure { _ = try await Self.client(certificates).send(HTTPClientRequest(url: "https://localhost:\(server.port)/")) }
        #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        let output = server.finish()
        #expect(!output.contains("no protocols available"), "s_server must be able to offer TLS 1.1: \(output)")
    }

    @Test func theSystemStoreDoesNotTrustTheTestCA() async throws {
        let certificates = try TestCertificates.make()
        defer { certificates.remove() }
        let t = try Self.server(certificates, .good)
        let error = await HTTPClientTests.failure { _ = try await HTTPClientTests.client().send(HTTPClientRequest(url: "https://localhost:\(t.port)/hello/x")) }
        #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        await t.server.shutdown()
    }

    @Test func aMissingCAFileFailsToMakeTheClient() {
        #expect(throws: HTTPClientError.self) { _ = try HTTPClientTests.client { $0.caFile = "/nonexistent/ca.pem" } }
    }
}
