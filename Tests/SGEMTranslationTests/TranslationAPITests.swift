import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMTranslation
import Testing

/// Points the company's translation at `stub` (as the admin would on the Settings screen).
func use(_ stub: TranslationStub, in o: Office, key: String? = nil, timeoutMs: Int = 5_000) async throws {
    var body: [(String, JSONValue)] = [("provider", .string(stub.provider.rawValue)), ("url", .string(stub.url)),
                                       ("timeoutMs", .number(Double(timeoutMs)))]
    body.append(("apiKey", key.map(JSONValue.string) ?? (stub.provider == .libretranslate ? .null : "test-key")))
    try await o.expect(200, "PUT", "/admin/translation", as: "boss", .object(body))
}

/// A group chat of `members` created by the first; its id.
func group(_ o: Office, _ members: [String]) async throws -> Int64 {
    let chat = try await o.expect(201, "POST", "/chats", as: members[0], [
        "name": "Team", "memberIds": .array(members.dropFirst().map { .number(Double(o.userID($0))) }),
    ])
    return try #require(chat["id"]?.numberValue).int64
}

extension Double { var int64: Int64 { Int64(self) } }

@Suite("Translation API")
struct TranslationAPITests {
    @Test("the admin's settings: defaults, validation, the key write-only everywhere, employees refused")
    func settings() async throws {
        try await Office.with { o in
            let start = try await o.expect(200, "GET", "/admin/translation", as: "boss")
            #expect(start["provider"] == "libretranslate" && start["url"] == "" && start["apiKeySet"] == false)
            #expect(start["ready"] == false && start["problem"]?.stringValue?.contains("LibreTranslate") == true)
            try await o.expect(403, "GET", "/admin/translation", as: "ana", code: "forbidden")
            try await o.expect(403, "PUT", "/admin/translation", as: "ana", ["provider": "none"], code: "forbidden")
            let secret = "sk-very-secret-0123456789"
            let saved = try await o.call("PUT", "/admin/translation", as: "boss",
                                         ["provider": "deepl", "url": "", "apiKey": .string(secret), "timeoutMs": 2500])
            #expect(saved.status == 200 && !saved.text.contains(secret))
            let now = try saved.json()
            #expect(now["provider"] == "deepl" && now["apiKeySet"] == true && now["timeoutMs"] == 2500 && now["ready"] == true)
            let again = try await o.call("GET", "/admin/translation", as: "boss")
            let againJSON = try again.json()
            #expect(again.status == 200 && !again.text.contains(secret) && againJSON["apiKeySet"] == true)
            // The command line shows whether a key is set, never the key.
            let shown = await sgem(o.dir, ["admin", "translation", "show"])
            #expect(shown.code == 0 && shown.io.output.contains("api-key:    set") && !shown.io.output.contains(secret))
            // Refusals, each named; nothing changes.
            for (body, field) in [(["provider": "google"] as JSONValue, "provider"), (["url": "ftp://example.com"], "url"),
                                  (["url": "https://user:pw@example.com"], "url"), (["timeoutMs": 10], "timeoutMs"),
                                  (["timeoutMs": "fast"], "timeoutMs"), (["apiKey": ""], "apiKey"), (["provider": .null], "provider")] {
                let r = try await o.call("PUT", "/admin/translation", as: "boss", body)
                #expect(r.status == 422 && r.errorCode == "validation_failed", "\(body)")
                #expect((try r.json())["error"]?["details"]?["fields"]?[field] != nil, "\(body)")
            }
            #expect(try await o.expect(200, "GET", "/admin/translation", as: "boss")["provider"] == "deepl")
            // null removes the key; left out keeps it.
            #expect(try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["timeoutMs": 3000])["apiKeySet"] == true)
            #expect(try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["apiKey": .null])["apiKeySet"] == false)
            // Each change is in the audit log, with who made it and what changed — never the key.
            let audit = try await o.call("GET", "/admin/audit?limit=50", as: "boss")
            #expect(!audit.text.contains(secret))
            let entries = (try audit.json())["items"]?.arrayValue?.filter { $0["event"] == "translation.settings" } ?? []
            #expect(entries.count == 3, "\(entries)")
            let details = entries.compactMap { $0["detail"]?.stringValue }
            #expect(details.contains { $0.contains("provider deepl") && $0.contains("API key set") && $0.contains("timeout 2500 ms") })
            #expect(details.contains("API key removed"))
        }
    }

