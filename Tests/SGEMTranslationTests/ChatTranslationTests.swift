import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMTranslation
import Testing

/// `who`'s realtime stream from `since`.
func stream(_ o: Office, _ who: String, since: Int64) async throws -> WebSocketClient {
    let client = try WebSocketClient(port: o.port)
    let (status, body) = try await webSocketClientThreads.run {
        try client.upgrade("/api/v1/realtime?token=\(o[who].token)&since=\(since)")
    }
    guard status == 101 else { throw TestFailure("upgrade answered \(status): \(body)") }
    return client
}

/// Records an event everyone sees, to know a stream has delivered everything before it.
func marker(_ o: Office) async throws {
    let journal = try o.journal()
    _ = try await o.store.write { db in try journal.append(RealtimeEvent(type: "test.marker", audience: .everyone, data: [:]), in: db) }
    journal.didCommit()
}

/// The frames up to the next marker.
func frames(_ client: WebSocketClient) async throws -> [JSONValue] {
    var seen: [JSONValue] = []
    while let frame = try await client.next() {
        if frame["type"] == "test.marker" { return seen }
        seen.append(frame)
    }
    throw TestFailure("the stream ended before the marker")
}

/// The next `message.updated` frame carrying a translation.
func nextTranslation(_ client: WebSocketClient) async throws -> JSONValue {
    while let frame = try await client.next() {
        if frame["type"] == "message.updated", frame["data"]?["message"]?["translation"] != nil { return frame }
    }
    throw TestFailure("the stream ended before a translation")
}

/// The provider set to `stub`, ana reading Spanish, and a group of `members` made by the first;
/// with `translating`, ana reads it in Spanish. Its id.
func spanishGroup(_ o: Office, _ stub: TranslationStub, _ members: [String], translating: Bool) async throws -> Int64 {
    try await use(stub, in: o)
    try await o.expect(200, "PATCH", "/me", as: "ana", ["language": "es"])
    let chat = try await group(o, members)
    if translating { try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: "ana", ["enabled": true]) }
    return chat
}

