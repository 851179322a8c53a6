import SGEMSupport
import SGEMTestSupport
import Testing

/// One way an admin gives someone a password, and whether that password is the person's own.
struct PasswordSource: Sendable, CustomStringConvertible {
    let description: String
    let mustChange: Bool
    /// Gives `emp` (who exists, with the password `password-of-emp`) a password; returns it.
    let apply: @Sendable (TestServer, LoggedIn) async throws -> String
}

/// The password line `--random-password` prints.
func printedPassword(_ output: String) throws -> String {
    let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("password: ") })
    return String(line.dropFirst("password: ".count))
}

let passwordSources: [PasswordSource] = [
    PasswordSource(description: "POST /admin/users without a password", mustChange: true) { server, boss in
        let r = try await server.call("POST", "/api/v1/admin/users", token: boss.token, json: ["username": "new", "email": "new@example.com"])
        return try #require(try r.json()["password"]?.stringValue)
    },
    PasswordSource(description: "POST /admin/users with a password", mustChange: false) { server, boss in
        let r = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                      json: ["username": "new", "email": "new@example.com", "password": "typed by the admin"])
        #expect(r.status == 201)
        return "typed by the admin"
    },
    PasswordSource(description: "POST /admin/users/{id}/password-reset", mustChange: true) { server, boss in
        let r = try await server.call("POST", "/api/v1/admin/users/2/password-reset", token: boss.token)
        return try #require(try r.json()["password"]?.stringValue)
    },
    PasswordSource(description: "admin create-user --random-password", mustChange: true) { server, _ in
        let out = await admin(server.dir, ["create-user", "--username", "new", "--email", "new@example.com", "--random-password"])
        #expect(out.code == 0)
        return try printedPassword(out.io.output)
    },
    PasswordSource(description: "admin create-user --password-stdin", mustChange: false) { server, _ in
        let out = await admin(server.dir, ["create-user", "--username", "new", "--email", "new@example.com", "--password-stdin"],
                              input: ["typed at the console"])
        #expect(out.code == 0)
        return "typed at the console"
    },
    PasswordSource(description: "admin reset-password --random-password", mustChange: true) { server, _ in
        let out = await admin(server.dir, ["reset-password", "emp", "--random-password"])
        #expect(out.code == 0)
        return try printedPassword(out.io.output)
    },
    PasswordSource(description: "admin reset-password --password-stdin", mustChange: true) { server, _ in
        let out = await admin(server.dir, ["reset-password", "emp", "--password-stdin"], input: ["reset at the console"])
        #expect(out.code == 0)
        return "reset at the console"
    },
]

@Suite struct FirstPasswordTests {
    @Test(arguments: passwordSources)
    func aGeneratedOrResetPasswordMustBeReplacedByTheirOwn(source: PasswordSource) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        _ = try await server.createUser("emp", as: boss)   // id 2
        let password = try await source.apply(server, boss)
        let login = source.description.contains("reset") ? "emp" : "new"

        let session = try await server.call("POST", "/api/v1/auth/login", json: ["login": .string(login), "password": .string(password)])
        #expect(session.status == 200)
        #expect(try session.json()["user"]?["mustChangePassword"] == .bool(source.mustChange), "the login answer says it")
        let token = try LoggedIn(session).token
        #expect(try await server.call("GET", "/api/v1/me", token: token).json()["mustChangePassword"] == .bool(source.mustChange))
        #expect(try await server.call("GET", "/api/v1/users", token: token).status == (source.mustChange ? 403 : 200))
        guard source.mustChange else { return }

