import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The Accounts section of the API (`/api/v1/auth`, `/me`, `/users`, `/admin/users`, `/admin/audit`).
struct AccountsRoutes: Sendable {
    static let maxAvatarBytes = 2 * 1024 * 1024

    static let notJSON = ResponseDoc(status: 415, description: "unsupported_media_type (the body must be application/json)")
    static let busy = ResponseDoc(status: 503, description: "busy, with Retry-After")
    static let nameTaken = ResponseDoc(status: 409, description: "username_taken or email_taken")

    let runtime: AccountsRuntime
    let services: ServiceRegistry
    let logger: Logger

    var service: AccountService { runtime.service }
    var hasher: PasswordHasher { runtime.service.hasher }

    func register(_ routes: RouteGroup) {
        let anyone = routes
        let user = routes.group("", middleware: [RequireUser(services: services)])
        // What a person whose password was generated or reset may still do: see who they are,
        // choose their own password, log out. Everything else answers 403 password_change_required.
        let pending = routes.group("", middleware: [RequireUser(services: services, whilePasswordChangeRequired: true)])
        let admin = routes.group("/admin", middleware: [RequireAdmin(services: services)])
        let declaredAuditEvents = runtime.declaredAuditEvents

        anyone.post("/auth/login", maxBody: 8 * 1024, doc: RouteDoc(
            summary: "Log in by username or email; returns a bearer token and sets the session cookie", tags: ["accounts"],
            requestSchema: object(["login": string, "password": string], required: ["login", "password"]),
            responses: [ResponseDoc(status: 200, description: "Logged in", schema: sessionSchema),
                        ResponseDoc(status: 401, description: "invalid_credentials (unknown user and wrong password alike)"),
                        ResponseDoc(status: 403, description: "account_inactive"),
                        AccountsRoutes.notJSON,
                        ResponseDoc(status: 429, description: "rate_limited, with Retry-After"),
                        ResponseDoc(status: 503, description: "busy: too many password checks waiting, with Retry-After")])) { request, context in
            try await login(request, context)
        }
        anyone.post("/auth/register", maxBody: 8 * 1024, doc: RouteDoc(
            summary: "Create an account with an invitation, or when registration is open (or open to the email's domain)",
            description: """
                With invite (the token of an invitation link) the account is made whatever the registration setting, with                 the invitation's role, and takes one of its uses; an unknown, expired, used-up or revoked invitation gets                 404 invite_not_found and nothing is made. Without invite, an address outside the allowed domain gets 403                 registration_closed.
                """, tags: ["accounts"],
            requestSchema: object(["username": string, "email": string, "password": string, "displayName": string, "language": string,
                                   "invite": string],
                                  required: ["username", "email", "password"]),
            responses: [ResponseDoc(status: 201, description: "Registered and logged in", schema: sessionSchema),
                        ResponseDoc(status: 403, description: "registration_closed"),
                        ResponseDoc(status: 404, description: "invite_not_found"),
                        AccountsRoutes.nameTaken,
                        ResponseDoc(status: 422, description: "validation_failed"),
                        ResponseDoc(status: 429, description: "rate_limited: too many registrations from this address, with Retry-After"),
                        AccountsRoutes.busy])) { request, context in
            try await register(request, context)
        }
        registerInvites(anyone: anyone, admin: admin)
        anyone.get("/auth/setup", doc: RouteDoc(
            summary: "Whether first-run setup is still possible (no token needed)", tags: ["accounts"],
            responses: [ResponseDoc(status: 200, description: "open is true while no active admin exists and the setup link is unused",
                                    schema: object(["open": boolean], required: ["open"]))])) { _, _ in
            let open = try await runtime.setup.hasToken() ? try await service.activeAdminIDs().isEmpty : false
            return .json(["open": .bool(open)] as JSONValue)
        }
        anyone.post("/auth/setup", maxBody: 8 * 1024, doc: RouteDoc(
            summary: "First run: create the first admin with the one-time token the server printed at start",
            description: "The token comes from the link http://HOST:PORT/setup#token=TOKEN. Answers like a login.",
            tags: ["accounts"],
            requestSchema: object(["token": string, "username": string, "email": string, "password": string, "displayName": string,
                                   "language": string], required: ["token", "username", "email", "password"]),
            responses: [ResponseDoc(status: 201, description: "The admin, logged in", schema: sessionSchema),
                        ResponseDoc(status: 403, description: "setup_closed: wrong or used token, or an active admin exists"),
                        AccountsRoutes.nameTaken,
                        AccountsRoutes.notJSON,
                        ResponseDoc(status: 422, description: "validation_failed"),
                        ResponseDoc(status: 429, description: "rate_limited: too many wrong tokens from this address, with Retry-After"),
                        AccountsRoutes.busy])) { request, context in
            try await setup(request, context)
        }
        anyone.get("/auth/password-help", doc: RouteDoc(
            summary: "Whom to ask about a forgotten password, for the login screen (no token needed)",
            description: """
                There is no e-mail: an admin resets a forgotten password. adminName is the display name of the first                 active admin (by id: usually whoever set the company up) whose display name is not their username or                 email, so that nothing here helps to guess a login; null when there is none.
                """, tags: ["accounts"],
            responses: [ResponseDoc(status: 200, description: "Whom to ask", schema: object(["adminName": nullableString], required: ["adminName"]))])) { _, _ in
            .json(["adminName": try await service.passwordHelpAdminName().map(JSONValue.string) ?? .null] as JSONValue)
        }
        pending.post("/auth/logout", doc: RouteDoc(summary: "End this session and clear the cookie", tags: ["accounts"],
                                                responses: [ResponseDoc(status: 204, description: "Logged out")], authenticated: true)) { request, context in
            let me = try context.user()
            try await service.logout(me, request: request)
            var response = Response.noContent()
            response.headers.add("Set-Cookie", SessionManager.clearingCookie(secure: request.isSecure))
            return response
        }
        pending.get("/me", doc: RouteDoc(
            summary: "The logged-in user, with private settings",
            description: AccountsRoutes.passwordChangeRequiredDoc, tags: ["accounts"],
                                      responses: [ResponseDoc(status: 200, description: "The user", schema: privateUserSchema)],
                                      authenticated: true)) { _, context in
            guard let record = try await service.user(id: try context.user().id) else { throw APIError.notFound("no such user") }
            return .json(record.privateJSON)
        }
        user.patch("/me", maxBody: 16 * 1024, doc: RouteDoc(
            summary: "Edit my profile (fields left out keep their value; null or \"\" clears)", tags: ["accounts"],
            requestSchema: profileSchema(admin: false),
            responses: [ResponseDoc(status: 200, description: "The user", schema: privateUserSchema),
                        ResponseDoc(status: 422, description: "validation_failed")], authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let changes = AccountsRoutes.profileChanges(&body, includeEmail: false)
            try body.check()
            let record = try await service.update(userID: me.id, changes: changes, actor: .user(me.id, request))
            return .json(record.privateJSON)
        }
        pending.put("/me/password", maxBody: 8 * 1024, doc: RouteDoc(
            summary: "Change my password; my other sessions end",
            description: "Choosing my own password clears mustChangePassword. " + AccountsRoutes.passwordChangeRequiredDoc,
            tags: ["accounts"],
            requestSchema: object(["currentPassword": string, "newPassword": string], required: ["currentPassword", "newPassword"]),
            responses: [ResponseDoc(status: 204, description: "Changed"),
                        ResponseDoc(status: 422, description: "validation_failed (currentPassword is incorrect, newPassword too short)"),
                        ResponseDoc(status: 429, description: "rate_limited after repeated wrong current passwords")],
            authenticated: true)) { request, context in
            try await changePassword(request, context)
        }
        user.put("/me/avatar", maxBody: AccountsRoutes.maxAvatarBytes, doc: RouteDoc(
            summary: "Upload my picture: PNG, JPEG or WebP (recognised by content), at most 2 MiB", tags: ["accounts"],
            requestSchema: ["type": "string", "format": "binary"], requestContentType: "application/octet-stream",
            responses: [ResponseDoc(status: 200, description: "The new URL", schema: object(["avatarUrl": string])),
                        ResponseDoc(status: 413, description: "payload_too_large"),
                        ResponseDoc(status: 415, description: "unsupported_media_type")], authenticated: true)) { request, context in
            try await uploadAvatar(request, userID: try context.user().id, auditedAs: nil)
        }
        user.delete("/me/avatar", doc: RouteDoc(summary: "Remove my picture", tags: ["accounts"],
                                                responses: [ResponseDoc(status: 204, description: "Removed")], authenticated: true)) { _, context in
            try await service.deleteAvatar(userID: try context.user().id)
            return .noContent()
        }
        user.get("/users", doc: RouteDoc(
            summary: "The team directory, by display name then username",
            description: """
                Each word of q must start a word of the name or the position, or start the username or the email, \
                ignoring case and accents ("gomez alv" finds Álvaro Gómez); order ignores them too. status is active (default), inactive or all; only admins may ask for inactive or all \
                (403 forbidden otherwise). total and active count the whole company. Page with limit (1 to 200) and after=<id of the last user seen>; \
                nextAfter is that id when another page follows, else null. Without limit, the first 500.
                """,
            tags: ["accounts"],
            query: [QueryDoc("q", "words matched against the starts of name and position words, the username and the email"),
                    QueryDoc("status", "active (the default); admins also inactive or all", schema: ["type": "string", "enum": ["active", "inactive", "all"]]),
                    QueryDoc("limit", "how many users, 1 to 200", schema: ["type": "integer"]),
                    QueryDoc("after", "the id of the last user seen", schema: ["type": "integer"])],
            responses: [ResponseDoc(status: 200, description: "The users", schema: object(["items": ["type": "array", "items": userSchema],
                                                                                           "nextAfter": nullableInteger,
                                                                                           "total": integer, "active": integer])),
                        ResponseDoc(status: 403, description: "forbidden: status inactive or all needs an admin"),
                        ResponseDoc(status: 422, description: "validation_failed (status, limit or after)")],
            authenticated: true)) { request, context in
            try await listUsers(request, as: try context.user())
        }
        user.get("/users/{id}", doc: RouteDoc(summary: "One user's public profile", tags: ["accounts"],
                                              responses: [ResponseDoc(status: 200, description: "The user", schema: userSchema)],
                                              authenticated: true)) { request, _ in
            guard let id = Int64(request.parameters["id"] ?? ""), let record = try await service.user(id: id) else {
                throw APIError.notFound("no such user")
            }
            let away = await Away.lookup([record.id], services: services, logger: logger)
            return .json(Away.mark(record.publicJSON, from: away))
        }
        user.get("/users/{id}/avatar", doc: RouteDoc(
            summary: "A user's picture, with ETag; cached for good when ?v= names its current version", tags: ["accounts"],
            responses: [ResponseDoc(status: 200, description: "The image", schema: ["type": "string", "format": "binary"], contentType: "image/*"),
                        ResponseDoc(status: 304, description: "Not modified"),
                        ResponseDoc(status: 404, description: "No picture")], authenticated: true)) { request, _ in
            try await avatar(request)
        }

        admin.post("/users", maxBody: 16 * 1024, doc: RouteDoc(
            summary: "Create a user; a password is generated (and shown once) when none is given",
            description: """
                With a generated password the user must choose their own at the first login (mustChangePassword). \
                Without language the account follows the company's default until its first login in the console, \
                which adopts the browser's language when the console speaks it (languageChosen false until then).
                """, tags: ["accounts", "admin"],
            requestSchema: object(["username": string, "email": string, "displayName": string, "role": ["type": "string", "enum": ["admin", "employee"]],
                                   "password": string, "language": string], required: ["username", "email"]),
            responses: [ResponseDoc(status: 201, description: "Created", schema: object(["user": userSchema, "password": string])),
                        AccountsRoutes.nameTaken,
                        ResponseDoc(status: 422, description: "validation_failed")], authenticated: true)) { request, context in
            try await createUser(request, context)
        }
        admin.patch("/users/{id}", maxBody: 16 * 1024, doc: RouteDoc(
            summary: "Edit a user: role, active, profile fields, email",
            description: "Deactivation ends the user's sessions at once. 409 last_admin when the change would leave no active admin.",
            tags: ["accounts", "admin"],
            requestSchema: profileSchema(admin: true),
            responses: [ResponseDoc(status: 200, description: "The user", schema: userSchema),
                        ResponseDoc(status: 404, description: "not_found"),
                        ResponseDoc(status: 409, description: "last_admin or email_taken"),
                        ResponseDoc(status: 422, description: "validation_failed")], authenticated: true)) { request, context in
            let me = try context.user()
            guard let id = Int64(request.parameters["id"] ?? "") else { throw APIError.notFound("no such user") }
            var body = try JSONBody(request)
            let changes = AccountsRoutes.profileChanges(&body, includeEmail: true)
            var role: UserRole?
            if let raw = body.string("role") {
                role = UserRole(rawValue: raw)
                if role == nil { body.problem("role", "must be admin or employee") }
            }
            let active = body.bool("active")
            try body.check()
            let record = try await service.update(userID: id, changes: changes, role: role, active: active, actor: .user(me.id, request))
            return .json(record.publicJSON)
        }
        admin.post("/users/{id}/password-reset", doc: RouteDoc(
            summary: "Give a user a new temporary password (shown once); all their sessions end",
            description: "The user must choose their own at the next login (mustChangePassword).", tags: ["accounts", "admin"],
            responses: [ResponseDoc(status: 200, description: "The temporary password", schema: object(["password": string])),
                        ResponseDoc(status: 404, description: "not_found")], authenticated: true)) { request, context in
            let me = try context.user()
            guard let id = Int64(request.parameters["id"] ?? ""), try await service.user(id: id) != nil else {
                throw APIError.notFound("no such user")
            }
            let password = AccountRules.generatedPassword()
            let hash = try await hasher.hash(password, for: request.clientAddress)
            try await service.setPassword(userID: id, hash: hash, mustChange: true, keepSession: nil, event: "password.reset",
                                          actor: .user(me.id, request))
            return AccountsRoutes.notStored(.json(["password": .string(password)] as JSONValue))
        }
        admin.put("/users/{id}/avatar", maxBody: AccountsRoutes.maxAvatarBytes, doc: RouteDoc(
            summary: "Set a user's picture: PNG, JPEG or WebP (recognised by content), at most 2 MiB; audited", tags: ["accounts", "admin"],
            requestSchema: ["type": "string", "format": "binary"], requestContentType: "application/octet-stream",
            responses: [ResponseDoc(status: 200, description: "The new URL", schema: object(["avatarUrl": string])),
                        ResponseDoc(status: 404, description: "not_found"),
                        ResponseDoc(status: 413, description: "payload_too_large"),
                        ResponseDoc(status: 415, description: "unsupported_media_type")], authenticated: true)) { request, context in
            guard let id = Int64(request.parameters["id"] ?? "") else { throw APIError.notFound("no such user") }
            return try await uploadAvatar(request, userID: id, auditedAs: .user(try context.user().id, request))
        }
        admin.delete("/users/{id}/avatar", doc: RouteDoc(
            summary: "Remove a user's picture; audited", tags: ["accounts", "admin"],
            responses: [ResponseDoc(status: 204, description: "Removed"), ResponseDoc(status: 404, description: "not_found")],
            authenticated: true)) { request, context in
            guard let id = Int64(request.parameters["id"] ?? "") else { throw APIError.notFound("no such user") }
            try await service.deleteAvatar(userID: id, auditedAs: .user(try context.user().id, request))
            return .noContent()
        }
        admin.get("/audit", doc: RouteDoc(
            summary: "The audit log, newest first: sign-ins, people, settings, the company, holidays, notices, translation",
            description: """
                Page with ?before=<id of the last item seen>&limit= (default 50, at most 200); nextBefore is the id to pass \
                as before for the next page, null at the end. event keeps one event name (holiday.approved) or one kind, \
                the name's first word (holiday keeps holiday.approved, holiday.public_added, …); several, comma-separated \
                (user,role,password), keep any of them. GET /admin/audit/events lists the names. userId keeps the events \
                that user did or underwent. Entries made at the command line have no actor and say "(command line)".
                """, tags: ["accounts", "admin"],
            query: [QueryDoc("before", "the id of the last event seen; events older than it follow", schema: ["type": "integer"]),
                    QueryDoc("limit", "how many events, 1 to 200 (default 50)", schema: ["type": "integer"]),
                    QueryDoc("event", "only these event names or kinds, comma-separated: login.failure, holiday, user,role,password"),
                    QueryDoc("userId", "only events this user did (actor) or underwent (target)", schema: ["type": "integer"])],
            responses: [ResponseDoc(status: 200, description: "The events", schema: object(["items": ["type": "array", "items": auditSchema],
                                                                                            "nextBefore": nullableInteger])),
                        ResponseDoc(status: 422, description: "validation_failed (before, limit, event or userId)")],
            authenticated: true)) { request, _ in
            var problems: [String: String] = [:]
            func id(_ name: String, _ problem: String) -> Int64? {
                guard let raw = request.query[name], !raw.isEmpty else { return nil }
                guard let value = Int64(raw) else { problems[name] = problem; return nil }
                return value
            }
            let beforeID = id("before", "must be an event id")
            let userID = id("userId", "must be a user id")
            var limit = 50
            if let raw = request.query["limit"], !raw.isEmpty {
                if let n = Int(raw), n >= 1 { limit = min(n, 200) } else { problems["limit"] = "must be a whole number from 1 to 200" }
            }
            let events = AccountsRoutes.auditFilter(request.query["event"] ?? "", problems: &problems)
            if !problems.isEmpty { throw APIError.validationFailed(problems) }
            let page = try await service.auditPage(before: beforeID, limit: limit, events: events, userID: userID)
            return .json([
                "items": .array(page.items.map(\.json)),
                "nextBefore": page.more ? page.items.last.map { .number(Double($0.id)) } ?? .null : .null,
            ] as JSONValue)
        }
        admin.get("/audit/events", doc: RouteDoc(
            summary: "The audit log's event names, for filtering", tags: ["accounts", "admin"],
            responses: [ResponseDoc(status: 200, description: "The names, sorted", schema: object(["items": ["type": "array", "items": string]]))],
            authenticated: true)) { _, _ in
            .json(["items": .array(try await service.auditEventNames(declared: declaredAuditEvents).map(JSONValue.string))] as JSONValue)
        }
    }

    /// The `event` filter: up to 20 comma-separated names or kinds, each 1 to 64 of a-z 0-9 . _
    /// (so none can be mistaken for a pattern); empty keeps every event.
    static func auditFilter(_ raw: String, problems: inout [String: String]) -> [String] {
        let filters = raw.split(separator: ",").map { String($0).trimmingWhitespace() }.filter { !$0.isEmpty }
        let valid = filters.count <= 20 && filters.allSatisfy { f in
            (1...64).contains(f.utf8.count) && f.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F }
                && !f.hasPrefix(".") && !f.hasSuffix(".")
        }
        if !valid { problems["event"] = "must be up to 20 event names or kinds (a-z, 0-9, . and _), comma-separated"; return [] }
        return filters
    }

