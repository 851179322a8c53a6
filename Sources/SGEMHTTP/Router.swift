import Synchronization
import SGEMSupport

/// Produces the response to one request; throws errors that the router renders.
public typealias Handler = @Sendable (Request, RequestContext) async throws -> Response

/// A handler that answers without suspending (a health check, a document held in memory). A
/// closure without `await` registers as one; when no middleware wraps it, the server runs it on
/// the event loop's thread as the request arrives, with no task to create and resume.
public typealias SynchronousHandler = @Sendable (Request, RequestContext) throws -> Response

/// Wraps a handler: may answer itself, change the request, or decorate the response.
public protocol Middleware: Sendable {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response
}

/// Collects routes by method and path pattern (`/users/{id}`, `/assets/{path*}`) with global and
/// group middleware while the server assembles, then freezes them into an immutable `RouteTable`
/// (Hummingbird's `buildResponder()`): the server dispatches through the table without a lock,
/// and a route added after `build()` is a programming error.
public final class Router: Sendable {
    /// A class, not a struct: every request's match hands its route along, and a copy of a
    /// struct this size retained and released each of its fields (its documentation too).
    final class Route: Sendable {
        let method: HTTPMethod
        let pattern: String
        let doc: RouteDoc?
        let maxBodyBytes: Int
        /// The handler already wrapped in its groups' middleware.
        let handler: Handler
        /// The same handler, callable without a task: set when it is synchronous and no group
        /// middleware wraps it.
        let synchronousHandler: SynchronousHandler?
        /// Position in registration order: indexes the route's metric series in `Instruments`.
        let ordinal: Int

        init(method: HTTPMethod, pattern: String, doc: RouteDoc?, maxBodyBytes: Int, handler: @escaping Handler,
             synchronousHandler: SynchronousHandler?, ordinal: Int) {
            self.method = method
            self.pattern = pattern
            self.doc = doc
            self.maxBodyBytes = maxBodyBytes
            self.handler = handler
            self.synchronousHandler = synchronousHandler
            self.ordinal = ordinal
        }
    }

    struct State: Sendable {
        var routes: [Route] = []
        var global: [any Middleware] = []
        var built: RouteTable?
    }

    let defaultMaxBodyBytes: Int
    private let state = Mutex(State())

    /// An empty router; routes without their own cap accept bodies up to `defaultMaxBodyBytes`.
    public init(defaultMaxBodyBytes: Int = 1 << 20) {
        self.defaultMaxBodyBytes = defaultMaxBodyBytes
    }

    /// Adds global middleware; it runs for every request, including 404 and 405 answers.
    public func use(_ middleware: any Middleware) {
        state.withLock { state in
            precondition(state.built == nil, "middleware added after the routes were frozen")
            state.global.append(middleware)
        }
    }

    /// A group of routes under `prefix` whose handlers run inside `middleware`.
    public func group(_ prefix: String, middleware: [any Middleware] = []) -> RouteGroup {
        RouteGroup(router: self, prefix: Router.normalize(prefix), middleware: middleware)
    }

    /// Every registered route, in registration order (for the OpenAPI document).
    public var routes: [RouteInfo] {
        state.withLock { $0.routes.map { RouteInfo(method: $0.method, pattern: $0.pattern, doc: $0.doc, maxBodyBytes: $0.maxBodyBytes) } }
    }

    /// Freezes the routes into the table the server dispatches through; later calls return the
    /// same table.
    public func build() -> RouteTable {
        state.withLock { state in
            if let built = state.built { return built }
            let table = RouteTable(routes: state.routes, global: state.global, defaultMaxBodyBytes: defaultMaxBodyBytes)
            state.built = table
            return table
        }
    }

    /// Full in-process dispatch (tests, internal calls): freezes the routes on first use.
    public func respond(to request: Request, remoteAddress: String? = nil) async -> Response {
        await build().respond(to: request, remoteAddress: remoteAddress)
    }

    /// The body cap of the route that `method` and `path` reach (the default when none does).
    public func maxBodyBytes(method: HTTPMethod, path: String) -> Int {
        build().maxBodyBytes(method: method, path: path)
    }

    func add(_ method: HTTPMethod, pattern: String, doc: RouteDoc?, maxBodyBytes: Int, handler: @escaping Handler,
             synchronousHandler: SynchronousHandler?) {
        state.withLock { state in
            precondition(state.built == nil, "route \(method.rawValue) \(pattern) added after the routes were frozen")
            state.routes.append(Route(method: method, pattern: pattern, doc: doc, maxBodyBytes: maxBodyBytes, handler: handler,
                                      synchronousHandler: synchronousHandler, ordinal: state.routes.count))
        }
    }

    /// Everything the server needs to know after dispatch.
    struct Outcome {
        var response: Response
        var context: RequestContext
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
        add(method, path, maxBody: maxBody, doc: doc, handler: handler, synchronousHandler: nil)
    }

    /// Registers a synchronous `handler` for `method` at `path` under this group (a closure
    /// without `await` lands here): the server may run it without a task.
    public func on(_ method: HTTPMethod, _ path: String, maxBody: Int? = nil, doc: RouteDoc? = nil, _ handler: @escaping SynchronousHandler) {
        add(method, path, maxBody: maxBody, doc: doc, handler: { request, context in try handler(request, context) },
            synchronousHandler: middleware.isEmpty ? handler : nil)
    }

