import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The dates nobody's leave counts: everyone reads them, admins add and remove them.
struct PublicHolidaysController: Sendable {
    let book: HolidayBook

    func register(_ routes: HolidaysRouteGroups) {
        routes.signedIn.get("/public-holidays", doc: Self.listDoc, list)
        routes.admins.post("/public-holidays", maxBody: HolidaysAPI.maxBody, doc: Self.addDoc, add)
        routes.admins.delete("/public-holidays/{id}", doc: Self.deleteDoc, delete)
    }

    static let listDoc = RouteDoc(
        summary: "The public holidays of a year (default: the current one)", tags: ["holidays"], query: [HolidaysAPI.yearQuery],
        responses: [ResponseDoc(status: 200, description: "The public holidays by date", schema: HolidaysAPI.items(HolidaysAPI.publicHolidaySchema)),
                    APISchema.error(422, "validation_failed (year)")] + HolidaysAPI.authErrors,
        authenticated: true)

    func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        let settings = try await book.settings()
        let year = try HolidaysAPI.year(request) ?? book.today(settings).year
        return .json(Items(items: try await book.publicHolidays(year: year)))
    }

    static let addDoc = RouteDoc(
        summary: "Add a public holiday",
        description: "Requests filed before keep the days they were counted with; new requests do not count the date.",
        tags: ["holidays", "admin"],
        requestSchema: APISchema.object(["date": APISchema.date, "name": ["type": "string", "minLength": 1, "maxLength": 100]],
                                        required: ["date", "name"]),
        responses: [ResponseDoc(status: 201, description: "The public holiday", schema: HolidaysAPI.publicHolidaySchema),
                    APISchema.error(409, "public_holiday_exists")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func add(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = try NewPublicHolidayBody(request)
        let added = try await book.addPublicHolidays([(body.date, body.name)], by: try HolidaysAPI.actor(request, context))
        return .json(added[0], status: 201)
    }

    static let deleteDoc = RouteDoc(
        summary: "Remove a public holiday", tags: ["holidays", "admin"],
        responses: [ResponseDoc(status: 204, description: "Removed"), APISchema.error(404, "not_found")] + HolidaysAPI.adminErrors,
        authenticated: true)

    func delete(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try HolidaysAPI.id(request, "no such public holiday")
        try await book.deletePublicHoliday(id, by: try HolidaysAPI.actor(request, context))
        return .noContent()
    }
}
