@testable import SGEMCompany
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct CompanyTests {
    @Test func profileStartsEmptyAndAdminsChangeAnySubset() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)

        let empty = try await server.call("GET", "/api/v1/company", token: emp.token)
        #expect(empty.status == 200)
        for key in ["name", "phone", "email", "website", "address", "updatedAt"] { #expect(try empty.json()[key] == .null, "\(key)") }

        let put = try await server.call("PUT", "/api/v1/admin/company", token: boss.token, json: [
            "name": " Acme Ibérica S.L. ", "phone": "+34 (91) 555-01.23", "email": "office@acme.example",
            "website": "https://acme.example/about", "address": "Calle Mayor 1\r\n28013 Madrid\nSpain",
        ])
        #expect(put.status == 200, "\(put.text)")
        let v = try put.json()
        #expect(v["name"] == "Acme Ibérica S.L.")
        #expect(v["address"] == "Calle Mayor 1\n28013 Madrid\nSpain", "line breaks are kept")
        let updatedAt = try #require(v["updatedAt"]?.stringValue)
        #expect(Timestamp(rfc3339: updatedAt) != nil)

        // A subset keeps the rest; "" and null clear.
        let partial = try await server.call("PUT", "/api/v1/admin/company", token: boss.token, json: ["phone": "", "website": .null])
        #expect(partial.status == 200)
        let seen = try await server.call("GET", "/api/v1/company", token: emp.token).json()
        #expect(seen["name"] == "Acme Ibérica S.L.")
        #expect(seen["email"] == "office@acme.example")
        #expect(seen["phone"] == .null)
        #expect(seen["website"] == .null)

        let denied = try await server.call("PUT", "/api/v1/admin/company", token: emp.token, json: ["name": "Mine"])
        #expect(denied.status == 403)
        #expect(denied.errorCode == "forbidden")
        #expect(try await server.call("GET", "/api/v1/company").status == 401)
        #expect(try await server.call("GET", "/api/v1/company", token: emp.token).json()["name"] == "Acme Ibérica S.L.")
    }

    static let badProfiles: [(String, JSONValue)] = [
        ("name", .string(String(repeating: "n", count: 201))), ("name", "two\nlines"), ("name", 5),
        ("phone", "call me"), ("phone", .string(String(repeating: "1", count: 51))), ("phone", "()"),
        ("email", "office"), ("email", "a@b"), ("email", "a b@example.com"),
        ("website", "acme.example"), ("website", "javascript:alert(1)"), ("website", "https://"),
        ("website", .string("https://acme.example/" + String(repeating: "a", count: 480))), ("website", "https://acme.example/<x>"),
        ("address", .string(String(repeating: "a", count: 501))), ("address", "tab\u{7}bell"),
    ]

    @Test(arguments: badProfiles)
    func profileFieldsAreValidatedOneByOne(field: String, value: JSONValue) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let other = field == "address" ? "name" : "address"
        let r = try await server.call("PUT", "/api/v1/admin/company", token: boss.token,
                                      json: .object([(other, .string("Saved?")), (field, value)]))
        #expect(r.status == 422)
        #expect(r.errorCode == "validation_failed")
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil, "\(field)")
        #expect(try await server.call("GET", "/api/v1/company", token: boss.token).json()["updatedAt"] == .null, "nothing saved on a 422")
    }

    @Test func settingsHaveTheFullContractShapeWithDefaults() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let v = try await server.call("GET", "/api/v1/admin/settings", token: boss.token).json()
        #expect(v["defaultAllowanceDays"] == 23)
        #expect(v["workingDays"] == [1, 2, 3, 4, 5])
        #expect(v["timeZone"] == "UTC")
        #expect(v["maxSimultaneousAbsences"] == .null)
        #expect(v["carryOverMaxDays"] == 0)
        #expect(v["carryOverExpires"] == .null)
        #expect(v["updatedAt"] == .null, "null until first saved")

        let put = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: [
            "timeZone": "Europe/Madrid", "maxSimultaneousAbsences": 3, "carryOverMaxDays": 5, "carryOverExpires": "03-31",
        ])
        #expect(put.status == 200, "\(put.text)")
        let saved = try await server.call("GET", "/api/v1/admin/settings", token: boss.token).json()
        #expect(saved["timeZone"] == "Europe/Madrid")
        #expect(saved["maxSimultaneousAbsences"] == 3)
        #expect(saved["carryOverMaxDays"] == 5)
        #expect(saved["carryOverExpires"] == "03-31")
        #expect(saved["defaultAllowanceDays"] == 23, "fields left out keep their value")
        #expect(saved["updatedAt"]?.stringValue.flatMap(Timestamp.init(rfc3339:)) != nil)

        let cleared = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token,
                                            json: ["maxSimultaneousAbsences": .null, "carryOverExpires": ""]).json()
        #expect(cleared["maxSimultaneousAbsences"] == .null)
        #expect(cleared["carryOverExpires"] == .null)
        #expect(cleared["timeZone"] == "Europe/Madrid")
    }

    static let badSettings: [(String, JSONValue)] = [
        ("timeZone", "Mars/Olympus"), ("timeZone", "../../etc/passwd"), ("timeZone", "europe/madrid"), ("timeZone", ""), ("timeZone", 1),
        ("maxSimultaneousAbsences", 0), ("maxSimultaneousAbsences", 10_001), ("maxSimultaneousAbsences", 1.5), ("maxSimultaneousAbsences", "3"),
        ("carryOverMaxDays", -1), ("carryOverMaxDays", 367), ("carryOverMaxDays", .null),
        ("carryOverExpires", "3-31"), ("carryOverExpires", "02-29"), ("carryOverExpires", "13-01"), ("carryOverExpires", "04-31"),
        ("carryOverExpires", "2026-03-31"),
    ]

    @Test(arguments: badSettings)
    func newSettingsAreValidated(field: String, value: JSONValue) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let r = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: .object([(field, value)]))
        #expect(r.status == 422, "\(field)=\(value.serialized())")
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil)
        #expect(try await server.call("GET", "/api/v1/admin/settings", token: boss.token).json()["updatedAt"] == .null)
    }

    @Test(arguments: [("UTC", true), ("Europe/Madrid", true), ("America/Argentina/Buenos_Aires", true), ("Etc/GMT+5", true),
                      ("Europe", false), ("Europe/", false), ("/etc/passwd", false), ("Europe/../Europe/Madrid", false),
                      ("posixrules", false), ("Nowhere/Town", false)])
    func timeZoneNamesComeFromTheZoneDatabase(name: String, valid: Bool) {
        #expect(isTimeZoneName(name) == valid, "\(name)")
    }

    @Test func companyVerbsShowAndSetThroughTheSameRules() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        let set = await admin(dir, ["company", "set", "--name", "Acme", "--email", "office@acme.example", "--address", "Line 1\nLine 2"])
        #expect(set.code == 0, "\(set.io.errors)")
        let shown = await admin(dir, ["company", "show", "--json"])
        #expect(shown.code == 0)
        let v = try JSONValue.parse(Array(shown.io.output.utf8))
        #expect(v["name"] == "Acme")
        #expect(v["address"] == "Line 1\nLine 2")
        #expect(v["phone"] == .null)
        let text = await admin(dir, ["company", "show"])
        #expect(text.io.output.contains("name: Acme"))

        let bad = await admin(dir, ["company", "set", "--email", "nope", "--website", "ftp://x.example"])
        #expect(bad.code == 1)
        #expect(bad.io.errors.count == 1)
        #expect(bad.io.errors.first?.contains("invalid --email") == true)
        #expect(bad.io.errors.first?.contains("invalid --website") == true)
        #expect(await admin(dir, ["company", "set"]).code == 2, "nothing to set")
        #expect(await admin(dir, ["company", "set", "--colour", "red"]).code == 2)
        #expect(await admin(dir, ["company", "fly"]).code == 2)
        let help = await admin(dir, ["company", "set", "--help"])
        #expect(help.code == 0)
        #expect(help.io.output.contains("--website"))
        #expect(try JSONValue.parse(Array(await admin(dir, ["company", "show", "--json"]).io.output.utf8))["email"] == "office@acme.example",
                "a refused change saves nothing")
    }

    static let settingVerbs: [([String], Int32, String?)] = [
        (["timeZone", "Europe/Madrid"], 0, "Europe/Madrid"),
        (["workingDays", "1,2,3,4"], 0, "1,2,3,4"),
        (["maxSimultaneousAbsences", "4"], 0, "4"),
        (["maxSimultaneousAbsences", "null"], 0, "null"),
        (["carryOverExpires", "03-31"], 0, "03-31"),
        (["carryOverExpires", ""], 0, "null"),
        (["registrationDomain", "Example.COM"], 0, "example.com"),
        (["timeZone", "Mars/Olympus"], 1, nil),
        (["workingDays", "1,2,x"], 1, nil),
        (["defaultAllowanceDays", "lots"], 1, nil),
        (["registration", "domain"], 1, nil),
        (["colour", "red"], 2, nil),
        (["timeZone"], 2, nil),
    ]

    @Test(arguments: settingVerbs)
    func settingsSetParsesPerTypeAndValidatesLikeTheAPI(words: [String], code: Int32, shown: String?) async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        let r = await admin(dir, ["settings", "set"] + words)
        #expect(r.code == code, "\(words): \(r.io.errors)")
        if let shown {
            #expect(r.io.output == "\(words[0]) = \(shown)\n")
            let v = try JSONValue.parse(Array(await admin(dir, ["settings", "show", "--json"]).io.output.utf8))
            #expect(v["updatedAt"]?.stringValue != nil)
        } else {
            #expect(r.io.errors.count == 1, "one line: \(r.io.errors)")
            let v = try JSONValue.parse(Array(await admin(dir, ["settings", "show", "--json"]).io.output.utf8))
            #expect(v["updatedAt"] == .null, "a refused change saves nothing")
        }
    }

    @Test func newAccountsGetTheCompanyDefaultLanguageEverywhere() async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        #expect(await admin(dir, ["settings", "set", "defaultLanguage", "es"]).code == 0)
        #expect(await admin(dir, ["settings", "set", "registration", "open"]).code == 0)
        let cli = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin", "--password-stdin"],
                              input: [adminPassword])
        #expect(cli.code == 0)
        let server = try await TestServer.start(dir: dir, seedAdmin: false)
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        #expect(try await server.call("GET", "/api/v1/me", token: boss.token).json()["language"] == "es", "CLI create-user")
        let created = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                            json: ["username": "ann", "email": "ann@example.com"]).json()
        #expect(created["user"]?["language"] == "es", "admin create")
        let registered = try await server.call("POST", "/api/v1/auth/register",
                                               json: ["username": "reg", "email": "reg@example.com", "password": "a long password"])
        #expect(try registered.json()["user"]?["language"] == "es", "register")
        let chosen = await admin(dir, ["create-user", "--username", "franc", "--email", "fr@example.com", "--language", "fr", "--random-password"])
        #expect(chosen.code == 0)
        #expect(await admin(dir, ["create-user", "--username", "xx", "--email", "xx@example.com", "--language", "French", "--random-password"]).code == 2)
    }
}
