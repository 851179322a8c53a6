import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import Synchronization

/// The system section of the API: liveness and readiness and the metrics at the root, the
/// OpenAPI document under `/api/v1`.
struct SystemController: Sendable {
    let store: Store
    let serviceGroup: ServiceGroup
    let metrics: MetricsRegistry
    let router: Router
    let version: String
    /// The OpenAPI document, built at its first request (routes are frozen once serving starts).
    let document = DocumentCache()

    /// Liveness and readiness on `root`, the metrics on `scrapers` (a group with `MetricsAccess`),
    /// the document on `routes`.
    func register(root: RouteGroup, scrapers: RouteGroup, routes: RouteGroup) {
        root.get("/healthz", doc: Self.healthDoc, health)
        root.get("/readyz", doc: Self.readyDoc, ready)
        scrapers.get("/metrics", doc: Self.metricsDoc, metricsText)
        routes.get("/openapi.json", doc: Self.openAPIDoc, openAPI)
    }

    /// A status answer no cache keeps.
    static func status(_ status: String) -> Response {
        Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                 body: (try? OrderedJSONEncoder.encode(StatusView(status: status))) ?? [])
    }

    static let healthDoc = RouteDoc(summary: "Liveness: the process answers", tags: ["system"],
                                    responses: [ResponseDoc(status: 200, description: "Alive", schema: SystemAPI.statusSchema)])

    static let alive = status("ok")

    func health(_ request: Request, _ context: RequestContext) async throws -> Response {
        Self.alive
    }

    static let readyDoc = RouteDoc(
        summary: "Readiness: the store answers queries and every required module service runs", tags: ["system"],
        responses: [ResponseDoc(status: 200, description: "Ready", schema: SystemAPI.statusSchema),
                    ResponseDoc(status: 503, description: "The store does not answer, or a required service stopped")])

    func ready(_ request: Request, _ context: RequestContext) async throws -> Response {
        // The reason is in the log; the public answer names only the service.
        if let failure = serviceGroup.failure { throw APIError.unavailable("service '\(failure.service)' stopped; the server is shutting down") }
        guard await store.ping() else { throw APIError.unavailable("the store does not answer") }
        return Self.status("ready")
    }

    static let metricsDoc = RouteDoc(
        summary: "Prometheus metrics (text format 0.0.4)",
        description: "Readable from this machine (loopback), or elsewhere with `Authorization: Bearer <metrics-token>`.",
        tags: ["system"],
        responses: [ResponseDoc(status: 200, description: "Metrics", schema: ["type": "string"], contentType: "text/plain"),
                    ResponseDoc(status: 403, description: "forbidden: not loopback and no valid metrics token")])

    func metricsText(_ request: Request, _ context: RequestContext) async throws -> Response {
        .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    static let openAPIDoc = RouteDoc(summary: "This API's OpenAPI 3 document", tags: ["system"],
                                     responses: [ResponseDoc(status: 200, description: "The document", schema: ["type": "object"])])

    func openAPI(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = document.bytes.withLock { cache -> [UInt8] in
            if let cache { return cache }
            let doc = OpenAPIDocument.build(routes: router.routes, title: "sgem-server API", version: version,
                                            description: "Employee directory, holidays, notices, chat and translation for one company.")
            let bytes = doc.serializedBytes()
            cache = bytes
            return bytes
        }
        return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
    }

    /// The serialised OpenAPI document once built; shared by every copy of the controller.
    final class DocumentCache: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
    }
}
