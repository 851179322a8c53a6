import SGEMCore
@testable import SGEMMessaging
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// System lines: each change to a group writes one line saying who did what to whom, in the
/// change's own transaction; it reaches members live as `message.created`, stays in history,
/// and is never unread, a mention, found by search, edited, deleted or translated.
@Suite("System lines: chats say who came and went", .serialized)
struct SystemLinesTests {
    /// The system lines of chat `chat` as `who` reads its history: (event, actorId, userIds).
    static func lines(_ s: RealtimeServer, _ chat: Int64, as who: LoggedIn) async throws -> [(String, Int64, [Int64])] {
        let r = try await s.call("GET", "/api/v1/chats/\(chat)/messages?limit=200", token: who.token)
        guard r.status == 200 else { throw TestFailure("history answered \(r.status): \(r.text)") }
        return (try r.json()["items"]?.arrayValue ?? []).filter { $0["kind"] == "system" }.map { m in
            let line = m["system"]
            return (line?["event"]?.stringValue ?? "?", Int64(line?["actorId"]?.numberValue ?? -1),
                    (line?["userIds"]?.arrayValue ?? []).compactMap { $0.numberValue.map { Int64($0) } })
        }
    }

    static func chatID(_ r: WireResponse) throws -> Int64 {
        guard r.status == 201, let id = try r.json()["id"]?.numberValue else { throw TestFailure("creating a chat answered \(r.status): \(r.text)") }
        return Int64(id)
    }