    // MARK: Handlers

    /// The throttle reserves the attempt (per account and per address) before any hashing, so
    /// simultaneous guesses cannot outrun it; the reservation ends as a failure, a success, or —
    /// when no answer about the password was reached (hasher busy, store error) — a release.
    func login(_ request: Request, _ context: RequestContext) async throws -> Response {
        var body = try JSONBody(request)
        let rawLogin = body.string("login", required: true) ?? ""
        let password = body.string("password", required: true) ?? ""
        try body.check()
        let login = String(rawLogin.trimmingWhitespace().lowercased().prefix(254))
        let address = request.clientAddress
        let found = try await service.user(login: login)
        // One counter per account, whether it is reached by username or email.
        let key = found?.0.username ?? login
        let attempt: LoginThrottle.Attempt
        do {
            attempt = try await runtime.throttle.reserveLogin(account: key, address: address)
        } catch {
            runtime.logins.increment(by: 1, ["throttled"])
            throw error
        }
        var verified = false
        do {
            if let (_, hash) = found, password.utf8.count <= PasswordHasher.maxPasswordBytes {
                verified = try await hasher.verify(password, against: hash, for: address)
            } else {
                // Same work for an unknown user as for a wrong password.
                let bounded = String(decoding: password.utf8.prefix(PasswordHasher.maxPasswordBytes), as: UTF8.self)
                _ = try await hasher.verify(bounded, against: await service.dummyHash(), for: address)
            }
        } catch {
            try? await runtime.throttle.release(attempt)
            if (error as? APIError)?.code == "busy" { runtime.logins.increment(by: 1, ["busy"]) }
            throw error
        }
        guard verified, let (user, hash) = found else {
            try await runtime.throttle.fail(attempt)
            runtime.logins.increment(by: 1, ["failure"])
            try await service.recordLoginFailure(login: login, userID: found?.0.id, reason: found == nil ? "unknown user" : "wrong password", request: request)
            context.logger.notice("login failed", ["request.id": context.requestID, "remote": address])
            throw APIError(status: 401, code: "invalid_credentials", message: "wrong username, email or password")
        }
        guard user.active else {
            try? await runtime.throttle.release(attempt)
            runtime.logins.increment(by: 1, ["inactive"])
            try await service.recordLoginFailure(login: login, userID: user.id, reason: "account inactive", request: request)
            throw APIError(status: 403, code: "account_inactive", message: "this account has been deactivated")
        }
        try await runtime.throttle.succeed(attempt)
        // A hash at another cost than the configured one is redone (so the dummy hash follows the
        // configured cost); a busy hasher must not turn a right password into a failed login: next time.
        let upgraded = hasher.needsRehash(hash) ? try? await hasher.hash(password, for: address) : nil
        let session = service.sessions.makeSession()
        let record = try await service.recordLogin(user, session: session, upgradedHash: upgraded, login: login, request: request)
        runtime.logins.increment(by: 1, ["success"])
        return AccountsRoutes.sessionResponse(session, record, status: 200, request: request)
    }

