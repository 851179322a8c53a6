import SGEMSupport
import SGEMTestSupport
import Testing

/// Who calls an endpoint in the access table.
enum Caller: String, CaseIterable, Sendable { case anonymous, employee, admin }

/// One endpoint of the Accounts section (plus the settings), with a harmless body.
struct Endpoint: Sendable, CustomStringConvertible {
    let method: String
    let path: String
    let body: JSONValue?
    let adminOnly: Bool
    var description: String { "\(method) \(path)" }
}

let userEndpoints: [Endpoint] = [
    Endpoint(method: "GET", path: "/api/v1/me", body: nil, adminOnly: false),
    Endpoint(method: "PATCH", path: "/api/v1/me", body: ["status": "here"], adminOnly: false),
    Endpoint(method: "PUT", path: "/api/v1/me/password", body: ["currentPassword": "x", "newPassword": "y"], adminOnly: false),
    Endpoint(method: "DELETE", path: "/api/v1/me/avatar", body: nil, adminOnly: false),
    Endpoint(method: "GET", path: "/api/v1/users", body: nil, adminOnly: false),
    Endpoint(method: "GET", path: "/api/v1/users/1", body: nil, adminOnly: false),
    Endpoint(method: "GET", path: "/api/v1/users/1/avatar", body: nil, adminOnly: false),
    Endpoint(method: "POST", path: "/api/v1/auth/logout", body: nil, adminOnly: false),
    Endpoint(method: "POST", path: "/api/v1/admin/users", body: ["username": "new.one", "email": "new@example.com"], adminOnly: true),
    Endpoint(method: "PATCH", path: "/api/v1/admin/users/2", body: ["position": "Sales"], adminOnly: true),
    Endpoint(method: "POST", path: "/api/v1/admin/users/2/password-reset", body: nil, adminOnly: true),
    Endpoint(method: "GET", path: "/api/v1/admin/audit", body: nil, adminOnly: true),
    Endpoint(method: "GET", path: "/api/v1/admin/settings", body: nil, adminOnly: true),
    Endpoint(method: "PUT", path: "/api/v1/admin/settings", body: ["defaultLanguage": "en"], adminOnly: true),
    Endpoint(method: "GET", path: "/api/v1/company", body: nil, adminOnly: false),
    Endpoint(method: "PUT", path: "/api/v1/admin/company", body: ["name": "Acme"], adminOnly: true),
    Endpoint(method: "GET", path: "/api/v1/admin/audit/events", body: nil, adminOnly: true),
    Endpoint(method: "GET", path: "/api/v1/admin/audit?event=login.success&userId=1", body: nil, adminOnly: true),
    Endpoint(method: "DELETE", path: "/api/v1/admin/users/2/avatar", body: nil, adminOnly: true),
]

