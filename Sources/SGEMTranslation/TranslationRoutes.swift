import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import Synchronization

/// The translation section of the API: translating a message, a notice or any text; a chat in
/// my language; the provider's languages; the admin's provider settings and live check.
struct TranslationRoutes: Sendable {
    static let maxBody = 256 * 1024
    /// The longest text `POST /translate` takes, in characters (a notice's body is at most 20,000).
    static let maxText = 20_000

    let desk: TranslationDesk
    let chats: ChatTranslator
    let services: ServiceRegistry
    let peers: TranslationPeers
    let limiter: TranslationLimiter

    func register(_ routes: RouteGroup) {
        let user = routes.group("", middleware: [RequireUser(services: services)])
        let admin = routes.group("/admin/translation", middleware: [RequireAdmin(services: services)])
        let (desk, chats, peers, limiter) = (self.desk, self.chats, self.peers, self.limiter)
        let S = APISchema.self

        user.post("/messages/{id}/translation", maxBody: TranslationRoutes.maxBody, doc: RouteDoc(
            summary: "A message in the reader's language (or the one asked for)",
            description: """
                target defaults to the reader's language. The original stays in the message; this is a translation, \
                marked by source and target. 404 for a message of a chat the reader is not a member of.
                """,
            tags: ["translation"], requestSchema: S.object(["target": TranslationRoutes.languageSchema]),
            responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationRoutes.messageSchema),
                        S.error(404, "not_found (no such message in my chats)"),
                        S.error(409, "message_deleted, or system_message (a line saying who came and went)")]
                + TranslationRoutes.failures,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try TranslationRoutes.pathID(request, "no such message")
            var body = try TranslationRoutes.optionalBody(request)
            let asked = TranslationRoutes.language("target", &body)
            try body?.check()
            guard let message = try await peers.messages.message(id, readableBy: me.id) else { throw APIError.notFound("no such message") }
            if message.json["kind"]?.stringValue == "system" {
                throw APIError.conflict("system_message", "a line saying who came and went has nothing to translate")
            }
            guard let text = message.body else { throw APIError.conflict("message_deleted", "a deleted message has nothing to translate") }
            let target = try await TranslationRoutes.target(asked, for: me.id, peers: peers)
            try await limiter.admit(me.id)
            let out = try await desk.translate(text, source: nil, target: target)
            return .json(.object([("messageId", .number(Double(id)))] + TranslationRoutes.fields(out)))
        }

