import Synchronization

/// Cross-module services by protocol: the owning module registers an implementation when it
/// boots (`services.register((any UserDirectory).self, directory)`); others resolve it.
public final class ServiceRegistry: Sendable {
    private let services = Mutex<[ObjectIdentifier: any Sendable]>([:])

    public init() {}

    /// Publishes `implementation` under `type`. Registering one type twice is a bug in the
    /// module list and stops start-up.
    public func register<Service: Sendable>(_ type: Service.Type, _ implementation: Service) {
        let value: any Sendable = implementation
        services.withLock { all in
            precondition(all[ObjectIdentifier(type)] == nil, "service \(type) registered twice")
            all[ObjectIdentifier(type)] = value
        }
    }

    /// The implementation registered for `type`, if any.
    public func resolve<Service: Sendable>(_ type: Service.Type) -> Service? {
        services.withLock { $0[ObjectIdentifier(type)] } as? Service
    }
}
