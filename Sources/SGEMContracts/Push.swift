import SGEMCore
import SGEMSupport

/// How much of a chat reaches a member's devices as pushes: every message, only mentions, or nothing.
public enum NotificationLevel: String, Sendable, CaseIterable, Codable {
    case all, mentions, none
}

/// A chat as the push worker needs it: who is in it, at which level, and what it is called.
public struct ChatPushAudience: Sendable, Equatable {
    public let chatID: Int64
    public let isGroup: Bool
    /// Nil for a direct chat.
    public let name: String?
    /// Each member's level (the stored choice, or the default for the chat's kind).
    public let levels: [Int64: NotificationLevel]

    public init(chatID: Int64, isGroup: Bool, name: String?, levels: [Int64: NotificationLevel]) {
        self.chatID = chatID
        self.isGroup = isGroup
        self.name = name
        self.levels = levels
    }
}

/// Chats' members and their notification levels; published by messaging, read by the push module.
public protocol ChatPushLookup: Sendable {
    /// The chat `chatID` as it is now; nil when there is none.
    func pushAudience(chat chatID: Int64) async throws -> ChatPushAudience?
}

/// Who has a live realtime stream open on this instance (the console is in use); published by
/// the realtime module, read by the push module, which pushes nothing to them.
public protocol LiveStreams: Sendable {
    /// The users among `userIDs` with at least one open stream.
    func streaming(among userIDs: [Int64]) -> Set<Int64>
}

/// The rule for a push contact (RFC 8292's `sub`): a `mailto:` or `https:` URI.
public enum PushContact {
    public static func problem(_ value: String) -> String? {
        let ok = value.utf8.count <= 200 && !value.contains(where: { $0.isWhitespace || $0.isNewline })
            && ((value.hasPrefix("mailto:") && value.count > 7 && value.contains("@"))
                || (value.hasPrefix("https://") && value.count > 8))
        return ok ? nil : "must be a mailto: address or an https: URL"
    }
}
