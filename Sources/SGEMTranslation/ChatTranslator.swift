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
final class ChatTranslator: ChatTranslations, Sendable {
    let desk: TranslationDesk
    let store: Store
    let journal: any EventJournal
    let services: ServiceRegistry
    let logger: Logger

    /// chat → reader → target language. The table is the truth; this copy, loaded at start and
    /// changed with it, lets a page of history of a chat nobody translates cost nothing.
    private let readers = Mutex<[Int64: [Int64: String]]>([:])
    /// Messages lists found untranslated, waiting for the worker (bounded: beyond it, the next
    /// look at the page asks again).
    private let queue = Mutex<(jobs: [Job], queued: Set<Job>)>(([], []))
    /// Texts whose translation failed lately (cache key → when), not asked again for a while.
    private let failed = Mutex<[String: UInt64]>([:])
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    static let maxQueued = 2_000
    static let retryAfterFailure: UInt64 = 300 * 1_000_000_000
    /// Provider calls the worker has under way at once.
    static let concurrency = 8

    struct Job: Hashable, Sendable {
        let chatID: Int64
        let messageID: Int64
    }

    init(desk: TranslationDesk, store: Store, journal: any EventJournal, services: ServiceRegistry, logger: Logger) {
        self.desk = desk
        self.store = store
        self.journal = journal
        self.services = services
        self.logger = logger
        (wake, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Loads who reads which chat translated.
    func load() async throws {
        let rows = try await store.read { db in try TranslationRepository.readers(in: db) }
        readers.withLock { map in
            map.removeAll()
            for row in rows { map[row.chat, default: [:]][row.user] = row.target }
        }
    }

    // MARK: The reader's choice

    /// The reader's target for `chatID`, nil when translation is off for them there.
    func target(chat chatID: Int64, reader: Int64) -> String? {
        readers.withLock { $0[chatID]?[reader] }
    }

    /// Turns translation for `chatID` on (into `target`) or off for `reader`.
    func set(chat chatID: Int64, reader: Int64, target: String?) async throws {
        let now = Timestamp.now()
        try await store.write { db in try TranslationRepository.setReader(chat: chatID, user: reader, target: target, at: now, in: db) }
        readers.withLock { map in
            if let target { map[chatID, default: [:]][reader] = target } else {
                map[chatID]?.removeValue(forKey: reader)
                if map[chatID]?.isEmpty == true { map.removeValue(forKey: chatID) }
            }
        }
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

    /// Follows the journal from its newest event: every `message.created` or edit in a chat
    /// with readers in translation mode becomes jobs; so does what lists queued. Runs until
    /// cancelled.
    func run() async throws {
        var cursor = try await journal.lastEventID()
        let commits = journal.commits()
        let forward = Task { [wakeUp] in
            for await _ in commits { wakeUp.yield() }
        }
        defer { forward.cancel() }
        var pending: [Job] = []
        for await _ in wake {
            try Task.checkCancellation()
            // The journal since the cursor, in batches.
            while true {
                let batch = try await journal.events(after: cursor, limit: 256)
                for recorded in batch {
                    cursor = recorded.id
                    guard recorded.event.type == "message.created" || recorded.event.type == "message.updated",
                          case let .chat(chatID) = recorded.event.audience,
                          let id = recorded.event.data["message"]?["id"]?.numberValue,
                          recorded.event.data["message"]?["deleted"] != .bool(true),
                          readers.withLock({ $0[chatID]?.isEmpty == false }) else { continue }
                    pending.append(Job(chatID: chatID, messageID: Int64(id)))
                }
                if batch.count < 256 { break }
            }
            pending += queue.withLock { q -> [Job] in
                defer { q.jobs.removeAll(); q.queued.removeAll() }
                return q.jobs
            }
            if pending.isEmpty { continue }
            let jobs = pending
            pending.removeAll()
            await work(jobs)
        }
    }

    /// Translates `jobs`, at most `concurrency` provider calls at a time.
    func work(_ jobs: [Job]) async {
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for job in jobs {
                if running >= ChatTranslator.concurrency {
                    await group.next()
                    running -= 1
                }
                group.addTask { await self.translate(job) }
                running += 1
            }
            await group.waitForAll()
        }
    }

    /// One message for every target language among its chat's readers: each language once,
    /// the languages side by side.
    func translate(_ job: Job) async {
        let byTarget = readers.withLock { map -> [String: [Int64]] in
            var out: [String: [Int64]] = [:]
            for (user, target) in map[job.chatID] ?? [:] { out[target, default: []].append(user) }
            return out
        }
        guard !byTarget.isEmpty, let lookup = services.resolve((any MessageLookup).self) else { return }
        do {
            // Switched off or not set up: nothing to do, and nothing worth a log line per message.
            guard TranslationDesk.missing(try await desk.providerSettings()) == nil else { return }
            guard let message = try await lookup.message(job.messageID), message.chatID == job.chatID, let body = message.body else { return }
            let members = try await lookup.members(of: job.chatID, among: byTarget.values.flatMap { $0 })
            await withTaskGroup(of: Void.self) { group in
                for (target, users) in byTarget {
                    let audience = users.filter { members.contains($0) }.sorted()
                    if audience.isEmpty { continue }
                    group.addTask { await self.deliver(message, body: body, target: target, to: audience) }
                }
            }
        } catch {
            logger.error("chat translation failed", ["message.id": String(job.messageID), "error": String(describing: error)])
        }
    }

    /// Translates `body` into `target` and records the event for `audience`, unless the text is
    /// in that language already or failed lately.
    func deliver(_ message: ReadableMessage, body: String, target: String, to audience: [Int64]) async {
        let failureKey = "\(target)\u{0}\(body)"
        let now = MonotonicClock.nanoseconds()
        if let at = failed.withLock({ $0[failureKey] }), now - at < ChatTranslator.retryAfterFailure { return }
        do {
            let outcome = try await desk.translate(body, source: nil, target: target)
            guard !outcome.sameLanguage else { return }
            var fields = message.json.objectValue ?? []
            fields.removeAll { $0.0 == "translation" }
            fields.append(("translation", MessageTranslation(text: outcome.text, source: outcome.source, target: target).json))
            let event = RealtimeEvent(type: "message.updated", audience: .chatMembers(chat: message.chatID, users: audience),
                                      data: ["message": .object(fields)])
            let journal = self.journal
            _ = try await store.write { db in try journal.append(event, in: db) }
            journal.didCommit()
            desk.metrics.published.increment()
        } catch {
            failed.withLock { map in
                if map.count > 10_000 { map.removeAll() }
                map[failureKey] = now
            }
            logger.warning("a chat message could not be translated",
                           ["message.id": String(message.id), "target": target, "error": String(describing: error)])
        }
    }
}

/// The worker as a module service.
struct ChatTranslationService: ModuleService {
    let translator: ChatTranslator
    var name: String { "translation.chats" }
    func run() async throws { try await translator.run() }
}
