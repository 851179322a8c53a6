/// Why the push module refused something, in its own words: what `PushDevices` throws. The
/// route edge gives each case its status and code (`PushError+HTTP.swift`).
enum PushError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The person already has `limit` devices subscribed (another person's endpoint would be one more).
    case tooManySubscriptions(limit: Int)
    /// No subscription with that id among the person's own.
    case subscriptionNotFound

    /// One line for a person.
    var message: String {
        switch self {
        case let .tooManySubscriptions(limit): "this account already has \(limit) devices subscribed; remove one first"
        case .subscriptionNotFound: "no such subscription"
        }
    }

    var description: String { message }
}
