import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The kinds of leave: everyone reads them, admins add, change and delete them.
struct LeaveTypesController: Sendable {
    let book: HolidayBook
    let logger: Logger

    func register(_ routes: HolidaysRouteGroups) {
        routes.signedIn.get("/leave-types", doc: Self.listDoc, list)
        routes.admins.post("/leave-types", maxBody: HolidaysAPI.maxBody, doc: Self.addDoc, add)
        routes.admins.patch("/leave-types/{id}", maxBody: HolidaysAPI.maxBody, doc: Self.changeDoc, change)
        routes.admins.delete("/leave-types/{id}", doc: Self.deleteDoc, delete)
    }

    static let listDoc = RouteDoc(
        summary: "The leave types", tags: ["holidays"],
        responses: [ResponseDoc(status: 200, description: "The types", schema: HolidaysAPI.items(HolidaysAPI.leaveTypeSchema))]
            + HolidaysAPI.authErrors,
        authenticated: true)

    func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(Items(items: try await book.leaveTypes()))
    }

    static let addDoc = RouteDoc(
        summary: "Add a leave type",
        description: "key: 2 to 32 of a-z 0-9 _ -, starting with a letter, unique; name: 1 to 100 characters. countsAgainstAllowance and needsApproval default to true.",
        tags: ["holidays", "admin"],
        requestSchema: APISchema.object([
            "key": ["type": "string", "pattern": "^[a-z][a-z0-9_-]{1,31}$"], "name": ["type": "string", "minLength": 1, "maxLength": 100],
            "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
        ], required: ["key", "name"]),
        responses: [ResponseDoc(status: 201, description: "The type", schema: HolidaysAPI.leaveTypeSchema),
                    APISchema.error(409, "leave_type_exists")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func add(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = try NewLeaveTypeBody(request)
        let type = try await book.addLeaveType(key: body.key, name: body.name, countsAgainstAllowance: body.countsAgainstAllowance,
                                               needsApproval: body.needsApproval, by: try HolidaysAPI.actor(request, context))
        logger.notice("leave type added", ["leave_type.key": body.key])
        return .json(type, status: 201)
    }

    static let changeDoc = RouteDoc(
        summary: "Change a leave type's name or rules (the key stays)",
        description: "A change of countsAgainstAllowance applies to the type's existing requests too.",
        tags: ["holidays", "admin"],
        requestSchema: APISchema.object([
            "name": ["type": "string", "minLength": 1, "maxLength": 100],
            "countsAgainstAllowance": APISchema.boolean, "needsApproval": APISchema.boolean,
        ]),
        responses: [ResponseDoc(status: 200, description: "The type", schema: HolidaysAPI.leaveTypeSchema),
                    APISchema.error(404, "not_found")] + HolidaysAPI.writeErrors,
        authenticated: true)

    func change(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try HolidaysAPI.id(request, "no such leave type")
        let body = try LeaveTypeChangeBody(request)
        return .json(try await book.updateLeaveType(id, name: body.name, countsAgainstAllowance: body.countsAgainstAllowance,
                                                    needsApproval: body.needsApproval, by: try HolidaysAPI.actor(request, context)))
    }

    static let deleteDoc = RouteDoc(
        summary: "Delete a leave type no request uses",
        description: "409 leave_type_in_use when requests of the type exist (their history keeps it) or for vacation, the default type.",
        tags: ["holidays", "admin"],
        responses: [ResponseDoc(status: 204, description: "Deleted"), APISchema.error(404, "not_found"),
                    APISchema.error(409, "leave_type_in_use")] + HolidaysAPI.adminErrors,
        authenticated: true)

    func delete(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try HolidaysAPI.id(request, "no such leave type")
        try await book.deleteLeaveType(id, by: try HolidaysAPI.actor(request, context))
        return .noContent()
    }
}
