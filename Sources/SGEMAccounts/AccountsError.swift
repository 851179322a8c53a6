/// What goes wrong in the accounts module, in its own words: thrown by the service, the
/// sessions, the throttle and the hasher. The API answers each with its status and code
/// (`AccountsError+HTTP.swift`); the command line prints `message`.
enum AccountsError: Error, Equatable, CustomStringConvertible {
    case userNotFound
    case usernameTaken
    case emailTaken
    /// The store's unique index caught a name taken between the check and the insert.
    case usernameOrEmailTaken
    /// The change would leave the company without an active admin.
    case lastAdmin
    /// First-run setup: wrong or used token, or an active admin exists.
    case setupClosed
    /// The one answer for every invitation token that cannot make an account, so that none of
    /// them tells an unknown token from a spent one.
    case inviteNotFound
    /// No invitation has that id (an admin's revocation).
    case noSuchInvitation
    /// The directory's `after` names no user.
    case unknownCursor
    case invalidCredentials
    case accountInactive
    /// Registration is closed, or (with a domain) open only to that domain's addresses.
    case registrationClosed(domain: String?)
    /// The current password given with a password change is wrong.
    case wrongCurrentPassword
    /// Too many failures: wait this many seconds.
    case throttled(retryAfter: Int)
    /// Too many password checks are waiting: retry after this many seconds.
    case hasherBusy(retryAfter: Int)
    case sessionExpired
    /// A malformed `Authorization` header.
    case badAuthorization
    /// A cookie-authenticated request without the session's CSRF token, or from a foreign origin.
    case csrfFailed

    var message: String {
        switch self {
        case .userNotFound: "no such user"
        case .usernameTaken: "that username is taken"
        case .emailTaken: "that email address is already used"
        case .usernameOrEmailTaken: "that username or email address is taken"
        case .lastAdmin: "this would leave the company without an active admin"
        case .setupClosed: "setup is closed: the link is wrong or used, or an admin exists; log in instead"
        case .inviteNotFound: "this invitation is unknown, expired, used up or withdrawn; ask an admin for a new link"
        case .noSuchInvitation: "no such invitation"
        case .unknownCursor: "after must be the id of a user"
        case .invalidCredentials: "wrong username, email or password"
        case .accountInactive: "this account has been deactivated"
        case let .registrationClosed(domain?): "registration is open only to @\(domain) addresses"
        case .registrationClosed(nil): "registration is closed; ask an admin for an account"
        case .wrongCurrentPassword: "currentPassword is not your current password"
        case let .throttled(seconds): "too many requests; retry in \(seconds) s"
        case .hasherBusy: "too many password checks are waiting; try again in a moment"
        case .sessionExpired: "the session has expired or was ended; log in again"
        case .badAuthorization: "use 'Authorization: Bearer <token>'"
        case .csrfFailed: "missing or wrong X-CSRF-Token, or a foreign Origin"
        }
    }

    var description: String { message }
}
