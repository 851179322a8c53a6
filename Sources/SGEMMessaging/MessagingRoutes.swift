import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The messaging section of the API: `/contacts`, `/chats`, `/messages`, `/search/messages`.
struct MessagingRoutes: Sendable {
    /// A 4,000-character body written as JSON escapes (up to 12 bytes a character outside the
    /// BMP) still fits, as do 1,000 member ids; anything larger is 413 before it is read.
    static let maxBody = 64 * 1024

    let messenger: Messenger
    let services: ServiceRegistry
    let logger: Logger

    func register(_ routes: RouteGroup) {
        let auth = [RequireUser(services: services)]
        let contacts = routes.group("/contacts", middleware: auth)
        let chats = routes.group("/chats", middleware: auth)
        let messages = routes.group("/messages", middleware: auth)
        let search = routes.group("/search", middleware: auth)
        let m = messenger
        let logger = self.logger

        contacts.get("", doc: RouteDoc(
            summary: "My contacts, in the order I added them", tags: ["messaging"],
            responses: [ResponseDoc(status: 200, description: "The contacts", schema: items(contactSchema))] + readErrors,
            authenticated: true)) { _, context in
            .json(["items": .array(try await m.contacts(of: try context.user().id))] as JSONValue)
        }
        contacts.put("/{userId}", doc: RouteDoc(
            summary: "Add someone to my contacts (again is fine)", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Added"), errorDoc(404, "not_found (no such user)"),
                        errorDoc(409, "too_many_contacts"), errorDoc(422, "validation_failed (yourself)")] + unsafeErrors,
            authenticated: true)) { request, context in
            try await m.addContact(try MessagingRoutes.pathID(request, "userId", "no such user"), to: try context.user().id)
            return .noContent()
        }
        contacts.delete("/{userId}", doc: RouteDoc(
            summary: "Remove someone from my contacts (again is fine)", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Removed"), errorDoc(404, "not_found (not a user id)")] + unsafeErrors,
            authenticated: true)) { request, context in
            try await m.removeContact(try MessagingRoutes.pathID(request, "userId", "no such user"), from: try context.user().id)
            return .noContent()
        }

