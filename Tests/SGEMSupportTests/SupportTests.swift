import Testing
@testable import SGEMSupport

@Suite struct TimestampTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (Int64(1_796_070_246), "2026-11-30T20:24:06Z"),
        (Int64(951_782_400), "2000-02-29T00:00:00Z"),
        (Int64(-1), "1969-12-31T23:59:59Z"),
    ])
    func formatsAndParses(_ seconds: Int64, _ text: String) throws {
        #expect(Timestamp(seconds: seconds).rfc3339() == text)
        #expect(Timestamp(rfc3339: text)?.seconds == seconds)
    }

    @Test func parsesOffsetsAndFractions() throws {
        let t = try #require(Timestamp(rfc3339: "2026-11-30T21:24:06.250+01:00"))
        #expect(t.seconds == 1_796_070_246)
        #expect(t.nanoseconds == 250_000_000)
    }

    @Test(arguments: ["", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-30 20:24:06Z", "2026-11-30T20:24:06", "2026-11-30T20:24:06Zjunk"])
    func rejectsMalformed(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }
}

@Suite struct CryptoTests {
    @Test func digestsAndEncodingsMatchKnownVectors() {
        #expect(Crypto.hex(Crypto.sha256(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Crypto.hex(Crypto.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(Crypto.base64(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Crypto.base64(Array("fooba".utf8)) == "Zm9vYmE=")
        #expect(Crypto.base64(Array("foob".utf8)) == "Zm9vYg==")
        #expect(Crypto.base64URL([0xFB, 0xFF]) == "-_8")
    }

    @Test func randomBytesDiffer() {
        let a = Crypto.randomBytes(32), b = Crypto.randomBytes(32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(Crypto.constantTimeEqual(a, a))
        #expect(!Crypto.constantTimeEqual(a, b))
    }
}

@Suite struct JSONAndLoggingTests {
    @Test func jsonRoundTripKeepsOrderAndEscapes() throws {
        let value: JSONValue = ["b": 1, "a": ["x", true, nil, 2.5], "s": "line\n\"q\"\u{01}"]
        let text = value.serialized()
        #expect(text == #"{"b":1,"a":["x",true,null,2.5],"s":"line\n\"q\"\u0001"}"#)
        let parsed = try JSONValue.parse(Array(text.utf8))
        #expect(parsed["s"] == "line\n\"q\"\u{01}")
        #expect(parsed["a"]?.arrayValue?.count == 4)
        #expect(throws: (any Error).self) { try JSONValue.parse(Array("{oops".utf8)) }
    }

    @Test func jsonEscapesEveryCharacterThatNeedsItAndCopiesTheRest() throws {
        let tricky = "Gómez 東京 🎉 \u{2028}end\u{2029}\t\r\u{1F}\\/"
        let text = JSONValue.string(tricky).serialized()
        #expect(text == #""Gómez 東京 🎉 \u2028end\u2029\t\r\u001f\\/""#)
        #expect(try JSONValue.parse(Array(text.utf8)) == .string(tricky))
        #expect(JSONValue.array([0, -7, 1234567890123, -0.5, .number(.infinity)]).serialized() == "[0,-7,1234567890123,-0.5,null]")
        #expect(JSONValue.string("").serialized() == #""""#)
    }

    @Test func logLinesAreOneLineLogfmtWithFacts() throws {
        let sink = MemorySink()
        Logger(label: "test", sink: sink, level: .info).with("request.id", "abc").warning("slow request", ["path": "/a b", "note": "x\ny"])
        Logger(label: "test", sink: sink, level: .info).debug("hidden at info")
        #expect(sink.lines.count == 1)
        let line = try #require(sink.lines.first)
        #expect(line.contains(#"level=warning module=test msg="slow request" request.id=abc path="/a b" note="x\ny""#))
        #expect(!line.contains("\n"))
    }
}

@Suite struct MetricsTests {
    @Test func rendersPrometheusText() {
        let registry = MetricsRegistry()
        let c = registry.counter("t_requests_total", help: "Requests.", labels: ["route"])
        c.increment(["/a"])
        c.increment(by: 2, ["/a"])
        let h = registry.histogram("t_seconds", help: "Time.", buckets: [0.1, 1])
        h.observe(0.05)
        h.observe(0.5)
        h.observe(5)
        let g = registry.gauge("t_open", help: "Open.")
        g.sample { 7 }
        let text = registry.render()
        #expect(text.contains("t_requests_total{route=\"/a\"} 3\n"))
        #expect(text.contains("t_seconds_bucket{le=\"0.1\"} 1\n"))
        #expect(text.contains("t_seconds_bucket{le=\"1\"} 2\n"))
        #expect(text.contains("t_seconds_bucket{le=\"+Inf\"} 3\n"))
        #expect(text.contains("t_seconds_count 3\n"))
        #expect(text.contains("t_open 7\n"))
        #expect(registry.counter("t_requests_total", help: "again", labels: ["route"]) === c)
    }

    @Test func seriesHandlesShareTheLabelledTotals() {
        let registry = MetricsRegistry()
        let c = registry.counter("t_hits_total", help: "Hits.", labels: ["route"])
        let handle = c.series(["/b"])
        handle.increment()
        c.increment(by: 2, ["/b"])
        #expect(c.series(["/b"]) === handle)
        #expect(c.value(["/b"]) == 3)
        let h = registry.histogram("t_wait_seconds", help: "Wait.", labels: ["route"], buckets: [1])
        h.series(["/b"]).observe(0.5)
        h.observe(2, ["/b"])
        #expect(h.totals(["/b"]) == (count: 2, sum: 2.5))
        let text = registry.render()
        #expect(text.contains("t_hits_total{route=\"/b\"} 3\n"))
        #expect(text.contains("t_wait_seconds_bucket{route=\"/b\",le=\"1\"} 1\n"))
    }
}

@Suite struct BlockingPoolTests {
    @Test func runsJobsOffThePoolAndPropagatesErrors() async throws {
        let pool = BlockingPool(name: "test", threads: 2)
        defer { pool.shutdown() }
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<50 { group.addTask { try await pool.run { i * i } } }
            var all: [Int] = []
            for try await r in group { all.append(r) }
            return all.sorted()
        }
        #expect(results == (0..<50).map { $0 * $0 })
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await pool.run { throw Boom() } }
    }
}

