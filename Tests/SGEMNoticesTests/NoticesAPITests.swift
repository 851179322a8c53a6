import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Posts a company notice as `admin`; the notice's JSON.
func post(_ s: TestServer, _ admin: LoggedIn, _ title: String, body: String = "text", pinned: Bool = false) async throws -> JSONValue {
    let r = try await s.call("POST", "/api/v1/admin/notices", token: admin.token,
                             json: ["title": .string(title), "body": .string(body), "pinned": .bool(pinned)])
    guard r.status == 201 else { throw TestFailure("posting answered \(r.status): \(r.text)") }
    return try r.json()
}

/// `GET /notices` for `user` with an optional query.
func board(_ s: TestServer, _ user: LoggedIn, _ query: String = "") async throws -> JSONValue {
    let r = try await s.call("GET", "/api/v1/notices\(query)", token: user.token)
    guard r.status == 200 else { throw TestFailure("the board answered \(r.status): \(r.text)") }
    return try r.json()
}

func ids(_ page: JSONValue) -> [Int64] { page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue.map { Int64($0) } } ?? [] }
func id(_ notice: JSONValue) -> Int64 { Int64(notice["id"]?.numberValue ?? -1) }

/// Publishes a holiday notice for `recipient` the way the holidays module will.
func publishHoliday(_ s: TestServer, to recipient: Int64, title: String = "Your holiday was approved", by author: Int64? = nil) async throws -> Int64 {
    let publisher = try #require(s.services.resolve((any NoticePublisher).self))
    return try await s.store.write { db in
        try publisher.publish(PersonalNotice(recipientID: recipient, title: title, body: "From 2026-12-24 to 2026-12-31", authorID: author), in: db)
    }
}

@Suite("Notices API", .serialized)
struct NoticesAPITests {
    @Test("a company notice: 201 with counts for the admin, unread for employees, read once read, 1 of N")
    func readCounts() async throws {
        let (s, boss, ana) = try await TestServer.startWithEmployee()
        let bob = try await s.createUser("bob", as: boss)
        let posted = try await post(s, boss, "  Office closed on Friday  ", body: "Line one\nhttps://example.com <b>not html</b>")
        #expect(posted["title"] == "Office closed on Friday", "the title is trimmed")
        #expect(posted["body"] == "Line one\nhttps://example.com <b>not html</b>", "the body is stored as sent")
        #expect(posted["kind"] == "company" && posted["pinned"] == false && posted["editedAt"] == .null)
        #expect(posted["authorId"]?.numberValue == Double(boss.userID))
        #expect(posted["read"] == true, "the author sees their own notice as read")
        #expect(posted["readCount"] == 0 && posted["audienceCount"] == 2, "boss aside, ana and bob")
        #expect(Timestamp(rfc3339: posted["createdAt"]?.stringValue ?? "") != nil)

        let anaBoard = try await board(s, ana)
        #expect(ids(anaBoard) == [id(posted)])
        #expect(anaBoard["unreadCount"] == 1)
        #expect(anaBoard["items"]?.arrayValue?.first?["read"] == false)
        #expect(anaBoard["items"]?.arrayValue?[0]["readCount"] == nil, "employees do not see the counts")
        #expect(anaBoard["items"]?.arrayValue?[0]["audienceCount"] == nil)
        #expect(try await board(s, boss)["unreadCount"] == 0, "the author's own notice is not unread")

        #expect(try await s.call("POST", "/api/v1/notices/\(id(posted))/read", token: ana.token).status == 204)
        #expect(try await s.call("POST", "/api/v1/notices/\(id(posted))/read", token: ana.token).status == 204, "idempotent")
        #expect(try await board(s, ana)["unreadCount"] == 0)
        #expect(try await board(s, bob)["unreadCount"] == 1)
        let seen = try await s.call("GET", "/api/v1/notices/\(id(posted))", token: boss.token).json()
        #expect(seen["readCount"] == 1 && seen["audienceCount"] == 2, "1 of 2")
        #expect(try await s.call("POST", "/api/v1/notices/\(id(posted))/read", token: boss.token).status == 204)
        #expect(try await s.call("GET", "/api/v1/notices/\(id(posted))", token: boss.token).json()["readCount"] == 1,
                "the author's read does not count")

