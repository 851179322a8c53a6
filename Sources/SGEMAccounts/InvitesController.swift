import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Invitations: what a link offers (`/invites/{token}`) and the admin's links (`/admin/invites`).
/// Registration with an invitation is `POST /auth/register` (`SessionsController`).
struct InvitesController: AccountsController {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let admin = admins(routes)
        routes.get("/invites/{token}", doc: Self.previewDoc, preview)
        admin.post("/invites", maxBody: 8 * 1024, doc: Self.createDoc, create)
        admin.get("/invites", doc: Self.listDoc, list)
        admin.delete("/invites/{id}", doc: Self.revokeDoc, revoke)
    }

    static let previewDoc = RouteDoc(
        summary: "What an invitation link offers, for the sign-up screen (no token needed)",
        description: """
            An unknown, expired, used-up or revoked token gets the same 404 invite_not_found. Wrong tokens count \
            against the client address (429 rate_limited after 20 within 15 minutes, as for wrong passwords; \
            logins are not affected).
            """, tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "The invitation", schema: invitePreviewSchema),
                    ResponseDoc(status: 404, description: "invite_not_found"),
                    ResponseDoc(status: 429, description: "rate_limited, with Retry-After")])

    @Sendable func preview(_ request: Request, _ context: RequestContext) async throws -> Response {
        let invite = try await runtime.checkedInvite(request.parameters["token"] ?? "", from: request.clientAddress)
        let view = InvitePreviewView(companyName: try await runtime.companyName(), role: invite.role, expiresAt: invite.expiresAt.rfc3339())
        return AccountsAPI.notStored(.json(view))
    }

    static let createDoc = RouteDoc(
        summary: "Create an invitation link; the link is shown this once",
        description: """
            url is http(s)://HOST/join#invite=TOKEN, HOST being the Host the request came with (the server keeps only \
            the token's SHA-256). Anyone with the link may create an account with role, whatever the registration \
            setting, until expiresAt or until maxUses accounts are made with it. Recorded in the audit log (invite.created).
            """, tags: ["accounts", "admin"],
        requestSchema: object(["role": roleSchema,
                               "expiresInDays": ["type": "integer", "minimum": 1, "maximum": 30],
                               "maxUses": ["type": "integer", "minimum": 1, "maximum": 500],
                               "note": ["type": "string", "maxLength": 200, "nullable": true]]),
        responses: [ResponseDoc(status: 201, description: "Created", schema: createdInviteSchema),
                    ResponseDoc(status: 400, description: "bad_request: the request's Host header cannot make a link"),
                    AccountsAPI.notJSON,
                    ResponseDoc(status: 422, description: "validation_failed (role, expiresInDays, maxUses or note)")],
        authenticated: true)

    @Sendable func create(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try InviteBody(request)
        guard let origin = LinkOrigin.of(request) else {
            throw APIError.badRequest("the Host header must name this server (a host name or address, and a port)")
        }
        let (invite, token) = try await service.createInvite(body.wanted, actor: .user(me.id, request))
        let view = invite.view(at: service.clock(), url: LinkOrigin.inviteURL(origin: origin, token: token))
        return AccountsAPI.notStored(.json(view, status: 201))
    }

    static let listDoc = RouteDoc(
        summary: "Invitations, newest first (never their token or link)",
        description: """
            Without status, only those that can still make an account (status live); status=all lists every one, \
            each with its status: live, expired, used (every use taken) or revoked. At most 200.
            """, tags: ["accounts", "admin"],
        query: [QueryDoc("status", "live (the default) or all", schema: ["type": "string", "enum": ["live", "all"]])],
        responses: [ResponseDoc(status: 200, description: "The invitations", schema: inviteListSchema),
                    ResponseDoc(status: 422, description: "validation_failed (status)")],
        authenticated: true)

    @Sendable func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        let status = request.query["status"].flatMap { $0.isEmpty ? nil : $0 } ?? "live"
        guard status == "live" || status == "all" else { throw APIError.validationFailed(["status": "must be live or all"]) }
        let items = try await service.invites(all: status == "all")
        let now = service.clock()
        return .json(InviteListView(items: items.map { $0.view(at: now) }))
    }

    static let revokeDoc = RouteDoc(
        summary: "Revoke an invitation: its link stops working at once; audited (invite.revoked)", tags: ["accounts", "admin"],
        responses: [ResponseDoc(status: 204, description: "Revoked"), AccountsAPI.notFound],
        authenticated: true)

    @Sendable func revoke(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let id = Int64(request.parameters["id"] ?? "") else { throw AccountsError.noSuchInvitation }
        try await service.revokeInvite(id: id, actor: .user(try context.user().id, request))
        return .noContent()
    }
}
