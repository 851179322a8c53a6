/// Certificate and key (PEM files) for serving HTTPS.
public struct TLSConfiguration: Sendable {
    public var certificatePath: String
    public var keyPath: String

    /// PEM certificate chain and private key paths.
    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }
}

/// Everything the HTTP server can be tuned with; the defaults suit a small company.
public struct HTTPServerConfiguration: Sendable {
    public var host = "0.0.0.0"
    /// 0 picks an ephemeral port; `HTTPServer.start()` returns it.
    public var port = 8080
    /// Event loop threads; 0 means one per available CPU.
    public var eventLoops = 0
    public var maxHeaderBytes = 16 * 1024
    public var maxURIBytes = 8 * 1024
    /// Deadline for a whole request head, from its first byte (or from accept).
    public var headerTimeout: Duration = .seconds(10)
    /// Deadline for a whole request body, from the end of the head.
    public var bodyTimeout: Duration = .seconds(10)
    /// How long a keep-alive connection may sit idle between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// Connections past this many are answered 503 and closed.
    public var maxConnections = 4096
    /// Connections one client address may hold at once; more are answered 503 and closed.
    /// High enough for an office behind one NAT address; trusted proxies are exempt; 0 turns it off.
    public var maxConnectionsPerAddress = 256
    /// Peers (IP addresses) whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed and
    /// which the per-address limit does not apply to: every client arrives through them.
    public var trustedProxies: [String] = []
    /// Unsent response bytes a connection may have queued before the server stops reading and
    /// parsing its further requests (resumed once the peer has taken enough).
    public var maxOutboundBytes = 256 * 1024
    /// How long a request handler may run before the client is answered 503 and the handler
    /// is cancelled; its late result is discarded.
    public var handlerTimeout: Duration = .seconds(30)
    /// After the last byte of a closing response, how long unread request bytes are drained so
    /// the close does not become a reset that destroys the response in flight.
    public var lingerTimeout: Duration = .seconds(2)
    /// How long `shutdown()` lets in-flight requests run.
    public var shutdownGrace: Duration = .seconds(10)
    public var tls: TLSConfiguration? = nil
    public var webSocketMaxMessageBytes = 1 << 20
    /// Outbound bytes a WebSocket may have queued before the peer is dropped as too slow.
    public var webSocketMaxBufferedBytes = 4 << 20
    public var webSocketPingInterval: Duration = .seconds(30)

    /// The defaults; set fields as needed.
    public init() {}
}

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// Stable machine-readable reason.
    public enum Code: String, Sendable {
        case invalidAddress = "invalid_address"
        case addressInUse = "address_in_use"
        case socket = "socket"
        case tls = "tls"
        case alreadyStarted = "already_started"
    }

    public let code: Code
    public let message: String

    public var description: String { "\(code.rawValue): \(message)" }
}

extension Duration {
    var nanoseconds: UInt64 {
        let (s, atto) = components
        return UInt64(max(0, s)) * 1_000_000_000 + UInt64(max(0, atto) / 1_000_000_000)
    }
}
