import SGEMCore
import SGEMStore
import SGEMSupport
import Synchronization

/// `EventJournal` over the `system_events` table, published by the system module at boot (and
/// to admin verbs, so an event a verb records is the same as the server's).
///
/// Several instances on one PostgreSQL database ring each other's doorbell: after a commit that
/// appended events, the writer rings with the newest id (`Database.ringAfterCommit` — admin verbs
/// too, so the servers see a verb's change at once rather than at their next poll), and the
/// others' rings (and the doorbell's `.listening`, after a lost connection) wake this instance's
/// tails like its own commits do.
final class StoredEventJournal: EventJournal {
    /// Most events one `events(after:limit:)` returns, whatever the caller asks.
    static let maxBatch = 1000
    /// The doorbell's channel (PostgreSQL `LISTEN`/`NOTIFY`).
    static let channel = "sgem_events"

    private let store: @Sendable () async throws -> Store
    private let signal = CommitSignal()
    /// Whether the doorbell's rings are forwarded to `signal` yet (`forwardRings`).
    private let ringsForwarded = Mutex(false)
    /// The doorbell the tails listen to; nil where no tail runs (the admin verbs).
    private let doorbell: Doorbell?

    /// - Parameters:
    ///   - store: the store to read from; admin verbs open it only when one is needed.
    ///   - doorbell: the doorbell shared with the other instances (`store.doorbell(channel: channel)`).
    init(store: @escaping @Sendable () async throws -> Store, doorbell: Doorbell? = nil) {
        self.store = store
        self.doorbell = doorbell
    }

    func append(_ event: RealtimeEvent, in db: Database) throws -> Int64 {
        let id = try JournalRepository.insert(event, at: .now(), in: db)
        wakeAfterCommit(db, newest: String(id))
        return id
    }

    func record(_ event: RealtimeEvent, in db: Database) throws {
        try JournalRepository.insertUnnumbered(event, at: .now(), in: db)
        wakeAfterCommit(db, newest: "events")
    }

    func record(_ event: RealtimeEvent, in db: Database, onlyIf condition: SQL) throws {
        try JournalRepository.insertUnnumbered(event, at: .now(), onlyIf: condition, in: db)
        wakeAfterCommit(db, newest: "events")
    }

    /// The tails wake once the event is durable (never for one rolled back): several events of one
    /// batch come to one wake-up, the signal coalesces them, and to one ring of the other
    /// processes' doorbell (sent outside this transaction, with the newest id when it is known).
    private func wakeAfterCommit(_ db: Database, newest payload: String) {
        let signal = self.signal
        db.afterCommit { signal.fire() }
        db.ringAfterCommit(channel: Self.channel, payload: payload)
    }

    func rewrite(subject: String, to data: JSONValue, in db: Database) throws -> Int {
        try JournalRepository.rewrite(subject: subject, to: data.serialized(), in: db)
    }

    func events(after: Int64, limit: Int) async throws -> [RecordedEvent] {
        let bounded = min(max(limit, 0), StoredEventJournal.maxBatch)
        guard bounded > 0 else { return [] }
        // One statement, after every commit on every instance: no snapshot around it.
        return try await store().readAtOnce { db in try JournalRepository.events(after: after, limit: bounded, in: db) }
    }

    func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>, chats: Set<Int64>?) async throws
        -> (events: [RecordedEvent], scannedTo: Int64) {
        let bounded = min(max(limit, 0), StoredEventJournal.maxBatch)
        guard bounded > 0 else { return ([], after) }
        // Two statements without a snapshot between them: the second reads ids up to the end the
        // first found, and every id up to it was committed (or rolled back) before the first ran —
        // writers hand out ids under one lock, in commit order.
        let (rows, end) = try await store().readAtOnce { db in
            try JournalRepository.events(after: after, limit: bounded, types: types, audiences: audiences, chats: chats, in: db)
        }
        return (rows.compactMap(JournalRepository.event), end)
    }

    func lastEventID() async throws -> Int64 {
        try await store().read { db in try JournalRepository.lastID(in: db) }
    }

    func horizon() async throws -> Int64 {
        try await store().read { db in try JournalRepository.horizon(in: db) }
    }

    /// Deletes in transactions of `maxBatch * 10` rows, so retention never holds the writer long.
    func removeEvents(recordedBefore time: Timestamp) async throws -> Int {
        let store = try await self.store()
        let chunk = StoredEventJournal.maxBatch * 10
        var total = 0
        while true {
            let removed = try await store.write { db in try JournalRepository.removeEvents(recordedBefore: time, limit: chunk, in: db) }
            total += removed
            if removed < chunk { return total }
        }
    }

    func didCommit() { signal.fire() }

    func commits() -> AsyncStream<Void> {
        forwardRings()
        return signal.stream()
    }

    func wakeOnCommit(_ continuation: AsyncStream<Void>.Continuation) -> CommitWakeups {
        forwardRings()
        let id = signal.add(continuation)
        return CommitWakeups { [signal] in signal.remove(id) }
    }

    /// Other instances' rings (and the doorbell listening again) fire the signal, from the
    /// doorbell's thread: one handler for every tail of this instance, registered with the first
    /// tail, until the store closes.
    private func forwardRings() {
        guard let doorbell else { return }
        let start = ringsForwarded.withLock { started -> Bool in
            defer { started = true }
            return !started
        }
        guard start else { return }
        let signal = self.signal
        doorbell.onRing { _ in signal.fire() }
    }

    /// Streams waiting for wake-ups (for tests and metrics).
    var listenerCount: Int { signal.count }
}

/// Coalescing wake-ups to any number of listeners: each stream buffers at most one pending
/// wake-up, so a slow listener costs one element, never a growing queue.
final class CommitSignal: Sendable {
    private let listeners = Mutex<(next: Int, all: [Int: AsyncStream<Void>.Continuation])>((0, [:]))

    /// A new stream of wake-ups (each `fire()`) until its task is cancelled.
    func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = add(continuation)
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        return stream
    }

    /// Yields each `fire()` into `continuation` until `remove` is called with the returned id.
    func add(_ continuation: AsyncStream<Void>.Continuation) -> Int {
        listeners.withLock { state in
            state.next += 1
            state.all[state.next] = continuation
            return state.next
        }
    }

    func remove(_ id: Int) {
        _ = listeners.withLock { $0.all.removeValue(forKey: id) }
    }

    func fire() {
        let all = listeners.withLock { Array($0.all.values) }
        for c in all { c.yield() }
    }

    var count: Int { listeners.withLock { $0.all.count } }
}