    /// With an invitation the policy does not apply: the invitation decides the role, and one
    /// of its uses is taken in the account's own transaction (`AccountService.create`).
    func register(_ request: Request, _ context: RequestContext) async throws -> Response {
        let settings = try await runtime.companySettings.current()
        var body = try JSONBody(request)
        let token = body.string("invite")
        guard token != nil || settings.registration != "closed" else {
            throw APIError(status: 403, code: "registration_closed", message: "registration is closed; ask an admin for an account")
        }
        let (username, email, displayName, language) = try await newAccountFields(&body)
        let password = body.string("password", required: true)
        if let password, let problem = AccountRules.passwordProblem(password) { body.problem("password", problem) }
        try body.check()
        guard let password else { throw APIError.badRequest("incomplete registration") }
        var invite: InviteRecord?
        if let token { invite = try await checkedInvite(token, request) }
        if invite == nil && settings.registration == "domain" {
            let domain = settings.registrationDomain ?? ""
            guard !domain.isEmpty, email.lowercased().hasSuffix("@" + domain.lowercased()) else {
                throw APIError(status: 403, code: "registration_closed", message: "registration is open only to @\(domain) addresses")
            }
        }
        try await service.checkAvailable(username: username, email: email)
        // Each registration costs a hash and may be a throw-away account: throttled per address like logins.
        let attempt = try await runtime.throttle.reserveRegistration(address: request.clientAddress)
        let hash: String
        do {
            hash = try await hasher.hash(password, for: request.clientAddress)
        } catch {
            try? await runtime.throttle.release(attempt)
            throw error
        }
        try await runtime.throttle.fail(attempt)
        let session = service.sessions.makeSession()
        let record = try await service.create(username: username, email: email, displayName: displayName, role: invite?.role ?? .employee,
                                              language: language, passwordHash: hash, event: "user.register",
                                              actor: Actor(userID: nil, ip: request.clientAddress), session: session, request: request,
                                              invite: invite?.id)
        return AccountsRoutes.sessionResponse(session, record, status: 201, request: request)
    }

