import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `realtime` module: `GET /api/v1/realtime`, the hub that tails the event journal and fans
/// events out to the sockets whose user may see them, replay with `since`, retention.
public struct RealtimeModule: Module {
    public let id: ModuleID = "realtime"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    /// How long events are kept for replay; a client further behind gets `{"type":"resync"}`.
    static let retentionDays = Setting("realtime-retention-days", .int(1...365), default: "7",
                                       "days the realtime stream keeps events for clients that reconnect with ?since=")

    /// How often open streams' credentials are checked again (sessions ended elsewhere).
    static let recheckSeconds = Setting("realtime-recheck-seconds", .int(1...3600), default: "30",
                                        "seconds between checks that each realtime stream's session and account are still valid (a safety net)")

    public init() {}

    public var settings: [Setting] { [RealtimeModule.retentionDays, RealtimeModule.recheckSeconds] }

    /// Starts the hub at the journal's newest event.
    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let journal = try context.require((any EventJournal).self)
        let hub = RealtimeHub(journal: journal, services: context.services, cursor: try await journal.lastEventID(),
                              limits: RealtimeHub.Limits(recheck: .seconds(context.configuration.int(RealtimeModule.recheckSeconds))), metrics: RealtimeMetrics(context.metrics), logger: context.logger)
        context.services.register((any LiveStreams).self, hub)
        return RealtimeRuntime(hub: hub, journal: journal, registry: context.services,
                               retention: .seconds(86_400 * context.configuration.int(RealtimeModule.retentionDays)),
                               logger: context.logger, rounds: context.services.resolve((any PeriodicRounds).self))
    }
}

/// The realtime module's route, its tail and its retention job.
struct RealtimeRuntime: ModuleRuntime {
    let hub: RealtimeHub
    let journal: any EventJournal
    let registry: ServiceRegistry
    let retention: Duration
    let logger: Logger
    /// Who runs retention when several instances share the journal (nil: this one).
    var rounds: (any PeriodicRounds)? = nil

    /// How often retention looks for old events.
    static let retentionInterval: Duration = .seconds(3600)

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        RealtimeRoutes(hub: hub, journal: journal, services: registry, logger: logger).register(routes)
    }

    var services: [any ModuleService] {
        let runtime = self
        return [
            HubService(hub: hub),
            PeriodicJob(name: "realtime.retention", every: RealtimeRuntime.retentionInterval, logger: logger, rounds: rounds) {
                try await runtime.removeExpiredEvents(now: .now())
            },
        ]
    }

    /// Removes the events older than the retention window at `now`; returns how many.
    @discardableResult
    func removeExpiredEvents(now: Timestamp) async throws -> Int {
        let cutoff = Timestamp(milliseconds: now.milliseconds - Int64(retention.components.seconds) * 1000)
        let removed = try await journal.removeEvents(recordedBefore: cutoff)
        if removed > 0 { logger.info("old realtime events removed", ["events": String(removed)]) }
        return removed
    }
}

/// The hub's tail as a module service.
struct HubService: ModuleService {
    let hub: RealtimeHub
    var name: String { "realtime.hub" }
    func run() async throws { await hub.run() }
}
