import Synchronization
import SGEMSupport

/// Produces the response to one request; throws errors that the router renders.
public typealias Handler = @Sendable (Request, RequestContext) async throws -> Response

/// Wraps a handler: may answer itself, change the request, or decorate the response.
public protocol Middleware: Sendable {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response
}

/// Routes requests by method and path pattern (`/users/{id}`, `/assets/{path*}`) through global
/// and group middleware; renders errors, answers HEAD from GET routes, assigns request ids,
/// writes the access log and records metrics.
public final class Router: Sendable {
    struct Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let doc: RouteDoc?
        let maxBodyBytes: Int
        /// The handler already wrapped in its groups' middleware.
        let handler: Handler
    }

    struct State: Sendable {
        var root = Node()
        /// Nodes of parameter-free patterns by exact path: one hash lookup for most requests.
        var staticNodes: [String: Node] = [:]
        var routes: [RouteInfo] = []
        var global: [any Middleware] = []
        /// The global middleware composed around `context.terminal`, rebuilt by `use`.
        var chain: Handler = { request, context in try await context.terminal!(request, context) }
    }

    let defaultMaxBodyBytes: Int
    let state = Mutex(State())

    /// An empty router; routes without their own cap accept bodies up to `defaultMaxBodyBytes`.
    public init(defaultMaxBodyBytes: Int = 1 << 20) {
        self.defaultMaxBodyBytes = defaultMaxBodyBytes
    }

    /// Adds global middleware; it runs for every request, including 404 and 405 answers.
    public func use(_ middleware: any Middleware) {
        state.withLock { state in
            state.global.append(middleware)
            state.chain = Router.compose(state.global) { request, context in try await context.terminal!(request, context) }
        }
    }

    /// A group of routes under `prefix` whose handlers run inside `middleware`.
    public func group(_ prefix: String, middleware: [any Middleware] = []) -> RouteGroup {
        RouteGroup(router: self, prefix: Router.normalize(prefix), middleware: middleware)
    }

    /// Every registered route, in registration order (for the OpenAPI document).
    public var routes: [RouteInfo] { state.withLock { $0.routes } }

    /// Full in-process dispatch: routing, middleware, error rendering, HEAD. Never throws.
    public func respond(to request: Request, remoteAddress: String? = nil) async -> Response {
        var request = request
        if let remoteAddress {
            request.remoteAddress = remoteAddress
            request.clientAddress = remoteAddress
        }
        return await dispatch(request, instruments: .standard).response
    }

    /// The body cap of the route that `method` and `path` reach (the default when none does).
    public func maxBodyBytes(method: HTTPMethod, path: String) -> Int {
        let found = state.withLock { Router.match($0, method: method, path: path) }
        return found.route?.maxBodyBytes ?? defaultMaxBodyBytes
    }

    func add(_ route: Route) {
        state.withLock { state in
            var node = state.root
            for segment in Router.segments(route.pattern) {
                if segment.hasPrefix("{") && segment.hasSuffix("*}") {
                    let name = String(segment.dropFirst().dropLast(2))
                    if node.catchAll == nil { node.catchAll = (name, [:]) }
                    node.catchAll!.routes[route.method] = route
                    state.routes.append(RouteInfo(method: route.method, pattern: route.pattern, doc: route.doc, maxBodyBytes: route.maxBodyBytes))
                    return
                } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    let name = String(segment.dropFirst().dropLast())
                    if node.param == nil { node.param = (name, Node()) }
                    precondition(node.param!.name == name, "conflicting parameter names at \(route.pattern)")
                    node = node.param!.node
                } else {
                    if let next = node.statics[segment] { node = next } else {
                        let next = Node()
                        node.statics[segment] = next
                        node = next
                    }
                }
            }
            node.routes[route.method] = route
            if !route.pattern.contains("{") { state.staticNodes[route.pattern] = node }
            state.routes.append(RouteInfo(method: route.method, pattern: route.pattern, doc: route.doc, maxBodyBytes: route.maxBodyBytes))
        }
    }

    /// Everything the server needs to know after dispatch.
    struct Outcome {
        var response: Response
        var context: RequestContext
    }

    func dispatch(_ request: Request, instruments: Instruments) async -> Outcome {
        let started = MonotonicClock.nanoseconds()
        let requestID = Router.requestID(from: request.headers["X-Request-Id"])
        let context = RequestContext(requestID: requestID, baseLogger: instruments.logger)
        let (found, chain) = state.withLock { state in
            (Router.match(state, method: request.method, path: request.path), state.chain)
        }
        var request = request
        if let route = found.route {
            request.parameters = found.parameters
            context.route = route.pattern
            context.terminal = route.handler
        } else if !found.allowed.isEmpty {
            let allow = found.allowed.joined(separator: ", ")
            context.terminal = { _, _ in
                throw APIError(status: 405, code: "method_not_allowed", message: "method not allowed; allowed: \(allow)",
                               headers: HTTPHeaders([("Allow", allow)]))
            }
        } else {
            context.terminal = { _, _ in throw APIError.notFound("no route for this path") }
        }

        var response: Response
        do {
            response = try await chain(request, context)
        } catch let error as any HTTPResponseError {
            response = .error(error)
        } catch {
            context.logger.error("unhandled error", ["error": String(describing: error)])
            response = .error(APIError(status: 500, code: "internal", message: "internal error; request id \(requestID)"))
        }
        response.headers.set("X-Request-Id", requestID)
        if request.method == .HEAD {
            if !response.body.isEmpty || !response.headers.contains("Content-Length") {
                response.headers.set("Content-Length", String(response.body.count))
            }
            response.body = []
        }
        instruments.record(request: request, context: context, response: response, started: started)
        return Outcome(response: response, context: context)
    }

    static func compose(_ middleware: [any Middleware], around handler: @escaping Handler) -> Handler {
        var next = handler
        for m in middleware.reversed() {
            let inner = next
            next = { request, context in try await m.respond(to: request, context: context, next: inner) }
        }
        return next
    }

    /// A client's `X-Request-Id` when it is 1–64 characters of `[A-Za-z0-9._-]`, else 16 random hex digits.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 64,
           header.utf8.allSatisfy({ b in
               (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                   || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
           }) {
            return header
        }
        return RequestIDGenerator.next()
    }

    static func normalize(_ prefix: String) -> String {
        let parts = segments(prefix)
        return parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }

    static func segments(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    struct Match {
        var route: Route?
        var parameters: [String: String] = [:]
        /// Methods the path accepts, when it matched a path but not the method.
        var allowed: [String] = []
    }

    static func match(_ state: State, method: HTTPMethod, path: String) -> Match {
        if let node = state.staticNodes[path], let route = node.routes[method] ?? (method == .HEAD ? node.routes[.GET] : nil) {
            return Match(route: route)
        }
        return match(root: state.root, method: method, path: path)
    }

    static func match(root: Node, method: HTTPMethod, path: String) -> Match {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true)
        var parameters: [(String, String)] = []
        guard let routes = find(root, parts[...], &parameters) else { return Match() }
        let route = routes[method] ?? (method == .HEAD ? routes[.GET] : nil)
        if let route {
            var dict: [String: String] = [:]
            for (k, v) in parameters { dict[k] = v }
            return Match(route: route, parameters: dict)
        }
        var allowed = Set(routes.keys.map(\.rawValue))
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return Match(allowed: allowed.sorted())
    }

    /// Depth-first: static segments first, then a parameter, then a catch-all.
    private static func find(_ node: Node, _ parts: ArraySlice<Substring.UTF8View.SubSequence>, _ parameters: inout [(String, String)]) -> [HTTPMethod: Route]? {
        guard let first = parts.first else {
            if !node.routes.isEmpty { return node.routes }
            if let catchAll = node.catchAll {
                parameters.append((catchAll.name, ""))
                return catchAll.routes
            }
            return nil
        }
        let rest = parts.dropFirst()
        if let next = node.statics[String(Substring(first))], let found = find(next, rest, &parameters) { return found }
        if let param = node.param {
            parameters.append((param.name, String(Substring(first))))
            if let found = find(param.node, rest, &parameters) { return found }
            parameters.removeLast()
        }
        if let catchAll = node.catchAll {
            parameters.append((catchAll.name, parts.map { String(Substring($0)) }.joined(separator: "/")))
            return catchAll.routes
        }
        return nil
    }
}

