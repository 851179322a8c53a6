@testable import SGEMAccounts
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Invitations (issue 16, "Joining"): links admins make, list and revoke; sign-up with one
/// whatever the registration setting; the same 404 for every link that cannot make an account.
@Suite struct InviteTests {
    /// The token of an invitation link (`…/join#invite=TOKEN`).
    func token(_ url: String) -> String {
        let parts = url.split(separator: "#", maxSplits: 1)
        guard parts.count == 2, parts[1].hasPrefix("invite=") else { return "" }
        return String(parts[1].dropFirst("invite=".count))
    }

    func createInvite(_ port: Int, _ admin: LoggedIn, _ body: JSONValue = [:], host: String? = nil) async throws -> (id: Int64, token: String, json: JSONValue) {
        let r = try await httpCall(port: port, "POST", "/api/v1/admin/invites", token: admin.token, json: body,
                                   headers: host.map { [("Host", $0)] } ?? [])
        guard r.status == 201 else { throw TestFailure("invite answered \(r.status): \(r.text)") }
        let json = try r.json()
        return (Int64(json["id"]?.numberValue ?? 0), token(json["url"]?.stringValue ?? ""), json)
    }

    func register(_ port: Int, _ username: String, invite: String?) async throws -> WireResponse {
        var body: [(String, JSONValue)] = [("username", .string(username)), ("email", .string("\(username)@example.com")),
                                           ("password", "long enough password"), ("displayName", .string(username.capitalized))]
        if let invite { body.append(("invite", .string(invite))) }
        return try await httpCall(port: port, "POST", "/api/v1/auth/register", json: .object(body))
    }

    func auditEntries(_ port: Int, _ admin: LoggedIn, _ event: String) async throws -> [JSONValue] {
        try await httpCall(port: port, "GET", "/api/v1/admin/audit?event=\(event)", token: admin.token).json()["items"]?.arrayValue ?? []
    }

    @Test func adminsCreateListAndRevokeLinks() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let made = try await createInvite(server.port, boss, ["role": "admin", "expiresInDays": 3, "maxUses": 5, "note": "  New office  "],
                                          host: "sgem.example.com:8443")
        #expect(made.json["url"]?.stringValue == "http://sgem.example.com:8443/join#invite=\(made.token)")
        #expect(made.token.count == 43, "32 random bytes in base64url")
        #expect(made.json["role"] == "admin")
        #expect(made.json["maxUses"] == 5)
        #expect(made.json["uses"] == 0)
        #expect(made.json["note"] == "New office")
        #expect(made.json["createdBy"]?.numberValue == Double(boss.userID))
        let created = try #require(Timestamp(rfc3339: made.json["createdAt"]?.stringValue ?? ""))
        let expires = try #require(Timestamp(rfc3339: made.json["expiresAt"]?.stringValue ?? ""))
        #expect(expires.seconds - created.seconds == 3 * 86_400)

        // Only the digest is stored.
        let stored = try await server.call("GET", "/api/v1/admin/invites", token: boss.token)
        #expect(stored.status == 200)
        #expect(!stored.text.contains(made.token), "the listing never shows the token")
        let items = try stored.json()["items"]?.arrayValue ?? []
        #expect(items.count == 1)
        #expect(items.first?["id"]?.numberValue == Double(made.id))
        #expect(items.first?["url"] == nil)
        #expect(items.first?["status"] == "live")

        let offered = try await server.call("GET", "/api/v1/invites/\(made.token)")
        #expect(offered.status == 200, "\(offered.text)")
        #expect(try offered.json()["role"] == "admin")
        #expect(try offered.json()["expiresAt"] == made.json["expiresAt"])

        #expect(try await server.call("DELETE", "/api/v1/admin/invites/\(made.id)", token: boss.token).status == 204)
        let gone = try await server.call("GET", "/api/v1/invites/\(made.token)")
        #expect(gone.status == 404)
        #expect(gone.errorCode == "invite_not_found")
        #expect(try await server.call("GET", "/api/v1/admin/invites", token: boss.token).json()["items"]?.arrayValue?.isEmpty == true)
        let all = try await server.call("GET", "/api/v1/admin/invites?status=all", token: boss.token).json()["items"]?.arrayValue ?? []
        #expect(all.first?["status"] == "revoked")
        #expect(all.first?["revokedAt"]?.stringValue != nil)
        #expect(try await server.call("DELETE", "/api/v1/admin/invites/999", token: boss.token).status == 404)
        #expect(try await server.call("GET", "/api/v1/admin/invites?status=dead", token: boss.token).status == 422)

