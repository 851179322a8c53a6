import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// LibreTranslate (self-hosted by default): `POST {url}/translate` with a JSON body,
/// `GET {url}/languages`; the key, when set, travels in the body as `api_key`.
struct LibreTranslate: Translator {
    let url: String
    let call: ProviderCall

    init(_ settings: ProviderSettings, client: HTTPClient) {
        url = settings.url
        call = ProviderCall(name: "LibreTranslate", client: client, timeout: settings.timeout, key: settings.apiKey)
    }

    var provider: String { "libretranslate" }

    func translate(_ request: TranslationRequest) async throws(TranslationFailure) -> TranslationResult {
        var body: JSONValue = ["q": .string(request.text), "source": .string(request.source ?? "auto"),
                               "target": .string(request.target), "format": "text"]
        if let key = call.key, !key.isEmpty, case .object(var fields) = body {
            fields.append(("api_key", .string(key)))
            body = .object(fields)
        }
        let base = try ProviderCall.base(url, name: call.name)
        let response = try await call.send(.POST, base + "/translate", headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                                           body: body.serializedBytes())
        let answer = try checked(response)
        guard let text = answer["translatedText"]?.stringValue else { throw call.unexpectedAnswer() }
        let detected = answer["detectedLanguage"]?["language"]?.stringValue
        return TranslationResult(text: text, source: (request.source ?? detected ?? "auto").lowercased())
    }

    func languages() async throws(TranslationFailure) -> [TranslationLanguage] {
        let base = try ProviderCall.base(url, name: call.name)
        let response = try await call.send(.GET, base + "/languages", headers: [("Accept", "application/json")])
        guard let list = try checked(response).arrayValue else { throw call.unexpectedAnswer() }
        var languages: [TranslationLanguage] = []
        for item in list {
            guard let code = item["code"]?.stringValue else { throw call.unexpectedAnswer() }
            languages.append(TranslationLanguage(code: code.lowercased(), name: item["name"]?.stringValue ?? code))
        }
        return languages
    }

    /// The JSON answer of a 2xx, or the failure its status means (error bodies are `{"error": "…"}`).
    private func checked(_ response: HTTPClientResponse) throws(TranslationFailure) -> JSONValue {
        try call.answer(response, detail: "error") { status, detail in
            switch status {
            case 400: ProviderCall.isAboutLanguage(detail) ? .unsupportedDirection : .unprocessable
            case 403: .invalidKey
            case 429: .rateLimited
            default: nil
            }
        }
    }
}
