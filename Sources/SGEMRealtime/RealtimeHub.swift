import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport
import Synchronization

/// Fans the journal's events out to the connected sockets whose user may see them.
///
/// One task (`run`) tails the journal: after each commit that appended events — here, or on
/// another instance on the same PostgreSQL database, whose doorbell rings — and on a short timer
/// (the safety net: the admin verbs ring nothing, a ring can be lost), it reads the events after
/// the last one it delivered, in batches, and hands each to its readers — encoded once per event. Control
/// events (`StreamControl`: deactivations, ended sessions, role changes), wherever they were
/// written, are acted on in the same order, so nothing recorded after a deactivation reaches the
/// account's sockets. A new socket collects live events in a bounded queue until `goLive` —
/// after its credentials are confirmed and its replay (`?since=`) is done — so the switch-over
/// has neither a gap nor a duplicate. A socket that outruns a bound (that
/// queue, or its outbound buffer while live) gets `{"type":"resync"}` and is closed, never a
/// silent gap. Frames are written outside the hub's lock. Who may see an event is decided here,
/// at delivery, with membership as it is now (`ChatAccess`) and the admin list as it is now.
final class RealtimeHub: LiveStreams, Sendable {
    /// Bounds of one socket's queue of live events held back while its replay runs.
    struct Limits: Sendable {
        var pendingEvents = 1024
        var pendingBytes = 1 << 20
        /// Events read from the journal at a time.
        var batch = 500
        /// The timer that catches writes nobody signalled (the admin verbs, another instance on
        /// SQLite or whose ring was lost): a deactivation there closes the sockets within this.
        /// An idle look is one indexed read.
        var poll: Duration = .milliseconds(250)
        /// How often every socket's credentials are checked again: a safety net for what no
        /// control event reports (a session that expired).
        var recheck: Duration = .seconds(30)
    }

    /// One connected socket.
    struct Subscriber: Sendable {
        let userID: Int64
        let sessionID: Int64?
        /// The upgrade request, to authenticate its credentials again (`recheck`).
        let request: Request
        let socket: WebSocket
        /// nil once live; otherwise the events that arrived during the replay, in order.
        var pending: [(id: Int64, message: PreparedMessage)]?
        var pendingBytes = 0
        /// The newest id the socket already has (its `since`, or what its replay sent): a live
        /// event up to it is not sent again, even when the hub reaches it only after the socket
        /// went live (a hub behind the journal, a client resuming with `since` ahead of it).
        var deliveredThrough: Int64 = 0

        /// Holds `message` back while the replay runs; false when that would pass the bounds.
        mutating func hold(_ id: Int64, _ message: PreparedMessage, within limits: Limits) -> Bool {
            guard let count = pending?.count, count < limits.pendingEvents,
                  pendingBytes + message.byteCount <= limits.pendingBytes else { return false }
            pending?.append((id, message))
            pendingBytes += message.byteCount
            return true
        }
    }

    struct State: Sendable {
        /// The id of the last event fanned out.
        var cursor: Int64
        var nextID = 0
        var subscribers: [Int: Subscriber] = [:]
        /// Each connected user's chats as `ChatAccess` last said; absent: to be (re)loaded.
        var chats: [Int64: Set<Int64>] = [:]
    }

    let journal: any EventJournal
    let services: ServiceRegistry
    let limits: Limits
    let metrics: RealtimeMetrics
    let logger: Logger
    private let state: Mutex<State>
    /// Wakes the tail: a commit, the timer, a new socket.
    private let wakeups: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// When the tail last looked at the journal with nobody connected (monotonic nanoseconds),
    /// and how long it waits before the next such look: half a poll period.
    private let idleLookedAt = Atomic<UInt64>(0)
    private let idleLookInterval: UInt64

