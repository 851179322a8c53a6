#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Testing
import Synchronization
import SGEMSupport
import SGEMTestSupport
@testable import SGEMHTTP

/// Real sockets against a server on an ephemeral port. Serialized: the descriptor-leak checks
/// count this process's open files.
@Suite("HTTP server on the wire", .serialized)
struct ServerWireTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        for name in ["a", "b", "c"] {
            try client.send("GET /hello/\(name) HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.receiveResponse()
            #expect(response.status == 200)
            #expect(response.text == "hello \(name)")
            #expect(response.header("Connection") == nil)
            #expect(response.header("X-Request-Id")?.count == 16)
            // RFC 9110 §6.6.1: an origin server with a clock sends Date, in IMF-fixdate.
            let date = try #require(response.header("Date"))
            #expect(date.hasSuffix(" GMT") && date.count == 29, "\(date)")
        }
        #expect(t.server.openConnections == 1)
        await t.server.shutdown()
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let slowGate = Mutex(0)
        let t = try TestServer.start(routes: { router in
            // The first request is the slowest, so answering out of order would show.
            router.group("").get("/slow/{n}") { request, _ in
                let n = Int(request.parameters["n"]!)!
                try await Task.sleep(for: .milliseconds(30 * (3 - n)))
                slowGate.withLock { $0 += 1 }
                return .text("slow \(n)")
            }
        })
        let client = try t.client()
        try client.send("GET /slow/0 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nthirdGET /hello/last HTTP/1.1\r\nHost: x\r\n\r\n")
        let bodies = try (0..<4).map { _ in try client.receiveResponse().text }
        #expect(bodies == ["slow 0", "slow 1", "third", "hello last"])
        #expect(slowGate.withLock { $0 } == 2)
        await t.server.shutdown()
    }

    @Test func synchronousHandlersAnswerPipelinedRequestsInOrderWithoutNesting() async throws {
        let t = try TestServer.start(routes: { router in
            router.group("").get("/refuse") { _, _ in throw APIError(status: 409, code: "conflict", message: "no") }
            router.group("").get("/crash") { _, _ in throw Boom() }
            router.group("/tagged", middleware: [TagMiddleware(tag: "group")]).get("/n") { _, _ in .text("n") }
        })
        let client = try t.client()
        // One buffer of a thousand requests to synchronous routes: were each answered one call
        // deeper inside the previous one, order or the stack would show it.
        let count = 1000
        let pipeline = (0..<count).map { "GET /hello/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
        try client.send(pipeline + "GET /refuse HTTP/1.1\r\nHost: x\r\n\r\nGET /crash HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /tagged/n HTTP/1.1\r\nHost: x\r\n\r\n")
        let bodies = try (0..<count).map { _ in try client.receiveResponse().text }
        #expect(bodies == (0..<count).map { "hello \($0)" })
        let refused = try client.receiveResponse()
        #expect(refused.status == 409 && refused.errorCode == "conflict")
        let crashed = try client.receiveResponse()
        #expect(crashed.status == 500 && crashed.errorCode == "internal")
        #expect(crashed.json?["error"]?["message"]?.stringValue?.hasSuffix(crashed.header("X-Request-Id") ?? "-") == true)
        // A synchronous handler inside group middleware still runs through it.
        let tagged = try client.receiveResponse()
        #expect(tagged.text == "n" && tagged.header("X-Tag") == "group")
        #expect(t.server.openConnections == 1)
        await t.server.shutdown()
    }

    @Test func largeAndSmallAnswersShareTheLoopsResponseWriter() async throws {
        // Larger than the writer's first buffer and than a socket takes at once: it grows, the
        // rest waits in the connection's buffer, and the next answer starts from a clean writer.
        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let t = try TestServer.start(routes: { router in
            router.group("").get("/big") { _, _ in Response(status: 200, body: big) }
        })
        let client = try t.client()
        try client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /hello/small HTTP/1.1\r\nHost: x\r\n\r\n"
            + "GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /hello/after HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().body == big)
        #expect(try client.receiveResponse().text == "hello small")
        #expect(try client.receiveResponse().body == big)
        #expect(try client.receiveResponse().text == "hello after")
        await t.server.shutdown()
    }

    @Test func halfClosedClientStillGetsEveryPipelinedAnswer() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("GET /hello/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /hello/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /hello/3 HTTP/1.1\r\nHost: x\r\n\r\n")
        client.shutdownWrite()
        let bodies = try (0..<3).map { _ in try client.receiveResponse().text }
        #expect(bodies == ["hello 1", "hello 2", "hello 3"])
        #expect(client.waitForClose())
        #expect(await eventually { t.server.openConnections == 0 })
        await t.server.shutdown()
    }

    @Test func headOnTheWireHasLengthButNoBody() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("HEAD /hello/world HTTP/1.1\r\nHost: x\r\n\r\nGET /hello/next HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.receiveResponse(headRequest: true)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "11")
        // If the HEAD answer carried a body, it would be parsed as the next status line here.
        let next = try client.receiveResponse()
        #expect(next.text == "hello next")
        await t.server.shutdown()
    }

    @Test func oversizedHeaderSectionIs431() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("GET /hello/a HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 20_000))\r\n\r\n")
        let response = try client.receiveResponse()
        #expect(response.status == 431)
        #expect(response.errorCode == "headers_too_large")
        #expect(response.header("Content-Type") == "application/json")
        #expect(client.waitForClose())
        await t.server.shutdown()
    }

    @Test func overlongURIIs414() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("GET /hello/\(String(repeating: "u", count: 9000)) HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.receiveResponse()
        #expect(response.status == 414)
        #expect(response.errorCode == "uri_too_long")
        #expect(client.waitForClose())
        await t.server.shutdown()
    }

    @Test func oversizedBodyIs413BeforeTheBodyIsSent() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        // Only the head: the answer must come without the server waiting for 10 MB.
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
        let response = try client.receiveResponse()
        #expect(response.status == 413)
        #expect(response.errorCode == "payload_too_large")
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())

        let small = try t.client()
        try small.send("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n")
        #expect(try small.receiveResponse().status == 413, "the per-route cap applies")
        await t.server.shutdown()
    }

    @Test func chunkedBodiesAreDecodedAndCapped() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n")
        let decoded = try client.receiveResponse()
        #expect(decoded.status == 200)
        #expect(decoded.text == "Wikipedia")
        // Still usable afterwards: the chunked framing was consumed exactly.
        try client.send("GET /hello/again HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().text == "hello again")

        let capped = try t.client()
        try capped.send("POST /small HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n1\r\nX\r\n0\r\n\r\n")
        let response = try capped.receiveResponse()
        #expect(response.status == 413)
        #expect(response.errorCode == "payload_too_large")
        #expect(capped.waitForClose())
        await t.server.shutdown()
    }

    static let malformed: [(String, String)] = [
        ("CL+TE", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("differing CL", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde"),
        ("TE not chunked", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"),
        ("obs-fold", "GET /hello/a HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n\tmore\r\n\r\n"),
        ("bare LF", "GET /hello/a HTTP/1.1\nHost: x\n\n"),
        ("NUL in header", "GET /hello/a HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n"),
        ("space before colon", "GET /hello/a HTTP/1.1\r\nHost: x\r\nX-A : b\r\n\r\n"),
        ("garbage request line", "\u{16}\u{3}\u{1} garbage\r\n\r\n"),
        ("missing Host", "GET /hello/a HTTP/1.1\r\n\r\n"),
        ("bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\nabc\r\n0\r\n\r\n"),
        // RFC 9112 §6.1: 1.0 framing with Transfer-Encoding is faulty; refuse and close, even
        // when the client asked to keep the connection.
        ("HTTP/1.0 chunked", "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n4\r\nWiki\r\n0\r\n\r\n"),
    ]

    @Test("malformed requests get 400 and a closed connection", arguments: malformed)
    func malformedRequests(name: String, raw: String) async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send(raw)
        let response = try client.receiveResponse()
        #expect(response.status == 400, "\(name)")
        #expect(response.errorCode == "bad_request", "\(name)")
        #expect(response.header("Connection") == "close", "\(name)")
        #expect(client.waitForClose(), "\(name)")
        #expect(client.bufferedCount == 0, "\(name): nothing follows the refusal")
        await t.server.shutdown()
    }

    @Test func unsupportedVersionIs505() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("GET /hello/a HTTP/2.0\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().status == 505)
        await t.server.shutdown()
    }

    @Test func http10ClosesUnlessKeepAliveWasAsked() async throws {
        let t = try TestServer.start()
        let plain = try t.client()
        try plain.send("GET /hello/old HTTP/1.0\r\n\r\n")
        let response = try plain.receiveResponse()
        #expect(response.status == 200)
        #expect(response.text == "hello old")
        #expect(response.header("Connection") == "close")
        #expect(plain.waitForClose())

        let kept = try t.client()
        try kept.send("GET /hello/one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try kept.receiveResponse()
        #expect(first.header("Connection") == "keep-alive")
        try kept.send("GET /hello/two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try kept.receiveResponse().text == "hello two")
        await t.server.shutdown()
    }

    @Test func expectContinueOnlyWhenTheBodyWillBeAccepted() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.receiveResponse()
        #expect(interim.status == 100)
        try client.send("ping")
        let final = try client.receiveResponse()
        #expect(final.status == 200)
        #expect(final.text == "ping")

        let refused = try t.client()
        try refused.send("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
        let answer = try refused.receiveResponse()
        #expect(answer.status == 413, "no 100 Continue for a body that would be refused")

        let odd = try t.client()
        try odd.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: something\r\n\r\n")
        #expect(try odd.receiveResponse().status == 417)
        await t.server.shutdown()
    }

    @Test func slowClientIsCutOffAtTheHeaderDeadline() async throws {
        let t = try TestServer.start { $0.headerTimeout = .seconds(1) }
        let client = try t.client(timeoutMilliseconds: 200)
        let started = MonotonicClock.nanoseconds()
        try client.send("GET /hello/slow HTTP/1.1\r\n")
        var cutOff = false
        // Trickle a header line every 200 ms (the client's read timeout) for up to a minute: each
        // read succeeds, so only a deadline that the trickle does not push back can stop it.
        for i in 0..<300 {
            if (try? client.send("X-Slow-\(i): y\r\n")) == nil { cutOff = true; break }
            if client.waitForClose() { cutOff = true; break }
        }
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(cutOff)
        #expect(elapsed >= 0.9, "cut off after \(elapsed) s, before the deadline")
        await t.server.shutdown()
    }

    @Test func idleKeepAliveConnectionsAreClosed() async throws {
        let t = try TestServer.start { $0.idleTimeout = .seconds(1) }
        let client = try t.client(timeoutMilliseconds: 60_000)
        try client.send("GET /hello/idle HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().status == 200)
        let started = MonotonicClock.nanoseconds()
        #expect(client.waitForClose())
        let elapsed = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(elapsed >= 0.7, "closed after \(elapsed) s, before the idle timeout")
        #expect(await eventually { t.server.openConnections == 0 })
        await t.server.shutdown()
    }

    @Test func connectionsPastTheLimitGet503() async throws {
        let t = try TestServer.start { $0.maxConnections = 2 }
        let first = try t.client()
        let second = try t.client()
        for client in [first, second] {
            try client.send("GET /hello/in HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.receiveResponse().status == 200)
        }
        let third = try t.client()
        let refused = try third.receiveResponse()
        #expect(refused.status == 503)
        #expect(refused.errorCode == "unavailable")
        #expect(refused.header("Connection") == "close")
        #expect(third.waitForClose())
        #expect(t.metrics.counter("sgem_http_connections_rejected_total", help: "").value() == 1)
        #expect(t.server.openConnections == 2)

        // The admitted connections still work, and a slot frees up when one leaves.
        try second.send("GET /hello/still HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try second.receiveResponse().text == "hello still")
        try first.send("GET /hello/bye HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try first.receiveResponse().status == 200)
        #expect(await eventually { t.server.openConnections == 1 })
        let fourth = try t.client()
        try fourth.send("GET /hello/back HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try fourth.receiveResponse().text == "hello back")
        await t.server.shutdown()
    }

    @Test func manySequentialAndConcurrentConnectionsLeakNoDescriptors() async throws {
        let t = try TestServer.start()
        let baseline = sgem_open_fd_count()
        for i in 0..<5000 {
            let client = try t.client()
            try client.send("GET /hello/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.receiveResponse()
            if response.text != "hello \(i)" {
                Issue.record("request \(i) got \(response.status) \(response.text)")
                break
            }
        }
        // 64 connections open at once, each with several requests in flight together.
        let clients = try (0..<64).map { _ in try t.client() }
        #expect(await eventually { t.server.openConnections == 64 })
        for round in 0..<5 {
            for (i, client) in clients.enumerated() { try client.send("GET /hello/\(i)-\(round) HTTP/1.1\r\nHost: x\r\n\r\n") }
            for (i, client) in clients.enumerated() { #expect(try client.receiveResponse().text == "hello \(i)-\(round)") }
        }
        #expect(t.metrics.counter("sgem_http_requests_total", help: "").value(["GET", "/hello/{name}", "200"]) == 5000 + 64 * 5)
        #expect(t.metrics.gauge("sgem_http_open_connections", help: "").value() == 64)
        _ = consume clients
        #expect(await eventually { t.server.openConnections == 0 })
        #expect(await eventually { sgem_open_fd_count() <= baseline }, "descriptors: \(baseline) before, \(sgem_open_fd_count()) after")
        await t.server.shutdown()
    }

    @Test func gracefulShutdownFinishesInFlightRequests() async throws {
        let entered = Mutex(false)
        // A grace period no test waits out: shutdown returns because the request finished.
        let t = try TestServer.start({ $0.shutdownGrace = .seconds(600) }, routes: { router in
            router.group("").get("/slow") { _, _ in
                entered.withLock { $0 = true }
                try await Task.sleep(for: .milliseconds(300))
                return .text("finished")
            }
        })
        let idle = try t.client()
        try idle.send("GET /hello/idle HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try idle.receiveResponse().status == 200)

        let busy = try t.client()
        try busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { entered.withLock { $0 } })
        let stopped = Mutex(false)
        Task {
            await t.server.shutdown()
            stopped.withLock { $0 = true }
        }
        #expect(await eventually { stopped.withLock { $0 } }, "shutdown waited for the request, not the whole grace period")
        let response = try busy.receiveResponse()
        #expect(response.status == 200)
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        #expect(idle.waitForClose(), "idle keep-alive connections are closed")
        #expect(throws: TestFailure.self) { try RawClient(port: t.port) }
        await t.server.shutdown() // idempotent
    }

    @Test func shutdownGraceBoundsAStuckHandler() async throws {
        let t = try TestServer.start({ $0.shutdownGrace = .milliseconds(300) }, routes: { router in
            router.group("").get("/stuck") { _, _ in
                // Longer than any test waits: shutdown ends at the grace period or not at all.
                try? await Task.sleep(for: .seconds(600))
                return .text("late")
            }
        })
        let client = try t.client()
        try client.send("GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { t.metrics.gauge("sgem_http_open_connections", help: "").value() == 1 })
        let stopped = Mutex(false)
        Task {
            await t.server.shutdown()
            stopped.withLock { $0 = true }
        }
        #expect(await eventually { stopped.withLock { $0 } }, "shutdown did not end at the grace period")
        #expect(client.waitForClose())
    }

    @Test func secondServerOnTheSamePortFailsClearly() async throws {
        let t = try TestServer.start()
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = t.port
        let other = HTTPServer(configuration: configuration, router: Router(), logger: Logger(label: "t"), metrics: MetricsRegistry())
        do {
            _ = try other.start()
            Issue.record("bound a port that is in use")
        } catch let error as HTTPServerError {
            #expect(error.code == .addressInUse)
        }
        await t.server.shutdown()
    }

    @Test func accessLogAndMetricsRecordTheRoutePattern() async throws {
        let t = try TestServer.start()
        let client = try t.client()
        try client.send("GET /hello/metrics-check HTTP/1.1\r\nHost: x\r\nX-Request-Id: access-log-1\r\n\r\n")
        #expect(try client.receiveResponse().header("X-Request-Id") == "access-log-1")
        try client.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.receiveResponse().status == 404)
        #expect(t.metrics.counter("sgem_http_requests_total", help: "").value(["GET", "/hello/{name}", "200"]) == 1)
        #expect(t.metrics.counter("sgem_http_requests_total", help: "").value(["GET", "unmatched", "404"]) == 1)
        #expect(t.metrics.histogram("sgem_http_request_duration_seconds", help: "").totals(["GET", "/hello/{name}"]).count == 1)
        let line = TestLog.sink.lines.first { $0.contains("request.id=access-log-1") && $0.contains("msg=request") }
        #expect(line?.contains("route=/hello/{name}") == true)
        #expect(line?.contains("path=/hello/metrics-check") == true)
        #expect(line?.contains("status=200") == true)
        #expect(line?.contains("remote=127.0.0.1") == true)
        await t.server.shutdown()
    }
}
