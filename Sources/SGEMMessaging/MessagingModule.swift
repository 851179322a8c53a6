import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `messaging` module: contacts, direct and group chats, messages, read markers, mentions,
/// search. Publishes `ChatAccess` for the realtime hub and `MessageLookup` for translation; every change records its realtime event
/// in the system module's journal, in the change's own transaction.
public struct MessagingModule: Module {
    public let id: ModuleID = "messaging"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}

    public func registerMigrations(_ migrations: inout MigrationList) {
        MessagingRepository.registerMigrations(&migrations)
    }

    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "chat", title: "Chat", titleES: "Chat", route: "#/chat",
                              script: "screens/chat.js", order: 40))
    }

    /// Publishes `ChatAccess`; needs the system module's `EventJournal` and accounts' `UserDirectory`.
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let journal = try context.require((any EventJournal).self)
        let directory = try context.require((any UserDirectory).self)
        let access = StoredChatAccess(store: context.store)
        context.services.register((any ChatAccess).self, access)
        context.services.register((any MessageLookup).self, access)
        context.services.register((any ChatPushLookup).self, access)
        let messenger = Messenger(store: context.store, journal: journal, directory: directory, services: context.services)
        return MessagingRuntime(messenger: messenger, services: context.services, logger: context.logger)
    }
}

/// The messaging module's routes, over the messenger it booted with.
struct MessagingRuntime: ModuleRuntime {
    let messenger: Messenger
    let services: ServiceRegistry
    let logger: Logger

    /// `/contacts`, `/chats`, `/messages`, `/search/messages`.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let api = routes.group("", middleware: MessagingAPI.middleware(services))
        ContactsController(messenger: messenger).register(api)
        ChatsController(messenger: messenger, services: services, logger: logger).register(api)
        ChatMembersController(messenger: messenger).register(api)
        MessagesController(messenger: messenger).register(api)
        MessageSearchController(messenger: messenger).register(api)
    }
}
