import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// A module's name: its migration namespace, configuration scope and log label.
public struct ModuleID: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}

/// A feature module. One small required surface (`id`); everything else has a default that does
/// nothing. The application lists the modules explicitly; nothing registers itself by side effect.
///
/// Life of a module in `serve`: its settings are read with everyone else's, its migrations run,
/// `boot` builds its `ModuleRuntime` (services published, events subscribed), the runtime adds its
/// routes to the router, which is then frozen; the runtime's long-lived services start once the
/// server listens and stop, in reverse order, before the store closes.
public protocol Module: Sendable {
    /// "holidays": the migration namespace (`holidays.001_create_requests`) and log label.
    var id: ModuleID { get }
    /// Modules booted before this one.
    var dependencies: [ModuleID] { get }
    /// The start-up settings the module reads (`--flag`, `SGEM_*`, config-file key, default,
    /// validation, help), so the command line knows them before any module boots.
    var settings: [Setting] { get }
    /// Values admins change while the server runs, kept in the store (secrets write-only).
    var runtimeSettings: [RuntimeSetting] { get }
    /// The audit event names the module writes (`holiday.approved`), so the audit log's filter
    /// knows them before any is written.
    var auditEvents: [String] { get }
    /// Appends the module's migrations, ids `<module>.<NNN_name>`, append-only.
    func registerMigrations(_ migrations: inout MigrationList)
    /// Adds the module's admin verbs (`sgem-server admin VERB`, the `sgem>` shell).
    func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext)
    /// Adds the module's console screens.
    func registerConsolePages(_ pages: inout ConsoleRegistry)
    /// Publishes services, subscribes to events and returns what the module serves with; runs
    /// after migrations, before routes serve.
    func boot(_ context: ModuleContext) async throws -> any ModuleRuntime
}

extension Module {
    public var dependencies: [ModuleID] { [] }
    public var settings: [Setting] { [] }
    public var runtimeSettings: [RuntimeSetting] { [] }
    public var auditEvents: [String] { [] }
    public func registerMigrations(_ migrations: inout MigrationList) {}
    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {}
    public func registerConsolePages(_ pages: inout ConsoleRegistry) {}
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime { NoRuntime() }
}

/// What a booted module serves with: its routes, its long-lived services, and what to release
/// at shutdown — one value built by `boot`, so routes and the state they use come from one place.
public protocol ModuleRuntime: Sendable {
    /// Adds the module's routes; `routes` is the `/api/v1` group, `root` the site root.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup)
    /// Long-lived services (periodic jobs, stream tails), started in this order after every
    /// module booted and the server listens; stopped in reverse order before the store closes.
    var services: [any ModuleService] { get }
    /// Releases what `boot` acquired, after the services stopped; runs in reverse boot order.
    func shutdown() async
}

extension ModuleRuntime {
    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {}
    public var services: [any ModuleService] { [] }
    public func shutdown() async {}
}

/// The runtime of a module that serves nothing once booted.
public struct NoRuntime: ModuleRuntime {
    public init() {}
}

/// What a module gets at boot and while serving.
public struct ModuleContext: Sendable {
    public let configuration: Configuration
    public let store: Store
    public let services: ServiceRegistry
    public let events: EventBus
    public let metrics: MetricsRegistry
    public let logger: Logger
    /// The routes of every module (read them once serving; the OpenAPI document does).
    public let router: Router
    /// Every module's runtime settings, for the service that stores them.
    public let declaredRuntimeSettings: [RuntimeSetting]
    /// The group that runs every module's services; readiness reports a required one that stopped.
    public let serviceGroup: ServiceGroup
    /// The module this context was scoped to (nil: the application's own).
    public let module: ModuleID?
    /// Every module's audit event names, for the audit log's filter.
    public let declaredAuditEvents: [String]
    /// Seals what modules keep secret in the store, under the secret key file's key.
    public let secrets: Secrets

    /// `secrets` defaults to a key in memory only (tests); the server passes the key file's.
    public init(configuration: Configuration, store: Store, services: ServiceRegistry, events: EventBus,
                metrics: MetricsRegistry, logger: Logger, router: Router, declaredRuntimeSettings: [RuntimeSetting] = [],
                serviceGroup: ServiceGroup = ServiceGroup(), module: ModuleID? = nil, secrets: Secrets = .ephemeral(),
                declaredAuditEvents: [String] = []) {
        self.configuration = configuration
        self.declaredAuditEvents = declaredAuditEvents
        self.secrets = secrets
        self.store = store
        self.services = services
        self.events = events
        self.metrics = metrics
        self.logger = logger
        self.router = router
        self.declaredRuntimeSettings = declaredRuntimeSettings
        self.serviceGroup = serviceGroup
        self.module = module
    }