    @Test("every change writes one line with its actor and the people it concerns, in history in order")
    func eachChangeWritesOneLine() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss), bob = try await s.createUser("bob", as: boss)
            let cleo = try await s.createUser("cleo", as: boss), dan = try await s.createUser("dan", as: boss)
            let chat = try SystemLinesTests.chatID(try await s.call("POST", "/api/v1/chats", token: ana.token, json: [
                "name": "Kitchen", "public": true, "memberIds": [.number(Double(bob.userID)), .number(Double(cleo.userID))],
            ]))
            let (a, b, c, d) = (ana.userID, bob.userID, cleo.userID, dan.userID)
            func ok(_ method: String, _ path: String, as who: LoggedIn, _ json: JSONValue? = nil) async throws {
                let r = try await s.call(method, "/api/v1/chats/\(chat)" + path, token: who.token, json: json)
                guard (200..<300).contains(r.status) else { throw TestFailure("\(method) \(path) answered \(r.status): \(r.text)") }
            }
            try await ok("DELETE", "/members/\(c)", as: ana)
            try await ok("POST", "/members", as: ana, ["userId": .number(Double(c))])
            try await ok("PUT", "/admins/\(b)", as: ana)
            try await ok("DELETE", "/admins/\(b)", as: ana)
            try await ok("PATCH", "", as: ana, ["name": "Kitchen rota"])
            try await ok("PATCH", "", as: ana, ["name": "Kitchen rota", "description": "same name: no line"])
            try await ok("PUT", "/admins/\(b)", as: ana) // again below: no change, no line
            try await ok("PUT", "/admins/\(b)", as: ana)
            try await ok("POST", "/join", as: dan)
            try await ok("POST", "/join", as: dan) // again: nothing
            try await ok("POST", "/leave", as: cleo)
            let got = try await SystemLinesTests.lines(s, chat, as: ana)
            let expected: [(String, Int64, [Int64])] = [
                ("chat.created", a, [b, c]), ("member.removed", a, [c]), ("member.added", a, [c]), ("admin.granted", a, [b]),
                ("admin.revoked", a, [b]), ("chat.renamed", a, []), ("admin.granted", a, [b]), ("member.added", d, [d]),
                ("member.left", c, [c]),
            ]
            #expect(got.map(\.0) == expected.map(\.0))
            #expect(got.map(\.1) == expected.map(\.1), "the actor of each")
            #expect(got.map(\.2) == expected.map(\.2), "the people each concerns")
            let page = try await s.call("GET", "/api/v1/chats/\(chat)/messages", token: dan.token).json()
            let renamed = page["items"]?.arrayValue?.first { $0["system"]?["event"] == "chat.renamed" }
            #expect(renamed?["system"]?["name"] == "Kitchen rota" && renamed?["body"] == .null && renamed?["senderId"]?.numberValue == Double(a))
            #expect(renamed?["mentions"] == [] && renamed?["deleted"] == false && renamed?["editedAt"] == .null)
            #expect(try await SystemLinesTests.lines(s, chat, as: dan).count == expected.count, "a newcomer reads the whole story")

            // A direct chat has no creation line; the last admin leaving names the heir.
            let direct = try await s.call("POST", "/api/v1/chats/direct", token: ana.token, json: ["userId": .number(Double(b))])
            let directID = Int64(try direct.json()["id"]?.numberValue ?? -1)
            #expect(try await SystemLinesTests.lines(s, directID, as: ana).isEmpty)
            try await ok("DELETE", "/admins/\(b)", as: ana)
            try await ok("POST", "/leave", as: ana)
            let after = try await SystemLinesTests.lines(s, chat, as: bob).suffix(2)
            #expect(after.map(\.0) == ["member.left", "admin.granted"] && after.map(\.1) == [a, a] && after.last?.2 == [b],
                    "ana left; bob, the longest-standing member, became admin")
        }
    }

    @Test("a change whose line cannot be recorded leaves neither the change nor the line")
    func sameTransaction() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss), bob = try await s.createUser("bob", as: boss)
            let chat = try SystemLinesTests.chatID(try await s.call("POST", "/api/v1/chats", token: ana.token, json: ["name": "Solid"]))
            let services = s.running.context.services
            let journal = try s.journal()
            let directory = try #require(services.resolve((any UserDirectory).self))
            let failing = Messenger(store: s.running.store, journal: RefusingLines(base: journal), directory: directory)
            let rows = { try await s.running.store.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM messaging_messages")?.int("n") } }
            let members = { try await s.running.store.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM messaging_members")?.int("n") } }
            let (rowsBefore, membersBefore) = (try await rows(), try await members())
            let lastEvent = try await journal.lastEventID()

            await #expect(throws: RefusingLines.Refused.self) { try await failing.addMember(bob.userID, to: chat, by: ana.userID) }
            await #expect(throws: RefusingLines.Refused.self) {
                _ = try await failing.editGroup(chat, by: ana.userID, name: "Other", description: nil, tags: nil, isPublic: nil)
            }
            await #expect(throws: RefusingLines.Refused.self) {
                _ = try await failing.createGroup(by: ana.userID, name: "Never", description: "", tags: [], isPublic: false, memberIDs: [bob.userID])
            }
            #expect(try await rows() == rowsBefore, "no line")
            #expect(try await members() == membersBefore, "no member added, no group created")
            #expect(try await journal.lastEventID() == lastEvent, "no member.added, chat.updated or chat.created either")
            let now = try await s.call("GET", "/api/v1/chats/\(chat)", token: ana.token).json()
            #expect(now["name"] == "Solid" && now["members"]?.arrayValue?.count == 1)
        }
    }

    @Test("a line arrives live as message.created with kind and system, and again on replay")
    func liveAndReplayed() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss), bob = try await s.createUser("bob", as: boss)
            let cleo = try await s.createUser("cleo", as: boss)
            let chat = try SystemLinesTests.chatID(try await s.call("POST", "/api/v1/chats", token: ana.token, json: [
                "name": "Live", "memberIds": [.number(Double(bob.userID))],
            ]))
            let start = try await s.journal().lastEventID()
            // From the journal's end after the group's creation: under load the hub may still be
            // delivering the creation's events when a stream without `since` goes live.
            let bobStream = try await s.stream(bob, since: start)
            defer { bobStream.close() }
            let added = try await s.call("POST", "/api/v1/chats/\(chat)/members", token: ana.token, json: ["userId": .number(Double(cleo.userID))])
            #expect(added.status == 201, "\(added.text)")
            let first = try await bobStream.event()
            #expect(first["type"] == "member.added", "start \(start): \(first)")
            let live = try await bobStream.event()
            #expect(live["type"] == "message.created")
            let message = live["data"]?["message"]
            #expect(message?["kind"] == "system" && message?["body"] == .null && message?["chatId"]?.numberValue == Double(chat))
            #expect(message?["system"]?["event"] == "member.added" && message?["system"]?["actorId"]?.numberValue == Double(ana.userID))
            #expect(message?["system"]?["userIds"] == [.number(Double(cleo.userID))])

            // Replay carries the same line, byte for byte the same JSON as history.
            let replay = try await s.stream(cleo, since: start, waitingUntilReady: false)
            defer { replay.close() }
            var replayed: JSONValue?
            while replayed == nil {
                let e = try await replay.event()
                if e["type"] == "message.created" { replayed = e["data"]?["message"] }
            }
            #expect(sameJSON(replayed, message))
            let history = try await s.call("GET", "/api/v1/chats/\(chat)/messages", token: cleo.token).json()
            #expect(sameJSON(history["items"]?.arrayValue?.last, message), "the history page (written as bytes) says the same")
        }
    }

    @Test("a line is never unread, never a mention, never found; editing, deleting or translating it is 409 system_message")
    func neverUnreadNorSearchableNorEditable() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss), bob = try await s.createUser("bob", as: boss)
            let cleo = try await s.createUser("cleo", as: boss)
            let chat = try SystemLinesTests.chatID(try await s.call("POST", "/api/v1/chats", token: ana.token, json: [
                "name": "Quiet", "memberIds": [.number(Double(bob.userID))],
            ]))
            _ = try await s.call("POST", "/api/v1/chats/\(chat)/members", token: ana.token, json: ["userId": .number(Double(cleo.userID))])
            _ = try await s.call("PATCH", "/api/v1/chats/\(chat)", token: ana.token, json: ["name": "Quiet corner"])
            _ = try await s.call("PUT", "/api/v1/chats/\(chat)/admins/\(bob.userID)", token: ana.token)
            for who in [bob, cleo] {
                let listed = try await s.call("GET", "/api/v1/chats", token: who.token).json()["items"]?.arrayValue?.first { $0["id"]?.numberValue == Double(chat) }
                #expect(listed?["unreadCount"] == 0 && listed?["mentionCount"] == 0, "lines are not unread")
                #expect(listed?["lastMessage"]?["kind"] == "system", "the list's last message is the latest line, shown in words")
            }
            // A real message is unread; the lines around it still are not.
            _ = try await s.post("hello @bob", in: chat, as: ana)
            let bobView = try await s.call("GET", "/api/v1/chats/\(chat)", token: bob.token).json()
            #expect(bobView["unreadCount"] == 1 && bobView["mentionCount"] == 1)
            for q in ["Quiet", "corner", "admin", "added", "created", "cleo"] {
                let found = try await s.call("GET", "/api/v1/search/messages?q=\(q)", token: ana.token).json()
                #expect(found["items"] == [], "search for \(q) finds no line")
            }
            #expect(try await s.call("GET", "/api/v1/search/messages?q=hello", token: ana.token).json()["items"]?.arrayValue?.count == 1)

            let lineIDs = try await s.call("GET", "/api/v1/chats/\(chat)/messages", token: ana.token).json()["items"]?.arrayValue?
                .filter { $0["kind"] == "system" }.compactMap { $0["id"]?.numberValue.map { Int64($0) } } ?? []
            #expect(lineIDs.count == 4)
            for id in lineIDs {
                let edit = try await s.call("PATCH", "/api/v1/messages/\(id)", token: ana.token, json: ["body": "rewritten"])
                #expect(edit.status == 409 && edit.errorCode == "system_message", "\(edit.text)")
                let delete = try await s.call("DELETE", "/api/v1/messages/\(id)", token: ana.token)
                #expect(delete.status == 409 && delete.errorCode == "system_message", "\(delete.text)")
                let translate = try await s.call("POST", "/api/v1/messages/\(id)/translation", token: bob.token, json: ["target": "es"])
                #expect(translate.status == 409 && translate.errorCode == "system_message", "\(translate.text)")
            }
            #expect(try await s.call("PATCH", "/api/v1/messages/\(lineIDs[0])", token: boss.token, json: ["body": "x"]).status == 404,
                    "not a member: 404 as for any message")
            // Search's index stays consistent with the messages, lines included.
            try await s.running.store.write { db in try MessagingRepository.checkSearchIndex(in: db) }
        }
    }
}

