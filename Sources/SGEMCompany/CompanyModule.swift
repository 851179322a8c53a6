import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `company` module: the company's information (`/company`) and the company-wide settings
/// (holiday allowance, working days, registration, default language, time zone, absences,
/// carry-over).
public struct CompanyModule: Module {
    public let id: ModuleID = "company"

    public init() {}

    public var auditEvents: [String] { CompanyAudit.events }

    public func registerMigrations(_ migrations: inout MigrationList) {
        // One row; NULL columns mean "the default", so defaults can change in code.
        // PostgreSQL starts from the module's final schema (what 001 to 006 leave on SQLite:
        // the settings row, the profile row, the feeds), so its forms of 002 to 006 are empty.
        migrations.add("company.001_settings", sqlite: """
            CREATE TABLE company_settings (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                default_allowance_days INTEGER,
                working_days TEXT,
                registration TEXT,
                registration_domain TEXT,
                default_language TEXT,
                updated_at TEXT
            );
            INSERT INTO company_settings (id) VALUES (1);
            """, postgresql: CompanyRepository.postgresqlBaseline + FeedRepository.postgresqlBaseline)
        CompanyRepository.registerMigrations(&migrations)
        FeedRepository.registerMigrations(&migrations)
        // The contact push services are given (VAPID sub); NULL: none.
        migrations.add("company.006_push_contact", sqlite: """
            ALTER TABLE company_settings ADD COLUMN push_contact TEXT;
            """, postgresql: "")
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let repository = CompanyRepository(store: context.store)
        context.services.register((any CompanySettingsProvider).self, repository)
        context.services.register((any CompanyNameProvider).self, repository)
        let services = context.services
        // The outbound client is looked up per round: the system module publishes it, and the
        // company module does not depend on it (tests boot company without system).
        let fetcher = FeedFetcher(repository: FeedRepository(store: context.store),
                                  timeout: context.configuration.duration(CompanyModule.feedTimeout),
                                  logger: context.logger, client: { services.resolve(HTTPClient.self) },
                                  rounds: { services.resolve((any PeriodicRounds).self) })
        // Only this module can name the type: tests resolve it to run a round and wait for it.
        context.services.register(FeedFetcher.self, fetcher)
        return CompanyRuntime(repository: repository, feeds: fetcher.repository, fetcher: fetcher,
                              feedInterval: context.configuration.duration(CompanyModule.feedInterval),
                              registry: context.services, logger: context.logger)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        CompanyCommands(context: context).register(&commands)
    }
}

/// The company module's routes and its feed fetcher.
struct CompanyRuntime: ModuleRuntime {
    let repository: CompanyRepository
    let feeds: FeedRepository
    let fetcher: FeedFetcher
    let feedInterval: Duration
    let registry: ServiceRegistry
    let logger: Logger

    var services: [any ModuleService] { [fetcher.service(every: feedInterval)] }

    /// The company section of the API, one controller per area.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let groups = CompanyRouteGroups(routes, services: registry)
        CompanyController(repository: repository, registry: registry, logger: logger).register(groups)
        FeedsController(feeds: feeds, fetcher: fetcher, registry: registry, logger: logger).register(groups)
    }
}

/// `example.com`, `mail.example.co.uk`: two or more labels of letters, digits and inner hyphens,
/// a last label of letters.
func isDomainName(_ s: String) -> Bool {
    guard s.utf8.count <= 253 else { return false }
    let labels = s.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2, let tld = labels.last, tld.count >= 2, tld.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return false }
    return labels.allSatisfy { label in
        let b = Array(label.utf8)
        guard (1...63).contains(b.count), b.first != 0x2D, b.last != 0x2D else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }
}
