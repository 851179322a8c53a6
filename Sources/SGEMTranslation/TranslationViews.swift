import SGEMContracts
import SGEMCore

// What the translation API answers, as `Encodable` values (ids as integers, absent values as
// null). `ViewSchemaTests` holds each to the OpenAPI schema documented beside its route.

/// A message's translation: `{messageId, text, source, target, provider, cached}`.
struct TranslatedMessage: Encodable, Sendable {
    let messageId: Int64
    let translation: TranslationDesk.Outcome

    enum CodingKeys: String, CodingKey { case messageId }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(messageId, forKey: .messageId)
        try translation.encode(to: encoder)
    }
}

/// A notice's title and text translated: `{noticeId, title, text, source, target, provider, cached}`;
/// `cached` only when both came from the cache.
struct TranslatedNotice: Encodable, Sendable {
    let noticeId: Int64
    let title: String
    let text: String
    let source: String
    let target: String
    let provider: String
    let cached: Bool
}

/// The configured provider's languages: `{provider, languages: [{code, name}]}`.
struct LanguageList: Encodable, Sendable {
    struct Language: Encodable, Sendable {
        let code: String
        let name: String
    }

    let provider: String
    let languages: [Language]

    init(provider: String, languages: [TranslationLanguage]) {
        self.provider = provider
        self.languages = languages.map { Language(code: $0.code, name: $0.name) }
    }
}

/// A reader's choice for one chat: `{enabled, target}`, target null when off.
struct ChatTranslationChoice: Encodable, Sendable {
    let target: String?

    enum CodingKeys: String, CodingKey { case enabled, target }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(target != nil, forKey: .enabled)
        try c.encode(target, forKey: .target)
    }
}

/// The provider settings as an admin sees them; the key itself never leaves the server.
struct TranslationSettingsView: Encodable, Sendable {
    let provider: String
    let url: String
    let apiKeySet: Bool
    /// The stored key was sealed under another secret key and cannot be read.
    let apiKeyNeedsReentry: Bool
    let timeoutMs: Int64
    let ready: Bool
    /// Why translation cannot run, in words; null when it can.
    let problem: String?

    enum CodingKeys: String, CodingKey { case provider, url, apiKeySet, apiKeyNeedsReentry, timeoutMs, ready, problem }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(provider, forKey: .provider)
        try c.encode(url, forKey: .url)
        try c.encode(apiKeySet, forKey: .apiKeySet)
        try c.encode(apiKeyNeedsReentry, forKey: .apiKeyNeedsReentry)
        try c.encode(timeoutMs, forKey: .timeoutMs)
        try c.encode(ready, forKey: .ready)
        try c.encode(problem, forKey: .problem)
    }
}

/// The live check's verdict: `{ok, message}`.
struct ProviderCheck: Encodable, Sendable {
    let ok: Bool
    let message: String
}