@Suite("System lines: the migration")
struct SystemLinesMigrationTests {
    @Test("messages stored before messaging.002 read back as text messages, with their search rows intact")
    func olderMessagesAreText() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.path + "/sgem.db", logger: Logger(label: "test"))
        var all = MigrationList()
        MessagingRepository.registerMigrations(&all)
        _ = try await store.migrate(all.before("messaging.002_system_messages"))
        try await store.write { db in
            try db.execute("INSERT INTO messaging_chats (kind, name, creator_id, created_at, last_activity_at) VALUES ('group', 'G', 1, 1, 1)")
            try db.execute("INSERT INTO messaging_members (chat_id, user_id, admin, joined_at) VALUES (1, 1, 1, 1)")
            try db.execute("INSERT INTO messaging_messages (chat_id, sender_id, body, created_at) VALUES (1, 1, 'before the change', 1)")
            try db.execute("INSERT INTO messaging_search (rowid, body) VALUES (1, 'before the change')")
        }
        #expect(try await store.migrate(all) == ["messaging.002_system_messages", "messaging.003_notification_levels",
                                                  "messaging.004_search_index_without_pending_list", "messaging.005_search_vector_by_trigger",
                                                  "messaging.006_message_rules_as_domains"])
        let old = try await store.read { db in try MessagingRepository.message(1, in: db) }
        #expect(old?.kind == .text && old?.system == nil && old?.body == "before the change")
        let hits = try await store.read { db in try MessagingRepository.search(text: "change", userID: 1, chatID: nil, before: nil, limit: 5, in: db) }
        #expect(hits.map(\.message.id) == [1])
        let line = try await store.write { db in
            try MessagingRepository.insertSystemMessage(chatID: 1, line: SystemLine(event: .memberLeft, actorID: 1, userIDs: [1]),
                                                        at: Timestamp(milliseconds: 2), in: db)
        }
        let stored = try await store.read { db in try MessagingRepository.message(line.id, in: db) }
        #expect(stored == line, "a line reads back as written")
        await store.close()
    }
}

