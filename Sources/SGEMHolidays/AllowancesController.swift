import SGEMCore
import SGEMHTTP
import SGEMSupport

/// An admin setting one employee's allowance for one year.
struct AllowancesController: Sendable {
    let book: HolidayBook
    let logger: Logger

    func register(_ routes: HolidaysRouteGroups) {
        routes.admins.put("/users/{id}/allowances/{year}", maxBody: HolidaysAPI.maxBody, doc: Self.setDoc, set)
    }

    static let setDoc = RouteDoc(
        summary: "Set one employee's allowance for one year (instead of the company default)",
        description: "days: 0 to 366, in half days.", tags: ["holidays", "admin"],
        requestSchema: APISchema.object(["days": ["type": "number", "minimum": 0, "maximum": 366, "multipleOf": 0.5]], required: ["days"]),
        responses: [ResponseDoc(status: 204, description: "Saved"), APISchema.error(404, "not_found (user)")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func set(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try HolidaysAPI.id(request, "no such user")
        guard let year = Int(request.parameters["year"] ?? ""), Day.years.contains(year) else {
            throw APIError.validationFailed(["year": "must be a year from \(Day.years.lowerBound) to \(Day.years.upperBound)"])
        }
        let body = try AllowanceBody(request)
        let me = try context.user()
        try await book.setAllowance(userID: id, year: year, days: body.days, by: AuditActor(userID: me.id, ip: request.clientAddress))
        logger.notice("allowance set", ["user.id": String(me.id), "target.id": String(id), "year": String(year),
                                        "request.id": context.requestID])
        return .noContent()
    }
}
