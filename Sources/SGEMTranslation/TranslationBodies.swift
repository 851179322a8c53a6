import SGEMHTTP
import SGEMSupport

// The translation API's request bodies, one type each, read once with the contract's checks:
// an invalid body is a 422 `validation_failed` naming every bad field.

/// The optional `{target?}` of a message's or a notice's translation; an empty body asks for
/// the reader's own language.
struct TargetBody {
    let target: String?

    init(_ request: Request) throws {
        guard !request.body.isEmpty else { target = nil; return }
        var body = try JSONBody(request)
        target = body.language("target")
        try body.check()
    }
}

/// `POST /translate`: `{text, target, source?}`.
struct TranslateTextBody: RequestBody {
    /// The longest text taken, in characters (a notice's body is at most 20,000).
    static let maxText = 20_000

    let text: String
    let target: String
    let source: String?

    init(reading body: inout JSONBody) {
        let text = body.string("text", required: true)
        if let text, text.isEmpty || text.count > TranslateTextBody.maxText {
            body.problem("text", "must be 1 to \(TranslateTextBody.maxText) characters")
        }
        let target = body.language("target", required: true)
        source = body.language("source")
        (self.text, self.target) = (text ?? "", target ?? "")
    }
}

/// `PUT /chats/{id}/translation`: `{enabled, target?}`.
struct ChatTranslationBody: RequestBody {
    let enabled: Bool
    let target: String?

    init(reading body: inout JSONBody) {
        let enabled = body.bool("enabled")
        if !body.has("enabled") { body.problem("enabled", "is required") }
        target = body.language("target")
        self.enabled = enabled == true
    }
}

/// `PUT /admin/translation`: `{provider?, url?, apiKey?, timeoutMs?}` as the runtime settings it
/// changes, in order (a nil value clears one).
struct TranslationSettingsBody: RequestBody {
    let change: [(String, String?)]

    init(reading body: inout JSONBody) {
        change = [TranslationSettingsBody.provider(&body), TranslationSettingsBody.url(&body), TranslationSettingsBody.apiKey(&body),
                  TranslationSettingsBody.timeout(&body)].compactMap { $0 }
    }

    typealias Setting = (key: String, value: String?)

    private static func provider(_ body: inout JSONBody) -> Setting? {
        let problem = "must be libretranslate, deepl, yandex or none"
        guard let provider = body.string("provider") else {
            if body.fields["provider"] == .null { body.problem("provider", problem) }
            return nil
        }
        guard ProviderSettings.names.contains(provider) else { body.problem("provider", problem); return nil }
        return (TranslationDesk.providerKey, provider)
    }

    /// Trimmed; empty clears it (the provider's own address).
    private static func url(_ body: inout JSONBody) -> Setting? {
        guard let url = body.string("url")?.trimmingSpaces else { return nil }
        if let problem = TranslationDesk.urlProblem(url) { body.problem("url", problem); return nil }
        return (TranslationDesk.urlKey, url.isEmpty ? nil : url)
    }

    /// A string sets it, null removes it, absent keeps it.
    private static func apiKey(_ body: inout JSONBody) -> Setting? {
        switch body.nullableString("apiKey") {
        case .none: return nil
        case .some(nil): return (TranslationDesk.apiKeyKey, nil)
        case let .some(key?):
            let trimmed = key.trimmingSpaces
            guard trimmed.isEmpty || trimmed.utf8.count > 512 || trimmed.contains(where: { $0.isNewline }) else {
                return (TranslationDesk.apiKeyKey, trimmed)
            }
            body.problem("apiKey", "must be 1 to 512 characters on one line (null removes the key)")
            return nil
        }
    }

    private static func timeout(_ body: inout JSONBody) -> Setting? {
        switch body.fields["timeoutMs"] {
        case nil: return nil
        case let .number(n)? where n == n.rounded() && (500...60_000).contains(n): return (TranslationDesk.timeoutKey, String(Int(n)))
        default:
            body.problem("timeoutMs", "must be a whole number from 500 to 60000")
            return nil
        }
    }
}

extension JSONBody {
    /// The language-code field `key`, or nil with a problem recorded.
    mutating func language(_ key: String, required: Bool = false) -> String? {
        guard let code = string(key, required: required) else { return nil }
        guard TranslationDesk.isLanguageCode(code) else {
            problem(key, "must be a language code such as en, es or pt-BR")
            return nil
        }
        return code
    }
}
