import SGEMCore
import SGEMStore
import SGEMSupport

/// One row of `accounts_users`, as the API shows it.
struct UserRecord: Sendable, RowDecodable {
    let id: Int64
    let username: String
    let email: String
    let displayName: String
    let role: UserRole
    let active: Bool
    let position: String?
    let phone: String?
    let twitter: String?
    let linkedin: String?
    let bio: String?
    let status: String?
    let country: String?
    let language: String
    let notificationsEnabled: Bool
    let avatarVersion: Int64?
    let createdAt: Timestamp
    let lastLoginAt: Timestamp?
    /// The password was generated or reset by an admin: the person must choose their own first.
    let mustChangePassword: Bool
    /// False while the account follows the company's default language, having none of its own.
    let languageChosen: Bool

    /// A row with `AccountsRepository.userColumns`.
    init(row: Row) {
        // By position, in the order of `userColumns`: the directory decodes a page of these per
        // request, and a name lookup per column cost more than the rest of the row.
        id = row.int64(at: 0) ?? 0
        username = row.string(at: 1) ?? ""
        email = row.string(at: 2) ?? ""
        displayName = row.string(at: 3) ?? ""
        role = UserRole(rawValue: row.string(at: 4) ?? "") ?? .employee
        active = row.bool(at: 5) ?? false
        position = row.string(at: 6)
        phone = row.string(at: 7)
        twitter = row.string(at: 8)
        linkedin = row.string(at: 9)
        bio = row.string(at: 10)
        status = row.string(at: 11)
        country = row.string(at: 12)
        language = row.string(at: 13) ?? "en"
        notificationsEnabled = row.bool(at: 14) ?? true
        avatarVersion = row.int64(at: 15)
        createdAt = row.timestamp(at: 16) ?? Timestamp(seconds: 0)
        lastLoginAt = row.timestamp(at: 17)
        mustChangePassword = row.bool(at: 18) ?? false
        languageChosen = row.bool(at: 19) ?? true
    }

    /// `/api/v1/users/{id}/avatar?v={version}`, nil without an avatar.
    var avatarURL: String? { avatarVersion.map { "/api/v1/users/\(id)/avatar?v=\($0)" } }

    var directoryUser: DirectoryUser {
        DirectoryUser(id: id, username: username, displayName: displayName, email: email, role: role, active: active, language: language,
                      notificationsEnabled: notificationsEnabled)
    }
}

/// A new account's language: the one given (its own), or the company's default, followed until
/// the person chooses one (`chosen` false).
struct AccountLanguage: Sendable {
    let code: String
    let chosen: Bool
}

/// Checks and normalisation for account fields.
enum AccountRules {
    /// 3–32 of `a-z 0-9 . _ -`, lowercased; nil when invalid.
    static func username(_ raw: String) -> String? {
        let s = raw.trimmingWhitespace().lowercased()
        guard (3...32).contains(s.utf8.count),
              s.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E || $0 == 0x5F || $0 == 0x2D })
        else { return nil }
        return s
    }

    /// A sane address: one `@`, a non-empty local part, a dotted domain, no spaces or controls,
    /// at most 254 bytes. Returned trimmed; nil when invalid.
    static func email(_ raw: String) -> String? {
        let s = raw.trimmingWhitespace()
        guard (3...254).contains(s.utf8.count), s.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else { return nil }
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return nil }
        let domain = parts[1]
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty && $0.first != "-" && $0.last != "-" }),
              domain.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x2E || $0 >= 0x80 })
        else { return nil }
        return s
    }

    /// The problem with a new password, nil when acceptable.
    static func passwordProblem(_ password: String) -> String? {
        if password.count < 10 { return "must be at least 10 characters" }
        if password.utf8.count > PasswordHasher.maxPasswordBytes { return "must be at most \(PasswordHasher.maxPasswordBytes) bytes" }
        return nil
    }

    static let languageProblem = "must be an ISO 639-1 code of two lowercase letters"

    /// ISO 639-1: two lowercase ASCII letters.
    static func isLanguage(_ s: String) -> Bool {
        s.utf8.count == 2 && s.utf8.allSatisfy { $0 >= 0x61 && $0 <= 0x7A }
    }

    /// 20 characters from an alphabet without look-alikes (no 0/O, 1/l/I), about 115 bits.
    static func generatedPassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        var out = ""
        while out.count < 20 {
            for b in Crypto.randomBytes(32) where out.count < 20 {
                // Rejection sampling keeps every character equally likely.
                let limit = 256 - 256 % alphabet.count
                if Int(b) < limit { out.append(alphabet[Int(b) % alphabet.count]) }
            }
        }
        return out
    }
}

/// A profile field that `PATCH /me` and `PATCH /admin/users/{id}` may change.
struct ProfileField: Sendable {
    enum Kind: Sendable { case text, phone, twitter, linkedin }
    /// Its name in the API (and in the audit log's list of changed fields).
    let json: String
    let maxLength: Int
    let kind: Kind

    static let all: [ProfileField] = [
        ProfileField(json: "position", maxLength: 100, kind: .text),
        ProfileField(json: "phone", maxLength: 40, kind: .phone),
        ProfileField(json: "twitter", maxLength: 50, kind: .twitter),
        ProfileField(json: "linkedin", maxLength: 200, kind: .linkedin),
        ProfileField(json: "bio", maxLength: 2000, kind: .text),
        ProfileField(json: "status", maxLength: 140, kind: .text),
        ProfileField(json: "country", maxLength: 64, kind: .text),
    ]

    /// The stored form of `raw` (nil clears), or a problem.
    func normalize(_ raw: String) -> Result<String?, FieldProblem> {
        let s = raw.trimmingWhitespace()
        if s.isEmpty { return .success(nil) }
        guard s.count <= maxLength else { return .failure(FieldProblem("must be at most \(maxLength) characters")) }
        guard !s.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }) else {
            return .failure(FieldProblem("must not contain control characters"))
        }
        switch kind {
        case .text:
            if json != "bio", s.contains("\n") { return .failure(FieldProblem("must be one line")) }
            return .success(s)
        case .phone:
            let ok = s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2B || $0 == 0x20 || $0 == 0x28 || $0 == 0x29 || $0 == 0x2D || $0 == 0x2E }
            return ok && s.utf8.contains(where: { $0 >= 0x30 && $0 <= 0x39 }) ? .success(s) : .failure(FieldProblem("must be a phone number: digits, spaces, + ( ) - ."))
        case .twitter:
            let handle = s.hasPrefix("@") ? String(s.dropFirst()) : s
            let ok = (1...15).contains(handle.utf8.count) && handle.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
            return ok ? .success(handle) : .failure(FieldProblem("must be a handle of 1 to 15 letters, digits or _"))
        case .linkedin:
            // A profile URL or its last path segment; only https URLs so links stay harmless.
            if s.lowercased().hasPrefix("https://") {
                let ok = s.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x3C && $0 != 0x3E }
                return ok ? .success(s) : .failure(FieldProblem("must be an https URL or a profile name"))
            }
            let ok = (3...100).contains(s.utf8.count) && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
            return ok ? .success(s) : .failure(FieldProblem("must be an https URL or a profile name"))
        }
    }
}

/// Why one field is invalid.
struct FieldProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

