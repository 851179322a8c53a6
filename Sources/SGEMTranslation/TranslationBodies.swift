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
struct TranslateTextBody {
    /// The longest text taken, in characters (a notice's body is at most 20,000).
    static let maxText = 20_000

    let text: String
    let target: String
    let source: String?

    init(_ request: Request) throws {
        var body = try JSONBody(request)
        let text = body.string("text", required: true)
        if let text, text.isEmpty || text.count > TranslateTextBody.maxText {
            body.problem("text", "must be 1 to \(TranslateTextBody.maxText) characters")
        }
        let target = body.language("target", required: true)
        source = body.language("source")
        try body.check()
        (self.text, self.target) = (text ?? "", target ?? "")
    }
}

/// `PUT /chats/{id}/translation`: `{enabled, target?}`.
struct ChatTranslationBody {
    let enabled: Bool
    let target: String?

    init(_ request: Request) throws {
        var body = try JSONBody(request)
        let enabled = body.bool("enabled")
        if !body.has("enabled") { body.problem("enabled", "is required") }
        target = body.language("target")
        try body.check()
        self.enabled = enabled == true
    }
}

/// `PUT /admin/translation`: `{provider?, url?, apiKey?, timeoutMs?}` as the runtime settings it
/// changes, in order (a nil value clears one).
struct TranslationSettingsBody {
    let change: [(String, String?)]

    init(_ request: Request) throws {
        var body = try JSONBody(request)
        var change: [(String, String?)] = []
        if let provider = body.string("provider") {
            if ProviderSettings.names.contains(provider) { change.append((TranslationDesk.providerKey, provider)) } else {
                body.problem("provider", "must be libretranslate, deepl, yandex or none")
            }
        } else if body.fields["provider"] == .null { body.problem("provider", "must be libretranslate, deepl, yandex or none") }
        if let url = body.string("url") {
            let trimmed = url.trimmingSpaces
            if let problem = TranslationDesk.urlProblem(trimmed) { body.problem("url", problem) } else {
                change.append((TranslationDesk.urlKey, trimmed.isEmpty ? nil : trimmed))
            }
        }
        switch body.nullableString("apiKey") {
        case .none: break
        case .some(nil): change.append((TranslationDesk.apiKeyKey, nil))
        case let .some(key?):
            let trimmed = key.trimmingSpaces
            if trimmed.isEmpty || trimmed.utf8.count > 512 || trimmed.contains(where: { $0.isNewline }) {
                body.problem("apiKey", "must be 1 to 512 characters on one line (null removes the key)")
            } else {
                change.append((TranslationDesk.apiKeyKey, trimmed))
            }
        }
        switch body.fields["timeoutMs"] {
        case nil: break
        case let .number(n)? where n == n.rounded() && (500...60_000).contains(n):
            change.append((TranslationDesk.timeoutKey, String(Int(n))))
        default: body.problem("timeoutMs", "must be a whole number from 500 to 60000")
        }
        try body.check()
        self.change = change
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