        chats.get("", doc: RouteDoc(
            summary: "My chats, most recent activity first, with the last message and my unread and mention counts",
            tags: ["messaging"],
            responses: [ResponseDoc(status: 200, description: "The chats", schema: items(chatSchema))] + readErrors,
            authenticated: true)) { _, context in
            let list = try await m.chats(of: try context.user().id)
            return .json(["items": .array(await Away.markMembers(ofChats: list, services: services, logger: logger))] as JSONValue)
        }
        chats.post("", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Create a group; I am its admin and the active users in memberIds its members",
            description: """
                name: 1 to 100 characters once trimmed, one line; description: up to 1,000 characters; tags: at most 10, \
                each 1 to 30 characters once trimmed (repeats dropped, ignoring case); memberIds: active users, at most 999 \
                besides me. Every member receives chat.created.
                """,
            tags: ["messaging"],
            requestSchema: object(["name": ["type": "string", "minLength": 1, "maxLength": 100],
                                   "description": ["type": "string", "maxLength": 1000],
                                   "tags": ["type": "array", "maxItems": 10, "items": ["type": "string", "minLength": 1, "maxLength": 30]],
                                   "public": boolean, "memberIds": ["type": "array", "items": integer]],
                                  required: ["name"]),
            responses: [ResponseDoc(status: 201, description: "The group", schema: chatSchema)] + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let name = MessagingRoutes.checked("name", &body, required: true, ChatRules.name)
            let description = MessagingRoutes.checked("description", &body, required: false, ChatRules.description)
            let tags = MessagingRoutes.tags(&body)
            let isPublic = body.bool("public")
            let members = MessagingRoutes.ids("memberIds", &body)
            try body.check()
            let chat = try await m.createGroup(by: me.id, name: name ?? "", description: description ?? "", tags: tags ?? [],
                                               isPublic: isPublic ?? false, memberIDs: members ?? [])
            logger.info("group created", ["chat.id": String(chat["id"]?.numberValue.map { Int64($0) } ?? 0),
                                          "user.id": String(me.id), "request.id": context.requestID])
            return .json(await Away.markMembers(ofChats: [chat], services: services, logger: logger)[0], status: 201)
        }
        chats.post("/direct", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "The direct chat with an active user: created the first time (201), then returned again (200)",
            description: "One chat per pair, whoever asks first; concurrent first requests get the same chat.",
            tags: ["messaging"],
            requestSchema: object(["userId": integer], required: ["userId"]),
            responses: [ResponseDoc(status: 200, description: "The existing chat", schema: chatSchema),
                        ResponseDoc(status: 201, description: "The new chat", schema: chatSchema)] + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let other = MessagingRoutes.id("userId", &body, required: true)
            try body.check()
            let (chat, created) = try await m.directChat(me.id, with: other ?? 0)
            return .json(await Away.markMembers(ofChats: [chat], services: services, logger: logger)[0], status: created ? 201 : 200)
        }
        chats.get("/public", doc: RouteDoc(
            summary: "Public groups, newest first; member tells whether I am in one", tags: ["messaging"],
            query: [QueryDoc("before", "only groups with a smaller id (the last id of the previous page)", schema: integer),
                    QueryDoc("limit", "1 to 200 (default 50)", schema: integer)],
            responses: [ResponseDoc(status: 200, description: "The groups", schema: items(chatSchema)),
                        errorDoc(422, "validation_failed (before or limit)")] + readErrors,
            authenticated: true)) { request, context in
            let paging = try MessagingRoutes.paging(request, allowAfter: false)
            return .json(["items": .array(try await m.publicGroups(viewer: try context.user().id, before: paging.before,
                                                                   limit: paging.limit))] as JSONValue)
        }
        chats.post("/{id}/join", doc: RouteDoc(
            summary: "Join a public group (again is fine)", description: "Its members receive member.added.", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "A member now"), errorDoc(404, "not_found (no such public group)"),
                        errorDoc(409, "chat_full")] + unsafeErrors,
            authenticated: true)) { request, context in
            try await m.join(try MessagingRoutes.pathID(request), user: try context.user().id)
            return .noContent()
        }
        chats.get("/{id}", doc: RouteDoc(
            summary: "A chat I am a member of", tags: ["messaging"],
            responses: [ResponseDoc(status: 200, description: "The chat", schema: chatSchema), notMember] + readErrors,
            authenticated: true)) { request, context in
            let chat = try await m.chat(try MessagingRoutes.pathID(request), viewer: try context.user().id)
            return .json(await Away.markMembers(ofChats: [chat], services: services, logger: logger)[0])
        }
        chats.patch("/{id}", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Change a group's name, description, tags or public flag (group admins)",
            description: "Fields left out keep their value; the members receive chat.updated.",
            tags: ["messaging"],
            requestSchema: object(["name": ["type": "string", "minLength": 1, "maxLength": 100],
                                   "description": ["type": "string", "maxLength": 1000],
                                   "tags": ["type": "array", "maxItems": 10, "items": ["type": "string", "minLength": 1, "maxLength": 30]],
                                   "public": boolean]),
            responses: [ResponseDoc(status: 200, description: "The group now", schema: chatSchema), notMember, directChat]
                + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            var body = try JSONBody(request)
            let name = MessagingRoutes.checked("name", &body, required: false, ChatRules.name)
            let description = MessagingRoutes.checked("description", &body, required: false, ChatRules.description)
            let tags = MessagingRoutes.tags(&body)
            let isPublic = MessagingRoutes.notNull("public", &body) ? body.bool("public") : nil
            try body.check()
            let chat = try await m.editGroup(id, by: me.id, name: name, description: description, tags: tags, isPublic: isPublic)
            return .json(await Away.markMembers(ofChats: [chat], services: services, logger: logger)[0])
        }
        chats.delete("/{id}", doc: RouteDoc(
            summary: "Delete a group with all its messages (group admins)",
            description: "Its members at deletion receive chat.deleted.", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Deleted"), notMember, directChat] + adminErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            try await m.deleteGroup(id, by: me.id)
            logger.info("group deleted", ["chat.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
            return .noContent()
        }
        chats.post("/{id}/members", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Add an active user to a group (group admins)", description: "The members receive member.added.",
            tags: ["messaging"],
            requestSchema: object(["userId": integer], required: ["userId"]),
            responses: [ResponseDoc(status: 201, description: "Added"), notMember,
                        errorDoc(409, "already_member, chat_full, or direct_chat (a direct chat's members cannot change)")]
                + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            var body = try JSONBody(request)
            let user = MessagingRoutes.id("userId", &body, required: true)
            try body.check()
            try await m.addMember(user ?? 0, to: id, by: me.id)
            return Response(status: 201)
        }
        chats.delete("/{id}/members/{userId}", doc: RouteDoc(
            summary: "Remove a member (group admins), or myself (that is leaving)",
            description: "The remaining members and the removed person receive member.removed; from then on the chat is 404 for them.",
            tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Removed"), errorDoc(404, "not_found (no such chat, or not a member)"),
                        directChat] + adminErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            try await m.removeMember(try MessagingRoutes.pathID(request, "userId", "that person is not a member"), from: id, by: me.id)
            return .noContent()
        }
        chats.put("/{id}/admins/{userId}", doc: RouteDoc(
            summary: "Make a member an admin of the group (group admins; again is fine)", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "An admin"), errorDoc(404, "not_found (no such chat, or not a member)"),
                        directChat] + adminErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            try await m.setAdmin(try MessagingRoutes.pathID(request, "userId", "that person is not a member"),
                                 of: try MessagingRoutes.pathID(request), true, by: me.id)
            return .noContent()
        }
        chats.delete("/{id}/admins/{userId}", doc: RouteDoc(
            summary: "Take the admin right from a member (group admins); never the last admin's", tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Not an admin"),
                        errorDoc(404, "not_found (no such chat, or not a member)"),
                        errorDoc(409, "last_admin, or direct_chat")] + adminErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            try await m.setAdmin(try MessagingRoutes.pathID(request, "userId", "that person is not a member"),
                                 of: try MessagingRoutes.pathID(request), false, by: me.id)
            return .noContent()
        }
        chats.post("/{id}/leave", doc: RouteDoc(
            summary: "Leave a group",
            description: """
                When the last admin leaves, the longest-standing member becomes admin (chat.updated); when the last member \
                leaves, the group is deleted.
                """,
            tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Left"), notMember, directChat] + unsafeErrors,
            authenticated: true)) { request, context in
            try await m.leave(try MessagingRoutes.pathID(request), user: try context.user().id)
            return .noContent()
        }
        chats.get("/{id}/messages", doc: RouteDoc(
            summary: "A chat's messages in ascending id order",
            description: """
                With after: the oldest `limit` messages after that id. Otherwise the newest `limit` messages (below before, \
                when given). Deleted messages keep their place with deleted true and body null. System lines (kind system, \
                body null) say who created the group, was added, removed or made admin, left, or renamed it: they \
                are never unread, never mentions and never found by search.
                """,
            tags: ["messaging"],
            query: [QueryDoc("after", "a message id", schema: integer), QueryDoc("before", "a message id", schema: integer),
                    QueryDoc("limit", "1 to 200 (default 50)", schema: integer)],
            responses: [ResponseDoc(status: 200, description: "The messages", schema: items(messageSchema)), notMember,
                        errorDoc(422, "validation_failed (after, before or limit)")] + readErrors,
            authenticated: true)) { request, context in
            let id = try MessagingRoutes.pathID(request)
            let paging = try MessagingRoutes.paging(request, allowAfter: true)
            let page = try await m.messages(in: id, viewer: try context.user().id, after: paging.after, before: paging.before,
                                            limit: paging.limit)
            return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: page)
        }
        chats.post("/{id}/messages", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Post a message; answered only once it is durably stored",
            description: """
                body: 1 to 4,000 characters, not only whitespace, stored exactly as sent (plain text, never HTML). \
                `@username` of a member puts them in mentions. clientId (1 to 64 characters) makes retries safe: the same \
                clientId from the same sender in the same chat returns the first message with 200 instead of storing a copy.
                """,
            tags: ["messaging"],
            requestSchema: object(["body": ["type": "string", "minLength": 1, "maxLength": 4000],
                                   "clientId": ["type": "string", "minLength": 1, "maxLength": 64]], required: ["body"]),
            responses: [ResponseDoc(status: 200, description: "The first message with this clientId (a retry)", schema: messageSchema),
                        ResponseDoc(status: 201, description: "The message, stored", schema: messageSchema), notMember]
                + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            var body = try JSONBody(request)
            let text = MessagingRoutes.checked("body", &body, required: true, ChatRules.body)
            let clientID = MessagingRoutes.checked("clientId", &body, required: false, ChatRules.clientID)
            try body.check()
            let (message, created) = try await m.send(text ?? "", clientID: clientID, to: id, by: me.id)
            return .json(message, status: created ? 201 : 200)
        }
        chats.post("/{id}/read", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Mark the chat read up to a message", description: "The marker only moves forward.", tags: ["messaging"],
            requestSchema: object(["messageId": integer], required: ["messageId"]),
            responses: [ResponseDoc(status: 204, description: "Marked"), notMember] + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            var body = try JSONBody(request)
            let upTo = MessagingRoutes.id("messageId", &body, required: true)
            try body.check()
            try await m.markRead(id, upTo: upTo ?? 0, by: me.id)
            return .noContent()
        }
        chats.put("/{id}/notifications", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "How much of this chat reaches my devices as pushes",
            description: "all: every message; mentions: only messages that mention me; none: nothing. "
                + "The default is all for direct chats and mentions for groups; the chat object carries mine as notifications.",
            tags: ["messaging"],
            requestSchema: object(["level": ["type": "string", "enum": ["all", "mentions", "none"]]], required: ["level"]),
            responses: [ResponseDoc(status: 204, description: "Saved"), notMember] + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request)
            var body = try JSONBody(request)
            let raw = body.string("level", required: true)
            let level = raw.flatMap(NotificationLevel.init(rawValue:))
            if raw != nil, level == nil { body.problem("level", "must be all, mentions or none") }
            try body.check()
            try await m.setNotifications(id, level ?? .all, by: me.id)
            return .noContent()
        }

        messages.patch("/{id}", maxBody: MessagingRoutes.maxBody, doc: RouteDoc(
            summary: "Edit my message's body (sets editedAt; mentions follow the new body)", tags: ["messaging"],
            requestSchema: object(["body": ["type": "string", "minLength": 1, "maxLength": 4000]], required: ["body"]),
            responses: [ResponseDoc(status: 200, description: "The message now", schema: messageSchema),
                        errorDoc(404, "not_found (no such message in my chats)"),
                        errorDoc(409, "message_deleted, or system_message (a line saying who came and went)")]
                + writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try MessagingRoutes.pathID(request, "id", "no such message")
            var body = try JSONBody(request)
            let text = MessagingRoutes.checked("body", &body, required: true, ChatRules.body)
            try body.check()
            return .json(try await m.edit(id, body: text ?? "", by: me.id))
        }
        messages.delete("/{id}", doc: RouteDoc(
            summary: "Delete a message (its author, or an admin of its group); again is fine",
            description: "It stays in the history as deleted; its body is no longer served anywhere, search included.",
            tags: ["messaging"],
            responses: [ResponseDoc(status: 204, description: "Deleted"), errorDoc(404, "not_found (no such message in my chats)"),
                        errorDoc(409, "system_message (a line saying who came and went)")]
                + adminErrors,
            authenticated: true)) { request, context in
            try await m.delete(try MessagingRoutes.pathID(request, "id", "no such message"), by: try context.user().id)
            return .noContent()
        }

        search.get("/messages", doc: RouteDoc(
            summary: "Search the messages of my chats, newest first",
            description: """
                Every word of q must appear, ignoring case and accents; when no message of mine holds the last word \
                whole (it may be half-typed), it also matches as the start of a word. The snippet \
                is plain text with each match between « and » and … where text was cut. Deleted messages are never found.
                """,
            tags: ["messaging"],
            query: [QueryDoc("q", "the words, 1 to 200 characters"), QueryDoc("chatId", "only this chat", schema: integer),
                    QueryDoc("before", "only messages with a smaller id", schema: integer),
                    QueryDoc("limit", "1 to 200 (default 50)", schema: integer)],
            responses: [ResponseDoc(status: 200, description: "The hits", schema: items(hitSchema)),
                        errorDoc(422, "validation_failed (q, chatId, before or limit)")] + readErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var problems: [String: String] = [:]
            let q = request.query["q"] ?? ""
            if q.trimmingWhitespace().isEmpty { problems["q"] = "is required" } else if q.count > ChatRules.maxSearchQuery {
                problems["q"] = "must be at most \(ChatRules.maxSearchQuery) characters"
            }
            var chatID: Int64?
            if let raw = request.query["chatId"], !raw.isEmpty {
                if let n = Int64(raw), n > 0 { chatID = n } else { problems["chatId"] = "must be a chat id" }
            }
            let paging = MessagingRoutes.paging(request, allowAfter: false, problems: &problems)
            if !problems.isEmpty { throw APIError.validationFailed(problems) }
            if let chatID, try await !m.isMember(me.id, of: chatID) { throw Messenger.noSuchChat }
            return .json(["items": .array(try await m.search(q, viewer: me.id, chatID: chatID, before: paging.before,
                                                             limit: paging.limit))] as JSONValue)
        }
    }

    // MARK: Input

    struct Paging {
        let after: Int64?
        let before: Int64?
        let limit: Int
    }

    /// `after`, `before` and `limit` (default 50, at most 200); 422 naming each bad one.
    static func paging(_ request: Request, allowAfter: Bool) throws -> Paging {
        var problems: [String: String] = [:]
        let paging = paging(request, allowAfter: allowAfter, problems: &problems)
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return paging
    }

    /// The same, adding each problem to `problems`.
    static func paging(_ request: Request, allowAfter: Bool, problems: inout [String: String]) -> Paging {
        func cursor(_ key: String) -> Int64? {
            guard let raw = request.query[key], !raw.isEmpty else { return nil }
            if let n = Int64(raw), n >= 0 { return n }
            problems[key] = "must be an id"
            return nil
        }
        let after = allowAfter ? cursor("after") : nil
        let before = cursor("before")
        var limit = 50
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        return Paging(after: after, before: before, limit: limit)
    }

    /// A path id; 404 when it is not an id at all.
    static func pathID(_ request: Request, _ key: String = "id", _ message: String = "no such chat") throws -> Int64 {
        guard let id = Int64(request.parameters[key] ?? ""), id > 0 else { throw APIError.notFound(message) }
        return id
    }

    /// The string field `key` checked by `rule`, or nil with the problem recorded. Optional
    /// fields may be left out, never null.
    static func checked(_ key: String, _ body: inout JSONBody, required: Bool,
                        _ rule: (String) -> Result<String, RuleProblem>) -> String? {
        guard required || notNull(key, &body), let raw = body.string(key, required: required) else { return nil }
        switch rule(raw) {
        case let .success(text): return text
        case let .failure(problem): body.problem(key, problem.message); return nil
        }
    }

    /// False (with a problem) when the optional field `key` is an explicit null.
    static func notNull(_ key: String, _ body: inout JSONBody) -> Bool {
        if body.fields[key] == .null { body.problem(key, "must not be null"); return false }
        return true
    }

    static func tags(_ body: inout JSONBody) -> [String]? {
        guard let value = body.fields["tags"] else { return nil }
        guard let list = value.arrayValue, list.count <= ChatRules.maxTags * 4 else {
            body.problem("tags", "must be a list of at most \(ChatRules.maxTags) strings"); return nil
        }
        let strings = list.compactMap(\.stringValue)
        guard strings.count == list.count else { body.problem("tags", "must hold only strings"); return nil }
        switch ChatRules.tags(strings) {
        case let .success(tags): return tags
        case let .failure(problem): body.problem("tags", problem.message); return nil
        }
    }

    /// A positive whole-number id field.
    static func id(_ key: String, _ body: inout JSONBody, required: Bool) -> Int64? {
        switch body.fields[key] {
        case nil, .null?:
            if required { body.problem(key, "is required") }
            return nil
        case let .number(n)? where n >= 1 && n <= 9_007_199_254_740_991 && n.rounded() == n:
            return Int64(n)
        default:
            body.problem(key, "must be an id (a positive whole number)")
            return nil
        }
    }

    /// A list of ids, at most one more than a group may hold.
    static func ids(_ key: String, _ body: inout JSONBody) -> [Int64]? {
        guard let value = body.fields[key], value != .null else { return nil }
        guard let list = value.arrayValue else { body.problem(key, "must be a list of user ids"); return nil }
        guard list.count <= ChatRules.maxMembers else {
            body.problem(key, "a group holds at most \(ChatRules.maxMembers) members"); return nil
        }
        var out: [Int64] = []
        for item in list {
            guard let n = item.numberValue, n >= 1, n <= 9_007_199_254_740_991, n.rounded() == n else {
                body.problem(key, "must be a list of user ids"); return nil
            }
            out.append(Int64(n))
        }
        return out
    }
}

