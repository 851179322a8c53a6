/// A request rejected before it reaches the router: answered with this status and code, then
/// the connection closes.
struct ParseError: Error, Equatable {
    let status: Int
    let code: String
    let message: String

    static func bad(_ message: String) -> ParseError { ParseError(status: 400, code: "bad_request", message: message) }
    static let uriTooLong = ParseError(status: 414, code: "uri_too_long", message: "the request target is too long")
    static let headersTooLarge = ParseError(status: 431, code: "headers_too_large", message: "the request header section is too large")
    static let versionNotSupported = ParseError(status: 505, code: "http_version_not_supported", message: "only HTTP/1.1 and HTTP/1.0 are supported")
    static let notImplemented = ParseError(status: 501, code: "not_implemented", message: "the request method is not implemented by this server")
    static let expectationFailed = ParseError(status: 417, code: "expectation_failed", message: "only Expect: 100-continue is supported")
}

/// A parsed request head with the framing facts the connection needs.
struct RequestHead {
    var method: HTTPMethod
    var target: String
    var minorVersion: Int
    var headers: HTTPHeaders
    var contentLength: Int?
    var chunked = false
    var keepAlive = true
    var expectContinue = false
}

/// Strict HTTP/1.x request-head parsing over bytes (RFC 9112): CRLF only, no obs-fold, no
/// whitespace before the colon, no control characters, one unambiguous body framing.
enum RequestParser {
    enum Result {
        case incomplete
        case failure(ParseError)
        case head(RequestHead, consumed: Int)
    }

