import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// The notice board's operations, in domain words: what the controllers, the admin verbs and the
/// publisher call. Each write and the `notice.created` event it records share one transaction.
struct NoticeBoard: Sendable {
    let store: Store
    let journal: any EventJournal
    /// Counts the audience of company notices; nil in admin verbs run without one.
    let directory: (any UserDirectory)?
    /// Where posting, editing and deleting a company notice are recorded; nil only in tests
    /// that boot the board without accounts.
    var audit: (any AuditTrail)? = nil

    /// The module's SQL, for what stands alone in one transaction.
    var repository: NoticesRepository { NoticesRepository(store: store) }

    /// The audit event names this module writes.
    static let auditEvents = ["notice.posted", "notice.edited", "notice.deleted"]

    /// Who changes the board, for the audit log: an admin over the API, or the command line.
    typealias Actor = AuditActor

    /// One page of the board as `viewer` sees it.
    struct Page: Sendable {
        let items: [Notice]
        let unreadCount: Int
        /// Unread notices per kind, whatever the page's filter.
        let unreadByKind: [Notice.Kind: Int]
        /// The `before` of the next page, when there is one.
        let nextBefore: Int64?
    }

    /// Pinned notices first (all of them, on the first page only), then the others newest first,
    /// `limit` at a time; `before` pages through those others by id.
    /// `kind` keeps company news or personal (holiday) notices only.
    func page(viewer: Int64, before: Int64?, limit: Int, kind: Notice.Kind? = nil) async throws -> Page {
        try await store.read { db in
            let pinned = before == nil ? try NoticesRepository.pinned(viewer: viewer, kind: kind, in: db) : []
            var rest = try NoticesRepository.unpinned(viewer: viewer, before: before, limit: limit + 1, kind: kind, in: db)
            let more = rest.count > limit
            if more { rest.removeLast() }
            let unread = try NoticesRepository.unreadByKind(viewer: viewer, in: db)
            return Page(items: pinned + rest, unreadCount: unread.values.reduce(0, +), unreadByKind: unread,
                        nextBefore: more ? rest.last?.id : nil)
        }
    }

    /// The language `viewer` reads in, for wording holiday notices; nil when unknown (the
    /// stored text is then shown).
    func language(of viewer: Int64) async throws -> String? {
        try await directory?.user(id: viewer)?.language
    }

    /// A notice `viewer` may see; `noticeNotFound` otherwise (someone else's personal notice included).
    func notice(_ id: Int64, viewer: Int64) async throws -> Notice {
        guard let notice = try await repository.notice(id, viewer: viewer) else {
            throw NoticesError.noticeNotFound
        }
        return notice
    }

    /// Marks a notice read for `viewer`; `noticeNotFound` when they may not see it.
    func markRead(_ id: Int64, viewer: Int64) async throws {
        let now = Timestamp.now()
        guard try await repository.markRead(id, viewer: viewer, at: now) else {
            throw NoticesError.noticeNotFound
        }
    }

    /// Marks every notice `viewer` may see (of `kind` when given) read, and tells the viewer's
    /// other tabs with a `notices.read` event in the same transaction.
    func markAllRead(viewer: Int64, kind: Notice.Kind? = nil) async throws {
        let now = Timestamp.now()
        let journal = self.journal
        _ = try await store.write { db -> Int in
            let marked = try NoticesRepository.markAllRead(viewer: viewer, kind: kind, at: now, in: db)
            if marked > 0 {
                _ = try journal.append(RealtimeEvent(type: "notices.read", audience: .user(viewer),
                                                     data: ["kind": kind.map { .string($0.rawValue) } ?? .null]), in: db)
            }
            return marked
        }
    }

