@testable import SGEMHolidays
import SGEMSupport
import Testing

@Suite("Dates, zones and working-day counts")
struct CalendarMathTests {
    @Test("dates parse only as real YYYY-MM-DD days and print back the same",
          arguments: [("2026-12-24", true), ("2028-02-29", true), ("2026-02-29", false), ("2026-13-01", false), ("2026-1-05", false),
                      ("2026-04-31", false), ("26-01-01", false), ("2026-01-01T00:00", false), ("1899-12-31", false), ("2200-01-01", false),
                      ("２０２６-01-01", false), ("2026-00-10", false)])
    func parsing(text: String, valid: Bool) {
        let day = Day(iso: text)
        #expect((day != nil) == valid)
        if let day { #expect(day.iso == text) }
    }

    @Test("ISO weekdays", arguments: [("1970-01-01", 4), ("2026-12-07", 1), ("2026-12-06", 7), ("2000-02-29", 2), ("1969-12-31", 3)])
    func weekdays(text: String, weekday: Int) {
        #expect(Day(iso: text)?.isoWeekday == weekday)
    }

    @Test("UTC offsets from the zone files, the footer rule beyond the table included",
          arguments: [("Pacific/Kiritimati", "2026-06-01T00:00:00Z", 14 * 3600), ("Pacific/Pago_Pago", "2026-06-01T00:00:00Z", -11 * 3600),
                      ("Europe/Madrid", "2026-01-15T12:00:00Z", 3600), ("Europe/Madrid", "2026-07-15T12:00:00Z", 7200),
                      ("Europe/Madrid", "2090-07-15T12:00:00Z", 7200), ("Europe/Madrid", "2090-12-15T12:00:00Z", 3600),
                      ("America/New_York", "2026-03-08T06:59:59Z", -5 * 3600), ("America/New_York", "2026-03-08T07:00:00Z", -4 * 3600),
                      ("Australia/Sydney", "2026-01-10T00:00:00Z", 11 * 3600), ("Australia/Sydney", "2095-07-10T00:00:00Z", 10 * 3600),
                      ("Asia/Kolkata", "2026-05-05T00:00:00Z", 19800), ("UTC", "2026-05-05T00:00:00Z", 0)])
    func offsets(zone: String, at: String, offset: Int) throws {
        let info = try #require(ZoneInfo.named(zone))
        #expect(info.offset(at: Timestamp(rfc3339: at)!.seconds) == offset)
    }

    @Test("unknown or unsafe zone names are refused", arguments: ["Mars/Olympus", "../etc/passwd", "Europe/../../etc/passwd", "", "/etc/passwd"])
    func badZones(name: String) {
        #expect(ZoneInfo.named(name) == nil)
    }

    @Test("the same instant is a different calendar day in zones far apart")
    func farZones() throws {
        let instant = Timestamp(rfc3339: "2026-12-31T10:30:00Z")!
        #expect(Day.on(instant, in: try #require(ZoneInfo.named("Pacific/Kiritimati"))).iso == "2027-01-01")
        #expect(Day.on(instant, in: try #require(ZoneInfo.named("Pacific/Pago_Pago"))).iso == "2026-12-30")
        #expect(Day.on(instant, in: .utc).iso == "2026-12-31")
    }

    static let monFri = Set(1...5)

    @Test("working days: weekends, public holidays and half days",
          arguments: [
            // Monday to Friday, one week.
            ("2026-12-14", "2026-12-18", false, false, 5.0),
            // Across a weekend.
            ("2026-12-10", "2026-12-15", false, false, 4.0),
            // A weekend alone.
            ("2026-12-12", "2026-12-13", false, false, 0.0),
            // With the public holiday 2026-12-08.
            ("2026-12-07", "2026-12-09", false, false, 2.0),
            // Half days at either end.
            ("2026-12-14", "2026-12-18", true, false, 4.5),
            ("2026-12-14", "2026-12-18", true, true, 4.0),
            // The holiday inside a week with half days.
            ("2026-12-07", "2026-12-11", true, true, 3.0),
            ("2026-12-09", "2026-12-09", false, true, 0.5),
            // A half day on a Saturday counts nothing.
            ("2026-12-12", "2026-12-14", true, false, 1.0),
          ])
    func counting(start: String, end: String, halfStart: Bool, halfEnd: Bool, days: Double) {
        let calendar = WorkingCalendar(workingDays: CalendarMathTests.monFri, publicHolidays: [Day(iso: "2026-12-08")!])
        #expect(calendar.total(from: Day(iso: start)!, to: Day(iso: end)!, halfStart: halfStart, halfEnd: halfEnd) == days)
    }

    @Test("a request across New Year is split by year")
    func yearSplit() {
        let calendar = WorkingCalendar(workingDays: CalendarMathTests.monFri, publicHolidays: [Day(iso: "2027-01-01")!])
        let split = calendar.days(from: Day(iso: "2026-12-28")!, to: Day(iso: "2027-01-05")!, halfStart: true, halfEnd: false)
        // 28 (½), 29, 30, 31 in 2026; 1 is a holiday, 2–3 a weekend, 4, 5 in 2027.
        #expect(split == [2026: 3.5, 2027: 2])
    }

    @Test("a Sunday-to-Thursday working week")
    func otherWeek() {
        let calendar = WorkingCalendar(workingDays: [7, 1, 2, 3, 4], publicHolidays: [])
        // 2026-12-04 is a Friday: Fri and Sat are off, Sun to Thu count.
        #expect(calendar.total(from: Day(iso: "2026-12-04")!, to: Day(iso: "2026-12-10")!, halfStart: false, halfEnd: false) == 5)
        #expect(calendar.total(from: Day(iso: "2026-12-04")!, to: Day(iso: "2026-12-05")!, halfStart: false, halfEnd: false) == 0)
    }

    @Test("POSIX rules: fixed zones and both hemispheres")
    func posixRules() throws {
        let fixed = try #require(PosixRule("<+14>-14"))
        #expect(fixed.offset(at: 0) == 14 * 3600)
        let cet = try #require(PosixRule("CET-1CEST,M3.5.0,M10.5.0/3"))
        // 2030-03-31 01:00 UTC is the switch to summer time.
        #expect(cet.offset(at: Timestamp(rfc3339: "2030-03-31T00:59:59Z")!.seconds) == 3600)
        #expect(cet.offset(at: Timestamp(rfc3339: "2030-03-31T01:00:00Z")!.seconds) == 7200)
        let south = try #require(PosixRule("AEST-10AEDT,M10.1.0,M4.1.0/3"))
        #expect(south.offset(at: Timestamp(rfc3339: "2040-01-01T00:00:00Z")!.seconds) == 11 * 3600)
        #expect(south.offset(at: Timestamp(rfc3339: "2040-06-01T00:00:00Z")!.seconds) == 10 * 3600)
        #expect(PosixRule("") == nil)
        #expect(PosixRule("CET-1CEST,M13.5.0,M10.5.0") == nil)
    }
}

@Suite("The request state machine")
struct TransitionTests {
    typealias T = HolidayTransitions
    static let owner: Int64 = 10
    static let start = Day(iso: "2026-12-10")!
    static let admin = T.Actor(userID: 1, isAdmin: true, anotherActiveAdmin: true)
    static let ownerActor = T.Actor(userID: owner, isAdmin: false, anotherActiveAdmin: true)
    static let stranger = T.Actor(userID: 99, isAdmin: false, anotherActiveAdmin: true)

