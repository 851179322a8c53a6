import SGEMCore
import SGEMSupport

/// A request's status; rejected and cancelled are final.
enum HolidayStatus: String, Sendable, CaseIterable {
    case pending, approved, rejected, cancelled

    /// Pending and approved requests hold their days: they count against the allowance, block
    /// overlapping requests and (approved) show on the calendar.
    var holdsDays: Bool { self == .pending || self == .approved }
}

/// A kind of leave: `vacation` from the start, others added by admins.
struct LeaveType: Sendable, Equatable {
    let id: Int64
    let key: String
    let name: String
    let countsAgainstAllowance: Bool
    let needsApproval: Bool

    var json: JSONValue {
        ["id": .number(Double(id)), "key": .string(key), "name": .string(name),
         "countsAgainstAllowance": .bool(countsAgainstAllowance), "needsApproval": .bool(needsApproval)]
    }
}

/// One step of a request's life.
struct HistoryEntry: Sendable, Equatable {
    /// Nil for the creation.
    let from: HolidayStatus?
    let to: HolidayStatus
    let byUserID: Int64
    let at: Timestamp
    let note: String?

    var json: JSONValue {
        ["from": from.map { .string($0.rawValue) } ?? .null, "to": .string(to.rawValue), "byUserId": .number(Double(byUserID)),
         "at": .string(at.rfc3339()), "note": note.map(JSONValue.string) ?? .null]
    }
}

/// A holiday request as stored, with its type and history.
struct HolidayRequest: Sendable, Equatable {
    let id: Int64
    let userID: Int64
    let type: LeaveType
    let start: Day
    let end: Day
    let halfStart: Bool
    let halfEnd: Bool
    let days: Double
    let status: HolidayStatus
    let note: String?
    let createdAt: Timestamp
    let decidedBy: Int64?
    let decidedAt: Timestamp?
    let decisionNote: String?
    var history: [HistoryEntry]

    /// The contract's request.
    var json: JSONValue {
        .object([
            ("id", .number(Double(id))), ("userId", .number(Double(userID))), ("type", .string(type.key)),
            ("start", .string(start.iso)), ("end", .string(end.iso)), ("halfStart", .bool(halfStart)), ("halfEnd", .bool(halfEnd)),
            ("days", .number(days)), ("status", .string(status.rawValue)), ("note", note.map(JSONValue.string) ?? .null),
            ("createdAt", .string(createdAt.rfc3339())), ("decidedBy", decidedBy.map { .number(Double($0)) } ?? .null),
            ("decidedAt", decidedAt.map { .string($0.rfc3339()) } ?? .null),
            ("decisionNote", decisionNote.map(JSONValue.string) ?? .null),
            ("history", .array(history.map(\.json))),
        ])
    }
}

/// What the year's numbers of one employee are (`remainingDays = allowance + carriedOver −
/// approvedDays − pendingDays`, counting only leave types that count against the allowance).
struct HolidaySummary: Sendable, Equatable {
    let year: Int
    let allowance: Double
    let carriedOver: Double
    let approvedDays: Double
    let pendingDays: Double
    var remainingDays: Double { allowance + carriedOver - approvedDays - pendingDays }

    var json: JSONValue {
        ["year": .number(Double(year)), "allowance": .number(allowance), "carriedOver": .number(carriedOver),
         "approvedDays": .number(approvedDays), "pendingDays": .number(pendingDays), "remainingDays": .number(remainingDays)]
    }
}

/// A public holiday: a date on which nobody's leave is counted.
struct PublicHoliday: Sendable, Equatable {
    let id: Int64
    let date: Day
    let name: String

    var json: JSONValue { ["id": .number(Double(id)), "date": .string(date.iso), "name": .string(name)] }
}
