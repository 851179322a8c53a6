import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Messaging API: chats and membership", .serialized)
struct ChatsAPITests {
    @Test("a group: 201 with the creator as admin, listed for its members, 404 for everyone else; chat.created to its members")
    func createGroup() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let start = try await s.journal().lastEventID()
        let chat = try await s.expect(201, "POST", "/chats", as: ana, json: [
            "name": "  Design  ", "description": "<b>not html</b>", "tags": ["ux", " UX ", "web"], "public": false,
            "memberIds": [bob.json, ana.json, bob.json],
        ])
        #expect(chat["name"] == "Design", "the name is trimmed")
        #expect(chat["kind"] == "group" && chat["public"] == false && chat["description"] == "<b>not html</b>")
        #expect(chat["tags"] == ["ux", "web"], "repeated tags (ignoring case) are dropped")
        #expect(chat["creatorId"]?.numberValue == Double(ana.id))
        #expect(same(chat["members"], [["userId": ana.json, "admin": true], ["userId": bob.json, "admin": false]]))
        #expect(chat["lastMessage"]?["kind"] == "system" && chat["lastMessage"]?["system"]?["event"] == "chat.created",
                "the last message is the group's creation line")
        #expect(chat.int("unreadCount") == 0 && chat.int("mentionCount") == 0)

        #expect(try await s.listed(chat.id, for: bob) != nil)
        #expect(try await s.listed(chat.id, for: cleo) == nil)
        for path in ["/chats/\(chat.id)", "/chats/\(chat.id)/messages", "/search/messages?q=x&chatId=\(chat.id)"] {
            #expect(try await s.call("GET", path, as: cleo).status == 404, "\(path) is 404 for a non-member")
        }
        #expect(try await s.call("POST", "/chats/\(chat.id)/messages", as: cleo, json: ["body": "hi"]).status == 404)
        #expect(try await s.call("POST", "/chats/\(chat.id)/read", as: cleo, json: ["messageId": 1]).status == 404)
        #expect(try await s.call("POST", "/chats/\(chat.id)/join", as: cleo).status == 404, "a private group cannot be joined")

        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["chat.created", "message.created"], "the chat, then its creation line")
        #expect(events.first?.event.audience == .users([ana.id, bob.id]))
        #expect(events.last?.event.audience == .chat(chat.id))
        #expect(same(events.last?.event.data["message"]?["system"], ["event": "chat.created", "actorId": ana.json, "userIds": [bob.json]]))
        #expect(events.first?.event.data["chat"]?["name"] == "Design")
    }

    /// Bodies of POST /chats that are refused, with the field named.
    static let badGroups: [(JSONValue, String)] = {
        let long: JSONValue = .string(String(repeating: "n", count: 101))
        let longText: JSONValue = .string(String(repeating: "d", count: 1001))
        let manyTags: JSONValue = .array((1...11).map { (i: Int) -> JSONValue in .string("t\(i)") })
        let longTag: JSONValue = .array([.string(String(repeating: "t", count: 31))])
        var cases: [(JSONValue, String)] = []
        cases.append((.object([("name", .string(""))]), "name"))
        cases.append((.object([("name", long)]), "name"))
        cases.append((.object([("name", "ok"), ("description", longText)]), "description"))
        cases.append((.object([("name", "ok"), ("tags", manyTags)]), "tags"))
        cases.append((.object([("name", "ok"), ("tags", longTag)]), "tags"))
        cases.append((.object([("name", "ok"), ("tags", .array([.string("")]))]), "tags"))
        cases.append((.object([("name", "ok"), ("memberIds", .array([.number(999_999)]))]), "memberIds"))
        cases.append((.object([("name", "ok"), ("memberIds", .array([.string("x")]))]), "memberIds"))
        cases.append((.object([("name", "ok"), ("public", .string("yes"))]), "public"))
        cases.append((.object([("description", .string("no name"))]), "name"))
        return cases
    }()

    @Test("validation: 422 per field, nothing stored", arguments: ChatsAPITests.badGroups)
    func groupValidation(body: JSONValue, field: String) async throws {
        let s = try await ChatServer.start(["ana"])
        defer { Task { await s.stop() } }
        let r = try await s.call("POST", "/chats", as: s["ana"], json: body)
        #expect(r.status == 422)
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil, "\(field) is named: \(r.text)")
        #expect(try await s.expect(200, "GET", "/chats", as: s["ana"]).ids.isEmpty)
    }

    @Test("a direct chat is created once (201), then returned (200), also to the other person and under concurrency")
    func directChat() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let start = try await s.journal().lastEventID()
        let first = try await s.expect(201, "POST", "/chats/direct", as: ana, json: ["userId": bob.json])
        #expect(first["kind"] == "direct" && first["name"] == .null)
        #expect(first["members"]?.arrayValue?.count == 2)
        #expect(try await s.expect(200, "POST", "/chats/direct", as: ana, json: ["userId": bob.json]).id == first.id)
        #expect(try await s.expect(200, "POST", "/chats/direct", as: bob, json: ["userId": ana.json]).id == first.id)
        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["chat.created"], "returning the chat again records nothing")
        #expect(events.first?.event.audience == .users([ana.id, bob.id]))
        #expect(events.first?.event.data["chat"]?["kind"] == "direct")

        // Ten concurrent first requests for another pair: one chat, one 201.
        let answers = try await withThrowingTaskGroup(of: (Int, Int64).self) { group in
            for i in 0..<10 {
                group.addTask {
                    let r = try await s.call("POST", "/chats/direct", as: i % 2 == 0 ? bob : cleo,
                                             json: ["userId": (i % 2 == 0 ? cleo : bob).json])
                    return (r.status, try r.json().id)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(answers.map(\.1)).count == 1, "every request got the same chat")
        #expect(answers.filter { $0.0 == 201 }.count == 1 && answers.filter { $0.0 == 200 }.count == 9)

        #expect(try await s.call("POST", "/chats/direct", as: ana, json: ["userId": ana.json]).status == 422, "not with yourself")
        #expect(try await s.call("POST", "/chats/direct", as: ana, json: ["userId": 424_242]).status == 422, "no such user")
        // A direct chat's members and settings are fixed.
        let id = first.id
        #expect(try await s.call("POST", "/chats/\(id)/members", as: ana, json: ["userId": cleo.json]).errorCode == "direct_chat")
        #expect(try await s.call("POST", "/chats/\(id)/leave", as: ana).errorCode == "direct_chat")
        #expect(try await s.call("PATCH", "/chats/\(id)", as: ana, json: ["name": "x"]).errorCode == "direct_chat")
        #expect(try await s.call("DELETE", "/chats/\(id)", as: ana).errorCode == "direct_chat")
        #expect(try await s.call("DELETE", "/chats/\(id)/members/\(bob.id)", as: ana).status == 409)
    }

    @Test("admins add, remove, grant and revoke; members cannot; last_admin; events for each change")
    func administration() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let chat = try await s.group("Team", by: ana, members: [bob])
        let start = try await s.journal().lastEventID()

        #expect(try await s.call("POST", "/chats/\(chat)/members", as: bob, json: ["userId": cleo.json]).status == 403, "bob is no admin")
        try await s.expect(201, "POST", "/chats/\(chat)/members", as: ana, json: ["userId": cleo.json])
        #expect(try await s.call("POST", "/chats/\(chat)/members", as: ana, json: ["userId": cleo.json]).errorCode == "already_member")
        #expect(try await s.call("POST", "/chats/\(chat)/members", as: ana, json: ["userId": 777_777]).status == 422)
        #expect(try await s.call("PUT", "/chats/\(chat)/admins/\(bob.id)", as: cleo).status == 403)
        #expect(try await s.call("DELETE", "/chats/\(chat)/admins/\(ana.id)", as: ana).errorCode == "last_admin")
        try await s.expect(204, "PUT", "/chats/\(chat)/admins/\(bob.id)", as: ana)
        try await s.expect(204, "PUT", "/chats/\(chat)/admins/\(bob.id)", as: ana) // again: nothing changes
        try await s.expect(204, "DELETE", "/chats/\(chat)/admins/\(ana.id)", as: ana)
        #expect(try await s.call("DELETE", "/chats/\(chat)/admins/\(bob.id)", as: bob).errorCode == "last_admin")
        #expect(try await s.call("DELETE", "/chats/\(chat)/members/\(cleo.id)", as: ana).status == 403, "ana is no admin any more")
        #expect(try await s.call("PUT", "/chats/\(chat)/admins/\(s["boss"].id)", as: bob).status == 404, "not a member")
        try await s.expect(204, "DELETE", "/chats/\(chat)/members/\(cleo.id)", as: bob)
        #expect(try await s.call("DELETE", "/chats/\(chat)/members/\(cleo.id)", as: bob).status == 404, "no longer a member")

        let edited = try await s.expect(200, "PATCH", "/chats/\(chat)", as: bob, json: ["name": "Team B", "tags": ["a"], "public": true])
        #expect(edited["name"] == "Team B" && edited["tags"] == ["a"] && edited["public"] == true && edited["description"] == "")
        #expect(try await s.call("PATCH", "/chats/\(chat)", as: ana, json: ["name": "mine"]).status == 403)
        #expect(try await s.call("PATCH", "/chats/\(chat)", as: bob, json: ["name": .null]).status == 422)
        #expect(try await s.call("PATCH", "/chats/\(chat)", as: cleo, json: ["name": "x"]).status == 404)

        let events = try await s.events(after: start)
        // Each change is followed by its system line (message.created); the rename too.
        #expect(events.map(\.event.type) == ["member.added", "message.created", "chat.updated", "message.created", "chat.updated",
                                             "message.created", "member.removed", "message.created", "chat.updated", "message.created"])
        #expect(events.filter { $0.event.type == "message.created" }.compactMap { $0.event.data["message"]?["system"]?["event"]?.stringValue }
                == ["member.added", "admin.granted", "admin.revoked", "member.removed", "chat.renamed"])
        #expect(events[0].event.audience == .chat(chat) && same(events[0].event.data, ["chatId": .number(Double(chat)), "userId": cleo.json]))
        #expect(events[6].event.audience == .users([ana.id, bob.id, cleo.id]), "the remaining members and the removed one")
        #expect(same(events[4].event.data["chat"]?["members"],
                     [["userId": ana.json, "admin": false], ["userId": bob.json, "admin": true], ["userId": cleo.json, "admin": false]]))

        #expect(try await s.call("DELETE", "/chats/\(chat)", as: ana).status == 403)
        let beforeDelete = try await s.journal().lastEventID()
        try await s.expect(204, "DELETE", "/chats/\(chat)", as: bob)
        #expect(try await s.call("GET", "/chats/\(chat)", as: bob).status == 404)
        let deleted = try await s.events(after: beforeDelete)
        #expect(deleted.map(\.event.type) == ["chat.deleted"])
        #expect(deleted.first?.event.audience == .users([ana.id, bob.id]) && deleted.first?.event.data == ["chatId": .number(Double(chat))])
    }

    @Test("the last admin leaving makes the longest-standing member admin; the last member leaving deletes the group")
    func leavePromotes() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let chat = try await s.group("Trio", by: ana, members: [bob])
        try await s.expect(201, "POST", "/chats/\(chat)/members", as: ana, json: ["userId": cleo.json])
        let start = try await s.journal().lastEventID()
        try await s.expect(204, "POST", "/chats/\(chat)/leave", as: ana)
        let now = try await s.expect(200, "GET", "/chats/\(chat)", as: cleo)
        #expect(same(now["members"], [["userId": bob.json, "admin": true], ["userId": cleo.json, "admin": false]]), "bob joined before cleo")
        #expect(try await s.call("GET", "/chats/\(chat)", as: ana).status == 404)
        #expect(try await s.call("POST", "/chats/\(chat)/leave", as: ana).status == 404)
        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["member.removed", "message.created", "chat.updated", "message.created"],
                "ana left (a line), bob became admin (a line)")
        #expect(events[0].event.audience == .users([bob.id, cleo.id, ana.id]))

        // Leaving through DELETE /members/{me} is the same; cleo needs no admin right for it.
        try await s.expect(204, "DELETE", "/chats/\(chat)/members/\(cleo.id)", as: cleo)
        try await s.expect(204, "POST", "/chats/\(chat)/leave", as: bob)
        #expect(try await s.call("GET", "/chats/\(chat)", as: bob).status == 404)
        #expect(try await s.store.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM messaging_chats")?.int("n") } == 0,
                "the empty group is gone")
    }

    @Test("public groups: browsed by anyone, joined (again is fine), then readable; member.added")
    func publicGroups() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        let open = try await s.group("Open", by: ana, isPublic: true)
        let closed = try await s.group("Closed", by: ana)
        _ = try await s.send("welcome", to: open, as: ana)
        let list = try await s.expect(200, "GET", "/chats/public", as: cleo)
        #expect(list.ids == [open])
        #expect(list["items"]?.arrayValue?.first?["member"] == false)
        #expect(try await s.expect(200, "GET", "/chats/public", as: ana)["items"]?.arrayValue?.first?["member"] == true)
        #expect(try await s.call("GET", "/chats/public?limit=0", as: cleo).status == 422)
        #expect(try await s.expect(200, "GET", "/chats/public?before=\(open)", as: cleo).ids.isEmpty)

        let start = try await s.journal().lastEventID()
        try await s.expect(204, "POST", "/chats/\(open)/join", as: cleo)
        try await s.expect(204, "POST", "/chats/\(open)/join", as: cleo)
        #expect(try await s.call("POST", "/chats/\(closed)/join", as: bob).status == 404)
        #expect(try await s.call("POST", "/chats/999999/join", as: bob).status == 404)
        let events = try await s.events(after: start)
        #expect(events.map(\.event.type) == ["member.added", "message.created"], "joining records a line; joining again records nothing")
        let joined = try await s.listed(open, for: cleo)
        #expect(joined?.int("unreadCount") == 0, "the history before joining is not unread")
        let history = try await s.expect(200, "GET", "/chats/\(open)/messages", as: cleo)
        #expect(history.textIDs.count == 1 && history.systemEvents == ["chat.created", "member.added"])
    }

    @Test("contacts: add (idempotent), list with names, remove (idempotent), 404 for no such user")
    func contacts() async throws {
        let s = try await ChatServer.start()
        defer { Task { await s.stop() } }
        let (ana, bob, cleo) = (s["ana"], s["bob"], s["cleo"])
        try await s.expect(204, "PUT", "/contacts/\(bob.id)", as: ana)
        try await s.expect(204, "PUT", "/contacts/\(bob.id)", as: ana)
        try await s.expect(204, "PUT", "/contacts/\(cleo.id)", as: ana)
        let list = try await s.expect(200, "GET", "/contacts", as: ana)
        #expect(list["items"]?.arrayValue?.compactMap { $0["userId"]?.numberValue } == [Double(bob.id), Double(cleo.id)])
        #expect(list["items"]?.arrayValue?.first?["username"] == "bob" && list["items"]?.arrayValue?.first?["displayName"] == "Bob")
        #expect(try await s.expect(200, "GET", "/contacts", as: bob)["items"]?.arrayValue?.isEmpty == true, "lists are per person")
        #expect(try await s.call("PUT", "/contacts/999999", as: ana).status == 404)
        #expect(try await s.call("PUT", "/contacts/\(ana.id)", as: ana).status == 422)
        #expect(try await s.call("PUT", "/contacts/abc", as: ana).status == 404)
        try await s.expect(204, "DELETE", "/contacts/\(bob.id)", as: ana)
        try await s.expect(204, "DELETE", "/contacts/\(bob.id)", as: ana)
        #expect(try await s.expect(200, "GET", "/contacts", as: ana)["items"]?.arrayValue?.count == 1)
        #expect(try await httpCall(port: s.port, "GET", "/api/v1/contacts").status == 401)
    }
}