    /// Posts a company notice and records its `notice.created` event, in one transaction.
    /// `author` nil is the operator (an admin verb).
    func post(title: String, body: String, pinned: Bool, author: Int64?, ip: String? = nil) async throws -> Notice {
        let base = try await audienceBase(author: author)
        let new = Notice.Draft(kind: .company, recipientID: nil, title: title, body: body, pinned: pinned,
                                              authorID: author, createdAt: .now(), audienceBase: base)
        let (journal, audit) = (self.journal, self.audit)
        let actor = Actor(userID: author, ip: ip)
        let notice = try await store.write { db in
            let notice = try NoticeBoard.insert(new, journal: journal, in: db)
            try audit?.record(actor.record("notice.posted", "#\(notice.id) \"\(title)\"\(pinned ? " (pinned)" : "")"), in: db)
            return notice
        }
        return notice
    }

    /// Inserts a notice and appends its event in `db`'s transaction: the one path every new
    /// notice takes, company or personal.
    static func insert(_ new: Notice.Draft, journal: any EventJournal, in db: Database) throws -> Notice {
        let notice = try NoticesRepository.insert(new, in: db)
        _ = try journal.append(RealtimeEvent(type: "notice.created", audience: notice.audience, data: notice.eventData,
                                             subject: RealtimeEvent.subject(notice: notice.id)), in: db)
        return notice
    }

    /// Edits a company notice; `editedAt` moves only when the title or body really changes. Its
    /// `notice.created` event then carries the new title, so replay never shows the old one.
    /// `noticeNotFound` for a personal notice or none.
    func edit(_ id: Int64, title: String?, body: String?, pinned: Bool?, viewer: Int64, ip: String? = nil) async throws -> Notice {
        let now = Timestamp.now()
        let (journal, audit) = (self.journal, self.audit)
        let actor = Actor(userID: viewer, ip: ip)
        let edited = try await store.write { db -> Notice? in
            guard let current = try NoticesRepository.companyNotice(id, viewer: viewer, in: db) else { return nil }
            let titleChanged = title.map { $0 != current.title } ?? false
            let bodyChanged = body.map { $0 != current.body } ?? false
            let textChanged = titleChanged || bodyChanged
            _ = try NoticesRepository.update(id, title: title, body: body, pinned: pinned, editedAt: textChanged ? now : nil, in: db)
            guard let edited = try NoticesRepository.companyNotice(id, viewer: viewer, in: db) else { return nil }
            try journal.rewrite(subject: RealtimeEvent.subject(notice: id), to: edited.eventData, in: db)
            var what: [String] = []
            if titleChanged { what.append("title \"\(current.title)\" → \"\(edited.title)\"") }
            if bodyChanged { what.append("text") }
            if let pinned, pinned != current.pinned { what.append(pinned ? "pinned" : "unpinned") }
            if !what.isEmpty {
                try audit?.record(actor.record("notice.edited", "#\(id) \"\(edited.title)\": " + what.joined(separator: ", ")), in: db)
            }
            return edited
        }
        guard let edited else { throw NoticesError.noticeNotFound }
        return edited
    }

    /// Deletes a company notice with its read marks, and its title from the events that
    /// announced it; `noticeNotFound` for a personal notice or none.
    func delete(_ id: Int64, by actor: Actor = .commandLine) async throws {
        let (journal, audit) = (self.journal, self.audit)
        let deleted = try await store.write { db in
            guard let current = try NoticesRepository.companyNotice(id, viewer: 0, in: db),
                  try NoticesRepository.deleteCompanyNotice(id, in: db) else { return false }
            try audit?.record(actor.record("notice.deleted", "#\(id) \"\(current.title)\""), in: db)
            try journal.rewrite(subject: RealtimeEvent.subject(notice: id), to: Notice.deletedEventData(id: id, kind: .company), in: db)
            return true
        }
        guard deleted else { throw NoticesError.noticeNotFound }
    }

    /// Company notices, pinned first, then newest, as an admin verb sees them.
    func companyNotices(limit: Int) async throws -> [Notice] {
        try await repository.companyNotices(limit: limit)
    }

    /// Who a company notice is for: active users now, the author (who is one of them) aside.
    /// Nil without a user directory (admin verbs): the count is then taken when it is shown.
    func audienceBase(author: Int64?) async throws -> Int64? {
        guard let directory else { return nil }
        let active = try await directory.activeUserCount()
        var authorCounted = false
        if let author { authorCounted = try await directory.user(id: author)?.active ?? false }
        return Int64(max(0, active - (authorCounted ? 1 : 0)))
    }

