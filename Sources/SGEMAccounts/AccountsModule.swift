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
        AccountsRepository.registerMigrations(&migrations)
    }

    public func boot(_ context: ModuleContext) async throws {
        let built = try await AccountsRuntime.boot(context, throttle: throttlePolicy)
        runtime.set(built)
    }

    public func shutdown(_ context: ModuleContext) async {
        runtime.get()?.shutdown()
    }

    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup, context: ModuleContext) {
        guard let runtime = runtime.get() else {
            context.logger.error("accounts routes registered before boot")
            return
        }
        runtime.registerRoutes(routes, root: root)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        AccountsCommands(context: context).register(&commands)
    }

    /// Removes expired sessions and throttle entries; for the periodic job that runs it.
    public func expireSessionsAndThrottle(now: Timestamp = .now()) async throws {
        _ = try await runtime.get()?.expireSessionsAndThrottle(now: now)
    }
}

/// Hands the runtime from `boot` to `registerRoutes` and `shutdown` (the module is a value) until
/// `boot` returns the runtime itself.
final class RuntimeBox: Sendable {
    private let value = Mutex<AccountsRuntime?>(nil)
    func set(_ runtime: AccountsRuntime) { value.withLock { $0 = runtime } }
    func get() -> AccountsRuntime? { value.withLock { $0 } }
}
