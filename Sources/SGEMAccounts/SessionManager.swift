import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// A session just created: the secrets go to the client once; only their digests are stored.
/// Times are epoch milliseconds, as stored.
struct NewSession: Sendable {
    let token: String
    let csrfToken: String
    let createdAt: Int64
    let expiresAt: Int64

    var tokenDigest: String { SessionManager.digest(token) }
    var csrfDigest: String { SessionManager.digest(csrfToken) }
    var expiresAtText: String { Timestamp(milliseconds: expiresAt).rfc3339() }
}

/// Sessions: 256-bit tokens from OpenSSL's CSPRNG stored as SHA-256 digests, expiring after
/// `idle` without use or `maximum` after creation, whichever comes first. Every request looks the
/// digest up (a reader, no cache), so revocation takes effect on the very next request.
final class SessionManager: SessionAuthenticator {
    static let cookieName = "sgem_session"
    /// Use is recorded at most this often (milliseconds), so that requests do not each cost a write.
    static let renewInterval: Int64 = 60_000

    /// Who a session was opened from, as stored with it.
    struct ClientInfo: Sendable {
        let ip: String?
        let userAgent: String?

        /// Nobody known: the command line.
        static let unknown = ClientInfo(ip: nil, userAgent: nil)

        init(ip: String?, userAgent: String?) {
            self.ip = ip
            self.userAgent = userAgent
        }

        init(_ request: Request) {
            ip = request.clientAddress
            userAgent = request.headers["User-Agent"].map { String($0.prefix(200)) }
        }
    }

    let store: Store
    let logger: Logger
    /// Milliseconds.
    let idle: Int64
    /// Milliseconds.
    let maximum: Int64

    init(store: Store, idleHours: Int, maxDays: Int, logger: Logger) {
        self.store = store
        self.logger = logger
        self.idle = Int64(idleHours) * 3_600_000
        self.maximum = Int64(maxDays) * 86_400_000
    }

    static func digest(_ secret: String) -> String { Crypto.hex(Crypto.sha256(Array(secret.utf8))) }

    /// Fresh secrets and the expiry of a session starting now.
    func makeSession() -> NewSession {
        let now = Timestamp.now().milliseconds
        return NewSession(token: Crypto.base64URL(Crypto.randomBytes(32)), csrfToken: Crypto.base64URL(Crypto.randomBytes(32)),
                          createdAt: now, expiresAt: now + min(idle, maximum))
    }

    /// The user of `request`'s session; the API's errors for an expired session, an inactive
    /// account or a failed CSRF check (this is where other modules' routes meet accounts).
    func authenticate(_ request: Request, allowQueryToken: Bool) async throws -> AuthenticatedUser? {
        do {
            return try await user(of: request, allowQueryToken: allowQueryToken)
        } catch let error as AccountsError {
            throw error.apiError
        }
    }

    private func user(of request: Request, allowQueryToken: Bool) async throws -> AuthenticatedUser? {
        guard let (token, viaCookie) = try SessionManager.credentials(request, allowQueryToken: allowQueryToken) else { return nil }
        let digest = SessionManager.digest(token)
        // One statement, on every authenticated request: no snapshot around it.
        let found = try await store.readAtOnce { db in try AccountsRepository.session(tokenDigest: digest, in: db) }
        let now = Timestamp.now().milliseconds
        guard let session = found, session.expiresAt > now else {
            throw AccountsError.sessionExpired
        }
        guard session.userActive else {
            throw AccountsError.accountInactive
        }
        if viaCookie && !request.method.isSafe {
            try SessionManager.checkCSRF(request, storedDigest: session.csrfDigest)
        }
        if viaCookie && SessionManager.isWebSocketUpgrade(request) {
            try SessionManager.checkWebSocketOrigin(request)
        }
        if now - session.lastUsedAt >= SessionManager.renewInterval {
            await renew(session, now: now)
        }
        return AuthenticatedUser(id: session.userID, username: session.username, role: session.role, sessionID: session.id,
                                 viaCookie: viaCookie, mustChangePassword: session.mustChangePassword)
    }

    /// Slides the session's expiry. A failure here (a busy or failing store) must not fail the
    /// request the session is valid for: it is logged, and the next request tries again.
    func renew(_ session: StoredSession, now: Int64) async {
        let newExpiry = min(now + idle, session.createdAt + maximum)
        do {
            try await store.write { db in try AccountsRepository.renewSession(id: session.id, usedAt: now, expiresAt: newExpiry, in: db) }
        } catch {
            logger.warning("session renewal failed", ["session.id": String(session.id), "user.id": String(session.userID),
                                                      "error": String(describing: error)])
        }
    }

    /// The token and whether it came from the cookie. A bearer token wins over `?token=` (when
    /// the route allows it), which wins over the cookie.
    static func credentials(_ request: Request, allowQueryToken: Bool = false) throws -> (String, Bool)? {
        if let authorization = request.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw AccountsError.badAuthorization
            }
            return (String(parts[1]).trimmingWhitespace(), false)
        }
        if allowQueryToken, let token = request.query["token"], !token.isEmpty {
            return (token, false)
        }
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = String(pair).trimmingWhitespace()
                if trimmed.hasPrefix(cookieName + "=") {
                    let value = String(trimmed.dropFirst(cookieName.count + 1))
                    if !value.isEmpty { return (value, true) }
                }
            }
        }
        return nil
    }

    /// A cookie-authenticated unsafe request needs the session's CSRF token and, when the
    /// browser sends `Origin`, an origin naming this very host.
    static func checkCSRF(_ request: Request, storedDigest: String) throws {
        guard let token = request.headers["X-CSRF-Token"], !token.isEmpty,
              Crypto.constantTimeEqual(Array(digest(token).utf8), Array(storedDigest.utf8)) else { throw AccountsError.csrfFailed }
        if let origin = request.headers["Origin"] {
            guard let host = request.headers["Host"]?.lowercased(), !host.isEmpty else { throw AccountsError.csrfFailed }
            let o = origin.lowercased()
            guard o == "http://" + host || o == "https://" + host else { throw AccountsError.csrfFailed }
        }
    }

    /// Whether `request` asks to become a WebSocket (`GET` with `Upgrade: websocket`).
    static func isWebSocketUpgrade(_ request: Request) -> Bool {
        request.method == .GET && request.headers.values("Upgrade").contains { value in
            value.split(separator: ",").contains { String($0).trimmingWhitespace().lowercased() == "websocket" }
        }
    }

    /// Browsers send cookies with cross-site WebSocket handshakes and the same-origin policy does
    /// not stop them, so a cookie-authenticated upgrade must come from this server's own origin:
    /// `Origin` must be present and equal the scheme (per `isSecure`) and `Host` of the request.
    static func checkWebSocketOrigin(_ request: Request) throws {
        guard let origin = request.headers["Origin"]?.lowercased(), let host = request.headers["Host"]?.lowercased(), !host.isEmpty,
              origin == (request.isSecure ? "https://" : "http://") + host else { throw AccountsError.csrfFailed }
    }

    /// `Set-Cookie` for a new session.
    static func cookie(_ session: NewSession, secure: Bool) -> String {
        let maxAge = max(0, (session.expiresAt - Timestamp.now().milliseconds) / 1000)
        return "\(cookieName)=\(session.token); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
    }

    /// `Set-Cookie` that removes the session cookie.
    static func clearingCookie(secure: Bool) -> String {
        "\(cookieName)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
    }
}

extension HTTPMethod {
    /// GET, HEAD and OPTIONS change nothing and need no CSRF token.
    var isSafe: Bool { self == .GET || self == .HEAD || self == .OPTIONS }
}
