import SGEMContracts
import SGEMCore
@testable import SGEMHolidays
import SGEMSupport
import SGEMTestSupport
import Testing

/// The holiday notices on the board: who gets one, and how it reads.
@Suite("Holiday notices: own actions, decisions, wording", .serialized)
struct HolidayNoticeTests {
    static func holidayNotices(_ o: Office, _ who: String) async throws -> [JSONValue] {
        try await o.expect(200, "GET", "/notices?kind=holiday", as: who)["items"]?.arrayValue ?? []
    }

    @Test("sending and cancelling one's own request makes no notice; an admin's decision notifies the employee only")
    func ownActionsMakeNoNotice() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            let first = try await o.request("ana", "2026-12-14", "2026-12-15")["id"]!.int64!
            try await o.expect(200, "POST", "/holidays/\(first)/cancel", as: "ana")
            #expect(try await HolidayNoticeTests.holidayNotices(o, "ana").isEmpty, "her own request and cancellation are not news to her")
            let second = try await o.request("ana", "2026-12-16", "2026-12-16")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(second)/approve", as: "boss")
            let ana = try await HolidayNoticeTests.holidayNotices(o, "ana")
            #expect(ana.count == 1 && ana.first?["authorId"]?.int64 == o.userID("boss"))
            #expect(try await HolidayNoticeTests.holidayNotices(o, "boss").isEmpty, "the deciding admin gets no notice of their own decision")
            // An admin cancelling the employee's request is someone else's decision: it notifies.
            try await o.expect(200, "POST", "/holidays/\(second)/cancel", as: "boss")
            #expect(try await HolidayNoticeTests.holidayNotices(o, "ana").count == 2)
            #expect(try await o.expect(200, "GET", "/notices", as: "ana")["unreadByKind"]?["holiday"] == 2)
        }
    }

    @Test("a decision reads in words, in the reader's language at the time of reading")
    func wordedWhenRead() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            let half = try await o.request("ana", "2026-12-11", "2026-12-11", halfEnd: true)["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(half)/approve", as: "boss")
            var notice = try #require(try await HolidayNoticeTests.holidayNotices(o, "ana").first)
            #expect(notice["title"]?.stringValue == "Vacation request approved")
            #expect(notice["body"]?.stringValue == "Boss approved your vacation request: Friday 11 December 2026, morning only.")
            try await o.expect(200, "PATCH", "/me", as: "ana", ["language": "es"])
            notice = try #require(try await HolidayNoticeTests.holidayNotices(o, "ana").first)
            #expect(notice["title"]?.stringValue == "Solicitud de vacaciones aprobada")
            #expect(notice["body"]?.stringValue == "Boss ha aprobado tu solicitud de vacaciones: viernes 11 de diciembre de 2026, solo por la mañana.")
            let one = try await o.expect(200, "GET", "/notices/\(notice["id"]!.int64!)", as: "ana")
            #expect(one["body"] == notice["body"])
        }
    }

    @Test("a span over New Year counts its working days in words, public holidays aside")
    func spanOverNewYear() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            try await o.expect(201, "POST", "/admin/public-holidays", as: "boss", ["date": "2027-01-01", "name": "New Year"])
            try await o.expect(201, "POST", "/admin/public-holidays", as: "boss", ["date": "2027-01-06", "name": "Epiphany"])
            try await o.expect(200, "PATCH", "/me", as: "bob", ["language": "es"])
            let id = try await o.request("bob", "2026-12-28", "2027-01-08")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss", ["note": "¡Felices fiestas!"])
            let notice = try #require(try await HolidayNoticeTests.holidayNotices(o, "bob").first)
            #expect(notice["body"]?.stringValue == """
                Boss ha aprobado tu solicitud de vacaciones: del 28 de diciembre de 2026 al 8 de enero de 2027, 8 días laborables.

                Nota: ¡Felices fiestas!
                """)
        }
    }

    @Test("a notice written before notices.002 keeps its stored text")
    func olderNoticesKeepTheirText() async throws {
        try await Office.with { o in
            let publisher = try #require(o.services.resolve((any NoticePublisher).self))
            let ana = o.userID("ana")
            _ = try await o.store.write { db in
                try publisher.publish(PersonalNotice(recipientID: ana, title: "Vacation request approved",
                                                     body: "Your vacation request for 2026-12-11 to 2026-12-11 (0.5 working days) was approved."), in: db)
            }
            try await o.expect(200, "PATCH", "/me", as: "ana", ["language": "es"])
            let notice = try #require(try await HolidayNoticeTests.holidayNotices(o, "ana").first)
            #expect(notice["body"]?.stringValue == "Your vacation request for 2026-12-11 to 2026-12-11 (0.5 working days) was approved.")
        }
    }
}

/// Company news and personal updates apart: the kind filter, the unread counts per kind, and
/// marking one kind read.
@Suite("Notice kinds: filter, unread by kind, read all of a kind", .serialized)
struct NoticeKindTests {
    @Test("kind filters the board; unreadByKind counts both kinds whatever the filter")
    func filterAndCounts() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Office closed", "body": "Friday"])
            try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Pinned news", "body": "x", "pinned": true])
            let id = try await o.request("ana", "2026-12-14", "2026-12-14")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/reject", as: "boss")
            for (query, kinds, count) in [("", Set(["company", "holiday"]), 3), ("?kind=company", ["company"], 2), ("?kind=holiday", ["holiday"], 1)] {
                let page = try await o.expect(200, "GET", "/notices\(query)", as: "ana")
                let items = page["items"]?.arrayValue ?? []
                #expect(Set(items.compactMap { $0["kind"]?.stringValue }) == kinds && items.count == count, "\(query)")
                #expect(page["unreadByKind"]?["company"] == 2 && page["unreadByKind"]?["holiday"] == 1, "\(query)")
                #expect(page["unreadCount"] == 3)
            }
            let boss = try await o.expect(200, "GET", "/notices?kind=holiday", as: "boss")
            #expect(boss["items"]?.arrayValue?.isEmpty == true && boss["unreadByKind"]?["company"] == 0)
            let bad = try await o.call("GET", "/notices?kind=everything", as: "ana")
            #expect(bad.status == 422 && bad.errorCode == "validation_failed")
        }
    }

    @Test("read-all of one kind leaves the other unread and tells the reader's other tabs")
    func readAllOfAKind() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Office closed", "body": "Friday"])
            let id = try await o.request("ana", "2026-12-14", "2026-12-14")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            let journal = try o.journal()
            let before = try await journal.lastEventID()
            try await o.expect(204, "POST", "/notices/read-all?kind=holiday", as: "ana")
            var page = try await o.expect(200, "GET", "/notices", as: "ana")
            #expect(page["unreadByKind"]?["holiday"] == 0 && page["unreadByKind"]?["company"] == 1)
            let events = try await journal.events(after: before, limit: 10).filter { $0.event.type == "notices.read" }
            #expect(events.count == 1 && events.first?.event.audience == .user(o.userID("ana")))
            #expect(events.first?.event.data["kind"] == "holiday")
            try await o.expect(204, "POST", "/notices/read-all?kind=company", as: "ana")
            page = try await o.expect(200, "GET", "/notices", as: "ana")
            #expect(page["unreadCount"] == 0)
            // Nothing left to mark: no event either.
            let last = try await journal.lastEventID()
            try await o.expect(204, "POST", "/notices/read-all", as: "ana")
            #expect(try await journal.lastEventID() == last)
            #expect(try await o.call("POST", "/notices/read-all?kind=nope", as: "ana").status == 422)
        }
    }
}
