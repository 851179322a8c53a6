#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Dispatch
import Testing
import Synchronization
import SGEMSupport
import SGEMTestPolling
@testable import SGEMHTTP

/// What one client can make the server hold: output buffers, method names, connection slots,
/// handler time, loop time. Real sockets against in-process servers on port 0.
@Suite("HTTP server bounds", .serialized)
struct ServerBoundsTests {
    static let bigBody = 512 * 1024

    static func queued(_ t: TestServer) -> Double {
        t.metrics.gauge("sgem_http_outbound_queued_bytes", help: "").value()
    }

    static func answered(_ t: TestServer) -> Double {
        t.metrics.counter("sgem_http_requests_total", help: "").value(["GET", "/big", "200"])
    }

    /// Waits until `value` has not changed for `quiet` seconds (or `within` passes); returns it.
    static func settled(within seconds: Double = 10, quiet: Double = 0.3, _ value: () -> Double) async -> Double {
        let deadline = MonotonicClock.nanoseconds() + UInt64(seconds * 1e9)
        var last = value()
        var since = MonotonicClock.nanoseconds()
        while MonotonicClock.nanoseconds() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            let now = value()
            if now != last {
                last = now
                since = MonotonicClock.nanoseconds()
            } else if Double(MonotonicClock.nanoseconds() - since) / 1e9 >= quiet {
                return now
            }
        }
        return value()
    }

    // MARK: 1. Back-pressure

    @Test func aPipeliningClientThatNeverReadsDoesNotGrowTheServer() async throws {
        let cap = 256 * 1024
        let perClient = 64
        let t = try TestServer.start({ $0.maxOutboundBytes = cap }, routes: { router in
            let body = (0..<ServerBoundsTests.bigBody).map { UInt8(truncatingIfNeeded: $0 % 251) }
            router.group("").get("/big") { _, _ in Response(status: 200, body: body) }
        })
        let clients = try (0..<3).map { _ in try t.client(receiveBuffer: 64 * 1024) }
        let pipeline = String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: perClient)
        for client in clients { try client.send(pipeline) }

        // Without back-pressure all 192 answers (96 MiB) would be queued in the server at once.
        #expect(await eventually { Self.queued(t) > 0 })
        let answered = await Self.settled { Self.answered(t) }
        let queued = Self.queued(t)
        #expect(answered < Double(3 * perClient / 2), "answered \(answered) of \(3 * perClient) while nobody read")
        #expect(queued <= Double(3 * (cap + Self.bigBody)), "queued \(queued) bytes")

        // Reading resumes the connections; every answer arrives whole and in order.
        for client in clients {
            for _ in 0..<perClient {
                let response = try client.receiveResponse()
                #expect(response.status == 200)
                #expect(response.body.count == Self.bigBody)
                #expect(response.body.last == UInt8(truncatingIfNeeded: (Self.bigBody - 1) % 251))
            }
        }
        #expect(Self.answered(t) == Double(3 * perClient))
        #expect(await eventually { Self.queued(t) == 0 })
        await t.server.shutdown()
    }

    // MARK: 2. Methods

    @Test func madeUpMethodsGet501AndLeaveNoMetricLabel() async throws {
        let t = try TestServer.start()
        var rng = SplitMix(seed: 6)
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        var methods = (0..<148).map { i -> String in
            let length = i % 2 == 0 ? 200 : 3 + Int(rng.next() % 5)
            return String(decoding: (0..<length).map { _ in letters[Int(rng.next() % 26)] }, as: UTF8.self)
        }
        methods += ["get", "PROPFIND"]
        for method in methods {
            let client = try t.client()
            try client.send("\(method) /hello/x HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.receiveResponse()
            #expect(response.status == 501, "\(method)")
            #expect(response.errorCode == "not_implemented", "\(method)")
            #expect(response.header("Content-Type") == "application/json")
            #expect(client.waitForClose())
        }
        let client = try t.client()
        try client.send("GET /hello/known HTTP/1.1\r\nHost: x\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().text == "hello known")
        #expect(try client.receiveResponse().status != 501, "known methods still reach the router")
        let rendered = t.metrics.render()
        for method in methods where method.count > 3 || !["GET", "PUT"].contains(method) {
            #expect(!rendered.contains("method=\"\(method)\""), "\(method) became a label")
        }
        await t.server.shutdown()
    }

    @Test(arguments: ["TRACE", "CONNECT", "QUERY"])
    func standardMethodsNoRouteServesGet405WithAllow(_ method: String) async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("\(method) /hello/x HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.receiveResponse()
        #expect(response.status == 405)
        #expect(response.header("Allow")?.contains("GET") == true)
        await t.server.shutdown()
    }

    // MARK: 3. Connections per address

    @Test func oneAddressAtItsLimitDoesNotStarveAnother() async throws {
        let t = try TestServer.start { $0.maxConnectionsPerAddress = 4 }
        let hog = try (0..<4).map { _ in try t.client(source: "127.0.0.2") }
        #expect(await eventually { t.server.openConnections == 4 })
        let extra = try t.client(source: "127.0.0.2")
        let refused = try extra.receiveResponse()
        #expect(refused.status == 503)
        #expect(refused.header("Connection") == "close")
        #expect(extra.waitForClose())
        #expect(t.metrics.counter("sgem_http_connections_rejected_per_address_total", help: "").value() == 1)

        // 127.0.0.1 is served in full while 127.0.0.2 holds its maximum.
        let others = try (0..<4).map { _ in try t.client(source: "127.0.0.1") }
        var answers = 0
        for round in 0..<5 {
            for (i, client) in others.enumerated() {
                try client.send("GET /hello/\(i)-\(round) HTTP/1.1\r\nHost: x\r\n\r\n")
                if try client.receiveResponse().text == "hello \(i)-\(round)" { answers += 1 }
            }
        }
        #expect(answers == 20)
        // The held connections still work, and a freed slot is usable again.
        try hog[0].send("GET /hello/hog HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try hog[0].receiveResponse().text == "hello hog")
        #expect(hog[0].waitForClose())
        #expect(await eventually { t.server.openConnections == 7 })
        let again = try t.client(source: "127.0.0.2")
        try again.send("GET /hello/again HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try again.receiveResponse().text == "hello again")
        await t.server.shutdown()
    }

    @Test func aTrustedProxyIsExemptFromThePerAddressLimit() async throws {
        let t = try TestServer.start {
            $0.maxConnectionsPerAddress = 2
            $0.trustedProxies = ["127.0.0.2"]
        }
        let viaProxy = try (0..<6).map { _ in try t.client(source: "127.0.0.2") }
        for (i, client) in viaProxy.enumerated() {
            try client.send("GET /hello/p\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.receiveResponse().text == "hello p\(i)")
        }
        #expect(t.metrics.counter("sgem_http_connections_rejected_per_address_total", help: "").value() == 0)
        await t.server.shutdown()
    }

    @Test func aTrustedProxyThatIsNotAnAddressIsRefusedAtStart() throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.trustedProxies = ["10.0.0.1", "proxy.internal"]
        let server = HTTPServer(configuration: configuration, router: Router(), logger: Logger(label: "t"), metrics: MetricsRegistry())
        #expect { _ = try server.start() } throws: { error in
            (error as? HTTPServerError)?.code == .invalidAddress && "\(error)".contains("proxy.internal")
        }
    }

    // MARK: P. Trusted proxy headers

    @Test func forwardedHeadersCountOnlyFromATrustedProxy() async throws {
        let t = try TestServer.start({ $0.trustedProxies = ["127.0.0.2"] }, routes: { router in
            router.group("").get("/who") { request, _ in .text("\(request.clientAddress) \(request.isSecure) \(request.remoteAddress)") }
        })
        let cases: [(source: String, headers: String, expected: String)] = [
            ("127.0.0.2", "X-Forwarded-For: 10.0.0.1, 192.0.2.7\r\nX-Forwarded-Proto: https\r\n", "192.0.2.7 true 127.0.0.2"),
            // Several header lines: the right-most entry of the last one is the proxy's own.
            ("127.0.0.2", "X-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 198.51.100.4\r\n", "198.51.100.4 false 127.0.0.2"),
            ("127.0.0.2", "X-Forwarded-For: 2001:db8:0:0::1\r\nX-Forwarded-Proto: http\r\n", "2001:db8::1 false 127.0.0.2"),
            ("127.0.0.2", "X-Forwarded-For: not-an-address\r\n", "127.0.0.2 false 127.0.0.2"),
            ("127.0.0.1", "X-Forwarded-For: 192.0.2.7\r\nX-Forwarded-Proto: https\r\n", "127.0.0.1 false 127.0.0.1"),
        ]
        for (source, headers, expected) in cases {
            let client = try t.client(source: source)
            try client.send("GET /who HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
            #expect(try client.receiveResponse().text == expected, "\(source) \(headers.debugDescription)")
        }
        await t.server.shutdown()
    }

    // MARK: 4. Slow readers

    @Test func slowSteadyReadersGetWholeResponsesAndAStalledOneIsCutOff() async throws {
        let size = 16 << 20
        // 2 s of no progress cuts a connection: short enough to see, long enough that a loaded
        // machine's scheduling hiccups do not cut the steady readers.
        let t = try TestServer.start({ $0.idleTimeout = .seconds(2) }, routes: { router in
            let body = [UInt8](repeating: 0x61, count: size)
            router.group("").get("/huge") { _, _ in Response(status: 200, body: body) }
        })
        let stalled = try t.client(timeoutMilliseconds: 8000, receiveBuffer: 32 * 1024)
        try stalled.send("GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        // One answer on the close path, one on keep-alive; both read at the same slow pace.
        let closing = try t.client(timeoutMilliseconds: 8000, receiveBuffer: 32 * 1024)
        try closing.send("GET /huge HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let kept = try t.client(timeoutMilliseconds: 8000, receiveBuffer: 32 * 1024)
        try kept.send("GET /huge HTTP/1.1\r\nHost: x\r\n\r\n")
        let started = MonotonicClock.nanoseconds()
        // About 5.5 MB/s each: every read makes progress, but the whole transfer takes about 3 s.
        var open = true
        while open && (closing.bufferedCount < size || kept.bufferedCount < size) {
            for client in [closing, kept] where client.bufferedCount < size {
                let goal = client.bufferedCount + 256 * 1024
                while open && client.bufferedCount < goal { open = client.fill() }
            }
            usleep(45_000)
        }
        let closed = try closing.receiveResponse()
        let keptResponse = try kept.receiveResponse()
        let took = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(closed.body.count == size)
        #expect(keptResponse.body.count == size)
        #expect(took > 2.5, "the transfer outlasted the idle timeout (took \(took) s)")
        #expect(closing.waitForClose())
        try kept.send("GET /hello/still-here HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try kept.receiveResponse().text == "hello still-here", "the keep-alive connection outlived its idle timeout while sending")

        #expect(stalled.waitForClose(), "a reader that takes nothing is cut off")
        #expect(stalled.bufferedCount < size)
        await t.server.shutdown()
    }

    // MARK: 5. Handler deadline, read budget

    @Test func aStuckHandlerIsAnswered503AndCancelled() async throws {
        let cancelled = Mutex(false)
        let t = try TestServer.start({ $0.handlerTimeout = .milliseconds(300) }, routes: { router in
            router.group("").get("/stuck") { _, _ in
                do {
                    try await Task.sleep(for: .seconds(5))
                } catch {
                    cancelled.withLock { $0 = true }
                }
                return .text("late")
            }
        })
        let client = try t.client()
        let started = MonotonicClock.nanoseconds()
        try client.send("GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.receiveResponse()
        let took = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(response.status == 503)
        #expect(response.errorCode == "timeout")
        #expect(response.header("Connection") == "close")
        // 503, not the handler's 200 after 5 s: the deadline answered; and not before it was due.
        #expect(took >= 0.25, "answered after \(took) s")
        #expect(client.waitForClose())
        #expect(client.bufferedCount == 0, "the late result is discarded")
        #expect(await eventually { cancelled.withLock { $0 } })
        #expect(t.metrics.counter("sgem_http_handler_timeouts_total", help: "").value() == 1)
        #expect(await eventually { t.server.openConnections == 0 })

        let next = try t.client()
        try next.send("GET /hello/after HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try next.receiveResponse().text == "hello after")
        await t.server.shutdown()
    }

    @Test func aFastSenderYieldsItsLoopToOthers() async throws {
        let size = 48 << 20
        let t = try TestServer.start({ $0.eventLoops = 1 }, routes: { router in
            router.group("").post("/sink", maxBody: 64 << 20) { request, _ in .text(String(request.body.count)) }
        })
        let sender = SendBox(client: try t.client(timeoutMilliseconds: 20000))
        try sender.client.send("POST /sink HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        // (finished, stop): the sender streams 1 MiB chunks as fast as it can until told to stop.
        let flags = Mutex((finished: false, stop: false, sent: 0))
        let chunk = Array("100000\r\n".utf8) + [UInt8](repeating: 0x62, count: 1 << 20) + Array("\r\n".utf8)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var sent = 0
            while !flags.withLock({ $0.stop }) && sent < size >> 20 {
                guard (try? sender.client.send(chunk)) != nil else { break }
                sent += 1
            }
            try? sender.client.send("0\r\n\r\n")
            flags.withLock { $0.finished = true; $0.sent = sent }
            done.signal()
        }
        // Another client on the same (only) loop is answered while the body streams in.
        let other = try t.client()
        var answeredDuring = 0
        for i in 0..<20 {
            try other.send("GET /hello/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try other.receiveResponse().text == "hello \(i)")
            if !flags.withLock({ $0.finished }) { answeredDuring += 1 }
        }
        // The sender goes on until its reads have hit the budget at least once (the 20 answers
        // can come before it has sent enough to: a condition, not a moment) or it sent it all.
        let yields = { t.server.core!.readBudgetYields.value.load(ordering: .relaxed) }
        #expect(await eventually(30) { yields() > 0 || flags.withLock { $0.finished } })
        flags.withLock { $0.stop = true }
        done.wait()
        let sent = flags.withLock { $0.sent }
        #expect(try sender.client.receiveResponse().text == String(sent << 20))
        #expect(answeredDuring == 20, "the other client waited for the upload (\(sent) MiB sent)")
        #expect(yields() > 0, "the sender never hit its read budget (\(sent) MiB sent)")
        await t.server.shutdown()
    }

    // MARK: 19. Start-up failure

    @Test(arguments: [0, 1])
    func aFailedStartReleasesWhatItTook(failingLoop: Int) async throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.eventLoops = 2
        let server = HTTPServer(configuration: configuration, router: Router(), logger: Logger(label: "t"), metrics: MetricsRegistry())
        server.injectLoopStartFailure(at: failingLoop)
        #expect(throws: HTTPServerError.self) { _ = try server.start() }
        let loops = server.abandonedLoops
        #expect(loops.count == 2)
        #expect(await eventually { loops.allSatisfy(\.hasExited) }, "every loop stopped and closed its descriptors")
        // The server can start afterwards; nothing was left half-open.
        server.injectLoopStartFailure(at: nil)
        let port = try server.start()
        #expect(port > 0)
        let client = try RawClient(port: port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().status == 404)
        await server.shutdown()
    }
}

/// Hands a test's blocking client to the one thread that streams through it.
// @unchecked Sendable: only the streaming thread uses the client until the test joins it.
struct SendBox: @unchecked Sendable {
    let client: RawClient
}

/// A small seeded generator (splitmix64), so failures can be replayed from the printed seed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
}
