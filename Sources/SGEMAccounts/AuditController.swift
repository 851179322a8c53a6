import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The audit log, for admins (`/api/v1/admin/audit`).
struct AuditController: AccountsController {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let admin = admins(routes)
        admin.get("/audit", doc: Self.pageDoc, page)
        admin.get("/audit/events", doc: Self.eventsDoc, events)
    }

    static let pageDoc = RouteDoc(
        summary: "The audit log, newest first: sign-ins, people, settings, the company, holidays, notices, translation",
        description: """
            Page with ?before=<id of the last item seen>&limit= (default 50, at most 200); nextBefore is the id to pass \
            as before for the next page, null at the end. event keeps one event name (holiday.approved) or one kind, \
            the name's first word (holiday keeps holiday.approved, holiday.public_added, …); several, comma-separated \
            (user,role,password), keep any of them. GET /admin/audit/events lists the names. userId keeps the events \
            that user did or underwent. Entries made at the command line have no actor and say "(command line)".
            """, tags: ["accounts", "admin"],
        query: [QueryDoc("before", "the id of the last event seen; events older than it follow", schema: ["type": "integer"]),
                QueryDoc("limit", "how many events, 1 to 200 (default 50)", schema: ["type": "integer"]),
                QueryDoc("event", "only these event names or kinds, comma-separated: login.failure, holiday, user,role,password"),
                QueryDoc("userId", "only events this user did (actor) or underwent (target)", schema: ["type": "integer"])],
        responses: [ResponseDoc(status: 200, description: "The events", schema: auditPageSchema),
                    ResponseDoc(status: 422, description: "validation_failed (before, limit, event or userId)")],
        authenticated: true)

    @Sendable func page(_ request: Request, _ context: RequestContext) async throws -> Response {
        var problems: [String: String] = [:]
        func id(_ name: String, _ problem: String) -> Int64? {
            guard let raw = request.query[name], !raw.isEmpty else { return nil }
            guard let value = Int64(raw) else { problems[name] = problem; return nil }
            return value
        }
        let beforeID = id("before", "must be an event id")
        let userID = id("userId", "must be a user id")
        var limit = 50
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), n >= 1 { limit = min(n, 200) } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        let events = AuditController.eventFilter(request.query["event"] ?? "", problems: &problems)
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        let page = try await service.auditPage(before: beforeID, limit: limit, events: events, userID: userID)
        return .json(AuditPageView(items: page.items.map(\.view), nextBefore: page.more ? page.items.last?.id : nil))
    }

    /// The `event` filter: up to 20 comma-separated names or kinds, each 1 to 64 of a-z 0-9 . _
    /// (so none can be mistaken for a pattern); empty keeps every event.
    static func eventFilter(_ raw: String, problems: inout [String: String]) -> [String] {
        let filters = raw.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        let valid = filters.count <= 20 && filters.allSatisfy { f in
            (1...64).contains(f.utf8.count) && f.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F }
                && !f.hasPrefix(".") && !f.hasSuffix(".")
        }
        if !valid { problems["event"] = "must be up to 20 event names or kinds (a-z, 0-9, . and _), comma-separated"; return [] }
        return filters
    }

    static let eventsDoc = RouteDoc(
        summary: "The audit log's event names, for filtering", tags: ["accounts", "admin"],
        responses: [ResponseDoc(status: 200, description: "The names, sorted", schema: nameListSchema)],
        authenticated: true)

    @Sendable func events(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(NameListView(items: try await service.auditEventNames(declared: runtime.declaredAuditEvents)))
    }
}
