import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Everything the accounts module builds at boot and serves with: the service (store,
/// repository, hasher, sessions) its routes use, the throttle, the login counter, and the
/// periodic job that expires sessions and throttle entries.
struct AccountsRuntime: ModuleRuntime {
    /// How often expired sessions and throttle entries are removed.
    static let expiryInterval: Duration = .seconds(600)

    let service: AccountService
    let throttle: any LoginThrottling
    /// The first-run setup token, open only while no active admin existed at boot.
    let setup: SetupGate
    let logins: Counter
    /// The company module's settings (registration, default language), resolved at boot.
    let companySettings: any CompanySettingsProvider
    let registry: ServiceRegistry
    let logger: Logger
    /// Every module's audit event names, for the audit log's filter.
    var declaredAuditEvents: [String] = []
    /// Who removes expired sessions and throttle entries when several instances share the
    /// database (nil: this one).
    var rounds: (any PeriodicRounds)? = nil

    /// Builds the runtime and publishes `SessionAuthenticator`, `UserDirectory` and `FirstRunSetup`.
    static func boot(_ context: ModuleContext, throttle policy: ThrottlePolicy,
                     clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) async throws -> AccountsRuntime {
        let configuration = context.configuration
        let hasher = PasswordHasher(logN: configuration.int(AccountsModule.hashLogN), threads: PasswordHasher.cpuCount,
                                    queueCapacity: configuration.int(AccountsModule.hashQueue),
                                    perClient: configuration.int(AccountsModule.hashPerClient), metrics: context.metrics)
        let sessions = SessionManager(store: context.store, idleHours: configuration.int(AccountsModule.sessionIdleHours),
                                      maxDays: configuration.int(AccountsModule.sessionMaxDays), logger: context.logger)
        // The system module, first in the list, has published the journal by now; servers without
        // it (module tests) have no streams to close.
        let service = AccountService(store: context.store, hasher: hasher, sessions: sessions,
                                     journal: context.services.resolve((any EventJournal).self), clock: clock)
        try await service.readDummyCost()
        let setup = try await SetupGate.open(store: context.store, secrets: context.secrets, needed: try await service.activeAdminIDs().isEmpty,
                                             clock: clock, logger: context.logger)
        let runtime = AccountsRuntime(service: service, throttle: SharedLoginThrottle(store: context.store, policy: policy,
                                                                                               addressShare: configuration.int(AccountsModule.hashPerClient)), setup: setup,
                                      logins: context.metrics.counter("sgem_accounts_logins_total", help: "Login attempts by result.", labels: ["result"]),
                                      companySettings: try context.require((any CompanySettingsProvider).self),
                                      registry: context.services, logger: context.logger,
                                      declaredAuditEvents: context.declaredAuditEvents,
                                      rounds: context.services.resolve((any PeriodicRounds).self))
        try await runtime.expireSessionsAndThrottle(now: .now())
        context.services.register((any SessionAuthenticator).self, sessions)
        context.services.register((any UserDirectory).self, AccountsDirectory(service: service))
        context.services.register((any FirstRunSetup).self, setup)
        context.services.register((any AuditTrail).self, AccountsAuditTrail())
        return runtime
    }

    /// Adds the accounts routes: `routes` is the `/api/v1` group (accounts has none at the root).
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        AccountsRoutes(runtime: self).register(routes)
    }

    var services: [any ModuleService] {
        let runtime = self
        return [PeriodicJob(name: "accounts.expiry", every: AccountsRuntime.expiryInterval, logger: logger, rounds: rounds) {
            let removed = try await runtime.expireSessionsAndThrottle(now: .now())
            if removed.sessions > 0 || removed.throttleEntries > 0 {
                runtime.logger.info("expired sessions and throttle entries removed",
                                    ["sessions": String(removed.sessions), "throttle.entries": String(removed.throttleEntries)])
            }
        }]
    }

    /// Removes sessions expired at `now` and throttle entries whose window has passed; returns
    /// how many of each. Safe to call at any time; the periodic job runs it.
    @discardableResult
    func expireSessionsAndThrottle(now: Timestamp) async throws -> (sessions: Int, throttleEntries: Int) {
        let sessions = try await service.deleteExpiredSessions(now: now)
        return (sessions, try await throttle.removeExpired())
    }

    /// Stops the hashing threads after queued work.
    func shutdown() async { service.hasher.shutdown() }
}
