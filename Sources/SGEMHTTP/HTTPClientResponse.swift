/// A complete response: status, header fields and the whole body (bounded by the client's cap).
public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// The URL that answered (differs from the request's after a redirect).
    public var url: HTTPClientURL

    /// A response as the client returns it (also for stubs in callers' tests).
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], url: HTTPClientURL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var text: String { String(decoding: body, as: UTF8.self) }
}
