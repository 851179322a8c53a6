import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `/chats/{id}/members` and `/chats/{id}/admins`: who is in a group and who runs it.
struct ChatMembersController: Sendable {
    let messenger: Messenger

    /// On `api`, a group with `MessagingAPI.middleware`.
    func register(_ api: RouteGroup) {
        let chats = api.group("/chats")
        chats.post("/{id}/members", maxBody: MessagingAPI.maxBody, doc: Self.addDoc, add)
        chats.delete("/{id}/members/{userId}", doc: Self.removeDoc, remove)
        chats.put("/{id}/admins/{userId}", doc: Self.grantAdminDoc, grantAdmin)
        chats.delete("/{id}/admins/{userId}", doc: Self.revokeAdminDoc, revokeAdmin)
    }

    /// The `{userId}` of the path: someone who must be a member.
    private static func memberID(_ request: Request) throws -> Int64 {
        try MessagingAPI.pathID(request, "userId", "that person is not a member")
    }

    static let addDoc = RouteDoc(
        summary: "Add an active user to a group (group admins)", description: "The members receive member.added.",
        tags: MessagingDocs.tags,
        requestSchema: MessagingDocs.userIDBody,
        responses: [ResponseDoc(status: 201, description: "Added"), MessagingDocs.notMember,
                    MessagingDocs.error(409, "already_member, chat_full, or direct_chat (a direct chat's members cannot change)")]
            + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func add(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        try await messenger.addMember(try IDBody(request, field: "userId").id, to: id, by: try context.user().id)
        return Response(status: 201)
    }

    static let removeDoc = RouteDoc(
        summary: "Remove a member (group admins), or myself (that is leaving)",
        description: "The remaining members and the removed person receive member.removed; from then on the chat is 404 for them.",
        tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Removed"),
                    MessagingDocs.notAMember, MessagingDocs.directChat] + MessagingDocs.adminErrors,
        authenticated: true)

    @Sendable func remove(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        try await messenger.removeMember(try Self.memberID(request), from: id, by: try context.user().id)
        return .noContent()
    }

    static let grantAdminDoc = RouteDoc(
        summary: "Make a member an admin of the group (group admins; again is fine)", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "An admin"), MessagingDocs.notAMember, MessagingDocs.directChat]
            + MessagingDocs.adminErrors,
        authenticated: true)

    @Sendable func grantAdmin(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.setAdmin(try Self.memberID(request), of: try MessagingAPI.pathID(request), true, by: try context.user().id)
        return .noContent()
    }

    static let revokeAdminDoc = RouteDoc(
        summary: "Take the admin right from a member (group admins); never the last admin's", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Not an admin"), MessagingDocs.notAMember,
                    MessagingDocs.error(409, "last_admin, or direct_chat")] + MessagingDocs.adminErrors,
        authenticated: true)

    @Sendable func revokeAdmin(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.setAdmin(try Self.memberID(request), of: try MessagingAPI.pathID(request), false, by: try context.user().id)
        return .noContent()
    }
}
