import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the holidays controllers share: the documented error answers, the query and path
/// readers with their 422/404 wording, and the OpenAPI schemas of the answers (each checked
/// against its `Encodable` type by `HolidaysViewSchemaTests`).
enum HolidaysAPI {
    static let maxBody = 16 * 1024

    static let yearQuery = QueryDoc("year", "a year, 1900 to 2199 (default: the current one in the company's time zone)",
                                    schema: ["type": "integer", "minimum": .number(Double(Day.years.lowerBound)), "maximum": .number(Double(Day.years.upperBound))])

    static let authErrors = [APISchema.error(401, "unauthenticated or session_expired"), APISchema.error(403, "account_inactive")]
    static let adminErrors = [APISchema.error(401, "unauthenticated or session_expired"),
                              APISchema.error(403, "forbidden (not an admin), csrf_failed or account_inactive")]
    static let writeErrors = [
        APISchema.error(401, "unauthenticated or session_expired"),
        APISchema.error(403, "forbidden, csrf_failed or account_inactive"),
        APISchema.error(400, "invalid_json"), APISchema.error(413, "payload_too_large"),
        APISchema.error(415, "unsupported_media_type"), APISchema.error(422, "validation_failed, per field in details.fields"),
    ]

    /// The `{id}` path parameter; 404 when it is not an id at all.
    static func id(_ request: Request, _ message: String = "no such request") throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw APIError.notFound(message) }
        return id
    }

    /// `?year=`, nil when absent; 422 when not a year in range.
    static func year(_ request: Request) throws -> Int? {
        var problems: [String: String] = [:]
        let year = optionalYear(request, &problems)
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return year
    }

    static func optionalYear(_ request: Request, _ problems: inout [String: String]) -> Int? {
        guard let raw = request.query["year"], !raw.isEmpty else { return nil }
        guard let year = Int(raw), Day.years.contains(year) else {
            problems["year"] = "must be a year from \(Day.years.lowerBound) to \(Day.years.upperBound)"
            return nil
        }
        return year
    }

    static let dateProblem = "must be a real calendar date as YYYY-MM-DD from \(Day.years.lowerBound) to \(Day.years.upperBound)"

    /// Who is changing something, for the audit trail.
    static func actor(_ request: Request, _ context: RequestContext) throws -> AuditActor {
        AuditActor(userID: try context.user().id, ip: request.clientAddress)
    }

    /// The request's Host header when it is a plain host[:port] (never trusted for more than a link).
    static func host(_ request: Request) -> String? {
        guard let host = request.headers["Host"], (1...255).contains(host.utf8.count),
              host.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                  || $0 == 0x2E || $0 == 0x2D || $0 == 0x3A || $0 == 0x5B || $0 == 0x5D }) else { return nil }
        return host
    }
}

/// The holidays API's route groups by who may call them, built once for all its controllers.
struct HolidaysRouteGroups: Sendable {
    /// Any signed-in, active person.
    let signedIn: RouteGroup
    /// Admins, under `/admin`.
    let admins: RouteGroup
    /// No session: routes that check a token of their own (the iCal feed).
    let open: RouteGroup

    init(_ routes: RouteGroup, services: ServiceRegistry) {
        signedIn = routes.group("", middleware: [RequireUser(services: services)])
        admins = routes.group("/admin", middleware: [RequireAdmin(services: services)])
        open = routes
    }
}

// MARK: OpenAPI schemas

extension HolidaysAPI {
    /// `{items: [item]}`.
    static func items(_ item: JSONValue) -> JSONValue { APISchema.object(["items": APISchema.array(item)], required: ["items"]) }

    static let calendarLinkSchema = APISchema.object(["url": APISchema.string], required: ["url"])

    static let noteBodySchema = APISchema.object(["note": APISchema.nullable(["type": "string", "maxLength": .number(Double(HolidayBook.maxNote))])])

    static let leaveTypeSchema = APISchema.object([
        "id": APISchema.integer, "key": APISchema.string, "name": APISchema.string,
        "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
    ], required: ["id", "key", "name", "countsAgainstAllowance", "needsApproval"])