@Suite struct StringHelperTests {
    @Test(arguments: [("  a b \t", " \t", "a b"), ("xxaxx", "x", "a"), ("", " ", ""), ("   ", " ", "")])
    func trimsCharactersInASet(_ text: String, _ set: String, _ expected: String) {
        #expect(text.trimmingCharacters(in: set) == expected)
    }

    @Test func trimsWhitespaceAndNewlinesAndReplaces() {
        #expect("\n\t SELECT 1;\r\n".trimmingWhitespace() == "SELECT 1;")
        #expect("/users/{id*}/x{a*}".replacingOccurrences(of: "*}", with: "}") == "/users/{id}/x{a}")
        #expect("a.b.c".replacingOccurrences(of: ".", with: "::") == "a::b::c")
        #expect("héllo".replacingOccurrences(of: "é", with: "e") == "hello")
    }
}

@Test("Timestamps round-trip through epoch milliseconds, before and after 1970", arguments: [
    (Int64(0), "1970-01-01T00:00:00.000Z"), (1_764_534_246_123, "2025-11-30T20:24:06.123Z"), (-1, "1969-12-31T23:59:59.999Z"),
])
func timestampMilliseconds(ms: Int64, text: String) {
    let t = Timestamp(milliseconds: ms)
    #expect(t.milliseconds == ms)
    #expect(t.rfc3339(fractional: true) == text)
}

@Test("base64 decodes with or without padding and refuses what is not base64", arguments: [
    ("aGVsbG8=", "hello"), ("aGVsbG8", "hello"), ("aGk=", "hi"), ("", ""), ("YQ==", "a"), ("YQ", "a"),
] as [(String, String)])
func base64DecodesValidText(text: String, expected: String) throws {
    #expect(try #require(Crypto.base64Decode(text)) == Array(expected.utf8))
    #expect(Crypto.base64Decode(Crypto.base64(Array(expected.utf8))) == Array(expected.utf8))
}

@Test("base64 refuses stray characters, a lone digit and data after padding", arguments: ["aGk*", "a", "aGk=aGk=", "YQ===", "aG\nk="])
func base64RefusesInvalidText(text: String) {
    #expect(Crypto.base64Decode(text) == nil)
}

@Test func base64SkipsLineBreaksOnlyWhenAsked() {
    #expect(Crypto.base64Decode("aGVs\nbG8=", skippingNewlines: true) == Array("hello".utf8))
}
