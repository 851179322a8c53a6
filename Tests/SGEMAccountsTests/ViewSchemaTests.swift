@testable import SGEMAccounts
import SGEMCore
import SGEMSupport
import Testing

/// Each answer type of the accounts API against the OpenAPI schema documented for it: a sample
/// value's keys are the schema's properties (no undocumented key, none documented but missing,
/// every required one present), a `null` only where the schema says nullable, and nested objects
/// and array items likewise — so the types and the document cannot drift apart.
@Suite struct ViewSchemaTests {
    static let user = UserView(id: 7, username: "ana", displayName: "Ana", role: .employee, active: true, position: "Sales",
                               phone: "+34 600", email: "ana@example.com", twitter: "ana", linkedin: "ana-g", bio: "Hi", status: "Busy",
                               country: "ES", language: "es", avatarUrl: "/api/v1/users/7/avatar?v=1", createdAt: "2026-12-01T10:00:00Z",
                               away: AwayView(until: "2026-12-24"))
    static let bareUser = UserView(id: 8, username: "bob", displayName: "Bob", role: .admin, active: false, position: nil, phone: nil,
                                   email: "bob@example.com", twitter: nil, linkedin: nil, bio: nil, status: nil, country: nil, language: "en",
                                   avatarUrl: nil, createdAt: "2026-12-01T10:00:00Z")
    static let me = PrivateUserView(user: bareUser, notificationsEnabled: true, lastLoginAt: "2026-12-02T08:00:00Z",
                                    mustChangePassword: false, languageChosen: true)
    static let invite = InviteView(id: 3, url: nil, role: .employee, expiresAt: "2026-12-08T10:00:00Z", maxUses: 5, uses: 1, note: "team",
                                   createdBy: 1, createdAt: "2026-12-01T10:00:00Z", revokedAt: nil, status: "live")
    static let audit = AuditEntryView(id: 9, at: "2026-12-01T10:00:00Z", event: "login.failure", actorId: nil, actorUsername: nil,
                                      targetId: 7, targetUsername: "ana", login: "ana", ip: "10.0.0.1", detail: "wrong password")

