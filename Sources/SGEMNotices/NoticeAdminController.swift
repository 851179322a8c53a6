import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Company notices as admins write them (`/admin/notices`): posting, editing and deleting.
struct NoticeAdminController: Sendable {
    let board: NoticeBoard
    let logger: Logger

    /// On `admins`, the `/admin/notices` group of admins.
    func register(_ admins: RouteGroup) {
        admins.post("", maxBody: NoticesAPI.maxBody, doc: Self.postDoc, post)
        admins.patch("/{id}", maxBody: NoticesAPI.maxBody, doc: Self.editDoc, edit)
        admins.delete("/{id}", doc: Self.deleteDoc, delete)
    }

    static let postDoc = RouteDoc(
        summary: "Post a company notice; everyone receives a notice.created event",
        description: "title: 1 to 200 characters once trimmed, one line; body: plain text up to 20,000 characters, stored as sent.",
        tags: ["notices", "admin"], requestSchema: NoticesAPI.writeSchema(required: ["title", "body"]),
        responses: [ResponseDoc(status: 201, description: "Posted", schema: NoticesAPI.noticeSchema)] + NoticesAPI.writeErrors,
        authenticated: true)

    func post(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try NewNoticeBody(request)
        let notice = try await board.post(title: body.title, body: body.body, pinned: body.pinned, author: me.id, ip: request.clientAddress)
        logger.notice("notice posted", ["notice.id": String(notice.id), "user.id": String(me.id), "request.id": context.requestID])
        return .json(try await board.views([notice], admin: true)[0], status: 201)
    }

    static let editDoc = RouteDoc(
        summary: "Edit a company notice (fields left out keep their value)",
        description: "editedAt is set when the title or the body changes; pinning alone does not set it. Holiday notices are 404 here.",
        tags: ["notices", "admin"], requestSchema: NoticesAPI.writeSchema(required: []),
        responses: [ResponseDoc(status: 200, description: "The notice now", schema: NoticesAPI.noticeSchema), APISchema.error(404, "not_found")]
            + NoticesAPI.writeErrors,
        authenticated: true)

    func edit(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try NoticesAPI.id(request)
        let body = try NoticeChangeBody(request)
        let notice = try await board.edit(id, title: body.title, body: body.body, pinned: body.pinned, viewer: me.id, ip: request.clientAddress)
        logger.notice("notice edited", ["notice.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
        return .json(try await board.views([notice], admin: true)[0])
    }

    static let deleteDoc = RouteDoc(
        summary: "Delete a company notice and its read marks", tags: ["notices", "admin"],
        responses: [ResponseDoc(status: 204, description: "Deleted"), APISchema.error(404, "not_found")]
            + NoticesAPI.authErrors("forbidden (not an admin), csrf_failed or account_inactive"),
        authenticated: true)

    func delete(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try NoticesAPI.id(request)
        try await board.delete(id, by: NoticeBoard.Actor(userID: me.id, ip: request.clientAddress))
        logger.notice("notice deleted", ["notice.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
        return .noContent()
    }
}
