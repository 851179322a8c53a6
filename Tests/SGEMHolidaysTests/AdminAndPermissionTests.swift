import SGEMContracts
import SGEMCore
@testable import SGEMHolidays
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Holidays: permissions, admin views, the calendar")
struct AdminAndPermissionTests {
    @Test("someone else's request is 404 to an employee; admin routes are 403; no credentials is 401")
    func permissions() async throws {
        try await Office.with { o in
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            try await o.expect(404, "GET", "/holidays/\(id)", as: "bob", code: "not_found")
            try await o.expect(404, "POST", "/holidays/\(id)/cancel", as: "bob", code: "not_found")
            try await o.expect(200, "GET", "/holidays/\(id)", as: "ana")
            try await o.expect(200, "GET", "/holidays/\(id)", as: "boss")
            try await o.expect(403, "GET", "/users/\(o.userID("ana"))/holidays", as: "bob", code: "forbidden")
            try await o.expect(200, "GET", "/users/\(o.userID("ana"))/holidays?year=2030", as: "ana")
            #expect(try await o.expect(200, "GET", "/users/\(o.userID("ana"))/holidays?year=2030", as: "boss")["requests"]?.arrayValue?.count == 1)
            try await o.expect(404, "GET", "/users/9999/holidays", as: "boss")
            for (method, path, body) in [("GET", "/admin/holidays", nil), ("GET", "/admin/holidays/\(id)", nil),
                                         ("POST", "/admin/holidays/\(id)/approve", nil), ("POST", "/admin/holidays/\(id)/reject", nil),
                                         ("POST", "/admin/holidays/\(id)/reopen", nil), ("GET", "/admin/holidays.csv", nil),
                                         ("PUT", "/admin/users/\(o.userID("bob"))/allowances/2030", ["days": 40] as JSONValue),
                                         ("POST", "/admin/leave-types", ["key": "x1", "name": "X"] as JSONValue),
                                         ("POST", "/admin/public-holidays", ["date": "2030-01-01", "name": "X"] as JSONValue)] {
                try await o.expect(403, method, path, as: "ana", body, code: "forbidden")
            }
            try await o.expect(401, "GET", "/holidays", as: "")
            try await o.expect(401, "POST", "/holidays", as: "", ["start": "2030-06-10", "end": "2030-06-11"])
            // The request is untouched by all that.
            #expect(try await o.expect(200, "GET", "/holidays/\(id)", as: "ana")["status"]?.stringValue == "pending")
            // An inactive employee's history stays visible to admins, off the team calendar.
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("ana"))", as: "boss", ["active": false])
            #expect(try await o.expect(200, "GET", "/users/\(o.userID("ana"))/holidays?year=2030", as: "boss")["requests"]?.arrayValue?.count == 1)
            #expect(try await o.expect(200, "GET", "/admin/holidays?userId=\(o.userID("ana"))", as: "boss")["items"]?.arrayValue?.count == 1)
            #expect(try await o.expect(200, "GET", "/holidays/calendar?from=2030-06-01&to=2030-06-30", as: "bob")["items"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("refused transitions over the API are 409 invalid_transition; an admin's own request needs another admin")
    func transitions() async throws {
        try await Office.with(["ana"], admins: ["carla"]) { o in
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            try await o.expect(409, "POST", "/admin/holidays/\(id)/reopen", as: "boss", code: "invalid_transition")
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            try await o.expect(409, "POST", "/admin/holidays/\(id)/approve", as: "boss", code: "invalid_transition")
            try await o.expect(409, "POST", "/admin/holidays/\(id)/reject", as: "boss", code: "invalid_transition")
            #expect(try await o.expect(200, "POST", "/admin/holidays/\(id)/reopen", as: "boss", ["note": "dates clash"])["status"]?.stringValue == "pending")
            try await o.expect(200, "POST", "/admin/holidays/\(id)/reject", as: "boss")
            for action in ["approve", "reject", "reopen"] {
                try await o.expect(409, "POST", "/admin/holidays/\(id)/\(action)", as: "boss", code: "invalid_transition")
            }
            try await o.expect(409, "POST", "/holidays/\(id)/cancel", as: "ana", code: "invalid_transition")
            let history = try await o.expect(200, "GET", "/holidays/\(id)", as: "ana")["history"]?.arrayValue ?? []
            #expect(history.map { $0["to"]?.stringValue ?? "" } == ["pending", "approved", "pending", "rejected"])
            #expect(history[2]["note"]?.stringValue == "dates clash")

            let own = try await o.request("boss", "2030-07-01", "2030-07-02")["id"]!.int64!
            try await o.expect(403, "POST", "/admin/holidays/\(own)/approve", as: "boss", code: "forbidden")
            try await o.expect(200, "POST", "/admin/holidays/\(own)/approve", as: "carla")
            // With carla no longer an active admin, boss decides his own.
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("carla"))", as: "boss", ["role": "employee"])
            try await o.expect(200, "POST", "/admin/holidays/\(own)/reopen", as: "boss")
        }
    }