        let changed = try await server.call("PUT", "/api/v1/me/password", token: token,
                                            json: ["currentPassword": .string(password), "newPassword": "my very own password"])
        #expect(changed.status == 204, "\(changed.text)")
        #expect(try await server.call("GET", "/api/v1/me", token: token).json()["mustChangePassword"] == false, "cleared")
        #expect(try await server.call("GET", "/api/v1/users", token: token).status == 200, "the same session goes on")
        let again = try await server.login(login, "my very own password")
        #expect(try await server.call("GET", "/api/v1/me", token: again.token).json()["mustChangePassword"] == false)
    }

    @Test func untilThenEveryOtherEndpointAnswersPasswordChangeRequired() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let other = try await server.createUser("ana", role: "admin", as: boss)
        let reset = try await server.call("POST", "/api/v1/admin/users/\(other.userID)/password-reset", token: boss.token)
        let temporary = try #require(try reset.json()["password"]?.stringValue)
        let ana = try await server.login("ana", temporary)

        let refused: [(String, String, JSONValue?)] = [
            ("GET", "/api/v1/users", nil), ("PATCH", "/api/v1/me", ["status": "here"]), ("GET", "/api/v1/company", nil),
            ("GET", "/api/v1/notices", nil), ("GET", "/api/v1/chats", nil), ("GET", "/api/v1/holidays", nil),
            ("GET", "/api/v1/admin/audit", nil), ("POST", "/api/v1/admin/users", ["username": "x.y", "email": "x@example.com"]),
            ("DELETE", "/api/v1/me/avatar", nil), ("GET", "/api/v1/users/1/avatar", nil),
        ]
        for (method, path, body) in refused {
            let r = try await server.call(method, path, token: ana.token, json: body)
            #expect(r.status == 403, "\(method) \(path): \(r.status)")
            #expect(r.errorCode == "password_change_required", "\(method) \(path): \(r.text)")
        }
        let upgrade = try await server.call("GET", "/api/v1/realtime", token: ana.token, headers: [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ])
        #expect(upgrade.status == 403, "no realtime stream either")
        #expect(upgrade.errorCode == "password_change_required")
        #expect(try await server.call("GET", "/api/v1/users", token: boss.token).status == 200, "nobody else is held back")

        // What the form needs answers: who I am, a wrong current password in words, logging out.
        #expect(try await server.call("GET", "/api/v1/me", token: ana.token).status == 200)
        let wrong = try await server.call("PUT", "/api/v1/me/password", token: ana.token,
                                          json: ["currentPassword": "not the temporary one", "newPassword": "my very own password"])
        #expect(wrong.status == 422)
        #expect(try wrong.json()["error"]?["details"]?["fields"]?["currentPassword"] != nil)
        #expect(try await server.call("POST", "/api/v1/auth/logout", token: ana.token).status == 204)
        #expect(try await server.call("GET", "/api/v1/me", token: ana.token).status == 401)
    }

    @Test func theOpenAPIDocumentSaysWhatAnswersBeforeTheirOwnPassword() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let doc = try await server.call("GET", "/api/v1/openapi.json").json()
        let me = doc["paths"]?["/api/v1/me"]?["get"]?["description"]?.stringValue ?? ""
        #expect(me.contains("password_change_required") && me.contains("PUT /me/password") && me.contains("POST /auth/logout"), "\(me)")
        let help = doc["paths"]?["/api/v1/auth/password-help"]?["get"]
        #expect(help?["responses"]?["200"] != nil)
    }

    @Test func theLoginScreenNamesAnAdminByDisplayNameOnly() async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        // An admin whose display name is their username: naming them would give away a login.
        #expect(await admin(dir, ["create-user", "--username", "root", "--email", "root@example.com", "--role", "admin",
                                  "--password-stdin"], input: [adminPassword]).code == 0)
        let server = try await TestServer.start(dir: dir, seedAdmin: false)
        defer { Task { await server.stop() } }
        let none = try await server.call("GET", "/api/v1/auth/password-help")
        #expect(none.status == 200)
        #expect(try none.json()["adminName"] == .null)

        let root = try await server.login("root", adminPassword)
        _ = try await server.createUser("lucia", name: "Lucía Gómez", role: "admin", as: root)
        _ = try await server.createUser("emp", name: "Eve Employee", as: root)
        #expect(try await server.call("GET", "/api/v1/auth/password-help").json() == ["adminName": "Lucía Gómez"])
        let off = try await server.call("PATCH", "/api/v1/admin/users/2", token: root.token, json: ["active": false])
        #expect(off.status == 200)
        #expect(try await server.call("GET", "/api/v1/auth/password-help").json()["adminName"] == .null, "only an active admin")
    }

    @Test func languageGivenAtCreationIsTheAccountsOwn() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let spanish = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                            json: ["username": "lucia", "email": "lucia@example.com", "language": "es", "password": "password-of-lucia"])
        #expect(spanish.status == 201)
        #expect(try spanish.json()["user"]?["language"] == "es")
        let lucia = try await server.login("lucia", "password-of-lucia")
        let herself = try await server.call("GET", "/api/v1/me", token: lucia.token).json()
        #expect(herself["language"] == "es")
        #expect(herself["languageChosen"] == true)

        let plain = try await server.createUser("eve", as: boss)
        let eve = try await server.call("GET", "/api/v1/me", token: plain.token).json()
        #expect(eve["language"] == "en", "the company's default")
        #expect(eve["languageChosen"] == false, "none of her own yet")
        let patched = try await server.call("PATCH", "/api/v1/me", token: plain.token, json: ["status": "here"]).json()
        #expect(patched["languageChosen"] == false, "another change chooses no language")
        let chosen = try await server.call("PATCH", "/api/v1/me", token: plain.token, json: ["language": "es"]).json()
        #expect(chosen["language"] == "es")
        #expect(chosen["languageChosen"] == true)

        for bad: JSONValue in ["French", "ES", 7] {
            let r = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                          json: ["username": "bad", "email": "bad@example.com", "language": bad])
            #expect(r.status == 422, "\(bad)")
            #expect(try r.json()["error"]?["details"]?["fields"]?["language"] != nil, "\(bad)")
        }
    }

    @Test func theCommandLineTakesALanguageToo() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        #expect(await admin(server.dir, ["create-user", "--username", "lucia", "--email", "lucia@example.com", "--language", "es",
                                         "--password-stdin"], input: ["password-of-lucia"]).code == 0)
        #expect(await admin(server.dir, ["create-user", "--username", "eve", "--email", "eve@example.com",
                                         "--password-stdin"], input: ["password-of-eve"]).code == 0)
        let lucia = try await server.call("GET", "/api/v1/me", token: try await server.login("lucia", "password-of-lucia").token).json()
        #expect(lucia["language"] == "es")
        #expect(lucia["languageChosen"] == true)
        let eve = try await server.call("GET", "/api/v1/me", token: try await server.login("eve", "password-of-eve").token).json()
        #expect(eve["language"] == "en")
        #expect(eve["languageChosen"] == false)

        let bad = await admin(server.dir, ["create-user", "--username", "bad", "--email", "bad@example.com", "--language", "Spanish",
                                           "--random-password"])
        #expect(bad.code == 2)
        let line = bad.io.errors.joined(separator: "\n")
        #expect(bad.io.errors.count == 1 && !line.contains("\n"), "one clear line: \(line)")
        #expect(line.contains("--language must be an ISO 639-1 code"), "\(line)")
    }
}
