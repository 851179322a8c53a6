import SGEMCore
import SGEMHTTP
import SGEMSupport

/// An employee's own leave: their year, filing a request, reading and cancelling one, and a
/// person's year for themselves or an admin.
struct HolidayRequestsController: Sendable {
    let book: HolidayBook
    let logger: Logger

    func register(_ routes: HolidaysRouteGroups) {
        routes.signedIn.get("/holidays", doc: Self.myYearDoc, myYear)
        routes.signedIn.post("/holidays", maxBody: HolidaysAPI.maxBody, doc: Self.createDoc, create)
        routes.signedIn.get("/holidays/{id}", doc: Self.showDoc, show)
        routes.signedIn.post("/holidays/{id}/cancel", maxBody: HolidaysAPI.maxBody, doc: Self.cancelDoc, cancel)
        routes.signedIn.get("/users/{id}/holidays", doc: Self.personYearDoc, personYear)
    }

    static let myYearDoc = RouteDoc(
        summary: "My holiday year: the summary and my requests with a day in it",
        description: "The year defaults to the current one in the company's time zone.",
        tags: ["holidays"], query: [HolidaysAPI.yearQuery],
        responses: [ResponseDoc(status: 200, description: "Summary and requests", schema: HolidaysAPI.yearSchema),
                    APISchema.error(422, "validation_failed (year)")] + HolidaysAPI.authErrors,
        authenticated: true)

    func myYear(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        return .json(try await book.year(of: me.id, year: try HolidaysAPI.year(request)))
    }

    static let createDoc = RouteDoc(
        summary: "Request leave",
        description: """
            start and end are calendar dates (YYYY-MM-DD) in the company's time zone, both included. halfStart: the \
            first day starts at midday; halfEnd: the last day ends at midday (each counts half a day; not both on a \
            one-day request). days counts working days (the company's working days minus public holidays), per year \
            for a request across New Year. A type that needs no approval is approved at once. 409 holiday_overlap \
            when a day is shared with one of my pending or approved requests; 409 allowance_exceeded when a year's \
            remaining days do not cover it (details: year, requestedDays, remainingDays).
            """,
        tags: ["holidays"],
        requestSchema: APISchema.object([
            "start": APISchema.date, "end": APISchema.date, "type": ["type": "string", "description": "leave type key; default vacation"],
            "halfStart": APISchema.boolean, "halfEnd": APISchema.boolean,
            "note": APISchema.nullable(["type": "string", "maxLength": .number(Double(HolidayBook.maxNote))]),
        ], required: ["start", "end"]),
        responses: [ResponseDoc(status: 201, description: "The request (pending, or approved for a type that needs no approval)",
                                schema: HolidaysAPI.requestSchema),
                    APISchema.error(409, "holiday_overlap or allowance_exceeded")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func create(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try NewHolidayRequestBody(request)
        let created = try await book.create(body.draft, for: me.id)
        logger.info("holiday requested", ["holiday.id": String(created.id), "user.id": String(me.id), "request.id": context.requestID])
        return .json(created, status: 201)
    }

    static let showDoc = RouteDoc(
        summary: "One request with its history (its owner or an admin; 404 for anyone else)", tags: ["holidays"],
        responses: [ResponseDoc(status: 200, description: "The request", schema: HolidaysAPI.requestSchema),
                    APISchema.error(404, "not_found")] + HolidaysAPI.authErrors,
        authenticated: true)

    func show(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(try await book.request(try HolidaysAPI.id(request), viewer: try context.user()))
    }

    static let cancelDoc = RouteDoc(
        summary: "Cancel a pending or approved request",
        description: "Its owner before the start date (in the company's time zone), an admin at any time. The body is optional.",
        tags: ["holidays"], requestSchema: HolidaysAPI.noteBodySchema,
        responses: [ResponseDoc(status: 200, description: "The request now", schema: HolidaysAPI.requestSchema),
                    APISchema.error(404, "not_found"), APISchema.error(409, "invalid_transition")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func cancel(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await Self.apply(.cancel, request, context, book: book, logger: logger)
    }

    static let personYearDoc = RouteDoc(
        summary: "A person's holiday year (themselves or an admin; inactive employees too)", tags: ["holidays"],
        query: [HolidaysAPI.yearQuery],
        responses: [ResponseDoc(status: 200, description: "Summary and requests", schema: HolidaysAPI.yearSchema),
                    APISchema.error(404, "not_found"), APISchema.error(422, "validation_failed (year)")] + HolidaysAPI.authErrors,
        authenticated: true)

    func personYear(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try HolidaysAPI.id(request, "no such user")
        try await book.checkYearAccess(of: id, viewer: me)
        return .json(try await book.year(of: id, year: try HolidaysAPI.year(request)))
    }

    /// Approve, reject, reopen or cancel request `{id}`, with the optional `{note}` body.
    static func apply(_ action: HolidayTransitions.Action, _ request: Request, _ context: RequestContext, book: HolidayBook,
                      logger: Logger) async throws -> Response {
        let me = try context.user()
        let id = try HolidaysAPI.id(request)
        let body = try DecisionNoteBody(request)
        let changed = try await book.apply(action, to: id, by: me, note: body.note, ip: request.clientAddress)
        logger.info("holiday request changed", ["holiday.id": String(id), "holiday.status": changed.status.rawValue,
                                                "user.id": String(me.id), "request.id": context.requestID])
        return .json(changed)
    }
}
