import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the translation controllers share: the path reader, the documented error answers and
/// the OpenAPI schemas of the answers (each checked against its `Encodable` type by
/// `ViewSchemaTests`).
enum TranslationAPI {
    static let maxBody = 256 * 1024

    /// The `{id}` path parameter; 404 with `message` when it is not an id at all.
    static func pathID(_ request: Request, _ message: String) throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw APIError.notFound(message) }
        return id
    }

    // MARK: OpenAPI

    static let languageSchema: JSONValue = ["type": "string", "pattern": "^[a-z]{2,3}(-[A-Za-z0-9]{2,4})?$", "example": "es"]
    static let textSchema = APISchema.object([
        "text": APISchema.string, "source": APISchema.string, "target": APISchema.string, "provider": APISchema.string,
        "cached": APISchema.boolean,
    ], required: ["text", "source", "target", "provider", "cached"])
    static let messageSchema = APISchema.object([
        "messageId": APISchema.integer, "text": APISchema.string, "source": APISchema.string, "target": APISchema.string,
        "provider": APISchema.string, "cached": APISchema.boolean,
    ], required: ["messageId", "text", "source", "target", "provider", "cached"])
    static let noticeSchema = APISchema.object([
        "noticeId": APISchema.integer, "title": APISchema.string, "text": APISchema.string, "source": APISchema.string,
        "target": APISchema.string, "provider": APISchema.string, "cached": APISchema.boolean,
    ], required: ["noticeId", "title", "text", "source", "target", "provider", "cached"])
    static let chatSchema = APISchema.object(["enabled": APISchema.boolean, "target": APISchema.nullable(APISchema.string)],
                                             required: ["enabled", "target"])
    static let settingsSchema = APISchema.object([
        "provider": ["type": "string", "enum": ["libretranslate", "deepl", "yandex", "none"]], "url": APISchema.string,
        "apiKeySet": APISchema.boolean, "apiKeyNeedsReentry": APISchema.boolean, "timeoutMs": APISchema.integer,
        "ready": APISchema.boolean, "problem": APISchema.nullable(APISchema.string),
    ], required: ["provider", "url", "apiKeySet", "apiKeyNeedsReentry", "timeoutMs", "ready", "problem"])

    static let authErrors = [APISchema.error(401, "unauthenticated"), APISchema.error(403, "csrf_failed or account_inactive")]
    static let adminErrors = [APISchema.error(401, "unauthenticated"), APISchema.error(403, "forbidden (not an admin) or csrf_failed")]
    static let failures = authErrors + [
        APISchema.error(413, "text_too_long"), APISchema.error(422, "validation_failed, unprocessable or unsupported_direction"),
        APISchema.error(429, "quota_exceeded or rate_limited (with Retry-After)"),
        APISchema.error(502, "invalid_key, blocked_key or provider_unavailable"),
        APISchema.error(503, "translation_disabled"), APISchema.error(504, "provider_timeout"),
    ]

    static let languagesSchema = APISchema.object([
        "provider": APISchema.string,
        "languages": APISchema.array(APISchema.object(["code": APISchema.string, "name": APISchema.string], required: ["code", "name"])),
    ], required: ["provider", "languages"])
    static let checkSchema = APISchema.object(["ok": APISchema.boolean, "message": APISchema.string], required: ["ok", "message"])
}
