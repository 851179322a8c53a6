@testable import SGEMAccounts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// One login over a new connection on a thread of `burstThreads`, so that many are in flight at once.
func burstLogin(port: Int, _ login: String, _ password: String) async -> WireResponse? {
    let body = Array(JSONValue.object([("login", .string(login)), ("password", .string(password))]).serialized().utf8)
    return try? await burstThreads.run {
        try httpRequest(port: port, method: "POST", path: "/api/v1/auth/login", headers: [("Content-Type", "application/json")], body: body)
    }
}

/// `guesses` simultaneous wrong passwords for `boss` on real sockets, and the right one sent
/// once the first refusal has come back (inside the burst).
func guessBurst(_ server: ModuleServer, guesses: Int) async -> (answers: [WireResponse], correct: WireResponse?) {
    let answers = Shared<[WireResponse]>([])
    let correct = Shared<WireResponse?>(nil)
    await withTaskGroup(of: Void.self) { group in
        for _ in 0..<guesses {
            group.addTask {
                if let r = await burstLogin(port: server.port, "boss", "a wrong guess") { answers.withLock { $0.append(r) } }
            }
        }
        group.addTask {
            _ = await eventually { answers.withLock { $0.contains { $0.status != 401 } } }
            let r = await burstLogin(port: server.port, "boss", adminPassword)
            correct.withLock { $0 = r }
        }
    }
    return (answers.value, correct.value)
}

/// A login of `boss` from 10.0.0.2, timed, while `flooders` tasks loop bogus logins from
/// 10.0.0.1 in-process; the real login starts once the flood holds hashing work. Returns its
/// time and status, and the flood's answers by status.
func loginDuringFlood(_ server: ModuleServer, flooders: Int) async throws -> (seconds: Double, status: Int, flood: [Int: Int]) {
    let hasher = try #require(server.accounts?.service.hasher)
    let stop = Shared(false)
    let flood = Shared<[Int: Int]>([:])
    var during = (seconds: 0.0, status: 0)
    await withTaskGroup(of: Void.self) { group in
        for i in 0..<flooders {
            group.addTask {
                var n = 0
                while !stop.value {
                    n += 1
                    let r = await server.login("bogus\(i)-\(n)", "not a password", from: "10.0.0.1")
                    flood.withLock { $0[r.status, default: 0] += 1 }
                    // A refused flooder comes straight back, paced as a network round trip would pace it
                    // (in-process, an unpaced loop of instant refusals would only measure CPU starvation).
                    if r.status != 401 { try? await Task.sleep(nanoseconds: 2_000_000) }
                }
            }
        }
        _ = await eventually { hasher.scheduler.activeCount("10.0.0.1") >= 4 }
        during = await server.timedLogin()
        stop.withLock { $0 = true }
    }
    return (during.seconds, during.status, flood.value)
}

extension ModuleServer {
    /// `boss` logging in from 10.0.0.2, timed.
    func timedLogin() async -> (seconds: Double, status: Int) {
        let started = MonotonicClock.nanoseconds()
        let r = await login("boss", adminPassword, from: "10.0.0.2")
        return (Double(MonotonicClock.nanoseconds() - started) / 1e9, r.status)
    }
}

@Suite struct ConcurrentLoginTests {
    @Test func simultaneousGuessesReachTheHasherAtMostFiveTimes() async throws {
        let server = try await ModuleServer(throttle: ThrottlePolicy())
        defer { Task { await server.stop() } }
        let before = server.hashesDone
        let (all, correct) = await guessBurst(server, guesses: 30)
        #expect(all.count == 30)
        let verified = all.filter { $0.status == 401 }
        let refused = all.filter { $0.status == 429 }
        #expect(!verified.isEmpty && verified.count <= 5, "\(verified.count) guesses verified")
        #expect(verified.count + refused.count == 30, "\(all.map(\.status))")
        #expect(refused.allSatisfy { $0.errorCode == "rate_limited" && Int($0.header("Retry-After") ?? "") ?? 0 >= 1 })
        #expect(server.hashesDone - before <= 5, "at most five derivations: \(server.hashesDone - before)")
        #expect(correct?.status == 429, "a right password inside the burst is refused while the account is locked")
    }

