/// Why the company module refused a change, in its own words: what the company's information,
/// its settings and its feed list throw to the controllers and the admin verbs alike. The route
/// edge gives it its status and code (`CompanyError+HTTP.swift`); the command line names each
/// field's problem.
enum CompanyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Values the rules refuse, one problem per field (a 422 on the API).
    case invalid([String: String])

    /// One line for a person.
    var message: String {
        switch self {
        case .invalid: "some fields are invalid"
        }
    }

    /// Each field's problem, in field order.
    var description: String {
        switch self {
        case let .invalid(fields): fields.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "; ")
        }
    }
}
