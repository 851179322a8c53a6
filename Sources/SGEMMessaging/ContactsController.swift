import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `/contacts`: the people someone keeps at hand.
struct ContactsController: Sendable {
    let messenger: Messenger

    /// On `api`, a group with `MessagingAPI.middleware`.
    func register(_ api: RouteGroup) {
        api.get("/contacts", doc: Self.listDoc, list)
        api.put("/contacts/{userId}", doc: Self.addDoc, add)
        api.delete("/contacts/{userId}", doc: Self.removeDoc, remove)
    }

    static let listDoc = RouteDoc(
        summary: "My contacts, in the order I added them", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 200, description: "The contacts", schema: MessagingDocs.items(MessagingDocs.contact))]
            + MessagingDocs.readErrors,
        authenticated: true)

    @Sendable func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(Items(items: try await messenger.contacts(of: try context.user().id)))
    }

    static let addDoc = RouteDoc(
        summary: "Add someone to my contacts (again is fine)", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Added"), MessagingDocs.error(404, "not_found (no such user)"),
                    MessagingDocs.error(409, "too_many_contacts"), MessagingDocs.error(422, "validation_failed (yourself)")]
            + MessagingDocs.unsafeErrors,
        authenticated: true)

    @Sendable func add(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.addContact(try MessagingAPI.pathID(request, "userId", "no such user"), to: try context.user().id)
        return .noContent()
    }

    static let removeDoc = RouteDoc(
        summary: "Remove someone from my contacts (again is fine)", tags: MessagingDocs.tags,
        responses: [ResponseDoc(status: 204, description: "Removed"), MessagingDocs.error(404, "not_found (not a user id)")]
            + MessagingDocs.unsafeErrors,
        authenticated: true)

    @Sendable func remove(_ request: Request, _ context: RequestContext) async throws -> Response {
        try await messenger.removeContact(try MessagingAPI.pathID(request, "userId", "no such user"), from: try context.user().id)
        return .noContent()
    }
}