    @Test func aFloodFromOneAddressOnTheWireIsRefusedCheaply() async throws {
        let server = try await ModuleServer(throttle: ThrottlePolicy())
        defer { Task { await server.stop() } }
        let before = server.hashesDone
        let answers = Shared<[WireResponse]>([])
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<40 {
                group.addTask {
                    if let r = await burstLogin(port: server.port, "nobody\(i)", "a bogus password") { answers.withLock { $0.append(r) } }
                }
            }
        }
        let statuses = answers.value.map(\.status)
        #expect(statuses.count == 40)
        #expect(statuses.allSatisfy { [401, 429, 503].contains($0) }, "\(statuses)")
        #expect(statuses.contains { $0 == 429 || $0 == 503 }, "the flood is refused: \(statuses)")
        for busy in answers.value where busy.status == 503 {
            #expect(busy.errorCode == "busy")
            #expect(busy.header("Retry-After") == "1")
        }
        #expect(server.hashesDone - before <= 20, "the address threshold bounds the work: \(server.hashesDone - before)")
    }

    /// In-process, so that the flood and the real user come from different addresses. The
    /// address throttle is set out of reach: only the hashing queue's fairness protects here.
    @Test func aFloodFromOneAddressDoesNotStallALoginFromAnother() async throws {
        let server = try await ModuleServer(throttle: ThrottlePolicy(addressFailures: 1_000_000), logN: 13)
        defer { Task { await server.stop() } }
        #expect(await server.timedLogin().status == 200)   // upgrades the seeded hash to log N 13
        let (_, status, answers) = try await loginDuringFlood(server, flooders: 60)
        // Answered during the flood. That the queue serves it in turn is HashSchedulerTests' to
        // show (in steps, not seconds); how long it takes, AbuseMeasurements' to print.
        #expect(status == 200)
        #expect((answers[503] ?? 0) > 0, "the flood is refused with 503 busy: \(answers)")
        #expect(Set(answers.keys).isSubset(of: [401, 503]), "\(answers)")
    }

    @Test func registrationIsThrottledByAddress() async throws {
        let server = try await ModuleServer(throttle: ThrottlePolicy(addressRegistrations: 2))
        defer { Task { await server.stop() } }
        let boss = try await LoggedIn(httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)]))
        let open = try await httpCall(port: server.port, "PUT", "/api/v1/admin/settings", json: ["registration": "open"],
                                      headers: [boss.cookieHeader, ("X-CSRF-Token", boss.csrf)])
        #expect(open.status == 200, "\(open.text)")
        func register(_ name: String) async throws -> WireResponse {
            try await httpCall(port: server.port, "POST", "/api/v1/auth/register",
                               json: ["username": .string(name), "email": .string("\(name)@example.com"), "password": "a long password"])
        }
        #expect(try await register("one").status == 201)
        #expect(try await register("two").status == 201)
        let third = try await register("three")
        #expect(third.status == 429)
        #expect(third.errorCode == "rate_limited")
        #expect(third.header("Retry-After") != nil)
    }
}

