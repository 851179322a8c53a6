import SGEMSupport

// What the notices API answers, as `Encodable` values written in the contract's key order
// (`Response.json`). Their OpenAPI schemas are in `NoticesAPI.swift`, and `ViewSchemaTests`
// checks that the two agree.

/// One notice as a reader sees it. `authorId` and `editedAt` are always present (null when
/// unset); `read`, `readCount` and `audienceCount` are left out when nil.
struct NoticeView: Encodable, Sendable, Equatable {
    let id: Int64
    let kind: String
    let title: String
    let body: String
    let pinned: Bool
    @ExplicitNull var authorId: Int64?
    let createdAt: String
    @ExplicitNull var editedAt: String?
    /// Nil only on the command line's list, which has no reader.
    var read: Bool?
    /// Readers other than the author: for admins (company notices) and the command line.
    var readCount: Int?
    var audienceCount: Int?

    /// The API's notice; the read and audience counts only when `audienceCount` is given (an
    /// admin reading a company notice). `language`: the reader's, for the wording of holiday
    /// notices (nil keeps the stored text).
    init(_ notice: Notice, audienceCount: Int?, language: String? = nil) {
        let (title, body) = notice.text(in: language)
        (id, kind, self.title, self.body, pinned) = (notice.id, notice.kind.rawValue, title, body, notice.pinned)
        authorId = notice.authorID
        createdAt = notice.createdAt.rfc3339()
        editedAt = notice.editedAt?.rfc3339()
        read = notice.read
        readCount = audienceCount == nil ? nil : notice.readCount
        self.audienceCount = audienceCount
    }

    /// The command line's notice: the stored text and the read count, no reader's read state.
    init(listing notice: Notice) {
        self.init(notice, audienceCount: nil)
        (read, readCount) = (nil, notice.readCount)
    }
}

/// One page of the board: its notices, the reader's unread counts, and the next page's cursor.
struct NoticePageView: Encodable, Sendable {
    /// Unread notices per kind, whatever the page's filter.
    struct UnreadByKind: Encodable, Sendable {
        let company: Int
        let holiday: Int
    }

    let items: [NoticeView]
    let unreadCount: Int
    let unreadByKind: UnreadByKind
    /// Null on the last page.
    @ExplicitNull var nextBefore: Int64?

    init(_ page: NoticeBoard.Page, items: [NoticeView]) {
        self.items = items
        unreadCount = page.unreadCount
        unreadByKind = UnreadByKind(company: page.unreadByKind[.company] ?? 0, holiday: page.unreadByKind[.holiday] ?? 0)
        nextBefore = page.nextBefore
    }
}

/// `{"items": [...]}`, the command line's list.
struct NoticeListView: Encodable, Sendable {
    let items: [NoticeView]
}
