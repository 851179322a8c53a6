import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// A session just created: the secrets go to the client once; only their digests are stored.
struct NewSession: Sendable {
    let token: String
    let csrfToken: String
    let createdAt: Int64
    let expiresAt: Int64

    var tokenDigest: String { SessionManager.digest(token) }
    var csrfDigest: String { SessionManager.digest(csrfToken) }
    var expiresAtText: String { Timestamp(seconds: expiresAt).rfc3339() }
}

/// Sessions: 256-bit tokens from OpenSSL's CSPRNG stored as SHA-256 digests, expiring after
/// `idle` without use or `maximum` after creation, whichever comes first. Every request looks the
/// digest up (a reader, no cache), so revocation takes effect on the very next request.
final class SessionManager: SessionAuthenticator {
    static let cookieName = "sgem_session"
    /// Use is recorded at most this often, so that requests do not each cost a write.
    static let renewInterval: Int64 = 60

    let store: Store
    let idle: Int64
    let maximum: Int64

    init(store: Store, idleHours: Int, maxDays: Int) {
        self.store = store
        self.idle = Int64(idleHours) * 3600
        self.maximum = Int64(maxDays) * 86400
    }

    static func digest(_ secret: String) -> String { Crypto.hex(Crypto.sha256(Array(secret.utf8))) }

    /// Fresh secrets and the expiry of a session starting now.
    func makeSession() -> NewSession {
        let now = Timestamp.now().seconds
        return NewSession(token: Crypto.base64URL(Crypto.randomBytes(32)), csrfToken: Crypto.base64URL(Crypto.randomBytes(32)),
                          createdAt: now, expiresAt: now + min(idle, maximum))
    }

    /// Stores `session` for `userID`; called inside the caller's write.
    static func insert(_ session: NewSession, userID: Int64, request: Request?, db: Database) throws {
        try db.execute("""
            INSERT INTO accounts_sessions (user_id, token_digest, csrf_digest, created_at, last_used_at, expires_at, ip, user_agent)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, userID, session.tokenDigest, session.csrfDigest, session.createdAt, session.createdAt, session.expiresAt,
            request?.clientAddress, request?.headers["User-Agent"].map { String($0.prefix(200)) })
    }

    func authenticate(_ request: Request) async throws -> AuthenticatedUser? {
        guard let (token, viaCookie) = try SessionManager.credentials(request) else { return nil }
        let digest = SessionManager.digest(token)
        let row = try await store.read { db in
            try db.queryOne("""
                SELECT s.id, s.user_id, s.csrf_digest, s.created_at, s.last_used_at, s.expires_at, u.username, u.role, u.active
                FROM accounts_sessions s JOIN accounts_users u ON u.id = s.user_id WHERE s.token_digest = ?
                """, digest)
        }
        let now = Timestamp.now().seconds
        guard let row, let sessionID = row.int64("id"), let userID = row.int64("user_id"),
              let expires = row.int64("expires_at"), expires > now else {
            throw APIError(status: 401, code: "session_expired", message: "the session has expired or was ended; log in again")
        }
        guard row.bool("active") == true else {
            throw APIError(status: 403, code: "account_inactive", message: "this account has been deactivated")
        }
        if viaCookie && !request.method.isSafe {
            try SessionManager.checkCSRF(request, storedDigest: row.string("csrf_digest") ?? "")
        }
        if let lastUsed = row.int64("last_used_at"), now - lastUsed >= SessionManager.renewInterval {
            let created = row.int64("created_at") ?? now
            let newExpiry = min(now + idle, created + maximum)
            try await store.write { db in
                try db.execute("UPDATE accounts_sessions SET last_used_at = ?, expires_at = ? WHERE id = ?", now, newExpiry, sessionID)
            }
        }
        return AuthenticatedUser(id: userID, username: row.string("username") ?? "", role: UserRole(rawValue: row.string("role") ?? "") ?? .employee,
                                 sessionID: sessionID, viaCookie: viaCookie)
    }

    /// The token and whether it came from the cookie. A bearer token wins over a cookie.
    /// Deletes sessions past their expiry; returns how many went.
    func deleteExpired() async throws -> Int {
        let now = Timestamp.now().seconds
        return try await store.write { db in
            try db.execute("DELETE FROM accounts_sessions WHERE expires_at <= ?", now)
            return db.changes
        }
    }

    static func credentials(_ request: Request) throws -> (String, Bool)? {
        if let authorization = request.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw APIError.unauthenticated("use 'Authorization: Bearer <token>'")
            }
            return (String(parts[1]).trimmingWhitespace(), false)
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
        let failed = APIError(status: 403, code: "csrf_failed", message: "missing or wrong X-CSRF-Token, or a foreign Origin")
        guard let token = request.headers["X-CSRF-Token"], !token.isEmpty,
              Crypto.constantTimeEqual(Array(digest(token).utf8), Array(storedDigest.utf8)) else { throw failed }
        if let origin = request.headers["Origin"] {
            guard let host = request.headers["Host"]?.lowercased(), !host.isEmpty else { throw failed }
            let o = origin.lowercased()
            guard o == "http://" + host || o == "https://" + host else { throw failed }
        }
    }

    /// `Set-Cookie` for a new session.
    static func cookie(_ session: NewSession, secure: Bool) -> String {
        let maxAge = max(0, session.expiresAt - Timestamp.now().seconds)
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
