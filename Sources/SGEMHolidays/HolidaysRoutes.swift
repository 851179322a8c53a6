import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The holidays section of the API (see the contract's "Holidays" table).
struct HolidaysRoutes: Sendable {
    static let maxBody = 16 * 1024

    let book: HolidayBook
    let services: ServiceRegistry
    let logger: Logger

    func register(_ routes: RouteGroup) {
        let user = routes.group("", middleware: [RequireUser(services: services)])
        let admin = routes.group("/admin", middleware: [RequireAdmin(services: services)])
        let open = routes.group("")
        registerEmployeeRoutes(user)
        registerAdminRoutes(admin)
        registerCalendarRoutes(user, open: open)
        registerReferenceRoutes(user, admin: admin)
    }

    // MARK: Employees

    private func registerEmployeeRoutes(_ user: RouteGroup) {
        let book = self.book
        let logger = self.logger
        user.get("/holidays", doc: RouteDoc(
            summary: "My holiday year: the summary and my requests with a day in it",
            description: "The year defaults to the current one in the company's time zone.",
            tags: ["holidays"], query: [HolidaysRoutes.yearQuery],
            responses: [ResponseDoc(status: 200, description: "Summary and requests", schema: yearSchema),
                        APISchema.error(422, "validation_failed (year)")] + HolidaysRoutes.authErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let (summary, requests, workingDays) = try await book.year(of: me.id, year: try HolidaysRoutes.year(request))
            return .json(HolidaysRoutes.yearJSON(summary, requests, workingDays))
        }
        user.post("/holidays", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
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
                                    schema: requestSchema),
                        APISchema.error(409, "holiday_overlap or allowance_exceeded")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let start = HolidaysRoutes.date("start", &body, required: true)
            let end = HolidaysRoutes.date("end", &body, required: true)
            let type = body.string("type")
            let halfStart = body.bool("halfStart") ?? false
            let halfEnd = body.bool("halfEnd") ?? false
            let note = HolidaysRoutes.note(&body)
            try body.check()
            guard let start, let end else { throw APIError.validationFailed(["start": "is required"]) }
            let created = try await book.create(HolidayBook.Draft(start: start, end: end, typeKey: type, halfStart: halfStart,
                                                                  halfEnd: halfEnd, note: note), for: me.id)
            logger.info("holiday requested", ["holiday.id": String(created.id), "user.id": String(me.id), "request.id": context.requestID])
            return .json(created.json, status: 201)
        }
        user.get("/holidays/{id}", doc: RouteDoc(
            summary: "One request with its history (its owner or an admin; 404 for anyone else)", tags: ["holidays"],
            responses: [ResponseDoc(status: 200, description: "The request", schema: requestSchema),
                        APISchema.error(404, "not_found")] + HolidaysRoutes.authErrors,
            authenticated: true)) { request, context in
            .json(try await book.request(try HolidaysRoutes.id(request), viewer: try context.user()).json)
        }
        user.post("/holidays/{id}/cancel", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
            summary: "Cancel a pending or approved request",
            description: "Its owner before the start date (in the company's time zone), an admin at any time. The body is optional.",
            tags: ["holidays"], requestSchema: noteBodySchema,
            responses: [ResponseDoc(status: 200, description: "The request now", schema: requestSchema),
                        APISchema.error(404, "not_found"), APISchema.error(409, "invalid_transition")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            try await HolidaysRoutes.transition(.cancel, request, context, book, logger)
        }
        user.get("/users/{id}/holidays", doc: RouteDoc(
            summary: "A person's holiday year (themselves or an admin; inactive employees too)", tags: ["holidays"],
            query: [HolidaysRoutes.yearQuery],
            responses: [ResponseDoc(status: 200, description: "Summary and requests", schema: yearSchema),
                        APISchema.error(404, "not_found"), APISchema.error(422, "validation_failed (year)")] + HolidaysRoutes.authErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try HolidaysRoutes.id(request, "no such user")
            guard me.isAdmin || me.id == id else { throw APIError.forbidden("only an admin sees another person's holidays") }
            if me.id != id, try await book.directory?.user(id: id) == nil { throw APIError.notFound("no such user") }
            let (summary, requests, workingDays) = try await book.year(of: id, year: try HolidaysRoutes.year(request))
            return .json(HolidaysRoutes.yearJSON(summary, requests, workingDays))
        }
    }

    // MARK: Admins

    private func registerAdminRoutes(_ admin: RouteGroup) {
        let book = self.book
        let logger = self.logger
        admin.get("/holidays", doc: RouteDoc(
            summary: "All requests, with filters: pending first, the soonest start first; then the rest, the latest start first",
            tags: ["holidays", "admin"],
            query: [QueryDoc("status", "pending, approved, rejected or cancelled",
                             schema: ["type": "string", "enum": .array(HolidayStatus.allCases.map { .string($0.rawValue) })]),
                    HolidaysRoutes.yearQuery,
                    QueryDoc("userId", "one employee's requests", schema: ["type": "integer", "minimum": 1]),
                    QueryDoc("type", "a leave type key"),
                    QueryDoc("limit", "at most this many, 1 to 5000 (default 1000)", schema: ["type": "integer", "minimum": 1, "maximum": 5000])],
            responses: [ResponseDoc(status: 200, description: "The requests", schema: APISchema.object(
                ["items": APISchema.array(adminItemSchema)], required: ["items"])),
                        APISchema.error(422, "validation_failed (a filter)")] + HolidaysRoutes.adminErrors,
            authenticated: true)) { request, _ in
            var problems: [String: String] = [:]
            var status: HolidayStatus?
            if let raw = request.query["status"], !raw.isEmpty {
                status = HolidayStatus(rawValue: raw)
                if status == nil { problems["status"] = "must be pending, approved, rejected or cancelled" }
            }
            var userID: Int64?
            if let raw = request.query["userId"], !raw.isEmpty {
                userID = Int64(raw)
                if userID == nil || userID! < 1 { problems["userId"] = "must be a user id" }
            }
            let limit = HolidaysRoutes.integer(request, "limit", in: 1...HolidayBook.maxRows, default: 1000, &problems)
            let year = HolidaysRoutes.optionalYear(request, &problems)
            if !problems.isEmpty { throw APIError.validationFailed(problems) }
            let typeKey = request.query["type"].flatMap { $0.isEmpty ? nil : $0 }
            let items = try await book.adminList(status: status, year: year, userID: userID, typeKey: typeKey, limit: limit)
            return .json(["items": .array(items.map { r, name in
                .object((r.json.objectValue ?? []) + [("displayName", .string(name))])
            })] as JSONValue)
        }
        admin.get("/holidays.csv", doc: RouteDoc(
            summary: "Every request with a day in the year, as CSV (RFC 4180)",
            description: """
                UTF-8 with a byte order mark, so spreadsheets read names such as Lucía right. Columns: id, userId, displayName, \
                username, type (the key), typeName, start, end, halfStart, halfEnd, days, daysInYear (the part of days that \
                falls in the year), status, note, createdAt, decidedBy (an id), decidedByName, decidedAt, decisionNote. Cells \
                that start with = + - @ are prefixed with ' so spreadsheets do not run them as formulas.
                """,
            tags: ["holidays", "admin"], query: [HolidaysRoutes.yearQuery],
            responses: [ResponseDoc(status: 200, description: "CSV with a header row", schema: APISchema.string, contentType: "text/csv"),
                        APISchema.error(422, "validation_failed (year)")] + HolidaysRoutes.adminErrors,
            authenticated: true)) { request, _ in
            let settings = try await book.settings()
            let year = try HolidaysRoutes.year(request) ?? book.today(settings).year
            var response = Response.text(try await book.csv(year: year), contentType: "text/csv; charset=utf-8; header=present")
            response.headers.set("Content-Disposition", "attachment; filename=\"holidays-\(year).csv\"")
            return response
        }
        admin.get("/holidays/{id}", doc: RouteDoc(
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
            responses: [ResponseDoc(status: 200, description: "The detail", schema: detailSchema),
                        APISchema.error(404, "not_found")] + HolidaysRoutes.adminErrors,
            authenticated: true)) { request, _ in
            let d = try await book.detail(try HolidaysRoutes.id(request))
            let user: JSONValue = d.user.map {
                ["id": .number(Double($0.id)), "username": .string($0.username), "displayName": .string($0.displayName),
                 "active": .bool($0.active)]
            } ?? .null
            return .json([
                "request": d.request.json, "user": user, "summary": d.summary.json,
                "otherRequests": .array(d.otherRequests.map(\.json)),
                "alsoAway": .array(d.alsoAway.map(\.json)),
                "overLimit": .bool(d.overLimit),
                "maxSimultaneousAbsences": d.limit.map { .number(Double($0)) } ?? .null,
            ] as JSONValue)
        }
        for action in [HolidayTransitions.Action.approve, .reject, .reopen] {
            admin.post("/holidays/{id}/\(action.rawValue)", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
                summary: action == .reopen ? "Reopen an approved request (back to pending)" : "\(action.rawValue.capitalized) a pending request",
                description: "The note is optional and goes to the history and the employee's notice. An admin may not decide their own request while another active admin exists (403).",
                tags: ["holidays", "admin"], requestSchema: noteBodySchema,
                responses: [ResponseDoc(status: 200, description: "The request now", schema: requestSchema),
                            APISchema.error(404, "not_found"), APISchema.error(409, "invalid_transition")] + HolidaysRoutes.writeErrors,
                authenticated: true)) { request, context in
                try await HolidaysRoutes.transition(action, request, context, book, logger)
            }
        }
        admin.put("/users/{id}/allowances/{year}", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
            summary: "Set one employee's allowance for one year (instead of the company default)",
            description: "days: 0 to 366, in half days.", tags: ["holidays", "admin"],
            requestSchema: APISchema.object(["days": ["type": "number", "minimum": 0, "maximum": 366, "multipleOf": 0.5]], required: ["days"]),
            responses: [ResponseDoc(status: 204, description: "Saved"), APISchema.error(404, "not_found (user)")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            let id = try HolidaysRoutes.id(request, "no such user")
            guard let year = Int(request.parameters["year"] ?? ""), Day.years.contains(year) else {
                throw APIError.validationFailed(["year": "must be a year from \(Day.years.lowerBound) to \(Day.years.upperBound)"])
            }
            var body = try JSONBody(request)
            let days = HolidaysRoutes.allowanceDays(&body)
            try body.check()
            guard let days else { throw APIError.validationFailed(["days": "is required"]) }
            guard try await book.directory?.user(id: id) != nil else { throw APIError.notFound("no such user") }
            try await book.setAllowance(userID: id, year: year, days: days, by: AuditActor(userID: try context.user().id, ip: request.clientAddress))
            logger.notice("allowance set", ["user.id": String(try context.user().id), "target.id": String(id), "year": String(year),
                                            "request.id": context.requestID])
            return .noContent()
        }
    }

    // MARK: Calendar

    private func registerCalendarRoutes(_ user: RouteGroup, open: RouteGroup) {
        let book = self.book
        user.get("/holidays/calendar", doc: RouteDoc(
            summary: "Who is away between two dates (at most 92 days)",
            description: """
                Approved absences of active people; admins also see pending ones. type and typeName only for admins and \
                the person themselves; others see typeName "away" and type null.
                """,
            tags: ["holidays"],
            query: [QueryDoc("from", "first day, YYYY-MM-DD (required)", schema: APISchema.date),
                    QueryDoc("to", "last day, YYYY-MM-DD (required), at most 92 days after from", schema: APISchema.date)],
            responses: [ResponseDoc(status: 200, description: "The absences", schema: APISchema.object(
                ["items": APISchema.array(calendarItemSchema)], required: ["items"])),
                        APISchema.error(422, "validation_failed (from, to)")] + HolidaysRoutes.authErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var problems: [String: String] = [:]
            let from = HolidaysRoutes.queryDate(request, "from", &problems)
            let to = HolidaysRoutes.queryDate(request, "to", &problems)
            if let from, let to {
                if to < from { problems["to"] = "must not be before from" } else if from.distance(to: to) + 1 > HolidayBook.maxCalendarDays {
                    problems["to"] = "the range spans at most \(HolidayBook.maxCalendarDays) days"
                }
            }
            guard problems.isEmpty, let from, let to else { throw APIError.validationFailed(problems) }
            let absences = try await book.calendar(from: from, to: to, viewer: me)
            return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]),
                            body: HolidayBook.Absence.page(absences))
        }
        user.post("/me/calendar-token", doc: RouteDoc(
            summary: "A private iCal feed URL; a new call revokes the previous URL",
            description: "The URL carries a random token (stored hashed); anyone holding it sees the company's approved absences as its owner would.",
            tags: ["holidays"],
            responses: [ResponseDoc(status: 200, description: "The feed URL", schema: APISchema.object(["url": APISchema.string], required: ["url"]))]
                + HolidaysRoutes.authErrors,
            authenticated: true)) { request, context in
            let token = try await book.newCalendarToken(for: try context.user().id)
            let path = "/api/v1/holidays/calendar.ics?token=\(token)"
            guard let host = HolidaysRoutes.host(request) else { return .json(["url": .string(path)] as JSONValue) }
            return .json(["url": .string("\(request.isSecure ? "https" : "http")://\(host)\(path)")] as JSONValue)
        }
        open.get("/holidays/calendar.ics", doc: RouteDoc(
            summary: "The private iCal feed (RFC 5545) of approved absences, a year back and two ahead",
            description: "Authenticated by its token alone. Leave type names as the token's owner may see them; others' read \"away\".",
            tags: ["holidays"], query: [QueryDoc("token", "the token of the URL from POST /me/calendar-token")],
            responses: [ResponseDoc(status: 200, description: "The calendar", schema: APISchema.string, contentType: "text/calendar"),
                        APISchema.error(401, "unauthenticated: no, an unknown or a revoked token")])) { request, _ in
            guard let token = request.query["token"], let owner = try await book.calendarTokenOwner(token) else {
                throw APIError.unauthenticated("this calendar link is unknown or was replaced by a newer one")
            }
            let absences = try await book.feed(viewer: owner)
            let host = HolidaysRoutes.host(request).map { String($0.prefix { $0 != ":" }) } ?? "sgem-server"
            var response = Response.text(CalendarFeed.ics(absences, stamp: book.clock.now(), host: host), contentType: "text/calendar; charset=utf-8")
            response.headers.set("Cache-Control", "private, no-store")
            return response
        }
    }

    // MARK: Leave types and public holidays

    private func registerReferenceRoutes(_ user: RouteGroup, admin: RouteGroup) {
        let book = self.book
        let logger = self.logger
        user.get("/leave-types", doc: RouteDoc(
            summary: "The leave types", tags: ["holidays"],
            responses: [ResponseDoc(status: 200, description: "The types", schema: APISchema.object(
                ["items": APISchema.array(leaveTypeSchema)], required: ["items"]))] + HolidaysRoutes.authErrors,
            authenticated: true)) { _, _ in
            .json(["items": .array(try await book.leaveTypes().map(\.json))] as JSONValue)
        }
        admin.post("/leave-types", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
            summary: "Add a leave type",
            description: "key: 2 to 32 of a-z 0-9 _ -, starting with a letter, unique; name: 1 to 100 characters. countsAgainstAllowance and needsApproval default to true.",
            tags: ["holidays", "admin"],
            requestSchema: APISchema.object([
                "key": ["type": "string", "pattern": "^[a-z][a-z0-9_-]{1,31}$"], "name": ["type": "string", "minLength": 1, "maxLength": 100],
                "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
            ], required: ["key", "name"]),
            responses: [ResponseDoc(status: 201, description: "The type", schema: leaveTypeSchema),
                        APISchema.error(409, "leave_type_exists")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            var body = try JSONBody(request)
            let key = body.string("key", required: true)
            if let key, !HolidaysRoutes.isTypeKey(key) { body.problem("key", "must be 2 to 32 of a-z 0-9 _ -, starting with a letter") }
            let name = HolidaysRoutes.typeName(&body, required: true)
            let counts = body.bool("countsAgainstAllowance") ?? true
            let approval = body.bool("needsApproval") ?? true
            try body.check()
            guard let key, let name else { throw APIError.validationFailed(["key": "is required"]) }
            guard let type = try await book.addLeaveType(key: key, name: name, countsAgainstAllowance: counts, needsApproval: approval,
                                                         by: AuditActor(userID: try context.user().id, ip: request.clientAddress)) else { throw APIError.conflict("leave_type_exists", "a leave type with key '\(key)' exists") }
            logger.notice("leave type added", ["leave_type.key": key])
            return .json(type.json, status: 201)
        }
        admin.patch("/leave-types/{id}", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
            summary: "Change a leave type's name or rules (the key stays)",
            description: "A change of countsAgainstAllowance applies to the type's existing requests too.",
            tags: ["holidays", "admin"],
            requestSchema: APISchema.object([
                "name": ["type": "string", "minLength": 1, "maxLength": 100],
                "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
            ]),
            responses: [ResponseDoc(status: 200, description: "The type", schema: leaveTypeSchema),
                        APISchema.error(404, "not_found")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            let id = try HolidaysRoutes.id(request, "no such leave type")
            var body = try JSONBody(request)
            let name = HolidaysRoutes.typeName(&body, required: false)
            let counts = body.bool("countsAgainstAllowance")
            let approval = body.bool("needsApproval")
            try body.check()
            guard let type = try await book.updateLeaveType(id, name: name, countsAgainstAllowance: counts, needsApproval: approval,
                                                            by: AuditActor(userID: try context.user().id, ip: request.clientAddress)) else { throw APIError.notFound("no such leave type") }
            return .json(type.json)
        }
        admin.delete("/leave-types/{id}", doc: RouteDoc(
            summary: "Delete a leave type no request uses",
            description: "409 leave_type_in_use when requests of the type exist (their history keeps it) or for vacation, the default type.",
            tags: ["holidays", "admin"],
            responses: [ResponseDoc(status: 204, description: "Deleted"), APISchema.error(404, "not_found"),
                        APISchema.error(409, "leave_type_in_use")] + HolidaysRoutes.adminErrors,
            authenticated: true)) { request, context in
            let id = try HolidaysRoutes.id(request, "no such leave type")
            try await book.deleteLeaveType(id, by: AuditActor(userID: try context.user().id, ip: request.clientAddress))
            return .noContent()
        }

        user.get("/public-holidays", doc: RouteDoc(
            summary: "The public holidays of a year (default: the current one)", tags: ["holidays"], query: [HolidaysRoutes.yearQuery],
            responses: [ResponseDoc(status: 200, description: "The public holidays by date", schema: APISchema.object(
                ["items": APISchema.array(publicHolidaySchema)], required: ["items"])),
                        APISchema.error(422, "validation_failed (year)")] + HolidaysRoutes.authErrors,
            authenticated: true)) { request, _ in
            let settings = try await book.settings()
            let year = try HolidaysRoutes.year(request) ?? book.today(settings).year
            return .json(["items": .array(try await book.publicHolidays(year: year).map(\.json))] as JSONValue)
        }
        admin.post("/public-holidays", maxBody: HolidaysRoutes.maxBody, doc: RouteDoc(
            summary: "Add a public holiday",
            description: "Requests filed before keep the days they were counted with; new requests do not count the date.",
            tags: ["holidays", "admin"],
            requestSchema: APISchema.object(["date": APISchema.date, "name": ["type": "string", "minLength": 1, "maxLength": 100]],
                                            required: ["date", "name"]),
            responses: [ResponseDoc(status: 201, description: "The public holiday", schema: publicHolidaySchema),
                        APISchema.error(409, "public_holiday_exists")] + HolidaysRoutes.writeErrors,
            authenticated: true)) { request, context in
            var body = try JSONBody(request)
            let date = HolidaysRoutes.date("date", &body, required: true)
            let name = HolidaysRoutes.typeName(&body, key: "name", required: true)
            try body.check()
            guard let date, let name else { throw APIError.validationFailed(["date": "is required"]) }
            let added = try await book.addPublicHolidays([(date, name)], by: AuditActor(userID: try context.user().id, ip: request.clientAddress))
            return .json(added[0].json, status: 201)
        }
        admin.delete("/public-holidays/{id}", doc: RouteDoc(
            summary: "Remove a public holiday", tags: ["holidays", "admin"],
            responses: [ResponseDoc(status: 204, description: "Removed"), APISchema.error(404, "not_found")] + HolidaysRoutes.adminErrors,
            authenticated: true)) { request, context in
            let id = try HolidaysRoutes.id(request, "no such public holiday")
            guard try await book.deletePublicHoliday(id, by: AuditActor(userID: try context.user().id, ip: request.clientAddress)) else {
                throw APIError.notFound("no such public holiday")
            }
            return .noContent()
        }
    }

    // MARK: Helpers

    /// Approve, reject, reopen or cancel, with an optional `{note}` body.
    static func transition(_ action: HolidayTransitions.Action, _ request: Request, _ context: RequestContext, _ book: HolidayBook,
                           _ logger: Logger) async throws -> Response {
        let me = try context.user()
        let id = try HolidaysRoutes.id(request)
        var note: String?
        if !request.body.isEmpty {
            var body = try JSONBody(request)
            note = HolidaysRoutes.note(&body)
            try body.check()
        }
        let changed = try await book.apply(action, to: id, by: me, note: note, ip: request.clientAddress)
        logger.info("holiday request changed", ["holiday.id": String(id), "holiday.status": changed.status.rawValue,
                                                "user.id": String(me.id), "request.id": context.requestID])
        return .json(changed.json)
    }

    static func yearJSON(_ summary: HolidaySummary, _ requests: [HolidayRequest], _ workingDays: [Int]) -> JSONValue {
        .object((summary.json.objectValue ?? []) + [("summary", summary.json), ("requests", .array(requests.map(\.json))),
                                                    ("workingDays", .array(workingDays.map { .number(Double($0)) }))])
    }

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

    static func integer(_ request: Request, _ key: String, in range: ClosedRange<Int>, default value: Int,
                        _ problems: inout [String: String]) -> Int {
        guard let raw = request.query[key], !raw.isEmpty else { return value }
        guard let n = Int(raw), range.contains(n) else {
            problems[key] = "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            return value
        }
        return n
    }

    static func queryDate(_ request: Request, _ key: String, _ problems: inout [String: String]) -> Day? {
        guard let raw = request.query[key], !raw.isEmpty else { problems[key] = "is required (YYYY-MM-DD)"; return nil }
        guard let day = Day(iso: raw) else { problems[key] = HolidaysRoutes.dateProblem; return nil }
        return day
    }

    static let dateProblem = "must be a real calendar date as YYYY-MM-DD from \(Day.years.lowerBound) to \(Day.years.upperBound)"

    /// A date field of a JSON body.
    static func date(_ key: String, _ body: inout JSONBody, required: Bool) -> Day? {
        guard let raw = body.string(key, required: required) else { return nil }
        guard let day = Day(iso: raw) else { body.problem(key, dateProblem); return nil }
        return day
    }

    /// The optional `note` (null or up to 2000 characters; empty means none).
    static func note(_ body: inout JSONBody) -> String? {
        guard case let .some(value?) = body.nullableString("note") else { return nil }
        if value.count > HolidayBook.maxNote { body.problem("note", "must be at most \(HolidayBook.maxNote) characters"); return nil }
        return value.isEmpty ? nil : value
    }

    /// A one-line name of 1 to 100 characters, trimmed.
    static func typeName(_ body: inout JSONBody, key: String = "name", required: Bool) -> String? {
        if !required, body.fields[key] == .null { body.problem(key, "must be a string"); return nil }
        guard let raw = body.string(key, required: required) else { return nil }
        let name = raw.trimmingWhitespace()
        guard (1...100).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            body.problem(key, "must be 1 to 100 characters on one line")
            return nil
        }
        return name
    }

    static func isTypeKey(_ key: String) -> Bool {
        let b = Array(key.utf8)
        guard (2...32).contains(b.count), b[0] >= 0x61, b[0] <= 0x7A else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
    }

    /// `days` of an allowance: 0 to 366 in half days.
    static func allowanceDays(_ body: inout JSONBody) -> Double? {
        guard let raw = body.fields["days"] else { body.problem("days", "is required"); return nil }
        guard let n = raw.numberValue, n >= 0, n <= 366, (n * 2) == (n * 2).rounded() else {
            body.problem("days", "must be a number of days from 0 to 366, in half days")
            return nil
        }
        return n
    }

    /// The request's Host header when it is a plain host[:port] (never trusted for more than a link).
    static func host(_ request: Request) -> String? {
        guard let host = request.headers["Host"], (1...255).contains(host.utf8.count),
              host.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A)
                  || $0 == 0x2E || $0 == 0x2D || $0 == 0x3A || $0 == 0x5B || $0 == 0x5D }) else { return nil }
        return host
    }
}

