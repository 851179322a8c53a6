#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMSupport
@testable import SGEMHTTP

/// Seeded, bounded random mutation of valid requests, in-process and on the wire. The seed is
/// printed with every failure; `SGEM_FUZZ_SEED=<n>` replays a run.
///
/// Valid means: the parser either accepts a head whose framing is consistent (a known method,
/// one body framing, no chunked on 1.0) or refuses with one of its 4xx/501/505 errors; on the
/// wire every byte the server sends parses as whole HTTP/1.1 responses, each a route's 2xx, a
/// 100, a 4xx, 501 or 505 (never a 500, never another 5xx), and the server closes once the
/// client has half-closed (never a hang).
@Suite("HTTP parser fuzz")
struct ParserFuzzTests {
    static let seed: UInt64 = getenv("SGEM_FUZZ_SEED").flatMap { UInt64(String(cString: $0)) } ?? 20_261_201

    static let corpus: [String] = [
        "GET /hello/x HTTP/1.1\r\nHost: x\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n",
        "GET /hello/old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
        "GET /path/a%20b/c?x=1&y=%zz HTTP/1.1\r\nHost: x\r\nAccept: */*\r\nX-Request-Id: abc\r\n\r\n",
        "POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\nping",
        "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        "DELETE /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    ]

    static let bogusLengths = ["-1", "1x", " 5", "99999999999999999999", "", "0x10", "5, 6", "+5", "1000000000"]
    static let noise: [UInt8] = [0x0D, 0x0A, 0x20, 0x09, 0x3A, 0x00, 0x7F, 0xFF, 0x2C, 0x3B]

    /// One mutation of `bytes` (a few mutations are stacked per case).
    static func mutate(_ bytes: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var out = bytes
        guard !out.isEmpty else { return Array(corpus[rng.below(corpus.count)].utf8) }
        let at = rng.below(out.count)
        switch rng.below(11) {
        case 0: out[at] = UInt8(truncatingIfNeeded: rng.next())
        case 1: out[at] ^= UInt8(1 << rng.below(8))
        case 2: out.removeSubrange(at..<min(out.count, at + 1 + rng.below(8)))
        case 3: out = Array(out[..<at])
        case 4:
            // Duplicate one header line.
            let text = String(decoding: out, as: UTF8.self)
            var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            if lines.count > 2 {
                let i = 1 + rng.below(lines.count - 2)
                lines.insert(lines[i], at: i)
            }
            out = Array(lines.joined(separator: "\r\n").utf8)
        case 5: out.insert(noise[rng.below(noise.count)], at: at)
        case 6:
            let text = String(decoding: out, as: UTF8.self)
            let bogus = bogusLengths[rng.below(bogusLengths.count)]
            if let range = text.firstRange(of: "Content-Length: ") {
                let end = text[range.upperBound...].firstIndex(of: "\r") ?? text.endIndex
                out = Array((text[..<range.upperBound] + bogus + text[end...]).utf8)
            } else if let range = text.firstRange(of: "\r\n") {
                out = Array((text[..<range.upperBound] + "Content-Length: \(bogus)\r\n" + text[range.upperBound...]).utf8)
            }
        case 7:
            // CR/LF games: a CRLF becomes LF, CR, LFCR or CRCRLF.
            if let i = (at..<out.count).first(where: { out[$0] == 0x0D }) ?? out.firstIndex(of: 0x0D), i + 1 < out.count {
                let replacements: [[UInt8]] = [[0x0A], [0x0D], [0x0A, 0x0D], [0x0D, 0x0D, 0x0A]]
                out.replaceSubrange(i...i + 1, with: replacements[rng.below(replacements.count)])
            }
        case 8: out += out // pipelined twice
        case 9:
            let text = String(decoding: out, as: UTF8.self)
            if let range = text.firstRange(of: "\r\n") {
                let extra = ["Transfer-Encoding: chunked\r\n", "Transfer-Encoding: gzip, chunked\r\n", "Host: y\r\n", "Connection: close\r\n"]
                out = Array((text[..<range.upperBound] + extra[rng.below(extra.count)] + text[range.upperBound...]).utf8)
            }
        default:
            let text = String(decoding: out, as: UTF8.self)
            let versions = ["HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/11", "http/1.1", "HTTP/1.1 "]
            out = Array(text.replacing("HTTP/1.1", with: versions[rng.below(versions.count)]).utf8)
        }
        return out
    }

    static func makeCase(_ rng: inout SplitMix) -> [UInt8] {
        var bytes = Array(corpus[rng.below(corpus.count)].utf8)
        for _ in 0..<(1 + rng.below(3)) { bytes = mutate(bytes, &rng) }
        return bytes
    }

