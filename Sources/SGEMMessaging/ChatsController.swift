import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `/chats`: a person's chats, groups and their settings, direct chats, public groups, and each
/// reader's own choices in a chat (read marker, push level).
struct ChatsController: Sendable {
    let messenger: Messenger
    let services: ServiceRegistry
    let logger: Logger

    /// On `api`, a group with `MessagingAPI.middleware`.
    func register(_ api: RouteGroup) {
        let chats = api.group("/chats")
        chats.get("", doc: Self.listDoc, list)
        chats.post("", maxBody: MessagingAPI.maxBody, doc: Self.createDoc, create)
        chats.post("/direct", maxBody: MessagingAPI.maxBody, doc: Self.directDoc, direct)
        chats.get("/public", doc: Self.publicGroupsDoc, publicGroups)
        chats.post("/{id}/join", doc: Self.joinDoc, join)
        chats.get("/{id}", doc: Self.showDoc, show)
        chats.patch("/{id}", maxBody: MessagingAPI.maxBody, doc: Self.editDoc, edit)
        chats.delete("/{id}", doc: Self.deleteDoc, delete)
        chats.post("/{id}/leave", doc: Self.leaveDoc, leave)
        chats.post("/{id}/read", maxBody: MessagingAPI.maxBody, doc: Self.markReadDoc, markRead)
        chats.put("/{id}/notifications", maxBody: MessagingAPI.maxBody, doc: Self.notificationsDoc, setNotifications)
    }

    /// `chats` with `away` on their members who are on leave today, in one lookup for them all.
    private func markingAway(_ chats: [ChatView]) async -> [ChatView] {
        let ids = Set(chats.flatMap { $0.members.map(\.userID) })
        let away = await Away.lookup(Array(ids), services: services, logger: logger)
        return away.isEmpty ? chats : chats.map { $0.markingAway(away) }
    }

    private func markingAway(_ chat: ChatView) async -> ChatView { await markingAway([chat])[0] }

    // MARK: Reading

