import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Getting in and out: login, logout, registration, first-run setup, and what the login screen
/// asks before anyone is logged in (`/api/v1/auth/…`).
struct SessionsController: AccountsController {
    let runtime: AccountsRuntime
    var hasher: PasswordHasher { runtime.service.hasher }

    func register(_ routes: RouteGroup) {
        let pending = users(routes, whilePasswordChangeRequired: true)
        routes.post("/auth/login", maxBody: 8 * 1024, doc: Self.loginDoc, login)
        routes.post("/auth/register", maxBody: 8 * 1024, doc: Self.registerDoc, register)
        routes.get("/auth/registration", doc: Self.registrationDoc, registration)
        routes.get("/auth/setup", doc: Self.setupStatusDoc, setupStatus)
        routes.post("/auth/setup", maxBody: 8 * 1024, doc: Self.setupDoc, setup)
        routes.get("/auth/password-help", doc: Self.passwordHelpDoc, passwordHelp)
        pending.post("/auth/logout", doc: Self.logoutDoc, logout)
    }

    // MARK: Login and logout

    static let loginDoc = RouteDoc(
        summary: "Log in by username or email; returns a bearer token and sets the session cookie", tags: ["accounts"],
        requestSchema: object(["login": string, "password": string], required: ["login", "password"]),
        responses: [ResponseDoc(status: 200, description: "Logged in", schema: sessionSchema),
                    ResponseDoc(status: 401, description: "invalid_credentials (unknown user and wrong password alike)"),
                    ResponseDoc(status: 403, description: "account_inactive"),
                    AccountsAPI.notJSON,
                    ResponseDoc(status: 429, description: "rate_limited, with Retry-After"),
                    ResponseDoc(status: 503, description: "busy: too many password checks waiting, with Retry-After")])

    /// The throttle reserves the attempt (per account and per address) before any hashing, so
    /// simultaneous guesses cannot outrun it; the reservation ends as a failure, a success, or —
    /// when no answer about the password was reached (hasher busy, store error) — a release.
    @Sendable func login(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = try LoginBody(request)
        let login = body.login
        let address = request.clientAddress
        let found = try await service.user(login: login)
        // One counter per account, whether it is reached by username or email.
        let attempt: ThrottleAttempt
        do {
            attempt = try await runtime.throttle.reserveLogin(account: found?.0.username ?? login, address: address)
        } catch {
            runtime.logins.increment(by: 1, ["throttled"])
            throw error
        }
        let verified: Bool
        do {
            verified = try await verify(body.password, against: found?.1, for: address)
        } catch {
            try? await runtime.throttle.release(attempt)
            if case AccountsError.hasherBusy = error { runtime.logins.increment(by: 1, ["busy"]) }
            throw error
        }
        guard verified, let (user, hash) = found else {
            try await runtime.throttle.fail(attempt)
            runtime.logins.increment(by: 1, ["failure"])
            try await service.recordLoginFailure(login: login, userID: found?.0.id, reason: found == nil ? "unknown user" : "wrong password", ip: address)
            context.logger.notice("login failed", ["request.id": context.requestID, "remote": address])
            throw AccountsError.invalidCredentials
        }
        guard user.active else {
            try? await runtime.throttle.release(attempt)
            runtime.logins.increment(by: 1, ["inactive"])
            try await service.recordLoginFailure(login: login, userID: user.id, reason: "account inactive", ip: address)
            throw AccountsError.accountInactive
        }
        try await runtime.throttle.succeed(attempt)
        // A hash at another cost than the configured one is redone (so the dummy hash follows the
        // configured cost); a busy hasher must not turn a right password into a failed login: next time.
        let upgraded = hasher.needsRehash(hash) ? try? await hasher.hash(body.password, for: address) : nil
        let session = service.sessions.makeSession()
        let record = try await service.recordLogin(user, session: session, upgradedHash: upgraded, login: login,
                                                client: SessionManager.ClientInfo(request))
        runtime.logins.increment(by: 1, ["success"])
        return AccountsAPI.sessionResponse(session, record, status: 200, request: request)
    }

