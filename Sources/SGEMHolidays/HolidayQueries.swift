import SGEMHTTP
import SGEMSupport

// The holidays API's query strings that carry more than a year, one type each, read once with
// the contract's checks: a bad value is a 422 `validation_failed` naming every bad parameter.

/// `GET /admin/holidays`'s filters: `?status=&year=&userId=&type=&limit=`.
struct AdminListFilter {
    let status: HolidayStatus?
    let year: Int?
    let userID: Int64?
    let typeKey: String?
    /// 1 to `HolidayBook.maxRows`, 1000 unless given.
    let limit: Int

    init(_ request: Request) throws {
        var problems: [String: String] = [:]
        var status: HolidayStatus?
        if let raw = request.query["status"], !raw.isEmpty {
            status = HolidayStatus(rawValue: raw)
            if status == nil { problems["status"] = "must be pending, approved, rejected or cancelled" }
        }
        var userID: Int64?
        if let raw = request.query["userId"], !raw.isEmpty {
            userID = Int64(raw)
            if userID == nil || userID! < 1 { problems["userId"] = "must be a user id" }
        }
        var limit = 1000
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...HolidayBook.maxRows).contains(n) { limit = n } else {
                problems["limit"] = "must be a whole number from 1 to \(HolidayBook.maxRows)"
            }
        }
        year = HolidaysAPI.optionalYear(request, &problems)
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        (self.status, self.userID, self.limit) = (status, userID, limit)
        typeKey = request.query["type"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// `GET /holidays/calendar`'s window: `?from=&to=`, both days included, at most
/// `HolidayBook.maxCalendarDays` long.
struct CalendarWindow {
    let from: Day
    let to: Day

    init(_ request: Request) throws {
        var problems: [String: String] = [:]
        let from = CalendarWindow.day(request, "from", &problems)
        let to = CalendarWindow.day(request, "to", &problems)
        if let from, let to {
            if to < from { problems["to"] = "must not be before from" } else if from.distance(to: to) + 1 > HolidayBook.maxCalendarDays {
                problems["to"] = "the range spans at most \(HolidayBook.maxCalendarDays) days"
            }
        }
        guard problems.isEmpty, let from, let to else { throw APIError.validationFailed(problems) }
        (self.from, self.to) = (from, to)
    }

    private static func day(_ request: Request, _ key: String, _ problems: inout [String: String]) -> Day? {
        guard let raw = request.query[key], !raw.isEmpty else { problems[key] = "is required (YYYY-MM-DD)"; return nil }
        guard let day = Day(iso: raw) else { problems[key] = HolidaysAPI.dateProblem; return nil }
        return day
    }
}
