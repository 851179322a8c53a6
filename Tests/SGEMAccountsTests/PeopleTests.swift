@testable import SGEMAccounts
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct SetupTests {
    func setupBody(_ token: String, _ username: String = "owner", password: String = "a long first password") -> JSONValue {
        ["token": .string(token), "username": .string(username), "email": .string("\(username)@example.com"),
         "password": .string(password), "displayName": "The Owner"]
    }

    @Test func theTokenCreatesTheFirstAdminOnce() async throws {
        let server = try await TestServer.start(seedAdmin: false)
        defer { Task { await server.stop() } }
        let token = try #require(server.running.setupToken())
        #expect(server.running.setupToken() == nil, "the token is handed out once")
        #expect(try await server.call("GET", "/api/v1/auth/setup").json()["open"] == true)

        // One character changed (a token that starts with "x" must not stay the same: 1 in 64).
        let wrong = try await server.call("POST", "/api/v1/auth/setup", json: setupBody((token.first == "x" ? "y" : "x") + token.dropFirst()))
        #expect(wrong.status == 403)
        #expect(wrong.errorCode == "setup_closed")
        let invalid = try await server.call("POST", "/api/v1/auth/setup", json: setupBody(token, "X", password: "short"))
        #expect(invalid.status == 422)
        let fields = try invalid.json()["error"]?["details"]?["fields"]
        #expect(fields?["username"] != nil)
        #expect(fields?["password"] != nil)

        let created = try await server.call("POST", "/api/v1/auth/setup", json: setupBody(token))
        #expect(created.status == 201, "\(created.text)")
        let session = try LoggedIn(created)
        #expect(created.header("Cache-Control") == "no-store")
        let me = try await server.call("GET", "/api/v1/me", token: session.token).json()
        #expect(me["role"] == "admin")
        #expect(me["displayName"] == "The Owner")
        #expect(me["language"] == "en")

        let reused = try await server.call("POST", "/api/v1/auth/setup", json: setupBody(token, "second"))
        #expect(reused.status == 403)
        #expect(reused.errorCode == "setup_closed")
        #expect(try await server.call("GET", "/api/v1/auth/setup").json()["open"] == false)
        let audit = try await server.call("GET", "/api/v1/admin/audit?event=setup.admin_created", token: session.token).json()
        #expect(audit["items"]?.arrayValue?.count == 1)
        #expect(audit["items"]?.arrayValue?.first?["targetId"]?.numberValue == Double(session.userID))
    }

    @Test func concurrentSetupsMakeOneAdmin() async throws {
        let server = try await TestServer.start(seedAdmin: false)
        defer { Task { await server.stop() } }
        let token = try #require(server.running.setupToken())
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<6 {
                group.addTask { try await server.call("POST", "/api/v1/auth/setup", json: self.setupBody(token, "owner\(i)")).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 1, "\(statuses)")
        #expect(statuses.filter { $0 == 403 }.count == 5, "\(statuses)")
        let listed = await admin(server.dir, ["list-users", "--json"])
        let users = try JSONValue.parse(Array(listed.io.output.utf8))["items"]?.arrayValue ?? []
        #expect(users.count == 1)
        #expect(users.first?["role"] == "admin")
    }

    @Test func closedWhenAnAdminExistsAtStart() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        #expect(server.running.setupToken() == nil)
        #expect(try await server.call("GET", "/api/v1/auth/setup").json()["open"] == false)
        let r = try await server.call("POST", "/api/v1/auth/setup", json: setupBody("anything"))
        #expect(r.status == 403)
        #expect(r.errorCode == "setup_closed")
    }

    @Test func wrongTokensAreThrottledPerAddress() async throws {
        let server = try await TestServer.start(seedAdmin: false)
        defer { Task { await server.stop() } }
        var statuses: [Int] = []
        for i in 0..<25 { statuses.append(try await server.call("POST", "/api/v1/auth/setup", json: setupBody("guess\(i)")).status) }
        #expect(statuses.prefix(20).allSatisfy { $0 == 403 }, "\(statuses)")
        #expect(statuses.suffix(5).allSatisfy { $0 == 429 }, "\(statuses)")
    }
}

@Suite struct AuditFilterTests {
    @Test func filtersByEventAndUserAndPagesWithNextBefore() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        for _ in 0..<3 { _ = try await server.call("POST", "/api/v1/auth/login", json: ["login": "emp", "password": "wrong password!"]) }
        #expect(try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: ["role": "admin"]).status == 200)

        let failures = try await server.call("GET", "/api/v1/admin/audit?event=login.failure", token: boss.token).json()
        let failureItems = failures["items"]?.arrayValue ?? []
        #expect(failureItems.count == 3)
        #expect(failureItems.allSatisfy { $0["event"] == "login.failure" && $0["targetId"]?.numberValue == Double(emp.userID) })
        #expect(failures["nextBefore"] == .null)

