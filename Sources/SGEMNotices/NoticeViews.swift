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
    let authorId: Int64?
    let createdAt: String
    let editedAt: String?
    /// Nil only on the command line's list, which has no reader.
    let read: Bool?
    /// Readers other than the author: for admins (company notices) and the command line.
    let readCount: Int?
    let audienceCount: Int?

    enum CodingKeys: String, CodingKey {
        case id, kind, title, body, pinned, authorId, createdAt, editedAt, read, readCount, audienceCount
    }

    /// The API's notice; the read and audience counts only when `audienceCount` is given (an
    /// admin reading a company notice). `language`: the reader's, for the wording of holiday
    /// notices (nil keeps the stored text).
    init(_ notice: Notice, audienceCount: Int?, language: String? = nil) {
        let (title, body) = notice.text(in: language)
        (id, kind, self.title, self.body, pinned) = (notice.id, notice.kind.rawValue, title, body, notice.pinned)
        (authorId, createdAt, editedAt) = (notice.authorID, notice.createdAt.rfc3339(), notice.editedAt?.rfc3339())
        read = notice.read
        readCount = audienceCount == nil ? nil : notice.readCount
        self.audienceCount = audienceCount
    }

    /// The command line's notice: the stored text and the read count, no reader's read state.
    init(listing notice: Notice) {
        let view = NoticeView(notice, audienceCount: nil)
        (id, kind, title, body, pinned) = (view.id, view.kind, view.title, view.body, view.pinned)
        (authorId, createdAt, editedAt) = (view.authorId, view.createdAt, view.editedAt)
        (read, readCount, audienceCount) = (nil, notice.readCount, nil)
    }

    /// Writes `authorId` and `editedAt` as null when unset, and leaves the other nil fields out.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(title, forKey: .title)
        try c.encode(body, forKey: .body)
        try c.encode(pinned, forKey: .pinned)
        try c.encode(authorId, forKey: .authorId)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(editedAt, forKey: .editedAt)
        try c.encodeIfPresent(read, forKey: .read)
        try c.encodeIfPresent(readCount, forKey: .readCount)
        try c.encodeIfPresent(audienceCount, forKey: .audienceCount)
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
    let nextBefore: Int64?

    enum CodingKeys: String, CodingKey { case items, unreadCount, unreadByKind, nextBefore }

    init(_ page: NoticeBoard.Page, items: [NoticeView]) {
        self.items = items
        unreadCount = page.unreadCount
        unreadByKind = UnreadByKind(company: page.unreadByKind[.company] ?? 0, holiday: page.unreadByKind[.holiday] ?? 0)
        nextBefore = page.nextBefore
    }

    /// Writes `nextBefore` as null on the last page.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(items, forKey: .items)
        try c.encode(unreadCount, forKey: .unreadCount)
        try c.encode(unreadByKind, forKey: .unreadByKind)
        try c.encode(nextBefore, forKey: .nextBefore)
    }
}

/// `{"items": [...]}`, the command line's list.
struct NoticeListView: Encodable, Sendable {
    let items: [NoticeView]
}