    /// Whether `password` matches `hash`; without a hash (no such user) or with an oversized
    /// password, the same work against the dummy hash, and false.
    func verify(_ password: String, against hash: String?, for address: String) async throws -> Bool {
        if let hash, password.utf8.count <= PasswordHasher.maxPasswordBytes {
            return try await hasher.verify(password, against: hash, for: address)
        }
        let bounded = String(decoding: password.utf8.prefix(PasswordHasher.maxPasswordBytes), as: UTF8.self)
        _ = try await hasher.verify(bounded, against: await service.dummyHash(), for: address)
        return false
    }

    static let logoutDoc = RouteDoc(summary: "End this session and clear the cookie", tags: ["accounts"],
                                    responses: [ResponseDoc(status: 204, description: "Logged out")], authenticated: true)

    @Sendable func logout(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await service.logout(try context.user(), ip: request.clientAddress)
        var response = Response.noContent()
        response.headers.add("Set-Cookie", SessionManager.clearingCookie(secure: request.isSecure))
        return response
    }

    // MARK: Registration

    static let registerDoc = RouteDoc(
        summary: "Create an account with an invitation, or when registration is open (or open to the email's domain)",
        description: """
            With invite (the token of an invitation link) the account is made whatever the registration setting, with \
            the invitation's role, and takes one of its uses; an unknown, expired, used-up or revoked invitation gets \
            404 invite_not_found and nothing is made. Without invite, an address outside the allowed domain gets 403 \
            registration_closed.
            """, tags: ["accounts"],
        requestSchema: object(["username": string, "email": string, "password": string, "displayName": string, "language": string,
                               "invite": string],
                              required: ["username", "email", "password"]),
        responses: [ResponseDoc(status: 201, description: "Registered and logged in", schema: sessionSchema),
                    ResponseDoc(status: 403, description: "registration_closed"),
                    ResponseDoc(status: 404, description: "invite_not_found"),
                    AccountsAPI.nameTaken,
                    AccountsAPI.invalid,
                    ResponseDoc(status: 429, description: "rate_limited: too many registrations from this address, with Retry-After"),
                    AccountsAPI.busy])

    /// With an invitation the policy does not apply: the invitation decides the role, and one
    /// of its uses is taken in the account's own transaction (`AccountService.create`).
    @Sendable func register(_ request: Request, _ context: RequestContext) async throws -> Response {
        let settings = try await runtime.companySettings.current()
        let body = try RegisterBody(request, settings: settings)
        let account = body.account
        var invite: InviteRecord?
        if let token = body.invite { invite = try await runtime.checkedInvite(token, from: request.clientAddress) }
        if invite == nil && settings.registration == "domain" {
            let domain = settings.registrationDomain ?? ""
            guard !domain.isEmpty, account.email.lowercased().hasSuffix("@" + domain.lowercased()) else {
                throw AccountsError.registrationClosed(domain: domain)
            }
        }
        try await service.checkAvailable(username: account.username, email: account.email)
        // Each registration costs a hash and may be a throw-away account: throttled per address like logins.
        let attempt = try await runtime.throttle.reserveRegistration(address: request.clientAddress)
        let hash: String
        do {
            hash = try await hasher.hash(body.password, for: request.clientAddress)
        } catch {
            try? await runtime.throttle.release(attempt)
            throw error
        }
        try await runtime.throttle.fail(attempt)
        let session = service.sessions.makeSession()
        let record = try await service.create(username: account.username, email: account.email, displayName: account.displayName,
                                              role: invite?.role ?? .employee, language: account.language, passwordHash: hash,
                                              event: "user.register", actor: Actor(userID: nil, ip: request.clientAddress),
                                              session: session, client: SessionManager.ClientInfo(request), invite: invite?.id)
        return AccountsAPI.sessionResponse(session, record, status: 201, request: request)
    }

