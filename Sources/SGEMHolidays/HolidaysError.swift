/// Why the holidays module refused something, in its own words: what `HolidayBook` throws to the
/// routes and the admin verbs alike. The route edge gives each case its status and code
/// (`HolidaysError+HTTP.swift`); the command line prints `message`.
enum HolidaysError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Input the rules refuse, one problem per field (a 422 on the API).
    case invalid([String: String])
    case requestNotFound
    case leaveTypeNotFound
    case publicHolidayNotFound
    /// The person named is not in the directory.
    case userNotFound
    /// The dates share a day with one of the employee's pending or approved requests.
    case overlap
    /// A year's remaining days do not cover the request's days in that year.
    case allowanceExceeded(year: Int, requestedDays: Double, remainingDays: Double)
    /// No rule of `HolidayTransitions` moves a request in this status this way.
    case invalidTransition(from: HolidayStatus, action: HolidayTransitions.Action)
    /// A rule exists but this actor may not use it.
    case forbidden(String)
    case publicHolidayExists(Day)
    case leaveTypeExists(key: String)
    /// `vacation` is the default type and cannot be deleted.
    case defaultLeaveType
    /// Requests of the type exist.
    case leaveTypeInUse

    /// One line for a person, the same on the API and the command line (the fields of invalid
    /// input go in the API's details and in `description`).
    var message: String {
        switch self {
        case .invalid: "some fields are invalid"
        case .requestNotFound: "no such request"
        case .leaveTypeNotFound: "no such leave type"
        case .publicHolidayNotFound: "no such public holiday"
        case .userNotFound: "no such user"
        case .overlap: "these dates overlap one of your pending or approved requests"
        case let .allowanceExceeded(year, requested, remaining):
            "not enough days left in \(year): this request needs \(HolidayBook.format(requested)) days of \(year) and \(HolidayBook.format(remaining)) remain"
        case let .invalidTransition(from, action): "a \(from.rawValue) request cannot be \(HolidayBook.pastTense(action))"
        case let .forbidden(message): message
        case let .publicHolidayExists(date): "\(date.iso) is already a public holiday"
        case let .leaveTypeExists(key): "a leave type with key '\(key)' exists"
        case .defaultLeaveType: "vacation is the default leave type and stays"
        case .leaveTypeInUse: "requests of this type exist; rename it instead"
        }
    }

    /// The message, and for invalid input each field's problem.
    var description: String {
        guard case let .invalid(fields) = self else { return message }
        return fields.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "; ")
    }
}
