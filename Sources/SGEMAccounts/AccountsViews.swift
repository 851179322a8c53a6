import SGEMCore
import SGEMSupport

// What the accounts API answers, as values. Fields marked `@ExplicitNull` are always present (`null`
// when empty); plain optionals are left out when nil. Each type's OpenAPI schema is in
// `AccountsAPI.swift`, and `ViewSchemaTests` checks that the two agree.

/// `away: {until}`: present only while the person is on approved leave today.
struct AwayView: Encodable, Sendable {
    let until: String
}

/// The public view of a user, which every user may see.
struct UserView: Encodable, Sendable {
    let id: Int64
    let username: String
    let displayName: String
    let role: UserRole
    let active: Bool
    @ExplicitNull var position: String?
    @ExplicitNull var phone: String?
    let email: String
    @ExplicitNull var twitter: String?
    @ExplicitNull var linkedin: String?
    @ExplicitNull var bio: String?
    @ExplicitNull var status: String?
    @ExplicitNull var country: String?
    let language: String
    @ExplicitNull var avatarUrl: String?
    let createdAt: String
    var away: AwayView?

    /// This view with `away` from a lookup of who is away (`Away.lookup`).
    func marked(_ away: [Int64: String]) -> UserView {
        var marked = self
        marked.away = away[id].map(AwayView.init(until:))
        return marked
    }
}

/// The user's own view: the public one (never with `away`) plus settings and the last login.
struct PrivateUserView: Encodable, Sendable {
    let user: UserView
    let notificationsEnabled: Bool
    @ExplicitNull var lastLoginAt: String?
    let mustChangePassword: Bool
    let languageChosen: Bool

    private enum Keys: String, CodingKey { case notificationsEnabled, lastLoginAt, mustChangePassword, languageChosen }

    func encode(to encoder: any Encoder) throws {
        try user.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(notificationsEnabled, forKey: .notificationsEnabled)
        try c.encode(_lastLoginAt, forKey: .lastLoginAt)
        try c.encode(mustChangePassword, forKey: .mustChangePassword)
        try c.encode(languageChosen, forKey: .languageChosen)
    }
}

/// A login, registration or setup: the session's secrets (shown this once) and the user.
struct SessionView: Encodable, Sendable {
    let token: String
    let csrfToken: String
    let expiresAt: String
    let user: PrivateUserView
}

/// One page of the directory.
struct UserPageView: Encodable, Sendable {
    let items: [UserView]
    @ExplicitNull var nextAfter: Int64?
    let total: Int
    let active: Int
}

/// A user an admin created, with the generated password when none was given (shown this once).
struct CreatedUserView: Encodable, Sendable {
    let user: UserView
    var password: String?
}

/// A temporary password, shown this once.
struct PasswordView: Encodable, Sendable {
    let password: String
}

/// A picture's URL after an upload.
struct AvatarURLView: Encodable, Sendable {
    @ExplicitNull var avatarUrl: String?
}

/// Whether first-run setup is still possible.
struct SetupStatusView: Encodable, Sendable {
    let open: Bool
}

/// Whom to ask about a forgotten password.
struct PasswordHelpView: Encodable, Sendable {
    @ExplicitNull var adminName: String?
}

/// The registration policy, for the login screen.
struct RegistrationView: Encodable, Sendable {
    let mode: String
    @ExplicitNull var domain: String?
    @ExplicitNull var companyName: String?
}

/// One entry of the audit log.
struct AuditEntryView: Encodable, Sendable {
    let id: Int64
    @ExplicitNull var at: String?
    let event: String
    @ExplicitNull var actorId: Int64?
    @ExplicitNull var actorUsername: String?
    @ExplicitNull var targetId: Int64?
    @ExplicitNull var targetUsername: String?
    @ExplicitNull var login: String?
    @ExplicitNull var ip: String?
    @ExplicitNull var detail: String?
}

/// One page of the audit log.
struct AuditPageView: Encodable, Sendable {
    let items: [AuditEntryView]
    @ExplicitNull var nextBefore: Int64?
}

/// `{items: [names]}`.
struct NameListView: Encodable, Sendable {
    let items: [String]
}

/// An invitation as an admin sees it: never its token; its link (`url`) only once, at creation.
struct InviteView: Encodable, Sendable {
    let id: Int64
    var url: String?
    let role: UserRole
    let expiresAt: String
    let maxUses: Int
    let uses: Int
    @ExplicitNull var note: String?
    @ExplicitNull var createdBy: Int64?
    let createdAt: String
    @ExplicitNull var revokedAt: String?
    let status: String
}

/// `{items: [invitations]}`.
struct InviteListView: Encodable, Sendable {
    let items: [InviteView]
}

/// What an invitation link offers, for the sign-up screen.
struct InvitePreviewView: Encodable, Sendable {
    @ExplicitNull var companyName: String?
    let role: UserRole
    let expiresAt: String
}

extension UserRecord {
    var publicView: UserView {
        UserView(id: id, username: username, displayName: displayName, role: role, active: active, position: position, phone: phone,
                 email: email, twitter: twitter, linkedin: linkedin, bio: bio, status: status, country: country, language: language,
                 avatarUrl: avatarURL, createdAt: createdAt.rfc3339(), away: nil)
    }

    var privateView: PrivateUserView {
        PrivateUserView(user: publicView, notificationsEnabled: notificationsEnabled, lastLoginAt: lastLoginAt?.rfc3339(),
                        mustChangePassword: mustChangePassword, languageChosen: languageChosen)
    }
}

extension AuditEntry {
    var view: AuditEntryView {
        AuditEntryView(id: id, at: at?.rfc3339(), event: event, actorId: actorID, actorUsername: actorUsername, targetId: targetID,
                       targetUsername: targetUsername, login: login, ip: ip, detail: detail)
    }
}

extension InviteRecord {
    /// The admin's view at `now` (which decides its status); `url` only right after creation.
    func view(at now: Timestamp, url: String? = nil) -> InviteView {
        InviteView(id: id, url: url, role: role, expiresAt: expiresAt.rfc3339(), maxUses: maxUses, uses: uses, note: note, createdBy: createdBy,
                   createdAt: createdAt.rfc3339(), revokedAt: revokedAt?.rfc3339(), status: status(at: now))
    }
}
