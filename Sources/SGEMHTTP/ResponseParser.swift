/// A parsed response head with the framing the client reads the body by.
struct ResponseHead {
    enum Framing: Equatable { case none, length(Int), chunked, untilClose }

    var status: Int
    var minorVersion: Int
    var headers: HTTPHeaders
    var framing: Framing
    /// Whether the connection may carry another request after this response's body.
    var keepAlive: Bool
}

/// Strict HTTP/1.x response-head parsing (RFC 9112): `HTTP/1.x NNN reason` with CRLF line
/// ends, token field names with no space before the colon, no obs-fold or control characters,
/// one unambiguous body framing. Every refusal is `bad_response`.
enum ResponseParser {
    /// Parses `head`, the bytes before the blank line (without the final CRLF CRLF).
    static func parseHead(_ head: ArraySlice<UInt8>, requestMethod: HTTPMethod) throws(HTTPClientError) -> ResponseHead {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            if head[i] == 0x0A {
                guard i > start, head[i - 1] == 0x0D else { throw bad("header lines must end with CRLF") }
                lines.append(head[start..<(i - 1)])
                start = i + 1
            }
            i += 1
        }
        lines.append(head[start..<head.endIndex])

        let statusLine = lines.removeFirst()
        let s = Array(statusLine)
        // "HTTP/1.x NNN" then optionally " reason"; the reason is ignored but must be clean.
        guard s.count >= 12, s[0..<5].elementsEqual("HTTP/".utf8), s[5] == 0x31, s[6] == 0x2E,
              s[7] == 0x30 || s[7] == 0x31, s[8] == 0x20,
              s[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), s.count == 12 || s[12] == 0x20,
              s.dropFirst(12).allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
            throw bad("malformed status line \(String(decoding: s.prefix(64), as: UTF8.self).debugDescription)")
        }
        let status = Int(s[9] - 0x30) * 100 + Int(s[10] - 0x30) * 10 + Int(s[11] - 0x30)
        guard status >= 100 else { throw bad("status \(status) out of range") }
        let minor = Int(s[7] - 0x30)

        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: 0x3A), colon > line.startIndex,
                  line[line.startIndex..<colon].allSatisfy(RequestParser.isTChar) else {
                throw bad("malformed header line")
            }
            var valueStart = colon + 1
            var valueEnd = line.endIndex
            while valueStart < valueEnd, line[valueStart] == 0x20 || line[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, line[valueEnd - 1] == 0x20 || line[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = line[valueStart..<valueEnd]
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw bad("control character in a header value") }
            headers.add(String(decoding: line[line.startIndex..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
        }

        let keepAlive = minor == 1 ? !headers.hasToken("Connection", "close") : headers.hasToken("Connection", "keep-alive")
        var head = ResponseHead(status: status, minorVersion: minor, headers: headers, framing: .untilClose, keepAlive: keepAlive)
        if requestMethod == .HEAD || status < 200 || status == 204 || status == 304 {
            head.framing = .none
            // After 101 the connection speaks another protocol: never reuse it for HTTP.
            if status == 101 { head.keepAlive = false }
            return head
        }
        let encodings = headers.values("Transfer-Encoding")
        let lengths = headers.values("Content-Length")
        if !encodings.isEmpty {
            // Both framings at once is how responses get smuggled: refuse rather than pick one.
            guard lengths.isEmpty else { throw bad("both Transfer-Encoding and Content-Length") }
            let codings = encodings.flatMap { $0.split(separator: ",") }.map { $0.trimmingASCIISpaces().lowercased() }
            guard codings == ["chunked"] else { throw bad("unsupported transfer coding \(encodings.joined(separator: ", "))") }
            head.framing = .chunked
        } else if !lengths.isEmpty {
            let values = Set(lengths.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }.map { $0.trimmingASCIISpaces() })
            guard values.count == 1, let text = values.first, !text.isEmpty, text.utf8.count <= 18,
                  text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(text) else {
                throw bad("malformed Content-Length")
            }
            head.framing = .length(length)
        } else {
            head.framing = .untilClose
            head.keepAlive = false
        }
        return head
    }

    static func bad(_ message: String) -> HTTPClientError { HTTPClientError(.badResponse, message) }

}
