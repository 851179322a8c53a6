import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

// The request bodies of the accounts API, each read once from its request with the checks the
// API has always made: one problem per field, answered together as 422 `validation_failed`.
// A body whose checks must wait for something else (setup checks its token first) keeps its
// problems until `check()`.

/// `POST /auth/login`.
struct LoginBody: RequestBody {
    let login: String
    let password: String

    init(reading body: inout JSONBody) {
        let login = body.string("login", required: true) ?? ""
        password = body.string("password", required: true) ?? ""
        self.login = String(login.trimmingWhitespace().lowercased().prefix(254))
    }
}

/// The fields every new account is made from: `POST /auth/register`, `POST /auth/setup` and
/// `POST /admin/users`. The company's default language when none is given.
struct NewAccountFields {
    let username: String
    let email: String
    let displayName: String
    let language: AccountLanguage

    init(_ body: inout JSONBody, defaultLanguage: String) {
        let rawUsername = body.string("username", required: true)
        let rawEmail = body.string("email", required: true)
        let username = rawUsername.flatMap(AccountRules.username)
        if rawUsername != nil && username == nil { body.problem("username", "must be 3 to 32 of a-z, 0-9, '.', '_' and '-'") }
        let email = rawEmail.flatMap(AccountRules.email)
        if rawEmail != nil && email == nil { body.problem("email", "must be an email address") }
        displayName = NewAccountFields.displayName(body.string("displayName"), fallback: username ?? "", body: &body)
        let given = body.string("language")
        if let given, !AccountRules.isLanguage(given) { body.problem("language", AccountRules.languageProblem) }
        self.username = username ?? ""
        self.email = email ?? ""
        language = AccountLanguage(code: given ?? defaultLanguage, chosen: given != nil)
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

    /// `key` as a new password: required, or (`required` false) optional.
    static func password(_ key: String, required: Bool, body: inout JSONBody) -> String? {
        let password = body.string(key, required: required)
        if let password, let problem = AccountRules.passwordProblem(password) { body.problem(key, problem) }
        return password
    }
}

/// `POST /auth/register`. Without an invitation a closed registration refuses before any field
/// is judged.
struct RegisterBody {
    let invite: String?
    let account: NewAccountFields
    let password: String

    init(_ request: Request, settings: CompanySettingsValue) throws {
        var body = try JSONBody(request)
        invite = body.string("invite")
        guard invite != nil || settings.registration != "closed" else { throw AccountsError.registrationClosed(domain: nil) }
        account = NewAccountFields(&body, defaultLanguage: settings.defaultLanguage)
        password = NewAccountFields.password("password", required: true, body: &body) ?? ""
        try body.check()
    }
}

/// `POST /auth/setup`: its problems wait until the token has been checked (`check()`).
struct SetupBody {
    let token: String
    let account: NewAccountFields
    let password: String
    private let body: JSONBody

    init(_ request: Request, defaultLanguage: String) throws {
        var body = try JSONBody(request)
        token = body.string("token", required: true) ?? ""
        account = NewAccountFields(&body, defaultLanguage: defaultLanguage)
        password = NewAccountFields.password("password", required: true, body: &body) ?? ""
        self.body = body
    }

    /// 422 `validation_failed` when any field had a problem.
    func check() throws { try body.check() }
}

/// `POST /admin/users`.
struct CreateUserBody {
    let account: NewAccountFields
    let role: UserRole
    /// Nil: generate one, which the person replaces at the first login.
    let password: String?

    init(_ request: Request, defaultLanguage: String) throws {
        var body = try JSONBody(request)
        account = NewAccountFields(&body, defaultLanguage: defaultLanguage)
        var role = UserRole.employee
        if let raw = body.string("role") {
            if let r = UserRole(rawValue: raw) { role = r } else { body.problem("role", "must be admin or employee") }
        }
        self.role = role
        password = NewAccountFields.password("password", required: false, body: &body)
        try body.check()
    }
}

/// `PUT /me/password`.
struct PasswordChangeBody: RequestBody {
    let currentPassword: String
    let newPassword: String

    init(reading body: inout JSONBody) {
        currentPassword = body.string("currentPassword", required: true) ?? ""
        newPassword = NewAccountFields.password("newPassword", required: true, body: &body) ?? ""
    }
}

/// `PATCH /me` and `PATCH /admin/users/{id}`: fields left out keep their value; null or "" clears.
/// Only admins change email, role and active.
struct ProfileBody {
    let changes: ProfileChanges
    var role: UserRole?
    var active: Bool?

    init(_ request: Request, admin: Bool) throws {
        var body = try JSONBody(request)
        changes = ProfileBody.changes(&body, includeEmail: admin)
        if admin {
            if let raw = body.string("role") {
                role = UserRole(rawValue: raw)
                if role == nil { body.problem("role", "must be admin or employee") }
            }
            active = body.bool("active")
        }
        try body.check()
    }

    static func changes(_ body: inout JSONBody, includeEmail: Bool) -> ProfileChanges {
        var changes = ProfileChanges()
        if body.has("displayName") {
            let raw = body.string("displayName")
            if raw == nil && body.problems["displayName"] == nil { body.problem("displayName", "must not be empty") }
            changes.displayName = NewAccountFields.displayName(raw ?? "", fallback: "", body: &body)
        }
        for field in ProfileField.all {
            guard case let .some(value) = body.nullableString(field.json) else { continue }
            switch field.normalize(value ?? "") {
            case let .success(stored): changes.fields.append((field, stored))
            case let .failure(problem): body.problem(field.json, problem.message)
            }
        }
        if body.has("language") {
            if let language = body.string("language"), AccountRules.isLanguage(language) {
                changes.language = language
            } else {
                body.problem("language", AccountRules.languageProblem)
            }
        }
        changes.notificationsEnabled = body.bool("notificationsEnabled")
        if includeEmail, body.has("email") {
            if let email = body.string("email").flatMap(AccountRules.email) {
                changes.email = email
            } else {
                body.problem("email", "must be an email address")
            }
        }
        return changes
    }
}

/// `POST /admin/invites`: the invitation's settings, defaults for those left out.
struct InviteBody: RequestBody {
    let wanted: InviteRequest

    init(reading body: inout JSONBody) {
        var wanted = InviteRequest()
        if let raw = body.string("role") {
            if let role = UserRole(rawValue: raw) { wanted.role = role } else { body.problem("role", InviteRules.roleProblem) }
        }
        if let days = InviteBody.wholeNumber(&body, "expiresInDays", in: InviteRules.days, InviteRules.dayProblem) { wanted.days = days }
        if let uses = InviteBody.wholeNumber(&body, "maxUses", in: InviteRules.uses, InviteRules.useProblem) { wanted.maxUses = uses }
        if case let .some(raw) = body.nullableString("note") {
            switch InviteRules.note(raw ?? "") {
            case let .success(note): wanted.note = note
            case let .failure(problem): body.problem("note", problem.message)
            }
        }
        self.wanted = wanted
    }

    /// A whole number within `range` from `body[key]`; nil when absent or null; a problem otherwise.
    static func wholeNumber(_ body: inout JSONBody, _ key: String, in range: ClosedRange<Int>, _ problem: String) -> Int? {
        switch body.fields[key] {
        case nil, .null?: return nil
        case let .number(n)? where n.rounded() == n && n >= Double(range.lowerBound) && n <= Double(range.upperBound):
            return Int(n)
        default:
            body.problem(key, problem)
            return nil
        }
    }
}