    /// The same context with the logger labelled for `module`.
    public func scoped(to module: ModuleID) -> ModuleContext {
        ModuleContext(configuration: configuration, store: store, services: services, events: events,
                      metrics: metrics, logger: Logger(label: module.rawValue), router: router,
                      declaredRuntimeSettings: declaredRuntimeSettings, serviceGroup: serviceGroup, module: module, secrets: secrets,
                      declaredAuditEvents: declaredAuditEvents)
    }

    /// The service registered for `type`, resolved once at boot; a boot error naming this module
    /// and the service when no module booted before it published one (a missing `dependencies` entry).
    public func require<Service: Sendable>(_ type: Service.Type) throws -> Service {
        guard let service = services.resolve(type) else {
            throw ModuleError(code: .missingService, message: "module '\(module?.rawValue ?? "app")' needs the service \(ModuleError.name(of: type)), "
                + "which no module booted before it publishes (list the module that provides it in 'dependencies')")
        }
        return service
    }

    /// The runtime settings service (published by the system module); nil before it boots.
    public var runtimeSettings: (any RuntimeSettings)? { services.resolve((any RuntimeSettings).self) }
}

/// What admin verbs get: the configuration, and the store opened on demand (verbs such as
/// `help` never open the database).
public struct CommandModuleContext: Sendable {
    public let configuration: Configuration
    public let openStore: @Sendable () async throws -> Store
    /// Services one module's verbs offer another's (the company settings for `create-user`, the
    /// system module's `EventJournal` for `notices post`), registered by `registerCommands` in
    /// boot order; resolve them when a verb runs.
    public let services: ServiceRegistry
    /// Every module's runtime settings, for the verbs that show or change them.
    public let declaredRuntimeSettings: [RuntimeSetting]
    /// Seals secrets under the same key file as the server (read on first use).
    public let secrets: Secrets

    /// `secrets` defaults to a key in memory only (tests); the command line passes the key file's.
    public init(configuration: Configuration, openStore: @escaping @Sendable () async throws -> Store,
                services: ServiceRegistry = ServiceRegistry(), declaredRuntimeSettings: [RuntimeSetting] = [],
                secrets: Secrets = .ephemeral()) {
        self.configuration = configuration
        self.secrets = secrets
        self.openStore = openStore
        self.services = services
        self.declaredRuntimeSettings = declaredRuntimeSettings
    }
}

/// Orders modules so each comes after its dependencies; the listed order breaks ties.
public func bootOrder(_ modules: [any Module]) throws -> [any Module] {
    var ordered: [any Module] = []
    var placed = Set<ModuleID>()
    let ids = Set(modules.map(\.id))
    for m in modules {
        guard Set(m.dependencies).isSubset(of: ids) else {
            let missing = Set(m.dependencies).subtracting(ids).map(\.rawValue).sorted()
            throw ModuleError(code: .missingDependency, message: "module '\(m.id)' needs \(missing.joined(separator: ", "))")
        }
    }
    var remaining = modules
    while !remaining.isEmpty {
        guard let index = remaining.firstIndex(where: { Set($0.dependencies).isSubset(of: placed) }) else {
            throw ModuleError(code: .dependencyCycle, message: "modules depend on each other in a cycle: \(remaining.map(\.id.rawValue).joined(separator: ", "))")
        }
        let next = remaining.remove(at: index)
        ordered.append(next)
        placed.insert(next.id)
    }
    return ordered
}

/// A problem with the module list itself.
public struct ModuleError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        public let rawValue: String
        public static let missingDependency = Code(rawValue: "missing_dependency")
        public static let dependencyCycle = Code(rawValue: "dependency_cycle")
        public static let duplicateModule = Code(rawValue: "duplicate_module")
        public static let missingService = Code(rawValue: "missing_service")
    }
    public let code: Code
    public let message: String
    public var description: String { message }

    /// `UserDirectory` for `(any UserDirectory).self`: the protocol's name as its module reads it.
    static func name(of type: Any.Type) -> String {
        let name = String(describing: type)
        return name.hasPrefix("any ") ? String(name.dropFirst(4)) : name
    }
}
