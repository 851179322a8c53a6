import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `POST /chats`: a new group.
struct CreateGroupBody: RequestBody {
    let name: String
    let description: String
    let tags: [String]
    let isPublic: Bool
    let memberIDs: [Int64]

    init(reading body: inout JSONBody) {
        name = BodyField.checked("name", &body, required: true, ChatRules.name) ?? ""
        description = BodyField.checked("description", &body, required: false, ChatRules.description) ?? ""
        tags = BodyField.tags(&body) ?? []
        isPublic = body.bool("public") ?? false
        memberIDs = BodyField.ids("memberIds", &body) ?? []
    }
}

/// `PATCH /chats/{id}`: the settings to change; nil keeps one.
struct EditGroupBody: RequestBody {
    let name: String?
    let description: String?
    let tags: [String]?
    let isPublic: Bool?

    init(reading body: inout JSONBody) {
        name = BodyField.checked("name", &body, required: false, ChatRules.name)
        description = BodyField.checked("description", &body, required: false, ChatRules.description)
        tags = BodyField.tags(&body)
        isPublic = BodyField.notNull("public", &body) ? body.bool("public") : nil
    }
}

/// `POST /chats/{id}/messages`: a message and, for safe retries, the client's id for it.
struct NewMessageBody: RequestBody {
    let text: String
    let clientID: String?

    init(reading body: inout JSONBody) {
        text = BodyField.checked("body", &body, required: true, ChatRules.body) ?? ""
        clientID = BodyField.checked("clientId", &body, required: false, ChatRules.clientID)
    }
}

/// `PATCH /messages/{id}`: the new text.
struct EditMessageBody: RequestBody {
    let text: String

    init(reading body: inout JSONBody) {
        text = BodyField.checked("body", &body, required: true, ChatRules.body) ?? ""
    }
}

/// A body of one required id: `{userId}` (the other person of a direct chat, a group's new
/// member) or `{messageId}` (the message read up to).
struct IDBody {
    let id: Int64

    init(_ request: Request, field: String) throws {
        var body = try JSONBody(request)
        id = BodyField.id(field, &body, required: true) ?? 0
        try body.check()
    }
}

/// `PUT /chats/{id}/notifications`: the reader's push level.
struct NotificationsBody: RequestBody {
    let level: NotificationLevel

    init(reading body: inout JSONBody) {
        let raw = body.string("level", required: true)
        let level = raw.flatMap(NotificationLevel.init(rawValue:))
        if raw != nil, level == nil { body.problem("level", "must be all, mentions or none") }
        self.level = level ?? .all
    }
}
