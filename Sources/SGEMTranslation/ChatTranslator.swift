import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import Synchronization

/// Chats shown in the reader's language. Readers turn it on per chat; a message stored in such a
/// chat is translated in the background — once per distinct target language among its readers,
/// never once per reader, and never while the sender waits — and each translation reaches those
/// readers as a `message.updated` event carrying `translation`, recorded in the journal for
/// their eyes only (`chat_users`: these users while members of the chat). Lists of messages
/// carry the translations made so far; a message a list finds untranslated is queued.
/// The worker runs at background priority and, while others keep the store's writer busy,
/// keeps its own use of the store to `storeShare` (see `pace`).
///
/// Several instances on one database: one of them — the holder of `leadership` — follows the
/// journal; the others try for it every `poll` and take over when it stops or dies. Every
/// instance translates what its own lists found untranslated.
final class ChatTranslator: ChatTranslations, Sendable {
    let desk: TranslationDesk
    let store: Store
    let journal: any EventJournal
    /// Messaging's view of chats and messages, resolved at boot.
    let messages: any MessageLookup
    let logger: Logger
    /// Which instance follows the journal, and how often the others try to.
    let leadership: Leadership
    let poll: Duration

    /// chat → reader → target language. The table is the truth; this copy, loaded at start and
    /// changed with it, lets a page of history of a chat nobody translates cost nothing.
    private let readers = Mutex<[Int64: [Int64: String]]>([:])
    /// Messages lists found untranslated, waiting for the worker (bounded: beyond it, the next
    /// look at the page asks again).
    private let queue = Mutex<(jobs: [Job], queued: Set<Job>)>(([], []))
    /// Texts whose translation failed lately (target and text → when), not asked again for a while.
    private let failed = Mutex<[String: UInt64]>([:])
    /// The id of the last journal event the worker has looked at: where the journal ended at
    /// `load()` until the worker moves on (read by tests).
    let progress = Atomic<Int64>(0)
    /// The leadership's term `progress` belongs to: a later term follows the journal from where
    /// it ends when it begins.
    private let followedTerm = Atomic<Int>(0)
    /// Where the journal ended when `readers` was loaded: the watch starts there.
    private let watchFrom = Atomic<Int64>(0)
    /// chat → its readers in translation mode who are members now (see `memberReaders`).
    private let memberReaders = Mutex<[Int64: Set<Int64>]>([:])
    /// The worker's use of the store since it last paced itself (see `pace`).
    private let pacing = Mutex(Pacing())
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    static let maxQueued = 2_000
    static let retryAfterFailure: UInt64 = 300 * 1_000_000_000
    /// Provider calls the worker has under way at once.
    static let concurrency = 8

    struct Job: Hashable, Sendable {
        let chatID: Int64
        let messageID: Int64
        /// The message as its event carried it; nil for a job a list queued (read when worked).
        var message: ReadableMessage? = nil
        /// The journal event the job came from; nil for a job a list queued.
        var eventID: Int64? = nil

        static func == (a: Job, b: Job) -> Bool { a.chatID == b.chatID && a.messageID == b.messageID }
        func hash(into hasher: inout Hasher) {
            hasher.combine(chatID)
            hasher.combine(messageID)
        }
    }

