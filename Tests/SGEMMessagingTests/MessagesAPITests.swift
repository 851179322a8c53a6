import SGEMCore
@testable import SGEMMessaging
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Messaging API: messages, read markers, mentions, search", .serialized)
struct MessagesAPITests {
    @Test("a message is stored as sent, 201, with message.created; clientId retries return the first one (200)")
    func sendAndRetry() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob) = (s["ana"], s["bob"])
        let chat = try await s.group("G", by: ana, members: [bob])
        let start = try await s.journal().lastEventID()
        let body = "  <script>alert(1)</script> <img src=x onerror=alert(2)> ünïcødé 👋\n"
        let first = try await s.expect(201, "POST", "/chats/\(chat)/messages", as: ana, json: ["body": .string(body), "clientId": "c-1"])
        #expect(first["body"] == .string(body), "stored exactly as sent")
        #expect(first["senderId"] == ana.json && first["chatId"]?.numberValue == Double(chat) && first["deleted"] == false)
        #expect(first["editedAt"] == .null && first["mentions"] == [])
        let retry = try await s.expect(200, "POST", "/chats/\(chat)/messages", as: ana, json: ["body": "different", "clientId": "c-1"])
        #expect(same(retry, first), "the retry returns the first message")
        let bobs = try await s.expect(201, "POST", "/chats/\(chat)/messages", as: bob, json: ["body": "mine", "clientId": "c-1"])
        #expect(bobs.id != first.id, "clientId is per sender")
        let history = try await s.expect(200, "GET", "/chats/\(chat)/messages", as: bob)
        #expect(history.systemEvents == ["chat.created"] && history.ids.count == 3, "the group's creation line comes first")
        #expect(history.textIDs == [first.id, bobs.id])
        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["message.created", "message.created"])
        #expect(events[0].event.audience == .chat(chat) && same(events[0].event.data, ["message": first]))
    }

    @Test("sends that share write batches: each stored message has one event; a non-member's and a repeated clientId's have none; the chat's activity and each sender's marker end at their newest message")
    func sendsSharingBatches() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let chat = try await s.group("G", by: ana, members: [bob])
        let start = try await s.journal().lastEventID()
        // 60 sends at once (on PostgreSQL sent ahead in the batch's pipeline): ana's and bob's,
        // cleo's (no member: 404) and ana's repeats of clientId "r" (the first is stored, the rest 200).
        let outcomes = try await withThrowingTaskGroup(of: (String, Int, Int64?).self) { group in
            for n in 0..<60 {
                group.addTask {
                    let (person, name, clientID): (Person, String, String) = switch n % 4 {
                    case 0: (ana, "ana", "a-\(n)")
                    case 1: (bob, "bob", "b-\(n)")
                    case 2: (cleo, "cleo", "c-\(n)")
                    default: (ana, "ana", "r")
                    }
                    let r = try await s.call("POST", "/chats/\(chat)/messages", as: person,
                                             json: ["body": .string("n\(n) @bob"), "clientId": .string(clientID)])
                    return (name, r.status, try? r.json().id)
                }
            }
            return try await group.reduce(into: [(String, Int, Int64?)]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0.0 == "cleo" }.allSatisfy { $0.1 == 404 })
        let created = outcomes.filter { $0.1 == 201 }
        #expect(created.count == 31, "15 of ana's, 15 of bob's and the first repeat")
        // Every repeat answered the one stored message.
        let repeats = outcomes.filter { $0.0 == "ana" && $0.1 == 200 }
        #expect(repeats.count == 14 && Set(repeats.compactMap(\.2)).count == 1)
        #expect(Set(repeats.compactMap(\.2)).isSubset(of: Set(created.compactMap(\.2))))
        let sender = Dictionary(uniqueKeysWithValues: created.compactMap { c in c.2.map { ($0, c.0) } })
        let history = try await s.expect(200, "GET", "/chats/\(chat)/messages?limit=100", as: bob)
        #expect(Set(history.textIDs) == Set(sender.keys))
        let events = try await s.events(after: start).filter { $0.event.type == "message.created" }
        #expect(events.count == sender.count)
        #expect(Set(events.compactMap { $0.event.data["message"]?["id"]?.numberValue.map { Int64($0) } }) == Set(sender.keys))
        // Each sender has read up to their own newest message: what the other wrote after it is
        // unread (and bob is mentioned in each of ana's messages).
        let anasNewest = try #require(sender.filter { $0.value == "ana" }.keys.max())
        let bobsNewest = try #require(sender.filter { $0.value == "bob" }.keys.max())
        #expect(try await s.listed(chat, for: ana)?.int("unreadCount") == sender.filter { $0.value == "bob" && $0.key > anasNewest }.count)
        let forBob = try await s.listed(chat, for: bob)
        let unreadOfAna = sender.filter { $0.value == "ana" && $0.key > bobsNewest }.count
        #expect(forBob?.int("unreadCount") == unreadOfAna && forBob?.int("mentionCount") == unreadOfAna)
        let stored = try await s.store.read { db in
            try db.fetchOne("""
                SELECT c.last_activity_at AS activity, (SELECT created_at FROM messaging_messages WHERE chat_id = c.id ORDER BY id DESC LIMIT 1) AS newest
                FROM messaging_chats c WHERE c.id = \(chat)
                """)
        }
        #expect(stored?.int64("activity") == stored?.int64("newest"))
    }

    /// Bodies of POST /chats/{id}/messages that are refused, with the field named.
    static let badMessages: [(JSONValue, String)] = {
        func body(_ pairs: (String, JSONValue)...) -> JSONValue { .object(pairs) }
        return [
            (body(("body", .string(""))), "body"), (body(("body", .string("   \n"))), "body"),
            (body(("body", .string(String(repeating: "é", count: 4001)))), "body"), (body(), "body"),
            (body(("body", .number(5))), "body"), (body(("body", .string("x")), ("clientId", .string(""))), "clientId"),
            (body(("body", .string("x")), ("clientId", .string(String(repeating: "c", count: 65)))), "clientId"),
        ]
    }()

    @Test("message validation", arguments: MessagesAPITests.badMessages)
    func messageValidation(body: JSONValue, field: String) async throws {
        let s = try await ChatServer.start(["ana"])
        defer { Task { await s.stop() } }
        let chat = try await s.group("G", by: s["ana"])
        let r = try await s.call("POST", "/chats/\(chat)/messages", as: s["ana"], json: body)
        let fields = try r.json()["error"]?["details"]?["fields"]
        #expect(r.status == 422 && fields?[field] != nil, "\(r.text)")
        let history = try await s.expect(200, "GET", "/chats/\(chat)/messages", as: s["ana"])
        #expect(history.textIDs == [] && history.systemEvents == ["chat.created"], "nothing stored but the creation line")
        let max = try await s.send(String(repeating: "é", count: 4000), to: chat, as: s["ana"])
        #expect(max["body"]?.stringValue?.count == 4000)
    }

    @Test("history cursors: newest page ascending, before and after, limit bounds")
    func cursors() async throws {
        let s = try await ChatServer.start(["ana"])
        defer { Task { await s.stop() } }
        let ana = s["ana"]
        let chat = try await s.group("G", by: ana)
        var ids: [Int64] = []
        for i in 0..<7 { ids.append(try await s.send("m\(i)", to: chat, as: ana).id) }
        #expect(try await s.expect(200, "GET", "/chats/\(chat)/messages?limit=3", as: ana).ids == Array(ids[4...]))
        #expect(try await s.expect(200, "GET", "/chats/\(chat)/messages?limit=3&before=\(ids[4])", as: ana).ids == Array(ids[1...3]))
        #expect(try await s.expect(200, "GET", "/chats/\(chat)/messages?limit=2&after=\(ids[1])", as: ana).ids == [ids[2], ids[3]])
        #expect(try await s.expect(200, "GET", "/chats/\(chat)/messages?after=\(ids[6])", as: ana).ids == [])
        let all = try await s.expect(200, "GET", "/chats/\(chat)/messages", as: ana)
        #expect(all.ids.dropFirst().elementsEqual(ids) && all.systemEvents == ["chat.created"], "the creation line, then the messages")
        for bad in ["limit=0", "limit=201", "limit=x", "before=-1", "after=abc"] {
            #expect(try await s.call("GET", "/chats/\(chat)/messages?\(bad)", as: ana).status == 422, "\(bad)")
        }
    }

    @Test("edit by the author only; delete by the author or a group admin; deleted hides the body everywhere")
    func editAndDelete() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let chat = try await s.group("G", by: ana, members: [bob])
        let bobs = try await s.send("the secret plan zebra", to: chat, as: bob)
        let start = try await s.journal().lastEventID()
        #expect(try await s.call("PATCH", "/messages/\(bobs.id)", as: ana, json: ["body": "hijack"]).status == 403)
        #expect(try await s.call("PATCH", "/messages/\(bobs.id)", as: cleo, json: ["body": "x"]).status == 404, "not cleo's chat")
        let edited = try await s.expect(200, "PATCH", "/messages/\(bobs.id)", as: bob, json: ["body": "the public plan giraffe"])
        #expect(edited["body"] == "the public plan giraffe" && edited["editedAt"] != .null)
        #expect(try await s.expect(200, "GET", "/search/messages?q=zebra", as: bob)["items"] == [], "the old text is no longer found")
        #expect(try await s.expect(200, "GET", "/search/messages?q=giraffe", as: bob)["items"]?.arrayValue?.count == 1)

        #expect(try await s.call("DELETE", "/messages/\(bobs.id)", as: cleo).status == 404)
        let anas = try await s.send("ana's giraffe", to: chat, as: ana)
        #expect(try await s.call("DELETE", "/messages/\(anas.id)", as: bob).status == 403, "bob is no admin")
        try await s.expect(204, "DELETE", "/messages/\(bobs.id)", as: ana) // a group admin
        try await s.expect(204, "DELETE", "/messages/\(bobs.id)", as: ana) // again is fine
        #expect(try await s.call("PATCH", "/messages/\(bobs.id)", as: bob, json: ["body": "back"]).errorCode == "message_deleted")

        let history = try await s.expect(200, "GET", "/chats/\(chat)/messages", as: bob)["items"]?.arrayValue ?? []
        let gone = try #require(history.first { $0.id == bobs.id })
        #expect(gone["deleted"] == true && gone["body"] == .null && gone["mentions"] == [])
        let hits = try await s.expect(200, "GET", "/search/messages?q=giraffe", as: bob)["items"]?.arrayValue ?? []
        #expect(hits.map { $0["message"]?.id } == [anas.id], "the deleted message is not found")
        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["message.updated", "message.created", "message.deleted"])
        #expect(events[2].event.data["message"]?["deleted"] == true && events[2].event.data["message"]?["body"] == .null)
        #expect(!String(decoding: events[2].event.data.serializedBytes(), as: UTF8.self).contains("plan"), "no body in the event")
    }

    @Test("unread counts follow the read marker; mentions of members are counted apart until read")
    func unreadAndMentions() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let chat = try await s.group("G", by: ana, members: [bob])
        let m1 = try await s.send("hello @Bob and @cleo, mail ana@example.com", to: chat, as: ana)
        #expect(m1["mentions"] == [bob.json], "cleo is no member; an e-mail address names nobody")
        _ = try await s.send("plain", to: chat, as: ana)
        let m3 = try await s.send("@bob.", to: chat, as: ana)
        #expect(m3["mentions"] == [bob.json], "a full stop after the name is not part of it")
        var seen = try #require(try await s.listed(chat, for: bob))
        #expect(seen.int("unreadCount") == 3 && seen.int("mentionCount") == 2)
        #expect(seen["lastMessage"]?.id == m3.id)
        #expect(try await s.listed(chat, for: ana)?.int("unreadCount") == 0, "your own messages are not unread")

        try await s.expect(204, "POST", "/chats/\(chat)/read", as: bob, json: ["messageId": .number(Double(m1.id))])
        seen = try #require(try await s.listed(chat, for: bob))
        #expect(seen.int("unreadCount") == 2 && seen.int("mentionCount") == 1)
        try await s.expect(204, "POST", "/chats/\(chat)/read", as: bob, json: ["messageId": 1]) // never backwards
        #expect(try await s.listed(chat, for: bob)?.int("unreadCount") == 2)
        try await s.expect(204, "POST", "/chats/\(chat)/read", as: bob, json: ["messageId": .number(Double(m3.id + 1000))])
        seen = try #require(try await s.listed(chat, for: bob))
        #expect(seen.int("unreadCount") == 0 && seen.int("mentionCount") == 0)
        let next = try await s.send("one more", to: chat, as: ana)
        #expect(try await s.listed(chat, for: bob)?.int("unreadCount") == 1, "the marker did not run past the newest message")
        #expect(try await s.call("POST", "/chats/\(chat)/read", as: bob, json: ["messageId": "x"]).status == 422)

        // An edit that names bob counts; deleting a mention uncounts it.
        let edited = try await s.expect(200, "PATCH", "/messages/\(next.id)", as: ana, json: ["body": "one more @bob"])
        #expect(edited["mentions"] == [bob.json])
        #expect(try await s.listed(chat, for: bob)?.int("mentionCount") == 1)
        try await s.expect(204, "DELETE", "/messages/\(next.id)", as: ana)
        seen = try #require(try await s.listed(chat, for: bob))
        #expect(seen.int("unreadCount") == 0 && seen.int("mentionCount") == 0)
        _ = cleo
    }

    @Test("the chat list puts the most recent activity first")
    func listOrder() async throws {
        let s = try await ChatServer.start(["ana", "bob"])
        defer { Task { await s.stop() } }
        let (ana, bob) = (s["ana"], s["bob"])
        let a = try await s.group("A", by: ana, members: [bob])
        let b = try await s.group("B", by: ana, members: [bob])
        #expect(try await s.expect(200, "GET", "/chats", as: bob).ids == [b, a])
        _ = try await s.send("bump", to: a, as: ana)
        #expect(try await s.expect(200, "GET", "/chats", as: bob).ids == [a, b])
    }

    @Test("search: own chats only, case and accents ignored, newest first, snippet marks the match, chatId and before")
    func search() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let mine = try await s.group("Mine", by: ana, members: [bob])
        let other = try await s.group("Other", by: cleo)
        let old = try await s.send("Reunión en la CAFETERÍA mañana", to: mine, as: ana)
        let new = try await s.send("otra reunion", to: mine, as: bob)
        _ = try await s.send("reunion secreta", to: other, as: cleo)
        let hits = try await s.expect(200, "GET", "/search/messages?q=REUNION", as: ana)["items"]?.arrayValue ?? []
        #expect(hits.map { $0["message"]?.id } == [new.id, old.id], "newest first, cleo's chat left out")
        #expect(hits.last?["snippet"]?.stringValue?.contains("«Reunión»") == true, "\(hits.last?["snippet"] ?? .null)")
        #expect(hits.last?["chatId"]?.numberValue == Double(mine))
        #expect(try await s.expect(200, "GET", "/search/messages?q=cafeteria%20man", as: ana)["items"]?.arrayValue?.count == 1,
                "every word, the last as a word's start when no message holds it whole")
        #expect(try await s.expect(200, "GET", "/search/messages?q=reuni", as: ana)["items"]?.arrayValue?.count == 2)
        #expect(try await s.expect(200, "GET", "/search/messages?q=reuni%20", as: ana)["items"] == [],
                "a word followed by a space is a whole word")
        #expect(try await s.expect(200, "GET", "/search/messages?q=reunion&before=\(new.id)", as: ana)["items"]?.arrayValue?.count == 1)
        #expect(try await s.expect(200, "GET", "/search/messages?q=reunion&chatId=\(mine)&limit=1", as: ana)["items"]?.arrayValue?
            .first?["message"]?.id == new.id)
        #expect(try await s.call("GET", "/search/messages?q=reunion&chatId=\(other)", as: ana).status == 404)
        for bad in ["", "?q=", "?q=x&limit=500", "?q=x&chatId=abc", "?q=" + String(repeating: "a", count: 201)] {
            #expect(try await s.call("GET", "/search/messages\(bad)", as: ana).status == 422, "\(bad)")
        }
        // FTS5 syntax typed by a person is plain text, never an error.
        for odd in ["%22", "AND", "a*%20OR%20NEAR(", "%5E%7B%7D", "-", "***"] {
            #expect(try await s.call("GET", "/search/messages?q=\(odd)", as: ana).status == 200, "\(odd)")
        }
    }

    @Test("a removed member can no longer read history, search, post, mark read or touch messages (404)")
    func removedMember() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob) = (s["ana"], s["bob"])
        let chat = try await s.group("G", by: ana, members: [bob])
        let bobs = try await s.send("bob wrote platypus", to: chat, as: bob)
        #expect(try await s.expect(200, "GET", "/search/messages?q=platypus", as: bob)["items"]?.arrayValue?.count == 1)
        try await s.expect(204, "DELETE", "/chats/\(chat)/members/\(bob.id)", as: ana)
        #expect(try await s.listed(chat, for: bob) == nil)
        #expect(try await s.call("GET", "/chats/\(chat)", as: bob).status == 404)
        #expect(try await s.call("GET", "/chats/\(chat)/messages", as: bob).status == 404)
        #expect(try await s.call("POST", "/chats/\(chat)/messages", as: bob, json: ["body": "still here?"]).status == 404)
        #expect(try await s.call("POST", "/chats/\(chat)/read", as: bob, json: ["messageId": .number(Double(bobs.id))]).status == 404)
        #expect(try await s.call("PATCH", "/messages/\(bobs.id)", as: bob, json: ["body": "x"]).status == 404)
        #expect(try await s.call("DELETE", "/messages/\(bobs.id)", as: bob).status == 404)
        #expect(try await s.expect(200, "GET", "/search/messages?q=platypus", as: bob)["items"] == [])
        #expect(try await s.call("GET", "/search/messages?q=platypus&chatId=\(chat)", as: bob).status == 404)
        let access = try #require(s.running.context.services.resolve((any ChatAccess).self))
        #expect(try await access.chatIDs(of: bob.id).isEmpty)
        #expect(try await access.chatIDs(of: ana.id) == [chat])
    }

    @Test("the search index follows edits, deletions and a deleted group, and stays consistent with the messages")
    func indexConsistency() async throws {
        let s = try await ChatServer.start(["ana", "bob"])
        defer { Task { await s.stop() } }
        let (ana, bob) = (s["ana"], s["bob"])
        let doomed = try await s.group("Doomed", by: ana, members: [bob])
        let kept = try await s.group("Kept", by: ana, members: [bob])
        for i in 0..<5 { _ = try await s.send("walrus number \(i)", to: doomed, as: bob) }
        let edited = try await s.send("walrus to edit", to: kept, as: ana)
        let removed = try await s.send("walrus to delete", to: kept, as: ana)
        _ = try await s.expect(200, "PATCH", "/messages/\(edited.id)", as: ana, json: ["body": "a seal now"])
        try await s.expect(204, "DELETE", "/messages/\(removed.id)", as: ana)
        try await s.expect(204, "DELETE", "/chats/\(doomed)", as: ana)
        #expect(try await s.expect(200, "GET", "/search/messages?q=walrus", as: bob)["items"] == [])
        #expect(try await s.expect(200, "GET", "/search/messages?q=seal", as: bob)["items"]?.arrayValue?.count == 1)
        // The index checked against the messages: FTS5's integrity check on SQLite (it fails when a
        // row was left behind or is missing), the generated column against its expression on PostgreSQL.
        try await s.store.write { db in try MessagingRepository.checkSearchIndex(in: db) }
        let left = try await s.store.read { db in
            try db.queryOne("SELECT COUNT(*) AS n FROM messaging_messages WHERE chat_id = ?", doomed)?.int("n")
        }
        #expect(left == 0, "the group's messages are gone with it")
        let listed = try #require(try await s.listed(kept, for: bob))
        #expect(listed["lastMessage"]?["deleted"] == true && listed["lastMessage"]?["body"] == .null,
                "the last message shows as deleted, without its text")
    }
}
