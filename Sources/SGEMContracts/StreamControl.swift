import SGEMCore
import SGEMSupport

/// A change that closes or re-filters realtime streams. Accounts records it in the event journal
/// in the transaction of the change, for the audience `.hubs` (no client ever receives it), so
/// every realtime hub acts on it in stream order — before it delivers any later event —
/// whichever process wrote it: this server, the command line, another instance.
public enum StreamControl: Sendable, Equatable {
    /// The account was deactivated: all its sockets close.
    case accountDeactivated(userID: Int64)
    /// Sessions of the user ended (logout, password change or reset): their sockets close.
    case sessionsRevoked(userID: Int64, scope: Scope)
    /// The user's role changed: who counts as an admin is read again.
    case roleChanged(userID: Int64)

    /// Which of a user's sessions ended.
    public enum Scope: Sendable, Equatable {
        /// Every session of the user.
        case all
        /// Every session but this one (a password change keeps the session that made it).
        case allBut(Int64)
        /// Just this session (a logout).
        case only(Int64)

        var name: String {
            switch self {
            case .all: "all"
            case .allBut: "allBut"
            case .only: "only"
            }
        }

        var sessionID: Int64? {
            switch self {
            case .all: nil
            case let .allBut(id), let .only(id): id
            }
        }

        /// Whether the session `id` (nil: credentials without a session) is among the ended ones.
        public func contains(_ id: Int64?) -> Bool {
            switch self {
            case .all: true
            case let .allBut(kept): id != kept
            case let .only(ended): id == ended
            }
        }
    }

    static let deactivatedType = "control.account_deactivated"
    static let revokedType = "control.sessions_revoked"
    static let roleType = "control.role_changed"

    /// The journal event that carries this change.
    public var event: RealtimeEvent {
        switch self {
        case let .accountDeactivated(user):
            RealtimeEvent(type: StreamControl.deactivatedType, audience: .hubs, data: ["userId": .number(Double(user))])
        case let .roleChanged(user):
            RealtimeEvent(type: StreamControl.roleType, audience: .hubs, data: ["userId": .number(Double(user))])
        case let .sessionsRevoked(user, scope):
            RealtimeEvent(type: StreamControl.revokedType, audience: .hubs, data: .object([
                ("userId", .number(Double(user))), ("scope", .string(scope.name)),
                ("sessionId", scope.sessionID.map { .number(Double($0)) } ?? .null),
            ]))
        }
    }

    /// The change a journal event carries; nil for any other event.
    public init?(_ event: RealtimeEvent) {
        guard event.audience == .hubs, let user = event.data["userId"]?.numberValue.map(Int64.init) else { return nil }
        switch event.type {
        case StreamControl.deactivatedType: self = .accountDeactivated(userID: user)
        case StreamControl.roleType: self = .roleChanged(userID: user)
        case StreamControl.revokedType:
            let session = event.data["sessionId"]?.numberValue.map(Int64.init)
            switch (event.data["scope"]?.stringValue, session) {
            case ("all"?, _): self = .sessionsRevoked(userID: user, scope: .all)
            case let ("allBut"?, id?): self = .sessionsRevoked(userID: user, scope: .allBut(id))
            case let ("only"?, id?): self = .sessionsRevoked(userID: user, scope: .only(id))
            default: return nil
            }
        default: return nil
        }
    }
}
