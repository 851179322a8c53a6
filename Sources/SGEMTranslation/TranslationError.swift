/// Why the translation module refused a reader, in its own words: what `Translations` and the
/// limiter throw. The route edge gives each case its status and code
/// (`TranslationError+HTTP.swift`). A provider's failures stay `TranslationFailure` (SGEMCore),
/// the contract every translator shares.
enum TranslationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such message in the reader's chats.
    case messageNotFound
    /// No such notice, or one the reader may not see.
    case noticeNotFound
    /// No such chat, or the reader is not a member.
    case chatNotFound
    /// A line saying who came and went: nothing to translate.
    case systemMessage
    case messageDeleted
    /// The reader used up their translations for the minute; try again in `retryAfter` seconds.
    case rateLimited(retryAfter: Int)

    var message: String {
        switch self {
        case .messageNotFound: "no such message"
        case .noticeNotFound: "no such notice"
        case .chatNotFound: "no such chat"
        case .systemMessage: "a line saying who came and went has nothing to translate"
        case .messageDeleted: "a deleted message has nothing to translate"
        case let .rateLimited(seconds): "too many translations at once; try again in \(seconds) s"
        }
    }

    var description: String { message }
}
