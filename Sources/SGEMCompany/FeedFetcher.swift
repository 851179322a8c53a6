import Synchronization
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Fetches the company feeds through the shared outbound `HTTPClient`: every feed at once, with
/// the validators of its last good answer (`If-None-Match`, `If-Modified-Since`), keeping the
/// newest entries of a good answer and the last good entries — with the reason in words — of a
/// failed one. Rounds never overlap: one asked for while another runs starts after it.
/// Several instances on one database fetch once per interval between them (`rounds`); a round
/// asked for at once (the list changed) runs on the instance asked.
final class FeedFetcher: Sendable {
    /// The rounds' name among the periodic jobs.
    static let job = "company.feeds"
    /// Largest feed document read.
    static let maxBytes = 2 * 1024 * 1024
    /// Entries kept per feed.
    static let maxEntries = 20
    /// Feeds fetched at once.
    static let maxConcurrentFetches = 2

    let repository: FeedRepository
    /// The shared client, looked up when a round runs (the system module publishes it).
    let client: @Sendable () -> HTTPClient?
    /// The time one feed's fetch may take.
    let timeout: Duration
    let logger: Logger
    /// Who fetches when several instances share the database, looked up when a round runs (the
    /// system module publishes it); nil: this instance, every time.
    let rounds: @Sendable () -> (any PeriodicRounds)?
    private let lastRound = Mutex<Task<Void, Never>?>(nil)
    /// What `wake()` signals and the scheduled service waits on between rounds.
    let wakeup = WakeSignal()
    /// Scheduled rounds this instance looked at, and those it left to another instance (tests).
    let scheduledRounds = Atomic<Int>(0)
    let skippedRounds = Atomic<Int>(0)

    init(repository: FeedRepository, timeout: Duration, logger: Logger, client: @escaping @Sendable () -> HTTPClient?,
         rounds: @escaping @Sendable () -> (any PeriodicRounds)? = { nil }) {
        self.repository = repository
        self.timeout = timeout
        self.logger = logger
        self.client = client
        self.rounds = rounds
    }

    /// Asks the scheduled service for a round now (the feed list changed).
    func wake() { wakeup.signal() }

    /// Fetches every feed now and records the outcomes; returns when they are stored. Other
    /// instances count their interval from this round. Cancelling the caller cancels the
    /// round's requests.
    func refresh() async {
        do {
            try await rounds()?.record(FeedFetcher.job)
        } catch {
            logger.error("company feed round not recorded", ["error": String(describing: error)])
        }
        await fetchRound()
    }

    /// A scheduled round: fetches unless another instance fetched less than `interval` ago (or
    /// is deciding to at this moment).
    func refreshIfDue(every interval: Duration) async {
        defer { scheduledRounds.add(1, ordering: .releasing) }
        if let rounds = rounds() {
            do {
                guard try await rounds.claim(FeedFetcher.job, every: interval) else {
                    skippedRounds.add(1, ordering: .relaxed)
                    return
                }
            } catch {
                logger.error("company feed round not claimed", ["error": String(describing: error)])
                return
            }
        }
        await fetchRound()
    }

    private func fetchRound() async {
        let round = lastRound.withLock { last -> Task<Void, Never> in
            let previous = last
            let next = Task { [self] in
                await previous?.value
                await fetchAll()
            }
            last = next
            return next
        }
        await withTaskCancellationHandler { await round.value } onCancel: { round.cancel() }
    }

    /// The scheduled service: a round at start, then one every `interval` or when woken.
    func service(every interval: Duration) -> any ModuleService {
        FeedService(fetcher: self, interval: interval)
    }

