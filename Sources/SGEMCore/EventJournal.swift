import SGEMStore
import SGEMSupport
import Synchronization

/// Who may receive a realtime event. Checked again at delivery and at replay against the
/// reader's rights as they are then; this is only the first filter.
public enum EventAudience: Sendable, Equatable {
    /// Every active user (a company notice).
    case everyone
    /// One user (their holiday notice or request).
    case user(Int64)
    /// Every active admin.
    case admins
    /// The members of one chat, as they are at delivery (and at replay).
    case chat(Int64)
    /// Exactly these users (a chat's members when it was deleted; the remaining members and the
    /// removed one for `member.removed`), each still checked to be an active account.
    case users([Int64])
    /// These users while they are members of this chat (a message's translation, sent only to
    /// the readers who asked for that language): checked against membership at delivery and replay.
    case chatMembers(chat: Int64, users: [Int64])
    /// One user and whoever is an active admin at delivery (and at replay): a holiday request's
    /// changes, judged by the reader's current role.
    case userAndAdmins(Int64)
    /// No client: a `StreamControl` event for the realtime hubs themselves (a deactivation, an
    /// ended session), never sent as a frame, live or in replay.
    case hubs

    /// The audiences' kinds, for readers that filter on them.
    public enum Kind: String, Sendable, CaseIterable {
        case everyone, user, admins, chat, users, chatMembers, userAndAdmins, hubs
    }

    public var kind: Kind {
        switch self {
        case .everyone: .everyone
        case .user: .user
        case .admins: .admins
        case .chat: .chat
        case .users: .users
        case .chatMembers: .chatMembers
        case .userAndAdmins: .userAndAdmins
        case .hubs: .hubs
        }
    }

    /// Whether judging this audience needs the reader's current chats.
    public var needsChats: Bool {
        switch self {
        case .chat, .chatMembers: true
        default: false
        }
    }

    /// Whether judging this audience needs the current admins.
    public var needsAdmins: Bool {
        switch self {
        case .admins, .userAndAdmins: true
        default: false
        }
    }
}

/// Who may see a chat's events; implemented by the messaging module, consulted by the realtime
/// hub at delivery and at replay, so a removed member stops receiving a chat at once.
public protocol ChatAccess: Sendable {
    /// The ids of the chats `userID` is a member of now.
    func chatIDs(of userID: Int64) async throws -> Set<Int64>
}

extension EventJournal {
    public func record(_ event: RealtimeEvent, in db: Database) throws { _ = try append(event, in: db) }

    /// Asks the database, then appends: a round trip more than a journal that puts the condition
    /// in its insert.
    public func record(_ event: RealtimeEvent, in db: Database, onlyIf condition: SQL) throws {
        guard try db.fetchOne("SELECT CASE WHEN \(condition) THEN 1 ELSE 0 END AS holds")?.int("holds") == 1 else { return }
        _ = try append(event, in: db)
    }

    /// Of the next `limit` events, those of `types` and `audiences` (every chat's).
    public func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>) async throws
        -> (events: [RecordedEvent], scannedTo: Int64) {
        try await events(after: after, limit: limit, types: types, audiences: audiences, chats: nil)
    }

    public func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>, chats: Set<Int64>?) async throws
        -> (events: [RecordedEvent], scannedTo: Int64) {
        let all = try await events(after: after, limit: limit)
        let wanted = all.filter { recorded in
            guard types.contains(recorded.event.type), audiences.contains(recorded.event.audience.kind) else { return false }
            if let chats, case .chat(let chat) = recorded.event.audience { return chats.contains(chat) }
            return true
        }
        return (wanted, all.last?.id ?? after)
    }
}

/// Whether a look at up to `limit` events after `after`, which reached `scannedTo`, may have left
/// events behind. Ids only grow and are never reused, so a span of ids narrower than `limit`
/// held fewer than `limit` events: the look reached the journal's end as it stood then, and a
/// reader can wait for its next wake-up instead of looking again to find nothing. Events
/// committed after the look wake the reader again (`EventJournal.wakeOnCommit`).
public func journalLookMayHaveMore(after: Int64, scannedTo: Int64, limit: Int) -> Bool {
    scannedTo - after >= Int64(limit)
}