    /// `POST /auth/setup`: the first admin, from the one-time token. A wrong token counts against
    /// the address like a wrong password; the token dies once an admin is made.
    func setup(_ request: Request, _ context: RequestContext) async throws -> Response {
        var body = try JSONBody(request)
        let token = body.string("token", required: true) ?? ""
        let attempt = try await runtime.throttle.reserveSetup(address: request.clientAddress)
        guard token.utf8.count <= 128, try await runtime.setup.matches(token) else {
            try await runtime.throttle.fail(attempt)
            throw AccountService.setupClosed
        }
        try? await runtime.throttle.release(attempt)
        guard try await service.activeAdminIDs().isEmpty else {
            try await runtime.setup.close()
            throw AccountService.setupClosed
        }
        let fields = try await newAccountFields(&body)
        let password = body.string("password", required: true)
        if let password, let problem = AccountRules.passwordProblem(password) { body.problem("password", problem) }
        try body.check()
        guard let password else { throw APIError.badRequest("incomplete setup") }
        try await service.checkAvailable(username: fields.username, email: fields.email)
        let hash = try await hasher.hash(password, for: request.clientAddress)
        let session = service.sessions.makeSession()
        let record = try await service.create(username: fields.username, email: fields.email, displayName: fields.displayName, role: .admin,
                                              language: fields.language, passwordHash: hash, event: "setup.admin_created",
                                              actor: Actor(userID: nil, ip: request.clientAddress), session: session, request: request,
                                              onlyIfNoActiveAdmin: true)
        try await runtime.setup.close()
        context.logger.notice("first admin created by setup", ["request.id": context.requestID, "user.id": String(record.id)])
        return AccountsRoutes.sessionResponse(session, record, status: 201, request: request)
    }

