import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import Synchronization

/// Turns the durable journal into pushes. Two steps, each durable before the next:
/// 1. fan-out: a window of journal events becomes deliveries (one per subscription of each
///    person who should hear of it) written to the outbox in the same transaction that moves the
///    worker's cursor past the window — a restart neither loses an event nor fans it out twice;
/// 2. delivery: due deliveries are encrypted (a fresh key and salt each), signed and posted; the
///    answers are recorded in one write (done, gone: the subscription deleted, or retry later).
/// It runs on a background-priority thread with a background-priority HTTP client, writes with
/// the store's background flag, and lets queued writes of people go first: sending never waits.
/// Several instances on one database: the holder of `leadership` does both steps; the others try
/// for it every `limits.leadershipPoll` and take over, from the stored cursor, when it stops or dies.
final class PushWorker: Sendable {
    let store: Store
    let journal: any EventJournal
    let directory: any UserDirectory
    let services: ServiceRegistry
    let vapid: VAPID
    let client: HTTPClient
    let contact: @Sendable () async -> String
    let logger: Logger
    let limits: Limits
    /// The module's SQL, for what stands alone in one transaction.
    var repository: PushRepository { PushRepository(store: store) }
    /// Which instance pushes.
    let leadership: Leadership

    struct Limits: Sendable {
        /// Events looked at per read of the journal.
        var window = 256
        /// Deliveries written to the outbox in one transaction, about.
        var maxRows = 2_000
        /// The worker's share of the store's writer while people keep it busy.
        var storeShare = 0.05
        /// Deliveries sent per round, and at once.
        var batch = 128
        var concurrency = 16
        /// Seconds a push service keeps a push for an offline device.
        var ttl = 86_400
        var requestTimeout: Duration = .seconds(10)
        /// The first retry's delay; each later one doubles it, up to `maxBackoff`.
        var firstBackoffMillis: Int64 = 1_000
        var maxBackoffMillis: Int64 = 300_000
        /// The idle look for work nobody signalled (a command-line write, a retry coming due).
        var tick: Duration = .milliseconds(500)
        /// How often an instance that does not push tries to take over.
        var leadershipPoll = Leadership.defaultPoll
        /// The shortest time between two looks at the journal: commits that come meanwhile (with
        /// several instances, every batch of each rings) are fanned out together. A push reaches
        /// a phone through its push service, which takes far longer.
        var lookSpacing: Duration = .milliseconds(50)
    }

    /// The last journal event fanned out, and pushes answered 2xx (tests, metrics).
    let progress = Atomic<Int64>(0)
    let delivered = Atomic<Int>(0)
    /// The leadership's term `progress` was read in: a later one reads the stored cursor again.
    private let followedTerm = Atomic<Int>(0)
    /// When the worker last paced itself, and the writer's busy total then.
    private let pacing = Mutex<(at: UInt64, busy: UInt64)>((0, 0))
    private let wake: AsyncStream<Void>
    private let wakeUp: AsyncStream<Void>.Continuation

