import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import Synchronization

/// The translation module's service: the configured provider behind the cache. Every caller —
/// the routes, the chat worker, the admin's "test connection" — goes through `translate`, so the
/// cache, the same-language shortcut, the shield for mentions, links and code, and the
/// coalescing of identical calls apply everywhere.
final class TranslationDesk: Sendable {
    /// A translation and how it was obtained; encoded as `POST /translate` answers,
    /// `{text, source, target, provider, cached}`.
    struct Outcome: Sendable, Equatable, Encodable {
        var text: String
        var source: String
        var target: String
        var provider: String
        var cached: Bool
        /// True when the text was already in the target language (no provider call was made
        /// for it, or the provider said so): `text` is the original.
        var sameLanguage: Bool { source == target }
    }

    let store: Store
    let settings: any RuntimeSettings
    let client: HTTPClient?
    /// The client of background work (the chat worker): its threads run at a lower priority.
    let backgroundClient: HTTPClient?
    let logger: Logger
    let metrics: TranslationMetrics
    /// Calls under way, by cache key: a second caller for the same text waits for the first.
    private let inflight = Mutex<[CacheKey: Task<Outcome, any Error>]>([:])
    /// The provider configuration as last read from the store, kept until a change drops it:
    /// this desk's own (`update`), or any instance's or the command line's, which the journal
    /// brings (`ChatTranslator.watch`). `generation` counts the drops, so that a read begun
    /// before one never keeps what it read.
    private let configured = Mutex<(settings: ProviderSettings?, generation: Int)>((nil, 0))
    /// The languages of the configured provider, asked once an hour.
    private let languageList = Mutex<(settings: ProviderSettings, at: UInt64, list: [TranslationLanguage])?>(nil)

    init(store: Store, settings: any RuntimeSettings, client: HTTPClient?, backgroundClient: HTTPClient? = nil, logger: Logger,
         metrics: TranslationMetrics) {
        self.store = store
        self.settings = settings
        self.client = client
        self.backgroundClient = backgroundClient
        self.logger = logger
        self.metrics = metrics
    }

    // MARK: Configuration

    static let providerKey = "translation.provider"
    static let urlKey = "translation.url"
    static let apiKeyKey = "translation.api_key"
    static let timeoutKey = "translation.timeout_ms"

    /// The provider settings as stored now.
    func providerSettings() async throws -> ProviderSettings {
        let (kept, generation) = configured.withLock { ($0.settings, $0.generation) }
        if let kept { return kept }
        let provider = try await settings.value(TranslationDesk.providerKey) ?? "none"
        let url = try await settings.value(TranslationDesk.urlKey) ?? ""
        let key = try await settings.value(TranslationDesk.apiKeyKey)
        let timeout = Int(try await settings.value(TranslationDesk.timeoutKey) ?? "") ?? 10_000
        let value = ProviderSettings(provider: provider, url: url, apiKey: key, timeout: .milliseconds(timeout))
        configured.withLock { if $0.generation == generation { $0.settings = value } }
        return value
    }

    /// Forgets the remembered configuration (a translation setting changed).
    func settingsChanged() {
        configured.withLock {
            $0.settings = nil
            $0.generation += 1
        }
        languageList.withLock { $0 = nil }
    }

    /// Why translation cannot run with `s`, in words; nil when it can.
    static func missing(_ s: ProviderSettings) -> String? {
        switch s.provider {
        case "none": "Translation is switched off. An admin can choose a provider in Settings."
        case "libretranslate" where s.url.isEmpty: "Translation is not set up yet: an admin needs to enter the LibreTranslate server's address in Settings."
        case "deepl" where (s.apiKey ?? "").isEmpty: "Translation is not set up yet: DeepL needs an API key, which an admin can enter in Settings."
        case "yandex" where (s.apiKey ?? "").isEmpty: "Translation is not set up yet: Yandex needs an API key, which an admin can enter in Settings."
        default: nil
        }
    }

