#if canImport(Glibc)
import Glibc
#endif
import SGEMCore
import SGEMShell
@testable import SGEMHolidays
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Holidays: iCal feed, CSV export, admin verbs, realtime")
struct FeedAndCommandTests {
    /// The path and query of a feed URL.
    static func path(_ url: String) -> String {
        let parts = pieces(url, "/api/v1/")
        return parts.count == 2 ? "/api/v1/" + parts[1] : url
    }

    @Test("the feed: RFC 5545 lines, all-day events with an exclusive end, names as the token's owner may see them; a new token revokes the old")
    func feed() async throws {
        try await Office.with { o in
            o.pin("2030-01-15T12:00:00Z")
            let long = "Ana; \"the\" best, \\ of all — with a name long enough that the line must fold somewhere ñ"
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("ana"))", as: "boss", ["displayName": .string(long)])
            try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "sick", "name": "Sick leave", "needsApproval": false])
            let sick = try await o.request("ana", "2030-06-10", "2030-06-14", type: "sick", halfEnd: true)["id"]!.int64!
            try await o.request("bob", "2030-06-17", "2030-06-18")  // pending: not in the feed

            let first = try await o.expect(200, "POST", "/me/calendar-token", as: "bob")["url"]?.stringValue ?? ""
            #expect(first.hasPrefix("http://127.0.0.1:\(o.port)/api/v1/holidays/calendar.ics?token="))
            let feed = try await httpCall(port: o.port, "GET", FeedAndCommandTests.path(first))
            #expect(feed.status == 200 && (feed.header("Content-Type") ?? "").hasPrefix("text/calendar"))
            let text = feed.text
            #expect(text.hasSuffix("\r\n") && !text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
            for line in pieces(text, "\r\n") { #expect(line.utf8.count <= 75, "\(line)") }
            let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
            #expect(unfolded.contains("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"))
            #expect(unfolded.contains("UID:holiday-\(sick)@127.0.0.1\r\n"))
            #expect(unfolded.contains("DTSTART;VALUE=DATE:20300610\r\n") && unfolded.contains("DTEND;VALUE=DATE:20300615\r\n"))
            #expect(unfolded.contains("SUMMARY:Ana\\; \"the\" best\\, \\\\ of all — with a name long enough that the line must fold somewhere ñ: away"))
            #expect(!unfolded.contains("Sick leave") && !unfolded.contains("20300617"))
            #expect(pieces(unfolded, "BEGIN:VEVENT").count == 2)

            // Ana's own feed names the type.
            let anas = try await o.expect(200, "POST", "/me/calendar-token", as: "ana")["url"]?.stringValue ?? ""
            #expect(try await httpCall(port: o.port, "GET", FeedAndCommandTests.path(anas)).text.replacingOccurrences(of: "\r\n ", with: "")
                .contains(": Sick leave (until midday 2030-06-14)"))

            let second = try await o.expect(200, "POST", "/me/calendar-token", as: "bob")["url"]?.stringValue ?? ""
            #expect(second != first)
            #expect(try await httpCall(port: o.port, "GET", FeedAndCommandTests.path(first)).status == 401)
            #expect(try await httpCall(port: o.port, "GET", FeedAndCommandTests.path(second)).status == 200)
            #expect(try await httpCall(port: o.port, "GET", "/api/v1/holidays/calendar.ics").status == 401)
            #expect(try await httpCall(port: o.port, "GET", "/api/v1/holidays/calendar.ics?token=nope").status == 401)
            // A deactivated owner's link stops working.
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("bob"))", as: "boss", ["active": false])
            #expect(try await httpCall(port: o.port, "GET", FeedAndCommandTests.path(second)).status == 401)
        }
    }

    @Test("text escaping and folding follow RFC 5545")
    func escaping() {
        #expect(CalendarFeed.escape("a,b;c\\d\r\ne\nf\u{7}") == "a\\,b\\;c\\\\d\\ne\\nf")
        let folded = CalendarFeed.fold("SUMMARY:" + String(repeating: "é", count: 60))
        let lines = pieces(folded, "\r\n")
        #expect(lines.count == 2 && lines.allSatisfy { $0.utf8.count <= 75 } && lines[1].hasPrefix(" "))
        #expect(folded.replacingOccurrences(of: "\r\n ", with: "") == "SUMMARY:" + String(repeating: "é", count: 60))
    }

    @Test("CSV cells: RFC 4180 quoting, formulas defused",
          arguments: [("plain", "plain"), ("a,b", "\"a,b\""), ("say \"hi\"", "\"say \"\"hi\"\"\""), ("two\nlines", "\"two\nlines\""),
                      ("=1+2", "'=1+2"), ("+cmd", "'+cmd"), ("-2", "'-2"), ("@SUM(A1)", "'@SUM(A1)"), ("=HYPERLINK(\"x\",1)", "\"'=HYPERLINK(\"\"x\"\",1)\"")])
    func csvCells(value: String, cell: String) {
        #expect(CSVTable.cell(value) == cell)
    }

    @Test("the CSV export opens in a spreadsheet: a UTF-8 byte order mark, people and leave types by name beside their ids, quoted and defused cells")
    func csvExport() async throws {
        try await Office.with(["ana", "bob"]) { o in
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("ana"))", as: "boss", ["displayName": "Lucía Núñez"])
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("boss"))", as: "boss", ["displayName": "Señora Jefa"])
            try await o.expect(201, "POST", "/admin/leave-types", as: "boss", ["key": "move", "name": "Mudanza, día libre", "needsApproval": true])
            let ana = try await o.request("ana", "2030-12-30", "2031-01-03", note: "=cmd|' /C calc'!A0, \"quoted\"")["id"]!.int64!
            let bob = try await o.request("bob", "2031-02-03", "2031-02-03", type: "move")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(bob)/approve", as: "boss", ["note": "ok"])
            let r = try await o.call("GET", "/admin/holidays.csv?year=2031", as: "boss")
            #expect(r.status == 200 && (r.header("Content-Type") ?? "").hasPrefix("text/csv"))
            #expect(Array(r.body.prefix(3)) == [0xEF, 0xBB, 0xBF])
            let lines = pieces(String(decoding: r.body.dropFirst(3), as: UTF8.self), "\r\n")
            #expect(lines.count == 4 && lines[3].isEmpty)
            #expect(lines[0] == "id,userId,displayName,username,type,typeName,start,end,halfStart,halfEnd,days,daysInYear,status,note,"
                + "createdAt,decidedBy,decidedByName,decidedAt,decisionNote")
            // Names in UTF-8 ("Lucía", not "LucÃ­a"), the ids kept; the formula in the note defused and quoted.
            #expect(lines[1].hasPrefix("\(ana),\(o.userID("ana")),Lucía Núñez,ana,vacation,Vacation,2030-12-30,2031-01-03,false,false,5,3,pending,"
                + "\"'=cmd|' /C calc'!A0, \"\"quoted\"\"\","))
            #expect(lines[1].hasSuffix(",,,,"))
            #expect(lines[2].hasPrefix("\(bob),\(o.userID("bob")),Bob,bob,move,\"Mudanza, día libre\",2031-02-03,2031-02-03,false,false,1,1,approved,,"))
            #expect(lines[2].contains(",\(o.userID("boss")),Señora Jefa,") && lines[2].hasSuffix(",ok"))
            let empty = try await o.call("GET", "/admin/holidays.csv?year=2029", as: "boss")
            #expect(Array(empty.body.prefix(3)) == [0xEF, 0xBB, 0xBF] && pieces(empty.text, "\r\n").count == 2)
            try await o.expect(422, "GET", "/admin/holidays.csv?year=abc", as: "boss")
        }
    }

    @Test("admin set-allowance, holidays add-public and import-public, with one clear line for each mistake")
    func commands() async throws {
        let office = try await Office.start(["ana"], admins: [])
        let dir = office.dir
        do {
            var r = await sgem(dir, ["admin", "set-allowance", "ana", "2030", "12.5"])
            #expect(r.code == 0 && r.io.output.contains("12.5"), "\(r.io.errors)")
            #expect(try await office.summary("ana", 2030)["allowance"]?.double == 12.5)
            r = await sgem(dir, ["admin", "set-allowance", "\(office.userID("ana"))", "2031", "3"])
            #expect(r.code == 0)
            #expect(try await office.summary("ana", 2031)["allowance"]?.double == 3)
            #expect(await sgem(dir, ["admin", "set-allowance", "nobody", "2030", "3"]).code == 1)
            #expect(await sgem(dir, ["admin", "set-allowance", "ana", "2030", "2.3"]).code == 2)
            #expect(await sgem(dir, ["admin", "set-allowance", "ana", "year", "2"]).code == 2)
            #expect(await sgem(dir, ["admin", "set-allowance", "ana", "2030"]).code == 2)

            r = await sgem(dir, ["admin", "holidays", "add-public", "2030-05-01", "Labour Day"])
            #expect(r.code == 0, "\(r.io.errors)")
            r = await sgem(dir, ["admin", "holidays", "add-public", "2030-05-01", "Again"])
            #expect(r.code == 1 && r.io.errorText.contains("2030-05-01"))
            #expect(await sgem(dir, ["admin", "holidays", "add-public", "2030-02-30", "Nope"]).code == 2)

            let good = dir.path + "/good.csv"
            let bad = dir.path + "/bad.csv"
            try writeFile(good, "date,name\r\n2030-01-01,New Year\n\n2030-12-25,\"Christmas, the day\"\n2030-12-26,\"St \"\"Stephen\"\"\"\n")
            try writeFile(bad, "2030-08-15,Assumption\n2030-10-12,National Day\n2030-11-31,Impossible\n")
            r = await sgem(dir, ["admin", "holidays", "import-public", bad])
            #expect(r.code == 1 && r.io.errorText.contains("line 3") && r.io.errors.count == 1, "\(r.io.errors)")
            r = await sgem(dir, ["admin", "holidays", "import-public", good])
            #expect(r.code == 0 && r.io.output.contains("3 public holidays"), "\(r.io.errors)")
            let names = try await office.expect(200, "GET", "/public-holidays?year=2030", as: "ana")["items"]?.arrayValue?.map { $0["name"]?.stringValue ?? "" }
            #expect(names == ["New Year", "Labour Day", "Christmas, the day", "St \"Stephen\""])
            // A file naming a date that is taken adds nothing.
            let clash = dir.path + "/clash.csv"
            try writeFile(clash, "2030-08-15,Assumption\n2030-12-25,Christmas again\n")
            r = await sgem(dir, ["admin", "holidays", "import-public", clash])
            #expect(r.code == 1 && r.io.errorText.contains("line 2"), "\(r.io.errors)")
            #expect(try await office.expect(200, "GET", "/public-holidays?year=2030", as: "ana")["items"]?.arrayValue?.count == 4)
            #expect(await sgem(dir, ["admin", "holidays", "import-public", dir.path + "/missing.csv"]).code == 1)

            for words in [["set-allowance", "--help"], ["holidays", "--help"], ["holidays", "add-public", "--help"], ["holidays", "import-public", "--help"]] {
                let help = await sgem(dir, ["admin"] + words)
                #expect(help.code == 0 && help.io.output.contains("usage:"), "\(words)")
            }
        } catch {
            await office.stop()
            throw error
        }
        await office.stop()
    }

    @Test("holiday.updated reaches the employee and the admins, live and on replay, and nobody else; replay judges the role of now")
    func realtime() async throws {
        try await Office.with { o in
            let journal = try o.journal()
            let start = try await journal.lastEventID()
            func stream(_ who: String, since: Int64) async throws -> WebSocketClient {
                let client = try WebSocketClient(port: o.port)
                let (status, body) = try await webSocketClientThreads.run {
                    try client.upgrade("/api/v1/realtime?token=\(o[who].token)&since=\(since)")
                }
                guard status == 101 else { throw TestFailure("upgrade answered \(status): \(body)") }
                return client
            }
            /// Event types up to the marker event.
            func types(_ client: WebSocketClient) async throws -> [String] {
                var seen: [String] = []
                while let frame = try await client.next() {
                    let type = frame["type"]?.stringValue ?? ""
                    if type == "test.marker" { return seen }
                    seen.append(type)
                }
                throw TestFailure("the stream ended before the marker")
            }
            func marker() async throws {
                _ = try await o.store.write { db in try journal.append(RealtimeEvent(type: "test.marker", audience: .everyone, data: [:]), in: db) }
                journal.didCommit()
            }
            // Live: connected before the change.
            let live = try await [("ana", stream("ana", since: start)), ("bob", stream("bob", since: start)), ("boss", stream("boss", since: start))]
            try await marker()
            for (_, client) in live { _ = try await types(client) }
            let id = try await o.request("ana", "2030-06-10", "2030-06-11")["id"]!.int64!
            try await o.expect(200, "POST", "/admin/holidays/\(id)/approve", as: "boss")
            try await marker()
            var seen: [String: [String]] = [:]
            for (who, client) in live { seen[who] = try await types(client).filter { $0 == "holiday.updated" }; client.close() }
            #expect(seen["ana"]?.count == 2 && seen["boss"]?.count == 2 && seen["bob"]?.isEmpty == true)
            // Replay from before it all.
            for (who, expected) in [("ana", 2), ("boss", 2), ("bob", 0)] {
                let client = try await stream(who, since: start)
                var replayed: [String] = []
                for _ in 0..<2 { replayed += try await types(client) }
                #expect(replayed.filter { $0 == "holiday.updated" }.count == expected, "\(who)")
                client.close()
            }
            // Replay judges the reader's role as it is now: bob, promoted, gets them; boss, demoted, no longer.
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("bob"))", as: "boss", ["role": "admin"])
            try await o.expect(200, "PATCH", "/admin/users/\(o.userID("boss"))", as: "bob", ["role": "employee"])
            try await marker()
            for (who, expected) in [("bob", 2), ("boss", 0), ("ana", 2)] {
                let client = try await stream(who, since: start)
                var replayed: [String] = []
                for _ in 0..<3 { replayed += try await types(client) }
                #expect(replayed.filter { $0 == "holiday.updated" }.count == expected, "\(who) after the role change")
                client.close()
            }
        }
    }
}

func writeFile(_ path: String, _ text: String) throws {
    guard let f = fopen(path, "wb") else { throw TestFailure("cannot write \(path)") }
    defer { fclose(f) }
    let bytes = Array(text.utf8)
    guard fwrite(bytes, 1, bytes.count, f) == bytes.count else { throw TestFailure("short write to \(path)") }
}

/// `text` cut at every `separator` (no Foundation here).
func pieces(_ text: String, _ separator: String) -> [String] {
    let bytes = Array(text.utf8), sep = Array(separator.utf8)
    var out: [String] = []
    var start = 0, i = 0
    while i + sep.count <= bytes.count {
        if Array(bytes[i..<i + sep.count]) == sep {
            out.append(String(decoding: bytes[start..<i], as: UTF8.self))
            i += sep.count
            start = i
        } else { i += 1 }
    }
    out.append(String(decoding: bytes[start...], as: UTF8.self))
    return out
}

extension MemoryIO {
    var errorText: String { errors.joined(separator: "\n") }
}