/// A journal that refuses to record system lines, to show that their change goes with them.
struct RefusingLines: EventJournal {
    struct Refused: Error {}
    let base: any EventJournal

    func append(_ event: RealtimeEvent, in db: Database) throws -> Int64 {
        if event.type == "message.created", event.data["message"]?["kind"] == "system" { throw Refused() }
        return try base.append(event, in: db)
    }
    func rewrite(subject: String, to data: JSONValue, in db: Database) throws -> Int { try base.rewrite(subject: subject, to: data, in: db) }
    func events(after: Int64, limit: Int) async throws -> [RecordedEvent] { try await base.events(after: after, limit: limit) }
    func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>, chats: Set<Int64>?) async throws
        -> (events: [RecordedEvent], scannedTo: Int64) {
        try await base.events(after: after, limit: limit, types: types, audiences: audiences, chats: chats)
    }
    func lastEventID() async throws -> Int64 { try await base.lastEventID() }
    func horizon() async throws -> Int64 { try await base.horizon() }
    func removeEvents(recordedBefore time: Timestamp) async throws -> Int { try await base.removeEvents(recordedBefore: time) }
    func didCommit() { base.didCommit() }
    func commits() -> AsyncStream<Void> { base.commits() }
}

/// Whether two JSON values are equal, ignoring the order of object keys (parsed JSON does not keep it).
private func sameJSON(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
    func sorted(_ v: JSONValue) -> JSONValue {
        switch v {
        case let .object(pairs): .object(pairs.map { ($0.0, sorted($0.1)) }.sorted { $0.0 < $1.0 })
        case let .array(items): .array(items.map(sorted))
        default: v
        }
    }
    return a.map(sorted) == b.map(sorted)
}
