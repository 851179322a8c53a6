import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The notices section of the API: `/notices` for everyone, `/admin/notices` for admins.
struct NoticesRoutes: Sendable {
    /// A body of 20,000 characters written as JSON escapes (up to 12 bytes each for characters
    /// outside the BMP) still fits; anything larger is 413 before it is read.
    static let maxBody = 256 * 1024

    let board: NoticeBoard
    let services: ServiceRegistry
    let logger: Logger

    func register(_ routes: RouteGroup) {
        let user = routes.group("/notices", middleware: [RequireUser(services: services)])
        let admin = routes.group("/admin/notices", middleware: [RequireAdmin(services: services)])
        let board = self.board
        let logger = self.logger

        user.get("", doc: RouteDoc(
            summary: "The notice board: pinned notices first, then the newest",
            description: """
                The first page (no before) holds every pinned notice (at most 200, newest first) followed by the \
                newest `limit` others; `nextBefore` is then the id to pass as `before` for the next page of others, \
                null when there is none. Pages after the first hold no pinned notices. A holiday notice is listed only \
                for the person it concerns, worded in the reader's language. kind keeps company news (company) or \
                personal updates (holiday) only; unreadCount and unreadByKind count every kind whatever the filter. \
                Admins also get readCount and audienceCount on company notices.
                """,
            tags: ["notices"],
            query: [QueryDoc("before", "the nextBefore of the previous page", schema: ["type": "integer"]),
                    QueryDoc("limit", "how many notices besides the pinned ones, 1 to 200 (default 50)", schema: ["type": "integer"]),
                    NoticesRoutes.kindDoc],
            responses: [ResponseDoc(status: 200, description: "The notices", schema: pageSchema),
                        errorDoc(422, "validation_failed (before, limit or kind)")] + NoticesRoutes.authErrors("account_inactive"),
            authenticated: true)) { request, context in
            let me = try context.user()
            let (before, limit) = try NoticesRoutes.paging(request)
            let kind = try NoticesRoutes.kind(request)
            let page = try await board.page(viewer: me.id, before: before, limit: limit, kind: kind)
            // The reader's language only matters for holiday notices worded from their facts.
            let language = page.items.contains { $0.facts != nil } ? try await board.language(of: me.id) : nil
            return .json([
                "items": .array(try await board.json(page.items, admin: me.isAdmin, language: language)),
                "unreadCount": .number(Double(page.unreadCount)),
                "unreadByKind": .object([("company", .number(Double(page.unreadByKind[.company] ?? 0))),
                                         ("holiday", .number(Double(page.unreadByKind[.holiday] ?? 0)))]),
                "nextBefore": page.nextBefore.map { .number(Double($0)) } ?? .null,
            ] as JSONValue)
        }
        user.get("/{id}", doc: RouteDoc(
            summary: "One notice; 404 when it is someone else's holiday notice", tags: ["notices"],
            responses: [ResponseDoc(status: 200, description: "The notice", schema: noticeSchema),
                        errorDoc(404, "not_found")] + NoticesRoutes.authErrors("account_inactive"),
            authenticated: true)) { request, context in
            let me = try context.user()
            let notice = try await board.notice(try NoticesRoutes.id(request), viewer: me.id)
            let language = notice.facts != nil ? try await board.language(of: me.id) : nil
            return .json(try await board.json([notice], admin: me.isAdmin, language: language)[0])
        }
        user.post("/{id}/read", doc: RouteDoc(
            summary: "Mark a notice read (again is fine)", tags: ["notices"],
            responses: [ResponseDoc(status: 204, description: "Read"),
                        errorDoc(404, "not_found")] + NoticesRoutes.authErrors("csrf_failed or account_inactive"),
            authenticated: true)) { request, context in
            try await board.markRead(try NoticesRoutes.id(request), viewer: try context.user().id)
            return .noContent()
        }
        user.post("/read-all", doc: RouteDoc(
            summary: "Mark every notice I can see (of one kind when given) read",
            description: "Other tabs of the same person receive a notices.read event ({kind}) with the change.",
            tags: ["notices"], query: [NoticesRoutes.kindDoc],
            responses: [ResponseDoc(status: 204, description: "All read"), errorDoc(422, "validation_failed (kind)")]
                + NoticesRoutes.authErrors("csrf_failed or account_inactive"),
            authenticated: true)) { request, context in
            try await board.markAllRead(viewer: try context.user().id, kind: try NoticesRoutes.kind(request))
            return .noContent()
        }

        admin.post("", maxBody: NoticesRoutes.maxBody, doc: RouteDoc(
            summary: "Post a company notice; everyone receives a notice.created event",
            description: "title: 1 to 200 characters once trimmed, one line; body: plain text up to 20,000 characters, stored as sent.",
            tags: ["notices", "admin"],
            requestSchema: object(["title": ["type": "string", "minLength": 1, "maxLength": 200],
                                   "body": ["type": "string", "maxLength": 20_000], "pinned": boolean], required: ["title", "body"]),
            responses: [ResponseDoc(status: 201, description: "Posted", schema: noticeSchema)] + NoticesRoutes.writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let title = NoticesRoutes.text("title", &body, required: true, NoticeRules.title)
            let text = NoticesRoutes.text("body", &body, required: true, NoticeRules.body)
            let pinned = body.bool("pinned")
            try body.check()
            let notice = try await board.post(title: title ?? "", body: text ?? "", pinned: pinned ?? false, author: me.id,
                                              ip: request.clientAddress)
            logger.notice("notice posted", ["notice.id": String(notice.id), "user.id": String(me.id), "request.id": context.requestID])
            return .json(try await board.json([notice], admin: true)[0], status: 201)
        }
        admin.patch("/{id}", maxBody: NoticesRoutes.maxBody, doc: RouteDoc(
            summary: "Edit a company notice (fields left out keep their value)",
            description: "editedAt is set when the title or the body changes; pinning alone does not set it. Holiday notices are 404 here.",
            tags: ["notices", "admin"],
            requestSchema: object(["title": ["type": "string", "minLength": 1, "maxLength": 200],
                                   "body": ["type": "string", "maxLength": 20_000], "pinned": boolean]),
            responses: [ResponseDoc(status: 200, description: "The notice now", schema: noticeSchema), errorDoc(404, "not_found")]
                + NoticesRoutes.writeErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try NoticesRoutes.id(request)
            var body = try JSONBody(request)
            let title = NoticesRoutes.text("title", &body, required: false, NoticeRules.title)
            let text = NoticesRoutes.text("body", &body, required: false, NoticeRules.body)
            let pinned = body.bool("pinned")
            try body.check()
            let notice = try await board.edit(id, title: title, body: text, pinned: pinned, viewer: me.id, ip: request.clientAddress)
            logger.notice("notice edited", ["notice.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
            return .json(try await board.json([notice], admin: true)[0])
        }
        admin.delete("/{id}", doc: RouteDoc(
            summary: "Delete a company notice and its read marks", tags: ["notices", "admin"],
            responses: [ResponseDoc(status: 204, description: "Deleted"), errorDoc(404, "not_found")]
                + NoticesRoutes.authErrors("forbidden (not an admin), csrf_failed or account_inactive"),
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try NoticesRoutes.id(request)
            try await board.delete(id, by: NoticeBoard.Actor(userID: me.id, ip: request.clientAddress))
            logger.notice("notice deleted", ["notice.id": String(id), "user.id": String(me.id), "request.id": context.requestID])
            return .noContent()
        }
    }

    /// 401 without valid credentials, 403 for `forbidden`.
    static func authErrors(_ forbidden: String) -> [ResponseDoc] {
        [errorDoc(401, "unauthenticated or session_expired"), errorDoc(403, forbidden)]
    }

    /// What an admin's write with a body may be refused with.
    static let writeErrors = authErrors("forbidden (not an admin), csrf_failed or account_inactive") + [
        errorDoc(400, "invalid_json"),
        errorDoc(413, "payload_too_large"),
        errorDoc(415, "unsupported_media_type"),
        errorDoc(422, "validation_failed, per field in details.fields"),
    ]

    /// The `{id}` path parameter; 404 when it is not a notice id at all.
    static func id(_ request: Request) throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw APIError.notFound("no such notice") }
        return id
    }

    static let kindDoc = QueryDoc("kind", "company (company news) or holiday (personal updates); every kind when left out",
                                  schema: ["type": "string", "enum": ["company", "holiday"]])

    /// The `kind` filter; nil for every kind, 422 for an unknown one.
    static func kind(_ request: Request) throws -> Notice.Kind? {
        guard let raw = request.query["kind"], !raw.isEmpty else { return nil }
        guard let kind = Notice.Kind(rawValue: raw) else { throw APIError.validationFailed(["kind": "must be company or holiday"]) }
        return kind
    }

    /// `before` and `limit` (default 50, at most 200); 422 naming each bad one.
    static func paging(_ request: Request) throws -> (before: Int64?, limit: Int) {
        var problems: [String: String] = [:]
        var before: Int64?
        if let raw = request.query["before"], !raw.isEmpty {
            if let n = Int64(raw), n > 0 { before = n } else { problems["before"] = "must be a notice id" }
        }
        var limit = 50
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return (before, limit)
    }

    /// The string field `key` checked by `rule` (trimmed title, body as sent), or nil with the
    /// problem recorded in `body`. Optional fields may be left out, never null.
    static func text(_ key: String, _ body: inout JSONBody, required: Bool,
                     _ rule: (String) -> Result<String, NoticeProblem>) -> String? {
        if !required, body.fields[key] == .null { body.problem(key, "must be a string"); return nil }
        guard let raw = body.string(key, required: required) else { return nil }
        switch rule(raw) {
        case let .success(text): return text
        case let .failure(problem): body.problem(key, problem.message); return nil
        }
    }
}

// MARK: OpenAPI schemas

let string: JSONValue = ["type": "string"]
let integer: JSONValue = ["type": "integer"]
let boolean: JSONValue = ["type": "boolean"]
let dateTime: JSONValue = ["type": "string", "format": "date-time"]

func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = []) -> JSONValue {
    var o: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties.map { ($0.key, $0.value) }))]
    if !required.isEmpty { o.append(("required", .array(required.map(JSONValue.string)))) }
    return .object(o)
}

/// A documented error answer in the contract's shape.
func errorDoc(_ status: Int, _ description: String) -> ResponseDoc {
    ResponseDoc(status: status, description: description, schema: ["$ref": "#/components/schemas/Error"])
}

let noticeSchema = object([
    "id": integer, "kind": ["type": "string", "enum": ["company", "holiday"]], "title": string, "body": string, "pinned": boolean,
    "authorId": ["type": "integer", "nullable": true], "createdAt": dateTime,
    "editedAt": ["type": "string", "format": "date-time", "nullable": true], "read": boolean,
    "readCount": integer, "audienceCount": integer,
], required: ["id", "kind", "title", "body", "pinned", "authorId", "createdAt", "editedAt", "read"])

let pageSchema = object([
    "items": ["type": "array", "items": noticeSchema], "unreadCount": integer,
    "unreadByKind": object(["company": integer, "holiday": integer], required: ["company", "holiday"]),
    "nextBefore": ["type": "integer", "nullable": true],
], required: ["items", "unreadCount", "unreadByKind", "nextBefore"])
