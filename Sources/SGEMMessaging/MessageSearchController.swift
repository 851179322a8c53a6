import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `/search/messages`: full-text search of a person's own chats.
struct MessageSearchController: Sendable {
    let messenger: Messenger

    /// On `api`, a group with `MessagingAPI.middleware`.
    func register(_ api: RouteGroup) {
        api.get("/search/messages", doc: Self.searchDoc, search)
    }

    /// `?q=&chatId=&before=&limit=`, read once: 422 naming every bad one.
    struct Query {
        let text: String
        let chatID: Int64?
        let paging: MessagingAPI.Paging

        init(_ request: Request) throws {
            var problems: [String: String] = [:]
            let q = request.query["q"] ?? ""
            if q.trimmingWhitespace().isEmpty { problems["q"] = "is required" } else if q.count > ChatRules.maxSearchQuery {
                problems["q"] = "must be at most \(ChatRules.maxSearchQuery) characters"
            }
            var chatID: Int64?
            if let raw = request.query["chatId"], !raw.isEmpty {
                if let n = Int64(raw), n > 0 { chatID = n } else { problems["chatId"] = "must be a chat id" }
            }
            paging = MessagingAPI.paging(request, allowAfter: false, problems: &problems)
            if !problems.isEmpty { throw APIError.validationFailed(problems) }
            text = q
            self.chatID = chatID
        }
    }

    static let searchDoc = RouteDoc(
        summary: "Search the messages of my chats, newest first",
        description: """
            Every word of q must appear, ignoring case and accents; when no message of mine holds the last word \
            whole (it may be half-typed), it also matches as the start of a word. The snippet \
            is plain text with each match between « and » and … where text was cut. Deleted messages are never found.
            """,
        tags: MessagingDocs.tags,
        query: [QueryDoc("q", "the words, 1 to 200 characters"), QueryDoc("chatId", "only this chat", schema: APISchema.integer),
                QueryDoc("before", "only messages with a smaller id", schema: APISchema.integer),
                QueryDoc("limit", "1 to 200 (default 50)", schema: APISchema.integer)],
        responses: [ResponseDoc(status: 200, description: "The hits", schema: MessagingDocs.items(MessagingDocs.hit)),
                    MessagingDocs.error(422, "validation_failed (q, chatId, before or limit)")] + MessagingDocs.readErrors,
        authenticated: true)

    @Sendable func search(_ request: Request, _ context: RequestContext) async throws -> Response {
        let query = try Query(request)
        return .json(Items(items: try await messenger.search(query.text, viewer: try context.user().id, chatID: query.chatID,
                                                             before: query.paging.before, limit: query.paging.limit)))
    }
}