/// One event of the realtime stream (`message.created`, `notice.created`, …) as a module records it.
public struct RealtimeEvent: Sendable, Equatable {
    public let type: String
    public let audience: EventAudience
    /// The frame's `data` object.
    public let data: JSONValue
    /// What the event reports on (`message:42`, `notice:7`), so that a later edit or deletion can
    /// rewrite it (`EventJournal.rewrite`); nil for events nothing rewrites.
    public let subject: String?

    /// `data` as JSON text when it was serialised ahead (`prepared()`), so the journal's insert —
    /// on the store's one writer thread — does not have to.
    public let serializedData: String?

    public init(type: String, audience: EventAudience, data: JSONValue, subject: String? = nil) {
        self.type = type
        self.audience = audience
        self.data = data
        self.subject = subject
        self.serializedData = nil
    }

    private init(type: String, audience: EventAudience, data: JSONValue, subject: String?, serializedData: String) {
        self.type = type
        self.audience = audience
        self.data = data
        self.subject = subject
        self.serializedData = serializedData
    }

    /// The same event with its data serialised now, on the caller's thread.
    public func prepared() -> RealtimeEvent {
        RealtimeEvent(type: type, audience: audience, data: data, subject: subject, serializedData: serializedData ?? data.serialized())
    }

    public static func == (a: RealtimeEvent, b: RealtimeEvent) -> Bool {
        a.type == b.type && a.audience == b.audience && a.data == b.data && a.subject == b.subject
    }

    /// The subject of a message's events.
    public static func subject(message id: Int64) -> String { "message:\(id)" }
    /// The subject of a notice's events.
    public static func subject(notice id: Int64) -> String { "notice:\(id)" }
}

/// A recorded event: its id is its position in the stream.
public struct RecordedEvent: Sendable, Equatable {
    public let id: Int64
    public let event: RealtimeEvent
    public let at: Timestamp

    public init(id: Int64, event: RealtimeEvent, at: Timestamp) {
        self.id = id
        self.event = event
        self.at = at
    }
}

/// The durable realtime stream: events are appended inside the write transaction of the change
/// they report, so an acknowledged change always has its event, across restarts too. Published
/// by the system module; the realtime hub tails it.
///
/// The tail's seam: `append` asks the store to wake the tail once the write has committed
/// (`Database.afterCommit`); the tail waits for a wake-up (`wakeOnCommit`, or `commits()`) and
/// then reads `events(after:limit:)` from the last id it delivered. `didCommit()` wakes it by hand (a commit the journal did not
/// see). On PostgreSQL, another instance's commits wake it too (the store's doorbell), and so does
/// the doorbell listening again after a lost connection. Another process's commit that rang no
/// doorbell (a command-line verb) is seen at the tail's next periodic look, never lost: the table
/// is the truth, the signal only a wake-up.
public protocol EventJournal: Sendable {
    /// Appends `event` in the caller's write transaction; returns its id. Ids only grow and are
    /// never reused, even after retention removes old events.
    func append(_ event: RealtimeEvent, in db: Database) throws -> Int64
    /// Appends `event` like `append` when the caller has no use for its id: on PostgreSQL the
    /// insert then goes with the write's next statement instead of a round trip of its own.
    func record(_ event: RealtimeEvent, in db: Database) throws
    /// Records `event` like `record`, but only if `condition` (an SQL boolean, such as `EXISTS
    /// (…)` over the row the event is about) holds when the insert runs: for a write whose row may
    /// not have been stored (`Database.runCounting`), whose event must then not be either.
    func record(_ event: RealtimeEvent, in db: Database, onlyIf condition: SQL) throws
    /// Replaces the data of every event recorded so far about `subject` with `data`, in the
    /// caller's write transaction: an edit or a deletion leaves no earlier text for replay to
    /// send (ids, types and audiences stay, so replay is still one sequential read). Returns how
    /// many events changed.
    @discardableResult
    func rewrite(subject: String, to data: JSONValue, in db: Database) throws -> Int
    /// Events with id greater than `after`, oldest first, at most `limit`.
    func events(after: Int64, limit: Int) async throws -> [RecordedEvent]
    /// Of the next `limit` events after `after`, those whose type is in `types` and audience of
    /// one of the kinds in `audiences` — and, when `chats` is given, a chat's events only for the
    /// chats in it — oldest first, and the id of the last event looked at (`after` when there
    /// were none): a reader that needs a few kinds of events (the translation worker) moves its
    /// cursor there without reading or decoding the rest.
    func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>, chats: Set<Int64>?) async throws
        -> (events: [RecordedEvent], scannedTo: Int64)
    /// The id of the newest recorded event; 0 when none was ever recorded.
    func lastEventID() async throws -> Int64
    /// The newest id that retention removed (0 when none was): a reader whose cursor is below
    /// it missed events it can no longer get and must resynchronise.
    func horizon() async throws -> Int64
    /// Removes the events recorded before `time` (retention); returns how many.
    @discardableResult
    func removeEvents(recordedBefore time: Timestamp) async throws -> Int
    /// Tells the tail that a write which appended events has committed.
    func didCommit()
    /// Wake-ups after `didCommit()` and after another instance's commits, coalesced: several
    /// commits while the reader is busy come as one element. Each call returns a new stream; it
    /// ends when its task is cancelled.
    func commits() -> AsyncStream<Void>
    /// The same wake-ups as `commits()`, yielded straight into `continuation` (a worker's own
    /// wake-up stream, which its timers feed too) with no task of their own in between, until
    /// the returned registration is cancelled: with several instances every commit of every
    /// instance wakes each tail, so each hop counts.
    func wakeOnCommit(_ continuation: AsyncStream<Void>.Continuation) -> CommitWakeups
}

