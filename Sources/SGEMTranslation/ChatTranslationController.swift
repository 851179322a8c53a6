import SGEMCore
import SGEMHTTP
import SGEMSupport

/// A reader's own choice to read a chat in their language.
struct ChatTranslationController: Sendable {
    let translations: Translations

    func register(_ routes: RouteGroup) {
        routes.get("/chats/{id}/translation", doc: Self.showDoc, show)
        routes.put("/chats/{id}/translation", maxBody: 4096, doc: Self.setDoc, set)
    }

    static let showDoc = RouteDoc(
        summary: "Whether I read this chat in my language, and in which",
        tags: ["translation"],
        responses: [ResponseDoc(status: 200, description: "My choice for this chat", schema: TranslationAPI.chatSchema),
                    APISchema.error(404, "not_found (not a member)")] + TranslationAPI.authErrors,
        authenticated: true)

    func show(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try TranslationAPI.pathID(request, "no such chat")
        return .json(try await translations.choice(chat: id, reader: me.id))
    }

    static let setDoc = RouteDoc(
        summary: "Read this chat in my language (or stop)",
        description: """
            My own choice; nobody else's view changes. While on, this chat's messages come to me with \
            translation {text, source, target} in lists and in realtime (a message.updated event sent to the readers \
            of that language once it is translated, in the background after the message is stored). target \
            defaults to my language.
            """,
        tags: ["translation"],
        requestSchema: APISchema.object(["enabled": APISchema.boolean, "target": TranslationAPI.languageSchema], required: ["enabled"]),
        responses: [ResponseDoc(status: 204, description: "Saved"), APISchema.error(404, "not_found (not a member)"),
                    APISchema.error(422, "validation_failed")] + TranslationAPI.authErrors,
        authenticated: true)

    func set(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let id = try TranslationAPI.pathID(request, "no such chat")
        let body = try ChatTranslationBody(request)
        try await translations.setChoice(chat: id, reader: me.id, enabled: body.enabled, target: body.target)
        return .noContent()
    }
}
