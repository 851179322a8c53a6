import SGEMCore
import SGEMHTTP
import SGEMSupport

// The holidays API's request bodies, one type each, read once from the request with the
// contract's checks: an invalid body is a 422 `validation_failed` naming every bad field.

/// `POST /holidays`: `{start, end, type?, halfStart?, halfEnd?, note?}`.
struct NewHolidayRequestBody {
    let draft: HolidayBook.Draft

    init(_ request: Request) throws {
        var body = try JSONBody(request)
        let start = body.day("start", required: true)
        let end = body.day("end", required: true)
        let type = body.string("type")
        let halfStart = body.bool("halfStart") ?? false
        let halfEnd = body.bool("halfEnd") ?? false
        let note = body.note()
        try body.check()
        guard let start, let end else { throw APIError.validationFailed(["start": "is required"]) }
        draft = HolidayBook.Draft(start: start, end: end, typeKey: type, halfStart: halfStart, halfEnd: halfEnd, note: note)
    }
}

/// The optional `{note}` of a decision or a cancellation; an empty body is no note.
struct DecisionNoteBody {
    let note: String?

    init(_ request: Request) throws {
        guard !request.body.isEmpty else { note = nil; return }
        var body = try JSONBody(request)
        note = body.note()
        try body.check()
    }
}

/// `PUT /admin/users/{id}/allowances/{year}`: `{days}`, 0 to 366 in half days.
struct AllowanceBody: RequestBody {
    let days: Double

    init(reading body: inout JSONBody) {
        days = body.allowanceDays() ?? 0
    }
}

/// `POST /admin/leave-types`: `{key, name, countsAgainstAllowance?, needsApproval?}`.
struct NewLeaveTypeBody: RequestBody {
    let key: String
    let name: String
    let countsAgainstAllowance: Bool
    let needsApproval: Bool

    init(reading body: inout JSONBody) {
        let key = body.string("key", required: true)
        if let key, !NewLeaveTypeBody.isTypeKey(key) { body.problem("key", "must be 2 to 32 of a-z 0-9 _ -, starting with a letter") }
        let name = body.oneLineName("name", required: true)
        countsAgainstAllowance = body.bool("countsAgainstAllowance") ?? true
        needsApproval = body.bool("needsApproval") ?? true
        (self.key, self.name) = (key ?? "", name ?? "")
    }

    /// 2 to 32 of a-z 0-9 _ -, starting with a letter.
    static func isTypeKey(_ key: String) -> Bool {
        let b = Array(key.utf8)
        guard (2...32).contains(b.count), b[0] >= 0x61, b[0] <= 0x7A else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D }
    }
}

/// `PATCH /admin/leave-types/{id}`: `{name?, countsAgainstAllowance?, needsApproval?}`.
struct LeaveTypeChangeBody: RequestBody {
    let name: String?
    let countsAgainstAllowance: Bool?
    let needsApproval: Bool?

    init(reading body: inout JSONBody) {
        name = body.oneLineName("name", required: false)
        countsAgainstAllowance = body.bool("countsAgainstAllowance")
        needsApproval = body.bool("needsApproval")
    }
}

/// `POST /admin/public-holidays`: `{date, name}`.
struct NewPublicHolidayBody {
    let date: Day
    let name: String

    init(_ request: Request) throws {
        var body = try JSONBody(request)
        let date = body.day("date", required: true)
        let name = body.oneLineName("name", required: true)
        try body.check()
        guard let date, let name else { throw APIError.validationFailed(["date": "is required"]) }
        (self.date, self.name) = (date, name)
    }
}

extension JSONBody {
    /// A date field, `YYYY-MM-DD`.
    mutating func day(_ key: String, required: Bool) -> Day? {
        guard let raw = string(key, required: required) else { return nil }
        guard let day = Day(iso: raw) else { problem(key, HolidaysAPI.dateProblem); return nil }
        return day
    }

    /// The optional `note` (null or up to 2000 characters; empty means none).
    mutating func note() -> String? {
        guard case let .some(value?) = nullableString("note") else { return nil }
        if value.count > HolidayBook.maxNote { problem("note", "must be at most \(HolidayBook.maxNote) characters"); return nil }
        return value.isEmpty ? nil : value
    }

    /// A one-line name of 1 to 100 characters, trimmed; null is refused even when optional.
    mutating func oneLineName(_ key: String, required: Bool) -> String? {
        if !required, fields[key] == .null { problem(key, "must be a string"); return nil }
        guard let raw = string(key, required: required) else { return nil }
        let name = raw.trimmingWhitespace()
        guard (1...100).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            problem(key, "must be 1 to 100 characters on one line")
            return nil
        }
        return name
    }

    /// `days` of an allowance: 0 to 366 in half days.
    mutating func allowanceDays() -> Double? {
        guard let raw = fields["days"] else { problem("days", "is required"); return nil }
        guard let n = raw.numberValue, n >= 0, n <= 366, (n * 2) == (n * 2).rounded() else {
            problem("days", "must be a number of days from 0 to 366, in half days")
            return nil
        }
        return n
    }
}