        let createdEntries = try await auditEntries(server.port, boss, "invite.created")
        #expect(createdEntries.count == 1)
        #expect(createdEntries.first?["actorId"]?.numberValue == Double(boss.userID))
        #expect(createdEntries.first?["detail"]?.stringValue?.contains("invite \(made.id)") == true)
        #expect(try await auditEntries(server.port, boss, "invite.revoked").first?["detail"]?.stringValue == "invite \(made.id)")
        let names = try await server.call("GET", "/api/v1/admin/audit/events", token: boss.token).json()["items"]?.arrayValue ?? []
        #expect(names.contains("invite.created") && names.contains("invite.revoked"))
    }

    @Test func aLinkMakesAnAccountWithItsRoleWhileRegistrationIsClosed() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let made = try await createInvite(server.port, boss, ["role": "admin", "maxUses": 2])
        #expect(try await register(server.port, "walkin", invite: nil).errorCode == "registration_closed")

        let joined = try await register(server.port, "ana", invite: made.token)
        #expect(joined.status == 201, "\(joined.text)")
        let ana = try LoggedIn(joined)
        let me = try await server.call("GET", "/api/v1/me", token: ana.token).json()
        #expect(me["role"] == "admin", "the invitation's role")
        #expect(me["mustChangePassword"] == false, "the password is her own")
        let listed = try await server.call("GET", "/api/v1/admin/invites", token: boss.token).json()["items"]?.arrayValue ?? []
        #expect(listed.first?["uses"] == 1)
        let registered = try await auditEntries(server.port, boss, "user.register")
        #expect(registered.first?["targetId"]?.numberValue == Double(ana.userID))
        #expect(registered.first?["detail"]?.stringValue == "role admin, invite \(made.id)")

        // A wrong token makes nothing, and says so.
        let wrong = try await register(server.port, "mallory", invite: "not-a-token")
        #expect(wrong.status == 404)
        #expect(wrong.errorCode == "invite_not_found")
        #expect(try await server.call("POST", "/api/v1/auth/login", json: ["login": "mallory", "password": "long enough password"]).status == 401)
        // A refused body takes no use.
        let invalid = try await register(server.port, "x", invite: made.token)
        #expect(invalid.status == 422)
        #expect(try await server.call("GET", "/api/v1/invites/\(made.token)").status == 200, "one use is left")
    }

    @Test func spentRevokedUnknownAndOverlongLinksAllAnswerTheSame404() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let spent = try await createInvite(server.port, boss)
        #expect(try await register(server.port, "first", invite: spent.token).status == 201)
        let second = try await register(server.port, "second", invite: spent.token)
        #expect(second.status == 404)
        let revoked = try await createInvite(server.port, boss)
        _ = try await server.call("DELETE", "/api/v1/admin/invites/\(revoked.id)", token: boss.token)
        let all = try await server.call("GET", "/api/v1/admin/invites?status=all", token: boss.token).json()["items"]?.arrayValue ?? []
        #expect(all.compactMap { $0["status"]?.stringValue }.sorted() == ["revoked", "used"])

        var bodies: Set<String> = []
        for token in [spent.token, revoked.token, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", String(repeating: "x", count: 500)] {
            let r = try await server.call("GET", "/api/v1/invites/\(token)")
            #expect(r.status == 404)
            bodies.insert(r.text)
        }
        #expect(bodies.count == 1, "nothing tells a spent link from an unknown one: \(bodies)")
        #expect(bodies.first == second.text)
    }

    @Test func aLinkExpiresByTheClock() async throws {
        let now = Shared(Timestamp(rfc3339: "2026-12-05T09:00:00Z")!)
        let server = try await ModuleServer(throttle: ThrottlePolicy(), clock: { now.value })
        defer { Task { await server.stop() } }
        let boss = try await apiLogin(port: server.port, "boss", adminPassword)
        let made = try await createInvite(server.port, boss, ["expiresInDays": 1])
        #expect(made.json["expiresAt"] == "2026-12-06T09:00:00Z")
        now.withLock { $0 = Timestamp(rfc3339: "2026-12-06T08:59:59Z")! }
        #expect(try await httpCall(port: server.port, "GET", "/api/v1/invites/\(made.token)").status == 200)
        now.withLock { $0 = Timestamp(rfc3339: "2026-12-06T09:00:00Z")! }
        #expect(try await httpCall(port: server.port, "GET", "/api/v1/invites/\(made.token)").errorCode == "invite_not_found")
        #expect(try await register(server.port, "late", invite: made.token).errorCode == "invite_not_found")
        let all = try await httpCall(port: server.port, "GET", "/api/v1/admin/invites?status=all", token: boss.token).json()["items"]?.arrayValue
        #expect(all?.first?["status"] == "expired")
    }

    @Test func guessingLinksIsThrottledWithoutLockingLogins() async throws {
        let server = try await ModuleServer(throttle: ThrottlePolicy(addressFailures: 3))
        defer { Task { await server.stop() } }
        let boss = try await apiLogin(port: server.port, "boss", adminPassword)
        let made = try await createInvite(server.port, boss)
        for i in 0..<3 {
            #expect(try await httpCall(port: server.port, "GET", "/api/v1/invites/guess\(i)").status == 404)
        }
        let throttled = try await httpCall(port: server.port, "GET", "/api/v1/invites/\(made.token)")
        #expect(throttled.status == 429)
        #expect(throttled.header("Retry-After") != nil)
        #expect(try await register(server.port, "guesser", invite: made.token).status == 429, "registration with a link waits too")
        _ = try await apiLogin(port: server.port, "boss", adminPassword)
    }

    @Test func tenSimultaneousSignUpsOnAOneUseLinkMakeOneAccount() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let made = try await createInvite(server.port, boss)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<10 { group.addTask { try await register(server.port, "racer\(i)", invite: made.token).status } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 404 }.count == 9, "\(statuses)")
        let users = try await server.call("GET", "/api/v1/users?status=all", token: boss.token).json()
        #expect(users["total"] == 2, "the boss and one racer")
        let listed = try await server.call("GET", "/api/v1/admin/invites?status=all", token: boss.token).json()["items"]?.arrayValue
        #expect(listed?.first?["uses"] == 1)
        #expect(try await auditEntries(server.port, boss, "user.register").count == 1)
    }

    static let outsideTheLimits: [(JSONValue, String)] = {
        let long: JSONValue = .string(String(repeating: "n", count: 201))
        let cases: [(String, JSONValue)] = [("expiresInDays", 0), ("expiresInDays", 31), ("expiresInDays", 1.5), ("expiresInDays", "7"),
                                            ("maxUses", 0), ("maxUses", 501), ("role", "owner"), ("note", long), ("note", "two\nlines")]
        return cases.map { (JSONValue.object([($0.0, $0.1)]), $0.0) }
    }()

    @Test(arguments: InviteTests.outsideTheLimits)
    func refusesInvitationsOutsideTheLimits(body: JSONValue, field: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let r = try await server.call("POST", "/api/v1/admin/invites", token: boss.token, json: body)
        #expect(r.status == 422, "\(r.text)")
        #expect(try r.json()["error"]?["details"]?["fields"]?[field] != nil, "\(r.text)")
        #expect(try await server.call("GET", "/api/v1/admin/invites?status=all", token: boss.token).json()["items"]?.arrayValue?.isEmpty == true)
    }

    @Test func theLimitsThemselvesAreAccepted() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        for body: JSONValue in [["expiresInDays": 1, "maxUses": 1], ["expiresInDays": 30, "maxUses": 500, "note": .string(String(repeating: "n", count: 200))],
                                ["note": .null]] {
            let r = try await server.call("POST", "/api/v1/admin/invites", token: boss.token, json: body)
            #expect(r.status == 201, "\(r.text)")
        }
        let defaults = try await createInvite(server.port, boss)
        #expect(defaults.json["maxUses"] == 1)
        #expect(defaults.json["role"] == "employee")
        #expect(defaults.json["note"] == .null)
    }

    @Test func onlyAdminsManageInvitations() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let made = try await createInvite(server.port, boss)
        let worker = try await server.createUser("worker", as: boss)
        #expect(try await server.call("POST", "/api/v1/admin/invites", token: worker.token, json: [:]).status == 403)
        #expect(try await server.call("GET", "/api/v1/admin/invites", token: worker.token).status == 403)
        #expect(try await server.call("DELETE", "/api/v1/admin/invites/\(made.id)", token: worker.token).status == 403)
        #expect(try await server.call("POST", "/api/v1/admin/invites", json: [:]).status == 401)
        #expect(try await server.call("GET", "/api/v1/invites/\(made.token)").status == 200, "not revoked by the refused call")
    }

    @Test(arguments: ["evil.example/x", "a b", "host:0", "host:99999", "[::1", "user@host", "-bad.example", ""])
    func aForgedHostHeaderMakesNoLink(host: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let r = try await server.call("POST", "/api/v1/admin/invites", token: boss.token, json: [:], headers: [("Host", host)])
        #expect(r.status == 400, "\(r.text)")
        #expect(!r.text.contains("#invite="))
    }

    @Test(arguments: [("Example.COM", "example.com"), ("10.0.0.7:8080", "10.0.0.7:8080"), ("[::1]:8443", "[::1]:8443"),
                      ("sgem.local", "sgem.local")])
    func linkHostsAreKeptAsGiven(raw: String, expected: String) {
        #expect(LinkOrigin.authority(raw) == expected)
    }

    @Test func theLoginScreenLearnsWhetherPeopleMaySignUp() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let closed = try await server.call("GET", "/api/v1/auth/registration").json()
        #expect(closed["mode"] == "closed")
        #expect(closed["domain"] == .null)
        _ = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: ["registration": "domain", "registrationDomain": "acme.test"])
        let domain = try await server.call("GET", "/api/v1/auth/registration").json()
        #expect(domain["mode"] == "domain")
        #expect(domain["domain"] == "acme.test")
        _ = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: ["registration": "open"])
        #expect(try await server.call("GET", "/api/v1/auth/registration").json()["mode"] == "open")
        // A domain-only company still lets an invitation through for any address.
        _ = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, json: ["registration": "domain", "registrationDomain": "acme.test"])
        let made = try await createInvite(server.port, boss)
        #expect(try await register(server.port, "outsider", invite: made.token).status == 201)
    }

    @Test func theJoinLinkServesTheConsole() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let r = try await server.call("GET", "/join")
        #expect(r.status == 200)
        #expect(r.header("Content-Type")?.hasPrefix("text/html") == true)
    }

    @Test func theCommandLineMakesListsAndRevokesLinks() async throws {
        let dir = TempDir()
        try await createDatabase(dir)
        let (seeded, seedIO) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin",
                                                 "--password-stdin"], input: [adminPassword])
        #expect(seeded == 0, "\(seedIO.errors)")
        let (code, io) = await admin(dir, ["invite", "create", "--role", "admin", "--days", "2", "--uses", "3", "--note", "Ops team",
                                           "--base-url", "https://sgem.example.com/"])
        #expect(code == 0, "\(io.errors)")
        let url = io.output.split(separator: "\n").first.map(String.init) ?? ""
        #expect(url.hasPrefix("https://sgem.example.com/join#invite="), "\(io.output)")
        #expect(io.output.contains("3 uses"))

        for (words, words2) in [(["--days", "31"], "--days"), (["--uses", "0"], "--uses"), (["--role", "boss"], "--role"),
                                (["--base-url", "ftp://x"], "--base-url"), (["--base-url", "https://x/path"], "--base-url")] {
            let (bad, badIO) = await admin(dir, ["invite", "create"] + words)
            #expect(bad != 0)
            #expect(badIO.errors.count == 1 && badIO.errors.first?.contains(words2) == true, "\(badIO.errors)")
        }
        let (_, help) = await admin(dir, ["invite", "create", "--help"])
        #expect(help.output.contains("--base-url") && help.output.contains("--uses"))

        let (_, listed) = await admin(dir, ["invite", "list", "--json"])
        let items = try JSONValue.parse(Array(listed.output.utf8))["items"]?.arrayValue ?? []
        #expect(items.count == 1)
        #expect(items.first?["note"] == "Ops team")
        #expect(items.first?["createdBy"] == .null, "made by the operator")

        let server = try await TestServer.start(dir: dir, seedAdmin: false)
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let offered = try await server.call("GET", "/api/v1/invites/\(token(url))")
        #expect(try offered.json()["role"] == "admin", "\(offered.text)")
        let (revoked, revokeIO) = await admin(dir, ["invite", "revoke", "1"])
        #expect(revoked == 0, "\(revokeIO.errors)")
        #expect(try await server.call("GET", "/api/v1/invites/\(token(url))").status == 404)
        let (missing, missingIO) = await admin(dir, ["invite", "revoke", "99"])
        #expect(missing != 0)
        #expect(missingIO.errors == ["no invitation with id 99"] || missingIO.errors.first?.contains("no invitation with id 99") == true)
        // The same audit entries as the API, with no actor.
        let entries = try await auditEntries(server.port, boss, "invite.created") + (try await auditEntries(server.port, boss, "invite.revoked"))
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0["actorId"] == .null })
    }
}
