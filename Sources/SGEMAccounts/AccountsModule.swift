import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport
import Synchronization

/// The `accounts` module: users, roles, sessions, profiles, avatars, the team directory, the
/// security audit log and the user admin verbs. It publishes `SessionAuthenticator` (so every
/// module can protect routes with `RequireUser`/`RequireAdmin`) and `UserDirectory`.
public struct AccountsModule: Module {
    public let id: ModuleID = "accounts"
    /// Booted after `company` so registration can read the company settings.
    public var dependencies: [ModuleID] { ["company"] }

    let throttlePolicy: ThrottlePolicy
    let runtime = RuntimeBox()

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

    public func boot(_ context: ModuleContext) async throws {
        let hasher = PasswordHasher(logN: context.configuration.int("password-hash-log-n"), threads: PasswordHasher.cpuCount,
                                    metrics: context.metrics)
        let sessions = SessionManager(store: context.store, idleHours: context.configuration.int("session-idle-hours"),
                                      maxDays: context.configuration.int("session-max-days"))
        let service = AccountService(store: context.store, hasher: hasher, sessions: sessions)
        let now = Timestamp.now().seconds
        try await context.store.write { db in try db.execute("DELETE FROM accounts_sessions WHERE expires_at <= ?", now) }
        runtime.set(AccountsRuntime(service: service, throttle: LoginThrottle(policy: throttlePolicy),
                                    logins: context.metrics.counter("sgem_accounts_logins_total", help: "Login attempts by result.", labels: ["result"])))
        context.services.register((any SessionAuthenticator).self, sessions)
        context.services.register((any UserDirectory).self, AccountsDirectory(service: service))
    }

    public func shutdown(_ context: ModuleContext) async {
        runtime.get()?.service.hasher.shutdown()
    }

    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup, context: ModuleContext) {
        guard let runtime = runtime.get() else {
            context.logger.error("accounts routes registered before boot")
            return
        }
        AccountsRoutes(runtime: runtime, services: context.services, logger: context.logger).register(routes)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        AccountsCommands(context: context).register(&commands)
    }
}

/// What the module builds at boot and its routes use.
struct AccountsRuntime: Sendable {
    let service: AccountService
    let throttle: LoginThrottle
    let logins: Counter
}

/// Hands the runtime from `boot` to `registerRoutes` and `shutdown` (the module is a value).
final class RuntimeBox: Sendable {
    private let value = Mutex<AccountsRuntime?>(nil)
    func set(_ runtime: AccountsRuntime) { value.withLock { $0 = runtime } }
    func get() -> AccountsRuntime? { value.withLock { $0 } }
}
