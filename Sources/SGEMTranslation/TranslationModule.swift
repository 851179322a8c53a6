import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `translation` module: providers chosen by admins at run time (LibreTranslate, DeepL,
/// Yandex v1.5, none) behind a cache; messages, notices and any text translated on request;
/// chats shown in the reader's language as messages arrive. Publishes `ChatTranslations` for
/// messaging's lists; reads messages and notices through the `MessageLookup` and `NoticeLookup`
/// those modules publish (it boots after them; its code imports neither).
public struct TranslationModule: Module {
    public let id: ModuleID = "translation"
    public var dependencies: [ModuleID] { ["system", "accounts", "notices", "messaging"] }

    /// The cache's bound; the least recently used translations go first past it.
    static let cacheMegabytes = Setting("translation-cache-mb", .int(1...65_536), default: "64",
                                        "megabytes of translations kept in the database's cache (least recently used go first)")
    /// Translation requests one person may make in a minute.
    static let perMinute = Setting("translation-per-minute", .int(1...100_000), default: "60",
                                   "translations one person may ask for in a minute (429 past it)")

    public init() {}

    public var auditEvents: [String] { ["translation.settings"] }

    public var settings: [Setting] { [TranslationModule.cacheMegabytes, TranslationModule.perMinute] }

    public var runtimeSettings: [RuntimeSetting] {
        [
            RuntimeSetting(TranslationDesk.providerKey, default: "libretranslate",
                           "which provider translates: libretranslate, deepl, yandex or none",
                           check: { ProviderSettings.names.contains($0) ? nil : "must be libretranslate, deepl, yandex or none" }),
            RuntimeSetting(TranslationDesk.urlKey, default: "", "the provider's address (LibreTranslate: required; DeepL, Yandex: empty for their own)",
                           check: { TranslationDesk.urlProblem($0) }),
            RuntimeSetting(TranslationDesk.apiKeyKey, secret: true, "the provider's API key (write-only)",
                           check: { $0.isEmpty || $0.utf8.count > 512 || $0.contains(where: \.isNewline) ? "must be 1 to 512 characters on one line" : nil }),
            RuntimeSetting(TranslationDesk.timeoutKey, default: "10000", "milliseconds to wait for the provider (500 to 60000)",
                           check: { Int($0).map { (500...60_000).contains($0) } == true ? nil : "must be a whole number from 500 to 60000" }),
        ]
    }

    public func registerMigrations(_ migrations: inout MigrationList) {
        TranslationRepository.registerMigrations(&migrations)
    }

    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "admin-translation", title: "Translation", titleES: "Traducción", route: "#/admin/translation",
                              script: "screens/admin-translation.js", order: 130, adminOnly: true))
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        TranslationCommands(context: context).register(&commands)
    }

    /// Publishes `ChatTranslations`; needs the system module's runtime settings, journal and
    /// outbound client, and the messages, notices, users and audit log of the modules it follows.
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let settings = try context.require((any RuntimeSettings).self)
        let journal = try context.require((any EventJournal).self)
        let peers = TranslationPeers(messages: try context.require((any MessageLookup).self),
                                     notices: try context.require((any NoticeLookup).self),
                                     directory: try context.require((any UserDirectory).self),
                                     audit: try context.require((any AuditTrail).self))
        let metrics = TranslationMetrics(context.metrics)
        // The chat worker's calls go through a client of its own whose threads, like the
        // worker's, run at background priority (SCHED_IDLE): translating never slows sending.
        let shared = try context.require(HTTPClient.self)
        var configuration = shared.configuration
        configuration.threadPriority = .background
        configuration.threads = 2
        let background = try HTTPClient(configuration: configuration)
        let desk = TranslationDesk(store: context.store, settings: settings, client: shared, backgroundClient: background,
                                   logger: context.logger, metrics: metrics)
        let chats = ChatTranslator(desk: desk, store: context.store, journal: journal, messages: peers.messages, logger: context.logger)
        try await chats.load()
        context.services.register((any ChatTranslations).self, chats)
        let megabytes = context.configuration.int(TranslationModule.cacheMegabytes)
        let limiter = TranslationLimiter(perMinute: context.configuration.int(TranslationModule.perMinute), store: context.store)
        return TranslationRuntime(desk: desk, chats: chats, registry: context.services, peers: peers, limiter: limiter,
                                  cacheBytes: megabytes * 1024 * 1024, logger: context.logger,
                                  executor: BackgroundExecutor(name: "translation"),
                                  rounds: context.services.resolve((any PeriodicRounds).self))
    }
}

/// What translation reads from the modules it boots after, resolved once at boot.
struct TranslationPeers: Sendable {
    let messages: any MessageLookup
    let notices: any NoticeLookup
    let directory: any UserDirectory
    let audit: any AuditTrail
}

struct TranslationRuntime: ModuleRuntime {
    let desk: TranslationDesk
    let chats: ChatTranslator
    let registry: ServiceRegistry
    let peers: TranslationPeers
    let limiter: TranslationLimiter
    let cacheBytes: Int
    let logger: Logger
    /// The chat worker's low-priority thread.
    let executor: BackgroundExecutor
    /// Who evicts from the cache when several instances share it (nil: this one).
    let rounds: (any PeriodicRounds)?

    func shutdown() async {
        desk.backgroundClient?.shutdown()
        executor.shutdown()
    }

    static let evictionInterval: Duration = .seconds(300)

    /// The translation section of the API: a reader's controllers, then the admin's.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let signedIn = routes.group("", middleware: [RequireUser(services: registry)])
        let translations = Translations(desk: desk, chats: chats, peers: peers, limiter: limiter)
        TranslationController(translations: translations).register(signedIn)
        ChatTranslationController(translations: translations).register(signedIn)
        TranslationSettingsController(desk: desk, audit: peers.audit)
            .register(routes.group("/admin/translation", middleware: [RequireAdmin(services: registry)]))
    }

    var services: [any ModuleService] {
        let (store, bound) = (desk.store, cacheBytes)
        return [
            ChatTranslationService(translator: chats, executor: executor),
            TranslationWatchService(translator: chats, watch: JournalWatch(journal: chats.journal, types: ChatTranslator.watched,
                                                                          logger: logger)),
            PeriodicJob(name: "translation.cache", every: TranslationRuntime.evictionInterval, logger: logger, rounds: rounds) {
                _ = try await TranslationRuntime.evict(store, bound: bound)
            },
        ]
    }

    /// Removes the least recently used translations until the cache holds at most 90 % of
    /// `bound` bytes (when it held more than `bound`); returns how many went.
    static func evict(_ store: Store, bound: Int) async throws -> Int {
        var removed = 0
        var size = try await store.read { db in try TranslationRepository.size(in: db) }
        guard size.bytes > bound else { return 0 }
        while size.bytes > bound * 9 / 10, size.entries > 0 {
            let average = max(1, size.bytes / max(1, size.entries))
            let batch = min(5_000, max(1, (size.bytes - bound * 9 / 10) / average + 1))
            removed += try await store.write { db in try TranslationRepository.evictOldest(batch, in: db) }
            size = try await store.read { db in try TranslationRepository.size(in: db) }
        }
        return removed
    }
}