    @Test("switched off or not set up: translate is 503 translation_disabled in words, the language list empty")
    func disabled() async throws {
        try await Office.with { o in
            let r = try await o.call("POST", "/translate", as: "ana", ["text": "Hola", "target": "en"])
            #expect(r.status == 503 && r.errorCode == "translation_disabled")
            #expect((try r.json())["error"]?["message"]?.stringValue?.contains("Settings") == true)
            let languages = try await o.expect(200, "GET", "/translation/languages", as: "ana")
            #expect(languages["provider"] == "none" && languages["languages"] == [])
            try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["provider": "none"])
            try await o.expect(503, "POST", "/translate", as: "ana", ["text": "Hola", "target": "en"], code: "translation_disabled")
            let test = try await o.expect(200, "POST", "/admin/translation/test", as: "boss")
            #expect(test["ok"] == false && test["message"]?.stringValue?.contains("switched off") == true)
        }
    }

    @Test("a translation is cached: the second call never reaches the provider; the provider gets the key, never the user's token")
    func cache() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        stub.detectedSource = "es"
        try await Office.with { o in
            try await use(stub, in: o, key: "lt-key")
            let first = try await o.expect(200, "POST", "/translate", as: "ana", ["text": "Buenos días", "target": "en"])
            #expect(first["text"] == "[en] Buenos días" && first["source"] == "es" && first["target"] == "en")
            #expect(first["provider"] == "libretranslate" && first["cached"] == false)
            #expect(stub.requestCount == 1)
            let second = try await o.expect(200, "POST", "/translate", as: "bob", ["text": "Buenos días", "target": "en"])
            #expect(second["text"] == "[en] Buenos días" && second["cached"] == true)
            #expect(stub.requestCount == 1)
            let sent = try #require(stub.lastRequest)
            #expect(sent.json?["api_key"] == "lt-key" && sent.json?["q"] == "Buenos días" && sent.json?["source"] == "auto")
            let everything = sent.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n") + sent.bodyText
            #expect(!everything.contains(o["ana"].token) && !everything.contains(o["bob"].token))
            #expect(sent.header("Cookie") == nil && sent.header("Authorization") == nil)
            // Known to be Spanish: into Spanish costs no call at all; a given source equal to the target neither.
            let same = try await o.expect(200, "POST", "/translate", as: "ana", ["text": "Buenos días", "target": "es"])
            #expect(same["text"] == "Buenos días" && same["source"] == "es")
            try await o.expect(200, "POST", "/translate", as: "ana", ["text": "Good night", "source": "en", "target": "en"])
            // Nothing to translate (a number, a link) costs no call either.
            try await o.expect(200, "POST", "/translate", as: "ana", ["text": "42 https://example.com", "target": "fr"])
            #expect(stub.requestCount == 1)
        }
    }

    @Test("input is checked: text, target and source")
    func validation() async throws {
        try await Office.with { o in
            for body: JSONValue in [["target": "en"], ["text": "", "target": "en"], ["text": "hi"], ["text": "hi", "target": "english"],
                                    ["text": "hi", "target": "en", "source": "EN"], ["text": 5, "target": "en"],
                                    ["text": .string(String(repeating: "a", count: 20_001)), "target": "en"]] {
                let r = try await o.call("POST", "/translate", as: "ana", body)
                #expect(r.status == 422 && r.errorCode == "validation_failed", "\(r.text.prefix(200))")
            }
            try await o.expect(401, "POST", "/translate", as: "", ["text": "hi", "target": "en"])
        }
    }

    @Test("a message: members only (404 for anyone else), into the reader's language by default, mentions, links and code kept")
    func message() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana", "bob", "carl"]) { o in
            try await use(stub, in: o)
            try await o.expect(200, "PATCH", "/me", as: "bob", ["language": "es"])
            let chat = try await group(o, ["ana", "bob"])
            let body = "Hi @bob, see https://example.com/a?b=1 and run `make test` please"
            let message = try await o.expect(201, "POST", "/chats/\(chat)/messages", as: "ana", ["body": .string(body)])
            let id = try #require(message["id"]?.numberValue).int64
            try await o.expect(404, "POST", "/messages/\(id)/translation", as: "carl", code: "not_found")
            try await o.expect(404, "POST", "/messages/999999/translation", as: "bob", code: "not_found")
            let t = try await o.expect(200, "POST", "/messages/\(id)/translation", as: "bob")
            #expect(t["messageId"]?.numberValue == Double(id) && t["target"] == "es" && t["source"] == "en")
            #expect(t["text"] == .string("[es] " + body), "the protected pieces are back in place")
            let masked = try #require(stub.lastRequest?.json?["q"]?.stringValue)
            #expect(!masked.contains("@bob") && !masked.contains("example.com") && !masked.contains("make test"))
            let french = try await o.expect(200, "POST", "/messages/\(id)/translation", as: "bob", ["target": "fr"])
            #expect(french["target"] == "fr" && french["text"] == .string("[fr] " + body))
            try await o.expect(204, "DELETE", "/messages/\(id)", as: "ana")
            try await o.expect(409, "POST", "/messages/\(id)/translation", as: "bob", code: "message_deleted")
        }
    }

    @Test("a notice: title and text, for whoever may see it")
    func notice() async throws {
        let stub = try TranslationStub(.deepl)
        defer { stub.stop() }
        try await Office.with { o in
            try await use(stub, in: o)
            let posted = try await o.expect(201, "POST", "/admin/notices", as: "boss", ["title": "Office closed", "body": "On Friday."])
            let id = try #require(posted["id"]?.numberValue).int64
            let t = try await o.expect(200, "POST", "/notices/\(id)/translation", as: "ana", ["target": "es"])
            #expect(t["noticeId"]?.numberValue == Double(id) && t["title"] == "[es] Office closed" && t["text"] == "[es] On Friday.")
            #expect(t["target"] == "es" && t["provider"] == "deepl" && t["cached"] == false)
            #expect(stub.requests.allSatisfy { $0.header("Authorization") == "DeepL-Auth-Key test-key" })
            try await o.expect(404, "POST", "/notices/999999/translation", as: "ana", code: "not_found")
        }
    }

    @Test("provider failures reach the client as the contract's codes",
          arguments: [
              (TranslationStub.Provider.libretranslate, TranslationStub.Failure.status(403), 502, "invalid_key"),
              (.libretranslate, .status(429), 429, "rate_limited"),
              (.libretranslate, .status(500), 502, "provider_unavailable"),
              (.deepl, .status(456), 429, "quota_exceeded"),
              (.deepl, .status(413), 413, "text_too_long"),
              (.yandex, .status(402), 502, "blocked_key"),
              (.yandex, .status(501), 422, "unsupported_direction"),
              (.yandex, .status(422), 422, "unprocessable"),
              (.libretranslate, .hang, 504, "provider_timeout"),
              (.deepl, .notJSON, 502, "provider_unavailable"),
          ])
    func failures(provider: TranslationStub.Provider, failure: TranslationStub.Failure, status: Int, code: String) async throws {
        let stub = try TranslationStub(provider)
        defer { stub.stop() }
        try await Office.with(["ana"]) { o in
            try await use(stub, in: o, timeoutMs: 500)
            stub.fail(failure)
            let r = try await o.call("POST", "/translate", as: "ana", ["text": "Hello there", "target": "es"])
            #expect(r.status == status && r.errorCode == code, "\(r.status) \(r.text)")
            let message = (try r.json())["error"]?["message"]?.stringValue ?? ""
            #expect(!message.isEmpty && !message.contains("test-key"))
            // The admin's check says the same in words.
            let test = try await o.expect(200, "POST", "/admin/translation/test", as: "boss")
            #expect(test["ok"] == false && test["message"]?.stringValue?.isEmpty == false)
            // Failures are not cached: once the provider is back, the text translates.
            stub.fail(nil)
            try await o.expect(200, "POST", "/translate", as: "ana", ["text": "Hello there", "target": "es"])
        }
    }

    @Test("a provider nobody listens on is provider_unavailable; a working one passes the admin's test")
    func unreachable() async throws {
        let refusing = try RefusingPort()
        let stub = try TranslationStub(.yandex)
        defer { stub.stop() }
        try await Office.with(["ana"]) { o in
            try await o.expect(200, "PUT", "/admin/translation", as: "boss", ["provider": "libretranslate", "url": .string(refusing.url)])
            try await o.expect(502, "POST", "/translate", as: "ana", ["text": "Hello", "target": "es"], code: "provider_unavailable")
            try await use(stub, in: o)
            let test = try await o.expect(200, "POST", "/admin/translation/test", as: "boss")
            #expect(test["ok"] == true && test["message"]?.stringValue?.contains("[es] Good morning") == true)
            let languages = try await o.expect(200, "GET", "/translation/languages", as: "ana")
            #expect(languages["provider"] == "yandex" && (languages["languages"]?.arrayValue?.isEmpty == false))
        }
    }

    @Test("a provider on an internal address: the admin's test and the command line's say so in words, nothing reaches it; --outbound-allow lets it through")
    func internalRefused() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana"], overrides: ["outbound-allow": ""]) { o in
            try await use(stub, in: o)
            let test = try await o.expect(200, "POST", "/admin/translation/test", as: "boss")
            #expect(test["ok"] == false, "\(test)")
            #expect(test["message"] == .string("LibreTranslate at 127.0.0.1:\(stub.port) is inside the company's network or on this server, so "
                + "sgem-server will not call it. An administrator can allow it with --outbound-allow (for example --outbound-allow 127.0.0.1:5000)."))
            try await o.expect(502, "POST", "/translate", as: "ana", ["text": "Hello", "target": "es"], code: "provider_unavailable")
            let refused = await sgem(o.dir, ["admin", "translation", "test"])
            #expect(refused.code != 0 && refused.io.errors.joined().contains("will not call it"), "\(refused.io.errors)")
            #expect(stub.requestCount == 0)
            let allowed = await sgem(o.dir, ["admin", "translation", "test", "--outbound-allow", "127.0.0.1:\(stub.port)"])
            #expect(allowed.code == 0 && stub.requestCount >= 1, "\(allowed.io.errors)")
        }
    }

    @Test("one person is held to the per-minute bound with 429 rate_limited and Retry-After")
    func limited() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana", "bob"], overrides: ["translation-per-minute": "2"]) { o in
            try await use(stub, in: o)
            for text in ["one", "two"] { try await o.expect(200, "POST", "/translate", as: "ana", ["text": .string(text), "target": "es"]) }
            let r = try await o.call("POST", "/translate", as: "ana", ["text": "three", "target": "es"])
            #expect(r.status == 429 && r.errorCode == "rate_limited" && Int(r.header("Retry-After") ?? "") ?? 0 >= 1)
            try await o.expect(200, "POST", "/translate", as: "bob", ["text": "three", "target": "es"])
        }
    }

    @Test("the per-minute bound holds across two instances on one database")
    func limitedAcrossInstances() async throws {
        let stub = try TranslationStub(.libretranslate)
        defer { stub.stop() }
        try await Office.with(["ana"], overrides: ["translation-per-minute": "2"]) { o in
            try await use(stub, in: o)
            let (second, secondDir) = try await o.secondInstance(overrides: ["translation-per-minute": "2"])
            defer { Task { await second.stop(); secondDir.cleanup() } }
            func translate(_ text: String, on port: Int) async throws -> WireResponse {
                try await httpCall(port: port, "POST", "/api/v1/translate", token: o["ana"].token, json: ["text": .string(text), "target": "es"])
            }
            #expect(try await translate("one", on: o.port).status == 200)
            #expect(try await translate("two", on: second.port).status == 200)
            // Each instance has seen one request; together they have seen the bound.
            for port in [o.port, second.port] {
                let r = try await translate("three", on: port)
                #expect(r.status == 429 && r.errorCode == "rate_limited", "\(r.status) \(r.text)")
            }
        }
    }

    @Test("the command line sets the provider; the key from standard input, never echoed")
    func commandLine() async throws {
        try await Office.with([]) { o in
            #expect(await sgem(o.dir, ["admin", "translation", "set", "provider", "yandex"]).code == 0)
            let key = await sgem(o.dir, ["admin", "translation", "set", "api-key", "-"], input: ["trnsl.1.1.secret"])
            #expect(key.code == 0 && key.io.output.contains("api-key saved") && !key.io.output.contains("trnsl"))
            let bad = await sgem(o.dir, ["admin", "translation", "set", "provider", "babel"])
            #expect(bad.code != 0 && bad.io.errors.joined().contains("libretranslate, deepl, yandex or none"))
            let unknown = await sgem(o.dir, ["admin", "translation", "set", "colour", "blue"])
            #expect(unknown.code != 0 && unknown.io.errors.joined().contains("unknown setting"))
            let view = try await o.expect(200, "GET", "/admin/translation", as: "boss")
            #expect(view["provider"] == "yandex" && view["apiKeySet"] == true)
            // Both changes are in the audit log, marked as from the command line; the key never.
            let audit = try await o.call("GET", "/admin/audit?event=translation.settings", as: "boss")
            #expect(!audit.text.contains("trnsl"))
            let details = (try audit.json())["items"]?.arrayValue?.compactMap { $0["detail"]?.stringValue } ?? []
            #expect(details == ["API key set (command line)", "provider yandex (command line)"], "\(details)")
        }
    }
}