    /// Every action from every status, as an admin deciding someone else's request.
    @Test("the table: allowed moves lead where the contract says, anything else is invalid_transition",
          arguments: T.Action.allCases.flatMap { a in HolidayStatus.allCases.map { (a, $0) } })
    func table(action: T.Action, from: HolidayStatus) {
        let expected: [String: HolidayStatus] = [
            "approve/pending": .approved, "reject/pending": .rejected, "reopen/approved": .pending,
            "cancel/pending": .cancelled, "cancel/approved": .cancelled,
        ]
        let result = T.next(action, from: from, owner: TransitionTests.owner, start: TransitionTests.start,
                            today: Day(iso: "2026-12-01")!, actor: TransitionTests.admin)
        if let to = expected["\(action.rawValue)/\(from.rawValue)"] {
            #expect(result == .success(to))
        } else {
            #expect(result == .failure(.invalidTransition(from: from, action: action)))
        }
    }

    @Test("only admins decide", arguments: [T.Action.approve, .reject, .reopen])
    func decisions(action: T.Action) {
        let from: HolidayStatus = action == .reopen ? .approved : .pending
        let today = Day(iso: "2026-12-01")!
        for actor in [TransitionTests.ownerActor, TransitionTests.stranger] {
            guard case .failure(.forbidden) = T.next(action, from: from, owner: TransitionTests.owner, start: TransitionTests.start,
                                                     today: today, actor: actor) else {
                Issue.record("\(action) by a non-admin was allowed"); continue
            }
        }
    }

