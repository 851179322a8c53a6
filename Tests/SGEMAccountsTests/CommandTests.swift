#if canImport(Glibc)
import Glibc
#endif
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct CommandTests {
    @Test func verbsRefuseADataDirectoryWithoutADatabaseAndCreateNothing() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        for words in [["list-users"], ["create-user", "--username", "root", "--email", "root@example.com", "--random-password"]] {
            let (code, io) = await admin(dir, words)
            #expect(code == 1)
            switch TestBackend.current {
            case .sqlite:
                #expect(io.errors == ["sgem-server: no database in \(dir.path) (looked for \(dir.path)/sgem.db); create it with 'sgem-server migrate --data-dir \(dir.path)' or start the server"])
                #expect(access(dir.path + "/sgem.db", F_OK) != 0, "\(words[0]) must not create a database")
            case .postgresql:
                let url = try dir.postgresURL()
                #expect(io.errors == ["sgem-server: no sgem database at \(url) yet; create it with 'sgem-server migrate --database-url URL' or start the server"])
                let tables = try PostgresConnection(url: url).query("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'", [])
                #expect(tables.first?.int("n") == 0, "\(words[0]) must not create a table")
            }
        }
    }

    @Test func createUserWithAPasswordFromStdinOrARandomOne() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        let fromStdin = await admin(dir, ["create-user", "--username", "Root", "--email", "root@example.com", "--role", "admin",
                                          "--password-stdin"], input: ["root password here"])
        #expect(fromStdin.code == 0, "\(fromStdin.io.errors)")
        #expect(fromStdin.io.output.contains("created admin 'root'"))
        #expect(!fromStdin.io.output.contains("root password here"), "a given password is never printed")

        let random = await admin(dir, ["create-user", "--username", "eve", "--email", "eve@example.com", "--name", "Eve Adams", "--random-password"])
        #expect(random.code == 0)
        let line = try #require(random.io.output.split(separator: "\n").first { $0.hasPrefix("password: ") })
        let password = String(line.dropFirst("password: ".count))
        #expect(password.count == 20)

        let server = try await TestServer.start(dir: dir, seedAdmin: false)
        defer { Task { await server.stop(removing: false) } }
        let root = try await server.login("root", "root password here")
        let eve = try await server.login("eve", password)
        let me = try await server.call("GET", "/api/v1/me", token: eve.token).json()
        #expect(me["displayName"] == "Eve Adams")
        #expect(me["role"] == "employee")
        #expect(try await server.call("GET", "/api/v1/admin/audit", token: root.token).status == 200)
    }

    static let failures: [([String], Int32)] = [
        (["create-user", "--username", "x1x", "--email", "x@example.com"], 2),
        (["create-user", "--username", "x1x", "--email", "x@example.com", "--password-stdin", "--random-password"], 2),
        (["create-user", "--username", "x1x", "--email", "x@example.com", "--role", "king", "--random-password"], 2),
        (["create-user", "--username", "a", "--email", "x@example.com", "--random-password"], 2),
        (["create-user", "--email", "x@example.com", "--random-password"], 2),
        (["create-user", "--username", "boss", "--email", "new@example.com", "--random-password"], 1),
        (["create-user", "--username", "x1x", "--email", "x@example.com", "--password-stdin"], 1),
        (["set-role", "boss"], 2),
        (["set-role", "boss", "king"], 2),
        (["set-role", "ghost", "admin"], 1),
        (["deactivate", "ghost"], 1),
        (["activate"], 2),
        (["reset-password", "boss"], 2),
        (["reset-password", "ghost", "--random-password"], 1),
        (["set-role", "boss", "employee"], 1),
        (["deactivate", "boss"], 1),
    ]

    @Test(arguments: failures)
    func failsWithTheRightExitCode(words: [String], expected: Int32) async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        #expect(await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin", "--random-password"]).code == 0)
        let (code, io) = await admin(dir, words)
        #expect(code == expected, "\(words): \(io.errors)")
        #expect(io.errors.count == 1, "one clear line: \(io.errors)")
        let listed = await admin(dir, ["list-users", "--json"])
        let users = try JSONValue.parse(Array(listed.io.output.utf8))
        #expect(users["total"] == 1, "a failed command changes nothing")
        #expect(users["items"]?.arrayValue?.first?["role"] == "admin")
        #expect(users["items"]?.arrayValue?.first?["active"] == true)
    }

    @Test func listSetRoleDeactivateActivateAndResetPassword() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        _ = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin", "--random-password"])
        _ = await admin(dir, ["create-user", "--username", "emp", "--email", "emp@example.com", "--password-stdin"], input: ["emp password 1"])

        let list = await admin(dir, ["list-users"])
        #expect(list.code == 0)
        #expect(list.io.output.contains("USERNAME"))
        #expect(list.io.output.contains("2 users, 2 active"))

        #expect(await admin(dir, ["set-role", "emp", "admin"]).code == 0)
        #expect(await admin(dir, ["set-role", "boss", "employee"]).code == 0, "emp is an admin now, so boss may step down")
        #expect(await admin(dir, ["deactivate", "emp"]).code == 1, "emp is the last active admin")

        let server = try await TestServer.start(dir: dir, seedAdmin: false)
        let session = try await server.login("emp", "emp password 1")
        #expect(await admin(dir, ["set-role", "boss", "admin"]).code == 0)
        let deactivated = await admin(dir, ["deactivate", "emp@example.com"])
        #expect(deactivated.code == 0)
        #expect(deactivated.io.output.contains("deactivated 'emp'"))
        #expect(try await server.call("GET", "/api/v1/me", token: session.token).status == 401,
                "the command ends the sessions of the running server at once")
        #expect(await admin(dir, ["activate", "emp"]).code == 0)
        let reset = await admin(dir, ["reset-password", "emp", "--password-stdin"], input: ["a reset password"])
        #expect(reset.code == 0)
        _ = try await server.login("emp", "a reset password")
        await server.stop(removing: false)

        let json = await admin(dir, ["list-users", "--json"])
        let v = try JSONValue.parse(Array(json.io.output.utf8))
        let items = try #require(v["items"]?.arrayValue)
        #expect(items.map { $0["username"] } == ["boss", "emp"])
        #expect(items.map { $0["role"] } == ["admin", "admin"])
        #expect(items.allSatisfy { $0["active"] == true })
        #expect(items[1]["lastLoginAt"]?.stringValue != nil)
        #expect(v["active"] == 2)
    }

    @Test func theVerbsWorkInAnAdminShellScript() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        try await createDatabase(dir)
        let script = [
            "# set up the team",
            "create-user --username boss --email boss@example.com --role admin --password-stdin",
            "boss password 123",
            "create-user --username emp --email emp@example.com --random-password",
            "set-role emp admin",
            "deactivate emp",
            "list-users --json",
        ]
        let (code, io) = await admin(dir, ["shell"], input: script)
        #expect(code == 0, "\(io.errors)")
        let jsonLine = try #require(io.output.split(separator: "\n").last { $0.hasPrefix("{") })
        let v = try JSONValue.parse(Array(jsonLine.utf8))
        #expect(v["total"] == 2)
        #expect(v["active"] == 1)
        #expect(v["items"]?.arrayValue?.first { $0["username"] == "emp" }?["role"] == "admin")

        let failing = await admin(dir, ["shell"], input: ["activate emp", "deactivate nobody", "activate boss"])
        #expect(failing.code == 1)
        #expect(failing.io.errors.first?.contains("line 2") == true)
        #expect(failing.io.errors.first?.contains("user 'nobody' not found") == true)
    }
}
