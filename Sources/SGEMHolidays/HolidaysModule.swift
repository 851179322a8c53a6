import SGEMContracts
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

    public var auditEvents: [String] { HolidayBook.auditEvents }

    public func registerMigrations(_ migrations: inout MigrationList) {
        HolidaysRepository.registerMigrations(&migrations)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        HolidaysCommands(context: context).register(&commands)
    }

    /// Publishes `AbsenceDirectory` and the module's `HolidaysClock`; needs the event journal
    /// (system) and the notice publisher (notices).
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let journal = try context.require((any EventJournal).self)
        let notices = try context.require((any NoticePublisher).self)
        let clock = HolidaysClock()
        let book = HolidayBook(store: context.store, journal: journal, notices: notices,
                               settingsProvider: try context.require((any CompanySettingsProvider).self),
                               directory: try context.require((any UserDirectory).self), clock: clock,
                               audit: context.services.resolve((any AuditTrail).self))
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

    /// The holidays section of the API (the contract's "Holidays" table), one controller per area.
    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let groups = HolidaysRouteGroups(routes, services: services)
        HolidayRequestsController(book: book, logger: logger).register(groups)
        HolidayDecisionsController(book: book, logger: logger).register(groups)
        AllowancesController(book: book, logger: logger).register(groups)
        HolidayCalendarController(book: book).register(groups)
        LeaveTypesController(book: book, logger: logger).register(groups)
        PublicHolidaysController(book: book).register(groups)
    }
}