    static let listDoc = RouteDoc(
        summary: "My chats, most recent activity first, with the last message and my unread and mention counts",
        tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 200, description: "The chats", schema: MessagingDocs.items(MessagingDocs.chat))]
            + MessagingDocs.readErrors,
        authenticated: true)

    @Sendable func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        let chats = try await messenger.chats(of: try context.user().id)
        return .json(Items(items: await markingAway(chats)))
    }

    static let publicGroupsDoc = RouteDoc(
        summary: "Public groups, newest first; member tells whether I am in one", tags: MessagingDocs.tags,
        query: [QueryDoc("before", "only groups with a smaller id (the last id of the previous page)", schema: APISchema.integer),
                QueryDoc("limit", "1 to 200 (default 50)", schema: APISchema.integer)],
        responses: [ResponseDoc(status: 200, description: "The groups", schema: MessagingDocs.items(MessagingDocs.chat)),
                    MessagingDocs.error(422, "validation_failed (before or limit)")] + MessagingDocs.readErrors,
        authenticated: true)

    @Sendable func publicGroups(_ request: Request, _ context: RequestContext) async throws -> Response {
        let paging = try MessagingAPI.paging(request, allowAfter: false)
        return .json(Items(items: try await messenger.publicGroups(viewer: try context.user().id, before: paging.before,
                                                                   limit: paging.limit)))
    }

    static let showDoc = RouteDoc(
        summary: "A chat I am a member of", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 200, description: "The chat", schema: MessagingDocs.chat), MessagingDocs.notMember]
            + MessagingDocs.readErrors,
        authenticated: true)

    @Sendable func show(_ request: Request, _ context: RequestContext) async throws -> Response {
        let chat = try await messenger.chat(try MessagingAPI.pathID(request), viewer: try context.user().id)
        return .json(await markingAway(chat))
    }

    // MARK: Creating

    static let createDoc = RouteDoc(
        summary: "Create a group; I am its admin and the active users in memberIds its members",
        description: """
            name: 1 to 100 characters once trimmed, one line; description: up to 1,000 characters; tags: at most 10, \
            each 1 to 30 characters once trimmed (repeats dropped, ignoring case); memberIds: active users, at most 999 \
            besides me. Every member receives chat.created.
            """,
        tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["name": MessagingDocs.name, "description": MessagingDocs.description,
                                         "tags": MessagingDocs.tagList, "public": APISchema.boolean,
                                         "memberIds": APISchema.array(APISchema.integer)],
                                        required: ["name"]),
        responses: [ResponseDoc(status: 201, description: "The group", schema: MessagingDocs.chat)] + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func create(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try CreateGroupBody(request)
        let chat = try await messenger.createGroup(by: me.id, name: body.name, description: body.description, tags: body.tags,
                                                   isPublic: body.isPublic, memberIDs: body.memberIDs)
        logger.info("group created", ["chat.id": String(chat.id), "user.id": String(me.id), "request.id": context.requestID])
        return .json(await markingAway(chat), status: 201)
    }

    static let directDoc = RouteDoc(
        summary: "The direct chat with an active user: created the first time (201), then returned again (200)",
        description: "One chat per pair, whoever asks first; concurrent first requests get the same chat.",
        tags: MessagingDocs.tags,
        requestSchema: MessagingDocs.userIDBody,
        responses: [ResponseDoc(status: 200, description: "The existing chat", schema: MessagingDocs.chat),
                    ResponseDoc(status: 201, description: "The new chat", schema: MessagingDocs.chat)] + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func direct(_ request: Request, _ context: RequestContext) async throws -> Response {
        let other = try IDBody(request, field: "userId").id
        let (chat, created) = try await messenger.directChat(try context.user().id, with: other)
        return .json(await markingAway(chat), status: created ? 201 : 200)
    }

    static let joinDoc = RouteDoc(
        summary: "Join a public group (again is fine)", description: "Its members receive member.added.", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "A member now"), MessagingDocs.error(404, "not_found (no such public group)"),
                    MessagingDocs.error(409, "chat_full")] + MessagingDocs.unsafeErrors,
        authenticated: true)

    @Sendable func join(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.join(try MessagingAPI.pathID(request), user: try context.user().id)
        return .noContent()
    }

    // MARK: Group settings

    static let editDoc = RouteDoc(
        summary: "Change a group's name, description, tags or public flag (group admins)",
        description: "Fields left out keep their value; the members receive chat.updated.",
        tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["name": MessagingDocs.name, "description": MessagingDocs.description,
                                         "tags": MessagingDocs.tagList, "public": APISchema.boolean]),
        responses: [ResponseDoc(status: 200, description: "The group now", schema: MessagingDocs.chat), MessagingDocs.notMember,
                    MessagingDocs.directChat] + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func edit(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        let body = try EditGroupBody(request)
        let chat = try await messenger.editGroup(id, by: try context.user().id, name: body.name, description: body.description, tags: body.tags,
                                                 isPublic: body.isPublic)
        return .json(await markingAway(chat))
    }

    static let deleteDoc = RouteDoc(
        summary: "Delete a group with all its messages (group admins)",
        description: "Its members at deletion receive chat.deleted.", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Deleted"), MessagingDocs.notMember, MessagingDocs.directChat]
            + MessagingDocs.adminErrors,
        authenticated: true)

    @Sendable func delete(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try MessagingAPI.pathID(request)
        try await messenger.deleteGroup(id, by: me.id)
        logger.info("group deleted", ["chat.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
        return .noContent()
    }

    static let leaveDoc = RouteDoc(
        summary: "Leave a group",
        description: """
            When the last admin leaves, the longest-standing member becomes admin (chat.updated); when the last member \
            leaves, the group is deleted.
            """,
        tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Left"), MessagingDocs.notMember, MessagingDocs.directChat]
            + MessagingDocs.unsafeErrors,
        authenticated: true)

    @Sendable func leave(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.leave(try MessagingAPI.pathID(request), user: try context.user().id)
        return .noContent()
    }

    // MARK: The reader's own

    static let markReadDoc = RouteDoc(
        summary: "Mark the chat read up to a message", description: "The marker only moves forward.", tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["messageId": APISchema.integer], required: ["messageId"]),
        responses: [ResponseDoc(status: 204, description: "Marked"), MessagingDocs.notMember] + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func markRead(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        try await messenger.markRead(id, upTo: try IDBody(request, field: "messageId").id, by: try context.user().id)
        return .noContent()
    }

    static let notificationsDoc = RouteDoc(
        summary: "How much of this chat reaches my devices as pushes",
        description: "all: every message; mentions: only messages that mention me; none: nothing. "
            + "The default is all for direct chats and mentions for groups; the chat object carries mine as notifications.",
        tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["level": ["type": "string", "enum": ["all", "mentions", "none"]]], required: ["level"]),
        responses: [ResponseDoc(status: 204, description: "Saved"), MessagingDocs.notMember] + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func setNotifications(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        try await messenger.setNotifications(id, try NotificationsBody(request).level, by: try context.user().id)
        return .noContent()
    }
}