        let aboutEmp = try await server.call("GET", "/api/v1/admin/audit?userId=\(emp.userID)", token: boss.token).json()["items"]?.arrayValue ?? []
        let empID = Double(emp.userID)
        #expect(aboutEmp.allSatisfy { $0["actorId"]?.numberValue == empID || $0["targetId"]?.numberValue == empID })
        #expect(Set(aboutEmp.compactMap { $0["event"]?.stringValue }) == ["user.create", "login.success", "login.failure", "role.change"])
        let bossLogins = try await server.call("GET", "/api/v1/admin/audit?event=login.success&userId=\(boss.userID)", token: boss.token)
            .json()["items"]?.arrayValue ?? []
        #expect(bossLogins.count == 1)

        // Pages of one follow the same order as one page of all.
        let all = try await server.call("GET", "/api/v1/admin/audit?userId=\(emp.userID)&limit=200", token: boss.token).json()
        let expected = all["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue } ?? []
        var seen: [Double] = []
        var before: Double?
        repeat {
            let page = try await server.call("GET", "/api/v1/admin/audit?userId=\(emp.userID)&limit=2" + (before.map { "&before=\(Int($0))" } ?? ""),
                                             token: boss.token).json()
            seen += page["items"]?.arrayValue?.compactMap { $0["id"]?.numberValue } ?? []
            before = page["nextBefore"]?.numberValue
        } while before != nil && seen.count < 100
        #expect(seen == expected)
        #expect(expected == expected.sorted(by: >), "newest first")

        #expect(try await server.call("GET", "/api/v1/admin/audit?event=nothing.like.this", token: boss.token).json()["items"] == [])
        for bad in ["userId=abc", "before=x", "limit=0", "event=" + String(repeating: "e", count: 65)] {
            let r = try await server.call("GET", "/api/v1/admin/audit?\(bad)", token: boss.token)
            #expect(r.status == 422, "\(bad)")
        }
        let events = try await server.call("GET", "/api/v1/admin/audit/events", token: boss.token).json()["items"]?.arrayValue ?? []
        let names = events.compactMap(\.stringValue)
        #expect(names == names.sorted())
        for name in ["login.success", "login.failure", "role.change", "setup.admin_created", "avatar.set"] { #expect(names.contains(name)) }
        #expect(try await server.call("GET", "/api/v1/admin/audit/events", token: emp.token).status == 200, "emp is an admin now")
    }

    /// SQLite's plans (PostgreSQL picks by its statistics, a scan for a table this small).
    @Test func theFiltersUseIndexes() async throws {
        let database = try TestDatabase(.sqlite)
        let store = try database.open()
        defer { Task { await store.close() } }
        var migrations = MigrationList()
        AccountsRepository.registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        let plans = try await store.read { db in
            try ["a.event = 'x'", "a.actor_id = 1 OR a.target_id = 1"].map { filter in
                try db.query("EXPLAIN QUERY PLAN SELECT a.id FROM accounts_audit a WHERE a.id < 99 AND (\(filter)) ORDER BY a.id DESC LIMIT 5")
                    .compactMap { $0.string("detail") }.joined(separator: "; ")
            }
        }
        #expect(plans[0].contains("accounts_audit_by_event"), "\(plans[0])")
        #expect(plans[1].contains("accounts_audit_by_actor") && plans[1].contains("accounts_audit_by_target"), "\(plans[1])")
    }
}

@Suite struct AdminProfileTests {
    @Test func adminsEditEveryProfileFieldAndPicture() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        let patch = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token, json: [
            "position": "Técnica de sistemas", "phone": "+34 600 000 000", "twitter": "@emp_x", "linkedin": "emp-x", "bio": "Line 1\nLine 2",
            "status": "On call", "country": "Spain", "language": "es", "notificationsEnabled": false,
        ])
        #expect(patch.status == 200, "\(patch.text)")
        let me = try await server.call("GET", "/api/v1/me", token: emp.token).json()
        #expect(me["position"] == "Técnica de sistemas")
        #expect(me["twitter"] == "emp_x")
        #expect(me["bio"] == "Line 1\nLine 2")
        #expect(me["language"] == "es")
        #expect(me["notificationsEnabled"] == false)
        let bad = try await server.call("PATCH", "/api/v1/admin/users/\(emp.userID)", token: boss.token,
                                        json: ["phone": "call me", "twitter": "much too long for a handle", "language": "Spanish"])
        #expect(bad.status == 422)
        let fields = try bad.json()["error"]?["details"]?["fields"]
        for f in ["phone", "twitter", "language"] { #expect(fields?[f] != nil, "\(f)") }

        let put = try await server.call("PUT", "/api/v1/admin/users/\(emp.userID)/avatar", token: boss.token, raw: png)
        #expect(put.status == 200, "\(put.text)")
        let url = try #require(try put.json()["avatarUrl"]?.stringValue)
        #expect(url.hasPrefix("/api/v1/users/\(emp.userID)/avatar?v="))
        let image = try await server.call("GET", url, token: emp.token)
        #expect(image.body == png)
        #expect(image.header("Content-Type") == "image/png")
        #expect(try await server.call("PUT", "/api/v1/admin/users/\(emp.userID)/avatar", token: boss.token, raw: gif).status == 415)
        #expect(try await server.call("PUT", "/api/v1/admin/users/999/avatar", token: boss.token, raw: png).status == 404)
        let tooBig = try await server.call("PUT", "/api/v1/admin/users/\(emp.userID)/avatar", token: boss.token,
                                           raw: png + [UInt8](repeating: 0, count: 2 * 1024 * 1024))
        #expect(tooBig.status == 413)
        let denied = try await server.call("PUT", "/api/v1/admin/users/\(boss.userID)/avatar", token: emp.token, raw: png)
        #expect(denied.status == 403)
        #expect(try await server.call("DELETE", "/api/v1/admin/users/\(boss.userID)/avatar", token: emp.token).status == 403)

        #expect(try await server.call("DELETE", "/api/v1/admin/users/\(emp.userID)/avatar", token: boss.token).status == 204)
        #expect(try await server.call("GET", "/api/v1/users/\(emp.userID)/avatar", token: emp.token).status == 404)
        #expect(try await server.call("GET", "/api/v1/me", token: emp.token).json()["avatarUrl"] == .null)
        #expect(try await server.call("DELETE", "/api/v1/admin/users/999/avatar", token: boss.token).status == 404)

        let audit = try await server.call("GET", "/api/v1/admin/audit?userId=\(emp.userID)", token: boss.token).json()["items"]?.arrayValue ?? []
        let avatarEvents = audit.filter { ($0["event"]?.stringValue ?? "").hasPrefix("avatar.") }
        #expect(avatarEvents.compactMap { $0["event"]?.stringValue } == ["avatar.remove", "avatar.set"])
        #expect(avatarEvents.allSatisfy { $0["actorId"]?.numberValue == Double(boss.userID) })
    }
}