    /// The username, email, display name and language of a new account, checked like every
    /// account creation (problems recorded in `body`); the company's default language when none
    /// is given.
    func newAccountFields(_ body: inout JSONBody) async throws -> (username: String, email: String, displayName: String, language: AccountLanguage) {
        let rawUsername = body.string("username", required: true)
        let rawEmail = body.string("email", required: true)
        let username = rawUsername.flatMap(AccountRules.username)
        if rawUsername != nil && username == nil { body.problem("username", "must be 3 to 32 of a-z, 0-9, '.', '_' and '-'") }
        let email = rawEmail.flatMap(AccountRules.email)
        if rawEmail != nil && email == nil { body.problem("email", "must be an email address") }
        let displayName = AccountsRoutes.displayName(body.string("displayName"), fallback: username ?? "", body: &body)
        let settings = try await runtime.companySettings.current()
        let given = body.string("language")
        if let given, !AccountRules.isLanguage(given) { body.problem("language", AccountRules.languageProblem) }
        return (username ?? "", email ?? "", displayName, AccountLanguage(code: given ?? settings.defaultLanguage, chosen: given != nil))
    }

    /// Stores `request`'s body as the picture of `userID` and answers `{avatarUrl}`.
    func uploadAvatar(_ request: Request, userID: Int64, auditedAs actor: Actor?) async throws -> Response {
        guard let type = AccountsRoutes.imageType(request.body) else {
            throw APIError(status: 415, code: "unsupported_media_type", message: "the picture must be a PNG, JPEG or WebP image")
        }
        let record = try await service.setAvatar(userID: userID, data: request.body, contentType: type, auditedAs: actor)
        return .json(["avatarUrl": record.avatarURL.map(JSONValue.string) ?? .null] as JSONValue)
    }