    /// - Parameter cursor: the newest event id at boot; the hub delivers what comes after it.
    init(journal: any EventJournal, services: ServiceRegistry, cursor: Int64, limits: Limits, metrics: RealtimeMetrics, logger: Logger) {
        self.journal = journal
        self.services = services
        self.limits = limits
        self.metrics = metrics
        self.logger = logger
        state = Mutex(State(cursor: cursor))
        (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        idleLookInterval = (limits.poll / 2).wholeNanoseconds
    }

    var chatAccess: (any ChatAccess)? { services.resolve((any ChatAccess).self) }
    var directory: (any UserDirectory)? { services.resolve((any UserDirectory).self) }

    // MARK: Sockets

    /// Registers `socket` for live events after the hub's cursor, which it returns; they are held
    /// back until `goLive` (the caller confirms the credentials and replays up to the cursor first).
    func subscribe(_ user: AuthenticatedUser, request: Request, socket: WebSocket) -> (id: Int, cursor: Int64) {
        let (id, cursor) = state.withLock { s in
            s.nextID += 1
            // A user's first socket loads their chats afresh.
            if !s.subscribers.values.contains(where: { $0.userID == user.id }) { s.chats.removeValue(forKey: user.id) }
            s.subscribers[s.nextID] = Subscriber(userID: user.id, sessionID: user.sessionID, request: request, socket: socket,
                                                pending: [])
            return (s.nextID, s.cursor)
        }
        metrics.connected.add(1)
        // A hub nobody was connected to may be behind the journal: it catches up now rather than
        // at the next commit or tick (what it reaches before the socket's replay is done is held
        // back, and anything up to `since` is not sent twice).
        wake.yield()
        return (id, cursor)
    }

    /// Ends the replay of `id`: sends what was held back after `replayedThrough` (the ids up to
    /// it went out in the replay) at the socket's pace, then lets live events through. Events
    /// arriving meanwhile join the queue, which goes live only once empty: no gap, no duplicate,
    /// and no socket write under the hub's lock. False when the queue had overflowed or the
    /// socket closed meanwhile.
    func goLive(_ id: Int, replayedThrough: Int64, socket: WebSocket) async -> Bool {
        while true {
            let held: [(id: Int64, message: PreparedMessage)]? = state.withLock { s in
                guard var sub = s.subscribers[id], let pending = sub.pending else { return nil }
                sub.pending = pending.isEmpty ? nil : []
                sub.pendingBytes = 0
                sub.deliveredThrough = max(sub.deliveredThrough, replayedThrough)
                s.subscribers[id] = sub
                return pending
            }
            guard let held else { return false }
            if held.isEmpty { return true }
            for (eventID, message) in held where eventID > replayedThrough {
                guard await socket.waitUntilWritable(), socket.send(message) else { return false }
                metrics.delivered.increment()
            }
        }
    }

    /// The users among `userIDs` with a socket open here (the push module leaves them be).
    func streaming(among userIDs: [Int64]) -> Set<Int64> {
        let wanted = Set(userIDs)
        return state.withLock { s in Set(s.subscribers.values.lazy.map(\.userID).filter(wanted.contains)) }
    }

    /// Forgets socket `id` when its handler ends (the hub may have dropped it already).
    func unsubscribe(_ id: Int) {
        state.withLock { s in
            if let gone = s.subscribers.removeValue(forKey: id), !s.subscribers.values.contains(where: { $0.userID == gone.userID }) {
                s.chats.removeValue(forKey: gone.userID)
            }
        }
        metrics.connected.add(-1)
    }

    /// Closes the sockets of `userID` whose session `matches`, at once; they get nothing more.
    func close(userID: Int64, code: UInt16, reason: String, where matches: (Int64?) -> Bool) {
        let sockets = state.withLock { s in
            let ended = s.subscribers.filter { $0.value.userID == userID && matches($0.value.sessionID) }
            for id in ended.keys { s.subscribers.removeValue(forKey: id) }
            return ended.values.map(\.socket)
        }
        for socket in sockets { socket.close(code: code, reason: reason) }
    }

    /// Acts on a control event: closes the sockets it ends. Returns whether it changes who the
    /// admins are (the caller reads them again).
    func apply(_ control: StreamControl) -> Bool {
        switch control {
        case let .accountDeactivated(user):
            close(userID: user, code: 1008, reason: "account deactivated") { _ in true }
            return true
        case let .sessionsRevoked(user, scope):
            close(userID: user, code: 1008, reason: "session ended") { scope.contains($0) }
            return false
        case .roleChanged:
            return true
        }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Authenticates every socket's upgrade request again and closes (1008) those whose session
    /// ended or whose account is no longer active; a store that does not answer skips the round.
    func recheckCredentials() async {
        guard let authenticator = services.resolve((any SessionAuthenticator).self) else { return }
        let all = state.withLock { s in s.subscribers.values.map { ($0.request, $0.socket) } }
        for (request, socket) in all where !socket.isClosed {
            do {
                _ = try await authenticator.authenticate(request, allowQueryToken: true)
            } catch let error as APIError where error.status == 401 || error.status == 403 {
                socket.close(code: 1008, reason: "session ended")
            } catch {
                return
            }
        }
    }

    // MARK: The tail

    /// Tails the journal until cancelled.
    func run() async {
        let (wakeups, wake) = (self.wakeups, self.wake)
        let commits = journal.wakeOnCommit(wake)
        defer { commits.cancel() }
        let poll = limits.poll
        let feeders = [
            Task {
                while (try? await Task.sleep(for: poll)) != nil { wake.yield() }
            },
            Task { [limits] in
                while (try? await Task.sleep(for: limits.recheck)) != nil { await self.recheckCredentials() }
            },
        ]
        defer { for f in feeders { f.cancel() } }
        wake.yield()
        for await _ in wakeups {
            if Task.isCancelled { return }
            do {
                try await drain()
            } catch is CancellationError {
                return
            } catch {
                logger.error("realtime tail failed; retrying on the next wake-up", ["error": String(describing: error)])
            }
        }
    }

    /// Delivers every event after the cursor, batch by batch.
    func drain() async throws {
        while true {
            let (cursor, idle) = state.withLock { ($0.cursor, $0.subscribers.isEmpty) }
            if idle {
                // Nobody is connected: move past what was recorded without decoding it, at most
                // every half poll period — with several instances every batch of every instance
                // rings, and idle hubs looking after each ring made most of the journal's scans.
                // A socket that subscribes meanwhile replays from its own `since` and wakes the
                // hub, which then catches up (see `subscribe`).
                let now = MonotonicClock.nanoseconds()
                let last = idleLookedAt.load(ordering: .relaxed)
                if last != 0, now &- last < idleLookInterval { return }
                idleLookedAt.store(now, ordering: .relaxed)
                let skipped = try await journal.events(after: cursor, limit: limits.batch, types: [], audiences: [])
                let moved = state.withLock { s -> Bool in
                    guard s.subscribers.isEmpty, s.cursor == cursor else { return false }
                    s.cursor = skipped.scannedTo
                    s.chats.removeAll()
                    return true
                }
                if !moved { continue }
                // A short look was the end of the journal: no second look to learn that.
                if !journalLookMayHaveMore(after: cursor, scannedTo: skipped.scannedTo, limit: limits.batch) { return }
                continue
            }
            let batch = try await journal.events(after: cursor, limit: limits.batch)
            guard !batch.isEmpty else { return }
            var admins: Set<Int64>?
            for recorded in batch {
                try Task.checkCancellation()
                if recorded.event.audience == .hubs {
                    if let control = StreamControl(recorded.event), apply(control) { admins = nil }
                    state.withLock { $0.cursor = recorded.id }
                    continue
                }
                if recorded.event.audience.needsAdmins, admins == nil {
                    admins = Set(try await directory?.activeAdminIDs() ?? [])
                }
                try await deliver(recorded, admins: admins ?? [])
            }
            // A short batch was the end of the journal: no second read to learn that.
            if batch.count < limits.batch { return }
        }
    }

    /// Hands one event to every socket whose user may see it now, then moves the cursor past it.
    /// The frame is encoded once; who gets it is decided under the hub's lock, which takes no
    /// other lock and makes no call, and the sockets are written after it is released (this one
    /// task is the only writer of live frames, so each socket still gets them in order).
    func deliver(_ recorded: RecordedEvent, admins: Set<Int64>) async throws {
        let event = recorded.event
        invalidateChats(for: recorded)
        if event.audience.needsChats { try await loadChats() }
        let message = PreparedMessage(text: RealtimeHub.frame(recorded))
        let (live, behind) = state.withLock { s -> (live: [WebSocket], behind: [WebSocket]) in
            defer { s.cursor = recorded.id }
            var live: [WebSocket] = []
            var heldBack: [Int] = []
            for (id, sub) in s.subscribers {
                let chats = s.chats[sub.userID] ?? []
                guard RealtimeHub.may(sub.userID, see: event.audience, isAdmin: admins.contains(sub.userID), chats: chats) else { continue }
                // A closed socket answers `.closed` below; its handler unsubscribes it.
                if sub.pending == nil {
                    if recorded.id > sub.deliveredThrough { live.append(sub.socket) }
                } else {
                    heldBack.append(id)
                }
            }
            // Held back in place, after the loop: no copy of a queue per event.
            var behind: [WebSocket] = []
            for id in heldBack where s.subscribers[id]?.hold(recorded.id, message, within: limits) == false {
                if let gone = s.subscribers.removeValue(forKey: id) { behind.append(gone.socket) }
            }
            return (live, behind)
        }
        var delivered = 0
        for socket in live {
            switch socket.send(message, orCloseWith: RealtimeHub.resync, code: 1013, reason: RealtimeHub.tooSlow) {
            case .sent: delivered += 1
            case .tooSlow: metrics.slowClosed.increment()
            case .closed: break
            }
        }
        if delivered > 0 { metrics.delivered.increment(by: Double(delivered)) }
        metrics.lag.observe(Double(max(0, Timestamp.now().milliseconds - recorded.at.milliseconds)) / 1000)
        for socket in behind {
            // Its replay was outrun by the live stream: it cannot be resumed from here.
            metrics.slowClosed.increment()
            socket.close(after: RealtimeHub.resync, code: 1013, reason: RealtimeHub.tooSlow)
        }
    }

    /// Sent before closing a socket that fell too far behind to be caught up: the client reloads
    /// what it shows (as after a `since` beyond the retention window) and connects again.
    static let resync = PreparedMessage(text: #"{"type":"resync"}"#)
    static let tooSlow = "too far behind; resync"

    /// Membership changes make the affected users' chat sets stale; they are reloaded from
    /// `ChatAccess` before the event itself is judged, so a new member gets `member.added`.
    private func invalidateChats(for recorded: RecordedEvent) {
        guard RealtimeHub.membershipEvents.contains(recorded.event.type) else { return }
        var users: [Int64] = []
        if let id = recorded.event.data["userId"]?.numberValue { users.append(Int64(id)) }
        switch recorded.event.audience {
        case let .user(id): users.append(id)
        case let .users(ids): users += ids
        case let .userAndAdmins(id): users.append(id)
        case .chat, .chatMembers, .everyone, .admins, .hubs:
            state.withLock { $0.chats.removeAll() }
            return
        }
        state.withLock { s in for u in users { s.chats.removeValue(forKey: u) } }
    }

    /// Loads the chat sets of connected users that have none. A user whose set cannot be read
    /// gets none of this event (fail closed) and is asked again at the next chat event, so one
    /// failing lookup never holds up everyone else's stream.
    private func loadChats() async throws {
        let missing = state.withLock { s in Set(s.subscribers.values.map(\.userID)).filter { s.chats[$0] == nil } }
        guard !missing.isEmpty else { return }
        guard let access = chatAccess else { return }
        for user in missing {
            try Task.checkCancellation()
            let chats: Set<Int64>
            do {
                chats = try await access.chatIDs(of: user)
            } catch {
                logger.error("chat membership lookup failed", ["user.id": String(user), "error": String(describing: error)])
                continue
            }
            state.withLock { s in
                if s.subscribers.values.contains(where: { $0.userID == user }) { s.chats[user] = chats }
            }
        }
    }

    static let membershipEvents: Set<String> = ["member.added", "member.removed", "chat.created", "chat.deleted"]

    /// Whether `user` may see an event for `audience` now.
    static func may(_ user: Int64, see audience: EventAudience, isAdmin: Bool, chats: Set<Int64>) -> Bool {
        switch audience {
        case .everyone: true
        case let .user(id): id == user
        case .admins: isAdmin
        case let .chat(id): chats.contains(id)
        case let .users(ids): ids.contains(user)
        case let .chatMembers(chat, ids): chats.contains(chat) && ids.contains(user)
        case let .userAndAdmins(id): id == user || isAdmin
        case .hubs: false
        }
    }

    /// `{"id":…,"type":…,"data":…}`, the frame's text.
    static func frame(_ recorded: RecordedEvent) -> String {
        JSONValue.object([("id", .number(Double(recorded.id))), ("type", .string(recorded.event.type)),
                          ("data", recorded.event.data)]).serialized()
    }
}

/// The realtime module's metrics.
struct RealtimeMetrics: Sendable {
    let connected: Gauge
    let delivered: Counter
    let slowClosed: Counter
    /// From an event's recording to its frames handed to the sockets (the hub's share of latency).
    let lag: Histogram

    init(_ registry: MetricsRegistry) {
        connected = registry.gauge("sgem_realtime_connected_sockets", help: "Realtime WebSockets connected now.")
        delivered = registry.counter("sgem_realtime_events_delivered_total", help: "Event frames handed to realtime sockets.")
        slowClosed = registry.counter("sgem_realtime_slow_closed_total", help: "Realtime sockets closed because they could not keep up.")
        lag = registry.histogram("sgem_realtime_delivery_lag_seconds",
                                 help: "Time from an event's recording to its frames handed to the live sockets.")
    }
}