    /// The translator for `s`; `translation_disabled` when it is not usable.
    func translator(_ s: ProviderSettings, background: Bool = false) throws(TranslationFailure) -> any Translator {
        if let problem = TranslationDesk.missing(s) { throw TranslationFailure(.translationDisabled, problem) }
        guard let client = background ? backgroundClient ?? client : client else {
            throw TranslationFailure(.providerUnavailable, "The server has no outbound HTTP client.")
        }
        return Providers.translator(for: s, client: client)
    }

    // MARK: Translating

    /// Translates `text` into `target` (from `source`, or the language the provider detects):
    /// from the cache when it can, with no call at all when the text is known to be in the
    /// target language already or has no words, else through the provider, whose answer is
    /// cached before this returns.
    func translate(_ text: String, source: String?, target: String) async throws -> Outcome {
        let s = try await providerSettings()
        let translator = try translator(s)
        let provider = s.provider
        if let source, source == target {
            return Outcome(text: text, source: source, target: target, provider: provider, cached: false)
        }
        let shield = TextShield(text)
        if !shield.hasWords {
            return Outcome(text: text, source: target, target: target, provider: provider, cached: false)
        }
        let key = TranslationDesk.key(provider: provider, source: source ?? "auto", target: target, text: text)
        let textKey = TranslationDesk.key(provider: provider, source: "", target: "", text: text)
        let now = Timestamp.now()
        let known = try await store.read { db -> (TranslationRepository.Entry?, String?) in
            if let hit = try TranslationRepository.cached(key, in: db) { return (hit, nil) }
            return (nil, source == nil ? try TranslationRepository.knownSource(textKey: textKey, in: db) : nil)
        }
        if let hit = known.0 {
            metrics.hits.increment()
            try await store.write { db in try TranslationRepository.touch(key, at: now, in: db) }
            return Outcome(text: hit.translated, source: hit.source, target: target, provider: provider, cached: true)
        }
        if let detected = known.1, detected == target {
            metrics.hits.increment()
            return Outcome(text: text, source: detected, target: target, provider: provider, cached: true)
        }
        let task = inflight.withLock { calls -> (Task<Outcome, any Error>, Bool) in
            if let running = calls[key] { return (running, false) }
            let store = self.store, metrics = self.metrics
            let started = Task<Outcome, any Error> {
                let entry = try await TranslationDesk.ask(translator, text, shield: shield, source: source, target: target, metrics: metrics)
                try await store.write { db in
                    try TranslationRepository.store(key: key, target: target, entry: entry, textKey: source == nil ? textKey : nil,
                                                    at: Timestamp.now(), in: db)
                }
                return Outcome(text: entry.translated, source: entry.source, target: target, provider: provider, cached: false)
            }
            calls[key] = started
            return (started, true)
        }
        defer { if task.1 { inflight.withLock { _ = $0.removeValue(forKey: key) } } }
        return try await task.0.value
    }

    /// One call to the provider: the shielded text out, the protected pieces back in, the
    /// detected language as an ISO 639-1 code (the original text when it was already in `target`).
    static func ask(_ translator: any Translator, _ text: String, shield: TextShield, source: String?, target: String,
                    metrics: TranslationMetrics) async throws -> TranslationRepository.Entry {
        metrics.calls.increment()
        let answer: TranslationResult
        do {
            answer = try await translator.translate(TranslationRequest(text: shield.masked, source: source, target: target))
        } catch {
            metrics.failures.increment()
            throw error
        }
        let detected = TranslationDesk.languageCode(answer.source) ?? source ?? "und"
        return TranslationRepository.Entry(source: detected, translated: detected == target ? text : shield.restore(answer.text))
    }

    /// One text for one language, in a batch.
    struct BatchItem: Sendable, Hashable {
        let text: String
        let target: String
    }