    func changePassword(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        var body = try JSONBody(request)
        let current = body.string("currentPassword", required: true) ?? ""
        let new = body.string("newPassword", required: true)
        if let new, let problem = AccountRules.passwordProblem(new) { body.problem("newPassword", problem) }
        try body.check()
        guard let (_, hash) = try await service.user(login: me.username), let new else { throw APIError.notFound("no such user") }
        let address = request.clientAddress
        let attempt = try await runtime.throttle.reserveLogin(account: me.username, address: address)
        let matches: Bool
        do {
            let bounded = current.utf8.count <= PasswordHasher.maxPasswordBytes
            matches = try await hasher.verify(bounded ? current : "", against: bounded ? hash : hasher.dummyHash, for: address) && bounded
        } catch {
            try? await runtime.throttle.release(attempt)
            throw error
        }
        guard matches else {
            try await runtime.throttle.fail(attempt)
            throw APIError.validationFailed(["currentPassword": "is not your current password"])
        }
        try await runtime.throttle.succeed(attempt)
        let newHash = try await hasher.hash(new, for: address)
        try await service.setPassword(userID: me.id, hash: newHash, mustChange: false, keepSession: me.sessionID, event: "password.change",
                                      actor: .user(me.id, request))
        return .noContent()
    }

    func createUser(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        var body = try JSONBody(request)
        let (username, email, displayName, language) = try await newAccountFields(&body)
        var role = UserRole.employee
        if let raw = body.string("role") {
            if let r = UserRole(rawValue: raw) { role = r } else { body.problem("role", "must be admin or employee") }
        }
        let given = body.string("password")
        if let given, let problem = AccountRules.passwordProblem(given) { body.problem("password", problem) }
        try body.check()
        try await service.checkAvailable(username: username, email: email)
        let password = given ?? AccountRules.generatedPassword()
        let hash = try await hasher.hash(password, for: request.clientAddress)
        let record = try await service.create(username: username, email: email, displayName: displayName, role: role, language: language,
                                              passwordHash: hash, mustChangePassword: given == nil, event: "user.create",
                                              actor: .user(me.id, request))
        var out: [(String, JSONValue)] = [("user", record.publicJSON)]
        if given == nil { out.append(("password", .string(password))) }
        return AccountsRoutes.notStored(.json(.object(out), status: 201))
    }

