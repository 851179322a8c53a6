import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

// What the accounts controllers share: the OpenAPI schemas of their bodies and answers (checked
// against the view types by `ViewSchemaTests`), the responses several endpoints document, and
// the helpers that shape session and password answers.

extension Actor {
    /// The user `id` acting through `request`.
    static func user(_ id: Int64?, _ request: Request) -> Actor { Actor(userID: id, ip: request.clientAddress) }
}

/// The shared pieces of the accounts API's documentation and answers.
enum AccountsAPI {
    static let maxAvatarBytes = 2 * 1024 * 1024

    static let notJSON = ResponseDoc(status: 415, description: "unsupported_media_type (the body must be application/json)")
    static let busy = ResponseDoc(status: 503, description: "busy, with Retry-After")
    static let nameTaken = ResponseDoc(status: 409, description: "username_taken or email_taken")
    static let invalid = ResponseDoc(status: 422, description: "validation_failed")
    static let notFound = ResponseDoc(status: 404, description: "not_found")
    static let pictureBody: JSONValue = ["type": "string", "format": "binary"]

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
        var response = Response.json(SessionView(token: session.token, csrfToken: session.csrfToken, expiresAt: session.expiresAtText,
                                                 user: user.privateView), status: status)
        response.headers.add("Set-Cookie", SessionManager.cookie(session, secure: request.isSecure))
        return notStored(response)
    }

    /// The `{id}` of the path as a user id; 404 when it is none.
    static func userID(_ request: Request) throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? "") else { throw AccountsError.userNotFound }
        return id
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

let roleSchema: JSONValue = ["type": "string", "enum": ["admin", "employee"]]
let dateTime: JSONValue = ["type": "string", "format": "date-time"]

let inviteSchema = object([
    "id": integer, "role": roleSchema, "expiresAt": dateTime,
    "maxUses": integer, "uses": integer, "note": nullableString, "createdBy": nullableInteger,
    "createdAt": dateTime, "revokedAt": ["type": "string", "format": "date-time", "nullable": true],
    "status": ["type": "string", "enum": ["live", "expired", "used", "revoked"]],
])

let userPageSchema = object(["items": ["type": "array", "items": userSchema], "nextAfter": nullableInteger, "total": integer, "active": integer])
let createdUserSchema = object(["user": userSchema, "password": string])
let passwordSchema = object(["password": string])
let avatarURLSchema = object(["avatarUrl": string])
let setupStatusSchema = object(["open": boolean], required: ["open"])
let passwordHelpSchema = object(["adminName": nullableString], required: ["adminName"])
let registrationSchema = object(["mode": ["type": "string", "enum": ["open", "domain", "closed"]], "domain": nullableString,
                                 "companyName": nullableString], required: ["mode", "domain", "companyName"])
let auditPageSchema = object(["items": ["type": "array", "items": auditSchema], "nextBefore": nullableInteger])
let nameListSchema = object(["items": ["type": "array", "items": string]])
let createdInviteSchema: JSONValue = ["allOf": [inviteSchema, object(["url": string])]]
let inviteListSchema = object(["items": ["type": "array", "items": inviteSchema]])
let invitePreviewSchema = object(["companyName": nullableString, "role": roleSchema, "expiresAt": dateTime],
                                 required: ["companyName", "role", "expiresAt"])
