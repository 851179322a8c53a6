import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `holidays` module: leave requests and their approval workflow, allowances with
/// carry-over, leave types, public holidays, the team calendar with its iCal feed and CSV
/// export, and `AbsenceDirectory` (who is away today) for the directory and chats.
public struct HolidaysModule: Module {
    public let id: ModuleID = "holidays"
    public var dependencies: [ModuleID] { ["system", "company", "accounts", "notices"] }

    public init() {}

    public func registerMigrations(_ migrations: inout MigrationList) {
        HolidaysRepository.registerMigrations(&migrations)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        HolidaysCommands(context: context).register(&commands)
    }

    /// Publishes `AbsenceDirectory` and the module's `HolidaysClock`; needs the event journal
    /// (system) and the notice publisher (notices).
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        guard let journal = context.services.resolve((any EventJournal).self),
              let notices = context.services.resolve((any NoticePublisher).self) else {
            throw HolidaysError("module 'holidays' needs the event journal of 'system' and the notice publisher of 'notices'")
        }
        let clock = HolidaysClock()
        let book = HolidayBook(store: context.store, journal: journal, notices: notices,
                               settingsProvider: context.services.resolve((any CompanySettingsProvider).self),
                               directory: context.services.resolve((any UserDirectory).self), clock: clock)
        context.services.register(HolidaysClock.self, clock)
        context.services.register((any AbsenceDirectory).self, HolidayAbsences(book: book))
        return HolidaysRuntime(book: book, services: context.services, logger: context.logger)
    }
}

/// The holidays module's routes, over the book it booted with.
struct HolidaysRuntime: ModuleRuntime {
    let book: HolidayBook
    let services: ServiceRegistry
    let logger: Logger

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        HolidaysRoutes(book: book, services: services, logger: logger).register(routes)
    }
}

/// A server assembled without what the module needs.
struct HolidaysError: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
