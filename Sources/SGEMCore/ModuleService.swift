import Synchronization
import SGEMSupport

/// A long-lived piece of a module's work — a periodic clean-up, a realtime tail — run by the
/// application between start-up and shutdown (swift-service-lifecycle's `Service`).
public protocol ModuleService: Sendable {
    /// Shown in logs: "accounts.expiry".
    var name: String { get }
    /// Runs until the task is cancelled (shutdown), then returns promptly. A throw is logged;
    /// the service is not restarted.
    func run() async throws
}

/// Runs `body` every `interval` (the first time one interval after start) until cancelled.
/// A failing round is logged and the next one runs on schedule.
public struct PeriodicJob: ModuleService {
    public let name: String
    public let interval: Duration
    let logger: Logger
    let body: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: the job's name in logs.
    ///   - interval: the time between rounds.
    ///   - body: one round of work.
    public init(name: String, every interval: Duration, logger: Logger, _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.body = body
    }

    public func run() async throws {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return // cancelled while waiting: shutdown
            }
            do {
                try await body()
            } catch is CancellationError {
                return
            } catch {
                logger.error("periodic job failed", ["job": name, "error": String(describing: error)])
            }
        }
    }
}

/// Starts module services in order and stops them in reverse order (swift-service-lifecycle's
/// `ServiceGroup`): stopping cancels a service's task and waits for it to return.
public final class ServiceGroup: Sendable {
    private struct Running: Sendable {
        let name: String
        let task: Task<Void, Never>
    }

    private let running = Mutex<[Running]>([])
    private let logger: Logger

    public init(logger: Logger = Logger(label: "services")) { self.logger = logger }

    /// Starts every service of `services` in order, each in its own task.
    public func start(_ services: [any ModuleService]) {
        let logger = self.logger
        let started = services.map { service in
            Running(name: service.name, task: Task {
                do {
                    try await service.run()
                } catch is CancellationError {
                } catch {
                    logger.error("service failed", ["service": service.name, "error": String(describing: error)])
                }
            })
        }
        running.withLock { $0.append(contentsOf: started) }
        for s in started { logger.debug("service started", ["service": s.name]) }
    }

    /// Names of the services started and not yet stopped, in start order.
    public var names: [String] { running.withLock { $0.map(\.name) } }

    /// Cancels the services in reverse start order, waiting for each to return before the next.
    public func stop() async {
        let all = running.withLock { all -> [Running] in
            defer { all = [] }
            return all
        }
        for s in all.reversed() {
            s.task.cancel()
            await s.task.value
            logger.debug("service stopped", ["service": s.name])
        }
    }
}