extension EventJournal {
    /// Forwards `commits()` into `continuation` through a task of its own.
    public func wakeOnCommit(_ continuation: AsyncStream<Void>.Continuation) -> CommitWakeups {
        let commits = commits()
        let forward = Task { for await _ in commits { continuation.yield() } }
        return CommitWakeups { forward.cancel() }
    }
}

/// Commit wake-ups for a worker that only one instance runs at a time (the push sender, the chat
/// translator): registered while this instance leads, cancelled while it follows, so that every
/// ring of every other instance does not wake a worker that has nothing to do.
public final class CommitWakeupsWhileLeading: Sendable {
    private let journal: any EventJournal
    private let wake: AsyncStream<Void>.Continuation
    private let registration = Mutex<(current: CommitWakeups?, stopped: Bool)>((nil, false))

    public init(journal: any EventJournal, wake: AsyncStream<Void>.Continuation) {
        self.journal = journal
        self.wake = wake
    }

    /// Registers when `leading` and none is, cancels when not and one is; nothing after `stop()`.
    public func follow(leading: Bool) {
        let ended = registration.withLock { r -> CommitWakeups? in
            if leading, !r.stopped {
                if r.current == nil { r.current = journal.wakeOnCommit(wake) }
                return nil
            }
            defer { r.current = nil }
            return r.current
        }
        ended?.cancel()
    }

    /// Cancels the registration for good (the worker ends; a leadership poll may still report).
    public func stop() {
        registration.withLock { $0.stopped = true }
        follow(leading: false)
    }

    /// Whether commits wake the worker now (for tests).
    public var isRegistered: Bool { registration.withLock { $0.current != nil } }
}

/// The shortest time between two looks of a journal reader whose work can wait a little (the push
/// sender, the chat translator): with several instances every batch of every instance rings,
/// and the commits that come meanwhile are looked at together, in one read.
public struct LookSpacing: Sendable {
    public let interval: Duration
    private var last: ContinuousClock.Instant?

    public init(_ interval: Duration) { self.interval = interval }

    /// Returns once `interval` has passed since the previous look (at once for the first), and
    /// counts this one from then. Throws `CancellationError` when the task is cancelled meanwhile.
    public mutating func wait() async throws {
        if let last {
            let due = last + interval
            if ContinuousClock.now < due { try await Task.sleep(until: due, clock: .continuous) }
        }
        last = ContinuousClock.now
    }
}

/// A registration for commit wake-ups (`EventJournal.wakeOnCommit`); `cancel()` ends it, once.
public final class CommitWakeups: Sendable {
    private let end: Mutex<(@Sendable () -> Void)?>

    public init(cancel: @escaping @Sendable () -> Void) { end = Mutex(cancel) }

    public func cancel() {
        let action = end.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        action?()
    }
}