@Suite struct MediaTypeTests {
    @Test func jsonEndpointsRefuseBodiesNotDeclaredJSON() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let body = Array(JSONValue.object([("login", "boss"), ("password", .string(adminPassword))]).serialized().utf8)
        for type in [nil, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"] as [String?] {
            let r = try await clientThreads.run {
                try httpRequest(port: server.port, method: "POST", path: "/api/v1/auth/login", headers: type.map { [("Content-Type", $0)] } ?? [], body: body)
            }
            #expect(r.status == 415, "Content-Type \(type ?? "none")")
            #expect(r.errorCode == "unsupported_media_type")
            #expect(r.header("Set-Cookie") == nil)
        }
        let declared = try await server.call("POST", "/api/v1/auth/login", raw: body, headers: [("Content-Type", "Application/JSON; charset=utf-8")])
        #expect(declared.status == 200)
        // Another module's JSON endpoint gets the same rule (the company settings).
        let boss = try LoggedIn(declared)
        let settings = try await server.call("PUT", "/api/v1/admin/settings", token: boss.token, raw: Array(#"{"defaultLanguage":"es"}"#.utf8),
                                             headers: [("Content-Type", "text/plain")])
        #expect(settings.status == 415)
        // An empty body without Content-Type stays allowed where the body is optional.
        let emp = try await server.createUser("emp", as: boss)
        let reset = try await clientThreads.run {
            try httpRequest(port: server.port, method: "POST", path: "/api/v1/admin/users/\(emp.userID)/password-reset",
                            headers: [("Authorization", "Bearer \(boss.token)")])
        }
        #expect(reset.status == 200, "\(reset.text)")
    }

    @Test func decodeAndJSONBodyApplyTheSameRule() throws {
        struct Payload: Codable { var a: Int }
        let bare = Request(method: .POST, target: "/", body: Array(#"{"a":1}"#.utf8))
        for attempt in [{ _ = try bare.decode(Payload.self) }, { _ = try JSONBody(bare) }] as [() throws -> Void] {
            do { try attempt(); Issue.record("a body without Content-Type must be refused") } catch let error as APIError {
                #expect(error.status == 415)
                #expect(error.code == "unsupported_media_type")
            }
        }
        let empty = Request(method: .POST, target: "/")
        #expect(throws: Never.self) { try empty.checkJSONMediaType() }
        do { _ = try JSONBody(empty); Issue.record("an empty body is not a JSON object") } catch let error as APIError {
            #expect(error.code == "invalid_json")
        }
    }
}

@Suite struct SafeDefaultsTests {
    @Test func responsesCarryingAPasswordAreNotStored() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let generated = try await server.call("POST", "/api/v1/admin/users", token: boss.token, json: ["username": "gen", "email": "gen@example.com"])
        #expect(generated.status == 201)
        #expect(try generated.json()["password"]?.stringValue != nil)
        #expect(generated.header("Cache-Control") == "no-store")
        let id = try #require(try generated.json()["user"]?["id"]?.numberValue)
        let reset = try await server.call("POST", "/api/v1/admin/users/\(Int(id))/password-reset", token: boss.token)
        #expect(reset.status == 200)
        #expect(reset.header("Cache-Control") == "no-store")
        let me = try await server.call("GET", "/api/v1/me", token: boss.token)
        #expect(me.header("Cache-Control") != "no-store", "only the secret-carrying answers are marked")
    }

    @Test func aFailingRenewalDoesNotFailTheRequest() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let store = server.running.store
        // The session was last used long enough ago to be renewed, and every session update fails.
        try await store.write { db in
            try db.execute("UPDATE accounts_sessions SET last_used_at = last_used_at - 600000")
            switch db.dialect {
            case .postgresql:
                try db.executeScript("""
                    CREATE FUNCTION test_refuse_renewal() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'renewal refused by the test'; END $$;
                    CREATE TRIGGER test_refuse_renewal BEFORE UPDATE ON accounts_sessions
                    FOR EACH ROW EXECUTE FUNCTION test_refuse_renewal();
                    """)
            default:
                try db.executeScript("""
                    CREATE TRIGGER test_refuse_renewal BEFORE UPDATE ON accounts_sessions
                    BEGIN SELECT RAISE(ABORT, 'renewal refused by the test'); END;
                    """)
            }
        }
        let before = try await store.read { db in try db.queryOne("SELECT last_used_at, expires_at FROM accounts_sessions") }
        let me = try await server.call("GET", "/api/v1/me", token: boss.token)
        #expect(me.status == 200, "\(me.text)")
        let after = try await store.read { db in try db.queryOne("SELECT last_used_at, expires_at FROM accounts_sessions") }
        #expect(after?.int64("last_used_at") == before?.int64("last_used_at"), "the renewal was attempted and failed")
        try await store.write { db in
            try db.execute(db.dialect == .postgresql ? "DROP TRIGGER test_refuse_renewal ON accounts_sessions" : "DROP TRIGGER test_refuse_renewal")
        }
        #expect(try await server.call("GET", "/api/v1/me", token: boss.token).status == 200)
        let renewed = try await store.read { db in try db.queryOne("SELECT last_used_at FROM accounts_sessions") }
        #expect((renewed?.int64("last_used_at") ?? 0) > (before?.int64("last_used_at") ?? 0), "the next request renews it")
    }