    init(store: Store, journal: any EventJournal, directory: any UserDirectory, services: ServiceRegistry, vapid: VAPID,
         client: HTTPClient, contact: @escaping @Sendable () async -> String, logger: Logger, limits: Limits = Limits()) {
        self.store = store
        self.journal = journal
        self.directory = directory
        self.services = services
        self.vapid = vapid
        self.client = client
        self.contact = contact
        self.logger = logger
        self.limits = limits
        leadership = store.leadership(StoreLock("worker:push"))
        (wake, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Where the worker starts: its stored cursor, or — the first time — the journal's end (the
    /// past is not pushed).
    func load() async throws {
        // The first instance to boot pushes from the start.
        await leadership.refresh()
        followedTerm.store(leadership.term, ordering: .releasing)
        let last = try await journal.lastEventID()
        let cursor = try await store.write { db -> Int64 in
            if let stored = try PushRepository.cursor(in: db) { return stored }
            try PushRepository.setCursor(last, in: db)
            return last
        }
        progress.store(cursor, ordering: .releasing)
    }

    /// Asks for a look now (a new subscription, a test).
    func poke() { wakeUp.yield() }

    func run() async throws {
        // Commits wake the worker only while it leads: a follower waits for the lead.
        let commits = CommitWakeupsWhileLeading(journal: journal, wake: wakeUp)
        commits.follow(leading: leadership.isHeld)
        let ticker = Task { [wakeUp, limits] in
            while !Task.isCancelled {
                try? await Task.sleep(for: limits.tick)
                wakeUp.yield()
            }
        }
        let lead = Task { [leadership, limits, wakeUp] in
            await leadership.maintain(every: limits.leadershipPoll) { leading in
                commits.follow(leading: leading)
                if leading { wakeUp.yield() }
            }
        }
        defer {
            commits.stop()
            ticker.cancel()
            lead.cancel()
        }
        var followed = followedTerm.load(ordering: .acquiring)
        var spacing = LookSpacing(limits.lookSpacing)
        wakeUp.yield()
        for await _ in wake {
            try Task.checkCancellation()
            // Another instance pushes; this one waits for its turn.
            guard leadership.isHeld else { continue }
            try await spacing.wait()
            let term = leadership.term
            if term != followed {
                // Taken over: on from where the last leader's cursor stands.
                do {
                    if let stored = try await store.read({ db in try PushRepository.cursor(in: db) }) {
                        progress.store(stored, ordering: .releasing)
                    }
                    followed = term
                } catch {
                    logger.error("push worker could not read its cursor", ["error": String(describing: error)])
                    continue
                }
            }
            while true {
                var worked = false
                do {
                    worked = try await fanOut()
                    worked = try await deliverDue() || worked
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    logger.error("push worker round failed", ["error": String(describing: error)])
                }
                if !worked || Task.isCancelled || !leadership.isHeld { break }
            }
        }
    }

    // MARK: Fan-out

    static let types: Set<String> = ["message.created", "holiday.updated", "notice.created"]

    /// One person to tell, and what to say in their language.
    struct Intent: Sendable {
        let userID: Int64
        let urgency: String
        let make: @Sendable (String) -> PushPayload
    }

    /// Fans out the next window of the journal; true when there may be more to fan out. One write holds at
    /// most about `maxRows` deliveries (a message to a big group is one event of hundreds): the
    /// cursor stops after the last event written, and the rest comes in the next round.
    func fanOut() async throws -> Bool {
        await yieldToForeground()
        // The whole round counts towards the worker's share, its reads (a big group's members,
        // levels and subscriptions, on the store's readers at normal priority) as much as its write.
        let started = MonotonicClock.nanoseconds()
        let cursor = progress.load(ordering: .acquiring)
        let window = try await journal.events(after: cursor, limit: limits.window, types: PushWorker.types,
                                              audiences: Set(EventAudience.Kind.allCases))
        guard window.scannedTo != cursor else { return false }
        var rows: [(subscription: Int64, payload: String, urgency: String)] = []
        var to = window.scannedTo
        for recorded in window.events {
            rows += try await deliveries(for: try await intents(for: recorded))
            if rows.count >= limits.maxRows, recorded.id < window.scannedTo {
                to = recorded.id
                break
            }
        }
        let now = Timestamp.now().milliseconds
        let (ttl, through, batch) = (limits.ttl, to, rows)
        let moved = try await store.write(background: true) { db -> Int64? in
            guard try PushRepository.advanceCursor(from: cursor, to: through, in: db) else {
                // Another instance took this window: nothing written, start again from where it is.
                return try PushRepository.cursor(in: db)
            }
            for row in batch {
                try PushRepository.enqueue(subscription: row.subscription, payload: row.payload, urgency: row.urgency, ttl: ttl, now: now,
                                           in: db)
            }
            return nil
        }
        progress.store(moved ?? through, ordering: .releasing)
        await pace(storeTime: MonotonicClock.nanoseconds() - started)
        // More to do when another instance moved the cursor, the round stopped inside the window,
        // or the window was full; a short window was the journal's end.
        return moved != nil || through < window.scannedTo
            || journalLookMayHaveMore(after: cursor, scannedTo: window.scannedTo, limit: limits.window)
    }

    /// The outbox rows `intents` make: for people who have subscriptions, are active, want
    /// notifications and have no live stream open.
    func deliveries(for intents: [Intent]) async throws -> [(subscription: Int64, payload: String, urgency: String)] {
        guard !intents.isEmpty else { return [] }
        let users = Array(Set(intents.map(\.userID)))
        let subscriptions = try await repository.subscriptionIDs(of: users)
        guard !subscriptions.isEmpty else { return [] }
        let candidates = Array(subscriptions.keys)
        let people = try await directory.users(ids: candidates)
        let live = services.resolve((any LiveStreams).self)?.streaming(among: candidates) ?? []
        var rows: [(Int64, String, String)] = []
        for intent in intents {
            guard let subs = subscriptions[intent.userID], let person = people[intent.userID], person.active,
                  person.notificationsEnabled, !live.contains(intent.userID) else { continue }
            let payload = intent.make(person.language).json.serialized()
            for sub in subs { rows.append((sub, payload, intent.urgency)) }
        }
        return rows
    }

    /// Who hears of `recorded`, per the contract; never the person who caused it.
    func intents(for recorded: RecordedEvent) async throws -> [Intent] {
        let event = recorded.event
        switch event.type {
        case "message.created":
            guard case let .chat(chatID) = event.audience, let message = event.data["message"],
                  message["kind"]?.stringValue ?? "text" == "text", message["deleted"] != .bool(true),
                  let body = message["body"]?.stringValue, let sender = message["senderId"]?.numberValue.map(Int64.init),
                  let id = message["id"]?.numberValue.map(Int64.init),
                  let chat = try await services.resolve((any ChatPushLookup).self)?.pushAudience(chat: chatID) else { return [] }
            let mentions = Set((message["mentions"]?.arrayValue ?? []).compactMap { $0.numberValue.map(Int64.init) })
            let name = try await displayName(sender)
            return chat.levels.sorted(by: { $0.key < $1.key }).compactMap { user, level -> Intent? in
                guard user != sender else { return nil }
                let mentioned = mentions.contains(user)
                guard level == .all || (level == .mentions && mentioned) else { return nil }
                return Intent(userID: user, urgency: mentioned ? "high" : "normal") { language in
                    PushTexts.message(sender: name, chat: chat, body: body, mention: mentioned, messageID: id, language: language)
                }
            }
        case "holiday.updated":
            guard let request = event.data["request"], let user = request["userId"]?.numberValue.map(Int64.init),
                  let id = request["id"]?.numberValue.map(Int64.init), let to = event.data["to"]?.stringValue,
                  let start = request["start"]?.stringValue, let end = request["end"]?.stringValue else { return [] }
            let from = event.data["from"]?.stringValue
            if (to == "approved" || to == "rejected"), from == "pending" {
                let decider = request["decidedBy"]?.numberValue.map(Int64.init)
                guard decider != user else { return [] }
                return [Intent(userID: user, urgency: "normal") { language in
                    PushTexts.decision(approved: to == "approved", start: start, end: end, requestID: id, language: language)
                }]
            }
            if to == "pending", from == nil {
                let name = try await displayName(user)
                return try await directory.activeAdminIDs().filter { $0 != user }.map { admin in
                    Intent(userID: admin, urgency: "normal") { language in
                        PushTexts.waiting(requester: name, start: start, end: end, requestID: id, language: language)
                    }
                }
            }
            return []
        case "notice.created":
            guard event.audience == .everyone, let notice = event.data["notice"], notice["kind"]?.stringValue == "company",
                  notice["deleted"] != .bool(true), let id = notice["id"]?.numberValue.map(Int64.init),
                  let title = notice["title"]?.stringValue else { return [] }
            let author = notice["authorId"]?.numberValue.map(Int64.init)
            let users = try await repository.subscribedUsers()
            return users.filter { $0 != author }.map { user in
                Intent(userID: user, urgency: "normal") { language in PushTexts.notice(title: title, noticeID: id, language: language) }
            }
        default:
            return []
        }
    }

    func displayName(_ id: Int64) async throws -> String {
        guard let user = try await directory.user(id: id) else { return "?" }
        return user.displayName.isEmpty ? user.username : user.displayName
    }

    // MARK: Delivery

    enum Outcome: Sendable, Equatable {
        /// Accepted, or nothing left to send to.
        case done
        /// 404 or 410: the subscription is gone.
        case gone
        /// 429 or 5xx (or no answer): again at this time (ms).
        case retry(Int64, String)
        /// Refused for good, or its time ran out.
        case drop(String)
    }

    /// Milliseconds a round holds its deliveries: more than `batch` / `concurrency` request timeouts.
    static let lease: Int64 = 180_000

    /// Sends the deliveries due now; true when there were any.
    func deliverDue() async throws -> Bool {
        let now = Timestamp.now().milliseconds
        let limit = limits.batch
        // Leased for the time a round can take at most: another instance leaves them alone, and
        // after a crash they come due again (a push then may go twice, never zero times).
        let until = now + PushWorker.lease
        // An idle look is one read; only a round with work writes its lease.
        guard try await repository.nextDue().map({ $0 <= now }) == true else { return false }
        let started = MonotonicClock.nanoseconds()
        let (due, subscriptions) = try await store.write(background: true) { db -> ([PushDelivery], [Int64: PushSubscription]) in
            let due = try PushRepository.due(at: now, limit: limit, in: db)
            let leased = try PushRepository.lease(due.map(\.id), now: now, until: until, in: db)
            let taken = due.filter { leased.contains($0.id) }
            var subs: [Int64: PushSubscription] = [:]
            for id in Set(taken.map(\.subscriptionID)) { subs[id] = try PushRepository.subscription(id, in: db) }
            return (taken, subs)
        }
        guard !due.isEmpty else { return false }
        let contact = await contact()
        var outcomes: [(PushDelivery, Outcome)] = []
        for start in stride(from: 0, to: due.count, by: limits.concurrency) {
            let chunk = due[start..<min(start + limits.concurrency, due.count)]
            await withTaskGroup(of: (PushDelivery, Outcome).self) { group in
                for delivery in chunk {
                    let subscription = subscriptions[delivery.subscriptionID]
                    group.addTask { [self] in (delivery, await send(delivery, to: subscription, contact: contact)) }
                }
                for await result in group { outcomes.append(result) }
            }
        }
        await yieldToForeground()
        let results = outcomes
        try await store.write(background: true) { db in
            for (delivery, outcome) in results {
                switch outcome {
                case .done:
                    try PushRepository.finish(delivery.id, in: db)
                case .gone:
                    try PushRepository.delete(delivery.subscriptionID, in: db)
                case let .retry(at, why):
                    try PushRepository.retry(delivery.id, at: at, in: db)
                    try PushRepository.noteError(delivery.subscriptionID, why, in: db)
                case let .drop(why):
                    try PushRepository.finish(delivery.id, in: db)
                    try PushRepository.noteError(delivery.subscriptionID, why, in: db)
                }
            }
        }
        await pace(storeTime: MonotonicClock.nanoseconds() - started)
        let sent = results.filter { $0.1 == .done }.count
        delivered.add(sent, ordering: .relaxed)
        for (delivery, outcome) in results {
            switch outcome {
            case .gone: logger.info("push subscription gone", ["subscription.id": String(delivery.subscriptionID)])
            case let .drop(why): logger.warning("push not delivered", ["subscription.id": String(delivery.subscriptionID), "error": why])
            default: break
            }
        }
        return true
    }

    /// Encrypts, signs and posts one delivery.
    func send(_ delivery: PushDelivery, to subscription: PushSubscription?, contact: String) async -> Outcome {
        guard let subscription else { return .done }
        let now = Timestamp.now().milliseconds
        guard now < delivery.expiresAt else { return .drop("its time to live passed before the push service took it") }
        do {
            let url = try HTTPClientURL(subscription.endpoint)
            guard let p256dh = WebPushCrypto.base64URLDecode(subscription.p256dh),
                  let auth = WebPushCrypto.base64URLDecode(subscription.auth) else { return .drop("the subscription's keys do not decode") }
            let body = try WebPushCrypto.encrypt(Array(delivery.payload.utf8), p256dh: p256dh, auth: auth)
            let remaining = max(0, (delivery.expiresAt - now) / 1000)
            var headers = HTTPHeaders()
            headers.set("Content-Type", "application/octet-stream")
            headers.set("Content-Encoding", "aes128gcm")
            headers.set("TTL", String(remaining))
            headers.set("Urgency", delivery.urgency)
            headers.set("Authorization", try vapid.authorization(for: url, contact: contact))
            let response = try await client.send(HTTPClientRequest(method: .POST, url: url, headers: headers, body: body,
                                                                   timeout: limits.requestTimeout))
            switch response.status {
            case 200..<300: return .done
            case 404, 410: return .gone
            case 429, 500..<600:
                let retryAfter = response.headers["Retry-After"].flatMap { Int64($0.trimmingCharacters(in: " ")) }
                return retry(delivery, now: now, after: retryAfter.map { $0 * 1000 }, why: "the push service answered \(response.status)")
            default:
                return .drop("the push service answered \(response.status)")
            }
        } catch let error as HTTPClientError {
            if error.code == .refusedDestination || error.code == .invalidURL { return .drop(error.message) }
            return retry(delivery, now: now, after: nil, why: error.message)
        } catch {
            return .drop(String(describing: error))
        }
    }

    /// Another try after the service's `Retry-After` or a doubling back-off, while the TTL lasts.
    func retry(_ delivery: PushDelivery, now: Int64, after: Int64?, why: String) -> Outcome {
        let backoff = min(limits.maxBackoffMillis, limits.firstBackoffMillis << min(Int64(delivery.attempts), 20))
        let at = now + max(after ?? 0, backoff)
        guard at < delivery.expiresAt else { return .drop("\(why); no time left to try again") }
        return .retry(at, why)
    }

    /// After a round that took `storeTime` (its reads, its write and what it did between them),
    /// waits so that under load the worker keeps to about `storeShare` of the time: (its time) ×
    /// (1 / share − 1) × (the fraction of the time since its last round that others kept the
    /// writer busy). Idle server: no wait.
    func pace(storeTime: UInt64) async {
        let now = MonotonicClock.nanoseconds()
        let busy = store.foregroundBusyNanoseconds
        let pause = pacing.withLock { p -> Double in
            defer { p = (now, busy) }
            guard p.at > 0, now > p.at, busy >= p.busy else { return 0 }
            let load = min(1, Double(busy - p.busy) / Double(now - p.at))
            return min(Double(storeTime) * (1 / limits.storeShare - 1) * load, 2e9)
        }
        guard pause >= 1_000_000 else { return }
        try? await Task.sleep(for: .nanoseconds(Int64(pause)))
    }

    /// Waits, up to a quarter second, while writes people wait for are queued at the store.
    func yieldToForeground() async {
        var waited = 0
        while store.queueDepth > 0, waited < 50 {
            try? await Task.sleep(for: .milliseconds(5))
            waited += 1
        }
    }
}

/// The worker as a module service, on its background-priority thread.
struct PushService: ModuleService {
    let worker: PushWorker
    let executor: BackgroundExecutor
    var name: String { "push.worker" }
    func run() async throws {
        try await withTaskExecutorPreference(executor) { try await worker.run() }
    }
}