// MARK: OpenAPI schemas

let noteBodySchema = APISchema.object(["note": APISchema.nullable(["type": "string", "maxLength": .number(Double(HolidayBook.maxNote))])])

let leaveTypeSchema = APISchema.object([
    "id": APISchema.integer, "key": APISchema.string, "name": APISchema.string,
    "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
], required: ["id", "key", "name", "countsAgainstAllowance", "needsApproval"])

let publicHolidaySchema = APISchema.object(["id": APISchema.integer, "date": APISchema.date, "name": APISchema.string],
                                           required: ["id", "date", "name"])

let statusSchema: JSONValue = ["type": "string", "enum": .array(HolidayStatus.allCases.map { .string($0.rawValue) })]

let historySchema = APISchema.object([
    "from": APISchema.nullable(statusSchema), "to": statusSchema, "byUserId": APISchema.integer, "at": APISchema.dateTime,
    "note": APISchema.nullable(APISchema.string),
], required: ["from", "to", "byUserId", "at", "note"])

let requestSchema = APISchema.object([
    "id": APISchema.integer, "userId": APISchema.integer, "type": APISchema.string, "start": APISchema.date, "end": APISchema.date,
    "halfStart": APISchema.boolean, "halfEnd": APISchema.boolean, "days": APISchema.number, "status": statusSchema,
    "note": APISchema.nullable(APISchema.string), "createdAt": APISchema.dateTime, "decidedBy": APISchema.nullable(APISchema.integer),
    "decidedAt": APISchema.nullable(APISchema.dateTime), "decisionNote": APISchema.nullable(APISchema.string),
    "history": APISchema.array(historySchema),
], required: ["id", "userId", "type", "start", "end", "halfStart", "halfEnd", "days", "status", "note", "createdAt", "decidedBy",
              "decidedAt", "decisionNote", "history"])

