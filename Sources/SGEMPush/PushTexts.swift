import SGEMContracts
import SGEMCore
import SGEMSupport

/// What a push says, in the reader's language (English and Spanish, the console's two; any
/// other language reads English).
struct PushPayload: Sendable, Equatable {
    enum Kind: String, Sendable { case message, mention, holiday, notice }

    let kind: Kind
    let title: String
    let body: String
    /// The console path a click opens.
    let url: String
    /// Pushes with one tag replace each other on the device.
    let tag: String

    static let maxBody = 200
    static let maxTitle = 120

    init(kind: Kind, title: String, body: String, url: String, tag: String) {
        self.kind = kind
        self.title = PushPayload.clip(title, PushPayload.maxTitle)
        self.body = PushPayload.clip(body, PushPayload.maxBody)
        self.url = url
        self.tag = tag
    }

    /// At most `limit` characters, an ellipsis marking a cut.
    static func clip(_ text: String, _ limit: Int) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count <= limit ? flat : String(flat.prefix(limit - 1)) + "…"
    }

    var json: JSONValue {
        .object([("type", .string(kind.rawValue)), ("title", .string(title)), ("body", .string(body)), ("url", .string(url)),
                 ("tag", .string(tag))])
    }
}

enum PushTexts {
    static func spanish(_ language: String) -> Bool { language == "es" }

    static func message(sender: String, chat: ChatPushAudience, body: String, mention: Bool, messageID: Int64,
                        language: String) -> PushPayload {
        let es = spanish(language)
        let title: String
        switch (mention, chat.isGroup) {
        case (true, true): title = es ? "\(sender) te ha mencionado en \(chat.name ?? "un grupo")" : "\(sender) mentioned you in \(chat.name ?? "a group")"
        case (true, false): title = es ? "\(sender) te ha mencionado" : "\(sender) mentioned you"
        case (false, true): title = "\(sender) · \(chat.name ?? (es ? "grupo" : "group"))"
        case (false, false): title = sender
        }
        return PushPayload(kind: mention ? .mention : .message, title: title, body: body, url: "#/chat?id=\(chat.chatID)",
                           tag: "chat-\(chat.chatID)")
    }

    static func decision(approved: Bool, start: String, end: String, requestID: Int64, language: String) -> PushPayload {
        let es = spanish(language)
        let title = es ? (approved ? "Tu solicitud de vacaciones ha sido aprobada" : "Tu solicitud de vacaciones ha sido rechazada")
            : (approved ? "Your holiday request was approved" : "Your holiday request was turned down")
        return PushPayload(kind: .holiday, title: title, body: span(start, end, language: language), url: "#/holidays",
                           tag: "holiday-\(requestID)")
    }

    static func waiting(requester: String, start: String, end: String, requestID: Int64, language: String) -> PushPayload {
        let es = spanish(language)
        return PushPayload(kind: .holiday, title: es ? "\(requester) pide vacaciones" : "\(requester) asks for time off",
                           body: span(start, end, language: language), url: "#/admin/holidays", tag: "holiday-\(requestID)")
    }

    static func notice(title: String, noticeID: Int64, language: String) -> PushPayload {
        PushPayload(kind: .notice, title: spanish(language) ? "Nuevo aviso" : "New notice", body: title,
                    url: "#/notices?id=\(noticeID)", tag: "notice-\(noticeID)")
    }

    /// "from 28 December 2026 to 8 January 2027", or one day, in words (as holiday notices say them).
    static func span(_ start: String, _ end: String, language: String) -> String {
        HolidayNoticeFacts.dates(start, end, in: language)
    }
}
