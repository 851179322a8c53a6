import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The OpenAPI pieces the messaging controllers share: the response schemas (checked against the
/// view types by `ViewSchemaTests`) and the error answers most routes document.
enum MessagingDocs {
    static let tags = ["messaging"]

    static func items(_ schema: JSONValue) -> JSONValue {
        APISchema.object(["items": APISchema.array(schema)], required: ["items"])
    }

    static func error(_ status: Int, _ description: String) -> ResponseDoc { APISchema.error(status, description) }

    static let readErrors = [error(401, "unauthenticated or session_expired"), error(403, "account_inactive")]
    static let unsafeErrors = [error(401, "unauthenticated or session_expired"), error(403, "csrf_failed or account_inactive")]
    static let adminErrors = [error(401, "unauthenticated or session_expired"),
                              error(403, "forbidden (not allowed in this chat), csrf_failed or account_inactive")]
    static let writeErrors = adminErrors + [
        error(400, "invalid_json"), error(413, "payload_too_large"), error(415, "unsupported_media_type"),
        error(422, "validation_failed, per field in details.fields"),
    ]
    static let notMember = error(404, "not_found (no such chat, or I am not a member)")
    static let notAMember = error(404, "not_found (no such chat, or not a member)")
    static let directChat = error(409, "direct_chat (a direct chat's members and settings cannot change)")

    // MARK: Request fields

    static let name: JSONValue = ["type": "string", "minLength": 1, "maxLength": 100]
    static let description: JSONValue = ["type": "string", "maxLength": 1000]
    static let tagList: JSONValue = ["type": "array", "maxItems": 10, "items": ["type": "string", "minLength": 1, "maxLength": 30]]
    static let body: JSONValue = ["type": "string", "minLength": 1, "maxLength": 4000]
    static let userIDBody = APISchema.object(["userId": APISchema.integer], required: ["userId"])

    // MARK: Responses (`MessageView`, `ChatView`, `ContactView`, `SearchHitView`)

    static let message = APISchema.object([
        "id": APISchema.integer, "chatId": APISchema.integer, "senderId": APISchema.integer,
        "body": ["type": "string", "nullable": true], "mentions": APISchema.array(APISchema.integer),
        "createdAt": APISchema.dateTime, "editedAt": ["type": "string", "format": "date-time", "nullable": true],
        "deleted": APISchema.boolean, "kind": ["type": "string", "enum": ["text", "system"]],
        "system": APISchema.nullable(systemLine),
    ], required: ["id", "chatId", "senderId", "body", "mentions", "createdAt", "editedAt", "deleted", "kind", "system"])

    /// What a system line says: the change, who made it (also the message's `senderId`) and whom
    /// it concerns; `name` is the group's new name for `chat.renamed`.
    static let systemLine = APISchema.object([
        "event": ["type": "string", "enum": .array(SystemLine.Event.allCases.map { .string($0.rawValue) })],
        "actorId": APISchema.integer, "userIds": APISchema.array(APISchema.integer), "name": APISchema.string,
    ], required: ["event", "actorId", "userIds"])

    static let chatMember = APISchema.object(["userId": APISchema.integer, "admin": APISchema.boolean, "away": Away.schema],
                                             required: ["userId", "admin"])

    static let chat = APISchema.object([
        "id": APISchema.integer, "kind": ["type": "string", "enum": ["direct", "group"]], "name": ["type": "string", "nullable": true],
        "description": APISchema.string, "tags": APISchema.array(APISchema.string), "public": APISchema.boolean,
        "creatorId": APISchema.integer, "members": APISchema.array(chatMember),
        "lastMessage": APISchema.nullable(message), "unreadCount": APISchema.integer, "mentionCount": APISchema.integer,
        "createdAt": APISchema.dateTime, "member": APISchema.boolean,
        "notifications": ["type": "string", "enum": ["all", "mentions", "none"], "description": "the reader's push level for this chat"],
    ], required: ["id", "kind", "name", "description", "tags", "public", "creatorId", "members", "lastMessage", "unreadCount",
                  "mentionCount", "createdAt", "notifications"])

    static let contact = APISchema.object([
        "userId": APISchema.integer, "username": APISchema.string, "displayName": APISchema.string, "active": APISchema.boolean,
        "addedAt": APISchema.dateTime,
    ], required: ["userId", "username", "displayName", "active", "addedAt"])

    static let hit = APISchema.object(["message": message, "chatId": APISchema.integer, "snippet": APISchema.string],
                                      required: ["message", "chatId", "snippet"])
}
