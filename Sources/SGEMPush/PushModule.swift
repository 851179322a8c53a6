import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `push` module: notifications on a person's devices with the console closed (Web Push:
/// RFC 8030, RFC 8291 `aes128gcm`, RFC 8292 VAPID). Devices subscribe through the API; a worker
/// follows the journal and pushes messages, mentions, holiday decisions, requests waiting for
/// admins and company notices to the people they concern. Reads chats through `ChatPushLookup`,
/// open streams through `LiveStreams`, people through `UserDirectory` (it imports no module).
public struct PushModule: Module {
    public let id: ModuleID = "push"
    public var dependencies: [ModuleID] { ["system", "accounts", "messaging", "realtime"] }

    /// The contact push services may reach the operator at, until an admin sets `pushContact`.
    static let contact = Setting("push-contact", .string, default: nil,
                                 "mailto: or https: contact given to push services (VAPID sub) when the company settings name none",
                                 check: { PushModule.contactProblem($0) })

    public init() {}

    public var settings: [Setting] { [PushModule.contact] }

    public func registerMigrations(_ migrations: inout MigrationList) {
        PushRepository.registerMigrations(&migrations)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        PushCommands().register(&commands)
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let journal = try context.require((any EventJournal).self)
        let directory = try context.require((any UserDirectory).self)
        let vapid = try await VAPID.load(store: context.store, secrets: context.secrets)
        // Pushes go through a client of their own whose threads, like the worker's, run at
        // background priority: pushing never slows sending.
        let shared = try context.require(HTTPClient.self)
        var configuration = shared.configuration
        configuration.threadPriority = .background
        configuration.threads = 2
        configuration.maxResponseBytes = 64 * 1024
        let client = try HTTPClient(configuration: configuration)
        let configured = context.configuration.string(PushModule.contact)
        let services = context.services
        let contact: @Sendable () async -> String = {
            if let provider = services.resolve((any CompanySettingsProvider).self), let set = try? await provider.current().pushContact,
               !set.isEmpty {
                return set
            }
            return configured ?? "mailto:admin@localhost"
        }
        let worker = PushWorker(store: context.store, journal: journal, directory: directory, services: context.services, vapid: vapid,
                                client: client, contact: contact, logger: context.logger)
        try await worker.load()
        return PushRuntime(worker: worker, vapid: vapid, client: client, registry: context.services,
                           policy: configuration.outboundPolicy, executor: BackgroundExecutor(name: "push"))
    }

    /// Why `value` cannot be the VAPID contact: `mailto:` or `https:`, on one line, at most 200 characters.
    public static func contactProblem(_ value: String) -> String? {
        PushContact.problem(value)
    }
}

struct PushRuntime: ModuleRuntime {
    let worker: PushWorker
    let vapid: VAPID
    let client: HTTPClient
    let registry: ServiceRegistry
    let policy: OutboundPolicy
    let executor: BackgroundExecutor

    /// The push section of the API, for signed-in users.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        PushController(devices: PushDevices(store: worker.store), vapid: vapid, policy: policy)
            .register(routes.group("", middleware: [RequireUser(services: registry)]))
    }

    var services: [any ModuleService] { [PushService(worker: worker, executor: executor)] }

    func shutdown() async {
        client.shutdown()
        executor.shutdown()
    }
}
