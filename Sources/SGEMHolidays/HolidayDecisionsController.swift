import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What admins do with requests: list and export them, look at one before deciding, and
/// approve, reject or reopen it.
struct HolidayDecisionsController: Sendable {
    let book: HolidayBook
    let logger: Logger

    func register(_ routes: HolidaysRouteGroups) {
        routes.admins.get("/holidays", doc: Self.listDoc, list)
        routes.admins.get("/holidays.csv", doc: Self.exportDoc, export)
        routes.admins.get("/holidays/{id}", doc: Self.detailDoc, detail)
        for action in [HolidayTransitions.Action.approve, .reject, .reopen] {
            routes.admins.post("/holidays/{id}/\(action.rawValue)", maxBody: HolidaysAPI.maxBody, doc: Self.decisionDoc(action)) { request, context in
                try await decide(action, request, context)
            }
        }
    }

    static let listDoc = RouteDoc(
        summary: "All requests, with filters: pending first, the soonest start first; then the rest, the latest start first",
        tags: ["holidays", "admin"],
        query: [QueryDoc("status", "pending, approved, rejected or cancelled", schema: HolidaysAPI.statusSchema),
                HolidaysAPI.yearQuery,
                QueryDoc("userId", "one employee's requests", schema: ["type": "integer", "minimum": 1]),
                QueryDoc("type", "a leave type key"),
                QueryDoc("limit", "at most this many, 1 to 5000 (default 1000)", schema: ["type": "integer", "minimum": 1, "maximum": 5000])],
        responses: [ResponseDoc(status: 200, description: "The requests", schema: HolidaysAPI.items(HolidaysAPI.adminItemSchema)),
                    APISchema.error(422, "validation_failed (a filter)")] + HolidaysAPI.adminErrors,
        authenticated: true)

    func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        let filter = try AdminListFilter(request)
        return .json(Items(items: try await book.adminList(status: filter.status, year: filter.year, userID: filter.userID,
                                                           typeKey: filter.typeKey, limit: filter.limit)))
    }

    static let exportDoc = RouteDoc(
        summary: "Every request with a day in the year, as CSV (RFC 4180)",
        description: """
            UTF-8 with a byte order mark, so spreadsheets read names such as Lucía right. Columns: id, userId, displayName, \
            username, type (the key), typeName, start, end, halfStart, halfEnd, days, daysInYear (the part of days that \
            falls in the year), status, note, createdAt, decidedBy (an id), decidedByName, decidedAt, decisionNote. Cells \
            that start with = + - @ are prefixed with ' so spreadsheets do not run them as formulas.
            """,
        tags: ["holidays", "admin"], query: [HolidaysAPI.yearQuery],
        responses: [ResponseDoc(status: 200, description: "CSV with a header row", schema: APISchema.string, contentType: "text/csv"),
                    APISchema.error(422, "validation_failed (year)")] + HolidaysAPI.adminErrors,
        authenticated: true)

    func export(_ request: Request, _ context: RequestContext) async throws -> Response {
        let settings = try await book.settings()
        let year = try HolidaysAPI.year(request) ?? book.today(settings).year
        var response = Response.text(try await book.csv(year: year), contentType: "text/csv; charset=utf-8; header=present")
        response.headers.set("Content-Disposition", "attachment; filename=\"holidays-\(year).csv\"")
        return response
    }

    static let detailDoc = RouteDoc(
        summary: "A request with what an admin needs to decide it",
        description: """
            summary is the employee's year of the start date; otherRequests their other requests with a day in that \
            year; alsoAway the other active people's approved and pending requests with a day in common with it, by \
            start date, each with its status; overLimit is true when approving it would put more people than \
            maxSimultaneousAbsences away on one of its working days (counting approved leave and this request; \
            pending ones are not counted; false without a limit); maxSimultaneousAbsences is the company's limit \
            (null when none).
            """,
        tags: ["holidays", "admin"],
        responses: [ResponseDoc(status: 200, description: "The detail", schema: HolidaysAPI.detailSchema),
                    APISchema.error(404, "not_found")] + HolidaysAPI.adminErrors,
        authenticated: true)

    func detail(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(try await book.detail(try HolidaysAPI.id(request)))
    }

    static func decisionDoc(_ action: HolidayTransitions.Action) -> RouteDoc {
        RouteDoc(
            summary: action == .reopen ? "Reopen an approved request (back to pending)" : "\(action.rawValue.capitalized) a pending request",
            description: "The note is optional and goes to the history and the employee's notice. An admin may not decide their own request while another active admin exists (403).",
            tags: ["holidays", "admin"], requestSchema: HolidaysAPI.noteBodySchema,
            responses: [ResponseDoc(status: 200, description: "The request now", schema: HolidaysAPI.requestSchema),
                        APISchema.error(404, "not_found"), APISchema.error(409, "invalid_transition")] + HolidaysAPI.writeErrors,
            authenticated: true)
    }

    func decide(_ action: HolidayTransitions.Action, _ request: Request, _ context: RequestContext) async throws -> Response {
        try await HolidayRequestsController.apply(action, request, context, book: book, logger: logger)
    }
}
