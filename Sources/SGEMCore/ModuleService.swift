import Synchronization
import SGEMSupport

/// A long-lived piece of a module's work — a periodic clean-up, a realtime tail — run by the
/// application between start-up and shutdown (swift-service-lifecycle's `Service`).
public protocol ModuleService: Sendable {
    /// Shown in logs: "accounts.expiry".
    var name: String { get }
    /// What the server does when `run` returns before shutdown asked it to; by default it shuts
    /// down gracefully and exits non-zero: a long-lived service that ends is a failure.
    var successTerminationBehavior: ServiceTermination { get }
    /// What the server does when `run` throws; by default the same.
    var failureTerminationBehavior: ServiceTermination { get }
    /// Runs until the task is cancelled (shutdown), then returns promptly.
    func run() async throws
}

extension ModuleService {
    public var successTerminationBehavior: ServiceTermination { .gracefullyShutdownGroup }
    public var failureTerminationBehavior: ServiceTermination { .gracefullyShutdownGroup }
}

/// What the service group does when one of its services ends on its own
/// (swift-service-lifecycle's `ServiceGroupConfiguration.ServiceConfiguration.TerminationBehavior`).
public enum ServiceTermination: Sendable {
    /// The service is required: readiness fails and the server shuts down gracefully, exiting non-zero.
    case gracefullyShutdownGroup
    /// The service is optional: its end is logged and everything else carries on.
    case ignore
}

/// A required service ended before shutdown: which one, and how.
public struct ServiceGroupError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        public let rawValue: String
        /// `run` returned although nothing asked it to stop.
        public static let serviceFinishedUnexpectedly = Code(rawValue: "service_finished_unexpectedly")
        /// `run` threw.
        public static let serviceFailed = Code(rawValue: "service_failed")
    }
    public let code: Code
    /// The service's name.
    public let service: String
    /// The error `run` threw, for `.serviceFailed`.
    public let cause: (any Error)?

    public var description: String {
        if let cause { return "service '\(service)' failed: \(cause)" }
        return "service '\(service)' stopped unexpectedly"
    }
}

/// Runs `body` every `interval` (the first time one interval after start) until cancelled.
/// A failing round is logged and the next one runs on schedule. With `rounds`, a round runs only
/// when `rounds` gives it to this instance: several instances on one database run one round per
/// interval between them.
public struct PeriodicJob: ModuleService {
    public let name: String
    public let interval: Duration
    let logger: Logger
    let rounds: (any PeriodicRounds)?
    let body: @Sendable () async throws -> Void

    /// - Parameters:
    ///   - name: the job's name in logs, and in `rounds`.
    ///   - interval: the time between rounds.
    ///   - rounds: who runs a round when several instances serve one database; nil: every round
    ///     runs here (work that concerns this process alone, such as an in-memory table).
    ///   - body: one round of work.
    public init(name: String, every interval: Duration, logger: Logger, rounds: (any PeriodicRounds)? = nil,
                _ body: @escaping @Sendable () async throws -> Void) {
        self.name = name
        self.interval = interval
        self.logger = logger
        self.rounds = rounds
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
                guard try await rounds?.claim(name, every: interval) ?? true else { continue }
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
/// `ServiceGroup`): stopping cancels a service's task and waits for it to return. A required
/// service that ends on its own is recorded (`failure`, which readiness reports) and wakes
/// `waitForFailure`, so the server shuts down gracefully and exits non-zero.
public final class ServiceGroup: Sendable {
    private struct Running: Sendable {
        let name: String
        let task: Task<Void, Never>
    }

    private struct State {
        var running: [Running] = []
        /// Services whose `run` has returned or thrown.
        var ended: Set<String> = []
        var stopping = false
        var failure: ServiceGroupError?
        var waiters: [Int: CheckedContinuation<ServiceGroupError?, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    private let logger: Logger

    public init(logger: Logger = Logger(label: "services")) { self.logger = logger }

    /// Starts every service of `services` in order, each in its own task.
    public func start(_ services: [any ModuleService]) {
        let started = services.map { service in
            Running(name: service.name, task: Task { [self] in
                do {
                    try await service.run()
                    ended(service, error: nil)
                } catch {
                    ended(service, error: error)
                }
            })
        }
        state.withLock { $0.running.append(contentsOf: started) }
        for s in started { logger.debug("service started", ["service": s.name]) }
    }

    /// Names of the services started and still running, in start order.
    public var names: [String] { state.withLock { s in s.running.map(\.name).filter { !s.ended.contains($0) } } }

    /// The first required service that ended before shutdown; nil while all of them run.
    public var failure: ServiceGroupError? { state.withLock { $0.failure } }

    /// Waits until a required service ends on its own and returns how; nil when the waiting task
    /// is cancelled first.
    public func waitForFailure() async -> ServiceGroupError? {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow: ServiceGroupError?? = state.withLock { s in
                    if let failure = s.failure { return .some(failure) }
                    if Task.isCancelled { return .some(nil) }
                    s.waiters[id] = continuation
                    return .none
                }
                if let now = resumeNow { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }

    /// Records a service's end: nothing when shutdown stopped it, a log line for an optional one,
    /// and for a required one the failure readiness reports and the waiters' wake-up.
    private func ended(_ service: any ModuleService, error: (any Error)?) {
        let behavior = error == nil ? service.successTerminationBehavior : service.failureTerminationBehavior
        let outcome = ServiceGroupError(code: error == nil ? .serviceFinishedUnexpectedly : .serviceFailed, service: service.name, cause: error)
        let (stopping, waiters) = state.withLock { s -> (Bool, [CheckedContinuation<ServiceGroupError?, Never>]) in
            s.ended.insert(service.name)
            guard !s.stopping, behavior == .gracefullyShutdownGroup, s.failure == nil else { return (s.stopping, []) }
            s.failure = outcome
            defer { s.waiters = [:] }
            return (false, Array(s.waiters.values))
        }
        if stopping { return }
        let reason = error.map { String(describing: $0) } ?? "returned"
        if behavior == .ignore {
            logger.notice("optional service ended", ["service": service.name, "reason": reason])
            return
        }
        logger.error("required service stopped; shutting the server down",
                     ["service": service.name, "code": outcome.code.rawValue, "reason": reason])
        for waiter in waiters { waiter.resume(returning: outcome) }
    }

    /// Cancels the services in reverse start order, waiting for each to return before the next.
    public func stop() async {
        let all = state.withLock { s -> [Running] in
            s.stopping = true
            defer { s.running = [] }
            return s.running
        }
        for s in all.reversed() {
            s.task.cancel()
            await s.task.value
            logger.debug("service stopped", ["service": s.name])
        }
    }
}
