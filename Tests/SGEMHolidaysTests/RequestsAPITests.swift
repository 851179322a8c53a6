import SGEMCore
@testable import SGEMHolidays
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Holiday requests over the API")
struct RequestsAPITests {
    @Test("a request counts working days with half days; approval moves them from pending to approved, with history")
    func lifecycle() async throws {
        try await Office.with { o in
            let r = try await o.request("ana", "2030-06-03", "2030-06-07", halfEnd: true, note: "beach")
            #expect(r["days"]?.double == 4.5)
            #expect(r["status"]?.stringValue == "pending")
            #expect(r["type"]?.stringValue == "vacation")
            #expect(r["note"]?.stringValue == "beach")
            var s = try await o.summary("ana", 2030)
            #expect(s["allowance"]?.double == 23 && s["pendingDays"]?.double == 4.5 && s["remainingDays"]?.double == 18.5)
            let id = try #require(r["id"]?.int64)
            let approved = try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss", ["note": "enjoy"])
            #expect(approved["status"]?.stringValue == "approved")
            #expect(approved["decidedBy"]?.int64 == o.userID("boss"))
            #expect(approved["decisionNote"]?.stringValue == "enjoy")
            let history = approved["history"]?.arrayValue ?? []
            #expect(history.count == 2)
            #expect(history.first?["from"] == .null && history.first?["to"]?.stringValue == "pending")
            #expect(history.last?["from"]?.stringValue == "pending" && history.last?["to"]?.stringValue == "approved")
            #expect(history.last?["byUserId"]?.int64 == o.userID("boss") && history.last?["note"]?.stringValue == "enjoy")
            s = try await o.summary("ana", 2030)
            #expect(s["approvedDays"]?.double == 4.5 && s["pendingDays"]?.double == 0 && s["remainingDays"]?.double == 18.5)
            // The year view lists it; the top level carries the summary's fields too.
            let year = try await o.expect(200, "GET", "/holidays?year=2030", as: "ana")
            #expect(year["requests"]?.arrayValue?.count == 1 && year["remainingDays"]?.double == 18.5)
            #expect(try await o.expect(200, "GET", "/holidays?year=2031", as: "ana")["requests"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("public holidays are not counted; they are listed by year, unique by date, and removable")
    func publicHolidays() async throws {
        try await Office.with { o in
            let added = try await o.expect(201, "POST", "/admin/public-holidays", as: "boss", ["date": "2030-06-05", "name": "Founders' Day"])
            try await o.expect(409, "POST", "/admin/public-holidays", as: "boss", ["date": "2030-06-05", "name": "Again"], code: "public_holiday_exists")
            #expect(try await o.request("ana", "2030-06-03", "2030-06-07")["days"]?.double == 4)
            let list = try await o.expect(200, "GET", "/public-holidays?year=2030", as: "bob")["items"]?.arrayValue ?? []
            #expect(list.count == 1 && list[0]["name"]?.stringValue == "Founders' Day" && list[0]["date"]?.stringValue == "2030-06-05")
            #expect(try await o.expect(200, "GET", "/public-holidays?year=2031", as: "bob")["items"]?.arrayValue?.isEmpty == true)
            let id = try #require(added["id"]?.int64)
            try await o.expect(204, "DELETE", "/admin/public-holidays/\(id)", as: "boss")
            try await o.expect(404, "DELETE", "/admin/public-holidays/\(id)", as: "boss")
            // Requests keep the days they were counted with; new ones count the date again.
            #expect(try await o.summary("ana", 2030)["pendingDays"]?.double == 4)
            #expect(try await o.request("bob", "2030-06-03", "2030-06-07")["days"]?.double == 5)
        }
    }

    @Test("impossible requests are 422 naming the field",
          arguments: [
            (["start": "2030-06-10", "end": "2030-06-07"] as JSONValue, "end"),
            (["start": "2030-02-30", "end": "2030-03-02"] as JSONValue, "start"),
            (["start": "2030-06-03", "end": "2030-13-01"] as JSONValue, "end"),
            (["start": "2030-01-01", "end": "2031-01-02"] as JSONValue, "end"),
            (["start": "2030-06-08", "end": "2030-06-09"] as JSONValue, "end"),
            (["start": "2030-06-10", "end": "2030-06-10", "halfStart": true, "halfEnd": true] as JSONValue, "halfEnd"),
            (["start": "2030-06-10", "end": "2030-06-11", "type": "nope"] as JSONValue, "type"),
            (["end": "2030-06-11"] as JSONValue, "start"),
            (["start": 20300610, "end": "2030-06-11"] as JSONValue, "start"),
            (["start": "2030-06-10", "end": "2030-06-11", "halfStart": "yes"] as JSONValue, "halfStart"),
            (["start": "2030-06-10", "end": "2030-06-11", "note": .string(String(repeating: "n", count: 2001))] as JSONValue, "note"),
          ])
    func validation(body: JSONValue, field: String) async throws {
        try await Office.with(["ana"]) { o in
            let error = try await o.expect(422, "POST", "/holidays", as: "ana", body, code: "validation_failed")
            #expect(error["error"]?["details"]?["fields"]?[field] != nil, "\(error)")
            #expect(try await o.summary("ana", 2030)["pendingDays"]?.double == 0)
        }
    }

    @Test("overlap with one's own pending or approved requests is refused as intervals; next to them is fine")
    func overlaps() async throws {
        try await Office.with { o in
            let first = try await o.request("ana", "2030-06-10", "2030-06-14", halfEnd: true)
            for (start, end) in [("2030-06-11", "2030-06-12"), ("2030-06-07", "2030-06-17"), ("2030-06-14", "2030-06-18"),
                                 ("2030-06-05", "2030-06-10"), ("2030-06-10", "2030-06-14")] {
                try await o.expect(409, "POST", "/holidays", as: "ana", ["start": .string(start), "end": .string(end)], code: "holiday_overlap")
            }
            // Someone else's request on the same days is no overlap; the days right after are free.
            try await o.request("bob", "2030-06-10", "2030-06-14")
            let next = try await o.request("ana", "2030-06-17", "2030-06-18")
            // Approved requests block too; cancelled and rejected ones no longer do.
            try await o.expect(200, "POST", "/admin/holidays/\(first["id"]!.int64!)/approve", as: "boss")
            try await o.expect(409, "POST", "/holidays", as: "ana", ["start": "2030-06-12", "end": "2030-06-12"], code: "holiday_overlap")
            try await o.expect(200, "POST", "/holidays/\(first["id"]!.int64!)/cancel", as: "boss")
            try await o.expect(200, "POST", "/admin/holidays/\(next["id"]!.int64!)/reject", as: "boss")
            try await o.request("ana", "2030-06-12", "2030-06-18")
        }
    }

    @Test("the allowance is a hard limit for counting types; other types leave it alone and may need no approval")
    func allowance() async throws {
        try await Office.with(["ana"]) { o in
            try await o.expect(204, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2030", as: "boss", ["days": 3])
            let refused = try await o.expect(409, "POST", "/holidays", as: "ana", ["start": "2030-06-03", "end": "2030-06-06"],
                                             code: "allowance_exceeded")
            #expect(refused["error"]?["details"]?["remainingDays"]?.double == 3 && refused["error"]?["details"]?["year"]?.double == 2030)
            #expect(refused["error"]?["message"]?.stringValue == "not enough days left in 2030: this request needs 4 days of 2030 and 3 remain")
            try await o.request("ana", "2030-06-03", "2030-06-05")
            try await o.expect(409, "POST", "/holidays", as: "ana", ["start": "2030-06-07", "end": "2030-06-07"], code: "allowance_exceeded")
            try await o.expect(201, "POST", "/admin/leave-types", as: "boss",
                               ["key": "sick", "name": "Sick leave", "countsAgainstAllowance": false, "needsApproval": false])
            let sick = try await o.request("ana", "2030-06-10", "2030-06-14", type: "sick")
            #expect(sick["status"]?.stringValue == "approved" && sick["days"]?.double == 5 && sick["type"]?.stringValue == "sick")
            let s = try await o.summary("ana", 2030)
            #expect(s["allowance"]?.double == 3 && s["pendingDays"]?.double == 3 && s["approvedDays"]?.double == 0 && s["remainingDays"]?.double == 0)
            // Allowances are set in half days, for existing users only.
            try await o.expect(422, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2030", as: "boss", ["days": 2.25])
            try await o.expect(422, "PUT", "/admin/users/\(o.userID("ana"))/allowances/1800", as: "boss", ["days": 2])
            try await o.expect(404, "PUT", "/admin/users/9999/allowances/2030", as: "boss", ["days": 2])
        }
    }

    @Test("a request across New Year counts against each year for its own days")
    func yearBoundary() async throws {
        try await Office.with(["ana"]) { o in
            let r = try await o.request("ana", "2030-12-30", "2031-01-03", halfStart: true)
            #expect(r["days"]?.double == 4.5)
            #expect(try await o.summary("ana", 2030)["pendingDays"]?.double == 1.5)
            #expect(try await o.summary("ana", 2031)["pendingDays"]?.double == 3)
            // Both years appear in their year views.
            #expect(try await o.expect(200, "GET", "/holidays?year=2031", as: "ana")["requests"]?.arrayValue?.count == 1)
            // The later year's allowance limits the part that falls in it.
            try await o.expect(204, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2032", as: "boss", ["days": 2])
            let refused = try await o.expect(409, "POST", "/holidays", as: "ana", ["start": "2031-12-29", "end": "2032-01-06"],
                                             code: "allowance_exceeded")
            #expect(refused["error"]?["details"]?["year"]?.double == 2032)
            // The message names the year that is short, not the one the request starts in.
            #expect(refused["error"]?["message"]?.stringValue == "not enough days left in 2032: this request needs 4 days of 2032 and 2 remain")
        }
    }

    @Test("carry-over: unused days up to the cap move into the next year and expire unless taken by the expiry date")
    func carryOver() async throws {
        try await Office.with(["ana"], settings: ["carryOverMaxDays": 5, "carryOverExpires": "03-31"]) { o in
            o.pin("2029-05-01T12:00:00Z")
            let used = try await o.request("ana", "2029-06-04", "2029-06-08")
            try await o.expect(200, "POST", "/admin/holidays/\(used["id"]!.int64!)/approve", as: "boss")
            o.pin("2030-02-01T12:00:00Z")
            var s = try await o.summary("ana", 2030)
            #expect(s["carriedOver"]?.double == 5 && s["remainingDays"]?.double == 28)
            try await o.request("ana", "2030-03-04", "2030-03-05")
            o.pin("2030-04-15T12:00:00Z")
            // Past 03-31 only the 2 carried days taken before then still count.
            s = try await o.summary("ana", 2030)
            #expect(s["carriedOver"]?.double == 2 && s["remainingDays"]?.double == 23)
            // Less unused than the cap: only what was left.
            try await o.expect(204, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2029", as: "boss", ["days": 7])
            o.pin("2030-02-01T12:00:00Z")
            #expect(try await o.summary("ana", 2030)["carriedOver"]?.double == 2)
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["carryOverMaxDays": 0])
            #expect(try await o.summary("ana", 2030)["carriedOver"]?.double == 0)
        }
    }

    @Test("a company whose working week is Sunday to Thursday")
    func otherWorkingWeek() async throws {
        try await Office.with(["ana"], settings: ["workingDays": [7, 1, 2, 3, 4]]) { o in
            // Friday 2030-06-07 to Thursday 2030-06-13: Friday and Saturday are off.
            #expect(try await o.request("ana", "2030-06-07", "2030-06-13")["days"]?.double == 5)
            #expect(try await o.expect(200, "GET", "/holidays?year=2030", as: "ana")["workingDays"] == [1, 2, 3, 4, 7])
            try await o.expect(422, "POST", "/holidays", as: "ana", ["start": "2030-06-14", "end": "2030-06-15"], code: "validation_failed")
        }
    }

    @Test("dates are the company's: today, the default year and the start date in zones far from UTC",
          arguments: [("Pacific/Kiritimati", "2031", false, true), ("Pacific/Pago_Pago", "2030", true, false)])
    func timeZones(zone: String, defaultYear: String, ownerMayCancel: Bool, awayToday: Bool) async throws {
        try await Office.with(["ana"], settings: ["timeZone": .string(zone)]) { o in
            // 2030-06-09 10:30 UTC is 06-10 00:30 in Kiritimati (+14), 06-08 23:30 in Pago Pago (-11).
            o.pin("2030-06-01T00:00:00Z")
            let r = try await o.request("ana", "2030-06-10", "2030-06-12")
            let id = r["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            o.pin("2030-06-09T10:30:00Z")
            let user = try await o.expect(200, "GET", "/users/\(o.userID("ana"))", as: "boss")
            #expect((user["away"]?["until"]?.stringValue == "2030-06-12") == awayToday)
            let cancel = try await o.call("POST", "/holidays/\(id)/cancel", as: "ana")
            #expect(cancel.status == (ownerMayCancel ? 200 : 403), "\(cancel.text)")
            // New Year's Eve 10:30 UTC: already 2031 in Kiritimati, still 2030 in Pago Pago.
            o.pin("2030-12-31T10:30:00Z")
            #expect(try await o.expect(200, "GET", "/holidays", as: "ana")["year"]?.double == Double(defaultYear))
        }
    }
}
