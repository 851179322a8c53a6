import SGEMCore
import SGEMHTTP
import SGEMSupport

extension CompanyModule {
    /// How often every company feed is fetched.
    static let feedInterval = Setting("feed-interval", .seconds(60...86_400), default: "900",
                                      "seconds between fetches of the company feeds (RSS or Atom) shown on Home")
    /// How long one feed's fetch may take.
    static let feedTimeout = Setting("feed-timeout", .seconds(1...120), default: "20",
                                     "seconds one company feed fetch may take, redirects and body included")

    public var settings: [Setting] { [CompanyModule.feedInterval, CompanyModule.feedTimeout] }
}

/// The feed URLs admins set, checked: at most 10 absolute http(s) URLs without user
/// information, each at most 2,048 bytes, duplicates folded, order kept.
enum FeedURLs {
    static let maxCount = 10
    static let maxLength = 2048

    /// The audit entry of a change to the list; without an actor it came from the command line.
    static func auditRecord(_ urls: [String], actorID: Int64?, ip: String?) -> AuditRecord {
        let list = urls.isEmpty ? "no feeds" : urls.joined(separator: " ")
        return AuditRecord(event: "company.feeds", actorID: actorID, ip: ip, detail: actorID == nil ? list + " (command line)" : list)
    }

    /// `urls` checked; 422 `validation_failed` naming the first problem.
    static func checked(_ urls: [String]) throws(APIError) -> [String] {
        var problems: [String: String] = [:]
        var kept: [String] = []
        for (index, raw) in urls.enumerated() {
            let url = raw.trimmingWhitespace()
            if let problem = problem(with: url) {
                problems["urls[\(index)]"] = problem
            } else if !kept.contains(url) {
                kept.append(url)
            }
        }
        if problems.isEmpty, kept.count > maxCount { problems["urls"] = "must list at most \(maxCount) feeds" }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return kept
    }

    /// What is wrong with one URL, in words; nil when it is usable.
    static func problem(with url: String) -> String? {
        guard !url.isEmpty else { return "must not be empty" }
        guard url.utf8.count <= maxLength else { return "must be at most \(maxLength) characters" }
        do {
            _ = try HTTPClientURL(url)
            return nil
        } catch {
            if error.message.contains("user information") { return "must not contain a user name or password" }
            let lower = url.lowercased()
            if !(lower.hasPrefix("http://") || lower.hasPrefix("https://")) { return "must be an http:// or https:// address" }
            return "is not a valid web address"
        }
    }

    /// The `urls` of a request body: an array of strings.
    static func fromBody(_ request: Request) throws -> [String] {
        let body = try JSONBody(request)
        guard let list = body.fields["urls"]?.arrayValue else {
            throw APIError.validationFailed(["urls": "must be a list of feed addresses"])
        }
        guard list.count <= maxCount * 5 else { throw APIError.validationFailed(["urls": "must list at most \(maxCount) feeds"]) }
        var urls: [String] = []
        var problems: [String: String] = [:]
        for (index, item) in list.enumerated() {
            if let s = item.stringValue { urls.append(s) } else { problems["urls[\(index)]"] = "must be a string"; urls.append("") }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return try checked(urls)
    }
}

extension CompanyRuntime {
    /// `GET /company/feed` for everyone signed in; `GET|PUT /admin/company/feeds` for admins.
    func registerFeedRoutes(user: RouteGroup, admin: RouteGroup) {
        let feeds = self.feeds
        let fetcher = self.fetcher
        let logger = self.logger
        let registry = self.registry
        user.get("/company/feed", doc: RouteDoc(
            summary: "The newest entries of the company's feeds, newest first", tags: ["company"],
            query: [QueryDoc("limit", "how many entries, 1 to 50 (default 20)", schema: ["type": "integer"])],
            responses: [ResponseDoc(status: 200, description: "The entries", schema: feedItemsSchema),
                        ResponseDoc(status: 422, description: "A bad limit, in details.fields")],
            authenticated: true)) { request, _ in
            var limit = 20
            if let raw = request.query["limit"], !raw.isEmpty {
                guard let n = Int(raw), (1...50).contains(n) else { throw APIError.validationFailed(["limit": "must be a whole number from 1 to 50"]) }
                limit = n
            }
            return .json(["items": .array(try await feeds.latest(limit: limit).map(\.json))])
        }
        admin.get("/company/feeds", doc: RouteDoc(
            summary: "The company feed URLs with each one's last fetch", tags: ["company"],
            responses: [ResponseDoc(status: 200, description: "The feeds", schema: feedStatusesSchema)],
            authenticated: true)) { _, _ in
            .json(["items": .array(try await feeds.feeds().map(\.json))])
        }
        admin.put("/company/feeds", maxBody: 64 * 1024, doc: RouteDoc(
            summary: "Replace the company feed URLs (kept URLs keep their entries); new ones are fetched at once", tags: ["company"],
            requestSchema: feedsRequestSchema,
            responses: [ResponseDoc(status: 200, description: "The feeds now", schema: feedStatusesSchema),
                        ResponseDoc(status: 422, description: "Invalid URLs, per field in details.fields")],
            authenticated: true)) { request, context in
            let urls = try FeedURLs.fromBody(request)
            // Resolved per request: accounts, which keeps the audit log, boots after company.
            let audit = registry.resolve((any AuditTrail).self)
            let entry = FeedURLs.auditRecord(urls, actorID: try context.user().id, ip: request.clientAddress)
            let saved = try await feeds.replace(with: urls) { db in try audit?.record(entry, in: db) }
            logger.notice("company feeds changed", ["user.id": String(try context.user().id), "request.id": context.requestID,
                                                    "feeds": String(urls.count)])
            fetcher.wake()
            return .json(["items": .array(saved.map(\.json))])
        }
    }
}

let feedItemsSchema: JSONValue = [
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

let feedStatusesSchema: JSONValue = [
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

let feedsRequestSchema: JSONValue = [
    "type": "object",
    "properties": [
        "urls": ["type": "array", "description": "at most 10 distinct URLs; duplicates are folded", "items": ["type": "string", "maxLength": 2048, "description": "an http(s) RSS or Atom feed URL"]],
    ],
    "required": ["urls"],
]