    static let parserStatuses: Set<Int> = [400, 414, 417, 431, 501, 505]

    @Test func mutatedHeadsParseConsistentlyOrAreRefused() {
        var rng = SplitMix(seed: Self.seed)
        var failures = 0
        for index in 0..<20_000 where failures < 5 {
            let bytes = Self.makeCase(&rng)
            let result = bytes.withUnsafeBytes { RequestParser.parseHead($0, maxHeaderBytes: 1024, maxURIBytes: 256) }
            var problem: String?
            switch result {
            case .incomplete:
                break
            case .failure(let error):
                if !Self.parserStatuses.contains(error.status) { problem = "refused with \(error.status)" }
            case .head(let head, let consumed):
                if consumed <= 0 || consumed > bytes.count { problem = "consumed \(consumed) of \(bytes.count)" }
                if !HTTPMethod.known.contains(head.method) { problem = "unknown method \(head.method)" }
                if head.chunked && head.contentLength != nil { problem = "two body framings" }
                if head.chunked && head.minorVersion == 0 { problem = "chunked on HTTP/1.0" }
                if head.chunked {
                    // The body decoder must not crash on what follows either.
                    var decoder = ChunkedDecoder()
                    var body: [UInt8] = []
                    let (used, _) = bytes.withUnsafeBytes { decoder.feed(UnsafeRawBufferPointer(rebasing: $0[consumed...]), into: &body, limit: 64) }
                    if used > bytes.count - consumed || body.count > 64 { problem = "chunked decoder overran" }
                }
            }
            if let problem {
                failures += 1
                Issue.record("seed \(Self.seed) case \(index): \(problem) for \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
    }

    /// Splits what the server sent into responses; nil with a reason when it is not valid HTTP.
    static func responses(in bytes: [UInt8]) -> (statuses: [Int], problem: String?) {
        var statuses: [Int] = []
        var rest = bytes[...]
        while !rest.isEmpty {
            guard let end = rest.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) else { return (statuses, "a truncated response head") }
            let lines = String(decoding: rest[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
            let status = lines[0].split(separator: " ", maxSplits: 2)
            guard status.count == 3, status[0] == "HTTP/1.1", status[1].count == 3, let code = Int(status[1]) else {
                return (statuses, "bad status line \(lines[0].debugDescription)")
            }
            var length: Int?
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex,
                      line[..<colon].utf8.allSatisfy(RequestParser.isTChar) else { return (statuses, "bad header line \(line.debugDescription)") }
                if line[..<colon].lowercased() == "content-length" {
                    length = Int(String(line[line.index(after: colon)...]).trimmingCharacters())
                }
            }
            rest = rest[end.upperBound...]
            statuses.append(code)
            if code < 200 || code == 204 || code == 304 { continue }
            guard let length else { return (statuses, "a \(code) without Content-Length") }
            guard rest.count >= length else { return (statuses, "a body shorter than its Content-Length") }
            rest = rest.dropFirst(length)
        }
        return (statuses, nil)
    }

    @Test func mutatedRequestsOnTheWireGetWellFormedAnswers() async throws {
        let t = try TestServer.start()
        var rng = SplitMix(seed: Self.seed &+ 1)
        var seen: [Int: Int] = [:]
        var failures = 0
        for index in 0..<1500 where failures < 5 {
            let bytes = Self.makeCase(&rng)
            let client = try t.client(timeoutMilliseconds: 3000)
            try? client.send(bytes)
            client.shutdownWrite()
            var problem: String?
            if !client.waitForClose() {
                problem = "no close within 3 s (a hang)"
            } else {
                let (statuses, malformed) = Self.responses(in: client.received)
                for status in statuses { seen[status / 100, default: 0] += 1 }
                if let malformed { problem = malformed }
                for status in statuses where !(status == 100 || (200..<300).contains(status) || (400..<500).contains(status) || status == 501 || status == 505) {
                    problem = "status \(status)"
                }
            }
            if let problem {
                failures += 1
                Issue.record("seed \(Self.seed &+ 1) case \(index): \(problem) for \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        // The mutations reach both sides: routes answer some, the parser refuses others.
        #expect(seen[2, default: 0] > 100 && seen[4, default: 0] > 100, "answers by class: \(seen)")
        #expect(t.metrics.counter("sgem_http_requests_total", help: "").value(["GET", "/hello/{name}", "500"]) == 0)
        await t.server.shutdown()
    }
}