    @Test func theDirectoryPagesByCursor() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        for name in ["ann", "bob", "cat", "dan"] {
            let r = try await server.call("POST", "/api/v1/admin/users", token: boss.token,
                                          json: ["username": .string(name), "email": .string("\(name)@example.com"), "displayName": .string(name.capitalized)])
            #expect(r.status == 201)
        }
        var seen: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let r = try await server.call("GET", "/api/v1/users?status=all&limit=2" + (after.map { "&after=" + $0 } ?? ""), token: boss.token)
            #expect(r.status == 200)
            let v = try r.json()
            #expect(v["total"] == 5)
            let items = v["items"]?.arrayValue ?? []
            #expect(items.count <= 2)
            seen += items.compactMap { $0["username"]?.stringValue }
            after = v["nextAfter"]?.numberValue.map { String(Int($0)) }
            if after != nil { #expect(after == items.last?["id"]?.numberValue.map { String(Int($0)) }) }
            pages += 1
        } while after != nil && pages < 10
        #expect(pages == 3)
        #expect(seen == ["ann", "bob", "cat", "dan", "boss"], "by display name (The Boss last), each once")
        let everything = try await server.call("GET", "/api/v1/users?status=all", token: boss.token).json()
        #expect(everything["items"]?.arrayValue?.count == 5)
        #expect(everything["nextAfter"] == .null)
        for bad in ["limit=0", "limit=201", "limit=x", "after=abc", "after=999999"] {
            let r = try await server.call("GET", "/api/v1/users?" + bad, token: boss.token)
            #expect(r.status == 422, "\(bad)")
        }
    }
}

