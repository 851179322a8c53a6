import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct DirectoryTests {
    /// boss ("The Boss") plus five employees; `zed` is deactivated.
    func seeded() async throws -> (TestServer, LoggedIn) {
        let server = try await TestServer.start()
        let boss = try await server.login()
        for (u, name) in [("maria", "maría lópez"), ("ana2", "Ana García"), ("ana1", "Ana García"), ("bob", "Bob Stone"), ("zed", "Zed 100%")] {
            _ = try await server.createUser(u, name: name, as: boss)
        }
        let users = try await server.call("GET", "/api/v1/users", token: boss.token).json()
        let zed = try #require(users["items"]?.arrayValue?.first { $0["username"] == "zed" }?["id"]?.numberValue)
        #expect(try await server.call("PATCH", "/api/v1/admin/users/\(Int(zed))", token: boss.token, json: ["active": false]).status == 200)
        return (server, boss)
    }

    func usernames(_ r: WireResponse) throws -> [String] {
        try r.json()["items"]?.arrayValue?.compactMap { $0["username"]?.stringValue } ?? []
    }

    @Test func listsEveryoneByNameThenUsernameWithCounts() async throws {
        let (server, boss) = try await seeded()
        defer { Task { await server.stop() } }
        let all = try await server.call("GET", "/api/v1/users?status=all", token: boss.token)
        #expect(all.status == 200)
        #expect(try usernames(all) == ["ana1", "ana2", "bob", "maria", "boss", "zed"])
        let v = try all.json()
        #expect(v["total"] == 6)
        #expect(v["active"] == 5)
        #expect(v["items"]?.arrayValue?.first { $0["username"] == "zed" }?["active"] == false)
        #expect(v["items"]?.arrayValue?.first?["notificationsEnabled"] == nil, "the directory shows public views only")

        let active = try await server.call("GET", "/api/v1/users?status=active", token: boss.token)
        #expect(try usernames(active) == ["ana1", "ana2", "bob", "maria", "boss"])
        #expect(try usernames(await server.call("GET", "/api/v1/users", token: boss.token)) == ["ana1", "ana2", "bob", "maria", "boss"],
                "active is the default")
        #expect(try active.json()["total"] == 6, "counts are company-wide whatever the filter")
        #expect(try usernames(await server.call("GET", "/api/v1/users?status=inactive", token: boss.token)) == ["zed"])
        let bad = try await server.call("GET", "/api/v1/users?status=gone", token: boss.token)
        #expect(bad.status == 422)
    }

    static let searches: [(String, [String])] = [
        ("ana", ["ana1", "ana2"]), ("GAR", ["ana1", "ana2"]), ("lóp", ["maria"]), ("ston", ["bob"]), ("bo", ["bob", "boss"]),
        ("boss%40example", []), ("boss@example.com", ["boss"]), ("100%", ["zed"]), ("%", []), ("_", []), ("the b", ["boss"]),
        ("oss", []), ("lop", ["maria"]), ("MARÍA", ["maria"]), ("garcia", ["ana1", "ana2"]),
    ]

    @Test(arguments: searches)
    func searchesPrefixesOfNamesUsernamesAndEmails(q: String, expected: [String]) async throws {
        let (server, boss) = try await seeded()
        defer { Task { await server.stop() } }
        let encoded = q.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: " ", with: "%20")
            .replacingOccurrences(of: "@", with: "%40")
        let r = try await server.call("GET", "/api/v1/users?status=all&q=\(encoded)", token: boss.token)
        #expect(r.status == 200)
        #expect(try usernames(r) == expected, "q=\(q)")
    }

    @Test func showsOneUser() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let ann = try await server.createUser("ann", as: boss)
        let r = try await server.call("GET", "/api/v1/users/\(boss.userID)", token: ann.token)
        #expect(r.status == 200)
        let v = try r.json()
        #expect(v["username"] == "boss")
        #expect(v["displayName"] == "The Boss")
        #expect(v["lastLoginAt"] == nil)
        for key in ["id", "username", "displayName", "role", "active", "position", "phone", "email", "twitter", "linkedin", "bio",
                    "status", "country", "language", "avatarUrl", "createdAt"] {
            #expect(v[key] != nil, "public user lacks \(key)")
        }
        #expect(try await server.call("GET", "/api/v1/users/999", token: ann.token).status == 404)
        #expect(try await server.call("GET", "/api/v1/users/abc", token: ann.token).status == 404)
    }
}