    /// `GET /users`: one page of the directory.
    func listUsers(_ request: Request, as me: AuthenticatedUser) async throws -> Response {
        var problems: [String: String] = [:]
        let status = request.query["status"].flatMap { $0.isEmpty ? nil : $0 } ?? "active"
        if !["active", "inactive", "all"].contains(status) { problems["status"] = "must be active, inactive or all" }
        if status != "active", problems["status"] == nil, !me.isAdmin { throw APIError.forbidden("only admins may list inactive users") }
        // Without `limit`, the first 500: what the directory showed before it paged.
        var limit = 500
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        var after: Int64?
        if let raw = request.query["after"], !raw.isEmpty {
            if let id = Int64(raw) { after = id } else { problems["after"] = "must be the id of a user" }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        let q = String((request.query["q"] ?? "").prefix(100))
        let page = try await service.list(query: q, status: status, after: after, limit: limit)
        // One absence lookup for the whole page.
        let away = await Away.lookup(page.items.map(\.id), services: services, logger: logger)
        return .json([
            "items": .array(page.items.map { Away.mark($0.publicJSON, from: away) }),
            "nextAfter": page.more ? page.items.last.map { .number(Double($0.id)) } ?? .null : .null,
            "total": .number(Double(page.total)), "active": .number(Double(page.active)),
        ] as JSONValue)
    }

    func avatar(_ request: Request) async throws -> Response {
        guard let id = Int64(request.parameters["id"] ?? ""), let image = try await service.avatar(userID: id) else {
            throw APIError.notFound("this user has no picture")
        }
        let cache = request.query["v"] == String(image.version) ? "private, max-age=31536000, immutable" : "private, no-cache"
        var headers = HTTPHeaders([("ETag", image.etag), ("Cache-Control", cache), ("X-Content-Type-Options", "nosniff")])
        if request.headers.ifNoneMatchMatches(image.etag) {
            return Response(status: 304, headers: headers)
        }
        headers.add("Content-Type", image.contentType)
        return Response(status: 200, headers: headers, body: image.data)
    }

    // MARK: Helpers

    /// What a person whose password is not their own may do, for the API description.
    static let passwordChangeRequiredDoc = """
        While mustChangePassword is true (an admin generated or reset the password), only GET /me, \
        PUT /me/password and POST /auth/logout answer (besides what needs no login); every other endpoint, \
        the realtime stream included, answers 403 password_change_required.
        """

    /// `response` marked never to be stored by a browser or proxy: it carries a password or a session.
    static func notStored(_ response: Response) -> Response {
        var response = response
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    /// `{token, csrfToken, expiresAt, user}` with the session cookie; never cached.
    static func sessionResponse(_ session: NewSession, _ user: UserRecord, status: Int, request: Request) -> Response {
        var response = Response.json([
            "token": .string(session.token),
            "csrfToken": .string(session.csrfToken),
            "expiresAt": .string(session.expiresAtText),
            "user": user.privateJSON,
        ] as JSONValue, status: status)
        response.headers.add("Set-Cookie", SessionManager.cookie(session, secure: request.isSecure))
        return notStored(response)
    }

    /// A display name of 1–100 characters on one line; `fallback` when absent.
    static func displayName(_ raw: String?, fallback: String, body: inout JSONBody) -> String {
        guard let raw else { return fallback }
        let s = raw.trimmingWhitespace()
        if s.isEmpty || s.count > 100 || s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            body.problem("displayName", "must be 1 to 100 characters on one line")
        }
        return s
    }

    /// The profile columns a PATCH body changes, with problems recorded in `body`.
    static func profileChanges(_ body: inout JSONBody, includeEmail: Bool) -> [ColumnChange] {
        var changes: [ColumnChange] = []
        if body.has("displayName") {
            let raw = body.string("displayName")
            if raw == nil && body.problems["displayName"] == nil { body.problem("displayName", "must not be empty") }
            let name = displayName(raw ?? "", fallback: "", body: &body)
            changes.append(("display_name", .text(name)))
            changes.append(("name_key", .text(SearchKey.fold(name))))
        }
        for field in ProfileField.all {
            guard case let .some(value) = body.nullableString(field.json) else { continue }
            switch field.normalize(value ?? "") {
            case let .success(stored): changes.append((field.column, stored.map(SQLValue.text) ?? .null))
            case let .failure(problem): body.problem(field.json, problem.message)
            }
        }
        if body.has("language") {
            if let language = body.string("language"), AccountRules.isLanguage(language) {
                changes.append(("language", .text(language)))
                changes.append(("language_chosen", .integer(1)))
            } else {
                body.problem("language", AccountRules.languageProblem)
            }
        }
        if let enabled = body.bool("notificationsEnabled") { changes.append(("notifications_enabled", .integer(enabled ? 1 : 0))) }
        if includeEmail, body.has("email") {
            if let email = body.string("email").flatMap(AccountRules.email) {
                changes.append(("email", .text(email)))
                changes.append(("email_lower", .text(email.lowercased())))
            } else {
                body.problem("email", "must be an email address")
            }
        }
        return changes
    }

    /// The image type recognised from the first bytes: PNG, JPEG or WebP; nil otherwise.
    static func imageType(_ b: [UInt8]) -> String? {
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if b.count >= 12, b.starts(with: Array("RIFF".utf8)), Array(b[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }
}

// MARK: OpenAPI schemas

let string: JSONValue = ["type": "string"]
let integer: JSONValue = ["type": "integer"]
let boolean: JSONValue = ["type": "boolean"]
let nullableString: JSONValue = ["type": "string", "nullable": true]

func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = []) -> JSONValue {
    var o: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties.map { ($0.key, $0.value) }))]
    if !required.isEmpty { o.append(("required", .array(required.map(JSONValue.string)))) }
    return .object(o)
}

