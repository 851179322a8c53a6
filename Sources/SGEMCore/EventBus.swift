import Synchronization
import SGEMSupport

/// An in-process event one module publishes and others react to (a holiday decision, a new
/// notice). Each event type names itself for logs.
public protocol Event: Sendable {
    static var name: String { get }
}

/// A typed publish/subscribe bus. Subscribers run in subscription order; a subscriber that
/// throws is logged and does not stop the others or the publisher.
public final class EventBus: Sendable {
    private struct Subscription: Sendable {
        let id: Int
        let handler: @Sendable (any Event) async throws -> Void
    }

    private let subscriptions = Mutex<(next: Int, byType: [ObjectIdentifier: [Subscription]])>((0, [:]))
    private let logger: Logger

    public init(logger: Logger = Logger(label: "events")) { self.logger = logger }

    /// Calls `handler` for every published `E`. Returns a token for `unsubscribe`.
    @discardableResult
    public func subscribe<E: Event>(_ type: E.Type, _ handler: @escaping @Sendable (E) async throws -> Void) -> Int {
        subscriptions.withLock { state in
            state.next += 1
            let sub = Subscription(id: state.next) { event in
                if let typed = event as? E { try await handler(typed) }
            }
            state.byType[ObjectIdentifier(type), default: []].append(sub)
            return state.next
        }
    }

    public func unsubscribe(_ token: Int) {
        subscriptions.withLock { state in
            for key in state.byType.keys { state.byType[key]?.removeAll { $0.id == token } }
        }
    }

    /// Delivers `event` to every subscriber of its type and returns when they have all run.
    public func publish<E: Event>(_ event: E) async {
        let subs = subscriptions.withLock { $0.byType[ObjectIdentifier(E.self)] ?? [] }
        for sub in subs {
            do { try await sub.handler(event) } catch {
                logger.error("event subscriber failed", ["event": E.name, "error": "\(error)"])
            }
        }
    }

    public func subscriberCount<E: Event>(_ type: E.Type) -> Int {
        subscriptions.withLock { $0.byType[ObjectIdentifier(type)]?.count ?? 0 }
    }
}
