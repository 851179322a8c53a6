import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The company feeds: their newest entries for everyone signed in (`/company/feed`), the list of
/// feed URLs for admins (`/admin/company/feeds`).
struct FeedsController: Sendable {
    let feeds: FeedRepository
    let fetcher: FeedFetcher
    /// Resolves the audit trail per request: accounts, which keeps it, boots after company.
    let registry: ServiceRegistry
    let logger: Logger

    func register(_ routes: CompanyRouteGroups) {
        routes.signedIn.get("/company/feed", doc: Self.entriesDoc, entries)
        routes.admins.get("/company/feeds", doc: Self.listDoc, list)
        routes.admins.put("/company/feeds", maxBody: CompanyAPI.maxFeedsBody, doc: Self.replaceDoc, replace)
    }

    static let entriesDoc = RouteDoc(
        summary: "The newest entries of the company's feeds, newest first", tags: ["company"],
        query: [QueryDoc("limit", "how many entries, 1 to 50 (default 20)", schema: ["type": "integer"])],
        responses: [ResponseDoc(status: 200, description: "The entries", schema: CompanyAPI.feedItemsSchema),
                    ResponseDoc(status: 422, description: "A bad limit, in details.fields")],
        authenticated: true)

    func entries(_ request: Request, _ context: RequestContext) async throws -> Response {
        var limit = 20
        if let raw = request.query["limit"], !raw.isEmpty {
            guard let n = Int(raw), (1...50).contains(n) else { throw APIError.validationFailed(["limit": "must be a whole number from 1 to 50"]) }
            limit = n
        }
        return .json(Items(items: try await feeds.latest(limit: limit).map(FeedItemView.init)))
    }

    static let listDoc = RouteDoc(
        summary: "The company feed URLs with each one's last fetch", tags: ["company"],
        responses: [ResponseDoc(status: 200, description: "The feeds", schema: CompanyAPI.feedStatusesSchema)],
        authenticated: true)

    func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(Items(items: try await feeds.feeds().map(FeedStatusView.init)))
    }

    static let replaceDoc = RouteDoc(
        summary: "Replace the company feed URLs (kept URLs keep their entries); new ones are fetched at once", tags: ["company"],
        requestSchema: CompanyAPI.feedsRequestSchema,
        responses: [ResponseDoc(status: 200, description: "The feeds now", schema: CompanyAPI.feedStatusesSchema),
                    ResponseDoc(status: 422, description: "Invalid URLs, per field in details.fields")],
        authenticated: true)

    func replace(_ request: Request, _ context: RequestContext) async throws -> Response {
        let urls = try FeedsBody(request).urls
        let audit = registry.resolve((any AuditTrail).self)
        let entry = FeedURLs.auditRecord(urls, actorID: try context.user().id, ip: request.clientAddress)
        let saved = try await feeds.replace(with: urls) { db in try audit?.record(entry, in: db) }
        logger.notice("company feeds changed", ["user.id": String(try context.user().id), "request.id": context.requestID,
                                                "feeds": String(urls.count)])
        fetcher.wake()
        return .json(Items(items: saved.map(FeedStatusView.init)))
    }
}
