import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Joining: invitations (`/admin/invites`, `/invites/{token}`) and what the login screen needs to
/// offer sign-up (`/auth/registration`). Registration itself, with or without an invitation, is
/// `POST /auth/register` in `AccountsRoutes`.
extension AccountsRoutes {
    static let inviteSchema = object([
        "id": integer, "role": ["type": "string", "enum": ["admin", "employee"]], "expiresAt": ["type": "string", "format": "date-time"],
        "maxUses": integer, "uses": integer, "note": nullableString, "createdBy": nullableInteger,
        "createdAt": ["type": "string", "format": "date-time"], "revokedAt": ["type": "string", "format": "date-time", "nullable": true],
        "status": ["type": "string", "enum": ["live", "expired", "used", "revoked"]],
    ])

    func registerInvites(anyone: RouteGroup, admin: RouteGroup) {
        anyone.get("/auth/registration", doc: RouteDoc(
            summary: "Whether people may sign up by themselves, for the login screen (no token needed)",
            description: """
                mode is open (anyone), domain (only addresses at domain) or closed (an invitation link is needed); \
                domain is null unless mode is domain. companyName is the company's name, null until an admin gives one.
                """, tags: ["accounts"],
            responses: [ResponseDoc(status: 200, description: "The registration policy",
                                    schema: object(["mode": ["type": "string", "enum": ["open", "domain", "closed"]], "domain": nullableString,
                                                    "companyName": nullableString], required: ["mode", "domain", "companyName"]))])) { _, _ in
            let settings = try await runtime.companySettings.current()
            let mode = CompanySettingsValue.registrationModes.contains(settings.registration) ? settings.registration : "closed"
            let domain = mode == "domain" ? settings.registrationDomain.flatMap { $0.isEmpty ? nil : $0 } : nil
            return .json(["mode": .string(mode == "domain" && domain == nil ? "closed" : mode), "domain": domain.map(JSONValue.string) ?? .null,
                          "companyName": try await companyName().map(JSONValue.string) ?? .null] as JSONValue)
        }
        anyone.get("/invites/{token}", doc: RouteDoc(
            summary: "What an invitation link offers, for the sign-up screen (no token needed)",
            description: """
                An unknown, expired, used-up or revoked token gets the same 404 invite_not_found. Wrong tokens count \
                against the client address (429 rate_limited after 20 within 15 minutes, as for wrong passwords; \
                logins are not affected).
                """, tags: ["accounts"],
            responses: [ResponseDoc(status: 200, description: "The invitation",
                                    schema: object(["companyName": nullableString, "role": ["type": "string", "enum": ["admin", "employee"]],
                                                    "expiresAt": ["type": "string", "format": "date-time"]],
                                                   required: ["companyName", "role", "expiresAt"])),
                        ResponseDoc(status: 404, description: "invite_not_found"),
                        ResponseDoc(status: 429, description: "rate_limited, with Retry-After")])) { request, _ in
            let invite = try await checkedInvite(request.parameters["token"] ?? "", request)
            var response = Response.json(["companyName": try await companyName().map(JSONValue.string) ?? .null,
                                          "role": .string(invite.role.rawValue), "expiresAt": .string(invite.expiresAt.rfc3339())] as JSONValue)
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        admin.post("/invites", maxBody: 8 * 1024, doc: RouteDoc(
            summary: "Create an invitation link; the link is shown this once",
            description: """
                url is http(s)://HOST/join#invite=TOKEN, HOST being the Host the request came with (the server keeps only \
                the token's SHA-256). Anyone with the link may create an account with role, whatever the registration \
                setting, until expiresAt or until maxUses accounts are made with it. Recorded in the audit log (invite.created).
                """, tags: ["accounts", "admin"],
            requestSchema: object(["role": ["type": "string", "enum": ["admin", "employee"]],
                                   "expiresInDays": ["type": "integer", "minimum": 1, "maximum": 30],
                                   "maxUses": ["type": "integer", "minimum": 1, "maximum": 500],
                                   "note": ["type": "string", "maxLength": 200, "nullable": true]]),
            responses: [ResponseDoc(status: 201, description: "Created",
                                    schema: ["allOf": [AccountsRoutes.inviteSchema, object(["url": string])]]),
                        ResponseDoc(status: 400, description: "bad_request: the request's Host header cannot make a link"),
                        AccountsRoutes.notJSON,
                        ResponseDoc(status: 422, description: "validation_failed (role, expiresInDays, maxUses or note)")],
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let wanted = AccountsRoutes.inviteRequest(&body)
            try body.check()
            guard let origin = LinkOrigin.of(request) else {
                throw APIError.badRequest("the Host header must name this server (a host name or address, and a port)")
            }
            let (invite, token) = try await service.createInvite(wanted, actor: .user(me.id, request))
            var out = invite.json(at: service.clock()).objectValue ?? []
            out.insert(("url", .string(LinkOrigin.inviteURL(origin: origin, token: token))), at: 1)
            return AccountsRoutes.notStored(.json(.object(out), status: 201))
        }
        admin.get("/invites", doc: RouteDoc(
            summary: "Invitations, newest first (never their token or link)",
            description: """
                Without status, only those that can still make an account (status live); status=all lists every one, \
                each with its status: live, expired, used (every use taken) or revoked. At most 200.
                """, tags: ["accounts", "admin"],
            query: [QueryDoc("status", "live (the default) or all", schema: ["type": "string", "enum": ["live", "all"]])],
            responses: [ResponseDoc(status: 200, description: "The invitations",
                                    schema: object(["items": ["type": "array", "items": AccountsRoutes.inviteSchema]])),
                        ResponseDoc(status: 422, description: "validation_failed (status)")],
            authenticated: true)) { request, _ in
            let status = request.query["status"].flatMap { $0.isEmpty ? nil : $0 } ?? "live"
            guard status == "live" || status == "all" else { throw APIError.validationFailed(["status": "must be live or all"]) }
            let items = try await service.invites(all: status == "all")
            let now = service.clock()
            return .json(["items": .array(items.map { $0.json(at: now) })] as JSONValue)
        }
        admin.delete("/invites/{id}", doc: RouteDoc(
            summary: "Revoke an invitation: its link stops working at once; audited (invite.revoked)", tags: ["accounts", "admin"],
            responses: [ResponseDoc(status: 204, description: "Revoked"), ResponseDoc(status: 404, description: "not_found")],
            authenticated: true)) { request, context in
            guard let id = Int64(request.parameters["id"] ?? "") else { throw APIError.notFound("no such invitation") }
            try await service.revokeInvite(id: id, actor: .user(try context.user().id, request))
            return .noContent()
        }
    }

    /// The invitation `token` opens, or the one 404 for every token that opens none. A wrong
    /// token counts against the client address like a wrong password.
    func checkedInvite(_ token: String, _ request: Request) async throws -> InviteRecord {
        let attempt = try await runtime.throttle.reserveInviteLookup(address: request.clientAddress)
        let invite: InviteRecord?
        do {
            invite = try await service.liveInvite(token: token)
        } catch {
            try? await runtime.throttle.release(attempt)
            throw error
        }
        guard let invite else {
            try await runtime.throttle.fail(attempt)
            throw InviteRules.notFound
        }
        try? await runtime.throttle.release(attempt)
        return invite
    }

    /// The company's name, nil until an admin gives one or without the company module.
    func companyName() async throws -> String? {
        try await services.resolve((any CompanyNameProvider).self)?.companyName()
    }

    /// The invitation settings in `body` (defaults for those left out), problems recorded there.
    static func inviteRequest(_ body: inout JSONBody) -> InviteRequest {
        var wanted = InviteRequest()
        if let raw = body.string("role") {
            if let role = UserRole(rawValue: raw) { wanted.role = role } else { body.problem("role", InviteRules.roleProblem) }
        }
        if let days = wholeNumber(&body, "expiresInDays", in: InviteRules.days, InviteRules.dayProblem) { wanted.days = days }
        if let uses = wholeNumber(&body, "maxUses", in: InviteRules.uses, InviteRules.useProblem) { wanted.maxUses = uses }
        if case let .some(raw) = body.nullableString("note") {
            switch InviteRules.note(raw ?? "") {
            case let .success(note): wanted.note = note
            case let .failure(problem): body.problem("note", problem.message)
            }
        }
        return wanted
    }

    /// A whole number within `range` from `body[key]`; nil when absent or null; a problem otherwise.
    static func wholeNumber(_ body: inout JSONBody, _ key: String, in range: ClosedRange<Int>, _ problem: String) -> Int? {
        switch body.fields[key] {
        case nil, .null?: return nil
        case let .number(n)? where n.rounded() == n && n >= Double(range.lowerBound) && n <= Double(range.upperBound):
            return Int(n)
        default:
            body.problem(key, problem)
            return nil
        }
    }
}
