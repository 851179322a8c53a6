import SGEMSupport

/// The routes, frozen: a tree of path segments built once from a `Router`, plus a hash map for
/// parameter-free paths. Immutable and shared by every event loop, so dispatch takes no lock.
public struct RouteTable: Sendable {
    let root: FrozenNode
    /// Nodes of parameter-free patterns by exact path: one hash lookup for most requests.
    let staticNodes: [String: FrozenNode]
    /// The global middleware composed around `context.terminal`.
    let chain: Handler
    let defaultMaxBodyBytes: Int
    /// How many routes were registered (the size of `Instruments`' per-route series table).
    let routeCount: Int
    /// Whether global middleware wraps every route (then no handler runs without a task).
    let hasGlobalMiddleware: Bool

    init(routes: [Router.Route], global: [any Middleware], defaultMaxBodyBytes: Int) {
        let root = BuildNode()
        var staticPaths: [String: BuildNode] = [:]
        for route in routes {
            var node = root
            var catchAll = false
            for segment in Router.segments(route.pattern) {
                if segment.hasPrefix("{") && segment.hasSuffix("*}") {
                    let name = String(segment.dropFirst().dropLast(2))
                    if node.catchAll == nil { node.catchAll = (name, [:]) }
                    node.catchAll!.routes[route.method] = route
                    catchAll = true
                    break
                } else if segment.hasPrefix("{") && segment.hasSuffix("}") {
                    let name = String(segment.dropFirst().dropLast())
                    if node.param == nil { node.param = (name, BuildNode()) }
                    precondition(node.param!.name == name, "conflicting parameter names at \(route.pattern)")
                    node = node.param!.node
                } else if let next = node.statics[segment] {
                    node = next
                } else {
                    let next = BuildNode()
                    node.statics[segment] = next
                    node = next
                }
            }
            if catchAll { continue }
            node.routes[route.method] = route
            if !route.pattern.contains("{") { staticPaths[route.pattern] = node }
        }
        var frozen: [ObjectIdentifier: FrozenNode] = [:]
        self.root = root.frozen(&frozen)
        self.staticNodes = staticPaths.mapValues { $0.frozen(&frozen) }
        self.chain = Router.compose(global) { request, context in try await context.terminal!(request, context) }
        self.defaultMaxBodyBytes = defaultMaxBodyBytes
        routeCount = routes.count
        hasGlobalMiddleware = !global.isEmpty
    }

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
        match(method: method, path: path).route?.maxBodyBytes ?? defaultMaxBodyBytes
    }

    // `consuming`: the caller's request is moved in, so `var request` below does not copy it.
    /// With `setsRequestIDHeader` false the response does not carry `X-Request-Id`: the server
    /// writes it from `context.requestID` while serialising (no copy of shared header arrays).
    func dispatch(_ request: consuming Request, instruments: Instruments, setsRequestIDHeader: Bool = true) async -> Router.Outcome {
        var request = request
        let prepared = prepare(&request, instruments: instruments)
        return await respond(to: request, prepared, instruments: instruments, setsRequestIDHeader: setsRequestIDHeader)
    }

    /// What is decided about a request before its handler runs.
    struct Prepared {
        let started: UInt64
        let context: RequestContext
        let route: Router.Route?
        /// Methods the path accepts, when it matched a path but not the method (a 405).
        let allowed: [String]
    }

    /// Gives `request` its id, context and route (and the route's path parameters).
    func prepare(_ request: inout Request, instruments: Instruments) -> Prepared {
        let started = MonotonicClock.nanoseconds()
        let requestID = Router.requestID(from: request.headers["X-Request-Id"])
        let found = match(method: request.method, path: request.path)
        let context = RequestContext(requestID: requestID, baseLogger: instruments.logger, route: found.route?.pattern)
        if found.route != nil { request.parameters = found.parameters }
        return Prepared(started: started, context: context, route: found.route, allowed: found.allowed)
    }

    /// The prepared route's handler when it may run on the caller's thread without a task: it is
    /// synchronous and no middleware, group or global, wraps it.
    func synchronousHandler(for prepared: Prepared) -> SynchronousHandler? {
        hasGlobalMiddleware ? nil : prepared.route?.synchronousHandler
    }

    /// Runs the global middleware and the handler (or the 404/405 answer) for a prepared request.
    func respond(to request: consuming Request, _ prepared: Prepared, instruments: Instruments,
                 setsRequestIDHeader: Bool) async -> Router.Outcome {
        let context = prepared.context
        if let route = prepared.route {
            context.terminal = route.handler
        } else if !prepared.allowed.isEmpty {
            let allow = prepared.allowed.joined(separator: ", ")
            context.terminal = { _, _ in
                throw APIError(status: 405, code: "method_not_allowed", message: "method not allowed; allowed: \(allow)",
                               headers: HTTPHeaders([("Allow", allow)]))
            }
        } else {
            context.terminal = { _, _ in throw APIError.notFound("no route for this path") }
        }
        let response: Response
        do {
            response = try await chain(request, context)
        } catch {
            response = RouteTable.response(for: error, context: context)
        }
        return conclude(request, prepared, response: response, instruments: instruments, setsRequestIDHeader: setsRequestIDHeader)
    }

    /// Runs a synchronous handler (see `synchronousHandler(for:)`) on the caller's thread.
    func respondSynchronously(to request: consuming Request, _ prepared: Prepared, handler: SynchronousHandler,
                              instruments: Instruments, setsRequestIDHeader: Bool) -> Router.Outcome {
        let response: Response
        do {
            response = try handler(request, prepared.context)
        } catch {
            response = RouteTable.response(for: error, context: prepared.context)
        }
        return conclude(request, prepared, response: response, instruments: instruments, setsRequestIDHeader: setsRequestIDHeader)
    }

    /// The answer to an error a handler threw: its own for an `HTTPResponseError`, otherwise a
    /// bare 500 naming the request id, the error itself only in the log.
    static func response(for error: any Error, context: RequestContext) -> Response {
        if let error = error as? any HTTPResponseError { return .error(error) }
        context.logger.error("unhandled error", ["error": String(describing: error)])
        return .error(APIError(status: 500, code: "internal", message: "internal error; request id \(context.requestID)"))
    }

    /// The response as sent: request id header, HEAD without a body; recorded in the access log
    /// and the metrics.
    private func conclude(_ request: borrowing Request, _ prepared: Prepared, response: Response, instruments: Instruments,
                          setsRequestIDHeader: Bool) -> Router.Outcome {
        var response = response
        let context = prepared.context
        if setsRequestIDHeader { response.headers.set("X-Request-Id", context.requestID) }
        if request.method == .HEAD {
            if !response.body.isEmpty || !response.headers.contains("Content-Length") {
                response.headers.set("Content-Length", String(response.body.count))
            }
            response.body = []
        }
        instruments.record(request: request, context: context, response: response, started: prepared.started, matched: prepared.route)
        return Router.Outcome(response: response, context: context)
    }

    struct Match {
        var route: Router.Route?
        var parameters: [String: String] = [:]
        /// Methods the path accepts, when it matched a path but not the method.
        var allowed: [String] = []
    }

    func match(method: HTTPMethod, path: String) -> Match {
        if let node = staticNodes[path], let route = node.routes[method] ?? (method == .HEAD ? node.routes[.GET] : nil) {
            return Match(route: route)
        }
        return RouteTable.match(root: root, method: method, path: path)
    }

    static func match(root: FrozenNode, method: HTTPMethod, path: String) -> Match {
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
    private static func find(_ node: FrozenNode, _ parts: ArraySlice<Substring.UTF8View.SubSequence>, _ parameters: inout [(String, String)]) -> [HTTPMethod: Router.Route]? {
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

/// A node of the frozen routing tree; every field is fixed when the table is built.
final class FrozenNode: Sendable {
    let statics: [String: FrozenNode]
    let param: (name: String, node: FrozenNode)?
    let catchAll: (name: String, routes: [HTTPMethod: Router.Route])?
    let routes: [HTTPMethod: Router.Route]

    init(statics: [String: FrozenNode], param: (name: String, node: FrozenNode)?,
         catchAll: (name: String, routes: [HTTPMethod: Router.Route])?, routes: [HTTPMethod: Router.Route]) {
        self.statics = statics
        self.param = param
        self.catchAll = catchAll
        self.routes = routes
    }
}

/// A node while the table is being built, inside `RouteTable.init` only.
private final class BuildNode {
    var statics: [String: BuildNode] = [:]
    var param: (name: String, node: BuildNode)?
    var catchAll: (name: String, routes: [HTTPMethod: Router.Route])?
    var routes: [HTTPMethod: Router.Route] = [:]

    /// The immutable copy; `done` maps build nodes already frozen, so shared nodes stay shared.
    func frozen(_ done: inout [ObjectIdentifier: FrozenNode]) -> FrozenNode {
        if let node = done[ObjectIdentifier(self)] { return node }
        var statics: [String: FrozenNode] = [:]
        for (segment, child) in self.statics { statics[segment] = child.frozen(&done) }
        let param = self.param.map { (name: $0.name, node: $0.node.frozen(&done)) }
        let node = FrozenNode(statics: statics, param: param, catchAll: catchAll, routes: routes)
        done[ObjectIdentifier(self)] = node
        return node
    }
}