    /// Translates `items` (source detected) the way `translate` does one — cache, same-language
    /// shortcuts, the shield — with one read for the whole batch, each distinct text and target
    /// sent to the provider once, at most `concurrency` calls at a time, and one write that
    /// stores the new translations and runs `record` with what `prepare` made of the outcomes
    /// (the chat worker's events, built before the write) in the same transaction. Items that
    /// failed are absent from `outcomes`; `failed` has their indexes.
    func translateBatch<Prepared: Sendable>(_ items: [BatchItem], concurrency: Int,
                                            prepare: @Sendable ([Int: Outcome]) -> Prepared,
                                            record: @escaping @Sendable (Database, Prepared) throws -> Void) async throws
        -> BatchResult {
        let s = try await providerSettings()
        let translator = try translator(s, background: true)
        let provider = s.provider
        let keys = items.map { TranslationDesk.key(provider: provider, source: "auto", target: $0.target, text: $0.text) }
        let textKeys = items.map { TranslationDesk.key(provider: provider, source: "", target: "", text: $0.text) }
        let (hits, known, readNanos) = try await store.read { db in
            let started = MonotonicClock.nanoseconds()
            let hits = try TranslationRepository.cached(Array(Set(keys)), in: db)
            let known = try TranslationRepository.knownSources(Array(Set(textKeys)), in: db)
            return (hits, known, MonotonicClock.nanoseconds() - started)
        }
        var outcomes: [Int: Outcome] = [:]
        var pending: [CacheKey: [Int]] = [:]
        for (i, item) in items.enumerated() {
            if let hit = hits[keys[i]] {
                outcomes[i] = Outcome(text: hit.translated, source: hit.source, target: item.target, provider: provider, cached: true)
            } else if let detected = known[textKeys[i]], detected == item.target {
                outcomes[i] = Outcome(text: item.text, source: detected, target: item.target, provider: provider, cached: true)
            } else if !TextShield(item.text).hasWords {
                outcomes[i] = Outcome(text: item.text, source: item.target, target: item.target, provider: provider, cached: false)
            } else {
                pending[keys[i], default: []].append(i)
            }
        }
        metrics.hits.increment(by: Double(outcomes.count))
        // Each distinct text and language once, `concurrency` at a time.
        typealias Answer = (key: CacheKey, result: Result<TranslationRepository.Entry, any Error>)
        var answers: [CacheKey: TranslationRepository.Entry] = [:]
        var failed: [Int: any Error] = [:]
        let metrics = self.metrics
        await withTaskGroup(of: Answer.self) { group in
            var running = 0
            func collect(_ answer: Answer) {
                switch answer.result {
                case let .success(entry): answers[answer.key] = entry
                case let .failure(error): for i in pending[answer.key] ?? [] { failed[i] = error }
                }
            }
            for (key, indexes) in pending {
                if running >= concurrency, let done = await group.next() {
                    collect(done)
                    running -= 1
                }
                let item = items[indexes[0]]
                group.addTask {
                    do {
                        let entry = try await TranslationDesk.ask(translator, item.text, shield: TextShield(item.text), source: nil,
                                                                  target: item.target, metrics: metrics)
                        return (key, .success(entry))
                    } catch {
                        return (key, .failure(error))
                    }
                }
                running += 1
            }
            for await done in group { collect(done) }
        }
        for (key, entry) in answers {
            for i in pending[key] ?? [] {
                outcomes[i] = Outcome(text: entry.translated, source: entry.source, target: items[i].target, provider: provider, cached: false)
            }
        }
        // Each text's detected language once, with the first of its translations.
        var sourcesWritten = Set<CacheKey>()
        let fresh = answers.compactMap { key, entry -> (CacheKey, CacheKey?, String, TranslationRepository.Entry)? in
            guard let i = pending[key]?.first else { return nil }
            return (key, sourcesWritten.insert(textKeys[i]).inserted ? textKeys[i] : nil, items[i].target, entry)
        }
        let now = Timestamp.now()
        guard !fresh.isEmpty || !outcomes.isEmpty else {
            return BatchResult(outcomes: outcomes, failed: failed, readNanos: readNanos, writeNanos: 0)
        }
        let prepared = prepare(outcomes)
        let writeNanos = try await store.write(background: true) { db in
            let started = MonotonicClock.nanoseconds()
            for (key, textKey, target, entry) in fresh {
                try TranslationRepository.store(key: key, target: target, entry: entry, textKey: textKey, at: now, in: db)
            }
            try record(db, prepared)
            return MonotonicClock.nanoseconds() - started
        }
        return BatchResult(outcomes: outcomes, failed: failed, readNanos: readNanos, writeNanos: writeNanos)
    }

