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

    /// - Parameter throttle: login throttling; tests pass a short window or a manual clock.
    public init(throttle: ThrottlePolicy = ThrottlePolicy()) {
        self.throttlePolicy = throttle
    }

    public func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("accounts.001_users", sql: """
            CREATE TABLE accounts_users (
                id INTEGER PRIMARY KEY,
                username TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL,
                email_lower TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('admin', 'employee')),
                active INTEGER NOT NULL DEFAULT 1,
                display_name TEXT NOT NULL,
                name_key TEXT NOT NULL,
                position TEXT, phone TEXT, twitter TEXT, linkedin TEXT, bio TEXT, status TEXT, country TEXT,
                language TEXT NOT NULL DEFAULT 'en',
                notifications_enabled INTEGER NOT NULL DEFAULT 1,
                avatar_version INTEGER,
                avatar_counter INTEGER NOT NULL DEFAULT 0,
                created_at TEXT NOT NULL,
                last_login_at TEXT
            );
            CREATE INDEX accounts_users_by_name ON accounts_users (name_key, username);
            CREATE TABLE accounts_sessions (
                id INTEGER PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES accounts_users (id) ON DELETE CASCADE,
                token_digest TEXT NOT NULL UNIQUE,
                csrf_digest TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                ip TEXT,
                user_agent TEXT
            );
            CREATE INDEX accounts_sessions_by_user ON accounts_sessions (user_id);
            CREATE TABLE accounts_avatars (
                user_id INTEGER PRIMARY KEY REFERENCES accounts_users (id) ON DELETE CASCADE,
                content_type TEXT NOT NULL,
                data BLOB NOT NULL,
                version INTEGER NOT NULL,
                etag TEXT NOT NULL
            );
            CREATE TABLE accounts_audit (
                id INTEGER PRIMARY KEY,
                at TEXT NOT NULL,
                event TEXT NOT NULL,
                actor_id INTEGER,
                target_id INTEGER,
                login TEXT,
                ip TEXT,
                detail TEXT
            );
            """)
    }

    /// The module's start-up settings.
    static let hashLogN = Setting("password-hash-log-n", .int(10...20), default: "17",
                                  "scrypt cost as log2(N) for new password hashes (OWASP: 17; lower only for tests)")
    static let sessionIdleHours = Setting("session-idle-hours", .int(1...8760), default: "168",
                                          "hours a session lives without use (each use renews it)")
    static let sessionMaxDays = Setting("session-max-days", .int(1...365), default: "30",
                                        "days after which a session ends even if used")

    public var settings: [Setting] { [AccountsModule.hashLogN, AccountsModule.sessionIdleHours, AccountsModule.sessionMaxDays] }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let hasher = PasswordHasher(logN: context.configuration.int(AccountsModule.hashLogN), threads: PasswordHasher.cpuCount,
                                    metrics: context.metrics)
        let sessions = SessionManager(store: context.store, idleHours: context.configuration.int(AccountsModule.sessionIdleHours),
                                      maxDays: context.configuration.int(AccountsModule.sessionMaxDays))
        let service = AccountService(store: context.store, hasher: hasher, sessions: sessions)
        _ = try await sessions.deleteExpired()
        context.services.register((any SessionAuthenticator).self, sessions)
        context.services.register((any UserDirectory).self, AccountsDirectory(service: service))
        return AccountsRuntime(service: service, sessions: sessions, throttle: LoginThrottle(policy: throttlePolicy),
                               logins: context.metrics.counter("sgem_accounts_logins_total", help: "Login attempts by result.", labels: ["result"]),
                               registry: context.services, logger: context.logger)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        AccountsCommands(context: context).register(&commands)
    }
}

/// What the module builds at boot: the service its routes use, and the hashing threads to stop.
struct AccountsRuntime: ModuleRuntime {
    /// How often expired sessions are deleted.
    static let expiryInterval: Duration = .seconds(600)

    let service: AccountService
    let sessions: SessionManager
    let throttle: LoginThrottle
    let logins: Counter
    let registry: ServiceRegistry
    let logger: Logger

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        AccountsRoutes(runtime: self, services: registry, logger: logger).register(routes)
    }

    var services: [any ModuleService] {
        let sessions = self.sessions
        let logger = self.logger
        return [PeriodicJob(name: "accounts.expiry", every: AccountsRuntime.expiryInterval, logger: logger) {
            let removed = try await sessions.deleteExpired()
            if removed > 0 { logger.info("expired sessions deleted", ["count": String(removed)]) }
        }]
    }

    func shutdown() async { service.hasher.shutdown() }
}
