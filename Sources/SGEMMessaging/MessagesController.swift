import SGEMCore
import SGEMHTTP
import SGEMSupport

/// A chat's history and posting (`/chats/{id}/messages`), and a message of one's own edited or
/// deleted (`/messages/{id}`).
struct MessagesController: Sendable {
    let messenger: Messenger

    /// On `api`, a group with `MessagingAPI.middleware`.
    func register(_ api: RouteGroup) {
        api.get("/chats/{id}/messages", doc: Self.historyDoc, history)
        api.post("/chats/{id}/messages", maxBody: MessagingAPI.maxBody, doc: Self.sendDoc, send)
        api.patch("/messages/{id}", maxBody: MessagingAPI.maxBody, doc: Self.editDoc, edit)
        api.delete("/messages/{id}", doc: Self.deleteDoc, delete)
    }

    /// The `{id}` of `/messages/{id}`.
    private static func messageID(_ request: Request) throws -> Int64 {
        try MessagingAPI.pathID(request, "id", "no such message")
    }

    static let historyDoc = RouteDoc(
        summary: "A chat's messages in ascending id order",
        description: """
            With after: the oldest `limit` messages after that id. Otherwise the newest `limit` messages (below before, \
            when given). Deleted messages keep their place with deleted true and body null. System lines (kind system, \
            body null) say who created the group, was added, removed or made admin, left, or renamed it: they \
            are never unread, never mentions and never found by search.
            """,
        tags: MessagingDocs.tags,
        query: [QueryDoc("after", "a message id", schema: APISchema.integer), QueryDoc("before", "a message id", schema: APISchema.integer),
                QueryDoc("limit", "1 to 200 (default 50)", schema: APISchema.integer)],
        responses: [ResponseDoc(status: 200, description: "The messages", schema: MessagingDocs.items(MessagingDocs.message)),
                    MessagingDocs.notMember, MessagingDocs.error(422, "validation_failed (after, before or limit)")]
            + MessagingDocs.readErrors,
        authenticated: true)

    /// Written straight as bytes by `Messenger.messages` (the most read page of the API); the same
    /// JSON as `Items<MessageView>` plus each message's `translation` for this reader.
    @Sendable func history(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        let paging = try MessagingAPI.paging(request, allowAfter: true)
        let page = try await messenger.messages(in: id, viewer: try context.user().id, after: paging.after, before: paging.before,
                                                limit: paging.limit)
        return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: page)
    }

    static let sendDoc = RouteDoc(
        summary: "Post a message; answered only once it is durably stored",
        description: """
            body: 1 to 4,000 characters, not only whitespace, stored exactly as sent (plain text, never HTML). \
            `@username` of a member puts them in mentions. clientId (1 to 64 characters) makes retries safe: the same \
            clientId from the same sender in the same chat returns the first message with 200 instead of storing a copy.
            """,
        tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["body": MessagingDocs.body,
                                         "clientId": ["type": "string", "minLength": 1, "maxLength": 64]], required: ["body"]),
        responses: [ResponseDoc(status: 200, description: "The first message with this clientId (a retry)", schema: MessagingDocs.message),
                    ResponseDoc(status: 201, description: "The message, stored", schema: MessagingDocs.message), MessagingDocs.notMember]
            + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func send(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try MessagingAPI.pathID(request)
        let body = try NewMessageBody(request)
        let (message, created) = try await messenger.send(body.text, clientID: body.clientID, to: id, by: try context.user().id)
        return .json(message, status: created ? 201 : 200)
    }

    static let editDoc = RouteDoc(
        summary: "Edit my message's body (sets editedAt; mentions follow the new body)", tags: MessagingDocs.tags,
        requestSchema: APISchema.object(["body": MessagingDocs.body], required: ["body"]),
        responses: [ResponseDoc(status: 200, description: "The message now", schema: MessagingDocs.message),
                    MessagingDocs.error(404, "not_found (no such message in my chats)"),
                    MessagingDocs.error(409, "message_deleted, or system_message (a line saying who came and went)")]
            + MessagingDocs.writeErrors,
        authenticated: true)

    @Sendable func edit(_ request: Request, _ context: RequestContext) async throws -> Response {
        let id = try Self.messageID(request)
        return .json(try await messenger.edit(id, body: try EditMessageBody(request).text, by: try context.user().id))
    }

    static let deleteDoc = RouteDoc(
        summary: "Delete a message (its author, or an admin of its group); again is fine",
        description: "It stays in the history as deleted; its body is no longer served anywhere, search included.",
        tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Deleted"), MessagingDocs.error(404, "not_found (no such message in my chats)"),
                    MessagingDocs.error(409, "system_message (a line saying who came and went)")]
            + MessagingDocs.adminErrors,
        authenticated: true)

    @Sendable func delete(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.delete(try Self.messageID(request), by: try context.user().id)
        return .noContent()
    }
}