let summarySchema = APISchema.object([
    "year": APISchema.integer, "allowance": APISchema.number, "carriedOver": APISchema.number, "approvedDays": APISchema.number,
    "pendingDays": APISchema.number, "remainingDays": APISchema.number,
], required: ["year", "allowance", "carriedOver", "approvedDays", "pendingDays", "remainingDays"])

/// The summary's fields at the top level (the contract's "summary + requests"), and again under `summary`.
let yearSchema = APISchema.object([
    "year": APISchema.integer, "allowance": APISchema.number, "carriedOver": APISchema.number, "approvedDays": APISchema.number,
    "pendingDays": APISchema.number, "remainingDays": APISchema.number, "summary": summarySchema,
    "requests": APISchema.array(requestSchema), "workingDays": APISchema.array(APISchema.integer),
], required: ["year", "allowance", "carriedOver", "approvedDays", "pendingDays", "remainingDays", "summary", "requests", "workingDays"])

let adminItemSchema: JSONValue = {
    var o = requestSchema.objectValue ?? []
    if let i = o.firstIndex(where: { $0.0 == "properties" }), var props = o[i].1.objectValue {
        props.append(("displayName", APISchema.string))
        o[i] = ("properties", .object(props))
    }
    return .object(o)
}()

let calendarItemSchema = APISchema.object([
    "userId": APISchema.integer, "displayName": APISchema.string, "start": APISchema.date, "end": APISchema.date,
    "halfStart": APISchema.boolean, "halfEnd": APISchema.boolean, "status": statusSchema,
    "type": APISchema.nullable(APISchema.string), "typeName": APISchema.string,
], required: ["userId", "displayName", "start", "end", "halfStart", "halfEnd", "status", "type", "typeName"])

let detailSchema = APISchema.object([
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