        _ = try await s.createUser("carl", as: boss)
        let later = try await s.call("GET", "/api/v1/notices/\(id(posted))", token: boss.token).json()
        #expect(later["audienceCount"] == 3, "someone who joined since is in the audience")
        await s.stop()
    }

    @Test("a holiday notice is seen only by its employee: not another employee, not an admin")
    func holidayNoticeIsPrivate() async throws {
        let (s, boss, ana) = try await TestServer.startWithEmployee()
        let bob = try await s.createUser("bob", as: boss)
        let other = try await s.createUser("root2", role: "admin", as: boss)
        let company = try await post(s, boss, "Welcome")
        let holiday = try await publishHoliday(s, to: ana.userID, by: boss.userID)

        let anaBoard = try await board(s, ana)
        #expect(Set(ids(anaBoard)) == [holiday, id(company)])
        #expect(anaBoard["unreadCount"] == 2)
        let mine = try await s.call("GET", "/api/v1/notices/\(holiday)", token: ana.token)
        #expect(mine.status == 200)
        #expect(try mine.json()["kind"] == "holiday")
        #expect(try mine.json()["read"] == false, "the deciding admin wrote it, but it is ana's to read")

        for viewer in [bob, boss, other] {
            let page = try await board(s, viewer)
            #expect(!ids(page).contains(holiday))
            #expect(page["unreadCount"]?.numberValue == (viewer.userID == boss.userID ? 0 : 1), "only the company notice counts")
            let get = try await s.call("GET", "/api/v1/notices/\(holiday)", token: viewer.token)
            #expect(get.status == 404 && get.errorCode == "not_found")
            let read = try await s.call("POST", "/api/v1/notices/\(holiday)/read", token: viewer.token)
            #expect(read.status == 404)
            #expect(try await s.call("POST", "/api/v1/notices/read-all", token: viewer.token).status == 204)
        }
        #expect(try await board(s, ana)["unreadCount"] == 2, "nobody else's read-all touched ana's notice")
        for (method, body) in [("PATCH", JSONValue.object([("title", "x")])), ("DELETE", nil)] {
            let r = try await s.call(method, "/api/v1/admin/notices/\(holiday)", token: boss.token, json: body)
            #expect(r.status == 404, "admins cannot reach a holiday notice through \(method) either")
        }
        #expect(try await s.call("POST", "/api/v1/notices/read-all", token: ana.token).status == 204)
        #expect(try await board(s, ana)["unreadCount"] == 0)
        #expect(try await board(s, ana)["items"]?.arrayValue?.allSatisfy { $0["read"] == true } == true)
        await s.stop()
    }

    @Test("writes are for admins: 401 without credentials, 403 for an employee")
    func writesNeedAnAdmin() async throws {
        let (s, boss, ana) = try await TestServer.startWithEmployee()
        let notice = try await post(s, boss, "Existing")
        let writes: [(String, String, JSONValue?)] = [
            ("POST", "/api/v1/admin/notices", ["title": "x", "body": "y"]),
            ("PATCH", "/api/v1/admin/notices/\(id(notice))", ["title": "changed"]),
            ("DELETE", "/api/v1/admin/notices/\(id(notice))", nil),
        ]
        for (method, path, body) in writes {
            let anonymous = try await s.call(method, path, json: body)
            #expect(anonymous.status == 401 && anonymous.errorCode == "unauthenticated", "\(method) \(path)")
            let employee = try await s.call(method, path, token: ana.token, json: body)
            #expect(employee.status == 403 && employee.errorCode == "forbidden", "\(method) \(path)")
        }
        for (method, path) in [("GET", "/api/v1/notices"), ("GET", "/api/v1/notices/\(id(notice))"),
                               ("POST", "/api/v1/notices/\(id(notice))/read"), ("POST", "/api/v1/notices/read-all")] {
            #expect(try await s.call(method, path).status == 401, "\(method) \(path)")
        }
        // The console's cookie needs the CSRF token on writes, like everywhere else.
        let cookie = ("Cookie", "sgem_session=\(boss.token)")
        let forged = try await s.call("POST", "/api/v1/admin/notices", json: ["title": "Forged", "body": "x"], headers: [cookie])
        #expect(forged.status == 403 && forged.errorCode == "csrf_failed")
        let readAll = try await s.call("POST", "/api/v1/notices/read-all", headers: [cookie])
        #expect(readAll.status == 403 && readAll.errorCode == "csrf_failed")
        let console = try await s.call("POST", "/api/v1/admin/notices", json: ["title": "From the console", "body": "x"],
                                       headers: [cookie, ("X-CSRF-Token", boss.csrf)])
        #expect(console.status == 201)
        let unchanged = try await s.call("GET", "/api/v1/notices/\(id(notice))", token: ana.token).json()
        #expect(unchanged["title"] == "Existing", "nothing the refused writes asked for happened")
        #expect(ids(try await board(s, ana)).count == 2, "the existing notice and the console's, nothing forged")
        await s.stop()
    }

    @Test("pinned notices come first on the first page; before pages the others by id")
    func pinnedOrderingAndPaging() async throws {
        let s = try await TestServer.start()
        let boss = try await s.login()
        var plain: [Int64] = []
        var pinned: [Int64] = []
        for n in 1...7 {
            let notice = try await post(s, boss, "Notice \(n)", pinned: n == 2 || n == 5)
            if n == 2 || n == 5 { pinned.append(id(notice)) } else { plain.append(id(notice)) }
        }
        let first = try await board(s, boss, "?limit=2")
        #expect(ids(first) == pinned.reversed() + plain.reversed().prefix(2), "pinned newest first, then the two newest others")
        let next = try #require(first["nextBefore"]?.numberValue)
        #expect(Int64(next) == plain.reversed()[1])
        let second = try await board(s, boss, "?limit=2&before=\(Int64(next))")
        #expect(ids(second) == Array(plain.reversed()[2..<4]), "no pinned notice after the first page")
        let third = try await board(s, boss, "?limit=2&before=\(Int64(try #require(second["nextBefore"]?.numberValue)))")
        #expect(ids(third) == [plain[0]])
        #expect(third["nextBefore"] == .null, "the last page says so")
        let all = try await board(s, boss)
        #expect(ids(all) == pinned.reversed() + plain.reversed())
        #expect(all["nextBefore"] == .null)

        // Unpinning moves a notice among the others, by id.
        let r = try await s.call("PATCH", "/api/v1/admin/notices/\(pinned[1])", token: boss.token, json: ["pinned": false])
        #expect(r.status == 200)
        #expect(try r.json()["editedAt"] == .null, "pinning alone is not an edit")
        #expect(ids(try await board(s, boss)) == [pinned[0]] + (plain + [pinned[1]]).sorted(by: >))
        await s.stop()
    }

    @Test("bad paging is 422 naming the field", arguments: ["?limit=0", "?limit=201", "?limit=ten", "?before=-3", "?before=x"])
    func badPaging(query: String) async throws {
        let s = try await TestServer.start()
        let boss = try await s.login()
        let r = try await s.call("GET", "/api/v1/notices\(query)", token: boss.token)
        #expect(r.status == 422 && r.errorCode == "validation_failed")
        let field = query.hasPrefix("?limit") ? "limit" : "before"
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil)
        await s.stop()
    }

    static let invalidPosts: [(JSONValue, String)] = [
        (["body": "no title"], "title"),
        (["title": "", "body": "x"], "title"),
        (["title": "   \n\t ", "body": "x"], "title"),
        (["title": .string(String(repeating: "é", count: 201)), "body": "x"], "title"),
        (["title": "two\nlines", "body": "x"], "title"),
        (["title": 42, "body": "x"], "title"),
        (["title": "ok"], "body"),
        (["title": "ok", "body": .string(String(repeating: "a", count: 20_001))], "body"),
        (["title": "ok", "body": ["not", "text"]], "body"),
        (["title": "ok", "body": "x", "pinned": "yes"], "pinned"),
    ]

    @Test("invalid notices are 422 with the field named, and nothing is stored", arguments: invalidPosts)
    func validation(body: JSONValue, field: String) async throws {
        let s = try await TestServer.start()
        let boss = try await s.login()
        let r = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, json: body)
        #expect(r.status == 422 && r.errorCode == "validation_failed")
        #expect(try r.json()["error"]?["details"]?["fields"]?[field]?.stringValue != nil, "\(r.text)")
        #expect(ids(try await board(s, boss)).isEmpty)
        await s.stop()
    }

    @Test("limits are reached exactly: a 200-character title and a 20,000-character body are accepted")
    func limitsReached() async throws {
        let s = try await TestServer.start()
        let boss = try await s.login()
        let title = String(repeating: "ñ", count: 200)
        let body = String(repeating: "😀", count: 20_000)
        let notice = try await post(s, boss, title, body: body)
        #expect(notice["title"]?.stringValue == title)
        #expect(notice["body"]?.stringValue == body)
        let huge = try await s.call("POST", "/api/v1/admin/notices", token: boss.token,
                                    raw: Array(#"{"title":"x","body":""#.utf8) + [UInt8](repeating: 0x61, count: 300_000) + Array(#""}"#.utf8),
                                    headers: [("Content-Type", "application/json")])
        #expect(huge.status == 413)
        let malformed = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, raw: Array("{title".utf8),
                                         headers: [("Content-Type", "application/json")])
        #expect(malformed.status == 400 && malformed.errorCode == "invalid_json")
        await s.stop()
    }

    @Test("PATCH edits what it names, sets editedAt only when the text changes; 422 for bad fields; DELETE removes reads too")
    func editAndDelete() async throws {
        let (s, boss, ana) = try await TestServer.startWithEmployee()
        let notice = try await post(s, boss, "Draft title", body: "Draft body")
        let path = "/api/v1/admin/notices/\(id(notice))"

        let same = try await s.call("PATCH", path, token: boss.token, json: ["title": "Draft title"])
        #expect(same.status == 200)
        #expect(try same.json()["editedAt"] == .null, "the same title again is no edit")
        let edited = try await s.call("PATCH", path, token: boss.token, json: ["body": "Final body", "pinned": true])
        let value = try edited.json()
        #expect(edited.status == 200 && value["title"] == "Draft title" && value["body"] == "Final body" && value["pinned"] == true)
        #expect(Timestamp(rfc3339: value["editedAt"]?.stringValue ?? "") != nil)
        #expect(value["readCount"] == 0 && value["audienceCount"] == 1)

        for bad: JSONValue in [["title": ""], ["title": .null], ["body": .null], ["pinned": .null], ["pinned": 1]] {
            let r = try await s.call("PATCH", path, token: boss.token, json: bad)
            #expect(r.status == 422, "\(bad.serialized())")
        }
        #expect(try await s.call("PATCH", "/api/v1/admin/notices/999999", token: boss.token, json: ["title": "x"]).status == 404)
        #expect(try await s.call("PATCH", "/api/v1/admin/notices/nope", token: boss.token, json: ["title": "x"]).status == 404)

        #expect(try await s.call("POST", "/api/v1/notices/\(id(notice))/read", token: ana.token).status == 204)
        #expect(try await s.call("DELETE", path, token: boss.token).status == 204)
        #expect(try await s.call("DELETE", path, token: boss.token).status == 404)
        #expect(try await s.call("GET", "/api/v1/notices/\(id(notice))", token: ana.token).status == 404)
        let reads = try await s.store.read { db in try db.scalar("SELECT COUNT(*) FROM notices_reads") }
        #expect(reads == .integer(0), "the notice's reads went with it")
        await s.stop()
    }

    @Test("each new notice appends notice.created in its transaction: everyone for company, the recipient for holiday")
    func eventsAppended() async throws {
        let (s, boss, ana) = try await TestServer.startWithEmployee()
        let journal = try s.journal()
        let start = try await journal.lastEventID()
        let company = try await post(s, boss, "Party", pinned: true)
        let holiday = try await publishHoliday(s, to: ana.userID)
        let events = try await journal.events(after: start, limit: 10)
        #expect(events.count == 2)
        #expect(events.map(\.event.type) == ["notice.created", "notice.created"])
        #expect(events[0].event.audience == .everyone)
        let data = try #require(events[0].event.data["notice"])
        #expect(data["id"]?.numberValue == Double(id(company)) && data["kind"] == "company" && data["title"] == "Party")
        #expect(data["pinned"] == true && data["createdAt"] == company["createdAt"])
        #expect(data["authorId"]?.numberValue == Double(boss.userID))
        #expect(data.objectValue?.count == 6, "id, kind, title, pinned, createdAt, authorId")
        #expect(events[1].event.audience == .user(ana.userID))
        #expect(events[1].event.data["notice"]?["id"]?.numberValue == Double(holiday))
        #expect(events[1].event.data["notice"]?["kind"] == "holiday")
        #expect(events[1].event.data["notice"]?["body"] == nil, "no body in the event")
        await s.stop()
    }

    @Test("a write that publishes a notice then throws leaves neither the notice nor its event")
    func publisherRollsBack() async throws {
        let (s, _, ana) = try await TestServer.startWithEmployee()
        let publisher = try #require(s.services.resolve((any NoticePublisher).self))
        let journal = try s.journal()
        let start = try await journal.lastEventID()
        struct DecisionFailed: Error {}
        let recipient = ana.userID
        await #expect(throws: DecisionFailed.self) {
            try await s.store.write { db in
                let noticeID = try publisher.publish(PersonalNotice(recipientID: recipient, title: "Approved", body: "x"), in: db)
                #expect(noticeID > 0)
                throw DecisionFailed()
            }
        }
        #expect(try await journal.events(after: start, limit: 10).isEmpty)
        #expect(ids(try await board(s, ana)).isEmpty)
        let rows = try await s.store.read { db in try db.scalar("SELECT COUNT(*) FROM notices") }
        #expect(rows == .integer(0))
        await s.stop()
    }

    @Test("the publisher refuses what no holiday notice can be", arguments: [
        PersonalNotice(kind: "company", recipientID: 1, title: "t", body: "b"),
        PersonalNotice(kind: "gossip", recipientID: 1, title: "t", body: "b"),
        PersonalNotice(recipientID: 1, title: "  ", body: "b"),
        PersonalNotice(recipientID: 1, title: "t", body: String(repeating: "x", count: 20_001)),
    ])
    func publisherValidates(notice: PersonalNotice) async throws {
        let s = try await TestServer.start()
        let publisher = try #require(s.services.resolve((any NoticePublisher).self))
        await #expect(throws: (any Error).self) { try await s.store.write { db in try publisher.publish(notice, in: db) } }
        #expect(try await s.store.read { db in try db.scalar("SELECT COUNT(*) FROM notices") } == .integer(0))
        await s.stop()
    }

    @Test("the board's routes are in the OpenAPI document with their statuses")
    func documented() async throws {
        let s = try await TestServer.start()
        let doc = try await s.call("GET", "/api/v1/openapi.json").json()
        let paths = try #require(doc["paths"])
        let expected: [(String, String, [String])] = [
            ("/api/v1/notices", "get", ["200", "401", "422"]),
            ("/api/v1/notices/{id}", "get", ["200", "404"]),
            ("/api/v1/notices/{id}/read", "post", ["204", "404"]),
            ("/api/v1/notices/read-all", "post", ["204"]),
            ("/api/v1/admin/notices", "post", ["201", "403", "413", "422"]),
            ("/api/v1/admin/notices/{id}", "patch", ["200", "404", "422"]),
            ("/api/v1/admin/notices/{id}", "delete", ["204", "404"]),
        ]
        for (path, method, statuses) in expected {
            let responses = try #require(paths[path]?[method]?["responses"], "\(method) \(path)")
            for status in statuses { #expect(responses[status] != nil, "\(method) \(path) \(status)") }
        }
        await s.stop()
    }
}