        user.post("/notices/{id}/translation", maxBody: TranslationRoutes.maxBody, doc: RouteDoc(
            summary: "A notice's title and text in the reader's language (or the one asked for)",
            description: "404 for a notice the reader may not see (someone else's holiday notice).",
            tags: ["translation"], requestSchema: S.object(["target": TranslationRoutes.languageSchema]),
            responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationRoutes.noticeSchema),
                        S.error(404, "not_found")] + TranslationRoutes.failures,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try TranslationRoutes.pathID(request, "no such notice")
            var body = try TranslationRoutes.optionalBody(request)
            let asked = TranslationRoutes.language("target", &body)
            try body?.check()
            guard let notice = try await peers.notices.notice(id, visibleTo: me.id) else { throw APIError.notFound("no such notice") }
            let target = try await TranslationRoutes.target(asked, for: me.id, peers: peers)
            try await limiter.admit(me.id)
            async let title = desk.translate(notice.title, source: nil, target: target)
            let text = try await desk.translate(notice.body, source: nil, target: target)
            let titled = try await title
            return .json(.object([
                ("noticeId", .number(Double(id))), ("title", .string(titled.text)), ("text", .string(text.text)),
                ("source", .string(text.source)), ("target", .string(target)), ("provider", .string(text.provider)),
                ("cached", .bool(text.cached && titled.cached)),
            ]))
        }

        user.post("/translate", maxBody: TranslationRoutes.maxBody, doc: RouteDoc(
            summary: "Any text in another language",
            description: "text: 1 to 20,000 characters. source: the text's language, detected when left out.",
            tags: ["translation"],
            requestSchema: S.object(["text": ["type": "string", "minLength": 1, "maxLength": 20000], "target": TranslationRoutes.languageSchema,
                                     "source": TranslationRoutes.languageSchema], required: ["text", "target"]),
            responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationRoutes.textSchema)]
                + TranslationRoutes.failures,
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let text = body.string("text", required: true)
            if let text, text.isEmpty || text.count > TranslationRoutes.maxText {
                body.problem("text", "must be 1 to \(TranslationRoutes.maxText) characters")
            }
            let target = TranslationRoutes.language("target", &body, required: true)
            let source = TranslationRoutes.language("source", &body)
            try body.check()
            try await limiter.admit(me.id)
            let out = try await desk.translate(text ?? "", source: source, target: target ?? "")
            return .json(.object(TranslationRoutes.fields(out)))
        }

        user.get("/translation/languages", doc: RouteDoc(
            summary: "The languages the configured provider translates",
            description: "provider is \"none\" and the list empty while translation is switched off or not set up.",
            tags: ["translation"],
            responses: [ResponseDoc(status: 200, description: "The languages", schema: S.object([
                "provider": S.string,
                "languages": S.array(S.object(["code": S.string, "name": S.string], required: ["code", "name"])),
            ], required: ["provider", "languages"]))] + TranslationRoutes.failures,
            authenticated: true)) { _, _ in
            let (provider, list) = try await desk.languages()
            return .json([
                "provider": .string(provider),
                "languages": .array(list.map { ["code": .string($0.code), "name": .string($0.name)] }),
            ] as JSONValue)
        }

        user.get("/chats/{id}/translation", doc: RouteDoc(
            summary: "Whether I read this chat in my language, and in which",
            tags: ["translation"],
            responses: [ResponseDoc(status: 200, description: "My choice for this chat", schema: TranslationRoutes.chatSchema),
                        S.error(404, "not_found (not a member)")] + TranslationRoutes.authErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try TranslationRoutes.pathID(request, "no such chat")
            try await TranslationRoutes.requireMember(me.id, of: id, peers: peers)
            let target = chats.target(chat: id, reader: me.id)
            return .json(["enabled": .bool(target != nil), "target": target.map(JSONValue.string) ?? .null] as JSONValue)
        }

        user.put("/chats/{id}/translation", maxBody: 4096, doc: RouteDoc(
            summary: "Read this chat in my language (or stop)",
            description: """
                My own choice; nobody else's view changes. While on, this chat's messages come to me with \
                translation {text, source, target} in lists and in realtime (a message.updated event sent to the readers \
                of that language once it is translated, in the background after the message is stored). target \
                defaults to my language.
                """,
            tags: ["translation"],
            requestSchema: S.object(["enabled": S.boolean, "target": TranslationRoutes.languageSchema], required: ["enabled"]),
            responses: [ResponseDoc(status: 204, description: "Saved"), S.error(404, "not_found (not a member)"),
                        S.error(422, "validation_failed")] + TranslationRoutes.authErrors,
            authenticated: true)) { request, context in
            let me = try context.user()
            let id = try TranslationRoutes.pathID(request, "no such chat")
            var body = try JSONBody(request)
            let enabled = body.bool("enabled")
            if !body.has("enabled") { body.problem("enabled", "is required") }
            let asked = TranslationRoutes.language("target", &body)
            try body.check()
            try await TranslationRoutes.requireMember(me.id, of: id, peers: peers)
            let target = enabled == true ? try await TranslationRoutes.target(asked, for: me.id, peers: peers) : nil
            try await chats.set(chat: id, reader: me.id, target: target)
            return .noContent()
        }

        admin.get("", doc: RouteDoc(
            summary: "The translation provider's settings (the key is never shown)",
            tags: ["translation"],
            responses: [ResponseDoc(status: 200, description: "The settings", schema: TranslationRoutes.settingsSchema)]
                + TranslationRoutes.adminErrors,
            authenticated: true)) { _, _ in
            .json(try await TranslationRoutes.settingsView(desk))
        }

        admin.put("", maxBody: 16 * 1024, doc: RouteDoc(
            summary: "Choose the translation provider",
            description: """
                provider: libretranslate (self-hosted; url required), deepl, yandex (the legacy v1.5 API) or none. url: the \
                provider's address (http or https; empty for DeepL's and Yandex's own). apiKey: a string sets it, null \
                removes it, leaving it out keeps it; it is never returned. timeoutMs: 500 to 60,000.
                """,
            tags: ["translation"],
            requestSchema: S.object(["provider": ["type": "string", "enum": ["libretranslate", "deepl", "yandex", "none"]],
                                     "url": S.string, "apiKey": S.nullable(["type": "string", "maxLength": 512]),
                                     "timeoutMs": ["type": "integer", "minimum": 500, "maximum": 60000]]),
            responses: [ResponseDoc(status: 200, description: "The settings now", schema: TranslationRoutes.settingsSchema),
                        S.error(422, "validation_failed")] + TranslationRoutes.adminErrors,
            authenticated: true)) { request, context in
            var body = try JSONBody(request)
            let change = TranslationRoutes.settingsChange(&body)
            try body.check()
            let settings = desk.settings
            let audit = peers.audit
            let entry = AuditRecord(event: "translation.settings", actorID: try context.user().id, ip: request.clientAddress,
                                    detail: TranslationRoutes.describe(change))
            try await desk.store.write { db in
                for (key, value) in change { try settings.set(key, to: value, in: db) }
                if !change.isEmpty { try audit.record(entry, in: db) }
            }
            desk.settingsChanged()
            return .json(try await TranslationRoutes.settingsView(desk))
        }

        admin.post("/test", doc: RouteDoc(
            summary: "A live check of the configured provider, in words",
            description: "Translates a short sentence through the provider (never from the cache) and says what went wrong, if anything.",
            tags: ["translation"],
            responses: [ResponseDoc(status: 200, description: "The result", schema: S.object(["ok": S.boolean, "message": S.string],
                                                                                              required: ["ok", "message"]))]
                + TranslationRoutes.adminErrors,
            authenticated: true)) { _, _ in
            let (ok, message) = await desk.test()
            return .json(["ok": .bool(ok), "message": .string(message)] as JSONValue)
        }
    }

    // MARK: Helpers

    static func fields(_ out: TranslationDesk.Outcome) -> [(String, JSONValue)] {
        [("text", .string(out.text)), ("source", .string(out.source)), ("target", .string(out.target)),
         ("provider", .string(out.provider)), ("cached", .bool(out.cached))]
    }

    static func pathID(_ request: Request, _ message: String) throws -> Int64 {
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw APIError.notFound(message) }
        return id
    }

    /// The body of a request whose body may be empty (`{target?}`): nil when there is none.
    static func optionalBody(_ request: Request) throws -> JSONBody? {
        request.body.isEmpty ? nil : try JSONBody(request)
    }

    /// The language-code field `key`, or nil with a problem recorded.
    static func language(_ key: String, _ body: inout JSONBody?, required: Bool = false) -> String? {
        guard body != nil else { return nil }
        return language(key, &body!, required: required)
    }

    static func language(_ key: String, _ body: inout JSONBody, required: Bool = false) -> String? {
        guard let code = body.string(key, required: required) else { return nil }
        guard TranslationDesk.isLanguageCode(code) else {
            body.problem(key, "must be a language code such as en, es or pt-BR")
            return nil
        }
        return code
    }

    /// `asked`, else the reader's own language.
    static func target(_ asked: String?, for user: Int64, peers: TranslationPeers) async throws -> String {
        if let asked { return asked }
        return try await peers.directory.user(id: user)?.language ?? "en"
    }

    static func requireMember(_ user: Int64, of chat: Int64, peers: TranslationPeers) async throws {
        guard try await peers.messages.isMember(user, of: chat) else {
            throw APIError.notFound("no such chat")
        }
    }

    /// `{provider, url, apiKeySet, apiKeyNeedsReentry, timeoutMs, ready, problem}`.
    static func settingsView(_ desk: TranslationDesk) async throws -> JSONValue {
        let s = try await desk.providerSettings()
        let key = try await desk.settings.views().first { $0.key == TranslationDesk.apiKeyKey }
        let lost = key?.needsReentry ?? false
        return .object([
            ("provider", .string(s.provider)), ("url", .string(s.url)), ("apiKeySet", .bool(key?.isSet ?? false)),
            ("apiKeyNeedsReentry", .bool(lost)),
            ("timeoutMs", .number(Double(s.timeout.components.seconds * 1000 + s.timeout.components.attoseconds / 1_000_000_000_000_000))),
            ("ready", .bool(TranslationDesk.missing(s) == nil)),
            ("problem", (lost ? TranslationRoutes.keyLost : TranslationDesk.missing(s)).map(JSONValue.string) ?? .null),
        ])
    }

    /// Why a stored key reads as unset: the server's secret key file is not the one it was sealed with.
    static let keyLost = "The API key was saved under another secret key (the server's key file is missing or was replaced), "
        + "so it cannot be used: an admin needs to enter it again in Settings."

    /// The runtime settings a `PUT /admin/translation` body changes (nil value: cleared).
    static func settingsChange(_ body: inout JSONBody) -> [(String, String?)] {
        var change: [(String, String?)] = []
        if let provider = body.string("provider") {
            if ProviderSettings.names.contains(provider) { change.append((TranslationDesk.providerKey, provider)) } else {
                body.problem("provider", "must be libretranslate, deepl, yandex or none")
            }
        } else if body.fields["provider"] == .null { body.problem("provider", "must be libretranslate, deepl, yandex or none") }
        if let url = body.string("url") {
            let trimmed = url.trimmingSpaces
            if let problem = TranslationRoutes.urlProblem(trimmed) { body.problem("url", problem) } else {
                change.append((TranslationDesk.urlKey, trimmed.isEmpty ? nil : trimmed))
            }
        }
        switch body.nullableString("apiKey") {
        case .none: break
        case .some(nil): change.append((TranslationDesk.apiKeyKey, nil))
        case let .some(key?):
            let trimmed = key.trimmingSpaces
            if trimmed.isEmpty || trimmed.utf8.count > 512 || trimmed.contains(where: { $0.isNewline }) {
                body.problem("apiKey", "must be 1 to 512 characters on one line (null removes the key)")
            } else {
                change.append((TranslationDesk.apiKeyKey, trimmed))
            }
        }
        switch body.fields["timeoutMs"] {
        case nil: break
        case let .number(n)? where n == n.rounded() && (500...60_000).contains(n):
            change.append((TranslationDesk.timeoutKey, String(Int(n))))
        default: body.problem("timeoutMs", "must be a whole number from 500 to 60000")
        }
        return change
    }

    /// A change in words for the audit log: never the key itself.
    static func describe(_ change: [(String, String?)]) -> String {
        change.map { key, value in
            switch key {
            case TranslationDesk.apiKeyKey: value == nil ? "API key removed" : "API key set"
            case TranslationDesk.providerKey: "provider \(value ?? "")"
            case TranslationDesk.urlKey: "URL \(value ?? "(the provider's own)")"
            case TranslationDesk.timeoutKey: "timeout \(value ?? "") ms"
            default: key
            }
        }.joined(separator: "; ")
    }

    /// Why `url` cannot be a provider's address; nil when it can (empty: the provider's own).
    static func urlProblem(_ url: String) -> String? {
        if url.isEmpty { return nil }
        if url.utf8.count > 2048 { return "must be at most 2,048 characters" }
        if url.contains("@") { return "must not hold a user name or password; put the key in the API key field" }
        guard (try? HTTPClientURL(url)) != nil else {
            return "must be an http:// or https:// address, such as https://translate.example.com"
        }
        return nil
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
}

/// A per-person bound on translation requests, so nobody can spend the company's provider quota
/// by themselves: `perMinute` requests in any minute (a token bucket), then 429 `rate_limited`
/// with `Retry-After`. Answers from the cache count too; they are cheap, but the bound is simple.
/// The buckets live in the database (one small write per request), shared by every instance.
final class TranslationLimiter: Sendable {
    let perMinute: Int
    private let store: Store
    /// Epoch milliseconds; tests substitute a manual clock.
    private let now: @Sendable () -> Int64

    init(perMinute: Int, store: Store, now: @escaping @Sendable () -> Int64 = { Timestamp.now().milliseconds }) {
        self.perMinute = perMinute
        self.store = store
        self.now = now
    }

    func admit(_ user: Int64) async throws {
        let now = self.now(), capacity = Double(perMinute)
        let perMillisecond = capacity / 60_000
        let wait = try await store.write { db -> Double? in
            var bucket = try TranslationRepository.allowance(of: user, in: db) ?? (capacity, now)
            // A clock that went back adds nothing.
            bucket.tokens = min(capacity, bucket.tokens + Double(max(0, now - bucket.at)) * perMillisecond)
            bucket.at = now
            var wait: Double?
            if bucket.tokens >= 1 { bucket.tokens -= 1 } else { wait = (1 - bucket.tokens) / perMillisecond / 1000 }
            try TranslationRepository.setAllowance(of: user, tokens: bucket.tokens, at: bucket.at, in: db)
            return wait
        }
        if let wait {
            let seconds = max(1, Int(wait.rounded(FloatingPointRoundingRule.up)))
            throw APIError(status: 429, code: "rate_limited", message: "too many translations at once; try again in \(seconds) s",
                           headers: HTTPHeaders([("Retry-After", String(seconds))]))
        }
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