@Suite struct FoldingTests {
    static let cases: [(String, String)] = [
        ("Álvaro Gómez", "alvaro gomez"), ("ÑANDÚ", "nandu"), ("Straße", "strasse"), ("Łukasz Żółć", "lukasz zolc"),
        ("Øre Æble", "ore aeble"), ("François Œuvre", "francois oeuvre"), ("Nguyễn Thị Minh", "nguyen thi minh"),
        ("Jose\u{301} Pen\u{303}a", "jose pena"), ("  two   spaces\there ", "two spaces here"), ("Đorđe İnce", "dorde ince"),
        ("Þór Ðan", "thor dan"), ("Иван Öztürk", "иван ozturk"), ("O'Brien-Smith 3rd", "o'brien-smith 3rd"), ("", ""),
    ]

    @Test(arguments: cases)
    func foldsCaseAndAccents(input: String, folded: String) {
        #expect(SearchKey.fold(input) == folded)
    }

    @Test func searchWordsIncludePartsOfCompoundWordsAndWholeLogins() {
        let words = SearchKey.words(of: ["María García-López", "Jefa de I+D"], whole: ["maria.g", "María@Example.com"])
        #expect(words == ["maria", "garcia-lopez", "garcia", "lopez", "jefa", "de", "i+d", "i", "d", "maria.g", "maria@example.com"])
        #expect(SearchKey.queryWords("  Gómez   ÁLV ") == ["gomez", "alv"])
        #expect(SearchKey.queryWords(String(repeating: "a ", count: 20)).count == 8)
    }

    func names(_ r: WireResponse) throws -> [String] {
        try r.json()["items"]?.arrayValue?.compactMap { $0["displayName"]?.stringValue } ?? []
    }

