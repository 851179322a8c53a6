/// One outbound request: method, absolute URL, header fields and body bytes. The client owns
/// framing: `Host`, `Content-Length`, `Transfer-Encoding` and `Connection` given here are replaced.
public struct HTTPClientRequest: Sendable {
    public var method: HTTPMethod
    public var url: HTTPClientURL
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The whole call's time limit, when not the client's (e.g. a provider's admin-set timeout).
    public var timeout: Duration?
    /// The largest response body this caller accepts, when smaller than the client's cap: reading
    /// stops with `too_large` as soon as the answer is known to be bigger (a 2 MiB feed, a 1 MiB
    /// provider answer).
    public var maxResponseBytes: Int?

    /// A request for an already-parsed URL.
    public init(method: HTTPMethod = .GET, url: HTTPClientURL, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                timeout: Duration? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// A request for `url`, throwing `invalid_url` when it is not an absolute http(s) URL.
    public init(method: HTTPMethod = .GET, url: String, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [],
                timeout: Duration? = nil) throws(HTTPClientError) {
        self.init(method: method, url: try HTTPClientURL(url), headers: headers, body: body, timeout: timeout)
    }

    /// Methods that may be sent again when a reused connection turns out to have been closed.
    var isIdempotent: Bool { [.GET, .HEAD, .PUT, .DELETE, .OPTIONS].contains(method) }

    /// The request head and body as bytes on the wire; `invalid_request` for a header that could
    /// smuggle another line or a method that is not a token.
    func serialized(userAgent: String) throws(HTTPClientError) -> [UInt8] {
        guard !method.rawValue.isEmpty, method.rawValue.utf8.allSatisfy(RequestParser.isTChar) else {
            throw HTTPClientError(.invalidRequest, "the method is not a token")
        }
        let owned = ["Host", "Content-Length", "Transfer-Encoding", "Connection"]
        var head = "\(method.rawValue) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\n"
        for (name, value) in headers where !owned.contains(where: { HTTPHeaders.equalsIgnoringCase($0, name) }) {
            guard !name.isEmpty, name.utf8.allSatisfy(RequestParser.isTChar) else {
                throw HTTPClientError(.invalidRequest, "the header name \(name.prefix(64).debugDescription) is not a token")
            }
            guard value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw HTTPClientError(.invalidRequest, "the value of \(name) holds control characters")
            }
            head += "\(name): \(value)\r\n"
        }
        if !headers.contains("User-Agent") { head += "User-Agent: \(userAgent)\r\n" }
        if !body.isEmpty || [.POST, .PUT, .PATCH].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