    private func fetchAll() async {
        let targets: [FeedTarget]
        do { targets = try await repository.targets() } catch {
            logger.error("company feeds could not be listed", ["error": String(describing: error)])
            return
        }
        guard !targets.isEmpty else { return }
        guard let client = client() else {
            logger.error("company feeds not fetched: no outbound HTTP client", [:])
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, target) in targets.enumerated() {
                // The client's threads are shared (translation uses them too): a few slow feeds
                // must not hold them all, nor make the others wait past their own timeout.
                if index >= FeedFetcher.maxConcurrentFetches { await group.next() }
                group.addTask { [self] in
                    let outcome = await fetch(target, client: client)
                    if Task.isCancelled { return }
                    do {
                        try await record(outcome, for: target)
                    } catch {
                        logger.error("company feed outcome not stored", ["feed.url": target.url, "error": String(describing: error)])
                    }
                }
            }
        }
    }

    /// What one fetch came to.
    enum Outcome: Sendable, Equatable {
        case notModified(etag: String?, lastModified: String?)
        case fetched(ParsedFeed, etag: String?, lastModified: String?)
        case failed(String)
    }

    /// Asks for one feed and reads the answer; every failure becomes words.
    func fetch(_ target: FeedTarget, client: HTTPClient) async -> Outcome {
        var headers = HTTPHeaders([("Accept", "application/rss+xml, application/atom+xml, application/rdf+xml;q=0.9, application/xml;q=0.8, text/xml;q=0.8, */*;q=0.1")])
        if let etag = target.etag { headers.add("If-None-Match", etag) }
        if let lastModified = target.lastModified { headers.add("If-Modified-Since", lastModified) }
        let response: HTTPClientResponse
        do {
            var request = try HTTPClientRequest(url: target.url, headers: headers, timeout: timeout)
            request.maxResponseBytes = FeedFetcher.maxBytes
            response = try await client.send(request)
        } catch let error as HTTPClientError {
            return .failed(FeedFetcher.words(for: error))
        } catch {
            return .failed("the feed could not be fetched")
        }
        let etag = response.headers["ETag"].flatMap(FeedFetcher.validator)
        let lastModified = response.headers["Last-Modified"].flatMap(FeedFetcher.validator)
        switch response.status {
        case 304: return .notModified(etag: etag, lastModified: lastModified)
        case 200: break
        default: return .failed(FeedFetcher.words(forStatus: response.status))
        }
        guard response.body.count <= FeedFetcher.maxBytes else {
            return .failed("the feed is larger than \(FeedFetcher.maxBytes / 1024 / 1024) MiB")
        }
        do {
            let charset = response.headers["Content-Type"].flatMap(FeedEncoding.charset(ofContentType:))
            let feed = try FeedParser.parse(response.body, base: response.url, charset: charset, maxEntries: FeedFetcher.maxEntries)
            return .fetched(feed, etag: etag, lastModified: lastModified)
        } catch {
            return .failed(error.message)
        }
    }

    private func record(_ outcome: Outcome, for target: FeedTarget) async throws {
        let now = Timestamp.now()
        switch outcome {
        case let .notModified(etag, lastModified):
            try await repository.recordNotModified(target, etag: etag, lastModified: lastModified, at: now)
        case let .fetched(feed, etag, lastModified):
            try await repository.recordSuccess(target, feed: feed, etag: etag, lastModified: lastModified, at: now)
        case let .failed(reason):
            logger.warning("company feed could not be read", ["feed.url": target.url, "reason": reason])
            try await repository.recordFailure(target, reason: reason, at: now)
        }
    }

    /// A validator worth sending back: short, visible ASCII.
    static func validator(_ value: String) -> String? {
        guard !value.isEmpty, value.utf8.count <= 256, value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return value
    }

    /// A client failure as an admin would say it.
    static func words(for error: HTTPClientError) -> String {
        switch error.code {
        case .invalidURL: "the address is not a usable http or https URL"
        case .resolveFailed: "the server's name could not be found"
        case .connectFailed: "the server could not be reached"
        case .connectTimeout, .timeout: "the server took too long to answer"
        case .tlsFailed: "the secure connection failed (is the server's certificate valid?)"
        case .tooLarge: "the feed is larger than \(maxBytes / 1024 / 1024) MiB"
        case .badResponse, .invalidRequest: "the server's answer could not be read"
        case .tooManyRedirects: "the server redirected too many times"
        case .redirectRefused: "the server redirected to another site, which is not followed"
        case .refusedDestination: FeedFetcher.refusedWords
        case .cancelled: "the fetch was interrupted"
        }
    }

    /// A destination the outbound policy refused: the same words whether anything listens there
    /// or not (nothing was connected to).
    static let refusedWords = "this address is inside the company's network or on this server, so sgem-server will not fetch it. "
        + "An administrator can allow it with --outbound-allow"

    static func words(forStatus status: Int) -> String {
        let meaning: [Int: String] = [401: "login required", 403: "forbidden", 404: "not found", 410: "gone", 429: "too many requests",
                                      500: "server error", 502: "bad gateway", 503: "unavailable", 504: "gateway timeout"]
        if (200..<300).contains(status) { return "the server answered \(status) without a feed" }
        return "the server answered \(status)" + (meaning[status].map { " (\($0))" } ?? "")
    }
}

/// The feed fetcher on its schedule: a round at start, then one every `interval` (each left to
/// another instance that fetched within the interval) or as soon as it is woken, until shutdown.
struct FeedService: ModuleService {
    let fetcher: FeedFetcher
    let interval: Duration
    var name: String { FeedFetcher.job }

    func run() async throws {
        var woken = false
        while !Task.isCancelled {
            if woken { await fetcher.refresh() } else { await fetcher.refreshIfDue(every: interval) }
            woken = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try? await Task.sleep(for: interval)
                    return false
                }
                group.addTask {
                    await fetcher.wakeup.wait()
                    return !Task.isCancelled
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }
    }
}

/// A wake-up call one waiter awaits; a call made while nobody waits is kept for the next wait.
final class WakeSignal: Sendable {
    private let state = Mutex<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// Wakes the waiter, or the next one to wait.
    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else { s.pending = true; return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns when signalled (at once when a signal is pending) or when the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.pending || Task.isCancelled { s.pending = false; return true }
                    s.waiter = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            state.withLock { s -> CheckedContinuation<Void, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }?.resume()
        }
    }
}
