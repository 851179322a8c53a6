import Testing
@testable import SGEMHTTP

@Suite("Request parser")
struct RequestParserTests {
    func parse(_ text: String, maxHeaderBytes: Int = 16 * 1024, maxURIBytes: Int = 8 * 1024) -> RequestParser.Result {
        Array(text.utf8).withUnsafeBytes { RequestParser.parseHead($0, maxHeaderBytes: maxHeaderBytes, maxURIBytes: maxURIBytes) }
    }

    @Test func parsesAHead() throws {
        let text = "POST /a?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nX-Empty:\r\n\r\nhello"
        guard case let .head(head, consumed) = parse(text) else { Issue.record("not parsed"); return }
        #expect(head.method == .POST)
        #expect(head.target == "/a?b=1")
        #expect(head.contentLength == 5)
        #expect(head.headers["x-empty"] == "")
        #expect(consumed == text.utf8.count - 5)
        #expect(head.keepAlive)
    }

    @Test("smuggling and malformed shapes are rejected with 400", arguments: [
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 4\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n folded\r\n\r\n",
        "GET / HTTP/1.1\nHost: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\u{1}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "hello there\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /\r\n\r\n",
        "GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        "GET noslash HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: x\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
    ])
    func rejects(_ text: String) {
        guard case let .failure(error) = parse(text) else {
            Issue.record("accepted: \(text.debugDescription)")
            return
        }
        #expect(error.status == 400)
    }

    @Test(arguments: ["BREW", "get", "PROPFIND", "GETS", String(repeating: "M", count: 200), "DELETE2"])
    func unknownMethodsAre501(_ method: String) {
        guard case let .failure(error) = parse("\(method) / HTTP/1.1\r\nHost: x\r\n\r\n") else {
            Issue.record("accepted \(method)")
            return
        }
        #expect(error.status == 501)
        #expect(error.code == "not_implemented")
    }

    @Test func everyKnownMethodParses() {
        for method in HTTPMethod.known {
            guard case let .head(head, _) = parse("\(method) / HTTP/1.1\r\nHost: x\r\n\r\n") else {
                Issue.record("refused \(method)")
                continue
            }
            #expect(head.method == method)
        }
    }

    @Test func identicalDuplicateContentLengthsAreAccepted() {
        guard case let .head(head, _) = parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\n") else {
            Issue.record("rejected")
            return
        }
        #expect(head.contentLength == 4)
    }

    @Test("version handling", arguments: [("HTTP/2.0", 505), ("HTTP/1.2", 505), ("HTTP/0.9", 505), ("HTTQ/1.1", 400)])
    func versions(version: String, status: Int) {
        guard case let .failure(error) = parse("GET / \(version)\r\nHost: x\r\n\r\n") else {
            Issue.record("accepted")
            return
        }
        #expect(error.status == status)
    }

    @Test func http10KeepAliveOnlyWhenAsked() {
        guard case let .head(plain, _) = parse("GET / HTTP/1.0\r\n\r\n"),
              case let .head(asked, _) = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"),
              case let .head(closing, _) = parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n") else {
            Issue.record("not parsed")
            return
        }
        #expect(!plain.keepAlive)
        #expect(asked.keepAlive)
        #expect(!closing.keepAlive)
    }

    @Test func limits() {
        let longURI = "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        guard case let .failure(uri) = parse(longURI, maxURIBytes: 50) else { Issue.record("long URI accepted"); return }
        #expect(uri.status == 414)
        let unfinishedURI = "GET /" + String(repeating: "a", count: 100)
        guard case let .failure(partial) = parse(unfinishedURI, maxURIBytes: 50) else { Issue.record("unfinished long URI waited"); return }
        #expect(partial.status == 414)
        let bigHeaders = "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 200) + "\r\n\r\n"
        guard case let .failure(headers) = parse(bigHeaders, maxHeaderBytes: 100) else { Issue.record("big headers accepted"); return }
        #expect(headers.status == 431)
        guard case .incomplete = parse("GET / HTTP/1.1\r\nHost: x\r\n") else { Issue.record("partial head not incomplete"); return }
    }

    @Test func expectations() {
        guard case let .head(head, _) = parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n") else {
            Issue.record("rejected")
            return
        }
        #expect(head.expectContinue)
        guard case let .failure(error) = parse("POST / HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n") else {
            Issue.record("accepted")
            return
        }
        #expect(error.status == 417)
    }

    func decode(_ text: String, limit: Int = 1 << 20, split: Int? = nil) -> (ChunkedDecoder.Step, [UInt8]) {
        var decoder = ChunkedDecoder()
        var body: [UInt8] = []
        let bytes = Array(text.utf8)
        var pending: [UInt8] = []
        // Feed in pieces of `split` bytes to prove the decoder is incremental.
        let pieces = stride(from: 0, to: bytes.count, by: split ?? bytes.count).map { Array(bytes[$0..<min($0 + (split ?? bytes.count), bytes.count)]) }
        for piece in pieces {
            pending += piece
            let (consumed, step) = pending.withUnsafeBytes { decoder.feed($0, into: &body, limit: limit) }
            pending.removeFirst(consumed)
            switch step {
            case .needMore: continue
            default: return (step, body)
            }
        }
        return (.needMore, body)
    }

    @Test(arguments: [nil, 1, 3])
    func chunkedBodiesDecode(split: Int?) {
        let (step, body) = decode("5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n", split: split)
        guard case .done = step else { Issue.record("not done: \(step)"); return }
        #expect(String(decoding: body, as: UTF8.self) == "hello, world")
    }

    @Test("bad chunk framing", arguments: ["zz\r\nhello\r\n0\r\n\r\n", "\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "5\nhello\r\n0\r\n\r\n", "ffffffffffffffffff\r\n"])
    func badChunks(_ text: String) {
        let (step, _) = decode(text)
        guard case let .failure(error) = step else { Issue.record("accepted: \(text.debugDescription)"); return }
        #expect(error.status == 400)
    }

    @Test func chunkedBodyCap() {
        let (step, _) = decode("8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n", limit: 10)
        guard case .tooLarge = step else { Issue.record("cap not enforced"); return }
    }
}

@Suite("HTTP date") struct HTTPDateTests {
    @Test(arguments: [
        (Int64(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"),   // RFC 9110's example
        (Int64(0), "Thu, 01 Jan 1970 00:00:00 GMT"),
        (Int64(1_796_070_246), "Mon, 30 Nov 2026 20:24:06 GMT"),
    ])
    func formatsIMFFixdate(_ seconds: Int64, _ text: String) {
        #expect(HTTPDate.format(seconds) == text)
    }
}
