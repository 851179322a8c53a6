import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The notice board as its readers use it (`/notices`): the board page by page, one notice, and
/// marking notices read.
struct NoticesController: Sendable {
    let board: NoticeBoard

    /// On `readers`, the `/notices` group of signed-in users.
    func register(_ readers: RouteGroup) {
        readers.get("", doc: Self.pageDoc, page)
        readers.get("/{id}", doc: Self.showDoc, show)
        readers.post("/{id}/read", doc: Self.markReadDoc, markRead)
        readers.post("/read-all", doc: Self.markAllReadDoc, markAllRead)
    }

    static let pageDoc = RouteDoc(
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
                NoticesAPI.kindDoc],
        responses: [ResponseDoc(status: 200, description: "The notices", schema: NoticesAPI.pageSchema),
                    APISchema.error(422, "validation_failed (before, limit or kind)")] + NoticesAPI.authErrors("account_inactive"),
        authenticated: true)

    func page(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let (before, limit) = try NoticesAPI.paging(request)
        let kind = try NoticesAPI.kind(request)
        let page = try await board.page(viewer: me.id, before: before, limit: limit, kind: kind)
        // The reader's language only matters for holiday notices worded from their facts.
        let language = page.items.contains { $0.facts != nil } ? try await board.language(of: me.id) : nil
        return .json(NoticePageView(page, items: try await board.views(page.items, admin: me.isAdmin, language: language)))
    }

    static let showDoc = RouteDoc(
        summary: "One notice; 404 when it is someone else's holiday notice", tags: ["notices"],
        responses: [ResponseDoc(status: 200, description: "The notice", schema: NoticesAPI.noticeSchema),
                    APISchema.error(404, "not_found")] + NoticesAPI.authErrors("account_inactive"),
        authenticated: true)

    func show(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let notice = try await board.notice(try NoticesAPI.id(request), viewer: me.id)
        let language = notice.facts != nil ? try await board.language(of: me.id) : nil
        return .json(try await board.views([notice], admin: me.isAdmin, language: language)[0])
    }

    static let markReadDoc = RouteDoc(
        summary: "Mark a notice read (again is fine)", tags: ["notices"],
        responses: [ResponseDoc(status: 204, description: "Read"),
                    APISchema.error(404, "not_found")] + NoticesAPI.authErrors("csrf_failed or account_inactive"),
        authenticated: true)

    func markRead(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await board.markRead(try NoticesAPI.id(request), viewer: try context.user().id)
        return .noContent()
    }

    static let markAllReadDoc = RouteDoc(
        summary: "Mark every notice I can see (of one kind when given) read",
        description: "Other tabs of the same person receive a notices.read event ({kind}) with the change.",
        tags: ["notices"], query: [NoticesAPI.kindDoc],
        responses: [ResponseDoc(status: 204, description: "All read"), APISchema.error(422, "validation_failed (kind)")]
            + NoticesAPI.authErrors("csrf_failed or account_inactive"),
        authenticated: true)

    func markAllRead(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await board.markAllRead(viewer: try context.user().id, kind: try NoticesAPI.kind(request))
        return .noContent()
    }
}
