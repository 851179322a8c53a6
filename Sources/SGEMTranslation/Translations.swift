import SGEMCore
import SGEMSupport

/// What a reader asks of the module, in domain words: a message, a notice or any text in a
/// language, and whether they read a chat in theirs. Every translation passes the per-person
/// limiter first; refusals are `TranslationError`s, a provider's failures `TranslationFailure`s.
struct Translations: Sendable {
    let desk: TranslationDesk
    let chats: ChatTranslator
    let peers: TranslationPeers
    let limiter: TranslationLimiter

    /// Message `id` of one of `reader`'s chats in `asked` (default: the reader's language).
    func message(_ id: Int64, for reader: Int64, into asked: String?) async throws -> TranslatedMessage {
        guard let message = try await peers.messages.message(id, readableBy: reader) else { throw TranslationError.messageNotFound }
        if message.json["kind"]?.stringValue == "system" { throw TranslationError.systemMessage }
        guard let text = message.body else { throw TranslationError.messageDeleted }
        let target = try await target(asked, for: reader)
        try await limiter.admit(reader)
        return TranslatedMessage(messageId: id, translation: try await desk.translate(text, source: nil, target: target))
    }

    /// Notice `id`'s title and text, when `reader` may see it, in `asked` (default: theirs).
    func notice(_ id: Int64, for reader: Int64, into asked: String?) async throws -> TranslatedNotice {
        guard let notice = try await peers.notices.notice(id, visibleTo: reader) else { throw TranslationError.noticeNotFound }
        let target = try await target(asked, for: reader)
        try await limiter.admit(reader)
        async let title = desk.translate(notice.title, source: nil, target: target)
        let text = try await desk.translate(notice.body, source: nil, target: target)
        let titled = try await title
        return TranslatedNotice(noticeId: id, title: titled.text, text: text.text, source: text.source, target: target,
                                 provider: text.provider, cached: text.cached && titled.cached)
    }

    /// Any text, for `reader`.
    func text(_ text: String, from source: String?, into target: String, for reader: Int64) async throws -> TranslationDesk.Outcome {
        try await limiter.admit(reader)
        return try await desk.translate(text, source: source, target: target)
    }

    /// Whether `reader` reads `chat` in a language, and which.
    func choice(chat: Int64, reader: Int64) async throws -> ChatTranslationChoice {
        try await requireMember(reader, of: chat)
        return ChatTranslationChoice(target: chats.target(chat: chat, reader: reader))
    }

    /// `reader` reads `chat` in `asked` (default: theirs) from now on, or no longer.
    func setChoice(chat: Int64, reader: Int64, enabled: Bool, target asked: String?) async throws {
        try await requireMember(reader, of: chat)
        let target = enabled ? try await target(asked, for: reader) : nil
        try await chats.set(chat: chat, reader: reader, target: target)
    }

    /// `asked`, else the reader's own language.
    private func target(_ asked: String?, for reader: Int64) async throws -> String {
        if let asked { return asked }
        return try await peers.directory.user(id: reader)?.language ?? "en"
    }

    private func requireMember(_ reader: Int64, of chat: Int64) async throws {
        guard try await peers.messages.isMember(reader, of: chat) else { throw TranslationError.chatNotFound }
    }
}