/// A node of the routing tree.
// @unchecked Sendable: created and mutated only inside `Router.state`'s lock (registration),
// and read only inside that lock too (matching).
final class Node: @unchecked Sendable {
    var statics: [String: Node] = [:]
    var param: (name: String, node: Node)?
    var catchAll: (name: String, routes: [HTTPMethod: Router.Route])?
    var routes: [HTTPMethod: Router.Route] = [:]
}

/// Routes sharing a path prefix and middleware.
public struct RouteGroup: Sendable {
    let router: Router
    let prefix: String
    let middleware: [any Middleware]

    /// A nested group: prefixes concatenate and middleware runs outer first.
    public func group(_ prefix: String, middleware: [any Middleware] = []) -> RouteGroup {
        RouteGroup(router: router, prefix: self.prefix + Router.normalize(prefix), middleware: self.middleware + middleware)
    }

    /// Registers `handler` for `method` at `path` under this group.
    public func on(_ method: HTTPMethod, _ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping Handler) {
        let pattern = prefix + Router.normalize(path)
        router.add(Router.Route(method: method, pattern: pattern.isEmpty ? "/" : pattern, doc: doc,
                                maxBodyBytes: maxBody ?? router.defaultMaxBodyBytes,
                                handler: Router.compose(middleware, around: handler)))
    }

