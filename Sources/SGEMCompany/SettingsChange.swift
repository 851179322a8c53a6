#if canImport(Glibc)
import Glibc
#endif
import SGEMContracts
import SGEMCore
import SGEMSupport

/// A settings change, checked field by field: the body of `PUT /admin/settings`, or one
/// `admin settings set KEY VALUE` turned into the same JSON, so both obey the same rules.
struct SettingsChange: Sendable {
    let fields: [String: JSONValue]

    init(fields: [String: JSONValue]) { self.fields = fields }

    /// The JSON field names a change may carry.
    static var keys: [String] { rules.map(\.key) }

    /// `current` with the change's fields applied; `invalid` listing every refused field.
    func applied(to current: CompanySettingsValue) throws(CompanyError) -> CompanySettingsValue {
        var value = current
        var problems: [String: String] = [:]
        for (key, apply) in SettingsChange.rules {
            if let raw = fields[key], let problem = apply(raw, &value) { problems[key] = problem }
        }
        if value.registration == "domain", value.registrationDomain == nil, problems["registrationDomain"] == nil {
            problems["registrationDomain"] = "is required when registration is 'domain'"
        }
        if !problems.isEmpty { throw .invalid(problems) }
        return value
    }

    /// Applies one field's JSON to the settings, or says what is wrong with it.
    typealias Rule = @Sendable (JSONValue, inout CompanySettingsValue) -> String?

    /// Each field's rule, in the API's order.
    static let rules: [(key: String, apply: Rule)] = [
        ("defaultAllowanceDays", { raw, value in
            guard let n = wholeNumber(raw, in: 0...366) else { return "must be a whole number from 0 to 366" }
            value.defaultAllowanceDays = n
            return nil
        }),
        ("workingDays", { raw, value in
            let numbers = raw.arrayValue?.compactMap { wholeNumber($0, in: 1...7) }
            guard let numbers, !numbers.isEmpty, numbers.count == raw.arrayValue?.count, Set(numbers).count == numbers.count else {
                return "must be a non-empty list of distinct ISO weekday numbers 1 to 7"
            }
            value.workingDays = numbers.sorted()
            return nil
        }),
        ("registration", { raw, value in
            guard let s = raw.stringValue, CompanySettingsValue.registrationModes.contains(s) else { return "must be one of closed, open, domain" }
            value.registration = s
            return nil
        }),
        ("registrationDomain", { raw, value in
            clearable(raw, &value.registrationDomain, "must be a domain name such as example.com") {
                isDomainName($0.lowercased()) ? $0.lowercased() : nil
            }
        }),
        ("defaultLanguage", { raw, value in
            guard let s = raw.stringValue, s.utf8.count == 2, s.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else {
                return "must be an ISO 639-1 code of two lowercase letters"
            }
            value.defaultLanguage = s
            return nil
        }),
        ("timeZone", { raw, value in
            guard let s = raw.stringValue, isTimeZoneName(s) else { return "must be an IANA time zone name such as Europe/Madrid" }
            value.timeZone = s
            return nil
        }),
        ("maxSimultaneousAbsences", { raw, value in
            if raw == .null { value.maxSimultaneousAbsences = nil; return nil }
            guard let n = wholeNumber(raw, in: 1...10_000) else { return "must be null (no limit) or a whole number from 1 to 10000" }
            value.maxSimultaneousAbsences = n
            return nil
        }),
        ("carryOverMaxDays", { raw, value in
            guard let n = wholeNumber(raw, in: 0...366) else { return "must be a whole number from 0 (off) to 366" }
            value.carryOverMaxDays = n
            return nil
        }),
        ("carryOverExpires", { raw, value in
            clearable(raw, &value.carryOverExpires, "must be null or a day of every year as MM-DD, such as 03-31") { isMonthDay($0) ? $0 : nil }
        }),
        ("pushContact", { raw, value in
            clearable(raw, &value.pushContact, "must be null, a mailto: address or an https: URL") { PushContact.problem($0) == nil ? $0 : nil }
        }),
    ]

    /// A text setting that null or "" clears: `accept` gives what to store, or nil for `problem`.
    static func clearable(_ raw: JSONValue, _ target: inout String?, _ problem: String, accept: (String) -> String?) -> String? {
        switch raw {
        case .null: target = nil
        case let .string(s) where s.isEmpty: target = nil
        case let .string(s):
            guard let accepted = accept(s) else { return problem }
            target = accepted
        default: return problem
        }
        return nil
    }

    static func wholeNumber(_ raw: JSONValue, in range: ClosedRange<Int>) -> Int? {
        guard let n = raw.numberValue, n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else { return nil }
        return Int(n)
    }
}

/// "MM-DD" naming a day that exists every year (so not 02-29).
func isMonthDay(_ s: String) -> Bool {
    let b = Array(s.utf8)
    guard b.count == 5, b[2] == 0x2D, [0, 1, 3, 4].allSatisfy({ b[$0] >= 0x30 && b[$0] <= 0x39 }),
          let month = Int(s.prefix(2)), let day = Int(s.suffix(2)) else { return false }
    let lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return (1...12).contains(month) && (1...lengths[month - 1]).contains(day)
}

/// Whether `name` is a time zone of the IANA database: "UTC", or a zone file (magic `TZif`)
/// under /usr/share/zoneinfo (Debian's tzdata). The name is checked before it reaches the file
/// system: letters, digits, `_ + -`, segments joined by `/`, none of them `.` or `..`.
func isTimeZoneName(_ name: String) -> Bool {
    if name == "UTC" { return true }
    guard (1...64).contains(name.utf8.count), name.first != "/", name.last != "/" else { return false }
    let segments = name.split(separator: "/", omittingEmptySubsequences: false)
    guard segments.allSatisfy({ segment in
        !segment.isEmpty && segment.first != "-" && segment.utf8.allSatisfy {
            ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2B || $0 == 0x2D
        }
    }), let first = segments.first, first.first?.isUppercase == true else { return false }
    guard let file = fopen("/usr/share/zoneinfo/" + name, "rb") else { return false }
    defer { fclose(file) }
    var magic = [UInt8](repeating: 0, count: 4)
    return fread(&magic, 1, 4, file) == 4 && magic == Array("TZif".utf8)
}