    init(desk: TranslationDesk, store: Store, journal: any EventJournal, messages: any MessageLookup, logger: Logger,
         poll: Duration = Leadership.defaultPoll) {
        self.desk = desk
        self.store = store
        self.journal = journal
        self.messages = messages
        self.logger = logger
        self.leadership = store.leadership(StoreLock("worker:translation.chats"))
        self.poll = poll
        (wake, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Loads who reads which chat translated, and notes where the journal ends: the worker
    /// starts from there if this instance leads now (the first to boot does), and so does the
    /// watch that keeps this instance's copy of the readers' choices and of the provider settings
    /// current (`watch`).
    func load() async throws {
        await leadership.refresh()
        followedTerm.store(leadership.term, ordering: .releasing)
        let end = try await journal.lastEventID()
        progress.store(leadership.isHeld ? try await resumePoint(end: end) : end, ordering: .releasing)
        watchFrom.store(end, ordering: .releasing)
        try await loadReaders()
    }

    /// Where a leader starts following the journal: the stored cursor, so that what was sent
    /// while no instance led (the last leader died, or every instance was restarted) is still
    /// translated live; the journal's `end` when none was stored, when retention has removed
    /// events after it, or when it is more than `resumeLimit` events behind — live translations
    /// of old messages are of no use then, and lists queue what readers open.
    func resumePoint(end: Int64) async throws -> Int64 {
        let stored = try await store.read { db in try TranslationRepository.chatCursor(in: db) }
        guard stored > 0, stored < end, end - stored <= ChatTranslator.resumeLimit, stored >= (try await journal.horizon()) else {
            return end
        }
        return stored
    }

    static let resumeLimit: Int64 = 10_000
    /// How often a leader stores its cursor when no translation did (see `storeCursor`).
    static let cursorInterval: Duration = .seconds(5)

    /// Reads who reads which chat translated from the table.
    private func loadReaders() async throws {
        let rows = try await store.read { db in try TranslationRepository.readers(in: db) }
        readers.withLock { map in
            map.removeAll()
            for row in rows { map[row.chat, default: [:]][row.user] = row.target }
        }
        memberReaders.withLock { $0.removeAll() }
    }

    // MARK: The reader's choice

    /// The reader's target for `chatID`, nil when translation is off for them there.
    func target(chat chatID: Int64, reader: Int64) -> String? {
        readers.withLock { $0[chatID]?[reader] }
    }

    /// Turns translation for `chatID` on (into `target`) or off for `reader`. The choice and its
    /// `ReadingChange` event commit together: this instance knows it at once, the others when
    /// their watch reads the event.
    func set(chat chatID: Int64, reader: Int64, target: String?) async throws {
        let now = Timestamp.now()
        let journal = self.journal
        try await store.write { db in
            try TranslationRepository.setReader(chat: chatID, user: reader, target: target, at: now, in: db)
            try journal.record(ReadingChange.event(chat: chatID, reader: reader, target: target), in: db)
        }
        remember(chat: chatID, reader: reader, target: target)
    }

    /// Changes this instance's copy of `reader`'s choice for `chatID`.
    private func remember(chat chatID: Int64, reader: Int64, target: String?) {
        readers.withLock { map in
            if let target { map[chatID, default: [:]][reader] = target } else {
                map[chatID]?.removeValue(forKey: reader)
                if map[chatID]?.isEmpty == true { map.removeValue(forKey: chatID) }
            }
        }
        memberReaders.withLock { _ = $0.removeValue(forKey: chatID) }
    }

    // MARK: The watch (every instance)

    /// The types `watch` follows.
    static let watched: Set<String> = [ReadingChange.type, RuntimeSettingChange.type]

    /// Keeps this instance's copies current, on every instance, leading or not: a reader's choice
    /// made on any instance, and a provider setting changed on any instance or by the command
    /// line (`JournalWatch`). Runs until cancelled.
    func watch(_ watch: JournalWatch) async {
        await watch.run(from: watchFrom.load(ordering: .acquiring)) { recorded in self.apply(recorded) }
    }

    /// Acts on one watched event: a reader's choice is copied, a changed translation setting
    /// drops the desk's copy of the provider settings.
    func apply(_ recorded: RecordedEvent) {
        let event = recorded.event
        if let key = RuntimeSettingChange.key(of: event) {
            if key.hasPrefix("translation.") { desk.settingsChanged() }
            return
        }
        guard let change = ReadingChange(event) else { return }
        remember(chat: change.chat, reader: change.reader, target: change.target)
    }

    // MARK: ChatTranslations (messaging's lists)

    func translations(reader: Int64, chatID: Int64, messages: [(id: Int64, body: String)]) async -> [Int64: MessageTranslation] {
        guard let target = target(chat: chatID, reader: reader), !messages.isEmpty else { return [:] }
        do {
            guard let (_, found) = try await desk.cachedTranslations(of: messages.map(\.body), target: target) else { return [:] }
            var out: [Int64: MessageTranslation] = [:]
            var missing: [Job] = []
            for m in messages {
                if let t = found[m.body] {
                    if !t.sameLanguage { out[m.id] = MessageTranslation(text: t.text, source: t.source, target: target) }
                } else if TextShield(m.body).hasWords {
                    missing.append(Job(chatID: chatID, messageID: m.id))
                }
            }
            if !missing.isEmpty { enqueue(missing) }
            return out
        } catch {
            logger.error("reading translations failed", ["chat.id": String(chatID), "error": String(describing: error)])
            return [:]
        }
    }

    func enqueue(_ jobs: [Job]) {
        let added = queue.withLock { q -> Bool in
            var added = false
            for job in jobs where q.jobs.count < ChatTranslator.maxQueued && !q.queued.contains(job) {
                q.jobs.append(job)
                q.queued.insert(job)
                added = true
            }
            return added
        }
        if added { wakeUp.yield() }
    }

    // MARK: The worker

    /// While this instance leads, follows the journal from where it ended at `load()` (or, after
    /// taking over, from where it ended then): every `message.created` or edit in a chat with
    /// readers in translation mode becomes a job. What lists queued is a job on any instance.
    /// Runs until cancelled.
    func run() async throws {
        // The worker starts where the journal ended when the module booted (before the server
        // took requests), and looks once straight away: a message sent before its thread got
        // going is still translated live, and what lists queued meanwhile is not left waiting.
        // Commits wake the worker only while it leads: a follower's own queue wakes it.
        let commits = CommitWakeupsWhileLeading(journal: journal, wake: wakeUp)
        commits.follow(leading: leadership.isHeld)
        var cursor = progress.load(ordering: .acquiring)
        var followed = followedTerm.load(ordering: .acquiring)
        // A follower tries for the lead every poll. The leader looks at every poll too: another
        // instance's ring can be missed (a lost doorbell connection).
        let lead = Task { [leadership, poll, wakeUp] in
            await leadership.maintain(every: poll) { leading in
                commits.follow(leading: leading)
                if leading { wakeUp.yield() }
            }
        }
        // Commits closer together than this are looked at together: live translation waits on a
        // provider's answer, which takes far longer.
        var spacing = LookSpacing(ChatTranslator.lookSpacing)
        var cursorStored = (at: ContinuousClock.now, cursor: cursor)
        defer {
            commits.stop()
            lead.cancel()
        }
        wakeUp.yield()
        for await _ in wake {
            try Task.checkCancellation()
            while true {
                // Only a round with work in it gives way to the foreground: a follower with nothing
                // queued here has nothing to hold back, and waking every few milliseconds while
                // the writer is busy would cost more than its round.
                if leadership.isHeld || !queue.withLock({ $0.jobs.isEmpty }) { await yieldToForeground() }
                var jobs: [Job] = []
                var more = false
                if leadership.isHeld {
                    try await spacing.wait()
                    // Taken over: the journal is followed from where the last leader stored
                    // its cursor (see `resumePoint`).
                    let term = leadership.term
                    if term != followed {
                        cursor = try await resumePoint(end: try await journal.lastEventID())
                        followed = term
                    }
                    // Only what concerns the worker is read and decoded (here, on the worker's
                    // thread): messages and membership changes in the chats someone reads
                    // translated — none at all while nobody does.
                    let reading = MonotonicClock.nanoseconds()
                    let window = try await journal.events(after: cursor, limit: ChatTranslator.window, types: ChatTranslator.types,
                                                          audiences: [.chat, .users], chats: chatsRead())
                    owe(reads: MonotonicClock.nanoseconds() - reading, write: 0)
                    for recorded in window.events {
                        if let job = job(for: recorded) { jobs.append(job) }
                    }
                    // A short look was the end of the journal: the next commit wakes the worker.
                    more = journalLookMayHaveMore(after: cursor, scannedTo: window.scannedTo, limit: ChatTranslator.window)
                    cursor = window.scannedTo
                } else {
                    // Membership changes reach a follower through no journal: it asks each time.
                    memberReaders.withLock { $0.removeAll() }
                }
                jobs += queue.withLock { q -> [Job] in
                    defer { q.jobs.removeAll(); q.queued.removeAll() }
                    return q.jobs
                }
                for start in stride(from: 0, to: jobs.count, by: ChatTranslator.batch) {
                    await work(Array(jobs[start..<min(start + ChatTranslator.batch, jobs.count)]))
                    await pace()
                }
                progress.store(cursor, ordering: .releasing)
                if leadership.isHeld { await storeCursor(cursor, lastStored: &cursorStored) }
                if !more { break }
            }
        }
    }

    /// Stores the leader's cursor every `cursorInterval` at most, and only when it moved since
    /// the last time: the writes of translations store it too, with them (see `work`), so this
    /// only moves it past what needed none.
    func storeCursor(_ cursor: Int64, lastStored: inout (at: ContinuousClock.Instant, cursor: Int64)) async {
        guard cursor > lastStored.cursor, ContinuousClock.now - lastStored.at >= ChatTranslator.cursorInterval else { return }
        lastStored = (ContinuousClock.now, cursor)
        do {
            try await store.write(background: true) { db in try TranslationRepository.advanceChatCursor(to: cursor, in: db) }
        } catch {
            logger.error("the chat translator could not store its cursor", ["error": String(describing: error)])
        }
    }

    /// The chats someone reads translated, for the journal to read only their events; nil (every
    /// chat's) when there are more than `chatsReadLimit`, where the list would cost more than it saves.
    func chatsRead() -> Set<Int64>? {
        readers.withLock { map in
            let chats = map.filter { !$0.value.isEmpty }.keys
            return chats.count > ChatTranslator.chatsReadLimit ? nil : Set(chats)
        }
    }

    static let chatsReadLimit = 200
    /// The shortest time between two reads of the journal (`LookSpacing`).
    static let lookSpacing: Duration = .milliseconds(50)

    /// Messages handled in one round: one read of the cache and one write for all of them.
    static let batch = 4
    /// Events looked at per read of the journal.
    static let window = 512
    static let types: Set<String> = ["message.created", "message.updated", "member.added", "member.removed", "chat.created",
                                     "chat.updated", "chat.deleted"]

    /// The job a journal event makes: a new or edited message in a chat someone reads
    /// translated. Membership events drop what the worker remembers of that chat's members.
    func job(for recorded: RecordedEvent) -> Job? {
        let event = recorded.event
        if event.type.hasPrefix("member.") || event.type.hasPrefix("chat.") {
            let chat = event.data["chatId"]?.numberValue ?? event.data["chat"]?["id"]?.numberValue
            memberReaders.withLock { cache in
                if let chat { cache.removeValue(forKey: Int64(chat)) } else { cache.removeAll() }
            }
            return nil
        }
        guard event.type == "message.created" || event.type == "message.updated", case let .chat(chatID) = event.audience,
              let message = event.data["message"], let id = message["id"]?.numberValue,
              readers.withLock({ $0[chatID]?.isEmpty == false }) else { return nil }
        // A system line (who came and went) has no text: the console says it in the reader's words.
        if message["kind"] == .string("system") { return nil }
        // The event carries the message as it was stored: no need to read it again.
        let readable = ReadableMessage(id: Int64(id), chatID: chatID, senderID: Int64(message["senderId"]?.numberValue ?? 0),
                                       body: message["deleted"] == .bool(true) ? nil : message["body"]?.stringValue, json: message)
        return Job(chatID: chatID, messageID: Int64(id), message: readable, eventID: recorded.id)
    }

    /// Translates the messages of `jobs` for their chats' readers: each message once per target
    /// language among readers who are members now; the translations and their events in one write.
    func work(_ jobs: [Job]) async {
        let lookup = messages
        do {
            // Switched off or not set up: nothing to do, and nothing worth a log line per message.
            guard TranslationDesk.missing(try await desk.providerSettings()) == nil else { return }
            var items: [TranslationDesk.BatchItem] = []
            var owners: [(message: ReadableMessage, audience: [Int64])] = []
            let now = MonotonicClock.nanoseconds()
            for job in jobs {
                var found = job.message
                if found == nil { found = try await lookup.message(job.messageID) }
                guard let message = found, message.chatID == job.chatID, let body = message.body else { continue }
                let members = try await memberReaders(of: job.chatID, lookup: lookup)
                let byTarget = readers.withLock { map -> [String: [Int64]] in
                    var out: [String: [Int64]] = [:]
                    for (user, target) in map[job.chatID] ?? [:] where members.contains(user) { out[target, default: []].append(user) }
                    return out
                }
                for (target, users) in byTarget.sorted(by: { $0.key < $1.key }) {
                    let failureKey = "\(target)\u{0}\(body)"
                    if let at = failed.withLock({ $0[failureKey] }), now - at < ChatTranslator.retryAfterFailure { continue }
                    items.append(TranslationDesk.BatchItem(text: body, target: target))
                    owners.append((message, users.sorted()))
                }
            }
            guard !items.isEmpty else { return }
            await yieldToForeground()
            let journal = self.journal
            let recipients = owners
            let published = desk.metrics.published
            // The journal's events these jobs came from are done once their translations are
            // stored: the cursor moves with them, so a leader that takes over neither redoes them
            // nor misses the rest.
            let through = jobs.compactMap(\.eventID).max()
            // The events are built and serialised here, on the worker's thread; the write only inserts them.
            let result = try await desk.translateBatch(items, concurrency: ChatTranslator.concurrency, prepare: { outcomes in
                recipients.indices.compactMap { i -> RealtimeEvent? in
                    guard let outcome = outcomes[i], !outcome.sameLanguage else { return nil }
                    return ChatTranslator.event(recipients[i].message, outcome, to: recipients[i].audience)
                }
            }) { db, events in
                for event in events where try ChatTranslator.isCurrent(event, lookup: lookup, in: db) {
                    _ = try journal.append(event, in: db)
                    published.increment()
                }
                if let through { try TranslationRepository.advanceChatCursor(to: through, in: db) }
            }
            owe(reads: result.readNanos, write: result.writeNanos)
            let failures = result.failed
            if !failures.isEmpty {
                failed.withLock { map in
                    if map.count > 10_000 { map.removeAll() }
                    for i in failures.keys { map["\(items[i].target)\u{0}\(items[i].text)"] = now }
                }
                let first = failures.values.first.map { String(describing: $0) } ?? ""
                logger.warning("chat messages could not be translated", ["count": String(failures.count), "error": first])
            }
        } catch {
            logger.error("chat translation failed", ["messages": String(jobs.count), "error": String(describing: error)])
        }
    }

    /// Waits, up to `maxYield`, while writes people wait for are queued at the store: the
    /// worker's reads and its write run on the store's threads at their normal priority, so it
    /// lets sends go first. Under sustained full load it still moves on, slowly.
    func yieldToForeground() async {
        var waited: Duration = .zero
        while store.queueDepth > 0, waited < ChatTranslator.maxYield {
            try? await Task.sleep(for: ChatTranslator.yieldStep)
            waited += ChatTranslator.yieldStep
        }
    }

    static let maxYield: Duration = .milliseconds(250)
    static let yieldStep: Duration = .milliseconds(5)

    /// Adds the store time of the worker's latest reads and write to what `pace` settles.
    func owe(reads: UInt64, write: UInt64) {
        pacing.withLock { p in
            p.ownReads += reads
            p.ownWrites += write
        }
    }

    /// Keeps the worker's share of the store under `storeShare` while others keep its writer
    /// busy. The worker's threads run at background priority, but its reads and its write run
    /// on the store's threads at their normal priority: so after each round it waits for
    /// (its store time) × (1 / share − 1) × (the fraction of the time since the last round that
    /// the writer spent on batches with others' writes). On an idle server that is no wait at
    /// all; under full load the worker takes about `storeShare` of the store, and translations
    /// follow more slowly until the load passes.
    func pace() async {
        let now = MonotonicClock.nanoseconds()
        let busy = store.foregroundBusyNanoseconds
        let pause = pacing.withLock { p -> UInt64 in
            defer { p = Pacing(at: now, writerBusy: busy) }
            guard p.at > 0 else { return 0 }
            return ChatTranslator.pause(own: p.ownReads + p.ownWrites, wall: now &- p.at, othersBusy: busy &- p.writerBusy)
        }
        guard pause >= 1_000_000 else { return }
        try? await Task.sleep(for: .nanoseconds(Int64(pause)))
    }

    /// The wait, in nanoseconds, after a round that used the store for `own` when, over the
    /// `wall` since the last round, others kept the writer busy for `othersBusy`.
    static func pause(own: UInt64, wall: UInt64, othersBusy: UInt64) -> UInt64 {
        guard wall > 0, wall < 1 << 62, othersBusy < 1 << 62 else { return 0 }
        let load = min(1, Double(othersBusy) / Double(wall))
        return UInt64(min(Double(own) * (1 / storeShare - 1) * load, maxPause))
    }

    /// The worker's share of the store under load.
    static let storeShare = 0.02
    static let maxPause = 2e9

    struct Pacing {
        /// When the worker last settled, and the writer's busy total then.
        var at: UInt64 = 0
        var writerBusy: UInt64 = 0
        /// The worker's store time since.
        var ownReads: UInt64 = 0
        var ownWrites: UInt64 = 0
    }

    /// Whether the message a translation event carries is still as stored in `db`: one deleted or
    /// edited while the provider worked would otherwise come back in the event (the edit's own
    /// translation follows).
    static func isCurrent(_ event: RealtimeEvent, lookup: any MessageLookup, in db: Database) throws -> Bool {
        guard let message = event.data["message"], let id = message["id"]?.numberValue,
              let stored = try lookup.message(Int64(id), in: db), let body = stored.body else { return false }
        return message["body"]?.stringValue == body
    }

    /// `message.updated` carrying the message and its translation, for `audience` only.
    static func event(_ message: ReadableMessage, _ outcome: TranslationDesk.Outcome, to audience: [Int64]) -> RealtimeEvent {
        var fields = message.json.objectValue ?? []
        fields.removeAll { $0.0 == "translation" }
        fields.append(("translation", MessageTranslation(text: outcome.text, source: outcome.source, target: outcome.target).json))
        return RealtimeEvent(type: "message.updated", audience: .chatMembers(chat: message.chatID, users: audience),
                             data: ["message": .object(fields)], subject: RealtimeEvent.subject(message: message.id)).prepared()
    }

    /// The readers of `chatID` who are members of it now, remembered until a membership event
    /// or a reader's change concerns the chat.
    func memberReaders(of chatID: Int64, lookup: any MessageLookup) async throws -> Set<Int64> {
        if let known = memberReaders.withLock({ $0[chatID] }) { return known }
        let candidates = readers.withLock { Array(($0[chatID] ?? [:]).keys) }
        let members = try await lookup.members(of: chatID, among: candidates)
        memberReaders.withLock { $0[chatID] = members }
        return members
    }
}

/// The worker as a module service.
/// The journal event a reader's choice records, in the same transaction, for the instances
/// themselves (`.hubs`, never a client): data `{"chatId", "userId", "target"}`, target null when
/// translation is turned off. Every instance's `ChatTranslator.watch` copies it.
struct ReadingChange: Equatable {
    static let type = "translation.reading_changed"
    let chat: Int64
    let reader: Int64
    let target: String?

    static func event(chat: Int64, reader: Int64, target: String?) -> RealtimeEvent {
        RealtimeEvent(type: type, audience: .hubs, data: ["chatId": .number(Double(chat)), "userId": .number(Double(reader)),
                                                          "target": target.map(JSONValue.string) ?? .null])
    }

    init(chat: Int64, reader: Int64, target: String?) {
        self.chat = chat
        self.reader = reader
        self.target = target
    }

    /// The change `event` records; nil for any other event.
    init?(_ event: RealtimeEvent) {
        guard event.type == ReadingChange.type, event.audience == .hubs, let chat = event.data["chatId"]?.numberValue,
              let reader = event.data["userId"]?.numberValue else { return nil }
        self.init(chat: Int64(chat), reader: Int64(reader), target: event.data["target"]?.stringValue)
    }
}

/// `ChatTranslator.watch` on every instance: what another instance or the command line changed.
struct TranslationWatchService: ModuleService {
    let translator: ChatTranslator
    let watch: JournalWatch
    var name: String { "translation.watch" }
    func run() async throws { await translator.watch(watch) }
}

struct ChatTranslationService: ModuleService {
    let translator: ChatTranslator
    let executor: BackgroundExecutor
    var name: String { "translation.chats" }
    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await translator.run() }
    }
}
