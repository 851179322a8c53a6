#if canImport(Glibc)
import Glibc
#endif
import SGEMApp
@testable import SGEMHTTP
import SGEMSupport

/// How a test reaches a server's API: over a loopback socket, or in-process through the server's
/// frozen route table. Both take the same request and give back the same `WireResponse`.
///
/// In-process, an exchange goes through what a connection does around the route table, minus
/// the socket and the event loop: the request head is written and parsed as on the wire (the
/// server's header and URI limits, its trusted proxies), a body over the route's cap is refused
/// with 413, the handler runs through the global middleware with the server's own instruments
/// (access log, metrics), and the response is serialised as the connection would send it
/// (`X-Request-Id`, `Content-Length`, `Connection: close`, no body for HEAD) and read back.
/// What needs the socket — connection limits, timeouts, keep-alive, pipelining, back-pressure,
/// WebSocket upgrades, TLS — is the HTTP and end-to-end suites' to test, over `loopback`.
public struct TestClient: Sendable {
    public enum Backend: Sendable {
        case inProcess
        case loopback
    }

    /// The back end of clients built from a server: in-process unless the environment says
    /// `SGEM_TEST_TRANSPORT=loopback` (then every feature suite goes over sockets, as the
    /// server's users do).
    public static let defaultBackend: Backend =
        getenv("SGEM_TEST_TRANSPORT").map { String(cString: $0) } == "loopback" ? .loopback : .inProcess

    public let port: Int
    public let backend: Backend
    private let server: HTTPServer?

    /// A client of `server` (started), through `backend`.
    public init(_ server: HTTPServer, backend: Backend = TestClient.defaultBackend) {
        self.server = server
        self.port = server.port
        self.backend = backend
    }

    /// A loopback client of whatever listens on 127.0.0.1:`port`.
    public init(port: Int) {
        self.server = nil
        self.port = port
        self.backend = .loopback
    }

    /// One exchange, with a bearer `token`, a `json` body (or `raw` bytes, sent as
    /// `application/octet-stream` unless `headers` say otherwise).
    public func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
                     headers: [(String, String)] = []) async throws -> WireResponse {
        var all = headers
        if let token { all.append(("Authorization", "Bearer \(token)")) }
        var body: [UInt8] = []
        if let json {
            body = Array(json.serialized().utf8)
            all.append(("Content-Type", "application/json"))
        } else if let raw {
            body = raw
            if !all.contains(where: { $0.0 == "Content-Type" }) { all.append(("Content-Type", "application/octet-stream")) }
        }
        return try await send(method, path, headers: all, body: body)
    }

    /// One exchange with exactly these headers (plus `Host`, `Connection: close` and
    /// `Content-Length`, as `httpRequest` adds them) and body.
    public func send(_ method: String, _ path: String, headers: [(String, String)], body: [UInt8]) async throws -> WireResponse {
        switch (backend, server) {
        case (.inProcess, let server?):
            return try await exchangeInProcess(server, method, path, headers: headers, body: body)
        default:
            let port = self.port
            return try await httpClientThreads.run { try httpRequest(port: port, method: method, path: path, headers: headers, body: body) }
        }
    }

    /// The steps of `Connection` from a parsed head to serialised bytes (`begin`, `dispatch`,
    /// `respond(with:)`, `fail`), for one request on a connection that closes after it.
    private func exchangeInProcess(_ server: HTTPServer, _ method: String, _ path: String, headers: [(String, String)],
                                   body: [UInt8]) async throws -> WireResponse {
        guard let core = server.core else { throw TestFailure("connect to \(port) failed: the server is not running") }
        let bytes = requestHead(port: port, method: method, path: path, headers: headers, bodyCount: body.count)
        let parsed = bytes.withUnsafeBytes {
            RequestParser.parseHead($0, maxHeaderBytes: core.configuration.maxHeaderBytes, maxURIBytes: core.configuration.maxURIBytes)
        }
        let fallback = RequestHead(method: .GET, target: "/", minorVersion: 1, headers: HTTPHeaders())
        func failed(_ error: APIError, head: RequestHead) throws -> WireResponse {
            try parseResponse(ResponseWriter.serialize(.error(error), head: head, keepAlive: false, upgrade: false), headRequest: head.method == .HEAD)
        }
        let head: RequestHead
        switch parsed {
        case .incomplete:
            throw TestFailure("in-process request head incomplete: \(method) \(path)")
        case .failure(let error):
            return try failed(APIError(status: error.status, code: error.code, message: error.message), head: fallback)
        case .head(let parsedHead, _):
            head = parsedHead
        }
        let remote = "127.0.0.1"
        var client = remote
        var secure = false
        if core.isTrustedProxy(remote) {
            if let forwarded = Connection.forwardedClient(head.headers) { client = forwarded }
            if let proto = head.headers.values("X-Forwarded-Proto").last?.split(separator: ",").last {
                secure = HTTPHeaders.equalsIgnoringCase(proto.trimmingASCIISpaces(), "https")
            }
        }
        var request = Request(method: head.method, target: head.target, headers: head.headers,
                              remoteAddress: remote, clientAddress: client, isSecure: secure)
        if head.chunked || (head.contentLength ?? 0) > 0 {
            let limit = core.router.maxBodyBytes(method: head.method, path: request.path)
            if let length = head.contentLength, length > limit { return try failed(.payloadTooLarge(limit: limit), head: head) }
        }
        request.body = body
        let outcome = await core.router.dispatch(request, instruments: core.instruments, setsRequestIDHeader: false)
        guard outcome.response.status != 101 else {
            throw TestFailure("\(method) \(path) upgrades the connection: use a loopback client")
        }
        let keepAlive = false // `requestHead` asks for `Connection: close`, as `httpRequest` does
        let out = ResponseWriter.serialize(outcome.response, head: head, keepAlive: keepAlive, upgrade: false,
                                           requestID: outcome.context.requestID)
        return try parseResponse(out, headRequest: head.method == .HEAD)
    }
}

extension RunningServer {
    /// A client of this server's API, through `TestClient.defaultBackend`.
    public var client: TestClient { TestClient(server) }
}