let userSchema = object([
    "id": integer, "username": string, "displayName": string, "role": ["type": "string", "enum": ["admin", "employee"]],
    "active": boolean, "position": nullableString, "phone": nullableString, "email": string, "twitter": nullableString,
    "linkedin": nullableString, "bio": nullableString, "status": nullableString, "country": nullableString, "language": string,
    "avatarUrl": nullableString, "createdAt": ["type": "string", "format": "date-time"], "away": Away.schema,
])

let privateUserSchema: JSONValue = ["allOf": [userSchema, object(["notificationsEnabled": boolean,
                                                                   "lastLoginAt": ["type": "string", "format": "date-time", "nullable": true],
                                                                   "mustChangePassword": boolean, "languageChosen": boolean])]]

let sessionSchema = object(["token": string, "csrfToken": string, "expiresAt": ["type": "string", "format": "date-time"], "user": privateUserSchema])

let nullableInteger: JSONValue = ["type": "integer", "nullable": true]

let auditSchema = object(["id": integer, "at": ["type": "string", "format": "date-time"], "event": string, "actorId": nullableInteger,
                          "actorUsername": nullableString, "targetId": nullableInteger, "targetUsername": nullableString,
                          "login": nullableString, "ip": nullableString, "detail": nullableString])

func profileSchema(admin: Bool) -> JSONValue {
    var fields: [(String, JSONValue)] = [("displayName", string)]
    for f in ProfileField.all { fields.append((f.json, nullableString)) }
    fields.append(("language", string))
    fields.append(("notificationsEnabled", boolean))
    if admin { fields += [("email", string), ("role", ["type": "string", "enum": ["admin", "employee"]]), ("active", boolean)] }
    return .object([("type", "object"), ("properties", .object(fields))])
}
