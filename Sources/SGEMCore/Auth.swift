import SGEMHTTP
import SGEMSupport

/// A user's role in the company.
public enum UserRole: String, Sendable, Codable, CaseIterable {
    case admin, employee
}

/// The user a request acts for, as the session authenticator resolved it.
public struct AuthenticatedUser: Sendable, Equatable {
    public let id: Int64
    public let username: String
    public let role: UserRole
    /// The session the credentials belong to; nil for credentials without a session.
    public let sessionID: Int64?
    /// True when the session cookie (not a bearer token) authenticated the request.
    public let viaCookie: Bool
    /// The account's password was generated or reset by an admin: until the person chooses
    /// their own, only the routes that say so answer (`RequireUser(…, whilePasswordChangeRequired:)`).
    public let mustChangePassword: Bool

    public init(id: Int64, username: String, role: UserRole, sessionID: Int64?, viaCookie: Bool, mustChangePassword: Bool = false) {
        self.id = id
        self.username = username
        self.role = role
        self.sessionID = sessionID
        self.viaCookie = viaCookie
        self.mustChangePassword = mustChangePassword
    }

    /// Whether the user is an admin.
    public var isAdmin: Bool { role == .admin }
}

/// Resolves a request's credentials (bearer token or session cookie) to a user. Published by
/// the accounts module; any module protects its routes with `RequireUser` / `RequireAdmin`.
public protocol SessionAuthenticator: Sendable {
    /// The user, or nil when the request carries no credentials at all. Throws 401
    /// `session_expired` for unknown, revoked or expired credentials, 403 `account_inactive`,
    /// and 403 `csrf_failed` for a cookie-authenticated unsafe request without a valid CSRF
    /// token or with a foreign `Origin`, or a cookie-authenticated WebSocket upgrade whose
    /// `Origin` is not this server's. With `allowQueryToken`, `?token=<bearer token>` is accepted
    /// too (for clients that cannot set headers: WebSockets, calendar feeds); otherwise it is ignored.
    func authenticate(_ request: Request, allowQueryToken: Bool) async throws -> AuthenticatedUser?
}

extension SessionAuthenticator {
    /// Authenticates by `Authorization: Bearer` or the session cookie only.
    public func authenticate(_ request: Request) async throws -> AuthenticatedUser? {
        try await authenticate(request, allowQueryToken: false)
    }
}

/// The authenticated user of a request, set by `RequireUser` and `RequireAdmin`.
public enum CurrentUser: ContextKey {
    public typealias Value = AuthenticatedUser
}

extension RequestContext {
    /// The authenticated user; 401 when the route was not behind `RequireUser`/`RequireAdmin`.
    public func user() throws -> AuthenticatedUser {
        guard let user = self[CurrentUser.self] else { throw APIError.unauthenticated() }
        return user
    }
}

/// Lets only authenticated users through (401 `unauthenticated` otherwise) and stores the user
/// in `context[CurrentUser.self]`. The authenticator is looked up per request, so the middleware
/// can be built before the accounts module boots. A user who must choose a new password first
/// gets 403 `password_change_required`, unless the route is one of the few that allow it.
public struct RequireUser: Middleware {
    let services: ServiceRegistry
    let allowQueryToken: Bool
    let whilePasswordChangeRequired: Bool

    /// - Parameter allowQueryToken: accept the bearer token as `?token=` too. Only for routes
    ///   whose clients cannot send headers (`/api/v1/realtime`, calendar feeds): a token in a URL
    ///   ends up in logs and histories, so ordinary routes ignore it.
    /// - Parameter whilePasswordChangeRequired: let through a user whose password was generated
    ///   or reset (only for what choosing a new one needs: `GET /me`, `PUT /me/password`, logout).
    public init(services: ServiceRegistry, allowQueryToken: Bool = false, whilePasswordChangeRequired: Bool = false) {
        self.services = services
        self.allowQueryToken = allowQueryToken
        self.whilePasswordChangeRequired = whilePasswordChangeRequired
    }

    public func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        let user = try await RequireUser.resolve(request, context: context, services: services, allowQueryToken: allowQueryToken)
        if user.mustChangePassword && !whilePasswordChangeRequired { throw RequireUser.passwordChangeRequired }
        return try await next(request, context)
    }

    /// The answer to a user who must choose their own password before anything else.
    public static let passwordChangeRequired = APIError(
        status: 403, code: "password_change_required",
        message: "your password was set by an admin: choose your own first (PUT /api/v1/me/password)")

    /// Authenticates once per request; a second middleware reuses the stored user.
    static func resolve(_ request: Request, context: RequestContext, services: ServiceRegistry,
                        allowQueryToken: Bool = false) async throws -> AuthenticatedUser {
        if let user = context[CurrentUser.self] { return user }
        guard let authenticator = services.resolve((any SessionAuthenticator).self),
              let user = try await authenticator.authenticate(request, allowQueryToken: allowQueryToken) else {
            throw APIError.unauthenticated()
        }
        context[CurrentUser.self] = user
        context.logger = context.logger.with("user.id", String(user.id))
        return user
    }
}

/// Like `RequireUser`, then 403 `forbidden` unless the user is an admin.
public struct RequireAdmin: Middleware {
    let services: ServiceRegistry

    public init(services: ServiceRegistry) { self.services = services }

    public func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        let user = try await RequireUser.resolve(request, context: context, services: services)
        if user.mustChangePassword { throw RequireUser.passwordChangeRequired }
        guard user.isAdmin else { throw APIError.forbidden("this needs an admin") }
        return try await next(request, context)
    }
}

/// What other modules may know about a user.
public struct DirectoryUser: Sendable, Equatable {
    public let id: Int64
    public let username: String
    public let displayName: String
    public let email: String
    public let role: UserRole
    public let active: Bool
    /// ISO 639-1 code of the user's language.
    public let language: String
    /// Whether the person wants notifications (browser and push) at all.
    public let notificationsEnabled: Bool

    public init(id: Int64, username: String, displayName: String, email: String, role: UserRole, active: Bool, language: String,
                notificationsEnabled: Bool = true) {
        self.notificationsEnabled = notificationsEnabled
        self.id = id
        self.username = username
        self.displayName = displayName
        self.email = email
        self.role = role
        self.active = active
        self.language = language
    }
}

/// Read access to the company's users for other modules; implemented by accounts.
public protocol UserDirectory: Sendable {
    /// The user with `id`, active or not; nil when there is none.
    func user(id: Int64) async throws -> DirectoryUser?
    /// The ids of every active admin.
    func activeAdminIDs() async throws -> [Int64]
    /// How many users are active now.
    func activeUserCount() async throws -> Int
    /// How many users (active or not) were created after `time`.
    func usersCreated(after time: Timestamp) async throws -> Int
    /// The users among `ids` that exist, active or not, in one lookup.
    func users(ids: [Int64]) async throws -> [Int64: DirectoryUser]
    /// The user whose username (or email) is `login`, case-insensitively; nil when none.
    func user(login: String) async throws -> DirectoryUser?
}