    static func parseHead(_ buf: UnsafeRawBufferPointer, maxHeaderBytes: Int, maxURIBytes: Int) -> Result {
        let count = buf.count
        var start = 0
        // Robustness (RFC 9112 §2.2): ignore empty lines before the request line.
        while start + 1 < count, buf[start] == 0x0D, buf[start + 1] == 0x0A { start += 2 }
        if start < count, buf[start] == 0x0A { return .failure(.bad("bare LF")) }
        guard let lineEnd = findLF(buf, from: start) else {
            if count - start > maxURIBytes + 32 { return .failure(sawTargetStart(buf, start) ? .uriTooLong : .headersTooLarge) }
            return .incomplete
        }
        guard lineEnd > start, buf[lineEnd - 1] == 0x0D else { return .failure(.bad("request line must end with CRLF")) }

        // request-line = method SP request-target SP HTTP-version
        var i = start
        let lineStop = lineEnd - 1
        while i < lineStop, isTChar(buf[i]) { i += 1 }
        guard i > start, i < lineStop, buf[i] == 0x20 else { return .failure(.bad("malformed request line")) }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < lineStop, buf[i] > 0x20, buf[i] != 0x7F { i += 1 }
        let targetEnd = i
        if targetEnd - targetStart > maxURIBytes { return .failure(.uriTooLong) }
        guard targetEnd > targetStart, i < lineStop, buf[i] == 0x20 else { return .failure(.bad("malformed request line")) }
        i += 1
        guard lineStop - i == 8, buf[i] == 0x48, buf[i + 1] == 0x54, buf[i + 2] == 0x54, buf[i + 3] == 0x50, buf[i + 4] == 0x2F,
              isDigit(buf[i + 5]), buf[i + 6] == 0x2E, isDigit(buf[i + 7]) else {
            return .failure(.bad("malformed HTTP version"))
        }
        guard buf[i + 5] == 0x31, buf[i + 7] == 0x31 || buf[i + 7] == 0x30 else { return .failure(.versionNotSupported) }
        let minor = Int(buf[i + 7] - 0x30)
        // Only a well-formed request line gets as far as its method: an unknown one is 501 and
        // never becomes a String, so client-chosen names cannot turn into state.
        guard methodEnd - start <= HTTPMethod.maxLength,
              let method = HTTPMethod.from(bytes: UnsafeRawBufferPointer(rebasing: buf[start..<methodEnd])) else {
            return .failure(.notImplemented)
        }
        let first = buf[targetStart]
        if first == UInt8(ascii: "*") {
            guard targetEnd - targetStart == 1, method == .OPTIONS else { return .failure(.bad("invalid request target")) }
        } else if first != UInt8(ascii: "/") {
            let target = UnsafeRawBufferPointer(rebasing: buf[targetStart..<targetEnd])
            guard hasPrefixIgnoringCase(target, "http://") || hasPrefixIgnoringCase(target, "https://") else {
                return .failure(.bad("invalid request target"))
            }
        }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: buf[targetStart..<targetEnd]), as: UTF8.self)

        // header-field = field-name ":" OWS field-value OWS
        var headers = HTTPHeaders()
        headers.fields.reserveCapacity(8)
        var pos = lineEnd + 1
        let headerStart = pos
        while true {
            guard let end = findLF(buf, from: pos) else {
                if count - headerStart > maxHeaderBytes { return .failure(.headersTooLarge) }
                return .incomplete
            }
            if end + 1 - headerStart > maxHeaderBytes { return .failure(.headersTooLarge) }
            guard end > pos, buf[end - 1] == 0x0D else { return .failure(.bad("header line must end with CRLF")) }
            let stop = end - 1
            if stop == pos { pos = end + 1; break }
            let c0 = buf[pos]
            if c0 == 0x20 || c0 == 0x09 { return .failure(.bad("obsolete line folding is not accepted")) }
            var j = pos
            while j < stop, isTChar(buf[j]) { j += 1 }
            guard j > pos, j < stop, buf[j] == UInt8(ascii: ":") else { return .failure(.bad("malformed header field")) }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: buf[pos..<j]), as: UTF8.self)
            var v = j + 1
            while v < stop, buf[v] == 0x20 || buf[v] == 0x09 { v += 1 }
            var w = stop
            while w > v, buf[w - 1] == 0x20 || buf[w - 1] == 0x09 { w -= 1 }
            var k = v
            while k < w {
                let b = buf[k]
                if (b < 0x20 && b != 0x09) || b == 0x7F { return .failure(.bad("control character in header value")) }
                k += 1
            }
            headers.fields.append((name: name, value: String(decoding: UnsafeRawBufferPointer(rebasing: buf[v..<w]), as: UTF8.self)))
            pos = end + 1
        }

        var head = RequestHead(method: method, target: target, minorVersion: minor, headers: headers)
        if let error = frame(&head) { return .failure(error) }
        return .head(head, consumed: pos)
    }

    /// Decides body framing, persistence and expectations; rejects smuggling shapes.
    static func frame(_ head: inout RequestHead) -> ParseError? {
        var hostCount = 0
        var lengths: [Substring] = []
        var transferEncodings = 0
        var chunked = false
        var connectionClose = false
        var connectionKeepAlive = false
        var expect: String?
        for (name, value) in head.headers.fields {
            switch name.utf8.count {
            case 4 where HTTPHeaders.equalsIgnoringCase(name, "Host"):
                hostCount += 1
            case 14 where HTTPHeaders.equalsIgnoringCase(name, "Content-Length"):
                for part in value.split(separator: ",", omittingEmptySubsequences: false) {
                    lengths.append(Substring(part.trimmingASCIISpaces()))
                }
            case 17 where HTTPHeaders.equalsIgnoringCase(name, "Transfer-Encoding"):
                transferEncodings += 1
                chunked = HTTPHeaders.equalsIgnoringCase(value, "chunked")
            case 10 where HTTPHeaders.equalsIgnoringCase(name, "Connection"):
                for token in value.split(separator: ",") {
                    let t = token.trimmingASCIISpaces()
                    if HTTPHeaders.equalsIgnoringCase(t, "close") { connectionClose = true }
                    if HTTPHeaders.equalsIgnoringCase(t, "keep-alive") { connectionKeepAlive = true }
                }
            case 6 where HTTPHeaders.equalsIgnoringCase(name, "Expect"):
                expect = value
            default:
                break
            }
        }
        if head.minorVersion == 1 && hostCount == 0 { return .bad("missing Host header") }
        if hostCount > 1 { return .bad("more than one Host header") }
        if transferEncodings > 0 {
            // RFC 9112 §6.1: a 1.0 message with Transfer-Encoding has faulty framing (a 1.0 hop
            // may have passed the chunks on undecoded); refuse it, and `fail` closes.
            guard head.minorVersion == 1 else { return .bad("Transfer-Encoding in an HTTP/1.0 request") }
            guard transferEncodings == 1, chunked else { return .bad("unsupported Transfer-Encoding") }
            guard lengths.isEmpty else { return .bad("Content-Length together with Transfer-Encoding") }
            head.chunked = true
        }
        if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }) else { return .bad("conflicting Content-Length values") }
            guard !first.isEmpty, first.utf8.count <= 18, first.utf8.allSatisfy(isDigit), let n = Int(first) else {
                return .bad("invalid Content-Length")
            }
            head.contentLength = n
        }
        head.keepAlive = head.minorVersion == 1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
        if let expect {
            guard HTTPHeaders.equalsIgnoringCase(expect, "100-continue") else { return .expectationFailed }
            head.expectContinue = head.minorVersion == 1
        }
        return nil
    }

    static func findLF(_ buf: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard from < buf.count else { return nil }
        let base = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var i = from
        let n = buf.count
        while i < n {
            if base[i] == 0x0A { return i }
            i += 1
        }
        return nil
    }

    /// Whether the bytes so far look like "METHOD SP target…", i.e. an overlong line is the target's fault.
    static func sawTargetStart(_ buf: UnsafeRawBufferPointer, _ start: Int) -> Bool {
        var i = start
        while i < buf.count, isTChar(buf[i]) { i += 1 }
        return i > start && i < buf.count && buf[i] == 0x20
    }

    static func hasPrefixIgnoringCase(_ buf: UnsafeRawBufferPointer, _ prefix: String) -> Bool {
        let p = Array(prefix.utf8)
        guard buf.count >= p.count else { return false }
        return HTTPHeaders.bytesEqualIgnoringCase(buf[0..<p.count], p)
    }

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    @inline(__always) static func isTChar(_ b: UInt8) -> Bool {
        switch b {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }
}