    @Test("the owner cancels before the start date, then only an admin can")
    func ownerCancel() async throws {
        try await Office.with(["ana"]) { o in
            o.pin("2030-06-01T12:00:00Z")
            let a = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            let b = try await o.request("ana", "2030-06-17", "2030-06-18")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(b)/approve", as: "boss")
            #expect(try await o.expect(200, "POST", "/holidays/\(a)/cancel", as: "ana", ["note": "changed my mind"])["status"]?.stringValue == "cancelled")
            o.pin("2030-06-17T08:00:00Z")
            try await o.expect(403, "POST", "/holidays/\(b)/cancel", as: "ana", code: "forbidden")
            #expect(try await o.expect(200, "POST", "/holidays/\(b)/cancel", as: "boss")["status"]?.stringValue == "cancelled")
            #expect(try await o.summary("ana", 2030)["remainingDays"]?.double == 23)
        }
    }

    @Test("the admin list puts pending first; the detail shows the year, who else is away and the limit")
    func adminViews() async throws {
        try await Office.with(["ana", "bob", "cleo"], settings: ["maxSimultaneousAbsences": 2]) { o in
            let bob = try await o.request("bob", "2030-06-10", "2030-06-14")["id"]!.int64!
            let cleo = try await o.request("cleo", "2030-06-12", "2030-06-12")["id"]!.int64!
            for id in [bob, cleo] { try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss") }
            let earlier = try await o.request("ana", "2030-03-04", "2030-03-04")["id"]!.int64!
            let ana = try await o.request("ana", "2030-06-11", "2030-06-13")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(earlier)/approve", as: "boss")

            let list = try await o.expect(200, "GET", "/admin/holidays?year=2030", as: "boss")["items"]?.arrayValue ?? []
            #expect(list.count == 4 && list[0]["id"]?.int64 == ana && list[0]["displayName"]?.stringValue == "Ana")
            let approved = try await o.expect(200, "GET", "/admin/holidays?status=approved&userId=\(o.userID("ana"))", as: "boss")["items"]?.arrayValue
            #expect(approved?.map { $0["id"]?.int64 } == [earlier])
            #expect(try await o.expect(200, "GET", "/admin/holidays?type=sick", as: "boss")["items"]?.arrayValue?.isEmpty == true)
            try await o.expect(422, "GET", "/admin/holidays?status=maybe", as: "boss", code: "validation_failed")
            try await o.expect(422, "GET", "/admin/holidays?year=20300", as: "boss", code: "validation_failed")

            var detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            #expect(detail["request"]?["id"]?.int64 == ana && detail["user"]?["displayName"]?.stringValue == "Ana")
            #expect(detail["summary"]?["approvedDays"]?.double == 1 && detail["summary"]?["pendingDays"]?.double == 3)
            #expect(detail["otherRequests"]?.arrayValue?.map { $0["id"]?.int64 } == [earlier])
            let away = (detail["alsoAway"]?.arrayValue ?? []).map { $0["displayName"]?.stringValue ?? "" }.sorted()
            #expect(away == ["Bob", "Cleo"])
            // On 06-12 Bob, Cleo and Ana would be away: more than 2.
            #expect(detail["overLimit"] == true)
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["maxSimultaneousAbsences": 3])
            detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            #expect(detail["overLimit"] == false)
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["maxSimultaneousAbsences": .null])
            #expect(try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")["overLimit"] == false)
            try await o.expect(404, "GET", "/admin/holidays/99999", as: "boss")
        }
    }

    @Test("the team calendar: approved absences for everyone, pending for admins, the type only for admins and the person")
    func calendar() async throws {
        try await Office.with { o in
            try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "sick", "name": "Sick leave", "needsApproval": false])
            try await o.request("ana", "2030-06-10", "2030-06-11", type: "sick")
            try await o.request("bob", "2030-06-20", "2030-06-21")
            let seenByBob = try await o.expect(200, "GET", "/holidays/calendar?from=2030-06-01&to=2030-06-30", as: "bob")["items"]?.arrayValue ?? []
            #expect(seenByBob.count == 1)
            #expect(seenByBob.first?["displayName"]?.stringValue == "Ana" && seenByBob.first?["typeName"]?.stringValue == "away")
            #expect(seenByBob.first?["type"] == .null)
            let seenByAna = try await o.expect(200, "GET", "/holidays/calendar?from=2030-06-01&to=2030-06-30", as: "ana")["items"]?.arrayValue ?? []
            #expect(seenByAna.first?["typeName"]?.stringValue == "Sick leave" && seenByAna.first?["type"]?.stringValue == "sick")
            let seenByBoss = try await o.expect(200, "GET", "/holidays/calendar?from=2030-06-01&to=2030-06-30", as: "boss")["items"]?.arrayValue ?? []
            #expect(seenByBoss.map { $0["status"]?.stringValue ?? "" } == ["approved", "pending"])
            #expect(seenByBoss.allSatisfy { $0["typeName"]?.stringValue != "away" })
            for query in ["from=2030-06-01&to=2030-09-30", "from=2030-06-10&to=2030-06-01", "from=2030-06-01", "from=x&to=2030-06-02"] {
                try await o.expect(422, "GET", "/holidays/calendar?\(query)", as: "bob", code: "validation_failed")
            }
            // Outside the window: nothing.
            #expect(try await o.expect(200, "GET", "/holidays/calendar?from=2030-07-01&to=2030-07-31", as: "boss")["items"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("leave types: vacation from the start; added, renamed, deleted when unused, kept when used")
    func leaveTypes() async throws {
        try await Office.with(["ana"]) { o in
            let initial = try await o.expect(200, "GET", "/leave-types", as: "ana")["items"]?.arrayValue ?? []
            #expect(initial.count == 1 && initial[0]["key"]?.stringValue == "vacation" && initial[0]["needsApproval"] == true
                    && initial[0]["countsAgainstAllowance"] == true)
            let unpaid = try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "unpaid", "name": "Unpaid leave",
                                                                                          "countsAgainstAllowance": false])
            try await o.expect(409, "POST", "/admin/leave-types", as: "boss", ["key": "unpaid", "name": "Again"], code: "leave_type_exists")
            try await o.expect(422, "POST", "/admin/leave-types", as: "boss", ["key": "Bad Key", "name": "X"], code: "validation_failed")
            try await o.expect(422, "POST", "/admin/leave-types", as: "boss", ["key": "ok", "name": "  "], code: "validation_failed")
            let id = unpaid["id"]!.int64!
            let renamed = try await o.expect(200, "PATCH", "/admin/leave-types/\(id)", as: "boss", ["name": "Unpaid"])
            #expect(renamed["name"]?.stringValue == "Unpaid" && renamed["key"]?.stringValue == "unpaid" && renamed["countsAgainstAllowance"] == false)
            try await o.expect(404, "PATCH", "/admin/leave-types/9999", as: "boss", ["name": "X"])
            let vacation = initial[0]["id"]!.int64!
            try await o.expect(409, "DELETE", "/admin/leave-types/\(vacation)", as: "boss", code: "leave_type_in_use")
            try await o.request("ana", "2030-06-10", "2030-06-10", type: "unpaid")
            try await o.expect(409, "DELETE", "/admin/leave-types/\(id)", as: "boss", code: "leave_type_in_use")
            let spare = try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "spare", "name": "Spare"])["id"]!.int64!
            try await o.expect(204, "DELETE", "/admin/leave-types/\(spare)", as: "boss")
            try await o.expect(404, "DELETE", "/admin/leave-types/\(spare)", as: "boss")
        }
    }

    @Test("people on approved leave today are away in the directory, on their page and among chat members")
    func awayEverywhere() async throws {
        try await Office.with { o in
            o.pin("2030-06-01T12:00:00Z")
            let id = try await o.request("ana", "2030-06-10", "2030-06-12")["id"]!.int64!
            try await o.request("bob", "2030-06-10", "2030-06-12")  // pending: not away
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            let chat = try await o.expect(201, "POST", "/chats", as: "boss", ["name": "Team", "memberIds": [.number(Double(o.userID("ana"))),
                                                                                                            .number(Double(o.userID("bob")))]])
            func check(_ expected: String?) async throws {
                let users = try await o.expect(200, "GET", "/users", as: "bob")["items"]?.arrayValue ?? []
                let byName = Dictionary(uniqueKeysWithValues: users.map { ($0["username"]?.stringValue ?? "", $0) })
                #expect(byName["ana"]?["away"]?["until"]?.stringValue == expected)
                #expect(byName["bob"]?["away"] == nil && byName["boss"]?["away"] == nil)
                #expect(try await o.expect(200, "GET", "/users/\(o.userID("ana"))", as: "bob")["away"]?["until"]?.stringValue == expected)
                let members = try await o.expect(200, "GET", "/chats/\(chat["id"]!.int64!)", as: "bob")["members"]?.arrayValue ?? []
                #expect(members.first { $0["userId"]?.int64 == o.userID("ana") }?["away"]?["until"]?.stringValue == expected)
                #expect(members.first { $0["userId"]?.int64 == o.userID("bob") }?["away"] == nil)
                let chats = try await o.expect(200, "GET", "/chats", as: "ana")["items"]?.arrayValue ?? []
                #expect(chats.first?["members"]?.arrayValue?.first { $0["userId"]?.int64 == o.userID("ana") }?["away"]?["until"]?.stringValue == expected)
            }
            try await check(nil)
            o.pin("2030-06-11T12:00:00Z")
            try await check("2030-06-12")
            // The chats' own replies carry it too: a direct chat opened (then returned again) and a group edited.
            for status in [201, 200] {
                let direct = try await o.expect(status, "POST", "/chats/direct", as: "bob", ["userId": .number(Double(o.userID("ana")))])
                #expect(direct["members"]?.arrayValue?.first { $0["userId"]?.int64 == o.userID("ana") }?["away"]?["until"]?.stringValue == "2030-06-12")
            }
            let edited = try await o.expect(200, "PATCH", "/chats/\(chat["id"]!.int64!)", as: "boss", ["name": "Team A"])
            #expect(edited["members"]?.arrayValue?.first { $0["userId"]?.int64 == o.userID("ana") }?["away"]?["until"]?.stringValue == "2030-06-12")
            o.pin("2030-06-13T12:00:00Z")
            try await check(nil)
        }
    }

    @Test("a decision by an admin leaves the employee a holiday notice (their own request does not); every change records holiday.updated")
    func noticesAndEvents() async throws {
        try await Office.with { o in
            let journal = try o.journal()
            let before = try await journal.lastEventID()
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss", ["note": "ok"])
            let notices = try await o.expect(200, "GET", "/notices", as: "ana")["items"]?.arrayValue ?? []
            let holiday = notices.filter { $0["kind"]?.stringValue == "holiday" }
            // Sending the request was Ana's own action: only Boss's decision is news to her.
            #expect(holiday.count == 1)
            #expect(holiday.contains { ($0["title"]?.stringValue ?? "").contains("approved") && ($0["body"]?.stringValue ?? "").contains("ok") })
            #expect(try await o.expect(200, "GET", "/notices", as: "bob")["items"]?.arrayValue?.contains { $0["kind"]?.stringValue == "holiday" } == false)
            let events = try await journal.events(after: before, limit: 100).filter { $0.event.type == "holiday.updated" }
            #expect(events.count == 2)
            for e in events {
                #expect(e.event.audience == .userAndAdmins(o.userID("ana")))
                #expect(e.event.data["request"]?["id"]?.int64 == id)
            }
            #expect(events.last?.event.data["to"]?.stringValue == "approved" && events.last?.event.data["from"]?.stringValue == "pending")
        }
    }

    @Test("the holiday notice is written in the employee's language")
    func noticesInTheEmployeesLanguage() async throws {
        try await Office.with { o in
            try await o.expect(200, "PATCH", "/me", as: "ana", ["language": "es"])
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/reject", as: "boss", ["note": "falta gente"])
            let spanish = (try await o.expect(200, "GET", "/notices", as: "ana")["items"]?.arrayValue ?? [])
                .filter { $0["kind"]?.stringValue == "holiday" }.compactMap { $0["title"]?.stringValue }
            #expect(spanish == ["Solicitud de vacaciones rechazada"])
            let body = (try await o.expect(200, "GET", "/notices", as: "ana")["items"]?.arrayValue ?? [])
                .first { $0["title"]?.stringValue == "Solicitud de vacaciones rechazada" }?["body"]?.stringValue
            #expect(body == "Boss ha rechazado tu solicitud de vacaciones: del 10 de junio de 2030 al 11 de junio de 2030, 2 días laborables.\n\nNota: falta gente")
            let bobs = try await o.request("bob", "2030-06-10", "2030-06-10")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(bobs)/approve", as: "boss")
            let english = (try await o.expect(200, "GET", "/notices", as: "bob")["items"]?.arrayValue ?? [])
                .filter { $0["kind"]?.stringValue == "holiday" }.compactMap { $0["title"]?.stringValue }
            #expect(english == ["Vacation request approved"])
        }
    }

    @Test("a change whose transaction fails leaves no history, notice or event behind")
    func rollback() async throws {
        try await Office.with(["ana"]) { o in
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            let journal = try o.journal()
            let notices = try #require(o.services.resolve((any NoticePublisher).self))
            let lastEvent = try await journal.lastEventID()
            let unread = try await o.expect(200, "GET", "/notices", as: "ana")["unreadCount"]
            struct Boom: Error {}
            await #expect(throws: Boom.self) {
                try await o.store.write { db in
                    try HolidaysRepository.setStatus(id: id, to: .approved, decidedBy: 1, at: .now(), note: nil, in: db)
                    _ = try HolidayBook.recordChange(id, from: .pending, to: .approved, by: 1, note: nil, at: .now(),
                                                     language: "en", decider: nil, notices: notices, journal: journal, in: db)
                    throw Boom()
                }
            }
            #expect(try await journal.lastEventID() == lastEvent)
            #expect(try await o.expect(200, "GET", "/notices", as: "ana")["unreadCount"] == unread)
            let request = try await o.expect(200, "GET", "/holidays/\(id)", as: "ana")
            #expect(request["status"]?.stringValue == "pending" && request["history"]?.arrayValue?.count == 1)
        }
    }

    @Test("twenty simultaneous requests that each fit alone: exactly the allowance is booked")
    func simultaneous() async throws {
        try await Office.with(["ana"]) { o in
            try await o.expect(204, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2030", as: "boss", ["days": 5])
            let token = o["ana"].token
            let port = o.port
            // Twenty distinct working days of 2030 (Mondays to Fridays from 2030-06-03).
            let days = (0..<28).map { Day(iso: "2030-06-03")!.advanced(by: $0) }.filter { $0.isoWeekday <= 5 }.prefix(20).map(\.iso)
            let statuses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for day in days {
                    group.addTask {
                        let r = try await httpCall(port: port, "POST", "/api/v1/holidays", token: token,
                                                   json: ["start": .string(day), "end": .string(day)])
                        return (r.status, r.errorCode)
                    }
                }
                var all: [(Int, String?)] = []
                for try await s in group { all.append(s) }
                return all
            }
            #expect(statuses.filter { $0.0 == 201 }.count == 5)
            #expect(statuses.filter { $0.0 == 409 && $0.1 == "allowance_exceeded" }.count == 15)
            let s = try await o.summary("ana", 2030)
            #expect(s["pendingDays"]?.double == 5 && s["remainingDays"]?.double == 0)
        }
    }
}
