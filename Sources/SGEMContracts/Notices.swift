import SGEMCore
import SGEMStore
import SGEMSupport

/// A personal notice another module creates for one person (today: the holidays module's
/// decisions). Company notices are written by admins through the notices module's API.
public struct PersonalNotice: Sendable, Equatable {
    /// The notice kind; "holiday" is the one the contract names.
    public let kind: String
    /// The only person who sees the notice.
    public let recipientID: Int64
    public let title: String
    /// Plain text, stored as sent.
    public let body: String
    /// Who caused it (the deciding admin), if anyone.
    public let authorID: Int64?
    /// What happened, kept so the notice is worded in whoever reads it's language when it is
    /// read; `title` and `body` are then its wording in the recipient's language at the time.
    public let facts: HolidayNoticeFacts?

    public init(kind: String = "holiday", recipientID: Int64, title: String, body: String, authorID: Int64? = nil,
                facts: HolidayNoticeFacts? = nil) {
        self.kind = kind
        self.recipientID = recipientID
        self.title = title
        self.body = body
        self.authorID = authorID
        self.facts = facts
    }

    /// A holiday notice worded from `facts` in `language` (the recipient's).
    public init(recipientID: Int64, facts: HolidayNoticeFacts, language: String, authorID: Int64?) {
        let (title, body) = facts.text(in: language)
        self.init(kind: "holiday", recipientID: recipientID, title: title, body: body, authorID: authorID, facts: facts)
    }
}

/// Writes notices on behalf of other modules; implemented by the notices module.
///
/// The publisher writes inside the caller's write transaction (`db` is the connection of the
/// caller's `store.write` body), so a decision and its notice, and the notice's realtime event,
/// commit together or not at all.
public protocol NoticePublisher: Sendable {
    /// Inserts `notice` (and its `notice.created` event) in `db`; returns the notice id.
    func publish(_ notice: PersonalNotice, in db: Database) throws -> Int64
}
