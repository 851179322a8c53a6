import SGEMSupport
import SGEMTestSupport
import Testing
@testable import SGEMCompany

@Suite("Company feed API and verbs", .serialized)
struct FeedAPITests {
    @Test("PUT checks every URL: 422 with details.fields; duplicates are folded, order kept")
    func validation() async throws {
        let s = try await Office.startForFeeds()
        func put(_ body: JSONValue) async throws -> WireResponse {
            try await s.call("PUT", "/admin/company/feeds", as: "boss", body)
        }
        let cases: [(JSONValue, String, String)] = [
            (["urls": .string("https://a.example/feed")], "urls", "must be a list of feed addresses"),
            ([:], "urls", "must be a list of feed addresses"),
            (["urls": [1]], "urls[0]", "must be a string"),
            (["urls": ["https://a.example/", "ftp://b.example/feed"]], "urls[1]", "must be an http:// or https:// address"),
            (["urls": ["javascript:alert(1)"]], "urls[0]", "must be an http:// or https:// address"),
            (["urls": ["https://user:secret@a.example/feed"]], "urls[0]", "must not contain a user name or password"),
            (["urls": ["  "]], "urls[0]", "must not be empty"),
            (["urls": [.string("https://a.example/" + String(repeating: "x", count: 2048))]], "urls[0]", "must be at most 2048 characters"),
            (["urls": ["https://bad host.example/"]], "urls[0]", "is not a valid web address"),
            (["urls": .array((0..<11).map { .string("https://a.example/\($0)") })], "urls", "must list at most 10 feeds"),
        ]
        for (body, field, words) in cases {
            let r = try await put(body)
            #expect(r.status == 422 && r.errorCode == "validation_failed", "\(body.serialized()): \(r.status)")
            #expect(try r.json()["error"]?["details"]?["fields"]?[field] == .string(words), "\(body.serialized()): \(r.text)")
        }
        #expect(try await s.feedStatuses().isEmpty, "nothing was saved")

        let repeated = [String](repeating: "https://a.example/feed", count: 9)
        let saved = try await s.setFeeds([" https://b.example/feed ", "https://a.example/feed", "https://b.example/feed"] + repeated)
        #expect(saved.map { $0["url"]?.stringValue } == ["https://b.example/feed", "https://a.example/feed"])
        for feed in saved {
            #expect(feed["status"] == "pending" && feed["entryCount"] == 0)
            #expect(feed["title"] == .null && feed["error"] == .null)
        }
        #expect(try await s.setFeeds([]).isEmpty, "an empty list clears")
        // Both changes are in the audit log with who made them; the refused ones are not.
        let audit = try await s.expect(200, "GET", "/admin/audit?event=company.feeds", as: "boss")
        let entries = audit["items"]?.arrayValue ?? []
        #expect(entries.map { $0["detail"]?.stringValue } == ["no feeds", "https://b.example/feed https://a.example/feed"])
        #expect(entries.allSatisfy { $0["actorId"]?.numberValue == Double(s.userID("boss")) })
        await s.stop()
    }

    @Test("changes made with admin company feeds are in the audit log, marked as from the command line")
    func commandLineAudit() async throws {
        let s = try await Office.startForFeeds()
        let set = await admin(s.dir, ["company", "feeds", "set", "https://a.example/feed"])
        #expect(set.code == 0, "\(set.io.errors)")
        let refused = await admin(s.dir, ["company", "feeds", "set", "ftp://b.example/feed"])
        #expect(refused.code != 0)
        #expect(await admin(s.dir, ["company", "feeds", "clear"]).code == 0)
        let audit = try await s.expect(200, "GET", "/admin/audit?event=company.feeds", as: "boss")
        let entries = audit["items"]?.arrayValue ?? []
        #expect(entries.map { $0["detail"]?.stringValue } == ["no feeds (command line)", "https://a.example/feed (command line)"])
        #expect(entries.allSatisfy { $0["actorId"] == .null })
        await s.stop()
    }

    @Test("employees get 403 on the admin routes, anonymous callers 401; limit is checked")
    func access() async throws {
        let s = try await Office.startForFeeds()
        #expect(try await s.call("GET", "/admin/company/feeds", as: "ana").status == 403)
        #expect(try await s.call("PUT", "/admin/company/feeds", as: "ana", ["urls": []]).status == 403)
        #expect(try await s.call("GET", "/company/feed", as: "").status == 401)
        #expect(try await s.feedItems().isEmpty, "no feeds, no entries")
        for bad in ["0", "51", "ten", "-1"] {
            let r = try await s.call("GET", "/company/feed?limit=\(bad)", as: "ana")
            #expect(r.status == 422 && (try? r.json()["error"]?["details"]?["fields"]?["limit"]) != nil, "limit=\(bad)")
        }
        #expect(try await s.call("GET", "/company/feed?limit=50", as: "ana").status == 200)
        await s.stop()
    }

    @Test("admin company feeds: show, set (checked like the API), clear, --help for every verb")
    func commands() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        let empty = await admin(dir, ["company", "feeds"])
        #expect(empty.code == 0 && empty.io.output.contains("no company feeds"), "\(empty.io.errors)")

        let set = await admin(dir, ["company", "feeds", "set", "https://a.example/feed", "https://b.example/atom", "https://a.example/feed"])
        #expect(set.code == 0 && set.io.output.contains("2 company feeds saved"), "\(set.io.errors)")
        let shown = await admin(dir, ["company", "feeds", "show"])
        #expect(shown.io.output.contains("https://a.example/feed  pending  0 entries"), "\(shown.io.output)")
        let json = await admin(dir, ["company", "feeds", "show", "--json"])
        let items = try JSONValue.parse(Array(json.io.output.utf8))["items"]?.arrayValue ?? []
        #expect(items.map { $0["url"]?.stringValue } == ["https://a.example/feed", "https://b.example/atom"])

        let bad = await admin(dir, ["company", "feeds", "set", "javascript:alert(1)"])
        #expect(bad.code != 0 && bad.io.errors.joined().contains("javascript:alert(1) must be an http:// or https:// address"), "\(bad.io.errors)")
        let many = await admin(dir, ["company", "feeds", "set"] + (0..<11).map { "https://a.example/\($0)" })
        #expect(many.code != 0 && many.io.errors.joined().contains("the list must list at most 10 feeds"), "\(many.io.errors)")
        let none = await admin(dir, ["company", "feeds", "set"])
        #expect(none.code != 0)
        let unknown = await admin(dir, ["company", "feeds", "drop"])
        #expect(unknown.code != 0 && unknown.io.errors.joined().contains("unknown feeds verb 'drop'"), "\(unknown.io.errors)")

        for verb in [[], ["show"], ["set"], ["clear"]] {
            let help = await admin(dir, ["company", "feeds"] + verb + ["--help"])
            #expect(help.code == 0 && help.io.output.contains("usage: sgem-server admin company feeds"), "\(verb): \(help.io.output)")
        }
        let cleared = await admin(dir, ["company", "feeds", "clear"])
        #expect(cleared.code == 0 && cleared.io.output.contains("company feeds cleared"))
        #expect((await admin(dir, ["company", "feeds"])).io.output.contains("no company feeds"))
    }
}
