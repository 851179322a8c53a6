import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `accounts` module: users, roles, sessions, profiles, avatars, the team directory, the
/// security audit log and the user admin verbs. It publishes `SessionAuthenticator` (so every
/// module can protect routes with `RequireUser`/`RequireAdmin`) and `UserDirectory`.
public struct AccountsModule: Module {
    public let id: ModuleID = "accounts"
    /// Booted after `company` so registration can read the company settings.
    public var dependencies: [ModuleID] { ["company"] }

    let throttlePolicy: ThrottlePolicy
    let clock: @Sendable () -> Timestamp

    /// - Parameter throttle: login throttling; tests pass a short window or a manual clock.
    /// - Parameter clock: the wall clock invitations expire by; tests pin it.
    public init(throttle: ThrottlePolicy = ThrottlePolicy(), clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) {
        self.throttlePolicy = throttle
        self.clock = clock
    }

    /// The module's start-up settings.
    static let hashLogN = Setting("password-hash-log-n", .int(10...20), default: "17",
                                  "scrypt cost as log2(N) for new password hashes (OWASP: 17; lower only for tests)")
    static let hashQueue = Setting("password-hash-queue", .int(1...100_000), default: "64",
                                   "most password checks waiting for a hashing thread; more are answered 503 busy")
    static let hashPerClient = Setting("password-hash-per-client", .int(1...10_000), default: "8",
                                       "most password checks one client address may have waiting or running")
    static let sessionIdleHours = Setting("session-idle-hours", .int(1...8760), default: "168",
                                          "hours a session lives without use (each use renews it)")
    static let sessionMaxDays = Setting("session-max-days", .int(1...365), default: "30",
                                        "days after which a session ends even if used")

    public var settings: [Setting] {
        [AccountsModule.hashLogN, AccountsModule.hashQueue, AccountsModule.hashPerClient,
         AccountsModule.sessionIdleHours, AccountsModule.sessionMaxDays]
    }

    public func registerMigrations(_ migrations: inout MigrationList) {
        AccountsRepository.registerMigrations(&migrations)
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        try await AccountsRuntime.boot(context, throttle: throttlePolicy, clock: clock)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        AccountsCommands(context: context).register(&commands)
        context.services.register((any UserDirectory).self, StoreDirectory(openStore: context.openStore))
        context.services.register((any AuditTrail).self, AccountsAuditTrail())
    }
}

/// `AuditTrail` for other modules: their admin changes land in the accounts module's audit log.
struct AccountsAuditTrail: AuditTrail {
    func record(_ record: AuditRecord, in db: Database) throws {
        try AccountsRepository.appendAudit(at: .now(), event: record.event, actorID: record.actorID, targetID: record.targetID, login: nil,
                                           ip: record.ip, detail: record.detail, in: db)
    }
}
