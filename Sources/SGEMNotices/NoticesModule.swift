import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `notices` module: the notice board. Company notices written by admins, personal notices
/// other modules publish through `NoticePublisher`, read state per person. Every new notice
/// records a `notice.created` event in the system module's journal, in the same transaction.
public struct NoticesModule: Module {
    public let id: ModuleID = "notices"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}

    public var auditEvents: [String] { NoticeBoard.auditEvents }

    public func registerMigrations(_ migrations: inout MigrationList) {
        NoticesRepository.registerMigrations(&migrations)
    }

    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "home", title: "Home", titleES: "Inicio", route: "#/home",
                              script: "screens/home.js", order: 5))
        pages.add(ConsolePage(id: "notices", title: "Notices", titleES: "Avisos", route: "#/notices",
                              script: "screens/notices.js", order: 30))
    }

    /// Publishes `NoticePublisher`; needs the system module's `EventJournal`.
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let journal = try context.require((any EventJournal).self)
        let board = NoticeBoard(store: context.store, journal: journal, directory: try context.require((any UserDirectory).self),
                                audit: context.services.resolve((any AuditTrail).self))
        context.services.register((any NoticePublisher).self, BoardPublisher(journal: journal))
        context.services.register((any NoticeLookup).self, BoardLookup(store: context.store))
        return NoticesRuntime(board: board, services: context.services, logger: context.logger)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        NoticesCommands(context: context).register(&commands)
    }
}

/// The notices module's routes, over the board it booted with.
struct NoticesRuntime: ModuleRuntime {
    let board: NoticeBoard
    let services: ServiceRegistry
    let logger: Logger

    /// The notices section of the API: `/notices` for everyone, `/admin/notices` for admins.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        NoticesController(board: board).register(routes.group("/notices", middleware: [RequireUser(services: services)]))
        NoticeAdminController(board: board, logger: logger)
            .register(routes.group("/admin/notices", middleware: [RequireAdmin(services: services)]))
    }
}

/// `NoticeLookup` for the translation module: a notice only when the reader may see it.
struct BoardLookup: NoticeLookup {
    let store: Store

    func notice(_ id: Int64, visibleTo reader: Int64) async throws -> ReadableNotice? {
        try await NoticesRepository(store: store).notice(id, viewer: reader)
            .map { ReadableNotice(id: $0.id, title: $0.title, body: $0.body) }
    }
}
