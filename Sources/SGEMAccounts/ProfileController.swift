import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The logged-in person's own account (`/api/v1/me`): profile, password, picture.
struct ProfileController: AccountsController {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let user = users(routes)
        // What a person whose password was generated or reset may still do: see who they are,
        // choose their own password, log out. Everything else answers 403 password_change_required.
        let pending = users(routes, whilePasswordChangeRequired: true)
        pending.get("/me", doc: Self.meDoc, me)
        user.patch("/me", maxBody: 16 * 1024, doc: Self.editDoc, edit)
        pending.put("/me/password", maxBody: 8 * 1024, doc: Self.changePasswordDoc, changePassword)
        user.put("/me/avatar", maxBody: AccountsAPI.maxAvatarBytes, doc: Self.uploadAvatarDoc, uploadAvatar)
        user.delete("/me/avatar", doc: Self.deleteAvatarDoc, deleteAvatar)
    }

    static let meDoc = RouteDoc(
        summary: "The logged-in user, with private settings", description: AccountsAPI.passwordChangeRequiredDoc, tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "The user", schema: privateUserSchema)], authenticated: true)

    @Sendable func me(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let record = try await service.user(id: try context.user().id) else { throw AccountsError.userNotFound }
        return .json(record.privateView)
    }

    static let editDoc = RouteDoc(
        summary: "Edit my profile (fields left out keep their value; null or \"\" clears)", tags: ["accounts"],
        requestSchema: profileSchema(admin: false),
        responses: [ResponseDoc(status: 200, description: "The user", schema: privateUserSchema), AccountsAPI.invalid],
        authenticated: true)

    @Sendable func edit(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try ProfileBody(request, admin: false)
        let record = try await service.update(userID: me.id, changes: body.changes, actor: .user(me.id, request))
        return .json(record.privateView)
    }

    static let changePasswordDoc = RouteDoc(
        summary: "Change my password; my other sessions end",
        description: "Choosing my own password clears mustChangePassword. " + AccountsAPI.passwordChangeRequiredDoc,
        tags: ["accounts"],
        requestSchema: object(["currentPassword": string, "newPassword": string], required: ["currentPassword", "newPassword"]),
        responses: [ResponseDoc(status: 204, description: "Changed"),
                    ResponseDoc(status: 422, description: "validation_failed (currentPassword is incorrect, newPassword too short)"),
                    ResponseDoc(status: 429, description: "rate_limited after repeated wrong current passwords")],
        authenticated: true)

    /// The current password is checked under the login throttle, so it cannot be guessed here either.
    @Sendable func changePassword(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try PasswordChangeBody(request)
        guard let (_, hash) = try await service.user(login: me.username) else { throw AccountsError.userNotFound }
        let hasher = service.hasher
        let address = request.clientAddress
        let attempt = try await runtime.throttle.reserveLogin(account: me.username, address: address)
        let matches: Bool
        do {
            let current = body.currentPassword
            let bounded = current.utf8.count <= PasswordHasher.maxPasswordBytes
            matches = try await hasher.verify(bounded ? current : "", against: bounded ? hash : hasher.dummyHash, for: address) && bounded
        } catch {
            try? await runtime.throttle.release(attempt)
            throw error
        }
        guard matches else {
            try await runtime.throttle.fail(attempt)
            throw AccountsError.wrongCurrentPassword
        }
        try await runtime.throttle.succeed(attempt)
        let newHash = try await hasher.hash(body.newPassword, for: address)
        try await service.setPassword(userID: me.id, hash: newHash, mustChange: false, keepSession: me.sessionID, event: "password.change",
                                      actor: .user(me.id, request))
        return .noContent()
    }

    static let uploadAvatarDoc = RouteDoc(
        summary: "Upload my picture: PNG, JPEG or WebP (recognised by content), at most 2 MiB", tags: ["accounts"],
        requestSchema: AccountsAPI.pictureBody, requestContentType: "application/octet-stream",
        responses: [ResponseDoc(status: 200, description: "The new URL", schema: avatarURLSchema),
                    ResponseDoc(status: 413, description: "payload_too_large"),
                    ResponseDoc(status: 415, description: "unsupported_media_type")], authenticated: true)

    @Sendable func uploadAvatar(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await ProfileController.storeAvatar(request, userID: try context.user().id, auditedAs: nil, service: service)
    }

    /// Stores `request`'s body as the picture of `userID` and answers `{avatarUrl}`.
    static func storeAvatar(_ request: Request, userID: Int64, auditedAs actor: Actor?, service: AccountService) async throws -> Response {
        guard let type = AccountsAPI.imageType(request.body) else {
            throw APIError(status: 415, code: "unsupported_media_type", message: "the picture must be a PNG, JPEG or WebP image")
        }
        let record = try await service.setAvatar(userID: userID, data: request.body, contentType: type, auditedAs: actor)
        return .json(AvatarURLView(avatarUrl: record.avatarURL))
    }

    static let deleteAvatarDoc = RouteDoc(summary: "Remove my picture", tags: ["accounts"],
                                          responses: [ResponseDoc(status: 204, description: "Removed")], authenticated: true)

    @Sendable func deleteAvatar(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await service.deleteAvatar(userID: try context.user().id)
        return .noContent()
    }
}