@Suite struct CredentialSourceTests {
    /// A session cookie for `boss` and the authenticator, from a module server.
    func setUp() async throws -> (ModuleServer, LoggedIn, any SessionAuthenticator) {
        let server = try await ModuleServer(throttle: ThrottlePolicy())
        let boss = try await LoggedIn(httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)]))
        let authenticator = try #require(server.context.services.resolve((any SessionAuthenticator).self))
        return (server, boss, authenticator)
    }

    func upgrade(_ headers: [(String, String)], secure: Bool = false, target: String = "/api/v1/realtime") -> Request {
        Request(method: .GET, target: target,
                headers: HTTPHeaders([("Host", "sgem.example:8080"), ("Upgrade", "websocket"), ("Connection", "Upgrade")] + headers),
                isSecure: secure)
    }

    @Test func cookieWebSocketUpgradesMustComeFromTheServersOrigin() async throws {
        let (server, boss, authenticator) = try await setUp()
        defer { Task { await server.stop() } }
        let cookie = boss.cookieHeader
        #expect(try await authenticator.authenticate(upgrade([cookie, ("Origin", "http://sgem.example:8080")]))?.id == boss.userID)
        #expect(try await authenticator.authenticate(upgrade([cookie, ("Origin", "https://sgem.example:8080")], secure: true))?.id == boss.userID)
        let refused: [Request] = [
            upgrade([cookie, ("Origin", "http://evil.example")]),
            upgrade([cookie]),
            upgrade([cookie, ("Origin", "https://sgem.example:8080")]),
            upgrade([cookie, ("Origin", "http://sgem.example:8080")], secure: true),
            upgrade([cookie, ("Origin", "null")]),
        ]
        for request in refused {
            do {
                _ = try await authenticator.authenticate(request)
                Issue.record("accepted \(request.headers["Origin"] ?? "no Origin") (secure: \(request.isSecure))")
            } catch let error as APIError {
                #expect(error.status == 403)
                #expect(error.code == "csrf_failed")
            }
        }
        // A bearer token is not sent by browsers on their own: its upgrades need no Origin check.
        let bearer = upgrade([("Authorization", "Bearer \(boss.token)"), ("Origin", "http://evil.example")])
        #expect(try await authenticator.authenticate(bearer)?.id == boss.userID)
        // A plain GET with the cookie is not an upgrade and is unaffected.
        let plain = Request(method: .GET, target: "/api/v1/me", headers: HTTPHeaders([cookie, ("Origin", "http://evil.example")]))
        #expect(try await authenticator.authenticate(plain)?.id == boss.userID)
    }

    @Test func queryTokensWorkOnlyWhereARouteOptsIn() async throws {
        let (server, boss, _) = try await setUp()
        defer { Task { await server.stop() } }
        let router = Router()
        let feed = router.group("", middleware: [RequireUser(services: server.context.services, allowQueryToken: true)])
        let ordinary = router.group("", middleware: [RequireUser(services: server.context.services)])
        feed.get("/feed") { _, context in .json(["id": .number(Double(try context.user().id))] as JSONValue) }
        ordinary.get("/plain") { _, context in .json(["id": .number(Double(try context.user().id))] as JSONValue) }
        let viaQuery = await router.respond(to: Request(method: .GET, target: "/feed?token=\(boss.token)"))
        #expect(viaQuery.status == 200)
        #expect(try JSONValue.parse(viaQuery.body)["id"]?.numberValue == Double(boss.userID))
        #expect(await router.respond(to: Request(method: .GET, target: "/feed?token=not-a-token")).status == 401)
        #expect(await router.respond(to: Request(method: .GET, target: "/feed")).status == 401)
        #expect(await router.respond(to: Request(method: .GET, target: "/plain?token=\(boss.token)")).status == 401, "ordinary routes ignore ?token=")
        // And on the real server's ordinary routes.
        let me = try await httpCall(port: server.port, "GET", "/api/v1/me?token=\(boss.token)")
        #expect(me.status == 401)
        #expect(me.errorCode == "unauthenticated")
    }
}