    @Test func theDirectoryMatchesAndSortsIgnoringCaseAndAccents() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        for (u, name) in [("alvaro", "Álvaro Gómez"), ("zoe", "Zoë Adams"), ("bob", "bob Brown"), ("nuria", "Núria Peña"), ("emil", "Émile Zola")] {
            _ = try await server.createUser(u, name: name, as: boss)
        }
        let alvaro = try await server.call("GET", "/api/v1/users?q=alvaro", token: boss.token).json()["items"]?.arrayValue?.first?["id"]?.numberValue ?? 0
        #expect(try await server.call("PATCH", "/api/v1/admin/users/\(Int(alvaro))", token: boss.token,
                                      json: ["position": "Jefe de Ventas Única"]).status == 200)
        let all = try await server.call("GET", "/api/v1/users", token: boss.token)
        #expect(try names(all) == ["Álvaro Gómez", "bob Brown", "Émile Zola", "Núria Peña", "The Boss", "Zoë Adams"])
        for (q, expected) in [("gomez", ["Álvaro Gómez"]), ("GÓM", ["Álvaro Gómez"]), ("álv", ["Álvaro Gómez"]), ("pena", ["Núria Peña"]),
                              ("nuria p", ["Núria Peña"]), ("zoe", ["Zoë Adams"]), ("ventas", ["Álvaro Gómez"]), ("unica", ["Álvaro Gómez"]),
                              ("jefe", ["Álvaro Gómez"]), ("emile", ["Émile Zola"]), ("z", ["Émile Zola", "Zoë Adams"]), ("efe", []),
                              ("gomez alv", ["Álvaro Gómez"]), ("ventas gomez", ["Álvaro Gómez"]), ("gomez bob", [])] {
            let r = try await server.call("GET", "/api/v1/users?q=\(q.addingPercentEncoding)", token: boss.token)
            #expect(try names(r) == expected, "q=\(q)")
        }
        // Keyset paging follows the folded order.
        var paged: [String] = []
        var after: Double?
        repeat {
            let page = try await server.call("GET", "/api/v1/users?limit=2" + (after.map { "&after=\(Int($0))" } ?? ""), token: boss.token)
            paged += try names(page)
            after = try page.json()["nextAfter"]?.numberValue
        } while after != nil && paged.count < 20
        #expect(paged == (try names(all)))
        // Clearing the position clears its key.
        #expect(try await server.call("PATCH", "/api/v1/admin/users/\(Int(alvaro))", token: boss.token, json: ["position": .null]).status == 200)
        #expect(try names(await server.call("GET", "/api/v1/users?q=ventas", token: boss.token)) == [])
    }

    @Test func employeesSeeOnlyActiveUsers() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let emp = try await server.createUser("emp", as: boss)
        for status in ["inactive", "all"] {
            let r = try await server.call("GET", "/api/v1/users?status=\(status)", token: emp.token)
            #expect(r.status == 403, "\(status)")
            #expect(r.errorCode == "forbidden")
            #expect(try await server.call("GET", "/api/v1/users?status=\(status)", token: boss.token).status == 200)
        }
        #expect(try await server.call("GET", "/api/v1/users?status=active", token: emp.token).status == 200)
        #expect(try await server.call("GET", "/api/v1/users?status=bogus", token: emp.token).status == 422)
    }

    @Test func migration003FoldsExistingRows() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.path + "/sgem.db", logger: Logger(label: "store"))
        var old = MigrationList()
        AccountsRepository.registerMigrations(&old, through: "accounts.002_integer_timestamps")
        _ = try await store.migrate(old)
        try await store.write { db in
            try db.execute("""
                INSERT INTO accounts_users (id, username, email, email_lower, password_hash, role, display_name, name_key, position, created_at)
                VALUES (1, 'alvaro', 'a@example.com', 'a@example.com', 'x', 'admin', 'Álvaro Gómez', 'álvaro gómez', 'Jefe Técnico', 0),
                       (2, 'bob', 'b@example.com', 'b@example.com', 'x', 'employee', 'Bob', 'bob', NULL, 0)
                """)
        }
        var all = MigrationList()
        AccountsRepository.registerMigrations(&all)
        #expect(try await store.migrate(all) == ["accounts.003_folded_search_keys", "accounts.004_first_password_and_language",
                                                "accounts.005_invites", "accounts.006_shared_limits"])
        let (rows, words) = try await store.read { db in
            (try db.query("SELECT name_key FROM accounts_users ORDER BY id"),
             try db.query("SELECT word FROM accounts_user_words WHERE user_id = 1 ORDER BY word"))
        }
        #expect(rows.map { $0.string("name_key") } == ["alvaro gomez", "bob"])
        #expect(words.compactMap { $0.string("word") } == ["a@example.com", "alvaro", "gomez", "jefe", "tecnico"])
        await store.close()
    }
}

extension String {
    /// Percent-encoded for a query value (tests only: letters stay, everything else is %XX).
    var addingPercentEncoding: String {
        utf8.map { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) ? String(UnicodeScalar(b)) : percentEncoded(b)
        }.joined()
    }
}

private func percentEncoded(_ byte: UInt8) -> String {
    let hex = Array("0123456789ABCDEF")
    return "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
}
