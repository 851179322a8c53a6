import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The realtime stream with the real messaging module behind it: what a removed member receives,
/// live and on replay, and what the other paths (history, search) give them.
@Suite("Realtime with messaging")
struct RealtimeMessagingTests {
    @Test("a removed member gets member.removed and nothing of the chat after it, live or replayed")
    func removedMemberIsCutOffEverywhere() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let bob = try await s.createUser("bob", as: boss)
            let anaStream = try await s.stream(ana)
            let bobStream = try await s.stream(bob)

            let created = try await s.call("POST", "/api/v1/chats", token: boss.token, json: [
                "name": "Launch", "memberIds": [.number(Double(ana.userID)), .number(Double(bob.userID))],
            ])
            #expect(created.status == 201, "\(created.text)")
            let chatID = Int64(try #require(try created.json()["id"]?.numberValue))
            for stream in [anaStream, bobStream] {
                #expect(try await stream.event()["type"] == "chat.created")
                let line = try await stream.event()
                #expect(line["type"] == "message.created" && line["data"]?["message"]?["system"]?["event"] == "chat.created",
                        "the group's creation line follows")
            }

            let first = try await s.call("POST", "/api/v1/chats/\(chatID)/messages", token: boss.token, json: ["body": "before the change"])
            #expect(first.status == 201)
            for stream in [anaStream, bobStream] {
                let e = try await stream.event()
                #expect(e["type"] == "message.created")
                #expect(e["data"]?["message"]?["body"] == "before the change")
            }

            let removed = try await s.call("DELETE", "/api/v1/chats/\(chatID)/members/\(bob.userID)", token: boss.token)
            #expect(removed.status == 204)
            let removal = try await bobStream.event()
            #expect(removal["type"] == "member.removed")
            #expect(removal["data"]?["userId"]?.numberValue == Double(bob.userID))
            #expect(try await anaStream.event()["type"] == "member.removed")
            #expect(try await anaStream.event()["data"]?["message"]?["system"]?["event"] == "member.removed", "the line saying so")