/// Incremental decoder of a chunked request body (RFC 9112 §7.1); trailers are read and dropped.
struct ChunkedDecoder {
    enum Phase { case size, data(Int), dataEnd, trailer, done }
    enum Step { case needMore, done, failure(ParseError), tooLarge }

    var phase = Phase.size
    var total = 0
    static let maxLine = 4096

    /// Consumes what it can from `buf`, appending decoded bytes to `body`.
    mutating func feed(_ buf: UnsafeRawBufferPointer, into body: inout [UInt8], limit: Int) -> (consumed: Int, step: Step) {
        var pos = 0
        while true {
            switch phase {
            case .size:
                guard let lf = RequestParser.findLF(buf, from: pos) else {
                    return (pos, buf.count - pos > Self.maxLine ? .failure(.bad("chunk size line too long")) : .needMore)
                }
                guard lf > pos, buf[lf - 1] == 0x0D else { return (pos, .failure(.bad("chunk size line must end with CRLF"))) }
                var i = pos
                var size = 0
                while i < lf - 1, let digit = Request.hexValue(buf[i]) {
                    guard i - pos < 15 else { return (pos, .failure(.bad("invalid chunk size"))) }
                    size = size << 4 | Int(digit)
                    i += 1
                }
                guard i > pos, i == lf - 1 || buf[i] == UInt8(ascii: ";") else { return (pos, .failure(.bad("invalid chunk size"))) }
                // Chunk extensions after ';' are ignored, but must not hide control characters.
                while i < lf - 1 {
                    let b = buf[i]
                    if (b < 0x20 && b != 0x09) || b == 0x7F { return (pos, .failure(.bad("invalid chunk extension"))) }
                    i += 1
                }
                pos = lf + 1
                if size == 0 {
                    phase = .trailer
                } else {
                    guard total + size <= limit else { return (pos, .tooLarge) }
                    total += size
                    phase = .data(size)
                }
            case .data(let remaining):
                let available = buf.count - pos
                if available == 0 { return (pos, .needMore) }
                let n = min(available, remaining)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[pos..<pos + n]))
                pos += n
                phase = remaining == n ? .dataEnd : .data(remaining - n)
            case .dataEnd:
                guard buf.count - pos >= 2 else { return (pos, .needMore) }
                guard buf[pos] == 0x0D, buf[pos + 1] == 0x0A else { return (pos, .failure(.bad("chunk data must end with CRLF"))) }
                pos += 2
                phase = .size
            case .trailer:
                guard let lf = RequestParser.findLF(buf, from: pos) else {
                    return (pos, buf.count - pos > Self.maxLine ? .failure(.bad("trailer line too long")) : .needMore)
                }
                guard lf > pos, buf[lf - 1] == 0x0D else { return (pos, .failure(.bad("trailer line must end with CRLF"))) }
                let empty = lf - 1 == pos
                pos = lf + 1
                if empty {
                    phase = .done
                    return (pos, .done)
                }
            case .done:
                return (pos, .done)
            }
        }
    }
}
