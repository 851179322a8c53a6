import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the notices controllers share: the body cap, the documented error answers, the query
/// and path readers with their 422/404 wording, and the OpenAPI schemas of the answers (each
/// checked against its `Encodable` view by `ViewSchemaTests`).
enum NoticesAPI {
    /// A body of 20,000 characters written as JSON escapes (up to 12 bytes each for characters
    /// outside the BMP) still fits; anything larger is 413 before it is read.
    static let maxBody = 256 * 1024

    /// 401 without valid credentials, 403 for `forbidden`.
    static func authErrors(_ forbidden: String) -> [ResponseDoc] {
        [APISchema.error(401, "unauthenticated or session_expired"), APISchema.error(403, forbidden)]
    }

    /// What an admin's write with a body may be refused with.
    static let writeErrors = authErrors("forbidden (not an admin), csrf_failed or account_inactive") + [
        APISchema.error(400, "invalid_json"),
        APISchema.error(413, "payload_too_large"),
        APISchema.error(415, "unsupported_media_type"),
        APISchema.error(422, "validation_failed, per field in details.fields"),
    ]

    /// The `{id}` path parameter; 404 when it is not a notice id at all.
    static func id(_ request: Request) throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw NoticesError.noticeNotFound }
        return id
    }

    static let kindDoc = QueryDoc("kind", "company (company news) or holiday (personal updates); every kind when left out",
                                  schema: ["type": "string", "enum": ["company", "holiday"]])

    /// The `kind` filter; nil for every kind, 422 for an unknown one.
    static func kind(_ request: Request) throws -> Notice.Kind? {
        guard let raw = request.query["kind"], !raw.isEmpty else { return nil }
        guard let kind = Notice.Kind(rawValue: raw) else { throw APIError.validationFailed(["kind": "must be company or holiday"]) }
        return kind
    }

    /// `before` and `limit` (default 50, at most 200); 422 naming each bad one.
    static func paging(_ request: Request) throws -> (before: Int64?, limit: Int) {
        var problems: [String: String] = [:]
        var before: Int64?
        if let raw = request.query["before"], !raw.isEmpty {
            if let n = Int64(raw), n > 0 { before = n } else { problems["before"] = "must be a notice id" }
        }
        var limit = 50
        if let raw = request.query["limit"], !raw.isEmpty {
            if let n = Int(raw), (1...200).contains(n) { limit = n } else { problems["limit"] = "must be a whole number from 1 to 200" }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return (before, limit)
    }
}

// MARK: OpenAPI schemas

extension NoticesAPI {
    static let kindSchema: JSONValue = ["type": "string", "enum": ["company", "holiday"]]

    /// `NoticeView`.
    static let noticeSchema = APISchema.object([
        "id": APISchema.integer, "kind": kindSchema, "title": APISchema.string, "body": APISchema.string,
        "pinned": APISchema.boolean, "authorId": APISchema.nullable(APISchema.integer), "createdAt": APISchema.dateTime,
        "editedAt": APISchema.nullable(APISchema.dateTime), "read": APISchema.boolean,
        "readCount": APISchema.integer, "audienceCount": APISchema.integer,
    ], required: ["id", "kind", "title", "body", "pinned", "authorId", "createdAt", "editedAt", "read"])

    /// `NoticePageView`.
    static let pageSchema = APISchema.object([
        "items": APISchema.array(noticeSchema), "unreadCount": APISchema.integer,
        "unreadByKind": APISchema.object(["company": APISchema.integer, "holiday": APISchema.integer], required: ["company", "holiday"]),
        "nextBefore": APISchema.nullable(APISchema.integer),
    ], required: ["items", "unreadCount", "unreadByKind", "nextBefore"])

    /// What an admin posts or edits: `{title, body, pinned}`, `required` among them.
    static func writeSchema(required: [String]) -> JSONValue {
        APISchema.object(["title": ["type": "string", "minLength": 1, "maxLength": 200],
                          "body": ["type": "string", "maxLength": 20_000], "pinned": APISchema.boolean], required: required)
    }
}