extension Messenger {
    func isMember(_ user: Int64, of chatID: Int64) async throws -> Bool {
        try await repository.isMember(user, of: chatID)
    }
}

// MARK: OpenAPI

let string: JSONValue = ["type": "string"]
let integer: JSONValue = ["type": "integer"]
let boolean: JSONValue = ["type": "boolean"]
let dateTime: JSONValue = ["type": "string", "format": "date-time"]
let nullableDateTime: JSONValue = ["type": "string", "format": "date-time", "nullable": true]

func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = []) -> JSONValue {
    var o: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties.map { ($0.key, $0.value) }))]
    if !required.isEmpty { o.append(("required", .array(required.map(JSONValue.string)))) }
    return .object(o)
}

func items(_ schema: JSONValue) -> JSONValue {
    object(["items": ["type": "array", "items": schema]], required: ["items"])
}

func errorDoc(_ status: Int, _ description: String) -> ResponseDoc {
    ResponseDoc(status: status, description: description, schema: ["$ref": "#/components/schemas/Error"])
}

let readErrors = [errorDoc(401, "unauthenticated or session_expired"), errorDoc(403, "account_inactive")]
let unsafeErrors = [errorDoc(401, "unauthenticated or session_expired"), errorDoc(403, "csrf_failed or account_inactive")]
let adminErrors = [errorDoc(401, "unauthenticated or session_expired"),
                   errorDoc(403, "forbidden (not allowed in this chat), csrf_failed or account_inactive")]