    private func add(_ method: HTTPMethod, _ path: String, maxBody: Int?, doc: RouteDoc?, handler: @escaping Handler,
                     synchronousHandler: SynchronousHandler?) {
        let pattern = prefix + Router.normalize(path)
        router.add(method, pattern: pattern.isEmpty ? "/" : pattern, doc: doc,
                   maxBodyBytes: maxBody ?? router.defaultMaxBodyBytes,
                   handler: Router.compose(middleware, around: handler),
                   synchronousHandler: synchronousHandler)
    }

    /// Registers a GET route (HEAD is answered from it too).
    public func get(_ path: String, doc: RouteDoc? = nil, _ handler: @escaping Handler) { on(.GET, path, doc: doc, handler) }
    /// Registers a synchronous GET route (HEAD is answered from it too).
    public func get(_ path: String, doc: RouteDoc? = nil, _ handler: @escaping SynchronousHandler) { on(.GET, path, doc: doc, handler) }
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
    /// Two per route ordinal (its own method, then HEAD answered by a GET route): the series a
    /// matched request lands in, so the hot path neither builds a label array nor hashes one.
    let routeSeries: [RouteSeries]

    init(logger: Logger, metrics: MetricsRegistry, routeCount: Int = 0) {
        self.logger = logger
        requests = metrics.counter("sgem_http_requests_total", help: "HTTP requests answered.", labels: ["method", "route", "status"])
        duration = metrics.histogram("sgem_http_request_duration_seconds", help: "Time to produce an HTTP response.", labels: ["method", "route"])
        routeSeries = (0..<2 * routeCount).map { _ in RouteSeries() }
    }

    static let standard = Instruments(logger: Logger(label: "http"), metrics: .shared)

    func record(request: Request, context: RequestContext, response: Response, started: UInt64, matched: Router.Route? = nil) {
        let elapsed = MonotonicClock.nanoseconds() &- started
        let route = context.route ?? "unmatched"
        let seconds = Double(elapsed) / 1e9
        if let cached = series(for: matched, method: request.method) {
            cached.duration(in: duration, method: request.method, route: route).observe(seconds)
            if let counter = cached.counter(in: requests, method: request.method, route: route, status: response.status) {
                counter.increment()
            } else {
                requests.increment(by: 1, [request.method.rawValue, route, String(response.status)])
            }
        } else {
            requests.increment(by: 1, [request.method.rawValue, route, String(response.status)])
            duration.observe(seconds, [request.method.rawValue, route])
        }
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

    /// The cached series of `route` for `method`: its own method, or HEAD on a GET route.
    private func series(for route: Router.Route?, method: HTTPMethod) -> RouteSeries? {
        guard let route else { return nil }
        let slot: Int
        if method == route.method {
            slot = 2 * route.ordinal
        } else if method == .HEAD {
            slot = 2 * route.ordinal + 1
        } else {
            return nil
        }
        return slot < routeSeries.count ? routeSeries[slot] : nil
    }
}

/// One route's metric series for one method, each resolved from its family on first use and
/// then read without a lock (`SeriesSlot`: every thread sees the same handle).
final class RouteSeries: Sendable {
    /// A lazily resolved counter series for one status.
    typealias StatusSlot = SeriesSlot<CounterSeries>

    /// Statuses with a slot of their own; any other status takes the family's labelled lookup.
    static let statuses: [Int] = [200, 201, 202, 204, 206, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 405,
                                  409, 410, 412, 413, 415, 416, 422, 429, 500, 501, 502, 503, 504]

    private let durationSeries = SeriesSlot<HistogramSeries>()
    private let slots: [StatusSlot] = RouteSeries.statuses.map { _ in StatusSlot() }

    func duration(in family: Histogram, method: HTTPMethod, route: String) -> HistogramSeries {
        if let found = durationSeries.load() { return found }
        return durationSeries.storeIfNil(family.series([method.rawValue, route]))
    }

    /// The counter series for `status`, or nil when the status has no slot.
    func counter(in family: Counter, method: HTTPMethod, route: String, status: Int) -> CounterSeries? {
        guard let index = RouteSeries.slotIndex(status) else { return nil }
        let slot = slots[index]
        if let found = slot.load() { return found }
        return slot.storeIfNil(family.series([method.rawValue, route, String(status)]))
    }

    private static func slotIndex(_ status: Int) -> Int? {
        // Binary search over the sorted table: no dictionary, no hashing.
        var low = 0
        var high = statuses.count - 1
        while low <= high {
            let mid = (low + high) / 2
            if statuses[mid] == status { return mid }
            if statuses[mid] < status { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }
}

/// A reference stored once, then read without a lock: what `AtomicLazyReference` does, but
/// specialised in this module. The standard type's `load` is generic code that looked up its
/// metadata on every call (about 800 instructions; two calls per request).
final class SeriesSlot<Series: AnyObject & Sendable>: Sendable {
    private let stored = Atomic<Unmanaged<Series>?>(nil)

    init() {}

    deinit { stored.load(ordering: .acquiring)?.release() }

    /// The stored reference, or nil before the first `storeIfNil`.
    @inline(__always)
    func load() -> Series? {
        stored.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// Stores `series` unless a reference is already there; returns the one stored.
    func storeIfNil(_ series: Series) -> Series {
        let retained = Unmanaged.passRetained(series)
        let (exchanged, current) = stored.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing)
        if exchanged { return series }
        retained.release()
        return current!.takeUnretainedValue()
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
