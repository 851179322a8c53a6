import SGEMSupport

/// The contract's message: what the message routes answer and realtime events carry. A deleted
/// one has `body: null` and no mentions; a system line has `body: null` and says what happened in
/// `system` (null for a text message).
struct MessageView: Encodable, Sendable, Equatable {
    let id: Int64
    let chatID: Int64
    let senderID: Int64
    @ExplicitNull var body: String?
    let mentions: [Int64]
    let createdAt: String
    @ExplicitNull var editedAt: String?
    let deleted: Bool
    let kind: Message.Kind
    @ExplicitNull var system: SystemLine?

    enum CodingKeys: String, CodingKey {
        case id, chatID = "chatId", senderID = "senderId", body, mentions, createdAt, editedAt, deleted, kind, system
    }

    init(_ message: Message) {
        id = message.id
        chatID = message.chatID
        senderID = message.senderID
        body = message.deleted ? nil : message.body
        mentions = message.deleted ? [] : message.mentions
        createdAt = message.createdAt.rfc3339()
        editedAt = message.editedAt?.rfc3339()
        deleted = message.deleted
        kind = message.kind
        system = message.system
    }
}

/// One search hit: the message, its chat and the snippet (the match between « and »).
struct SearchHitView: Encodable, Sendable, Equatable {
    let message: MessageView
    let chatID: Int64
    let snippet: String

    enum CodingKeys: String, CodingKey {
        case message, chatID = "chatId", snippet
    }
}
