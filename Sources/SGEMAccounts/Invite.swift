import SGEMCore
import SGEMStore
import SGEMSupport

/// An invitation to create an account: a link whose token only its holder knows (the store keeps
/// its SHA-256), good for `maxUses` accounts until `expiresAt` unless an admin revokes it.
struct InviteRecord: Sendable, Equatable, RowDecodable {
    let id: Int64
    let role: UserRole
    let expiresAt: Timestamp
    let maxUses: Int
    let uses: Int
    let note: String?
    let createdBy: Int64?
    let createdAt: Timestamp
    let revokedAt: Timestamp?

    /// The columns `init(row:)` reads.
    static let columns: SQL = "id, role, expires_at, max_uses, uses, note, created_by, created_at, revoked_at"

    init(row: Row) {
        id = row.int64("id") ?? 0
        role = UserRole(rawValue: row.string("role") ?? "") ?? .employee
        expiresAt = row.timestamp("expires_at") ?? Timestamp(seconds: 0)
        maxUses = row.int("max_uses") ?? 0
        uses = row.int("uses") ?? 0
        note = row.string("note")
        createdBy = row.int64("created_by")
        createdAt = row.timestamp("created_at") ?? Timestamp(seconds: 0)
        revokedAt = row.timestamp("revoked_at")
    }

    /// `live` while it can still make an account; otherwise why not: `revoked`, `used` (every use
    /// taken) or `expired`, in that order.
    func status(at now: Timestamp) -> String {
        if revokedAt != nil { return "revoked" }
        if uses >= maxUses { return "used" }
        if expiresAt <= now { return "expired" }
        return "live"
    }
}

/// The limits of an invitation, shared by the API and `admin invite create`.
enum InviteRules {
    static let days = 1...30
    static let defaultDays = 7
    static let uses = 1...500
    static let defaultUses = 1
    static let maxNote = 200
    /// Tokens are 32 random bytes in base64url (43 characters); anything much longer is no token.
    static let maxTokenLength = 128

    static let dayProblem = "must be a whole number from 1 to 30"
    static let useProblem = "must be a whole number from 1 to 500"
    static let noteProblem = "must be at most 200 characters on one line"
    static let roleProblem = "must be admin or employee"

    /// A note of at most 200 characters on one line, trimmed; nil when empty.
    static func note(_ raw: String) -> Result<String?, FieldProblem> {
        let s = raw.trimmingWhitespace()
        if s.count > maxNote || s.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return .failure(FieldProblem(noteProblem))
        }
        return .success(s.isEmpty ? nil : s)
    }

    /// A fresh token (256 bits from OpenSSL's CSPRNG, base64url) and the digest stored for it.
    static func makeToken() -> (token: String, hash: String) {
        let token = Crypto.base64URL(Crypto.randomBytes(32))
        return (token, hash(token))
    }

    static func hash(_ token: String) -> String { Crypto.hex(Crypto.sha256(Array(token.utf8))) }
}

/// An invitation's settings as an admin asks for them.
struct InviteRequest: Sendable {
    var role: UserRole = .employee
    var days: Int = InviteRules.defaultDays
    var maxUses: Int = InviteRules.defaultUses
    var note: String?
}