    static let registrationDoc = RouteDoc(
        summary: "Whether people may sign up by themselves, for the login screen (no token needed)",
        description: """
            mode is open (anyone), domain (only addresses at domain) or closed (an invitation link is needed); \
            domain is null unless mode is domain. companyName is the company's name, null until an admin gives one.
            """, tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "The registration policy", schema: registrationSchema)])

    @Sendable func registration(_ request: Request, _ context: RequestContext) async throws -> Response {
        let settings = try await runtime.companySettings.current()
        let mode = CompanySettingsValue.registrationModes.contains(settings.registration) ? settings.registration : "closed"
        let domain = mode == "domain" ? settings.registrationDomain.flatMap { $0.isEmpty ? nil : $0 } : nil
        return .json(RegistrationView(mode: mode == "domain" && domain == nil ? "closed" : mode, domain: domain,
                                      companyName: try await runtime.companyName()))
    }

    // MARK: First-run setup

    static let setupStatusDoc = RouteDoc(
        summary: "Whether first-run setup is still possible (no token needed)", tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "open is true while no active admin exists and the setup link is unused",
                                schema: setupStatusSchema)])

    @Sendable func setupStatus(_ request: Request, _ context: RequestContext) async throws -> Response {
        let open = try await runtime.setup.hasToken() ? try await service.activeAdminIDs().isEmpty : false
        return .json(SetupStatusView(open: open))
    }

    static let setupDoc = RouteDoc(
        summary: "First run: create the first admin with the one-time token the server printed at start",
        description: "The token comes from the link http://HOST:PORT/setup#token=TOKEN. Answers like a login.",
        tags: ["accounts"],
        requestSchema: object(["token": string, "username": string, "email": string, "password": string, "displayName": string,
                               "language": string], required: ["token", "username", "email", "password"]),
        responses: [ResponseDoc(status: 201, description: "The admin, logged in", schema: sessionSchema),
                    ResponseDoc(status: 403, description: "setup_closed: wrong or used token, or an active admin exists"),
                    AccountsAPI.nameTaken,
                    AccountsAPI.notJSON,
                    AccountsAPI.invalid,
                    ResponseDoc(status: 429, description: "rate_limited: too many wrong tokens from this address, with Retry-After"),
                    AccountsAPI.busy])

    /// `POST /auth/setup`: the first admin, from the one-time token. A wrong token counts against
    /// the address like a wrong password; the token dies once an admin is made.
    @Sendable func setup(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = try SetupBody(request, defaultLanguage: try await runtime.companySettings.current().defaultLanguage)
        let attempt = try await runtime.throttle.reserveSetup(address: request.clientAddress)
        guard body.token.utf8.count <= 128, try await runtime.setup.matches(body.token) else {
            try await runtime.throttle.fail(attempt)
            throw AccountsError.setupClosed
        }
        try? await runtime.throttle.release(attempt)
        guard try await service.activeAdminIDs().isEmpty else {
            try await runtime.setup.close()
            throw AccountsError.setupClosed
        }
        try body.check()
        let account = body.account
        try await service.checkAvailable(username: account.username, email: account.email)
        let hash = try await hasher.hash(body.password, for: request.clientAddress)
        let session = service.sessions.makeSession()
        let record = try await service.create(username: account.username, email: account.email, displayName: account.displayName,
                                              role: .admin, language: account.language, passwordHash: hash, event: "setup.admin_created",
                                              actor: Actor(userID: nil, ip: request.clientAddress), session: session,
                                              client: SessionManager.ClientInfo(request), onlyIfNoActiveAdmin: true)
        try await runtime.setup.close()
        context.logger.notice("first admin created by setup", ["request.id": context.requestID, "user.id": String(record.id)])
        return AccountsAPI.sessionResponse(session, record, status: 201, request: request)
    }

    static let passwordHelpDoc = RouteDoc(
        summary: "Whom to ask about a forgotten password, for the login screen (no token needed)",
        description: """
            There is no e-mail: an admin resets a forgotten password. adminName is the display name of the first \
            active admin (by id: usually whoever set the company up) whose display name is not their username or \
            email, so that nothing here helps to guess a login; null when there is none.
            """, tags: ["accounts"],
        responses: [ResponseDoc(status: 200, description: "Whom to ask", schema: passwordHelpSchema)])

    @Sendable func passwordHelp(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(PasswordHelpView(adminName: try await service.passwordHelpAdminName()))
    }
}
