#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `system` module: health, readiness, Prometheus metrics, the OpenAPI document, the
/// runtime settings service, the durable realtime event journal, and the `status` admin verb.
public struct SystemModule: Module {
    public let id: ModuleID = "system"
    let version: String
    let startedAt = MonotonicClock.nanoseconds()

    /// A scraper outside this machine reads `/metrics` with this bearer token.
    static let metricsToken = Setting("metrics-token", .string, default: nil,
                                      "bearer token that lets a scraper on another machine read /metrics (loopback needs none)",
                                      check: { $0.utf8.count >= 16 ? nil : "must be at least 16 characters" })

    public init(version: String) { self.version = version }

    public var settings: [Setting] { [SystemModule.metricsToken, OutboundSettings.caFile, OutboundSettings.allow] }

    public func registerMigrations(_ migrations: inout MigrationList) {
        // PostgreSQL starts from the final schema (created_at in epoch milliseconds at once).
        migrations.add("system.001_instance", sqlite: """
            CREATE TABLE system_instance (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                instance_id TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            INSERT INTO system_instance (id, instance_id, created_at)
                VALUES (1, lower(hex(randomblob(8))), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
            """, postgresql: """
            CREATE TABLE system_instance (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                instance_id TEXT NOT NULL,
                created_at BIGINT
            );
            INSERT INTO system_instance (id, instance_id, created_at)
                VALUES (1, substr(replace(gen_random_uuid()::text, '-', ''), 1, 16), (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
            """)
        SystemRepository.registerMigrations(&migrations)
        JournalRepository.registerMigrations(&migrations)
        JobRunRepository.registerMigrations(&migrations)
        JournalRepository.registerLaterMigrations(&migrations)
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let started = startedAt
        context.metrics.gauge("sgem_process_resident_memory_bytes", help: "Resident set size of the process.")
            .sample { Double(sgem_resident_bytes()) }
        context.metrics.gauge("sgem_process_open_fds", help: "Open file descriptors of the process.")
            .sample { Double(sgem_open_fd_count()) }
        context.metrics.gauge("sgem_process_uptime_seconds", help: "Seconds since the server started.")
            .sample { Double(MonotonicClock.nanoseconds() - started) / 1e9 }
        let store = context.store
        context.metrics.gauge("sgem_store_database_bytes", help: "Size of the database file, WAL excluded.")
            .sample { Double(fileSize(store.path)) }
        let journal = StoredEventJournal(store: { store }, doorbell: store.doorbell(channel: StoredEventJournal.channel))
        let settings = StoredRuntimeSettings(openStore: { store }, declared: context.declaredRuntimeSettings, secrets: context.secrets,
                                             journal: journal)
        try await SystemModule.sealSecrets(settings, logger: context.logger)
        context.services.register((any RuntimeSettings).self, settings)
        context.services.register((any EventJournal).self, journal)
        // One outbound HTTP client for every module (translation providers, feeds): its own
        // threads, bounded connections per origin, never the event loops, one outbound policy.
        var outbound = OutboundSettings.client(context.configuration)
        outbound.userAgent = "sgem-server/\(version)"
        let client = try HTTPClient(configuration: outbound)
        context.services.register(HTTPClient.self, client)
        // Periodic jobs run one round per interval across the instances serving this database.
        context.services.register((any PeriodicRounds).self, StoredPeriodicRounds(store: store))
        return SystemRuntime(context: context, version: version, metricsToken: context.configuration.string(SystemModule.metricsToken),
                             client: client)
    }

    /// Seals the secrets an older release kept in clear, and says once which stored secrets do
    /// not open under this key file (missing or replaced since they were set).
    static func sealSecrets(_ settings: StoredRuntimeSettings, logger: Logger) async throws {
        let sealed = try await settings.sealClearSecrets()
        if !sealed.isEmpty { logger.notice("sealed secrets kept in clear", ["settings": sealed.joined(separator: ",")]) }
        let lost = try await settings.secretsToReenter()
        if !lost.isEmpty {
            logger.warning("secrets sealed under another key must be entered again",
                           ["settings": lost.joined(separator: ","), "key_file": settings.secrets.keyFile])
        }
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        // Verbs that record a change record its event in the same journal the server uses.
        let journal = StoredEventJournal(store: context.openStore)
        context.services.register((any EventJournal).self, journal)
        context.services.register((any RuntimeSettings).self,
                                  StoredRuntimeSettings(openStore: context.openStore, declared: context.declaredRuntimeSettings,
                                                        secrets: context.secrets, journal: journal))
        let version = self.version
        commands.register(Command("status", summary: "show the database, its migrations and the server's version",
                                  options: [.flag("json", "print JSON")]) { args, ctx in
            let store = try await context.openStore()
            let applied = try await store.appliedMigrations()
            let instance = try await SystemRepository(store: store).instance()
            let size = store.location.isPostgreSQL ? Int(try await store.databaseBytes()) : fileSize(store.path)
            if args.has("json") {
                let doc: JSONValue = [
                    "version": .string(version),
                    "database": .string(store.path),
                    "databaseBytes": .number(Double(size)),
                    "instanceId": instance.map { JSONValue.string($0.id) } ?? .null,
                    "createdAt": instance?.createdAt.map { JSONValue.string($0.rfc3339()) } ?? .null,
                    "migrations": .array(applied.map(JSONValue.string)),
                ]
                ctx.io.print(doc.serialized())
            } else {
                ctx.io.print("version      \(version)")
                ctx.io.print("database     \(store.path) (\(size) bytes)")
                ctx.io.print("instance     \(instance?.id ?? "not initialised")")
                ctx.io.print("created      \(instance?.createdAt?.rfc3339() ?? "-")")
                ctx.io.print("migrations   \(applied.count) applied")
                for id in applied { ctx.io.print("  \(id)") }
            }
        })
    }
}

/// The system module's routes (`SystemController`) and the outbound client it shuts down.
struct SystemRuntime: ModuleRuntime {
    let context: ModuleContext
    let version: String
    let metricsToken: String?
    /// The outbound client; shut down after every module's services stopped.
    let client: HTTPClient

    func shutdown() async { client.shutdown() }

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        SystemController(store: context.store, serviceGroup: context.serviceGroup, metrics: context.metrics, router: context.router,
                         version: version)
            .register(root: root, scrapers: root.group("", middleware: [MetricsAccess(token: metricsToken)]), routes: routes)
    }
}

/// `/metrics` is not public: the loopback interface (a scraper on the same machine), or a bearer
/// token when `--metrics-token` is set. Behind a trusted proxy the forwarded client address counts.
struct MetricsAccess: Middleware {
    let token: [UInt8]?

    init(token: String?) { self.token = token.map { Array($0.utf8) } }

    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        if MetricsAccess.isLoopback(request.clientAddress) && MetricsAccess.isLoopback(request.remoteAddress) {
            return try await next(request, context)
        }
        if let token, let header = request.headers["Authorization"], header.hasPrefix("Bearer "),
           Crypto.constantTimeEqual(Array(header.utf8.dropFirst(7)), token) {
            return try await next(request, context)
        }
        throw APIError.forbidden("metrics are readable from this machine, or with the metrics token")
    }

    static func isLoopback(_ address: String) -> Bool {
        address == "::1" || address.hasPrefix("127.") || address.hasPrefix("::ffff:127.")
    }
}

/// Size of a file in bytes, 0 when it cannot be read.
func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
