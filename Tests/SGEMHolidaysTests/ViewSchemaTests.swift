import SGEMCore
@testable import SGEMHolidays
import SGEMSupport
import Testing

/// Each answer of the holidays API, encoded from a sample value, against the OpenAPI schema
/// documented beside its route: the same keys (every required one), types and nullability.
/// The samples use fixed dates, so they pass on any day.
@Suite("Holidays: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static let vacation = LeaveType(id: 1, key: "vacation", name: "Vacation", countsAgainstAllowance: true, needsApproval: true)
    static let at = Timestamp(rfc3339: "2030-05-02T09:30:00Z")!

    /// A request with every optional value set (`decided`) or none.
    static func request(_ id: Int64, decided: Bool, visible: Bool = true) -> HolidayRequest {
        HolidayRequest(id: id, userID: 7, type: vacation, start: Day(iso: "2030-06-10")!, end: Day(iso: "2030-06-14")!,
                       halfStart: true, halfEnd: false, days: 4.5, status: decided ? .approved : .pending,
                       note: decided ? "sea" : nil, createdAt: at, decidedBy: decided ? 3 : nil,
                       decidedAt: decided ? at : nil, decisionNote: decided ? "enjoy" : nil,
                       history: [HistoryEntry(from: nil, to: .pending, byUserID: 7, at: at, note: nil)]
                           + (decided ? [HistoryEntry(from: .pending, to: .approved, byUserID: 3, at: at, note: "ok")] : []))
    }

    static let summary = HolidaySummary(year: 2030, allowance: 25, carriedOver: 2.5, approvedDays: 4.5, pendingDays: 0)
    static let person = DirectoryUser(id: 7, username: "ana", displayName: "Ana", email: "ana@example.com", role: .employee,
                                      active: true, language: "en")

    static func detail(user: DirectoryUser?, limit: Int?) -> HolidayBook.Detail {
        HolidayBook.Detail(request: request(1, decided: false), user: user, summary: summary,
                           otherRequests: [request(2, decided: true)],
                           alsoAway: [HolidayBook.Overlap(request: request(3, decided: true), displayName: "Bob")],
                           overLimit: true, limit: limit)
    }

    static let cases: [(String, JSONValue, JSONValue)] = [
        ("request, nothing decided", request(1, decided: false).jsonValue, HolidaysAPI.requestSchema),
        ("request, decided", request(1, decided: true).jsonValue, HolidaysAPI.requestSchema),
        ("year", HolidayYear(summary: summary, requests: [request(1, decided: true)], workingDays: [1, 2, 3, 4, 5]).jsonValue,
         HolidaysAPI.yearSchema),
        ("admin list", Items(items: [AdminListItem(request: request(1, decided: false), displayName: "Ana")]).jsonValue,
         HolidaysAPI.items(HolidaysAPI.adminItemSchema)),
        ("detail", detail(user: person, limit: 2).jsonValue, HolidaysAPI.detailSchema),
        ("detail without user or limit", detail(user: nil, limit: nil).jsonValue, HolidaysAPI.detailSchema),
        ("calendar", Items(items: [HolidayBook.Absence(request: request(1, decided: true), displayName: "Ana", typeVisible: true),
                                   HolidayBook.Absence(request: request(2, decided: false), displayName: "Bob", typeVisible: false)]).jsonValue,
         HolidaysAPI.items(HolidaysAPI.calendarItemSchema)),
        ("calendar link", CalendarLink(url: "https://sgem.example/api/v1/holidays/calendar.ics?token=x").jsonValue,
         HolidaysAPI.calendarLinkSchema),
        ("leave types", Items(items: [vacation]).jsonValue, HolidaysAPI.items(HolidaysAPI.leaveTypeSchema)),
        ("public holiday", PublicHoliday(id: 4, date: Day(iso: "2030-12-25")!, name: "Christmas").jsonValue, HolidaysAPI.publicHolidaySchema),
    ]

    @Test("the encoded value has the schema's properties, types and nulls", arguments: cases.indices)
    func matches(_ index: Int) {
        let (name, value, schema) = ViewSchemaTests.cases[index]
        #expect(value != .null, "\(name) did not encode")
        #expect(APISchema.mismatches(value, against: schema) == [], "\(name)")
    }

    @Test("the checker sees a missing key, an extra key, a wrong type and a null where none is allowed")
    func checkerCatches() {
        let schema = HolidaysAPI.publicHolidaySchema
        #expect(APISchema.mismatches(["id": 1, "date": "2030-12-25"], against: schema) == ["(root): name is documented but absent"])
        #expect(APISchema.mismatches(["id": 1, "date": "2030-12-25", "name": "x", "extra": true], against: schema)
            == ["(root): extra is not documented"])
        #expect(APISchema.mismatches(["id": 1.5, "date": "2030-12-25", "name": .null], against: schema)
            == ["id: not an integer", "name: null but not nullable"])
    }

    @Test("ids are whole numbers and dates YYYY-MM-DD on the wire")
    func idsAndDates() throws {
        let value = ViewSchemaTests.request(9_007_199_254, decided: true).jsonValue
        #expect(value["id"] == 9_007_199_254 && value["decidedBy"] == 3)
        #expect(value["start"] == "2030-06-10" && value["createdAt"] == "2030-05-02T09:30:00Z")
        #expect(value["type"] == "vacation" && value["history"]?.arrayValue?.count == 2)
    }
}