let writeErrors = adminErrors + [
    errorDoc(400, "invalid_json"), errorDoc(413, "payload_too_large"), errorDoc(415, "unsupported_media_type"),
    errorDoc(422, "validation_failed, per field in details.fields"),
]
let notMember = errorDoc(404, "not_found (no such chat, or I am not a member)")
let directChat = errorDoc(409, "direct_chat (a direct chat's members and settings cannot change)")

let messageSchema = object([
    "id": integer, "chatId": integer, "senderId": integer, "body": ["type": "string", "nullable": true],
    "mentions": ["type": "array", "items": integer], "createdAt": dateTime, "editedAt": nullableDateTime, "deleted": boolean,
    "kind": ["type": "string", "enum": ["text", "system"]], "system": nullable(systemLineSchema),
], required: ["id", "chatId", "senderId", "body", "mentions", "createdAt", "editedAt", "deleted", "kind", "system"])

/// What a system line says: the change, who made it (also the message's `senderId`) and whom
/// it concerns; `name` is the group's new name for `chat.renamed`.
let systemLineSchema = object([
    "event": ["type": "string", "enum": .array(SystemLine.Event.allCases.map { .string($0.rawValue) })],
    "actorId": integer, "userIds": ["type": "array", "items": integer], "name": string,
], required: ["event", "actorId", "userIds"])

