import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Yandex Translate API v1.5 (legacy keys): `POST {base}/translate` and `POST {base}/getLangs`
/// with form bodies. The key travels in the body only, never in the URL, so it cannot show in a
/// log line or an error that names the URL.
struct Yandex: Translator {
    let url: String
    let call: ProviderCall

    static let defaultBase = "https://translate.yandex.net/api/v1.5/tr.json"

    init(_ settings: ProviderSettings, client: HTTPClient) {
        url = settings.url
        call = ProviderCall(name: "Yandex", client: client, timeout: settings.timeout, key: settings.apiKey)
    }

    var provider: String { "yandex" }

    func translate(_ request: TranslationRequest) async throws(TranslationFailure) -> TranslationResult {
        let target = request.target.lowercased()
        let direction = request.source.map { $0.lowercased() + "-" + target } ?? target
        let answer = try await send("/translate", [("text", request.text), ("lang", direction)])
        guard let text = answer["text"]?.arrayValue?.first?.stringValue else { throw call.unexpectedAnswer() }
        // `lang` is "source-target": the source given, or the one Yandex detected.
        let detected = answer["lang"]?.stringValue?.split(separator: "-").first.map(String.init)
        return TranslationResult(text: text, source: (request.source ?? detected ?? "auto").lowercased())
    }

    func languages() async throws(TranslationFailure) -> [TranslationLanguage] {
        let answer = try await send("/getLangs", [("ui", "en")])
        guard let names = answer["langs"]?.objectValue else { throw call.unexpectedAnswer() }
        return names.map { TranslationLanguage(code: $0.0.lowercased(), name: $0.1.stringValue ?? $0.0) }.sorted { $0.code < $1.code }
    }

    /// One form POST with the key first: the JSON answer of a 2xx, or the failure its status
    /// means (error bodies are `{"code": …, "message": "…"}`).
    private func send(_ path: String, _ fields: [(String, String)]) async throws(TranslationFailure) -> JSONValue {
        guard let key = call.key, !key.isEmpty else {
            throw TranslationFailure(.invalidKey, "Yandex needs an API key and none is set: an admin can set it in Settings.")
        }
        let base = try ProviderCall.base(url.trimmingWhitespace().isEmpty ? Self.defaultBase : url, name: call.name)
        let response = try await call.send(.POST, base + path,
                                           headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                                           body: ProviderCall.formEncoded([("key", key)] + fields))
        return try call.answer(response, detail: "message") { status, _ in
            switch status {
            case 401: .invalidKey
            case 402: .blockedKey
            case 403, 404: .quotaExceeded
            case 413: .textTooLong
            case 422: .unprocessable
            case 501: .unsupportedDirection
            default: nil
            }
        }
    }
}
