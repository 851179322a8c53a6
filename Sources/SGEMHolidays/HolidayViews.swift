import SGEMCore
import SGEMHTTP
import SGEMSupport

// What the holidays API answers, as `Encodable` values: the domain types encode as the
// contract's objects (ids as integers, dates as YYYY-MM-DD, times as RFC 3339, absent values as
// null), and a few views put several of them together. `HolidaysViewSchemaTests` checks each
// against its OpenAPI schema.

extension Day: Encodable {
    /// `"YYYY-MM-DD"`.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(iso)
    }
}

extension HistoryEntry: Encodable {
    enum CodingKeys: String, CodingKey { case from, to, byUserId, at, note }

    /// `{from, to, byUserId, at, note}`; `from` is null for the creation.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(byUserID, forKey: .byUserId)
        try c.encode(at.rfc3339(), forKey: .at)
        try c.encode(note, forKey: .note)
    }
}

extension HolidayRequest: Encodable {
    enum CodingKeys: String, CodingKey {
        case id, userId, type, start, end, halfStart, halfEnd, days, status, note, createdAt, decidedBy, decidedAt, decisionNote, history
    }

    /// The contract's request; `type` is the leave type's key, unset values are null.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(userID, forKey: .userId)
        try c.encode(type.key, forKey: .type)
        try c.encode(start, forKey: .start)
        try c.encode(end, forKey: .end)
        try c.encode(halfStart, forKey: .halfStart)
        try c.encode(halfEnd, forKey: .halfEnd)
        try c.encode(days, forKey: .days)
        try c.encode(status, forKey: .status)
        try c.encode(note, forKey: .note)
        try c.encode(createdAt.rfc3339(), forKey: .createdAt)
        try c.encode(decidedBy, forKey: .decidedBy)
        try c.encode(decidedAt?.rfc3339(), forKey: .decidedAt)
        try c.encode(decisionNote, forKey: .decisionNote)
        try c.encode(history, forKey: .history)
    }
}

extension HolidaySummary: Encodable {
    /// The stored numbers and `remainingDays`, worked out.
    private struct Wire: Encodable {
        let year: Int
        let allowance, carriedOver, approvedDays, pendingDays, remainingDays: Double
    }

    /// `{year, allowance, carriedOver, approvedDays, pendingDays, remainingDays}`.
    func encode(to encoder: any Encoder) throws {
        try Wire(year: year, allowance: allowance, carriedOver: carriedOver, approvedDays: approvedDays, pendingDays: pendingDays,
                 remainingDays: remainingDays).encode(to: encoder)
    }
}

extension Encodable {
    /// This value as a `JSONValue` (for an event's data, or a test), keys sorted as `Response.json`
    /// writes them (`JSONValue.parse` keeps no order of its own).
    var jsonValue: JSONValue {
        func sorted(_ value: JSONValue) -> JSONValue {
            switch value {
            case let .object(pairs): .object(pairs.sorted { $0.0 < $1.0 }.map { ($0.0, sorted($0.1)) })
            case let .array(items): .array(items.map(sorted))
            default: value
            }
        }
        return (try? JSONValue.parse(Response.json(self).body)).map(sorted) ?? .null
    }
}

/// An employee's year: the summary's fields at the top level (the contract's "summary +
/// requests") and again under `summary`, the requests with a day in the year, and the company's
/// working weekdays.
struct HolidayYear: Encodable, Sendable {
    let summary: HolidaySummary
    let requests: [HolidayRequest]
    let workingDays: [Int]

    enum CodingKeys: String, CodingKey { case summary, requests, workingDays }

    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(summary, forKey: .summary)
        try c.encode(requests, forKey: .requests)
        try c.encode(workingDays, forKey: .workingDays)
    }
}

/// A request on the admin list: the request with the employee's display name.
struct AdminListItem: Encodable, Sendable {
    let request: HolidayRequest
    let displayName: String

    enum CodingKeys: String, CodingKey { case displayName }

    func encode(to encoder: any Encoder) throws {
        try request.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(displayName, forKey: .displayName)
    }
}

/// The private feed's address, `{url}`.
struct CalendarLink: Encodable, Sendable {
    let url: String
}

extension HolidayBook.Overlap: Encodable {
    enum CodingKeys: String, CodingKey { case requestId, userId, displayName, start, end, status }

    /// `{requestId, userId, displayName, start, end, status}`.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(request.id, forKey: .requestId)
        try c.encode(request.userID, forKey: .userId)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(request.start, forKey: .start)
        try c.encode(request.end, forKey: .end)
        try c.encode(request.status, forKey: .status)
    }
}

extension HolidayBook.Detail: Encodable {
    enum CodingKeys: String, CodingKey { case request, user, summary, otherRequests, alsoAway, overLimit, maxSimultaneousAbsences }

    /// The employee as the detail shows them, `{id, username, displayName, active}`.
    struct Person: Encodable {
        let id: Int64
        let username: String
        let displayName: String
        let active: Bool
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(request, forKey: .request)
        try c.encode(user.map { Person(id: $0.id, username: $0.username, displayName: $0.displayName, active: $0.active) }, forKey: .user)
        try c.encode(summary, forKey: .summary)
        try c.encode(otherRequests, forKey: .otherRequests)
        try c.encode(alsoAway, forKey: .alsoAway)
        try c.encode(overLimit, forKey: .overLimit)
        try c.encode(limit, forKey: .maxSimultaneousAbsences)
    }
}

extension HolidayBook.Absence: Encodable {
    enum CodingKeys: String, CodingKey { case userId, displayName, start, end, halfStart, halfEnd, status, type, typeName }

    /// The calendar item; `type` null and `typeName` "away" when the viewer may not see the type.
    /// `write(into:)` writes the same object straight to bytes for the calendar's long pages.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(request.userID, forKey: .userId)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(request.start, forKey: .start)
        try c.encode(request.end, forKey: .end)
        try c.encode(request.halfStart, forKey: .halfStart)
        try c.encode(request.halfEnd, forKey: .halfEnd)
        try c.encode(request.status, forKey: .status)
        try c.encode(typeVisible ? request.type.key : nil, forKey: .type)
        try c.encode(typeVisible ? request.type.name : "away", forKey: .typeName)
    }
}
