import SGEMCore
import SGEMHTTP
import SGEMSupport

/// What the company controllers share: the route groups by who may call them, and the OpenAPI
/// schemas of the bodies and answers (each answer checked against its `Encodable` view by
/// `ViewSchemaTests`).
enum CompanyAPI {
    static let maxBody = 16 * 1024
    static let maxFeedsBody = 64 * 1024

    static let nullableString: JSONValue = ["type": "string", "nullable": true]
    static let timestampSchema: JSONValue = ["type": "string", "format": "date-time", "nullable": true]

    static let settingsRequestSchema: JSONValue = [
        "type": "object",
        "properties": [
            "defaultAllowanceDays": ["type": "integer", "minimum": 0, "maximum": 366],
            "workingDays": ["type": "array", "items": ["type": "integer", "minimum": 1, "maximum": 7]],
            "registration": ["type": "string", "enum": ["closed", "open", "domain"]],
            "registrationDomain": nullableString,
            "defaultLanguage": ["type": "string", "pattern": "^[a-z]{2}$"],
            "timeZone": ["type": "string", "description": "IANA time zone name, e.g. Europe/Madrid"],
            "maxSimultaneousAbsences": ["type": "integer", "minimum": 1, "maximum": 10000, "nullable": true],
            "carryOverMaxDays": ["type": "integer", "minimum": 0, "maximum": 366],
            "carryOverExpires": ["type": "string", "pattern": "^[0-9]{2}-[0-9]{2}$", "nullable": true],
            "pushContact": ["type": "string", "nullable": true, "maxLength": 200,
                            "description": "mailto: or https: contact push services are given (VAPID sub)"],
        ],
    ]

    static let settingsSchema: JSONValue = [
        "type": "object",
        "properties": [
            "defaultAllowanceDays": ["type": "integer"],
            "workingDays": ["type": "array", "items": ["type": "integer"]],
            "registration": ["type": "string", "enum": ["closed", "open", "domain"]],
            "registrationDomain": nullableString,
            "defaultLanguage": ["type": "string"],
            "timeZone": ["type": "string"],
            "maxSimultaneousAbsences": ["type": "integer", "nullable": true],
            "carryOverMaxDays": ["type": "integer"],
            "carryOverExpires": nullableString,
            "pushContact": nullableString,
            "updatedAt": timestampSchema,
        ],
        "required": ["defaultAllowanceDays", "workingDays", "registration", "registrationDomain", "defaultLanguage", "timeZone",
                     "maxSimultaneousAbsences", "carryOverMaxDays", "carryOverExpires", "updatedAt"],
    ]

    static let profileRequestSchema: JSONValue = [
        "type": "object",
        "properties": [
            "name": nullableString, "phone": nullableString, "email": nullableString, "website": nullableString,
            "address": nullableString,
        ],
    ]

    static let profileSchema: JSONValue = [
        "type": "object",
        "properties": [
            "name": nullableString, "phone": nullableString, "email": nullableString, "website": nullableString,
            "address": nullableString, "updatedAt": timestampSchema,
        ],
        "required": ["name", "phone", "email", "website", "address", "updatedAt"],
    ]

    static let feedItemsSchema: JSONValue = [
        "type": "object",
        "properties": [
            "items": ["type": "array", "items": [
                "type": "object",
                "properties": [
                    "title": ["type": "string"],
                    "url": ["type": "string", "nullable": true, "description": "an absolute http(s) link, or null"],
                    "publishedAt": timestampSchema,
                    "source": ["type": "string", "description": "the feed's title, else its host"],
                ],
                "required": ["title", "url", "publishedAt", "source"],
            ]],
        ],
        "required": ["items"],
    ]

    static let feedStatusesSchema: JSONValue = [
        "type": "object",
        "properties": [
            "items": ["type": "array", "items": [
                "type": "object",
                "properties": [
                    "url": ["type": "string"],
                    "title": nullableString,
                    "status": ["type": "string", "enum": ["pending", "ok", "error"]],
                    "error": ["type": "string", "nullable": true, "description": "why the last fetch failed, in words"],
                    "lastFetchedAt": timestampSchema,
                    "lastSuccessAt": timestampSchema,
                    "entryCount": ["type": "integer"],
                ],
                "required": ["url", "title", "status", "error", "lastFetchedAt", "lastSuccessAt", "entryCount"],
            ]],
        ],
        "required": ["items"],
    ]

    static let feedsRequestSchema: JSONValue = [
        "type": "object",
        "properties": [
            "urls": ["type": "array", "description": "at most 10 distinct URLs; duplicates are folded", "items": ["type": "string", "maxLength": 2048, "description": "an http(s) RSS or Atom feed URL"]],
        ],
        "required": ["urls"],
    ]
}

/// The company API's route groups by who may call them, built once for all its controllers.
struct CompanyRouteGroups: Sendable {
    /// Any signed-in, active person.
    let signedIn: RouteGroup
    /// Admins, under `/admin`.
    let admins: RouteGroup

    init(_ routes: RouteGroup, services: ServiceRegistry) {
        signedIn = routes.group("", middleware: [RequireUser(services: services)])
        admins = routes.group("/admin", middleware: [RequireAdmin(services: services)])
    }
}