    /// `notices` as the API shows them; admins also get the read and audience counts of company
    /// notices: the base plus everyone who joined since it was posted (a notice posted without a
    /// base, by an admin verb, counts the active users now).
    func views(_ notices: [Notice], admin: Bool, language: String? = nil) async throws -> [NoticeView] {
        guard admin, let directory else { return notices.map { NoticeView($0, audienceCount: nil, language: language) } }
        let counted = notices.filter { $0.kind == .company && $0.audienceBase != nil }
        let joined = try await NoticeBoard.joinedSince(Set(counted.map(\.createdAt)).sorted(), directory)
        var activeNow: Int?
        var out: [NoticeView] = []
        for notice in notices {
            var audience: Int?
            if notice.kind == .company {
                if let base = notice.audienceBase {
                    audience = Int(base) + (joined[notice.createdAt] ?? 0)
                } else {
                    if activeNow == nil { activeNow = try await directory.activeUserCount() }
                    audience = activeNow
                }
            }
            out.append(NoticeView(notice, audienceCount: audience, language: language))
        }
        return out
    }

    /// Users created after each of `times` (ascending). The count only falls as time goes on, so
    /// where it is the same at both ends of a stretch it is the same throughout: a page costs a
    /// few directory reads per user who joined in its span, not one per notice.
    static func joinedSince(_ times: [Timestamp], _ directory: any UserDirectory) async throws -> [Timestamp: Int] {
        guard let first = times.first, let last = times.last else { return [:] }
        var counts: [Int] = Array(repeating: 0, count: times.count)
        counts[0] = try await directory.usersCreated(after: first)
        counts[times.count - 1] = try await directory.usersCreated(after: last)
        var stretches = [(0, times.count - 1)]
        while let (lo, hi) = stretches.popLast() {
            guard hi - lo > 1 else { continue }
            if counts[lo] == counts[hi] {
                for k in (lo + 1)..<hi { counts[k] = counts[lo] }
                continue
            }
            let mid = (lo + hi) / 2
            counts[mid] = try await directory.usersCreated(after: times[mid])
            stretches.append((lo, mid))
            stretches.append((mid, hi))
        }
        return Dictionary(uniqueKeysWithValues: zip(times, counts))
    }
}

/// `NoticePublisher` for other modules (holiday decisions): the notice and its event are written
/// in the caller's transaction, so they commit or roll back with the decision.
struct BoardPublisher: NoticePublisher {
    let journal: any EventJournal

    func publish(_ notice: PersonalNotice, in db: Database) throws -> Int64 {
        guard let kind = Notice.Kind(rawValue: notice.kind), kind != .company else {
            throw NoticeError.invalid("a personal notice's kind must be 'holiday', not '\(notice.kind)'")
        }
        let title: String
        switch NoticeRules.title(notice.title) {
        case let .success(t): title = t
        case let .failure(p): throw NoticeError.invalid("the notice's title \(p.message)")
        }
        if case let .failure(p) = NoticeRules.body(notice.body) { throw NoticeError.invalid("the notice's body \(p.message)") }
        let new = Notice.Draft(kind: kind, recipientID: notice.recipientID, title: title, body: notice.body, pinned: false,
                               authorID: notice.authorID, createdAt: .now(), audienceBase: nil, facts: notice.facts)
        return try NoticeBoard.insert(new, journal: journal, in: db).id
    }
}

/// A notice another module asked for that cannot be written (a programming error there), or a
/// server assembled without the event journal.
struct NoticeError: Error, Sendable, CustomStringConvertible {
    struct Code: Hashable, Sendable {
        let rawValue: String
        static let invalidNotice = Code(rawValue: "invalid_notice")
    }
    let code: Code
    let message: String
    var description: String { message }

    static func invalid(_ message: String) -> NoticeError { NoticeError(code: .invalidNotice, message: message) }
}
