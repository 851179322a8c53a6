import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Everything the accounts module builds at boot and its routes use: the service (store,
/// repository, hasher, sessions), the throttle and the login counter.
public struct AccountsRuntime: Sendable {
    let service: AccountService
    let throttle: LoginThrottle
    let logins: Counter
    let services: ServiceRegistry
    let logger: Logger

    /// Builds the runtime and publishes `SessionAuthenticator` and `UserDirectory`.
    static func boot(_ context: ModuleContext, throttle policy: ThrottlePolicy) async throws -> AccountsRuntime {
        let repository = AccountsRepository()
        // The queue bounds are settings once the module declares them (`password-hash-queue`,
        // `password-hash-per-client`); until then, and when unset, the defaults below.
        let configuration = context.configuration
        let hasher = PasswordHasher(logN: configuration.int("password-hash-log-n"), threads: PasswordHasher.cpuCount,
                                    queueCapacity: configuration.string("password-hash-queue").flatMap { Int($0) } ?? 64,
                                    perClient: configuration.string("password-hash-per-client").flatMap { Int($0) } ?? 8,
                                    metrics: context.metrics)
        let sessions = SessionManager(store: context.store, repository: repository, idleHours: context.configuration.int("session-idle-hours"),
                                      maxDays: context.configuration.int("session-max-days"), logger: context.logger)
        let service = AccountService(store: context.store, repository: repository, hasher: hasher, sessions: sessions)
        let runtime = AccountsRuntime(service: service, throttle: LoginThrottle(policy: policy),
                                      logins: context.metrics.counter("sgem_accounts_logins_total", help: "Login attempts by result.", labels: ["result"]),
                                      services: context.services, logger: context.logger)
        _ = try await runtime.expireSessionsAndThrottle(now: .now())
        context.services.register((any SessionAuthenticator).self, sessions)
        context.services.register((any UserDirectory).self, AccountsDirectory(service: service))
        return runtime
    }

    /// Adds the accounts routes: `routes` is the `/api/v1` group (accounts has none at the root).
    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        AccountsRoutes(runtime: self, services: services, logger: logger).register(routes)
    }

    /// Removes sessions expired at `now` and throttle entries whose window has passed; returns
    /// how many of each. Safe to call at any time; a periodic job runs it.
    @discardableResult
    public func expireSessionsAndThrottle(now: Timestamp) async throws -> (sessions: Int, throttleEntries: Int) {
        let sessions = try await service.deleteExpiredSessions(now: now)
        return (sessions, throttle.removeExpired())
    }

    /// Stops the hashing threads after queued work.
    func shutdown() { service.hasher.shutdown() }
}
