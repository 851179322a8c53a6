import SGEMAccounts
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite struct AuthTests {
    @Test(arguments: ["boss", "BOSS", "  Boss ", "boss@example.com", "Boss@Example.COM"])
    func logsInByUsernameOrEmailCaseInsensitively(login: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let r = try await server.call("POST", "/api/v1/auth/login", json: ["login": .string(login), "password": .string(adminPassword)])
        #expect(r.status == 200, "\(r.text)")
        let v = try r.json()
        #expect(v["user"]?["username"] == "boss")
        #expect(v["user"]?["role"] == "admin")
        #expect(v["user"]?["lastLoginAt"]?.stringValue != nil)
        #expect((v["token"]?.stringValue?.count ?? 0) == 43, "256-bit token, base64url")
        #expect(v["csrfToken"]?.stringValue?.isEmpty == false)
        #expect(v["expiresAt"]?.stringValue.flatMap { Timestamp(rfc3339: $0) } != nil)
        let cookie = try #require(r.header("Set-Cookie"))
        #expect(cookie.hasPrefix("sgem_session=\(v["token"]?.stringValue ?? "-");"))
        for attribute in ["Path=/", "HttpOnly", "SameSite=Lax"] { #expect(cookie.contains(attribute)) }
        #expect(!cookie.contains("Secure"), "plain HTTP gets no Secure attribute")
        #expect(r.header("Cache-Control") == "no-store")
    }

    @Test func unknownUserAndWrongPasswordGetTheSameAnswer() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let unknown = try await server.call("POST", "/api/v1/auth/login", json: ["login": "nobody", "password": "whatever-password"])
        let wrong = try await server.call("POST", "/api/v1/auth/login", json: ["login": "boss", "password": "whatever-password"])
        #expect(unknown.status == 401)
        #expect(wrong.status == 401)
        #expect(unknown.errorCode == "invalid_credentials")
        #expect(unknown.body == wrong.body)
        #expect(unknown.header("Set-Cookie") == nil)
        let missing = try await server.call("POST", "/api/v1/auth/login", json: ["login": "boss"])
        #expect(missing.status == 422)
        #expect(try missing.json()["error"]?["details"]?["fields"]?["password"] != nil)
        let notJSON = try await server.call("POST", "/api/v1/auth/login", raw: Array("login=boss".utf8),
                                            headers: [("Content-Type", "application/json")])
        #expect(notJSON.status == 400)
        #expect(notJSON.errorCode == "invalid_json")
    }

    @Test func credentialsAreCheckedOnEveryRequest() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let none = try await server.call("GET", "/api/v1/me")
        #expect(none.status == 401)
        #expect(none.errorCode == "unauthenticated")
        let bogus = try await server.call("GET", "/api/v1/me", token: "not-a-real-token")
        #expect(bogus.status == 401)
        #expect(bogus.errorCode == "session_expired")
        let basic = try await server.call("GET", "/api/v1/me", headers: [("Authorization", "Basic Ym9zczpwdw==")])
        #expect(basic.status == 401)
        let session = try await server.login()
        let me = try await server.call("GET", "/api/v1/me", token: session.token)
        #expect(me.status == 200)
        #expect(try me.json()["notificationsEnabled"] == true)
        let viaCookie = try await server.call("GET", "/api/v1/me", headers: [("Cookie", "theme=dark; sgem_session=\(session.token)")])
        #expect(viaCookie.status == 200, "a safe cookie request needs no CSRF token")
    }

    @Test func logoutRevokesTheSessionAndClearsTheCookie() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let a = try await server.login()
        let b = try await server.login()
        let out = try await server.call("POST", "/api/v1/auth/logout", token: a.token)
        #expect(out.status == 204)
        let cleared = try #require(out.header("Set-Cookie"))
        #expect(cleared.hasPrefix("sgem_session=;"))
        #expect(cleared.contains("Max-Age=0"))
        let after = try await server.call("GET", "/api/v1/me", token: a.token)
        #expect(after.status == 401)
        #expect(after.errorCode == "session_expired")
        #expect(try await server.call("GET", "/api/v1/me", token: b.token).status == 200, "other sessions stay")
    }

    enum CSRFCase: String, CaseIterable, Sendable {
        case noToken, wrongToken, foreignOrigin, nullOrigin, rightToken, rightTokenSameOrigin, bearerWithoutToken
    }

    @Test(arguments: CSRFCase.allCases)
    func cookieRequestsNeedTheCSRFTokenAndASameOrigin(_ c: CSRFCase) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let s = try await server.login()
        let host = "127.0.0.1:\(server.port)"
        var headers: [(String, String)] = [s.cookieHeader]
        var token: String?
        switch c {
        case .noToken: break
        case .wrongToken: headers.append(("X-CSRF-Token", "x" + s.csrf))
        case .foreignOrigin: headers += [("X-CSRF-Token", s.csrf), ("Origin", "http://evil.example")]
        case .nullOrigin: headers += [("X-CSRF-Token", s.csrf), ("Origin", "null")]
        case .rightToken: headers.append(("X-CSRF-Token", s.csrf))
        case .rightTokenSameOrigin: headers += [("X-CSRF-Token", s.csrf), ("Origin", "http://\(host)")]
        case .bearerWithoutToken: headers = []; token = s.token
        }
        let r = try await server.call("PATCH", "/api/v1/me", token: token, json: ["status": "in the office"], headers: headers)
        switch c {
        case .noToken, .wrongToken, .foreignOrigin, .nullOrigin:
            #expect(r.status == 403)
            #expect(r.errorCode == "csrf_failed")
            let me = try await server.call("GET", "/api/v1/me", token: s.token)
            #expect(try me.json()["status"] == .null, "the refused change did not happen")
        case .rightToken, .rightTokenSameOrigin, .bearerWithoutToken:
            #expect(r.status == 200, "\(r.text)")
            #expect(try r.json()["status"] == "in the office")
        }
    }

    @Test func inactiveAccountsCannotLogIn() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let boss = try await server.login()
        let ann = try await server.createUser("ann", as: boss)
        let off = try await server.call("PATCH", "/api/v1/admin/users/\(ann.userID)", token: boss.token, json: ["active": false])
        #expect(off.status == 200)
        let r = try await server.call("POST", "/api/v1/auth/login", json: ["login": "ann", "password": "password-of-ann"])
        #expect(r.status == 403)
        #expect(r.errorCode == "account_inactive")
        let wrong = try await server.call("POST", "/api/v1/auth/login", json: ["login": "ann", "password": "wrong-password!"])
        #expect(wrong.errorCode == "invalid_credentials", "only the right password learns that the account is inactive")
    }

    @Test func repeatedFailuresAreThrottledWithRetryAfter() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        for _ in 0..<5 {
            let r = try await server.call("POST", "/api/v1/auth/login", json: ["login": "boss", "password": "guess-guess-guess"])
            #expect(r.status == 401)
        }
        let locked = try await server.call("POST", "/api/v1/auth/login", json: ["login": "BOSS", "password": .string(adminPassword)])
        #expect(locked.status == 429)
        #expect(locked.errorCode == "rate_limited")
        let retry = try #require(locked.header("Retry-After").flatMap { Int($0) })
        #expect((1...900).contains(retry))
        let byEmail = try await server.call("POST", "/api/v1/auth/login", json: ["login": "boss@example.com", "password": .string(adminPassword)])
        #expect(byEmail.status == 429, "the lock is on the account, whichever name it is reached by")
        // Another account from the same address is not locked: addresses allow more failures.
        let other = try await server.call("POST", "/api/v1/auth/login", json: ["login": "nobody", "password": "guess-guess-guess"])
        #expect(other.status == 401)
    }

    @Test func theLockEndsAfterItsDelayAndSuccessClearsTheCounter() async throws {
        let clock = ManualClock()
        let server = try await ModuleServer(throttle: ThrottlePolicy(accountFailures: 3, addressFailures: 100, window: 600, baseLock: 20, maxLock: 120,
                                                                     now: { clock.now }))
        defer { Task { await server.stop() } }
        func attempt(_ password: String) async throws -> WireResponse {
            try await httpCall(port: server.port, "POST", "/api/v1/auth/login", json: ["login": "boss", "password": .string(password)])
        }
        for _ in 0..<3 { #expect(try await attempt("nope-nope-nope").status == 401) }
        let locked = try await attempt(adminPassword)
        #expect(locked.status == 429)
        #expect(locked.header("Retry-After") == "20")
        clock.advance(21)
        #expect(try await attempt("nope-nope-nope").status == 401, "a failure after the lock locks again, twice as long")
        let longer = try await attempt(adminPassword)
        #expect(longer.header("Retry-After") == "40")
        clock.advance(41)
        #expect(try await attempt(adminPassword).status == 200)
        // The success cleared the counter: three new failures are needed for a new lock.
        for _ in 0..<2 { #expect(try await attempt("nope-nope-nope").status == 401) }
        #expect(try await attempt(adminPassword).status == 200)
    }
}
