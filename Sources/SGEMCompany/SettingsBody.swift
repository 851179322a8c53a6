#if canImport(Glibc)
import Glibc
#endif
import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// A settings change, checked field by field: the body of `PUT /admin/settings`, or one
/// `admin settings set KEY VALUE` turned into the same JSON, so both obey the same rules.
struct SettingsBody {
    let fields: [String: JSONValue]

    init(_ request: Request) throws { fields = try JSONBody(request).fields }
    init(fields: [String: JSONValue]) { self.fields = fields }

    /// The JSON field names a change may carry.
    static let keys = ["defaultAllowanceDays", "workingDays", "registration", "registrationDomain", "defaultLanguage",
                       "timeZone", "maxSimultaneousAbsences", "carryOverMaxDays", "carryOverExpires", "pushContact"]

    /// `current` with the body's fields applied; 422 listing every invalid field.
    func applied(to current: CompanySettingsValue) throws -> CompanySettingsValue {
        var value = current
        var problems: [String: String] = [:]
        if let raw = fields["defaultAllowanceDays"] {
            if let n = wholeNumber(raw, in: 0...366) { value.defaultAllowanceDays = n } else {
                problems["defaultAllowanceDays"] = "must be a whole number from 0 to 366"
            }
        }
        if let raw = fields["workingDays"] {
            let numbers = raw.arrayValue?.compactMap { wholeNumber($0, in: 1...7) }
            if let numbers, !numbers.isEmpty, numbers.count == raw.arrayValue?.count, Set(numbers).count == numbers.count {
                value.workingDays = numbers.sorted()
            } else {
                problems["workingDays"] = "must be a non-empty list of distinct ISO weekday numbers 1 to 7"
            }
        }
        if let raw = fields["registration"] {
            if let s = raw.stringValue, CompanySettingsValue.registrationModes.contains(s) {
                value.registration = s
            } else {
                problems["registration"] = "must be one of closed, open, domain"
            }
        }
        if let raw = fields["registrationDomain"] {
            switch raw {
            case .null: value.registrationDomain = nil
            case let .string(s) where s.isEmpty: value.registrationDomain = nil
            case let .string(s) where isDomainName(s.lowercased()): value.registrationDomain = s.lowercased()
            default: problems["registrationDomain"] = "must be a domain name such as example.com"
            }
        }
        if value.registration == "domain", value.registrationDomain == nil, problems["registrationDomain"] == nil {
            problems["registrationDomain"] = "is required when registration is 'domain'"
        }
        if let raw = fields["defaultLanguage"] {
            if let s = raw.stringValue, s.utf8.count == 2, s.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) {
                value.defaultLanguage = s
            } else {
                problems["defaultLanguage"] = "must be an ISO 639-1 code of two lowercase letters"
            }
        }
        if let raw = fields["timeZone"] {
            if let s = raw.stringValue, isTimeZoneName(s) { value.timeZone = s } else {
                problems["timeZone"] = "must be an IANA time zone name such as Europe/Madrid"
            }
        }
        if let raw = fields["maxSimultaneousAbsences"] {
            if raw == .null { value.maxSimultaneousAbsences = nil } else if let n = wholeNumber(raw, in: 1...10_000) {
                value.maxSimultaneousAbsences = n
            } else {
                problems["maxSimultaneousAbsences"] = "must be null (no limit) or a whole number from 1 to 10000"
            }
        }
        if let raw = fields["carryOverMaxDays"] {
            if let n = wholeNumber(raw, in: 0...366) { value.carryOverMaxDays = n } else {
                problems["carryOverMaxDays"] = "must be a whole number from 0 (off) to 366"
            }
        }
        if let raw = fields["carryOverExpires"] {
            switch raw {
            case .null: value.carryOverExpires = nil
            case let .string(s) where s.isEmpty: value.carryOverExpires = nil
            case let .string(s) where isMonthDay(s): value.carryOverExpires = s
            default: problems["carryOverExpires"] = "must be null or a day of every year as MM-DD, such as 03-31"
            }
        }
        if let raw = fields["pushContact"] {
            switch raw {
            case .null: value.pushContact = nil
            case let .string(s) where s.isEmpty: value.pushContact = nil
            case let .string(s) where PushContact.problem(s) == nil: value.pushContact = s
            default: problems["pushContact"] = "must be null, a mailto: address or an https: URL"
            }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return value
    }

    func wholeNumber(_ raw: JSONValue, in range: ClosedRange<Int>) -> Int? {
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