@Suite("Translation: a chat in my language")
struct ChatTranslationTests {
    @Test("live: the reader who asked gets the translation, everyone else the original; lists agree; one call per language")
    func live() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana", "bob", "carl", "dora", "eve"]) { o in
            try await use(stub, in: o)
            for who in ["ana", "carl"] { try await o.expect(200, "PATCH", "/me", as: who, ["language": "es"]) }
            try await o.expect(200, "PATCH", "/me", as: "dora", ["language": "fr"])
            let chat = try await group(o, ["boss", "ana", "bob", "carl", "dora"])
            // Non-members cannot see or change anyone's choice for the chat.
            try await o.expect(404, "GET", "/chats/\(chat)/translation", as: "eve", code: "not_found")
            try await o.expect(404, "PUT", "/chats/\(chat)/translation", as: "eve", ["enabled": true], code: "not_found")
            try await o.expect(422, "PUT", "/chats/\(chat)/translation", as: "ana", ["target": "es"], code: "validation_failed")
            let off = try await o.expect(200, "GET", "/chats/\(chat)/translation", as: "ana")
            #expect(off["enabled"] == false && off["target"] == .null)
            for who in ["ana", "carl", "dora"] { try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: who, ["enabled": true]) }
            let on = try await o.expect(200, "GET", "/chats/\(chat)/translation", as: "ana")
            #expect(on["enabled"] == true && on["target"] == "es")

            let start = try await o.journal().lastEventID()
            let ana = try await stream(o, "ana", since: start), bob = try await stream(o, "bob", since: start)
            let dora = try await stream(o, "dora", since: start)
            defer { ana.close(); bob.close(); dora.close() }
            try await marker(o)
            for c in [ana, bob, dora] { _ = try await frames(c) }

            let sent = try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "Good morning, team"])
            let id = try #require(sent["id"]?.numberValue)
            let toAna = try await nextTranslation(ana)
            #expect(toAna["data"]?["message"]?["id"]?.numberValue == id)
            #expect(toAna["data"]?["message"]?["body"] == "Good morning, team", "the original stays in body")
            let translation = toAna["data"]?["message"]?["translation"]
            #expect(translation?["text"] == "[es] Good morning, team" && translation?["source"] == "en" && translation?["target"] == "es")
            let toDora = try await nextTranslation(dora)
            #expect(toDora["data"]?["message"]?["translation"]?["text"] == "[fr] Good morning, team")
            // Two Spanish readers and one French one: one call per language.
            #expect(await eventually { stub.requestCount == 2 })
            #expect(Set(stub.requests.compactMap { $0.json?["target"]?.stringValue }) == ["es", "fr"])
            try await marker(o)
            let bobSaw = try await frames(bob)
            #expect(bobSaw.map { $0["type"]?.stringValue } == ["message.created"], "bob gets the original and nothing else")
            #expect(bobSaw.first?["data"]?["message"]?["translation"] == nil)

            // Lists: the translation for those who asked, none for the others.
            let anaList = try await o.expect(200, "GET", "/chats/\(chat)/messages", as: "ana")
            #expect(anaList["items"]?.arrayValue?.last?["translation"]?["text"] == "[es] Good morning, team")
            let bobList = try await o.expect(200, "GET", "/chats/\(chat)/messages", as: "bob")
            #expect(bobList["items"]?.arrayValue?.last?["translation"] == nil && bobList["items"]?.arrayValue?.last?["body"] == "Good morning, team")

            // Replay: the translation comes again to ana, never to bob.
            let replayAna = try await stream(o, "ana", since: start), replayBob = try await stream(o, "bob", since: start)
            defer { replayAna.close(); replayBob.close() }
            try await marker(o)
            var anaReplayed: [JSONValue] = []
            for _ in 0..<3 { anaReplayed += try await frames(replayAna) }
            var bobReplayed: [JSONValue] = []
            for _ in 0..<3 { bobReplayed += try await frames(replayBob) }
            #expect(anaReplayed.contains { $0["data"]?["message"]?["translation"] != nil })
            #expect(!bobReplayed.contains { $0["data"]?["message"]?["translation"] != nil })

            // Off again: no more translations for ana.
            try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: "ana", ["enabled": false])
            let plain = try await o.expect(200, "GET", "/chats/\(chat)/messages", as: "ana")
            #expect(plain["items"]?.arrayValue?.last?["translation"] == nil)
        }
    }

    @Test("a removed member gets no translation of what follows; a message already in the reader's language gets none")
    func membershipAndSameLanguage() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana", "bob"]) { o in
            let chat = try await spanishGroup(o, stub, ["boss", "ana", "bob"], translating: true)
            try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: "bob", ["enabled": true, "target": "de"])
            let start = try await o.journal().lastEventID()
            try await o.expect(204, "DELETE", "/chats/\(chat)/members/\(o.userID("ana"))", as: "boss")
            stub.detectedSource = "de"
            try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "Guten Morgen"])
            // bob reads German: the provider says the text is German, so no translation reaches him.
            #expect(await eventually { stub.requestCount >= 1 })
            let journal = try o.journal()
            try await marker(o)
            let anaStream = try await stream(o, "ana", since: start)
            defer { anaStream.close() }
            let anaSaw = try await frames(anaStream)
            #expect(!anaSaw.contains { $0["type"] == "message.created" || $0["data"]?["message"]?["translation"] != nil })
            #expect(stub.requests.allSatisfy { $0.json?["target"] == "de" }, "nothing was translated for ana once she left")
            let translations = try await journal.events(after: start, limit: 100).filter { $0.event.data["message"]?["translation"] != nil }
            #expect(translations.isEmpty)
        }
    }

    @Test("an edit or a deletion leaves no old text in the journal's translations, even one under way at the provider")
    func editedAndDeletedTextLeavesNoTranslation() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana"]) { o in
            let chat = try await spanishGroup(o, stub, ["boss", "ana"], translating: true)
            let journal = try o.journal()
            let start = try await journal.lastEventID()
            @Sendable func translated(_ text: String) async -> Bool {
                let events = (try? await journal.events(after: start, limit: 1000)) ?? []
                return events.contains { $0.event.data["message"]?["translation"]?["text"]?.stringValue == "[es] " + text }
            }

            // Translated, then edited: the old text's translation goes too.
            let first = try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "the code is 1111"])
            #expect(await eventually { await translated("the code is 1111") })
            let firstID = Int64(try #require(first["id"]?.numberValue))
            try await o.expect(200, "PATCH", "/messages/\(firstID)", as: "boss", ["body": "no code here"])
            #expect(await eventually { await translated("no code here") })

            // Deleted while the provider is translating it: the translation is not recorded.
            stub.fail(.slow(.milliseconds(500)))
            let second = try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "the code is 2222"])
            #expect(await eventually { stub.requests.contains { $0.json?["q"] == "the code is 2222" } })
            try await o.expect(204, "DELETE", "/messages/\(Int64(try #require(second["id"]?.numberValue)))", as: "boss")
            stub.fail(nil)
            // The worker takes one round at a time: once this one is translated, the other is done.
            try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "later"])
            #expect(await eventually { await translated("later") })

            let events = try await journal.events(after: start, limit: 1000)
            let leaked = events.filter { $0.event.data.serialized().contains("1111") || $0.event.data.serialized().contains("2222") }
            #expect(leaked.count == 0, "events with the old text: \(leaked.map { "\($0.event.type) \($0.event.data.serialized())" })")
        }
    }

    @Test("the worker's pace: no wait on an idle store; under load it keeps to its share of the store")
    func pacing() {
        let ms: UInt64 = 1_000_000
        #expect(ChatTranslator.pause(own: 2 * ms, wall: 100 * ms, othersBusy: 0) == 0)
        // Others kept the writer busy all the time: the worker's 2 ms are 2 % of 2 ms + the wait.
        let full = ChatTranslator.pause(own: 2 * ms, wall: 100 * ms, othersBusy: 100 * ms)
        #expect(full == 98 * ms)
        #expect(Double(2 * ms) / Double(2 * ms + full) == ChatTranslator.storeShare)
        #expect(ChatTranslator.pause(own: 2 * ms, wall: 100 * ms, othersBusy: 50 * ms) == 49 * ms)
        // More than the wall (clocks read apart) counts as full load; a long round waits at most maxPause.
        #expect(ChatTranslator.pause(own: 2 * ms, wall: 100 * ms, othersBusy: 300 * ms) == 98 * ms)
        #expect(ChatTranslator.pause(own: 1_000 * ms, wall: 100 * ms, othersBusy: 100 * ms) == UInt64(ChatTranslator.maxPause))
        // A clock that went backwards (wrapped difference) or no time at all: no wait.
        #expect(ChatTranslator.pause(own: 2 * ms, wall: 0 &- 5, othersBusy: 100 * ms) == 0)
        #expect(ChatTranslator.pause(own: 2 * ms, wall: 0, othersBusy: 0) == 0)
    }

    @Test("the worker skips system lines: only the text around them goes to the provider; asking for one is 409")
    func skipsSystemLines() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana", "bob", "cleo"]) { o in
            let chat = try await spanishGroup(o, stub, ["boss", "ana", "bob"], translating: true)
            let start = try await o.journal().lastEventID()
            let ana = try await stream(o, "ana", since: start)
            defer { ana.close() }
            // Four system lines, then one message: the worker reads the journal in order.
            try await o.expect(201, "POST", "/chats/\(chat)/members", as: "boss", ["userId": .number(Double(o.userID("cleo")))])
            try await o.expect(204, "PUT", "/chats/\(chat)/admins/\(o.userID("bob"))", as: "boss")
            try await o.expect(200, "PATCH", "/chats/\(chat)", as: "boss", ["name": "Renamed team"])
            try await o.expect(204, "POST", "/chats/\(chat)/leave", as: "cleo")
            try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "After the changes"])
            let translated = try await nextTranslation(ana)
            #expect(translated["data"]?["message"]?["body"] == "After the changes")
            #expect(stub.requests.compactMap { $0.json?["q"]?.stringValue } == ["After the changes"], "nothing else was sent")
            let page = try await o.expect(200, "GET", "/chats/\(chat)/messages", as: "ana")
            let lines = page["items"]?.arrayValue?.filter { $0["kind"] == "system" } ?? []
            #expect(lines.count == 5 && lines.allSatisfy { $0["translation"] == nil && $0["body"] == .null })
            let lineID = try #require(lines.last?["id"]?.numberValue)
            try await o.expect(409, "POST", "/messages/\(Int64(lineID))/translation", as: "ana", code: "system_message")
        }
    }

    @Test("a page of history queues what it finds untranslated; the translation follows live")
    func backlog() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana"]) { o in
            try await use(stub, in: o)
            let chat = try await group(o, ["boss", "ana"])
            for n in 1...3 { try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": .string("Message number \(n)")]) }
            #expect(stub.requestCount == 0)
            // The worker has looked at the messages' events (nobody read the chat translated then).
            let worker = try #require(o.services.resolve((any ChatTranslations).self) as? ChatTranslator)
            let sent = try await o.journal().lastEventID()
            #expect(await eventually { worker.progress.load(ordering: .acquiring) >= sent })
            try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: "ana", ["enabled": true, "target": "it"])
            let first = try await o.expect(200, "GET", "/chats/\(chat)/messages", as: "ana")
            #expect(first["items"]?.arrayValue?.allSatisfy { $0["translation"] == nil } == true)
            #expect(await eventually {
                let page = try? await o.expect(200, "GET", "/chats/\(chat)/messages", as: "ana")
                // The group's creation line has no text to translate; the three messages each have theirs.
                let texts = page?["items"]?.arrayValue?.filter { $0["kind"] == "text" }
                return texts?.count == 3 && texts?.allSatisfy { $0["translation"]?["target"] == "it" } == true
            })
            #expect(stub.requestCount == 3)
        }
    }

    @Test("a reader's choice and the provider settings changed on one instance reach another through the journal")
    func acrossInstances() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana"]) { o in
            let chat = try await spanishGroup(o, stub, ["boss", "ana"], translating: false)
            let (second, secondDir) = try await o.secondInstance()
            defer { Task { await second.stop(); secondDir.cleanup() } }
            func onSecond(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> WireResponse {
                try await httpCall(port: second.port, method, "/api/v1" + path, token: o["ana"].token, json: body)
            }
            // The second instance loaded nobody's choice at boot; ana's, made on the first, reaches it.
            #expect(try await onSecond("GET", "/chats/\(chat)/translation").json()["enabled"] == false)
            try await o.expect(204, "PUT", "/chats/\(chat)/translation", as: "ana", ["enabled": true])
            #expect(await eventually { (try? await onSecond("GET", "/chats/\(chat)/translation").json()["enabled"]) == true })
            // A message sent on the first: the second's list carries its translation.
            try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "Good morning"])
            #expect(await eventually {
                let page = try? await onSecond("GET", "/chats/\(chat)/messages").json()
                return page?["items"]?.arrayValue?.last?["translation"]?["text"] == "[es] Good morning"
            })
            // Turned off on the second: the first stops translating for ana.
            #expect(try await onSecond("PUT", "/chats/\(chat)/translation", ["enabled": false]).status == 204)
            #expect(await eventually { (try? await o.expect(200, "GET", "/chats/\(chat)/translation", as: "ana"))?["enabled"] == false })
            // The provider switched off on the first: the second, which has used it, refuses once the change reaches it.
            #expect(try await onSecond("POST", "/translate", ["text": "Hello there", "target": "es"]).status == 200)
            try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["provider": "none"])
            #expect(await eventually {
                let r = try? await onSecond("POST", "/translate", ["text": "Hello again", "target": "es"])
                return r?.status == 503 && r?.errorCode == "translation_disabled"
            })
        }
    }

    @Test("the instance that takes the chat translator over goes on from the stored cursor: a message sent while none led is translated live",
          .enabled(if: TestBackend.current == .postgresql, "leadership passes between instances on PostgreSQL only"))
    func takeoverResumesFromTheStoredCursor() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        let o = try await Office.start(["ana"])
        defer { o.dir.cleanup() }
        let chat = try await spanishGroup(o, stub, ["boss", "ana"], translating: true)
        let (second, secondDir) = try await o.secondInstance()
        defer { secondDir.cleanup() }
        let lock = StoreLock("worker:translation.chats")
        #expect(o.store.leadership(lock).isHeld && !second.store.leadership(lock).isHeld, "the first server leads")
        // Translated live by the first server, which stores its cursor with the translation.
        try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "boss", ["body": "Before the change"])
        #expect(await eventually { stub.requestCount == 1 })

        await o.running.stop()
        let sent = try await httpCall(port: second.port, "POST", "/api/v1/chats/\(chat)/messages", token: o["boss"].token,
                                      json: ["body": "While nobody leads"])
        #expect(sent.status == 201)
        // Nobody lists the chat (a list would queue the message on any instance): only the new
        // leader's worker, reading the journal from the stored cursor, can translate it.
        #expect(await eventually { second.store.leadership(lock).isHeld })
        #expect(await eventually { stub.requests.contains { $0.json?["q"]?.stringValue == "While nobody leads" } },
                "\(stub.requests.map { $0.json?["q"]?.stringValue ?? "?" })")
        // The provider has answered; the list shows the translation once its write has committed.
        #expect(await eventually {
            let page = try? await httpCall(port: second.port, "GET", "/api/v1/chats/\(chat)/messages", token: o["ana"].token).json()
            return page?["items"]?.arrayValue?.last?["translation"]?["text"] == "[es] While nobody leads"
        })
        #expect(stub.requestCount == 2, "each message once")
        await second.stop()
    }
}
