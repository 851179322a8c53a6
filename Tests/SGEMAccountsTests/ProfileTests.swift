import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct ProfileTests {
    @Test func editsTheProfileAndLeavesOutFieldsAlone() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let r = try await server.call("PATCH", "/api/v1/me", token: s.token, json: [
            "displayName": "  Bea Boss ", "position": "CEO", "phone": "+34 600 000 000", "twitter": "@bea_boss",
            "linkedin": "https://www.linkedin.com/in/bea", "bio": "Runs things.\nWell.", "status": "travelling",
            "country": "Spain", "language": "es", "notificationsEnabled": false,
        ])
        #expect(r.status == 200, "\(r.text)")
        let v = try r.json()
        #expect(v["displayName"] == "Bea Boss")
        #expect(v["twitter"] == "bea_boss")
        #expect(v["language"] == "es")
        #expect(v["notificationsEnabled"] == false)
        #expect(v["bio"] == "Runs things.\nWell.")
        let cleared = try await server.call("PATCH", "/api/v1/me", token: s.token, json: ["position": .null, "phone": ""])
        let c = try cleared.json()
        #expect(c["position"] == .null)
        #expect(c["phone"] == .null)
        #expect(c["country"] == "Spain", "fields left out keep their value")
        #expect(c["email"] == "boss@example.com")
        let me = try await server.call("GET", "/api/v1/me", token: s.token)
        #expect(try me.json()["displayName"] == "Bea Boss")
    }

    static let invalid: [(String, JSONValue)] = [
        ("displayName", JSONValue.string("")), ("displayName", .null), ("phone", "call me"), ("twitter", "has space"),
        ("linkedin", "javascript:alert(1)"), ("language", "spanish"), ("language", "ES"), ("status", .number(3)),
        ("position", .string(String(repeating: "x", count: 101))), ("notificationsEnabled", "yes"),
    ]

    @Test(arguments: invalid)
    func rejectsInvalidProfileFields(field: String, value: JSONValue) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let r = try await server.call("PATCH", "/api/v1/me", token: s.token, json: .object([(field, value), ("status", JSONValue.string("changed"))]))
        #expect(r.status == 422)
        #expect(r.errorCode == "validation_failed")
        #expect(try r.json()["error"]?["details"]?["fields"]?[field]?.stringValue != nil, "\(r.text)")
        #expect(try await server.call("GET", "/api/v1/me", token: s.token).json()["status"] == .null, "nothing was applied")
    }

    @Test func changingThePasswordEndsTheOtherSessions() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let current = try await server.login()
        let other = try await server.login()
        let wrong = try await server.call("PUT", "/api/v1/me/password", token: current.token,
                                          json: ["currentPassword": "not my password", "newPassword": "a brand new password"])
        #expect(wrong.status == 422)
        #expect(try wrong.json()["error"]?["details"]?["fields"]?["currentPassword"] != nil)
        let short = try await server.call("PUT", "/api/v1/me/password", token: current.token,
                                          json: ["currentPassword": .string(adminPassword), "newPassword": "short"])
        #expect(short.status == 422)
        #expect(try short.json()["error"]?["details"]?["fields"]?["newPassword"] != nil)
        let ok = try await server.call("PUT", "/api/v1/me/password", token: current.token,
                                       json: ["currentPassword": .string(adminPassword), "newPassword": "a brand new password"])
        #expect(ok.status == 204)
        #expect(try await server.call("GET", "/api/v1/me", token: current.token).status == 200, "this session stays")
        let revoked = try await server.call("GET", "/api/v1/me", token: other.token)
        #expect(revoked.status == 401)
        #expect(revoked.errorCode == "session_expired")
        let old = try await server.call("POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)])
        #expect(old.status == 401)
        _ = try await server.login("boss", "a brand new password")
    }
}

@Suite struct AvatarTests {
    static let images: [(String, [UInt8], String)] = [("png", png, "image/png"), ("jpeg", jpeg, "image/jpeg"), ("webp", webp, "image/webp")]
    static let others: [(String, [UInt8])] = [("gif", gif), ("text", Array("hello, I am not a picture".utf8)), ("empty", [])]

    @Test(arguments: images)
    func acceptsImagesByContent(name: String, bytes: [UInt8], type: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        // The declared type is ignored: the bytes decide.
        let up = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: bytes, headers: [("Content-Type", "text/plain")])
        #expect(up.status == 200, "\(name): \(up.text)")
        let url = try #require(try up.json()["avatarUrl"]?.stringValue)
        #expect(url.hasPrefix("/api/v1/users/\(s.userID)/avatar?v="))
        let get = try await server.call("GET", url, token: s.token)
        #expect(get.status == 200)
        #expect(get.body == bytes)
        #expect(get.header("Content-Type") == type)
        #expect(get.header("Cache-Control") == "private, max-age=31536000, immutable")
        #expect(try await server.call("GET", "/api/v1/me", token: s.token).json()["avatarUrl"]?.stringValue == url)
    }

    @Test(arguments: others)
    func rejectsOtherContent(name: String, bytes: [UInt8]) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let r = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: bytes, headers: [("Content-Type", "image/png")])
        #expect(r.status == 415, "\(name)")
        #expect(r.errorCode == "unsupported_media_type")
    }

    @Test func limitsTheSizeTo2MiB() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let tooBig = png + [UInt8](repeating: 7, count: 2 * 1024 * 1024 + 1 - png.count)
        let r = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: tooBig)
        #expect(r.status == 413)
        #expect(r.errorCode == "payload_too_large")
        let justFits = png + [UInt8](repeating: 7, count: 2 * 1024 * 1024 - png.count)
        #expect(try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: justFits).status == 200)
    }

    @Test func eachUploadChangesTheURLAndETagsWork() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let first = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: png).json()["avatarUrl"]?.stringValue
        let second = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: jpeg).json()["avatarUrl"]?.stringValue
        #expect(first != nil && second != nil && first != second)
        let path = "/api/v1/users/\(s.userID)/avatar"
        let current = try await server.call("GET", path, token: s.token)
        #expect(current.body == jpeg)
        #expect(current.header("Cache-Control") == "private, no-cache", "without ?v= it must be revalidated")
        let etag = try #require(current.header("ETag"))
        let again = try await server.call("GET", path, token: s.token, headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let stale = try await server.call("GET", path, token: s.token, headers: [("If-None-Match", "\"other\"")])
        #expect(stale.status == 200)
        #expect(try await server.call("GET", path).status == 401, "pictures are for users only")

        #expect(try await server.call("DELETE", "/api/v1/me/avatar", token: s.token).status == 204)
        #expect(try await server.call("GET", path, token: s.token).status == 404)
        #expect(try await server.call("GET", "/api/v1/me", token: s.token).json()["avatarUrl"] == .null)
        let third = try await server.call("PUT", "/api/v1/me/avatar", token: s.token, raw: png).json()["avatarUrl"]?.stringValue
        #expect(third != first && third != second, "a new upload never reuses an old URL")
    }
}