@Suite struct AccountsDataTests {
    @Test func migration002ConvertsTimestampsToEpochMilliseconds() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let store = try Store(path: dir.path + "/sgem.db", logger: Logger(label: "store"))
        var old = MigrationList()
        AccountsRepository.registerMigrations(&old, through: "accounts.001_users")
        _ = try await store.migrate(old)
        try await store.write { db in
            try db.execute("""
                INSERT INTO accounts_users (id, username, email, email_lower, password_hash, role, display_name, name_key, created_at, last_login_at)
                VALUES (1, 'ann', 'Ann@example.com', 'ann@example.com', 'x', 'admin', 'Ann', 'ann', '2026-11-30T20:24:06Z', '2026-12-01T08:00:00.250Z'),
                       (2, 'bob', 'bob@example.com', 'bob@example.com', 'x', 'employee', 'Bob', 'bob', '2025-01-02T03:04:05Z', NULL)
                """)
            try db.execute("""
                INSERT INTO accounts_sessions (user_id, token_digest, csrf_digest, created_at, last_used_at, expires_at)
                VALUES (1, 'd1', 'c1', 1764534246, 1764534300, 1765139046)
                """)
            try db.execute("INSERT INTO accounts_audit (at, event, actor_id) VALUES ('2026-11-30T20:24:06Z', 'login.success', 1)")
        }
        var all = MigrationList()
        AccountsRepository.registerMigrations(&all)
        #expect(try await store.migrate(all) == ["accounts.002_integer_timestamps", "accounts.003_folded_search_keys",
                                                "accounts.004_first_password_and_language", "accounts.005_invites", "accounts.006_shared_limits"])
        // Accounts from before keep their password and their language as their own.
        let kept = try await store.read { db in try db.queryOne("SELECT must_change_password, language_chosen FROM accounts_users WHERE id = 1") }
        #expect(kept?["must_change_password"] == .integer(0))
        #expect(kept?["language_chosen"] == .integer(1))
        let (ann, bob, types, session, audit) = try await store.read { db in
            (try AccountsRepository.user(id: 1, in: db), try AccountsRepository.user(id: 2, in: db),
             try db.queryOne("SELECT typeof(created_at) AS c, typeof(last_login_at) AS l FROM accounts_users WHERE id = 1"),
             try AccountsRepository.session(tokenDigest: "d1", in: db),
             try AccountsRepository.auditPage(before: nil, limit: 10, in: db))
        }
        #expect(types?.string("c") == "integer")
        #expect(types?.string("l") == "integer")
        #expect(ann?.createdAt == Timestamp(rfc3339: "2026-11-30T20:24:06Z"))
        #expect(ann?.lastLoginAt?.milliseconds == Timestamp(rfc3339: "2026-12-01T08:00:00.250Z")?.milliseconds)
        #expect(bob?.createdAt.rfc3339() == "2025-01-02T03:04:05Z")
        #expect(bob?.lastLoginAt == nil)
        #expect(session?.createdAt == 1_764_534_246_000)
        #expect(session?.lastUsedAt == 1_764_534_300_000)
        #expect(session?.expiresAt == 1_765_139_046_000)
        #expect(audit.first?.at?.rfc3339() == "2026-11-30T20:24:06Z")
        #expect(audit.first?.view.at == "2026-11-30T20:24:06Z", "the API still shows RFC 3339")
        // New rows are written as integers too.
        let newID = try await store.write { db in
            try AccountsRepository.insertUser(username: "cat", email: "cat@example.com", displayName: "Cat", role: .employee,
                                              language: AccountLanguage(code: "en", chosen: true), passwordHash: "x", mustChangePassword: false,
                                              createdAt: Timestamp(milliseconds: 1_000_123), lastLoginAt: nil, in: db)
        }
        let cat = try await store.read { db in try db.queryOne("SELECT created_at FROM accounts_users WHERE id = ?", newID) }
        #expect(cat?["created_at"] == .integer(1_000_123))
        await store.close()
    }

    @Test func theJobRemovesExpiredSessionsAndThrottleEntries() async throws {
        let clock = ManualClock()
        let server = try await ModuleServer(throttle: ThrottlePolicy(window: 60, baseLock: 30, now: { clock.now }))
        defer { Task { await server.stop() } }
        let runtime = try #require(server.accounts)
        let kept = try await LoggedIn(httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)]))
        let gone = try await LoggedIn(httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(adminPassword)]))
        let wrong = try await httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "nobody", "password": "wrong password"])
        #expect(wrong.status == 401)
        #expect(try await runtime.throttle.entryCount() == 2, "the unknown account and the address")
        let past = Timestamp.now().milliseconds - 1
        try await server.store.write { db in
            try db.execute("UPDATE accounts_sessions SET expires_at = ? WHERE token_digest = ?", past, SessionManager.digest(gone.token))
        }
        #expect(try await runtime.expireSessionsAndThrottle(now: .now()) == (1, 0), "the throttle entries are still in their window")
        clock.advance(61)
        try await runtime.expireSessionsAndThrottle(now: .now())
        #expect(try await runtime.throttle.entryCount() == 0)
        let count = try await server.store.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM accounts_sessions")?.int("n") }
        #expect(count == 1)
        #expect(try await httpCall(port: server.port, "GET", "/api/v1/me", token: kept.token).status == 200)
        #expect(try await httpCall(port: server.port, "GET", "/api/v1/me", token: gone.token).status == 401)
    }
}