    /// Registers a GET route (HEAD is answered from it too).
    public func get(_ path: String, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.GET, path, doc: doc, handler) }
    /// Registers a POST route; `maxBody` overrides the router's default body cap.
    public func post(_ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.POST, path, maxBody: maxBody, doc: doc, handler) }
    /// Registers a PUT route.
    public func put(_ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.PUT, path, maxBody: maxBody, doc: doc, handler) }
    /// Registers a PATCH route.
    public func patch(_ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.PATCH, path, maxBody: maxBody, doc: doc, handler) }
    /// Registers a DELETE route.
    public func delete(_ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.DELETE, path, maxBody: maxBody, doc: doc, handler) }
}

/// The access log and HTTP metrics, shared by every request of one server.
struct Instruments: Sendable {
    let logger: Logger
    let requests: Counter
    let duration: Histogram

    init(logger: Logger, metrics: MetricsRegistry) {
        self.logger = logger
        requests = metrics.counter("sgem_http_requests_total", help: "HTTP requests answered.", labels: ["method", "route", "status"])
        duration = metrics.histogram("sgem_http_request_duration_seconds", help: "Time to produce an HTTP response.", labels: ["method", "route"])
    }

    static let standard = Instruments(logger: Logger(label: "http"), metrics: .shared)

    func record(request: Request, context: RequestContext, response: Response, started: UInt64) {
        let elapsed = MonotonicClock.nanoseconds() &- started
        let route = context.route ?? "unmatched"
        requests.increment(by: 1, [request.method.rawValue, route, String(response.status)])
        duration.observe(Double(elapsed) / 1e9, [request.method.rawValue, route])
        // Facts appended typed into one buffer: the access line is on every request's path.
        logger.log(.info, "request") { line in
            line.append("method", request.method.rawValue)
            line.append("route", route)
            line.append("path", request.path)
            line.append("status", response.status)
            line.append("duration_ms", fixedPoint: Int(elapsed / 1000), scale: 3)
            line.append("bytes", response.body.count)
            line.append("request.id", context.requestID)
            line.append("remote", request.remoteAddress)
        }
    }
}

/// Request ids: 16 hex digits from a counter mixed (splitmix64, a bijection) with a random
/// per-process seed, so they are unique and unguessable enough for correlation without paying
/// for the CSPRNG on every request.
enum RequestIDGenerator {
    static let seed: UInt64 = Crypto.randomBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        var z = seed &+ counter.wrappingAdd(1, ordering: .relaxed).newValue &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return String(unsafeUninitializedCapacity: 16) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for i in 0..<16 {
                buffer[i] = digits.utf8Start[Int((z >> UInt64(60 - 4 * i)) & 0xF)]
            }
            return 16
        }
    }
}
