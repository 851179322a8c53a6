/// An account was deactivated; published by accounts on the `EventBus` after the commit, so
/// whatever holds the account open (realtime sockets) lets go at once.
public struct AccountDeactivated: Event {
    public static let name = "accounts.deactivated"
    public let userID: Int64

    public init(userID: Int64) { self.userID = userID }
}

/// Sessions of one user ended (logout, password change, admin reset); published by accounts on
/// the `EventBus` after the commit, so sockets opened with those sessions close at once.
public struct SessionsRevoked: Event {
    public static let name = "accounts.sessions_revoked"

    /// Which of the user's sessions ended.
    public enum Scope: Sendable, Equatable {
        /// Every session of the user.
        case all
        /// Every session but this one (a password change keeps the session that made it).
        case allBut(Int64)
        /// Just this session (a logout).
        case only(Int64)

        /// Whether the session `id` (nil: credentials without a session) is among the ended ones.
        public func contains(_ id: Int64?) -> Bool {
            switch self {
            case .all: true
            case let .allBut(kept): id != kept
            case let .only(ended): id == ended
            }
        }
    }

    public let userID: Int64
    public let scope: Scope

    public init(userID: Int64, scope: Scope) {
        self.userID = userID
        self.scope = scope
    }
}
