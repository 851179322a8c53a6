import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Translating for a reader: a message, a notice, any text; and the provider's languages.
struct TranslationController: Sendable {
    let translations: Translations

    func register(_ routes: RouteGroup) {
        routes.post("/messages/{id}/translation", maxBody: TranslationAPI.maxBody, doc: Self.messageDoc, message)
        routes.post("/notices/{id}/translation", maxBody: TranslationAPI.maxBody, doc: Self.noticeDoc, notice)
        routes.post("/translate", maxBody: TranslationAPI.maxBody, doc: Self.textDoc, text)
        routes.get("/translation/languages", doc: Self.languagesDoc, languages)
    }

    static let messageDoc = RouteDoc(
        summary: "A message in the reader's language (or the one asked for)",
        description: """
            target defaults to the reader's language. The original stays in the message; this is a translation, \
            marked by source and target. 404 for a message of a chat the reader is not a member of.
            """,
        tags: ["translation"], requestSchema: APISchema.object(["target": TranslationAPI.languageSchema]),
        responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationAPI.messageSchema),
                    APISchema.error(404, "not_found (no such message in my chats)"),
                    APISchema.error(409, "message_deleted, or system_message (a line saying who came and went)")]
            + TranslationAPI.failures,
        authenticated: true)

    func message(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try TranslationAPI.pathID(request, "no such message")
        let body = try TargetBody(request)
        return .json(try await translations.message(id, for: me.id, into: body.target))
    }

    static let noticeDoc = RouteDoc(
        summary: "A notice's title and text in the reader's language (or the one asked for)",
        description: "404 for a notice the reader may not see (someone else's holiday notice).",
        tags: ["translation"], requestSchema: APISchema.object(["target": TranslationAPI.languageSchema]),
        responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationAPI.noticeSchema),
                    APISchema.error(404, "not_found")] + TranslationAPI.failures,
        authenticated: true)

    func notice(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try TranslationAPI.pathID(request, "no such notice")
        let body = try TargetBody(request)
        return .json(try await translations.notice(id, for: me.id, into: body.target))
    }

    static let textDoc = RouteDoc(
        summary: "Any text in another language",
        description: "text: 1 to 20,000 characters. source: the text's language, detected when left out.",
        tags: ["translation"],
        requestSchema: APISchema.object(["text": ["type": "string", "minLength": 1, "maxLength": 20000], "target": TranslationAPI.languageSchema,
                                         "source": TranslationAPI.languageSchema], required: ["text", "target"]),
        responses: [ResponseDoc(status: 200, description: "The translation", schema: TranslationAPI.textSchema)]
            + TranslationAPI.failures,
        authenticated: true)

    func text(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try TranslateTextBody(request)
        return .json(try await translations.text(body.text, from: body.source, into: body.target, for: me.id))
    }

    static let languagesDoc = RouteDoc(
        summary: "The languages the configured provider translates",
        description: "provider is \"none\" and the list empty while translation is switched off or not set up.",
        tags: ["translation"],
        responses: [ResponseDoc(status: 200, description: "The languages", schema: TranslationAPI.languagesSchema)] + TranslationAPI.failures,
        authenticated: true)

    func languages(_ request: Request, _ context: RequestContext) async throws -> Response {
        let (provider, list) = try await translations.desk.languages()
        return .json(LanguageList(provider: provider, languages: list))
    }
}