@Suite struct AdminTests {
    @Test(arguments: userEndpoints, Caller.allCases)
    func eachRoleGetsTheRightAccess(endpoint: Endpoint, caller: Caller) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)   // user id 2
        let token: String? = switch caller {
        case .anonymous: nil
        case .employee: emp.token
        case .admin: boss.token
        }
        let r = try await server.call(endpoint.method, endpoint.path, token: token, json: endpoint.body)
        switch caller {
        case .anonymous:
            #expect(r.status == 401, "\(endpoint)")
            #expect(r.errorCode == "unauthenticated")
        case .employee where endpoint.adminOnly:
            #expect(r.status == 403, "\(endpoint)")
            #expect(r.errorCode == "forbidden")
        default:
            // Allowed: the answer is the endpoint's own (success, or its validation/404), never an access error.
            #expect(![401, 403].contains(r.status), "\(endpoint) as \(caller): \(r.status) \(r.text)")
            #expect(r.status < 500)
        }
    }

    @Test func createsUsersWithGivenOrGeneratedPasswords() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let generated = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                              json: ["username": "Carla", "email": "Carla@Example.com", "displayName": "Carla Ruiz", "role": "admin"])
        #expect(generated.status == 201, "\(generated.text)")
        let g = try generated.json()
        #expect(g["user"]?["username"] == "carla")
        #expect(g["user"]?["role"] == "admin")
        let password = try #require(g["password"]?.stringValue)
        #expect(password.count == 20)
        #expect(!password.contains { "0O1lI".contains($0) })
        _ = try await server.login("carla@example.com", password)

        let given = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                          json: ["username": "dan", "email": "dan@example.com", "password": "dans own password"])
        #expect(given.status == 201)
        #expect(try given.json()["password"] == nil, "a given password is never echoed")
        #expect(try given.json()["user"]?["role"] == "employee")
        _ = try await server.login("dan", "dans own password")

        let takenName = try await server.call("POST", "/api/v1/admin/users", token: boss.token, json: ["username": "DAN", "email": "x@example.com"])
        #expect(takenName.status == 409)
        #expect(takenName.errorCode == "username_taken")
        let takenEmail = try await server.call("POST", "/api/v1/admin/users", token: boss.token, json: ["username": "dan2", "email": "DAN@example.COM"])
        #expect(takenEmail.status == 409)
        #expect(takenEmail.errorCode == "email_taken")
        let invalid = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                            json: ["username": "x!", "email": "not-an-email", "role": "king", "password": "short"])
        #expect(invalid.status == 422)
        let fields = try invalid.json()["error"]?["details"]?["fields"]
        for f in ["username", "email", "role", "password"] { #expect(fields?[f] != nil, "no problem reported for \(f)") }
    }

    @Test func deactivationEndsSessionsAtOnceAndReactivationRestoresLogin() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        #expect(try await server.call("GET", "/api/v1/me", token: emp.token).status == 200)
        let off = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["active": false])
        #expect(off.status == 200)
        #expect(try off.json()["active"] == false)
        let after = try await server.call("GET", "/api/v1/me", token: emp.token)
        #expect(after.status == 401, "the session ended with the deactivation")
        let on = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["active": true])
        #expect(try on.json()["active"] == true)
        #expect(try await server.call("GET", "/api/v1/me", token: emp.token).status == 401, "old sessions stay ended")
        _ = try await server.login("emp", "password-of-emp")
    }

    @Test func editsProfilesAndEmails() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        _ = try await server.createUser("other", as: boss)
        let r = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token,
                                      json: ["email": "Emp.New@Example.com", "position": "Sales", "displayName": "Emp Loyee"])
        #expect(r.status == 200)
        #expect(try r.json()["email"] == "Emp.New@Example.com")
        #expect(try r.json()["position"] == "Sales")
        _ = try await server.login("emp.new@example.com", "password-of-emp")
        let taken = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["email": "OTHER@example.com"])
        #expect(taken.status == 409)
        #expect(taken.errorCode == "email_taken")
        #expect(try await server.call("PATCH", "/api/v1/admin/users/999", token: boss.token, json: ["position": "x"]).status == 404)
        #expect(try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["role": "owner"]).status == 422)
    }

    @Test(arguments: [["role": JSONValue.string("employee")], ["active": false]])
    func neverLeavesTheCompanyWithoutAnActiveAdmin(change: JSONValue) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let refused = try await server.call("PATCH", "/api/v1/admin/users/\(boss.userID)", token: boss.token, json: change)
        #expect(refused.status == 409)
        #expect(refused.errorCode == "last_admin")
        #expect(try await server.call("GET", "/api/v1/me", token: boss.token).json()["role"] == "admin")

        let second = try await server.createUser("second", role: "admin", as: boss)
        let allowed = try await server.call("PATCH", "/api/v1/admin/users/\(boss.userID)", token: second.token, json: change)
        #expect(allowed.status == 200, "with another active admin the change is fine")
        let back = try await server.call("PATCH", "/api/v1/admin/users/\(second.userID)", token: second.token, json: change)
        #expect(back.status == 409, "now the second admin is the last one")
        #expect(back.errorCode == "last_admin")
    }

    @Test func passwordResetGivesATemporaryPasswordAndEndsSessions() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        let r = try await server.call("POST", "/api/v1/admin/users/\(emp.userID)/password-reset", token: boss.token)
        #expect(r.status == 200)
        let temporary = try #require(try r.json()["password"]?.stringValue)
        #expect(temporary.count == 20)
        #expect(try await server.call("GET", "/api/v1/me", token: emp.token).status == 401)
        #expect(try await server.call("POST", "/api/v1/auth/login", json: ["login": "emp", "password": "password-of-emp"]).status == 401)
        _ = try await server.login("emp", temporary)
        #expect(try await server.call("POST", "/api/v1/admin/users/999/password-reset", token: boss.token).status == 404)
    }

    @Test func theAuditLogRecordsSecurityEventsNewestFirst() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        _ = try await server.call("POST", "/api/v1/auth/login", json: ["login": "emp", "password": "wrong password!"])
        _ = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["role": "admin"])
        _ = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["active": false])
        _ = try await server.call("POST", "/api/v1/admin/users/\(emp.userID)/password-reset", token: boss.token)
        _ = try await server.call("POST", "/api/v1/auth/logout", token: boss.token)
        let boss2 = try await server.login()

        let r = try await server.call("GET", "/api/v1/admin/audit", token: boss2.token)
        #expect(r.status == 200)
        let items = try #require(try r.json()["items"]?.arrayValue)
        let events = items.compactMap { $0["event"]?.stringValue }
        #expect(events == ["login.success", "logout", "password.reset", "user.deactivate", "role.change", "login.failure",
                           "login.success", "user.create", "login.success", "user.create"], "\(events)")
        let ids = items.compactMap { $0["id"]?.numberValue }
        #expect(ids == ids.sorted(by: >))
        let failure = try #require(items.first { $0["event"] == "login.failure" })
        #expect(failure["login"] == "emp")
        #expect(failure["ip"] == "127.0.0.1")
        #expect(failure["targetUsername"] == "emp")
        let role = try #require(items.first { $0["event"] == "role.change" })
        #expect(role["actorUsername"] == "boss")
        #expect(role["detail"] == "employee → admin")

        let page = try await server.call("GET", "/api/v1/admin/audit?limit=3&before=\(Int(ids[2]))", token: boss2.token)
        let paged = try page.json()["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue }
        #expect(paged == Array(ids[3..<6]))
        #expect(try await server.call("GET", "/api/v1/admin/audit?limit=abc", token: boss2.token).status == 422)
    }
}
