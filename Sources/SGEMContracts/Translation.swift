import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

// MARK: - Translators (implemented by the translation module's providers)

/// One text to translate. `source` nil means "detect it".
public struct TranslationRequest: Sendable, Equatable {
    public var text: String
    /// ISO 639-1 code of the text's language, or nil to let the provider detect it.
    public var source: String?
    /// ISO 639-1 code of the language wanted.
    public var target: String

    public init(text: String, source: String? = nil, target: String) {
        self.text = text
        self.source = source
        self.target = target
    }
}

/// A provider's answer: the translated text and the source language (the one given, or the
/// one the provider detected, as an ISO 639-1 code).
public struct TranslationResult: Sendable, Equatable {
    public var text: String
    public var source: String

    public init(text: String, source: String) {
        self.text = text
        self.source = source
    }
}

/// A language a provider offers.
public struct TranslationLanguage: Sendable, Equatable {
    /// ISO 639-1 code, lower case (`en`, `es`, `pt`).
    public var code: String
    /// Its name as the provider gives it (English).
    public var name: String

    public init(code: String, name: String) {
        self.code = code
        self.name = name
    }
}

/// Why a translation failed, whatever the provider: the contract's stable codes. The message is
/// one sentence in plain words for logs and for the admin's "test connection"; it never holds
/// the provider's key.
public struct TranslationFailure: HTTPResponseError, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        /// 503: no provider is configured.
        case translationDisabled = "translation_disabled"
        /// 502: the provider refused the key.
        case invalidKey = "invalid_key"
        /// 502: the provider blocked the key.
        case blockedKey = "blocked_key"
        /// 429: the account's daily or monthly quota is used up.
        case quotaExceeded = "quota_exceeded"
        /// 413: the text is longer than the provider accepts.
        case textTooLong = "text_too_long"
        /// 422: the provider could not translate this text.
        case unprocessable = "unprocessable"
        /// 422: the provider does not translate between these languages.
        case unsupportedDirection = "unsupported_direction"
        /// 429: too many requests to the provider right now.
        case rateLimited = "rate_limited"
        /// 502: unreachable, refused, TLS failure, a 5xx or an answer that makes no sense.
        case providerUnavailable = "provider_unavailable"
        /// 504: no answer in time.
        case providerTimeout = "provider_timeout"

        public var status: Int {
            switch self {
            case .translationDisabled: 503
            case .invalidKey, .blockedKey, .providerUnavailable: 502
            case .quotaExceeded, .rateLimited: 429
            case .textTooLong: 413
            case .unprocessable, .unsupportedDirection: 422
            case .providerTimeout: 504
            }
        }
    }

    public let failure: Code
    public let message: String
    /// Seconds the provider asked us to wait (`Retry-After`), when it said.
    public let retryAfter: Int?

    public init(_ failure: Code, _ message: String, retryAfter: Int? = nil) {
        self.failure = failure
        self.message = message
        self.retryAfter = retryAfter
    }

    public var status: Int { failure.status }
    public var code: String { failure.rawValue }
    public var headers: HTTPHeaders {
        guard let retryAfter, failure == .rateLimited || failure == .quotaExceeded else { return HTTPHeaders() }
        return HTTPHeaders([("Retry-After", String(retryAfter))])
    }
    public var description: String { "\(code): \(message)" }
}

/// A translation provider (LibreTranslate, DeepL, Yandex v1.5, or none). Implementations talk
/// to the provider through `SGEMHTTP.HTTPClient`, never see a user's session or token, and map
/// every failure (the provider's own error codes, timeouts, refused connections, malformed or
/// oversized answers) to a `TranslationFailure`.
public protocol Translator: Sendable {
    /// "libretranslate", "deepl", "yandex" or "none".
    var provider: String { get }
    func translate(_ request: TranslationRequest) async throws(TranslationFailure) -> TranslationResult
    func languages() async throws(TranslationFailure) -> [TranslationLanguage]
}

// MARK: - What the translation module needs from messaging and notices

/// A message as the translation module may read it.
public struct ReadableMessage: Sendable, Equatable {
    public let id: Int64
    public let chatID: Int64
    public let senderID: Int64
    /// nil once the message was deleted.
    public let body: String?
    /// The contract's message object, as `message.*` events carry it.
    public let json: JSONValue

    public init(id: Int64, chatID: Int64, senderID: Int64, body: String?, json: JSONValue) {
        self.id = id
        self.chatID = chatID
        self.senderID = senderID
        self.body = body
        self.json = json
    }
}

/// Messages and chat membership as the messaging module answers them; published by messaging,
/// used by the translation module (404 for a message of a chat the reader is not in).
public protocol MessageLookup: Sendable {
    /// The message with `id` when `reader` is a member of its chat now; nil otherwise.
    func message(_ id: Int64, readableBy reader: Int64) async throws -> ReadableMessage?
    /// The message with `id`, whoever asks (the background translator); nil when there is none.
    func message(_ id: Int64) async throws -> ReadableMessage?
    /// The same, read in `db`'s transaction: a translation is recorded only if its message is
    /// still as it was translated (not deleted or edited meanwhile).
    func message(_ id: Int64, in db: Database) throws -> ReadableMessage?
    /// Whether `user` is a member of chat `chatID` now.
    func isMember(_ user: Int64, of chatID: Int64) async throws -> Bool
    /// The members of chat `chatID` now, among `userIDs`.
    func members(of chatID: Int64, among userIDs: [Int64]) async throws -> Set<Int64>
}

/// A notice as the translation module may read it.
public struct ReadableNotice: Sendable, Equatable {
    public let id: Int64
    public let title: String
    public let body: String

    public init(id: Int64, title: String, body: String) {
        self.id = id
        self.title = title
        self.body = body
    }
}

/// Notices as the notices module answers them; published by notices, used by translation.
public protocol NoticeLookup: Sendable {
    /// The notice with `id` when `reader` may see it; nil otherwise.
    func notice(_ id: Int64, visibleTo reader: Int64) async throws -> ReadableNotice?
}

// MARK: - What messaging asks of the translation module

/// A message's translation as a reader who turned translation on for its chat receives it.
public struct MessageTranslation: Sendable, Equatable {
    public let text: String
    public let source: String
    public let target: String

    public init(text: String, source: String, target: String) {
        self.text = text
        self.source = source
        self.target = target
    }

    /// `{"text", "source", "target"}`.
    public var json: JSONValue { ["text": .string(text), "source": .string(source), "target": .string(target)] }
}

/// The translations a reader has asked for in their chats; published by the translation module,
/// consulted by messaging when it lists a chat's messages. A message not yet translated comes
/// without (and is queued, so its translation follows as a realtime event).
public protocol ChatTranslations: Sendable {
    /// For `reader` in chat `chatID`: the translations of `messages` (id and current body) that
    /// are ready. Empty when the reader has translation off for the chat. One lookup per page.
    func translations(reader: Int64, chatID: Int64, messages: [(id: Int64, body: String)]) async -> [Int64: MessageTranslation]
}
