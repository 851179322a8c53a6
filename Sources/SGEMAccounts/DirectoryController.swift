import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The team directory (`/api/v1/users`): the list, one person's page and pictures.
struct DirectoryController: AccountsController {
    let runtime: AccountsRuntime

    func register(_ routes: RouteGroup) {
        let user = users(routes)
        user.get("/users", doc: Self.listDoc, list)
        user.get("/users/{id}", doc: Self.personDoc, person)
        user.get("/users/{id}/avatar", doc: Self.avatarDoc, avatar)
    }

    static let listDoc = RouteDoc(
        summary: "The team directory, by display name then username",
        description: """
            Each word of q must start a word of the name or the position, or start the username or the email, \
            ignoring case and accents ("gomez alv" finds Álvaro Gómez); order ignores them too. status is active (default), inactive or all; only admins may ask for inactive or all \
            (403 forbidden otherwise). total and active count the whole company. Page with limit (1 to 200) and after=<id of the last user seen>; \
            nextAfter is that id when another page follows, else null. Without limit, the first 500.
            """,
        tags: ["accounts"],
        query: [QueryDoc("q", "words matched against the starts of name and position words, the username and the email"),
                QueryDoc("status", "active (the default); admins also inactive or all", schema: ["type": "string", "enum": ["active", "inactive", "all"]]),
                QueryDoc("limit", "how many users, 1 to 200", schema: ["type": "integer"]),
                QueryDoc("after", "the id of the last user seen", schema: ["type": "integer"])],
        responses: [ResponseDoc(status: 200, description: "The users", schema: userPageSchema),
                    ResponseDoc(status: 403, description: "forbidden: status inactive or all needs an admin"),
                    ResponseDoc(status: 422, description: "validation_failed (status, limit or after)")],
        authenticated: true)

    /// `GET /users`: one page of the directory.
    @Sendable func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        var problems: [String: String] = [:]
        let status = UserStatusFilter(rawValue: request.query["status"].flatMap { $0.isEmpty ? nil : $0 } ?? "active")
        if status == nil { problems["status"] = "must be active, inactive or all" }
        if let status, status != .active, !me.isAdmin { throw APIError.forbidden("only admins may list inactive users") }
        // Without `limit`, the first 500: what the directory showed before it paged.
        var limit = 500
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        var after: Int64?
        if let raw = request.query["after"], !raw.isEmpty {
            if let id = Int64(raw) { after = id } else { problems["after"] = "must be the id of a user" }
        }
        guard problems.isEmpty, let status else { throw APIError.validationFailed(problems) }
        let q = String((request.query["q"] ?? "").prefix(100))
        let page = try await service.list(query: q, status: status, after: after, limit: limit)
        // One absence lookup for the whole page.
        let away = await Away.lookup(page.items.map(\.id), services: runtime.registry, logger: runtime.logger)
        return .json(UserPageView(items: page.items.map { $0.publicView.marked(away) }, nextAfter: page.more ? page.items.last?.id : nil,
                                  total: page.total, active: page.active))
    }

    static let personDoc = RouteDoc(summary: "One user's public profile", tags: ["accounts"],
                                  responses: [ResponseDoc(status: 200, description: "The user", schema: userSchema)],
                                  authenticated: true)

    @Sendable func person(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let record = try await service.user(id: try AccountsAPI.userID(request)) else { throw AccountsError.userNotFound }
        let away = await Away.lookup([record.id], services: runtime.registry, logger: runtime.logger)
        return .json(record.publicView.marked(away))
    }

    static let avatarDoc = RouteDoc(
        summary: "A user's picture, with ETag; cached for good when ?v= names its current version", tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "The image", schema: AccountsAPI.pictureBody, contentType: "image/*"),
                    ResponseDoc(status: 304, description: "Not modified"),
                    ResponseDoc(status: 404, description: "No picture")], authenticated: true)

    @Sendable func avatar(_ request: Request, _ context: RequestContext) async throws -> Response {
        guard let id = Int64(request.parameters["id"] ?? ""), let image = try await service.avatar(userID: id) else {
            throw APIError.notFound("this user has no picture")
        }
        let cache = request.query["v"] == String(image.version) ? "private, max-age=31536000, immutable" : "private, no-cache"
        var headers = HTTPHeaders([("ETag", image.etag), ("Cache-Control", cache), ("X-Content-Type-Options", "nosniff")])
        if request.headers.ifNoneMatchMatches(image.etag) {
            return Response(status: 304, headers: headers)
        }
        headers.add("Content-Type", image.contentType)
        return Response(status: 200, headers: headers, body: image.data)
    }
}
