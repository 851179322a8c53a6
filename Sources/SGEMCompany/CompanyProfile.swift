import SGEMCore
import SGEMSupport

/// The company's own contact information (`GET /api/v1/company`); nil fields are not given.
struct CompanyProfile: Sendable, Equatable {
    var name: String?
    var phone: String?
    var email: String?
    var website: String?
    var address: String?
    /// When an admin last saved it; nil until then.
    var updatedAt: Timestamp?

    /// The field names, in the API's order.
    static let fieldNames = ["name", "phone", "email", "website", "address"]

    /// `self` with `fields` applied (absent fields keep their value; null or "" clears); 422
    /// `invalid` listing every refused field.
    func applying(_ fields: [String: JSONValue]) throws(CompanyError) -> CompanyProfile {
        var value = self
        var problems: [String: String] = [:]
        for name in CompanyProfile.fieldNames {
            guard let raw = fields[name] else { continue }
            let text: String
            switch raw {
            case .null: text = ""
            case let .string(s): text = s
            default:
                problems[name] = "must be a string or null"
                continue
            }
            switch CompanyProfile.normalize(name, text) {
            case let .success(stored): value[name] = stored
            case let .failure(problem): problems[name] = problem.message
            }
        }
        if !problems.isEmpty { throw .invalid(problems) }
        return value
    }

    subscript(field: String) -> String? {
        get {
            switch field {
            case "name": name
            case "phone": phone
            case "email": email
            case "website": website
            default: address
            }
        }
        set {
            switch field {
            case "name": name = newValue
            case "phone": phone = newValue
            case "email": email = newValue
            case "website": website = newValue
            default: address = newValue
            }
        }
    }

    /// The stored form of one field (nil clears), or why it is refused.
    static func normalize(_ field: String, _ raw: String) -> Result<String?, ProfileProblem> {
        // Line breaks are kept in the address only, as "\n".
        let s = (field == "address" ? raw.replacingOccurrences(of: "\r\n", with: "\n") : raw).trimmingWhitespace()
        if s.isEmpty { return .success(nil) }
        let allowsLines = field == "address"
        if s.unicodeScalars.contains(where: { ($0.value < 0x20 && !(allowsLines && $0 == "\n")) || $0.value == 0x7F }) {
            return .failure(ProfileProblem(allowsLines ? "must not contain control characters" : "must be one line without control characters"))
        }
        switch field {
        case "name":
            return s.count <= 200 ? .success(s) : .failure(ProfileProblem("must be at most 200 characters"))
        case "phone":
            let allowed = s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || " +()-.".utf8.contains($0) }
            guard s.count <= 50, allowed, s.utf8.contains(where: { $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(ProfileProblem("must be a phone number of at most 50 digits, spaces and + ( ) - ."))
            }
            return .success(s)
        case "email":
            return isEmailAddress(s) ? .success(s) : .failure(ProfileProblem("must be an email address such as office@example.com"))
        case "website":
            return isWebURL(s) ? .success(s) : .failure(ProfileProblem("must be an http:// or https:// URL of at most 500 characters"))
        default:
            return s.count <= 500 ? .success(s) : .failure(ProfileProblem("must be at most 500 characters"))
        }
    }

    /// `local@domain.tld`: a local part of printable ASCII without spaces, a domain name.
    static func isEmailAddress(_ s: String) -> Bool {
        guard s.utf8.count <= 254, let at = s.lastIndex(of: "@") else { return false }
        let local = s[..<at]
        let domain = s[s.index(after: at)...].lowercased()
        return !local.isEmpty && local.utf8.count <= 64 && local.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x40 }
            && isDomainName(domain)
    }

    /// `http(s)://host[:port][/…]`, printable ASCII without spaces, quotes or angle brackets.
    static func isWebURL(_ s: String) -> Bool {
        guard s.count <= 500, s.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x3C && $0 != 0x3E }) else { return false }
        let lower = s.lowercased()
        guard let scheme = ["https://", "http://"].first(where: { lower.hasPrefix($0) }) else { return false }
        let rest = lower.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        return isDomainName(host) || host == "localhost"
    }
}

/// Why one field is invalid.
struct ProfileProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
