/// Serialises responses into one buffer so each is written with a single send.
enum ResponseWriter {
    /// With `requestID`, any `X-Request-Id` field is replaced by one carrying it, written after
    /// the response's own fields (where `HTTPHeaders.set` would have put it).
    static func serialize(_ response: Response, head: RequestHead, keepAlive: Bool, upgrade: Bool, requestID: String? = nil) -> [UInt8] {
        var out = ByteWriter(capacity: 160 + response.body.count + response.headers.count * 32)
        serialize(response, head: head, keepAlive: keepAlive, upgrade: upgrade, requestID: requestID, into: &out)
        return out.bytes
    }

    /// Appends the serialised response to `out` (the event loop's reused writer: no buffer per
    /// response). Constant text goes in as `StaticString` bytes.
    static func serialize(_ response: Response, head: RequestHead, keepAlive: Bool, upgrade: Bool, requestID: String?,
                          into out: inout ByteWriter) {
        out.reserve(160 + response.body.count + response.headers.count * 32)
        let status = response.status
        out.append("HTTP/1.1 ")
        appendDecimal(status, into: &out)
        out.append(0x20)
        out.append(reason(status))
        out.append("\r\n")
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
            out.append("Content-Length: ")
            appendDecimal(response.body.count, into: &out)
            out.append("\r\n")
        }
        if !upgrade {
            if !keepAlive {
                out.append("Connection: close\r\n")
            } else if head.minorVersion == 0 {
                out.append("Connection: keep-alive\r\n")
            }
        }
        out.append("\r\n")
        if !isHead && !bodyless { out.append(response.body) }
    }

    /// Writes a header field; CR, LF and NUL in names or values are replaced by spaces so a
    /// handler can never split the response.
    private static func appendField(_ name: String, _ value: String, into out: inout ByteWriter) {
        appendSanitized(name, forbiddingColon: true, into: &out)
        out.append(": ")
        appendSanitized(value, forbiddingColon: false, into: &out)
        out.append("\r\n")
    }

    @inline(__always)
    private static func appendSanitized(_ text: String, forbiddingColon: Bool, into out: inout ByteWriter) {
        var text = text
        text.withUTF8 { bytes in
            var clean = true
            for b in bytes where b == 0x0D || b == 0x0A || b == 0 || (forbiddingColon && b == UInt8(ascii: ":")) {
                clean = false
                break
            }
            if clean {
                out.append(bytes)
            } else {
                for b in bytes { out.append(b == 0x0D || b == 0x0A || b == 0 || (forbiddingColon && b == UInt8(ascii: ":")) ? 0x20 : b) }
            }
        }
    }

    static func appendDecimal(_ value: Int, into out: inout ByteWriter) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        // Written from the last digit back, straight into place.
        out.append(count: digits) { at in
            var n = value
            for i in stride(from: digits - 1, through: 0, by: -1) {
                at[i] = UInt8(n % 10) + 0x30
                n /= 10
            }
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