            let second = try await s.call("POST", "/api/v1/chats/\(chatID)/messages", token: boss.token, json: ["body": "after the change"])
            #expect(second.status == 201)
            // A company notice reaches everyone: a marker after which bob must have seen nothing else.
            let notice = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, json: ["title": "Marker", "body": ""])
            #expect(notice.status == 201, "\(notice.text)")
            let anaNext = try await anaStream.event()
            #expect(anaNext["type"] == "message.created")
            #expect(anaNext["data"]?["message"]?["body"] == "after the change")
            #expect(try await anaStream.event()["type"] == "notice.created")
            #expect(try await bobStream.event()["type"] == "notice.created", "nothing of the chat reaches bob after his removal")

            // Replay from the start checks membership as it is now: bob gets his own events, not the chat's messages.
            anaStream.close()
            bobStream.close()
            let replay = try await s.stream(bob, since: 0)
            var types: [String] = []
            while types.last != "notice.created" { types.append(try await replay.event()["type"]?.stringValue ?? "?") }
            #expect(types == ["chat.created", "member.removed", "notice.created"])
            replay.close()

            // The other paths to the chat are closed too.
            #expect(try await s.call("GET", "/api/v1/chats/\(chatID)/messages", token: bob.token).status == 404)
            let found = try await s.call("GET", "/api/v1/search/messages?q=change", token: bob.token)
            #expect(found.status == 200)
            #expect(try found.json()["items"]?.arrayValue?.isEmpty == true)
            let anaFound = try await s.call("GET", "/api/v1/search/messages?q=change", token: ana.token)
            #expect(try anaFound.json()["items"]?.arrayValue?.count == 2)
        }
    }

    @Test("a deactivated member's stream closes at once")
    func deactivationClosesTheStream() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let stream = try await s.stream(ana)
            let r = try await s.call("PATCH", "/api/v1/admin/users/\(ana.userID)", token: boss.token, json: ["active": false])
            #expect(r.status == 200)
            #expect(try await stream.waitForClose() == 1008)
        }
    }

    @Test("replay after a message's deletion and edit and a notice's deletion and edit holds none of the old text; live delivery is unchanged")
    func replayHoldsNoDeletedOrEditedText() async throws {
        try await RealtimeServer.with(messaging: true) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let live = try await s.stream(ana)
            let created = try await s.call("POST", "/api/v1/chats", token: boss.token, json: [
                "name": "Ops", "memberIds": [.number(Double(ana.userID))],
            ])
            let chatID = Int64(try #require(try created.json()["id"]?.numberValue))
            let gone = try await s.post(#"deleted-secret-1"#, in: chatID, as: boss)
            let pasted = try await s.post(#"the password is hunter2-xyz"#, in: chatID, as: boss)
            // Live delivery reads the journal, which the deletion and the edit rewrite: the first
            // four frames are read before them (a busy machine's hub may trail the 201s).
            var earlyFrames: [JSONValue] = []
            for _ in 0..<4 { earlyFrames.append(try await live.event()) }
            #expect(try await s.call("DELETE", "/api/v1/messages/\(gone)", token: boss.token).status == 204)
            #expect(try await s.call("PATCH", "/api/v1/messages/\(pasted)", token: boss.token, json: ["body": "the password is (removed)"]).status == 200)
            let notice = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, json: ["title": "Secret reorg-title", "body": ""])
            let noticeID = Int64(try #require(try notice.json()["id"]?.numberValue))
            #expect(try await s.call("DELETE", "/api/v1/admin/notices/\(noticeID)", token: boss.token).status == 204)
            let draft = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, json: ["title": "Draft-title-old", "body": ""])
            let draftID = Int64(try #require(try draft.json()["id"]?.numberValue))
            #expect(try await s.call("PATCH", "/api/v1/admin/notices/\(draftID)", token: boss.token, json: ["title": "Final title"]).status == 200)
            let marker = try await s.call("POST", "/api/v1/admin/notices", token: boss.token, json: ["title": "Marker", "body": ""])
            #expect(marker.status == 201)

            // Live, each change arrived as it happened.
            let liveFrames = earlyFrames + (try await live.frames(untilTitle: "Marker"))
            // The group's creation line (a system message.created) follows chat.created.
            #expect(liveFrames.map { $0["type"]?.stringValue ?? "?" } == ["chat.created", "message.created", "message.created",
                                                                           "message.created", "message.deleted", "message.updated",
                                                                           "notice.created", "notice.created", "notice.created"])
            #expect(liveFrames[1]["data"]?["message"]?["system"]?["event"] == "chat.created")
            #expect(liveFrames[2]["data"]?["message"]?["body"] == "deleted-secret-1")
            #expect(liveFrames[5]["data"]?["message"]?["body"] == "the password is (removed)")
            live.close()

            // Replayed, the same events carry the messages and the notice as they are now.
            let replay = try await s.stream(ana, since: 0)
            let replayed = try await replay.frames(untilTitle: "Marker")
            let oldTexts = ["deleted-secret-1", "hunter2", "reorg-title", "Draft-title-old"]
            let leaked = replayed.filter { frame in oldTexts.contains { frame.serialized().contains($0) } }
            #expect(leaked.count == 0, "frames with deleted or edited-out text: \(leaked.map { $0.serialized() })")
            #expect(replayed.map { $0["id"] } == liveFrames.map { $0["id"] }, "replay keeps every event, in order")
            #expect(replayed[1]["data"]?["message"]?["kind"] == "system")
            #expect(replayed[2]["data"]?["message"]?["deleted"] == .bool(true))
            #expect(replayed[3]["data"]?["message"]?["body"] == "the password is (removed)")
            #expect(replayed[6]["data"]?["notice"]?["deleted"] == .bool(true))
            #expect(replayed[7]["data"]?["notice"]?["title"] == "Final title")
            replay.close()
        }
    }
}
