import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct RegistrationTests {
    func setRegistration(_ server: TestServer, _ settings: JSONValue) async throws {
        let boss = try await server.login()
        let r = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: settings)
        #expect(r.status == 200, "\(r.text)")
    }

    func register(_ server: TestServer, _ username: String, _ email: String, password: String = "long enough password") async throws -> WireResponse {
        try await server.call("POST", "/api/v1/auth/register", json: ["username": .string(username), "email": .string(email),
                                                                       "password": .string(password), "displayName": "New Person"])
    }

    @Test func isClosedByDefault() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let r = try await register(server, "newbie", "newbie@example.com")
        #expect(r.status == 403)
        #expect(r.errorCode == "registration_closed")
        #expect(try await server.call("POST", "/api/v1/auth/login", json: ["login": "newbie", "password": "long enough password"]).status == 401)
    }

    @Test func openRegistrationCreatesAnEmployeeAndASession() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        try await setRegistration(server, ["registration": "open", "defaultLanguage": "es"])
        let r = try await register(server, "NewBie", "newbie@example.com")
        #expect(r.status == 201, "\(r.text)")
        let s = try LoggedIn(r)
        let me = try await server.call("GET", "/api/v1/me", token: s.token).json()
        #expect(me["username"] == "newbie")
        #expect(me["role"] == "employee")
        #expect(me["language"] == "es", "new users get the company's default language")
        #expect(me["displayName"] == "New Person")

        let sameName = try await register(server, "NEWBIE", "other@example.com")
        #expect(sameName.status == 409)
        #expect(sameName.errorCode == "username_taken")
        let sameEmail = try await register(server, "other", "NewBie@Example.com")
        #expect(sameEmail.status == 409)
        #expect(sameEmail.errorCode == "email_taken")
        let invalid = try await register(server, "a", "nope", password: "short")
        #expect(invalid.status == 422)
        let fields = try invalid.json()["error"]?["details"]?["fields"]
        for f in ["username", "email", "password"] { #expect(fields?[f] != nil, "no problem for \(f)") }
    }

    @Test func domainRegistrationAcceptsOnlyThatDomain() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        try await setRegistration(server, ["registration": "domain", "registrationDomain": "Acme.test"])
        let outsider = try await register(server, "outsider", "outsider@elsewhere.test")
        #expect(outsider.status == 403)
        #expect(outsider.errorCode == "registration_closed")
        let lookalike = try await register(server, "sneaky", "sneaky@evilacme.test")
        #expect(lookalike.status == 403)
        let insider = try await register(server, "insider", "Insider@ACME.test")
        #expect(insider.status == 201)
    }
}

@Suite struct SettingsTests {
    @Test func readsDefaultsAndSavesChanges() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let defaults = try await server.call("GET", "/api/v1/admin/settings", token: boss.token)
        #expect(defaults.text == #"""
            {"defaultAllowanceDays":23,"workingDays":[1,2,3,4,5],"registration":"closed","registrationDomain":null,"defaultLanguage":"en",\#
            "timeZone":"UTC","maxSimultaneousAbsences":null,"carryOverMaxDays":0,"carryOverExpires":null,"pushContact":null,"updatedAt":null}
            """#)
        let put = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token,
                                        json: ["defaultAllowanceDays": 25, "workingDays": [6, 1, 2], "registration": "open"])
        #expect(put.status == 200)
        let got = try await server.call("GET", "/api/v1/admin/settings", token: boss.token).json()
        #expect(got["defaultAllowanceDays"] == 25)
        #expect(got["workingDays"] == [1, 2, 6])
        #expect(got["registration"] == "open")
        #expect(got["defaultLanguage"] == "en", "fields left out keep their value")
    }

    static let invalid: [(String, JSONValue)] = [
        ("defaultAllowanceDays", JSONValue.number(367)), ("defaultAllowanceDays", .number(-1)), ("defaultAllowanceDays", .number(2.5)),
        ("workingDays", []), ("workingDays", [1, 1]), ("workingDays", [0]), ("workingDays", [8]), ("workingDays", "1,2"),
        ("registration", "sometimes"), ("defaultLanguage", "eng"), ("defaultLanguage", "EN"), ("registrationDomain", "not a domain"),
    ]

    @Test(arguments: invalid)
    func rejectsInvalidValues(field: String, value: JSONValue) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let r = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: .object([(field, value), ("registration", JSONValue.string("open"))]))
        #expect(r.status == 422)
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil, "\(r.text)")
        #expect(try await server.call("GET", "/api/v1/admin/settings", token: boss.token).json()["registration"] == "closed")
    }

    @Test func domainRegistrationNeedsADomain() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let r = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: ["registration": "domain"])
        #expect(r.status == 422)
        #expect(try r.json()["error"]?["details"]?["fields"]?["registrationDomain"] != nil)
    }
}

@Suite struct PersistenceTests {
    @Test func usersSessionsAndPicturesSurviveARestart() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let first = try await TestServer.start(dir: dir)
        let boss = try await first.login()
        _ = try await first.createUser("emp", as: boss)
        #expect(try await first.call("PUT", "/api/v1/me/avatar", token: boss.token, raw: png).status == 200)
        await first.stop(removing: false)

        let second = try await TestServer.start(dir: dir, seedAdmin: false)
        defer { Task { await second.stop(removing: false) } }
        #expect(try await second.call("GET", "/api/v1/me", token: boss.token).status == 200, "sessions are stored, not in memory")
        let emp = try await second.login("emp", "password-of-emp")
        let users = try await second.call("GET", "/api/v1/users", token: emp.token).json()
        #expect(users["total"] == 2)
        #expect(try await second.call("GET", "/api/v1/users/\(boss.userID)/avatar", token: emp.token).body == png)
    }

    @Test func everyAccountsRouteIsInTheOpenAPIDocument() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let doc = try await server.call("GET", "/api/v1/openapi.json").json()
        let expected: [(String, String)] = [
            ("/api/v1/auth/login", "post"), ("/api/v1/auth/logout", "post"), ("/api/v1/auth/register", "post"),
            ("/api/v1/me", "get"), ("/api/v1/me", "patch"), ("/api/v1/me/password", "put"), ("/api/v1/me/avatar", "put"),
            ("/api/v1/me/avatar", "delete"), ("/api/v1/users", "get"), ("/api/v1/users/{id}", "get"), ("/api/v1/users/{id}/avatar", "get"),
            ("/api/v1/admin/users", "post"), ("/api/v1/admin/users/{id}", "patch"), ("/api/v1/admin/users/{id}/password-reset", "post"),
            ("/api/v1/admin/audit", "get"), ("/api/v1/admin/settings", "get"), ("/api/v1/admin/settings", "put"),
        ]
        for (path, method) in expected {
            let op = doc["paths"]?[path]?[method]
            #expect(op != nil, "\(method) \(path) is undocumented")
            let isPublic = path.hasPrefix("/api/v1/auth/log") && path != "/api/v1/auth/logout" || path == "/api/v1/auth/register"
            #expect((op?["security"] != nil) == !isPublic, "\(method) \(path) security")
        }
    }
}