    /// What `translateBatch` did: the outcomes by item, the items that failed (with why), and
    /// the time its read and its write took on the store's threads.
    struct BatchResult: Sendable {
        let outcomes: [Int: Outcome]
        let failed: [Int: any Error]
        let readNanos: UInt64
        let writeNanos: UInt64
    }

    /// The cached translations of `texts` into `target` (detected source), by text; texts not
    /// cached are absent. Rows that say "already in the target language" come back as such.
    func cachedTranslations(of texts: [String], target: String) async throws -> (provider: String, found: [String: Outcome])? {
        let s = try await providerSettings()
        guard TranslationDesk.missing(s) == nil else { return nil }
        let keys = texts.map { TranslationDesk.key(provider: s.provider, source: "auto", target: target, text: $0) }
        let rows = try await store.read { db in try TranslationRepository.cached(keys, in: db) }
        var found: [String: Outcome] = [:]
        for (text, key) in zip(texts, keys) {
            guard let row = rows[key] else { continue }
            found[text] = Outcome(text: row.translated, source: row.source, target: target, provider: s.provider, cached: true)
        }
        return (s.provider, found)
    }

    /// The configured provider's languages, asked at most once an hour.
    func languages() async throws -> (provider: String, languages: [TranslationLanguage]) {
        let s = try await providerSettings()
        guard TranslationDesk.missing(s) == nil else { return ("none", []) }
        let now = MonotonicClock.nanoseconds()
        if let l = languageList.withLock({ $0 }), l.settings == s, now - l.at < 3_600_000_000_000 { return (s.provider, l.list) }
        let list = try await translator(s).languages()
        languageList.withLock { $0 = (s, now, list) }
        return (s.provider, list)
    }

    /// A live check of the configured provider, in words: a short sentence translated from
    /// English into Spanish (or Spanish into English for a provider that detects English as
    /// the target), never from the cache.
    func test() async -> (ok: Bool, message: String) {
        do {
            let s = try await providerSettings()
            let translator = try translator(s)
            let answer = try await translator.translate(TranslationRequest(text: "Good morning", source: "en", target: "es"))
            let name = TranslationDesk.providerNames[s.provider] ?? s.provider
            return (true, "\(name) answered: “Good morning” in Spanish is “\(answer.text)”.")
        } catch let failure as TranslationFailure {
            return (false, failure.message)
        } catch {
            return (false, "The settings could not be read: \(error)")
        }
    }

    static let providerNames = ["libretranslate": "LibreTranslate", "deepl": "DeepL", "yandex": "Yandex Translate", "none": "No provider"]

    // MARK: Helpers

    /// SHA-256 of the four parts, each ended by a zero byte so no two tuples collide.
    static func key(provider: String, source: String, target: String, text: String) -> CacheKey {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 32)
        for part in [provider, source, target, text] {
            bytes.append(contentsOf: part.utf8)
            bytes.append(0)
        }
        return Crypto.sha256(bytes)
    }

    /// A provider's language tag as the ISO 639-1 code the contract speaks (`EN-GB` → `en`).
    static func languageCode(_ tag: String) -> String? {
        let code = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
        guard (2...3).contains(code.count), code.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        return code
    }

    /// Whether `code` looks like a language code a client may ask for: `es`, `pt-BR`, `zh-Hant`.
    static func isLanguageCode(_ code: String) -> Bool {
        let parts = code.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), (2...3).contains(parts[0].count),
              parts[0].allSatisfy({ $0.isASCII && $0.isLowercase }) else { return false }
        if parts.count == 2 { return (2...4).contains(parts[1].count) && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        return true
    }
}

/// The module's counters, on `/metrics`.
struct TranslationMetrics: Sendable {
    let calls: Counter
    let hits: Counter
    let failures: Counter
    let published: Counter

    init(_ registry: MetricsRegistry) {
        calls = registry.counter("sgem_translation_provider_calls_total", help: "Calls made to the translation provider.")
        hits = registry.counter("sgem_translation_cache_hits_total", help: "Translations answered from the cache.")
        failures = registry.counter("sgem_translation_provider_failures_total", help: "Provider calls that failed.")
        published = registry.counter("sgem_translation_chat_events_total",
                                      help: "Translations delivered to readers of chats in translation mode.")
    }
}
