import SGEMCore
import SGEMSupport

/// A request's status; rejected and cancelled are final.
enum HolidayStatus: String, Sendable, CaseIterable, Encodable {
    case pending, approved, rejected, cancelled

    /// Pending and approved requests hold their days: they count against the allowance, block
    /// overlapping requests and (approved) show on the calendar.
    var holdsDays: Bool { self == .pending || self == .approved }
}

/// A kind of leave: `vacation` from the start, others added by admins.
/// Encoded as the contract's leave type `{id, key, name, countsAgainstAllowance, needsApproval}`.
struct LeaveType: Sendable, Equatable, Encodable {
    let id: Int64
    let key: String
    let name: String
    let countsAgainstAllowance: Bool
    let needsApproval: Bool
}

/// One step of a request's life.
struct HistoryEntry: Sendable, Equatable {
    /// Nil for the creation.
    let from: HolidayStatus?
    let to: HolidayStatus
    let byUserID: Int64
    let at: Timestamp
    let note: String?
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
}

/// A public holiday: a date on which nobody's leave is counted.
/// Encoded as `{id, date, name}`.
struct PublicHoliday: Sendable, Equatable, Encodable {
    let id: Int64
    let date: Day
    let name: String
}