    static let publicHolidaySchema = APISchema.object(["id": APISchema.integer, "date": APISchema.date, "name": APISchema.string],
                                               required: ["id", "date", "name"])

    static let statusSchema: JSONValue = ["type": "string", "enum": .array(HolidayStatus.allCases.map { .string($0.rawValue) })]

    static let historySchema = APISchema.object([
        "from": APISchema.nullable(statusSchema), "to": statusSchema, "byUserId": APISchema.integer, "at": APISchema.dateTime,
        "note": APISchema.nullable(APISchema.string),
    ], required: ["from", "to", "byUserId", "at", "note"])

    static let requestSchema = APISchema.object([
        "id": APISchema.integer, "userId": APISchema.integer, "type": APISchema.string, "start": APISchema.date, "end": APISchema.date,
        "halfStart": APISchema.boolean, "halfEnd": APISchema.boolean, "days": APISchema.number, "status": statusSchema,
        "note": APISchema.nullable(APISchema.string), "createdAt": APISchema.dateTime, "decidedBy": APISchema.nullable(APISchema.integer),
        "decidedAt": APISchema.nullable(APISchema.dateTime), "decisionNote": APISchema.nullable(APISchema.string),
        "history": APISchema.array(historySchema),
    ], required: ["id", "userId", "type", "start", "end", "halfStart", "halfEnd", "days", "status", "note", "createdAt", "decidedBy",
                  "decidedAt", "decisionNote", "history"])

    static let summarySchema = APISchema.object([
        "year": APISchema.integer, "allowance": APISchema.number, "carriedOver": APISchema.number, "approvedDays": APISchema.number,
        "pendingDays": APISchema.number, "remainingDays": APISchema.number,
    ], required: ["year", "allowance", "carriedOver", "approvedDays", "pendingDays", "remainingDays"])

    /// The summary's fields at the top level (the contract's "summary + requests"), and again under `summary`.
    static let yearSchema = adding(["summary": summarySchema, "requests": APISchema.array(requestSchema),
                                    "workingDays": APISchema.array(APISchema.integer)],
                                   required: ["summary", "requests", "workingDays"], to: summarySchema)

    /// A request on the admin list: the request and the employee's `displayName`.
    static let adminItemSchema = adding(["displayName": APISchema.string], to: requestSchema)

    /// `schema`, an object, with more properties (and more required ones) after its own.
    static func adding(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = [], to schema: JSONValue) -> JSONValue {
        .object((schema.objectValue ?? []).map { key, value in
            switch key {
            case "properties": (key, .object((value.objectValue ?? []) + properties.map { ($0.key, $0.value) }))
            case "required": (key, .array((value.arrayValue ?? []) + required.map(JSONValue.string)))
            default: (key, value)
            }
        })
    }

    static let calendarItemSchema = APISchema.object([
        "userId": APISchema.integer, "displayName": APISchema.string, "start": APISchema.date, "end": APISchema.date,
        "halfStart": APISchema.boolean, "halfEnd": APISchema.boolean, "status": statusSchema,
        "type": APISchema.nullable(APISchema.string), "typeName": APISchema.string,
    ], required: ["userId", "displayName", "start", "end", "halfStart", "halfEnd", "status", "type", "typeName"])

    static let detailSchema = APISchema.object([
        "request": requestSchema,
        "user": APISchema.nullable(APISchema.object(["id": APISchema.integer, "username": APISchema.string,
                                                     "displayName": APISchema.string, "active": APISchema.boolean])),
        "summary": summarySchema, "otherRequests": APISchema.array(requestSchema),
        "alsoAway": APISchema.array(APISchema.object(["requestId": APISchema.integer, "userId": APISchema.integer,
                                                      "displayName": APISchema.string, "start": APISchema.date, "end": APISchema.date,
                                                      "status": ["type": "string", "enum": ["approved", "pending"]]],
                                                     required: ["requestId", "userId", "displayName", "start", "end", "status"])),
        "overLimit": APISchema.boolean,
        "maxSimultaneousAbsences": APISchema.nullable(APISchema.integer),
    ], required: ["request", "user", "summary", "otherRequests", "alsoAway", "overLimit", "maxSimultaneousAbsences"])
}
