import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What admins do to people's accounts (`/api/v1/admin/users`): create, edit, reset a password,
/// set or remove a picture.
struct UserAdminController: AccountsController {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let admin = admins(routes)
        admin.post("/users", maxBody: 16 * 1024, doc: Self.createDoc, create)
        admin.patch("/users/{id}", maxBody: 16 * 1024, doc: Self.editDoc, edit)
        admin.post("/users/{id}/password-reset", doc: Self.resetPasswordDoc, resetPassword)
        admin.put("/users/{id}/avatar", maxBody: AccountsAPI.maxAvatarBytes, doc: Self.setAvatarDoc, setAvatar)
        admin.delete("/users/{id}/avatar", doc: Self.deleteAvatarDoc, deleteAvatar)
    }

    static let createDoc = RouteDoc(
        summary: "Create a user; a password is generated (and shown once) when none is given",
        description: """
            With a generated password the user must choose their own at the first login (mustChangePassword). \
            Without language the account follows the company's default until its first login in the console, \
            which adopts the browser's language when the console speaks it (languageChosen false until then).
            """, tags: ["accounts", "admin"],
        requestSchema: object(["username": string, "email": string, "displayName": string, "role": roleSchema,
                               "password": string, "language": string], required: ["username", "email"]),
        responses: [ResponseDoc(status: 201, description: "Created", schema: createdUserSchema),
                    AccountsAPI.nameTaken,
                    AccountsAPI.invalid], authenticated: true)

    @Sendable func create(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try CreateUserBody(request, defaultLanguage: try await runtime.companySettings.current().defaultLanguage)
        let account = body.account
        try await service.checkAvailable(username: account.username, email: account.email)
        let password = body.password ?? AccountRules.generatedPassword()
        let hash = try await service.hasher.hash(password, for: request.clientAddress)
        let record = try await service.create(username: account.username, email: account.email, displayName: account.displayName,
                                              role: body.role, language: account.language, passwordHash: hash,
                                              mustChangePassword: body.password == nil, event: "user.create", actor: .user(me.id, request))
        let created = CreatedUserView(user: record.publicView, password: body.password == nil ? password : nil)
        return AccountsAPI.notStored(.json(created, status: 201))
    }

    static let editDoc = RouteDoc(
        summary: "Edit a user: role, active, profile fields, email",
        description: "Deactivation ends the user's sessions at once. 409 last_admin when the change would leave no active admin.",
        tags: ["accounts", "admin"],
        requestSchema: profileSchema(admin: true),
        responses: [ResponseDoc(status: 200, description: "The user", schema: userSchema),
                    AccountsAPI.notFound,
                    ResponseDoc(status: 409, description: "last_admin or email_taken"),
                    AccountsAPI.invalid], authenticated: true)

    @Sendable func edit(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try AccountsAPI.userID(request)
        let body = try ProfileBody(request, admin: true)
        let record = try await service.update(userID: id, changes: body.changes, role: body.role, active: body.active,
                                              actor: .user(me.id, request))
        return .json(record.publicView)
    }

    static let resetPasswordDoc = RouteDoc(
        summary: "Give a user a new temporary password (shown once); all their sessions end",
        description: "The user must choose their own at the next login (mustChangePassword).", tags: ["accounts", "admin"],
        responses: [ResponseDoc(status: 200, description: "The temporary password", schema: passwordSchema),
                    AccountsAPI.notFound], authenticated: true)

    @Sendable func resetPassword(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try AccountsAPI.userID(request)
        guard try await service.user(id: id) != nil else { throw AccountsError.userNotFound }
        let password = AccountRules.generatedPassword()
        let hash = try await service.hasher.hash(password, for: request.clientAddress)
        try await service.setPassword(userID: id, hash: hash, mustChange: true, keepSession: nil, event: "password.reset",
                                      actor: .user(me.id, request))
        return AccountsAPI.notStored(.json(PasswordView(password: password)))
    }

    static let setAvatarDoc = RouteDoc(
        summary: "Set a user's picture: PNG, JPEG or WebP (recognised by content), at most 2 MiB; audited", tags: ["accounts", "admin"],
        requestSchema: AccountsAPI.pictureBody, requestContentType: "application/octet-stream",
        responses: [ResponseDoc(status: 200, description: "The new URL", schema: avatarURLSchema),
                    AccountsAPI.notFound,
                    ResponseDoc(status: 413, description: "payload_too_large"),
                    ResponseDoc(status: 415, description: "unsupported_media_type")], authenticated: true)

    @Sendable func setAvatar(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try AccountsAPI.userID(request)
        return try await ProfileController.storeAvatar(request, userID: id, auditedAs: .user(try context.user().id, request), service: service)
    }

    static let deleteAvatarDoc = RouteDoc(
        summary: "Remove a user's picture; audited", tags: ["accounts", "admin"],
        responses: [ResponseDoc(status: 204, description: "Removed"), AccountsAPI.notFound], authenticated: true)

    @Sendable func deleteAvatar(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try AccountsAPI.userID(request)
        try await service.deleteAvatar(userID: id, auditedAs: .user(try context.user().id, request))
        return .noContent()
    }
}
