import SGEMContracts
import SGEMCore
import SGEMSupport

/// One notice as stored, with what the reading user's view needs (read state, read count).
@dynamicMemberLookup
struct Notice: Sendable, Equatable {
    enum Kind: String, Sendable {
        case company, holiday
    }

    /// What a notice was posted with; the store adds the rest.
    struct Draft: Sendable, Equatable {
        let kind: Kind
        /// The one person who sees a personal notice; nil for a company notice.
        let recipientID: Int64?
        let title: String
        let body: String
        let pinned: Bool
        let authorID: Int64?
        let createdAt: Timestamp
        /// Active users other than the author when it was posted; nil when unknown (posted by a
        /// command-line verb that had no user directory) or for personal notices.
        let audienceBase: Int64?
        /// What a holiday notice is about, worded when read; nil for company notices and for
        /// personal notices written before notices.002 (they keep their stored text).
        var facts: HolidayNoticeFacts? = nil
    }

    let id: Int64
    let draft: Draft
    let editedAt: Timestamp?
    /// Whether the reader has read it (the author of a company notice always has).
    let read: Bool
    /// Readers other than the author.
    let readCount: Int

    subscript<T>(dynamicMember keyPath: KeyPath<Draft, T>) -> T { draft[keyPath: keyPath] }

    /// The title and body in `language`: a holiday notice's facts worded for the reader, else
    /// the text as stored.
    func text(in language: String?) -> (title: String, body: String) {
        if let facts = draft.facts, let language { return facts.text(in: language) }
        return (draft.title, draft.body)
    }

    /// The `notice.created` event's data: enough for a client to show a badge and fetch the rest.
    var eventData: JSONValue {
        ["notice": .object([
            ("id", .number(Double(id))), ("kind", .string(draft.kind.rawValue)), ("title", .string(draft.title)),
            ("pinned", .bool(draft.pinned)), ("createdAt", .string(draft.createdAt.rfc3339())),
            ("authorId", draft.authorID.map { .number(Double($0)) } ?? .null),
        ])]
    }

    /// What the events of a deleted notice carry instead: no title, nothing to show.
    static func deletedEventData(id: Int64, kind: Kind) -> JSONValue {
        ["notice": .object([("id", .number(Double(id))), ("kind", .string(kind.rawValue)), ("deleted", .bool(true))])]
    }

    /// Who receives the `notice.created` event.
    var audience: EventAudience { draft.recipientID.map(EventAudience.user) ?? .everyone }
}

/// The limits and checks on what a notice may hold, shared by the API, the CLI and the publisher.
enum NoticeRules {
    static let maxTitle = 200
    static let maxBody = 20_000

    /// The trimmed title, or the problem with it.
    static func title(_ raw: String) -> Result<String, NoticeProblem> {
        let title = raw.trimmingWhitespace()
        if title.isEmpty { return .failure(NoticeProblem("must not be empty")) }
        if title.count > maxTitle { return .failure(NoticeProblem("must be at most \(maxTitle) characters")) }
        if title.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return .failure(NoticeProblem("must be one line without control characters"))
        }
        return .success(title)
    }

    /// The body as sent, or the problem with it.
    static func body(_ raw: String) -> Result<String, NoticeProblem> {
        raw.count > maxBody ? .failure(NoticeProblem("must be at most \(maxBody) characters")) : .success(raw)
    }
}

/// Why a title or body was refused, in words for a 422 field or a CLI line.
struct NoticeProblem: Error, Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
