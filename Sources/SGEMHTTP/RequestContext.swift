import Synchronization
import SGEMSupport

/// A typed key for values middleware attaches to a request (e.g. the authenticated user).
public protocol ContextKey { associatedtype Value: Sendable }

/// Per-request state shared by middleware and the handler: request id, logger, matched route,
/// and typed values. Safe to use from child tasks (`async let`, task groups): every mutable
/// field sits behind one lock, uncontended in the usual one-task case.
public final class RequestContext: Sendable {
    struct State: Sendable {
        /// Built from `base` on first use: most requests never log.
        var logger: Logger?
        var base: Logger
        var values: [ObjectIdentifier: any Sendable] = [:]
        var terminal: Handler?
        var upgrade: (any Sendable)?
    }

    public let requestID: String
    /// The matched route pattern, nil when no route matched. Known before the context is made:
    /// read on every request without the lock.
    public let route: String?
    private let state: Mutex<State>

    /// A context for in-process use (tests, internal calls).
    public init(requestID: String, logger: Logger) {
        self.requestID = requestID
        route = nil
        self.state = Mutex(State(logger: logger, base: logger))
    }

    init(requestID: String, baseLogger: Logger, route: String?) {
        self.requestID = requestID
        self.route = route
        self.state = Mutex(State(logger: nil, base: baseLogger))
    }

    /// The server's logger with `request.id` attached; middleware may add facts (`user.id`).
    public var logger: Logger {
        get {
            let id = requestID
            return state.withLock { state in
                if let logger = state.logger { return logger }
                let logger = state.base.with("request.id", id)
                state.logger = logger
                return logger
            }
        }
        set { state.withLock { $0.logger = newValue } }
    }

    /// What the router runs inside the global middleware: the route's handler or a 404/405.
    var terminal: Handler? {
        get { state.withLock { $0.terminal } }
        set { state.withLock { $0.terminal = newValue } }
    }

    /// Set by a WebSocket route when the handshake succeeded; the server switches protocols.
    var upgrade: (any Sendable)? {
        get { state.withLock { $0.upgrade } }
        set { state.withLock { $0.upgrade = newValue } }
    }

    /// The value stored under `key`, if any.
    public subscript<K: ContextKey>(key: K.Type) -> K.Value? {
        get { state.withLock { $0.values[ObjectIdentifier(key)] } as? K.Value }
        set { state.withLock { $0.values[ObjectIdentifier(key)] = newValue } }
    }
}
