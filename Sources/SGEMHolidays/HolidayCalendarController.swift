import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Who is away when: the team calendar, and the private iCal feed with the link that opens it.
struct HolidayCalendarController: Sendable {
    let book: HolidayBook

    func register(_ routes: HolidaysRouteGroups) {
        routes.signedIn.get("/holidays/calendar", doc: Self.calendarDoc, calendar)
        routes.signedIn.post("/me/calendar-token", doc: Self.newLinkDoc, newLink)
        routes.open.get("/holidays/calendar.ics", doc: Self.feedDoc, feed)
    }

    static let calendarDoc = RouteDoc(
        summary: "Who is away between two dates (at most 92 days)",
        description: """
            Approved absences of active people; admins also see pending ones. type and typeName only for admins and \
            the person themselves; others see typeName "away" and type null.
            """,
        tags: ["holidays"],
        query: [QueryDoc("from", "first day, YYYY-MM-DD (required)", schema: APISchema.date),
                QueryDoc("to", "last day, YYYY-MM-DD (required), at most 92 days after from", schema: APISchema.date)],
        responses: [ResponseDoc(status: 200, description: "The absences", schema: HolidaysAPI.items(HolidaysAPI.calendarItemSchema)),
                    APISchema.error(422, "validation_failed (from, to)")] + HolidaysAPI.authErrors,
        authenticated: true)

    /// Written with `Absence.page` rather than `JSONEncoder`: a month of a large company is
    /// hundreds of absences (the same objects as `Absence`'s `Encodable` form).
    func calendar(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let window = try CalendarWindow(request)
        let absences = try await book.calendar(from: window.from, to: window.to, viewer: me)
        return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: HolidayBook.Absence.page(absences))
    }

    static let newLinkDoc = RouteDoc(
        summary: "A private iCal feed URL; a new call revokes the previous URL",
        description: "The URL carries a random token (stored hashed); anyone holding it sees the company's approved absences as its owner would.",
        tags: ["holidays"],
        responses: [ResponseDoc(status: 200, description: "The feed URL", schema: HolidaysAPI.calendarLinkSchema)] + HolidaysAPI.authErrors,
        authenticated: true)

    func newLink(_ request: Request, _ context: RequestContext) async throws -> Response {
        let token = try await book.newCalendarToken(for: try context.user().id)
        let path = "/api/v1/holidays/calendar.ics?token=\(token)"
        guard let host = HolidaysAPI.host(request) else { return .json(CalendarLink(url: path)) }
        return .json(CalendarLink(url: "\(request.isSecure ? "https" : "http")://\(host)\(path)"))
    }

    static let feedDoc = RouteDoc(
        summary: "The private iCal feed (RFC 5545) of approved absences, a year back and two ahead",
        description: "Authenticated by its token alone. Leave type names as the token's owner may see them; others' read \"away\".",
        tags: ["holidays"], query: [QueryDoc("token", "the token of the URL from POST /me/calendar-token")],
        responses: [ResponseDoc(status: 200, description: "The calendar", schema: APISchema.string, contentType: "text/calendar"),
                    APISchema.error(401, "unauthenticated: no, an unknown or a revoked token")])

    func feed(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let token = request.query["token"], let owner = try await book.calendarTokenOwner(token) else {
            throw APIError.unauthenticated("this calendar link is unknown or was replaced by a newer one")
        }
        let absences = try await book.feed(viewer: owner)
        let host = HolidaysAPI.host(request).map { String($0.prefix { $0 != ":" }) } ?? "sgem-server"
        var response = Response.text(CalendarFeed.ics(absences, stamp: book.clock.now(), host: host), contentType: "text/calendar; charset=utf-8")
        response.headers.set("Cache-Control", "private, no-store")
        return response
    }
}
