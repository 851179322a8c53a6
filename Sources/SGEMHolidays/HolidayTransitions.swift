/// The request state machine of the contract, in one table: which status may follow which, and
/// who may make each move. Everything that changes a status asks here first.
enum HolidayTransitions {
    /// The moves a request can make, by name.
    enum Action: String, Sendable, CaseIterable {
        case approve, reject, reopen, cancel
    }

    /// Who is asking, in the terms the rules speak of.
    struct Actor: Sendable {
        let userID: Int64
        let isAdmin: Bool
        /// Whether another active admin exists (so an admin may not decide their own request).
        let anotherActiveAdmin: Bool
    }

    /// Who may make a move: an admin deciding (never on their own request while another active
    /// admin exists), or the owner before the start date or an admin at any time.
    enum Permission: Sendable {
        case decidingAdmin
        case ownerBeforeStartOrAdmin
    }

    struct Rule: Sendable {
        let from: HolidayStatus
        let to: HolidayStatus
        let permission: Permission
    }

    /// The whole table. Rejected and cancelled are final: no rule leaves them.
    static let rules: [Action: [Rule]] = [
        .approve: [Rule(from: .pending, to: .approved, permission: .decidingAdmin)],
        .reject: [Rule(from: .pending, to: .rejected, permission: .decidingAdmin)],
        .reopen: [Rule(from: .approved, to: .pending, permission: .decidingAdmin)],
        .cancel: [Rule(from: .pending, to: .cancelled, permission: .ownerBeforeStartOrAdmin),
                  Rule(from: .approved, to: .cancelled, permission: .ownerBeforeStartOrAdmin)],
    ]

    /// Why a move was refused.
    enum Refusal: Error, Equatable, Sendable {
        /// No rule moves a request in this status this way (409 invalid_transition).
        case invalidTransition(from: HolidayStatus, action: Action)
        /// A rule exists but this actor may not use it (403 forbidden).
        case forbidden(String)
    }

    /// The status `action` leads to from `status` when `actor` asks about `owner`'s request
    /// starting on `start`, or why not. `today` is the company's calendar date.
    static func next(_ action: Action, from status: HolidayStatus, owner: Int64, start: Day, today: Day,
                     actor: Actor) -> Result<HolidayStatus, Refusal> {
        guard let rule = rules[action]?.first(where: { $0.from == status }) else {
            return .failure(.invalidTransition(from: status, action: action))
        }
        switch rule.permission {
        case .decidingAdmin:
            guard actor.isAdmin else { return .failure(.forbidden("only an admin decides requests")) }
            if actor.userID == owner, actor.anotherActiveAdmin {
                return .failure(.forbidden("another admin must decide your own request"))
            }
        case .ownerBeforeStartOrAdmin:
            if actor.isAdmin { break }
            guard actor.userID == owner else { return .failure(.forbidden("only the employee or an admin may cancel a request")) }
            guard today < start else {
                return .failure(.forbidden("a request can be cancelled by its owner only before its start date; ask an admin"))
            }
        }
        return .success(rule.to)
    }
}