    /// A sample, its schema, and the documented keys it may leave out (optional by design).
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let value: JSONValue
        let schema: JSONValue
        var mayLack: Set<String> = []
        var testDescription: String { name }
    }

    static func json(_ value: some Encodable) -> JSONValue {
        (try? OrderedJSONEncoder.jsonValue(value)) ?? .null
    }

    static let cases: [Case] = [
        Case(name: "user", value: json(user), schema: userSchema),
        Case(name: "user, empty fields, not away", value: json(bareUser), schema: userSchema, mayLack: ["away"]),
        Case(name: "me", value: json(me), schema: privateUserSchema, mayLack: ["away"]),
        Case(name: "session", value: json(SessionView(token: "t", csrfToken: "c", expiresAt: "2026-12-31T00:00:00Z", user: me)),
             schema: sessionSchema, mayLack: ["away"]),
        Case(name: "directory page", value: json(UserPageView(items: [user], nextAfter: 7, total: 2, active: 1)), schema: userPageSchema),
        Case(name: "last directory page", value: json(UserPageView(items: [bareUser], nextAfter: nil, total: 2, active: 1)),
             schema: userPageSchema, mayLack: ["away"]),
        Case(name: "created user", value: json(CreatedUserView(user: user, password: "generated")), schema: createdUserSchema),
        Case(name: "created user, own password", value: json(CreatedUserView(user: user)), schema: createdUserSchema, mayLack: ["password"]),
        Case(name: "password", value: json(PasswordView(password: "p")), schema: passwordSchema),
        Case(name: "avatar URL", value: json(AvatarURLView(avatarUrl: "/api/v1/users/7/avatar?v=2")), schema: avatarURLSchema),
        Case(name: "setup status", value: json(SetupStatusView(open: true)), schema: setupStatusSchema),
        Case(name: "password help", value: json(PasswordHelpView(adminName: nil)), schema: passwordHelpSchema),
        Case(name: "registration", value: json(RegistrationView(mode: "domain", domain: "example.com", companyName: nil)),
             schema: registrationSchema),
        Case(name: "audit page", value: json(AuditPageView(items: [audit], nextBefore: 9)), schema: auditPageSchema),
        Case(name: "audit event names", value: json(NameListView(items: ["login.success"])), schema: nameListSchema),
        Case(name: "invitations", value: json(InviteListView(items: [invite])), schema: inviteListSchema),
        Case(name: "created invitation",
             value: json(InviteView(id: 3, url: "http://sgem.example/join#invite=x", role: .admin, expiresAt: "2026-12-08T10:00:00Z",
                                    maxUses: 1, uses: 0, note: nil, createdBy: nil, createdAt: "2026-12-01T10:00:00Z",
                                    revokedAt: "2026-12-02T10:00:00Z", status: "revoked")),
             schema: createdInviteSchema),
        Case(name: "invitation preview", value: json(InvitePreviewView(companyName: "Acme", role: .employee, expiresAt: "2026-12-08T10:00:00Z")),
             schema: invitePreviewSchema),
    ]

    @Test(arguments: cases) func answerMatchesItsSchema(_ c: Case) {
        Self.check(c.value, against: c.schema, mayLack: c.mayLack, at: c.name)
    }

    @Test func keysKeepTheirDeclaredOrder() throws {
        let keys = try #require(Self.json(Self.me).objectValue).map(\.0)
        #expect(keys == ["id", "username", "displayName", "role", "active", "position", "phone", "email", "twitter", "linkedin", "bio",
                         "status", "country", "language", "avatarUrl", "createdAt", "notificationsEnabled", "lastLoginAt",
                         "mustChangePassword", "languageChosen"])
    }

    /// The properties and required keys of an object schema, `allOf` parts merged.
    static func shape(_ schema: JSONValue) -> (properties: [String: JSONValue], required: Set<String>)? {
        if let parts = schema["allOf"]?.arrayValue {
            var properties: [String: JSONValue] = [:]
            var required: Set<String> = []
            for part in parts {
                guard let s = shape(part) else { return nil }
                properties.merge(s.properties) { first, _ in first }
                required.formUnion(s.required)
            }
            return (properties, required)
        }
        guard let pairs = schema["properties"]?.objectValue else { return nil }
        return (Dictionary(pairs, uniquingKeysWith: { first, _ in first }),
                Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue)))
    }

    static func check(_ value: JSONValue, against schema: JSONValue, mayLack: Set<String>, at path: String) {
        if value == .null {
            #expect(schema["nullable"] == .bool(true), "\(path) is null but its schema is not nullable")
            return
        }
        if let items = value.arrayValue {
            #expect(schema["type"]?.stringValue == "array", "\(path) is an array but its schema is not")
            for (i, item) in items.enumerated() { check(item, against: schema["items"] ?? .null, mayLack: mayLack, at: "\(path)[\(i)]") }
            return
        }
        guard let pairs = value.objectValue else {
            let type = schema["type"]?.stringValue
            switch value {
            case .string: #expect(type == "string", "\(path) is a string, documented as \(type ?? "nothing")")
            case .bool: #expect(type == "boolean", "\(path) is a boolean, documented as \(type ?? "nothing")")
            case let .number(n): #expect(type == "integer" && n.rounded() == n || type == "number", "\(path) is \(n), documented as \(type ?? "nothing")")
            default: break
            }
            return
        }
        guard let (properties, required) = shape(schema) else {
            Issue.record("\(path) is an object but its schema lists no properties")
            return
        }
        let keys = Set(pairs.map(\.0))
        #expect(keys.subtracting(properties.keys).isEmpty, "\(path) has undocumented keys \(keys.subtracting(properties.keys).sorted())")
        #expect(Set(properties.keys).subtracting(keys).subtracting(mayLack).isEmpty,
                "\(path) lacks documented keys \(Set(properties.keys).subtracting(keys).subtracting(mayLack).sorted())")
        #expect(required.subtracting(keys).isEmpty, "\(path) lacks required keys \(required.subtracting(keys).sorted())")
        for (key, child) in pairs {
            if let childSchema = properties[key] { check(child, against: childSchema, mayLack: mayLack, at: "\(path).\(key)") }
        }
    }
}
