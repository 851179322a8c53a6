import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The admin's provider settings and their live check, under `/admin/translation`.
struct TranslationSettingsController: Sendable {
    let desk: TranslationDesk
    let audit: any AuditTrail

    func register(_ routes: RouteGroup) {
        routes.get("", doc: Self.showDoc, show)
        routes.put("", maxBody: 16 * 1024, doc: Self.changeDoc, change)
        routes.post("/test", doc: Self.testDoc, test)
    }

    static let showDoc = RouteDoc(
        summary: "The translation provider's settings (the key is never shown)",
        tags: ["translation"],
        responses: [ResponseDoc(status: 200, description: "The settings", schema: TranslationAPI.settingsSchema)]
            + TranslationAPI.adminErrors,
        authenticated: true)

    func show(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(try await desk.settingsView())
    }

    static let changeDoc = RouteDoc(
        summary: "Choose the translation provider",
        description: """
            provider: libretranslate (self-hosted; url required), deepl, yandex (the legacy v1.5 API) or none. url: the \
            provider's address (http or https; empty for DeepL's and Yandex's own). apiKey: a string sets it, null \
            removes it, leaving it out keeps it; it is never returned. timeoutMs: 500 to 60,000.
            """,
        tags: ["translation"],
        requestSchema: APISchema.object(["provider": ["type": "string", "enum": ["libretranslate", "deepl", "yandex", "none"]],
                                         "url": APISchema.string, "apiKey": APISchema.nullable(["type": "string", "maxLength": 512]),
                                         "timeoutMs": ["type": "integer", "minimum": 500, "maximum": 60000]]),
        responses: [ResponseDoc(status: 200, description: "The settings now", schema: TranslationAPI.settingsSchema),
                    APISchema.error(422, "validation_failed")] + TranslationAPI.adminErrors,
        authenticated: true)

    func change(_ request: Request, _ context: RequestContext) async throws -> Response {
        let body = try TranslationSettingsBody(request)
        try await desk.update(body.change, by: AuditActor(userID: try context.user().id, ip: request.clientAddress), audit: audit)
        return .json(try await desk.settingsView())
    }

    static let testDoc = RouteDoc(
        summary: "A live check of the configured provider, in words",
        description: "Translates a short sentence through the provider (never from the cache) and says what went wrong, if anything.",
        tags: ["translation"],
        responses: [ResponseDoc(status: 200, description: "The result", schema: TranslationAPI.checkSchema)] + TranslationAPI.adminErrors,
        authenticated: true)

    func test(_ request: Request, _ context: RequestContext) async throws -> Response {
        let (ok, message) = await desk.test()
        return .json(ProviderCheck(ok: ok, message: message))
    }
}
