/// Serialises responses into one buffer so each is written with a single send.
enum ResponseWriter {
    /// With `requestID`, any `X-Request-Id` field is replaced by one carrying it, written after
    /// the response's own fields (where `HTTPHeaders.set` would have put it).
    static func serialize(_ response: Response, head: RequestHead, keepAlive: Bool, upgrade: Bool, requestID: String? = nil) -> [UInt8] {
        var out: [UInt8] = []
        serialize(response, head: head, keepAlive: keepAlive, upgrade: upgrade, requestID: requestID, into: &out)
        return out
    }

    /// Appends the serialised response to `out` (the event loop's reused buffer: no array per
    /// response). Constant text goes in as `StaticString` bytes.
    static func serialize(_ response: Response, head: RequestHead, keepAlive: Bool, upgrade: Bool, requestID: String?,
                          into out: inout [UInt8]) {
        out.reserveCapacity(out.count + 160 + response.body.count + response.headers.count * 32)
        let status = response.status
        append("HTTP/1.1 ", to: &out)
        appendDecimal(status, into: &out)
        out.append(0x20)
        append(reason(status), to: &out)
        append("\r\n", to: &out)
        let isHead = head.method == .HEAD
        let bodyless = status < 200 || status == 204 || status == 304
        HTTPDate.appendHeaderLine(to: &out)
        for (name, value) in response.headers.fields {
            // Fields the writer sets itself. Lengths first: most names differ there.
            switch name.utf8.count {
            case 4 where HTTPHeaders.equalsIgnoringCase(name, "Date"): continue
            case 10 where !upgrade && HTTPHeaders.equalsIgnoringCase(name, "Connection"): continue
            case 12 where requestID != nil && HTTPHeaders.equalsIgnoringCase(name, "X-Request-Id"): continue
            case 14 where !(isHead && !bodyless) && HTTPHeaders.equalsIgnoringCase(name, "Content-Length"): continue
            default: appendField(name, value, into: &out)
            }
        }
        if let requestID { appendField("X-Request-Id", requestID, into: &out) }
        if !bodyless && !isHead {
            append("Content-Length: ", to: &out)
            appendDecimal(response.body.count, into: &out)
            append("\r\n", to: &out)
        }
        if !upgrade {
            if !keepAlive {
                append("Connection: close\r\n", to: &out)
            } else if head.minorVersion == 0 {
                append("Connection: keep-alive\r\n", to: &out)
            }
        }
        append("\r\n", to: &out)
        if !isHead && !bodyless { out.append(contentsOf: response.body) }
    }

    @inline(__always)
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes a header field; CR, LF and NUL in names or values are replaced by spaces so a
    /// handler can never split the response.
    private static func appendField(_ name: String, _ value: String, into out: inout [UInt8]) {
        appendSanitized(name, forbiddingColon: true, into: &out)
        out.append(UInt8(ascii: ":"))
        out.append(0x20)
        appendSanitized(value, forbiddingColon: false, into: &out)
        out.append(0x0D)
        out.append(0x0A)
    }

    @inline(__always)
    private static func appendSanitized(_ text: String, forbiddingColon: Bool, into out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for b in bytes where b == 0x0D || b == 0x0A || b == 0 || (forbiddingColon && b == UInt8(ascii: ":")) {
                clean = false
                break
            }
            if clean {
                out.append(contentsOf: bytes)
            } else {
                for b in bytes { out.append(b == 0x0D || b == 0x0A || b == 0 || (forbiddingColon && b == UInt8(ascii: ":")) ? 0x20 : b) }
            }
        }
    }

    static func appendDecimal(_ value: Int, into out: inout [UInt8]) {
        if value == 0 {
            out.append(0x30)
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = value
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while n > 0 {
                raw[count] = UInt8(n % 10) + 0x30
                n /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(raw[i]) }
        }
    }

    static func reason(_ status: Int) -> StaticString {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }
}
