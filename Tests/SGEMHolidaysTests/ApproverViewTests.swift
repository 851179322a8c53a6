import SGEMCore
@testable import SGEMHolidays
import SGEMSupport
import SGEMTestSupport
import Testing

// What an approver sees before deciding: overlapping requests that still wait, the absence limit
// as an approval would leave it, and the most urgent decision first.
@Suite("Holidays: what an approver sees")
struct ApproverViewTests {
    /// `alsoAway` of a request's detail as (displayName, status, requestId).
    static func alsoAway(_ detail: JSONValue) -> [(String, String, Int64)] {
        (detail["alsoAway"]?.arrayValue ?? []).map {
            ($0["displayName"]?.stringValue ?? "", $0["status"]?.stringValue ?? "", $0["requestId"]?.int64 ?? 0)
        }
    }

    @Test("pending overlaps are listed with their status; overLimit counts approved leave and this request, not pending ones")
    func pendingOverlaps() async throws {
        try await Office.with(["ana", "bob", "cleo", "dan"], settings: ["maxSimultaneousAbsences": 2]) { o in
            let bob = try await o.request("bob", "2030-06-10", "2030-06-14")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(bob)/approve", as: "boss")
            let cleo = try await o.request("cleo", "2030-06-12", "2030-06-12")["id"]!.int64!
            let refused = try await o.request("dan", "2030-06-13", "2030-06-13")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(refused)/reject", as: "boss")
            try await o.request("dan", "2030-06-17", "2030-06-17")  // the next week: no day in common
            let ana = try await o.request("ana", "2030-06-11", "2030-06-13")["id"]!.int64!

            var detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            var away = ApproverViewTests.alsoAway(detail)
            #expect(away.map(\.0) == ["Bob", "Cleo"] && away.map(\.1) == ["approved", "pending"] && away.map(\.2) == [bob, cleo])
            let first = detail["alsoAway"]?.arrayValue?.first
            #expect(first?["start"]?.stringValue == "2030-06-10" && first?["end"]?.stringValue == "2030-06-14"
                && first?["userId"]?.int64 == o.userID("bob"))
            // Bob and Ana make two, the limit; Cleo still waits and is not counted.
            #expect(detail["overLimit"] == false && detail["maxSimultaneousAbsences"]?.int64 == 2)

            try await o.expect(200, "POST", "/admin/holidays/\(cleo)/approve", as: "boss")
            detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            #expect(ApproverViewTests.alsoAway(detail).map(\.1) == ["approved", "approved"])
            // On 06-12 Bob, Cleo and Ana would be away: three, over two.
            #expect(detail["overLimit"] == true)

            // Cleo's own (approved) request: Ana waits, so she is listed as pending and not counted.
            detail = try await o.expect(200, "GET", "/admin/holidays/\(cleo)", as: "boss")
            away = ApproverViewTests.alsoAway(detail)
            #expect(away.map(\.0) == ["Bob", "Ana"] && away.map(\.1) == ["approved", "pending"])
            #expect(detail["overLimit"] == false)
        }
    }

    @Test("overLimit counts working days only: two people off over the same weekend pass no limit")
    func weekendsDoNotCount() async throws {
        try await Office.with(["ana", "bob"], settings: ["maxSimultaneousAbsences": 1]) { o in
            // Bob Friday to Sunday, Ana Saturday to Monday: they share only the weekend.
            let friday = try await o.request("bob", "2030-06-21", "2030-06-23")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(friday)/approve", as: "boss")
            let ana = try await o.request("ana", "2030-06-22", "2030-06-24")["id"]!.int64!
            var detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            #expect(ApproverViewTests.alsoAway(detail).map(\.0) == ["Bob"])
            #expect(detail["overLimit"] == false)
            // Bob away on the Monday too: that working day would have two people away.
            let monday = try await o.request("bob", "2030-06-24", "2030-06-24")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(monday)/approve", as: "boss")
            detail = try await o.expect(200, "GET", "/admin/holidays/\(ana)", as: "boss")
            #expect(detail["overLimit"] == true)
        }
    }

    @Test("the admin list puts pending requests first, the soonest start first, then the rest with the latest start first")
    func listOrder() async throws {
        try await Office.with(["ana", "bob", "cleo"]) { o in
            // Filed in an order unlike the dates, so the order comes from the dates.
            let late = try await o.request("cleo", "2030-09-02", "2030-09-03")["id"]!.int64!
            let march = try await o.request("bob", "2030-03-04", "2030-03-04")["id"]!.int64!
            let june = try await o.request("bob", "2030-06-10", "2030-06-14")["id"]!.int64!
            let rejected = try await o.request("ana", "2030-07-01", "2030-07-01")["id"]!.int64!
            let soon = try await o.request("ana", "2030-06-11", "2030-06-11")["id"]!.int64!
            let sameDay = try await o.request("cleo", "2030-06-11", "2030-06-12")["id"]!.int64!
            for id in [march, june] { try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss") }
            try await o.expect(200, "POST", "/admin/holidays/\(rejected)/reject", as: "boss")

            let ids = (try await o.expect(200, "GET", "/admin/holidays?year=2030", as: "boss")["items"]?.arrayValue ?? []).map { $0["id"]?.int64 }
            #expect(ids == [soon, sameDay, late, rejected, june, march])
            // A filter keeps the order.
            let pending = (try await o.expect(200, "GET", "/admin/holidays?status=pending", as: "boss")["items"]?.arrayValue ?? [])
                .map { $0["id"]?.int64 }
            #expect(pending == [soon, sameDay, late])
        }
    }
}