    @Test("an admin's own request: decided by another admin, or by themselves when they are the only one",
          arguments: [T.Action.approve, .reject, .reopen])
    func ownRequest(action: T.Action) {
        let from: HolidayStatus = action == .reopen ? .approved : .pending
        let today = Day(iso: "2026-12-01")!
        let withOthers = T.Actor(userID: TransitionTests.owner, isAdmin: true, anotherActiveAdmin: true)
        let alone = T.Actor(userID: TransitionTests.owner, isAdmin: true, anotherActiveAdmin: false)
        guard case .failure(.forbidden) = T.next(action, from: from, owner: TransitionTests.owner, start: TransitionTests.start,
                                                 today: today, actor: withOthers) else {
            Issue.record("an admin decided their own request while another admin exists"); return
        }
        #expect((try? T.next(action, from: from, owner: TransitionTests.owner, start: TransitionTests.start, today: today, actor: alone).get()) != nil)
    }

    @Test("the owner cancels only before the start date; an admin any time; nobody else ever",
          arguments: [("2026-12-09", true), ("2026-12-10", false), ("2026-12-20", false)])
    func cancelling(today: String, ownerMay: Bool) {
        let day = Day(iso: today)!
        for from in [HolidayStatus.pending, .approved] {
            let byOwner = T.next(.cancel, from: from, owner: TransitionTests.owner, start: TransitionTests.start, today: day,
                                 actor: TransitionTests.ownerActor)
            #expect((try? byOwner.get()) == (ownerMay ? .cancelled : nil))
            #expect(T.next(.cancel, from: from, owner: TransitionTests.owner, start: TransitionTests.start, today: day,
                           actor: TransitionTests.admin) == .success(.cancelled))
            guard case .failure(.forbidden) = T.next(.cancel, from: from, owner: TransitionTests.owner, start: TransitionTests.start,
                                                     today: day, actor: TransitionTests.stranger) else {
                Issue.record("a stranger cancelled"); continue
            }
        }
    }
}

@Suite("The team calendar's JSON")
struct CalendarJSONTests {
    @Test("the calendar page written as bytes is exactly the JSONValue form, names with quotes, control characters and accents included")
    func bytesMatchTheTree() throws {
        func absence(_ id: Int64, _ name: String, typeName: String, visible: Bool, half: Bool, status: HolidayStatus) throws -> HolidayBook.Absence {
            let type = LeaveType(id: 2, key: "sick", name: typeName, countsAgainstAllowance: false, needsApproval: true)
            let request = HolidayRequest(id: id, userID: id * 7, type: type, start: try #require(Day(iso: "2030-12-30")),
                                         end: try #require(Day(iso: "2031-01-02")), halfStart: half, halfEnd: !half, days: 2.5,
                                         status: status, note: "n", createdAt: .now(), decidedBy: nil, decidedAt: nil, decisionNote: nil,
                                         history: [])
            return HolidayBook.Absence(request: request, displayName: name, typeVisible: visible)
        }
        let absences = [
            try absence(1, "Álvaro \"Al\" Gómez", typeName: "Baja médica", visible: true, half: true, status: .approved),
            try absence(2, "Tab\there\nnew line \u{1} ✓ 🎉", typeName: "Secret \\ type", visible: false, half: false, status: .pending),
            try absence(9_007_199_254, "</script><b>x</b>", typeName: "x", visible: true, half: false, status: .approved),
        ]
        for page in [[], Array(absences.prefix(1)), absences] {
            let tree = JSONValue.object([("items", .array(page.map(\.json)))]).serializedBytes()
            #expect(HolidayBook.Absence.page(page) == tree)
        }
        #expect(absences[1].json["typeName"] == "away" && absences[1].json["type"] == .null)
    }
}
