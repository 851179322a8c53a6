import SGEMContracts
import SGEMCore
@testable import SGEMCompany
@testable import SGEMHolidays
@testable import SGEMNotices
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

extension Office {
    /// The audit log as `who` (an admin) reads it, newest first, with an optional `event` filter.
    func audit(_ event: String? = nil, as who: String = "boss") async throws -> [JSONValue] {
        let query = event.map { "?event=" + $0 } ?? ""
        return try await expect(200, "GET", "/admin/audit" + query, as: who)["items"]?.arrayValue ?? []
    }

    /// The newest entry of `event`.
    func lastAudit(_ event: String) async throws -> JSONValue? {
        try await audit(event).first
    }
}

/// An audit trail that writes the entry and then fails: the change it belongs to must roll
/// back with it.
struct FailingTrail: AuditTrail {
    let real: any AuditTrail
    struct Boom: Error {}

    func record(_ record: AuditRecord, in db: Database) throws {
        try real.record(record, in: db)
        throw Boom()
    }
}

@Suite("Audit log: admin changes, each in its transaction", .serialized)
struct AuditEventTests {
    @Test("a settings change names the keys with old → new values; the company profile too")
    func settingsAndProfile() async throws {
        try await Office.with { o in
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["registration": "domain", "registrationDomain": "example.com"])
            let entry = try #require(try await o.lastAudit("settings.update"))
            #expect(entry["actorId"]?.int64 == o.userID("boss") && entry["ip"]?.stringValue == "127.0.0.1")
            #expect(entry["detail"]?.stringValue == "registration: closed → domain; registrationDomain: (none) → example.com")
            // Saving the same values again changes nothing and records nothing.
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["registration": "domain"])
            #expect(try await o.audit("settings.update").count == 1)
            try await o.expect(200, "PUT", "/admin/company", as: "boss", ["name": "Acme", "phone": "+34 600 000 000"])
            #expect(try await o.lastAudit("company.profile")?["detail"]?.stringValue == "name: (none) → Acme; phone: (none) → +34 600 000 000")
        }
    }

    @Test("holiday decisions, public holidays, leave types and allowances are recorded with who and whom")
    func holidayEvents() async throws {
        try await Office.with { o in
            o.pin("2026-11-02T09:00:00Z")
            let id = try await o.request("ana", "2026-12-14", "2026-12-15")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss", ["note": "enjoy"])
            let approved = try #require(try await o.lastAudit("holiday.approved"))
            #expect(approved["actorId"]?.int64 == o.userID("boss") && approved["targetId"]?.int64 == o.userID("ana"))
            #expect(approved["detail"]?.stringValue == "#\(id) Vacation 2026-12-14 – 2026-12-15 (2 days): enjoy")
            try await o.expect(200, "POST", "/admin/holidays/\(id)/reopen", as: "boss")
            try await o.expect(200, "POST", "/admin/holidays/\(id)/reject", as: "boss")
            let other = try await o.request("bob", "2026-12-16", "2026-12-16")["id"]!.int64!
            try await o.expect(200, "POST", "/holidays/\(other)/cancel", as: "bob")
            #expect(try await o.audit("holiday.cancelled").isEmpty, "an employee cancelling their own request is not an admin change")
            let third = try await o.request("bob", "2026-12-17", "2026-12-17")["id"]!.int64!
            try await o.expect(200, "POST", "/holidays/\(third)/cancel", as: "boss")
            #expect(try await o.lastAudit("holiday.cancelled")?["targetId"]?.int64 == o.userID("bob"))

            let added = try await o.expect(201, "POST", "/admin/public-holidays", as: "boss", ["date": "2026-12-08", "name": "Inmaculada"])
            try await o.expect(204, "DELETE", "/admin/public-holidays/\(added["id"]!.int64!)", as: "boss")
            #expect(try await o.lastAudit("holiday.public_added")?["detail"]?.stringValue == "2026-12-08 Inmaculada")
            #expect(try await o.lastAudit("holiday.public_deleted")?["detail"]?.stringValue == "2026-12-08 Inmaculada")

            let type = try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "training", "name": "Training", "needsApproval": false])
            try await o.expect(200, "PATCH", "/admin/leave-types/\(type["id"]!.int64!)", as: "boss", ["name": "Courses"])
            try await o.expect(204, "DELETE", "/admin/leave-types/\(type["id"]!.int64!)", as: "boss")
            #expect(try await o.lastAudit("holiday.leave_type_added")?["detail"]?.stringValue == "training \"Training\" (needs no approval)")
            #expect(try await o.lastAudit("holiday.leave_type_updated")?["detail"]?.stringValue == "training: name \"Training\" → \"Courses\"")
            #expect(try await o.lastAudit("holiday.leave_type_deleted")?["detail"]?.stringValue == "training \"Courses\"")

            try await o.expect(204, "PUT", "/admin/users/\(o.userID("ana"))/allowances/2027", as: "boss", ["days": 25.5])
            let allowance = try #require(try await o.lastAudit("holiday.allowance_set"))
            #expect(allowance["detail"]?.stringValue == "2027: company default → 25.5 days" && allowance["targetId"]?.int64 == o.userID("ana"))

            let kinds = Set(try await o.audit("holiday").compactMap { $0["event"]?.stringValue })
            #expect(kinds == ["holiday.approved", "holiday.reopened", "holiday.rejected", "holiday.cancelled", "holiday.public_added",
                              "holiday.public_deleted", "holiday.leave_type_added", "holiday.leave_type_updated",
                              "holiday.leave_type_deleted", "holiday.allowance_set"])
        }
    }

    @Test("notices posted, edited and deleted; an admin's update of someone's profile")
    func noticeAndUserEvents() async throws {
        try await Office.with { o in
            let posted = try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Party", "body": "Friday", "pinned": true])
            let id = posted["id"]!.int64!
            try await o.expect(200, "PATCH", "/admin/notices/\(id)", as: "boss", ["title": "Party!", "pinned": false])
            try await o.expect(204, "DELETE", "/admin/notices/\(id)", as: "boss")
            #expect(try await o.lastAudit("notice.posted")?["detail"]?.stringValue == "#\(id) \"Party\" (pinned)")
            #expect(try await o.lastAudit("notice.edited")?["detail"]?.stringValue == "#\(id) \"Party!\": title \"Party\" → \"Party!\", unpinned")
            #expect(try await o.lastAudit("notice.deleted")?["detail"]?.stringValue == "#\(id) \"Party!\"")
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("ana"))", as: "boss", ["displayName": "Ana María", "position": "Sales"])
            let update = try #require(try await o.lastAudit("user.update"))
            #expect(update["targetId"]?.int64 == o.userID("ana") && update["detail"]?.stringValue?.contains("display name") == true)
            try await o.expect(200, "PATCH", "/me", as: "ana", ["position": "Sales lead"])
            #expect(try await o.audit("user.update").count == 1, "a person's own profile edit is not an admin change")
        }
    }

    @Test("event filters: an exact name, a kind, several; bad filters 422; employees 403")
    func filters() async throws {
        try await Office.with { o in
            try await o.expect(200, "PUT", "/admin/settings", as: "boss", ["defaultAllowanceDays": 25])
            try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Hello", "body": "x"])
            try await o.expect(201, "POST", "/admin/public-holidays", as: "boss", ["date": "2026-12-08", "name": "Inmaculada"])
            #expect(Set(try await o.audit("settings").compactMap { $0["event"]?.stringValue }) == ["settings.update"])
            #expect(Set(try await o.audit("notice.posted").compactMap { $0["event"]?.stringValue }) == ["notice.posted"])
            #expect(Set(try await o.audit("notice,holiday").compactMap { $0["event"]?.stringValue }) == ["notice.posted", "holiday.public_added"])
            #expect(try await o.audit("notice.post").isEmpty, "a name is matched whole, never as a prefix")
            #expect(try await o.audit("notic").isEmpty, "a kind is a whole first word")
            for bad in ["holiday%25", "a;b", "holiday.", String(repeating: "a", count: 65)] {
                let r = try await o.call("GET", "/admin/audit?event=\(bad)", as: "boss")
                #expect(r.status == 422 && r.errorCode == "validation_failed", "\(bad)")
            }
            #expect(try await o.call("GET", "/admin/audit?event=settings", as: "ana").status == 403)
            #expect(try await o.call("GET", "/admin/audit/events", as: "ana").status == 403)
            let names = try await o.expect(200, "GET", "/admin/audit/events", as: "boss")["items"]?.arrayValue?.compactMap(\.stringValue) ?? []
            for known in ["settings.update", "company.profile", "company.feeds", "holiday.approved", "holiday.allowance_set",
                          "notice.deleted", "translation.settings", "user.update", "login.success"] {
                #expect(names.contains(known), "\(known) is listed before any is written")
            }
        }
    }

    @Test("command-line changes are audited too, marked as such")
    func commandLine() async throws {
        try await Office.with { o in
            var r = await admin(o.dir, ["settings", "set", "registration", "open"])
            #expect(r.code == 0, "\(r.io.errors)")
            #expect(try await o.lastAudit("settings.update")?["detail"]?.stringValue == "registration: closed → open (command line)")
            r = await admin(o.dir, ["holidays", "add-public", "2026-12-25", "Christmas"])
            #expect(r.code == 0, "\(r.io.errors)")
            let added = try #require(try await o.lastAudit("holiday.public_added"))
            #expect(added["actorId"] == .null && added["detail"]?.stringValue == "2026-12-25 Christmas (command line)")
            r = await admin(o.dir, ["set-allowance", "ana", "2027", "30"])
            #expect(r.code == 0, "\(r.io.errors)")
            #expect(try await o.lastAudit("holiday.allowance_set")?["detail"]?.stringValue == "2027: company default → 30 days (command line)")
            r = await admin(o.dir, ["notices", "post", "--title", "From the shell", "--body-stdin"], input: ["Hello"])
            #expect(r.code == 0, "\(r.io.errors)")
            let posted = try #require(try await o.lastAudit("notice.posted"))
            #expect(posted["actorId"] == .null && posted["detail"]?.stringValue?.hasSuffix("\"From the shell\" (command line)") == true)
            r = await admin(o.dir, ["company", "set", "--name", "Acme"])
            #expect(r.code == 0, "\(r.io.errors)")
            #expect(try await o.lastAudit("company.profile")?["detail"]?.stringValue == "name: (none) → Acme (command line)")
        }
    }

    @Test("a change whose audit entry fails leaves neither the change nor the entry")
    func rollback() async throws {
        try await Office.with { o in
            let real = try #require(o.services.resolve((any AuditTrail).self))
            let failing = FailingTrail(real: real)
            let before = try await o.audit().count
            // Holidays: public holiday, allowance, leave type.
            let book = HolidayBook(store: o.store, journal: try o.journal(), notices: try #require(o.services.resolve((any NoticePublisher).self)),
                                   settingsProvider: o.services.resolve((any CompanySettingsProvider).self),
                                   directory: o.services.resolve((any UserDirectory).self), clock: o.clock, audit: failing)
            let actor = AuditActor(userID: o.userID("boss"), ip: nil)
            await #expect(throws: FailingTrail.Boom.self) { _ = try await book.addPublicHolidays([(Day(iso: "2026-12-08")!, "X")], by: actor) }
            #expect(try await o.expect(200, "GET", "/public-holidays?year=2026", as: "ana")["items"]?.arrayValue?.isEmpty == true)
            await #expect(throws: FailingTrail.Boom.self) { try await book.setAllowance(userID: o.userID("ana"), year: 2027, days: 40, by: actor) }
            #expect(try await o.summary("ana", 2027)["allowance"]?.double != 40)
            await #expect(throws: FailingTrail.Boom.self) {
                _ = try await book.addLeaveType(key: "ghost", name: "Ghost", countsAgainstAllowance: true, needsApproval: true, by: actor)
            }
            #expect(try await o.expect(200, "GET", "/leave-types", as: "ana")["items"]?.arrayValue?.contains { $0["key"] == "ghost" } == false)
            // Notices.
            let board = NoticeBoard(store: o.store, journal: try o.journal(), directory: nil, audit: failing)
            await #expect(throws: FailingTrail.Boom.self) { _ = try await board.post(title: "Ghost", body: "x", pinned: false, author: o.userID("boss")) }
            #expect(try await o.expect(200, "GET", "/notices", as: "ana")["items"]?.arrayValue?.isEmpty == true)
            // Company settings.
            let company = CompanyRepository(store: o.store)
            await #expect(throws: FailingTrail.Boom.self) {
                _ = try await company.update(audited: { try CompanyAudit.settings($0, $1, by: actor, trail: failing, in: $2) }) { value in
                    var v = value
                    v.registration = "open"
                    return v
                }
            }
            #expect(try await o.expect(200, "GET", "/admin/settings", as: "boss")["registration"] == "closed")
            #expect(try await o.audit().count == before, "no entry survived its failed change")
        }
    }
}
