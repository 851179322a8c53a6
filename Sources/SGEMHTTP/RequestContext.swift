import SGEMSupport

/// A typed key for values middleware attaches to a request (e.g. the authenticated user).
public protocol ContextKey { associatedtype Value: Sendable }

/// Per-request state shared by middleware and the handler: request id, logger, matched route,
/// and typed values.
// @unchecked Sendable: one request's task owns it; middleware and handler run one after another
// in that task, never concurrently.
public final class RequestContext: @unchecked Sendable {
    public let requestID: String
    /// The server's logger with `request.id` attached (built on first use).
    public var logger: Logger {
        get {
            if let logger = storedLogger { return logger }
            let logger = baseLogger.with("request.id", requestID)
            storedLogger = logger
            return logger
        }
        set { storedLogger = newValue }
    }
    private var storedLogger: Logger?
    private let baseLogger: Logger
    /// The matched route pattern, nil when no route matched.
    public internal(set) var route: String?
    private var values: [ObjectIdentifier: any Sendable] = [:]
    /// What the router runs inside the global middleware: the route's handler or a 404/405.
    var terminal: Handler?
    /// Set by a WebSocket route when the handshake succeeded; the server switches protocols.
    var upgrade: (any Sendable)?

    /// A context for in-process use (tests, internal calls).
    public init(requestID: String, logger: Logger) {
        self.requestID = requestID
        self.baseLogger = logger
        self.storedLogger = logger
    }

    init(requestID: String, baseLogger: Logger) {
        self.requestID = requestID
        self.baseLogger = baseLogger
    }

    /// The value stored under `key`, if any.
    public subscript<K: ContextKey>(key: K.Type) -> K.Value? {
        get { values[ObjectIdentifier(key)] as? K.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}