let chatSchema = object([
    "id": integer, "kind": ["type": "string", "enum": ["direct", "group"]], "name": ["type": "string", "nullable": true],
    "description": string, "tags": ["type": "array", "items": string], "public": boolean, "creatorId": integer,
    "members": ["type": "array", "items": object(["userId": integer, "admin": boolean, "away": Away.schema], required: ["userId", "admin"])],
    "lastMessage": nullable(messageSchema), "unreadCount": integer, "mentionCount": integer,
    "createdAt": dateTime, "member": boolean,
    "notifications": ["type": "string", "enum": ["all", "mentions", "none"], "description": "the reader's push level for this chat"],
], required: ["id", "kind", "name", "description", "tags", "public", "creatorId", "members", "lastMessage", "unreadCount",
              "mentionCount", "createdAt", "notifications"])

/// `schema` (an object schema) that may also be null.
func nullable(_ schema: JSONValue) -> JSONValue { .object((schema.objectValue ?? []) + [("nullable", true)]) }

let contactSchema = object([
    "userId": integer, "username": string, "displayName": string, "active": boolean, "addedAt": dateTime,
], required: ["userId", "username", "displayName", "active", "addedAt"])

let hitSchema = object(["message": messageSchema, "chatId": integer, "snippet": string], required: ["message", "chatId", "snippet"])
