import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// DeepL API v2: `POST {base}/v2/translate` with a JSON body and the key in the
/// `Authorization: DeepL-Auth-Key …` header; `GET {base}/v2/languages?type=target`.
struct DeepL: Translator {
    let url: String
    let call: ProviderCall

    /// DeepL refuses requests larger than 128 KiB; the body is held to that less room for the head.
    static let maxBodyBytes = 128 * 1024 - 4 * 1024

    init(_ settings: ProviderSettings, client: HTTPClient) {
        url = settings.url
        call = ProviderCall(name: "DeepL", client: client, timeout: settings.timeout, key: settings.apiKey)
    }

    var provider: String { "deepl" }

    /// The API's base URL: the admin's when set, else the free API for keys ending in `:fx`
    /// (DeepL's marking of free keys) and the pro API for the others.
    static func base(url: String, key: String) -> String {
        if !url.trimmingWhitespace().isEmpty { return url }
        return key.hasSuffix(":fx") ? "https://api-free.deepl.com" : "https://api.deepl.com"
    }

    /// DeepL's target code for an ISO 639-1 code: English and Portuguese need a variant
    /// (American English and Brazilian Portuguese unless the caller names one).
    static func targetCode(_ code: String) -> String {
        switch code.lowercased() {
        case "en": "EN-US"
        case "pt": "PT-BR"
        default: code.uppercased()
        }
    }

    /// DeepL's source code: the language alone, without a variant.
    static func sourceCode(_ code: String) -> String {
        String(code.split(separator: "-").first ?? Substring(code)).uppercased()
    }

    func translate(_ request: TranslationRequest) async throws(TranslationFailure) -> TranslationResult {
        var fields: [(String, JSONValue)] = [("text", [.string(request.text)]), ("target_lang", .string(Self.targetCode(request.target)))]
        if let source = request.source { fields.append(("source_lang", .string(Self.sourceCode(source)))) }
        let body = JSONValue.object(fields).serializedBytes()
        guard body.count <= Self.maxBodyBytes else {
            throw TranslationFailure(.textTooLong, "The text is longer than DeepL accepts (128 KiB per request).")
        }
        let response = try await send(.POST, "/v2/translate", body: body)
        guard let first = response["translations"]?.arrayValue?.first, let text = first["text"]?.stringValue else {
            throw call.unexpectedAnswer()
        }
        let detected = first["detected_source_language"]?.stringValue.map(Self.sourceCode)
        return TranslationResult(text: text, source: (request.source.map(Self.sourceCode) ?? detected ?? "auto").lowercased())
    }

    func languages() async throws(TranslationFailure) -> [TranslationLanguage] {
        guard let list = try await send(.GET, "/v2/languages?type=target").arrayValue else { throw call.unexpectedAnswer() }
        // DeepL lists variants (EN-GB, EN-US): one entry per ISO 639-1 code, named without the variant.
        var languages: [TranslationLanguage] = []
        for item in list {
            guard let language = item["language"]?.stringValue else { throw call.unexpectedAnswer() }
            let code = Self.sourceCode(language).lowercased()
            guard !languages.contains(where: { $0.code == code }) else { continue }
            var name = item["name"]?.stringValue ?? code
            if let open = name.firstIndex(of: "(") { name = String(name[..<open]).trimmingWhitespace() }
            languages.append(TranslationLanguage(code: code, name: name))
        }
        return languages
    }

    /// One call with the key header: the JSON answer of a 2xx, or the failure its status means
    /// (error bodies are `{"message": "…"}`).
    private func send(_ method: HTTPMethod, _ path: String, body: [UInt8] = []) async throws(TranslationFailure) -> JSONValue {
        guard let key = call.key, !key.isEmpty else {
            throw TranslationFailure(.invalidKey, "DeepL needs an API key and none is set: an admin can set it in Settings.")
        }
        let base = try ProviderCall.base(Self.base(url: url, key: key), name: call.name)
        var headers = [("Authorization", "DeepL-Auth-Key " + key), ("Accept", "application/json")]
        if !body.isEmpty { headers.append(("Content-Type", "application/json")) }
        let response = try await call.send(method, base + path, headers: headers, body: body)
        return try call.answer(response, detail: "message") { status, detail in
            switch status {
            case 400: ProviderCall.isAboutLanguage(detail) ? .unsupportedDirection : .unprocessable
            case 403: .invalidKey
            case 413: .textTooLong
            case 429: .rateLimited
            case 456: .quotaExceeded
            default: nil
            }
        }
    }
}
