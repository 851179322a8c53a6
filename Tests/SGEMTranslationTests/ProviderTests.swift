import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport
import SGEMTestSupport
@testable import SGEMTranslation
import Testing

/// A provider's stub and a client trusting its CA, for one test (`defer { rig.stop() }`).
final class StubRig {
    let stub: TranslationStub
    let client: HTTPClient

    init(_ provider: TranslationStub.Provider, tls: TestCertificates.Leaf? = nil) throws {
        stub = try TranslationStub(provider, tls: tls)
        client = try ProviderFixture.client(caFile: stub.caFile)
    }

    func stop() {
        stub.stop()
        client.shutdown()
    }

    /// The translator the factory makes for the stub, with the provider's key unless told.
    func translator(key: String?? = .none, timeout: Duration = .seconds(5)) -> any Translator {
        Providers.translator(for: ProviderFixture.settings(stub, key: key, timeout: timeout), client: client)
    }
}

/// What the provider tests share: a client per test, settings pointing at a stub, and each
/// provider's key (distinctive, so a leak into a message shows).
enum ProviderFixture {
    static let keys: [TranslationStub.Provider: String] = [
        .libretranslate: "lt-secret-4711", .deepl: "0f1e2d3c-deepl-secret-4711:fx", .yandex: "trnsl.1.1.yandex-secret-4711",
    ]

    static func client(caFile: String? = nil) throws -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectTimeout = .seconds(2)
        configuration.timeout = .seconds(10)
        configuration.outboundPolicy = try OutboundPolicy(allowing: "127.0.0.1") // the stubs' address
        configuration.caFile = caFile
        return try HTTPClient(configuration: configuration)
    }

    static func settings(_ stub: TranslationStub, key: String?? = .none, timeout: Duration = .seconds(5)) -> ProviderSettings {
        ProviderSettings(provider: stub.provider.rawValue, url: stub.url, apiKey: key ?? keys[stub.provider], timeout: timeout)
    }

    /// A JSON object's fields by name (parsed objects do not keep their order).
    static func fields(_ json: JSONValue?) -> [String: JSONValue] {
        Dictionary(json?.objectValue ?? [], uniquingKeysWith: { first, _ in first })
    }

    /// The failure `body` throws, or nil when it succeeds.
    static func failure(_ body: () async throws -> Void) async -> TranslationFailure? {
        do {
            try await body()
            return nil
        } catch let failure as TranslationFailure {
            return failure
        } catch {
            Issue.record("not a TranslationFailure: \(error)")
            return nil
        }
    }
}

@Suite("Translation providers: requests and answers")
struct ProviderTests {
    typealias F = ProviderFixture

    // MARK: Request shapes

    @Test("LibreTranslate: POST /translate with a JSON body, the key in it, source auto when not given")
    func libreTranslateRequest() async throws {
        let rig = try StubRig(.libretranslate)
        defer { rig.stop() }
        let stub = rig.stub
        stub.detectedSource = "de"
        let translator = rig.translator()
        #expect(translator.provider == "libretranslate")

        let detected = try await translator.translate(TranslationRequest(text: "Guten Tag", target: "es"))
        #expect(detected == TranslationResult(text: "[es] Guten Tag", source: "de"))
        let request = try #require(stub.lastRequest)
        #expect(request.method == "POST" && request.path == "/translate")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Authorization") == nil)
        #expect(F.fields(request.json) == ["q": "Guten Tag", "source": "auto", "target": "es", "format": "text", "api_key": .string(F.keys[.libretranslate]!)])

        let given = try await translator.translate(TranslationRequest(text: "Hello", source: "en", target: "fr"))
        #expect(given == TranslationResult(text: "[fr] Hello", source: "en"))
        #expect(stub.lastRequest?.json?["source"] == "en")

        // Without a key, no api_key field at all.
        let keyless = rig.translator(key: .some(nil))
        _ = try await keyless.translate(TranslationRequest(text: "Hola", target: "en"))
        #expect(F.fields(stub.lastRequest?.json) == ["q": "Hola", "source": "auto", "target": "en", "format": "text"])
        #expect(stub.requestCount == 3)
    }

    @Test("DeepL: POST /v2/translate, the key in the Authorization header, DeepL's language codes")
    func deepLRequest() async throws {
        let rig = try StubRig(.deepl)
        defer { rig.stop() }
        let stub = rig.stub
        stub.detectedSource = "fr"
        let translator = rig.translator()
        #expect(translator.provider == "deepl")

        let detected = try await translator.translate(TranslationRequest(text: "Bonjour", target: "es"))
        #expect(detected == TranslationResult(text: "[es] Bonjour", source: "fr"))
        let request = try #require(stub.lastRequest)
        #expect(request.method == "POST" && request.path == "/v2/translate")
        #expect(request.header("Authorization") == "DeepL-Auth-Key " + F.keys[.deepl]!)
        #expect(request.header("Content-Type") == "application/json")
        #expect(F.fields(request.json) == ["text": .array(["Bonjour"]), "target_lang": "ES"])

        let english = try await translator.translate(TranslationRequest(text: "Hola", source: "es", target: "en"))
        #expect(english == TranslationResult(text: "[en] Hola", source: "es"))
        #expect(F.fields(stub.lastRequest?.json) == ["text": .array(["Hola"]), "target_lang": "EN-US", "source_lang": "ES"])
        _ = try await translator.translate(TranslationRequest(text: "Hola", target: "pt"))
        #expect(stub.lastRequest?.json?["target_lang"] == "PT-BR")
    }

    @Test("Yandex: a form POST with the key in the body, never in the URL; lang is target or source-target")
    func yandexRequest() async throws {
        let rig = try StubRig(.yandex)
        defer { rig.stop() }
        let stub = rig.stub
        stub.detectedSource = "ru"
        let translator = rig.translator()
        #expect(translator.provider == "yandex")

        let detected = try await translator.translate(TranslationRequest(text: "Привет & co", target: "es"))
        #expect(detected == TranslationResult(text: "[es] Привет & co", source: "ru"))
        let request = try #require(stub.lastRequest)
        #expect(request.method == "POST" && request.path == "/api/v1.5/tr.json/translate")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(request.params.map(\.name) == ["key", "text", "lang"], "nothing in the query, the key first in the body")
        #expect(request.param("key") == F.keys[.yandex])
        #expect(request.param("text") == "Привет & co")
        #expect(request.param("lang") == "es")

        let given = try await translator.translate(TranslationRequest(text: "Hello", source: "en", target: "de"))
        #expect(given == TranslationResult(text: "[de] Hello", source: "en"))
        #expect(stub.lastRequest?.param("lang") == "en-de")
    }

    @Test("no request carries anything but what the provider needs", arguments: TranslationStub.Provider.allCases)
    func onlyTheNeededHeaders(provider: TranslationStub.Provider) async throws {
        let rig = try StubRig(provider)
        defer { rig.stop() }
        let stub = rig.stub
        let translator = rig.translator()
        _ = try await translator.translate(TranslationRequest(text: "hi", target: "es"))
        _ = try await translator.languages()
        let allowed: Set<String> = ["host", "user-agent", "content-length", "content-type", "accept", "authorization"]
        for request in stub.requests {
            #expect(Set(request.headers.map { $0.name.lowercased() }).isSubset(of: allowed), "\(request.headers)")
            #expect(request.header("Authorization").map { $0.hasPrefix("DeepL-Auth-Key ") } ?? true)
            #expect(request.header("Cookie") == nil)
        }
    }

    // MARK: DeepL's hosts and codes, without network

    @Test("DeepL: free keys (:fx) go to api-free, others to api, an admin-set URL wins", arguments: [
        ("279a2e9d-83b3-c416-7e2d-f721593e42a0:fx", "", "https://api-free.deepl.com"),
        ("279a2e9d-83b3-c416-7e2d-f721593e42a0", "", "https://api.deepl.com"),
        ("279a2e9d:fx", "  ", "https://api-free.deepl.com"),
        ("279a2e9d:fx", "http://127.0.0.1:9", "http://127.0.0.1:9"),
        ("279a2e9d", "https://deepl.internal.example", "https://deepl.internal.example"),
    ])
    func deepLHost(key: String, url: String, expected: String) {
        #expect(DeepL.base(url: url, key: key) == expected)
    }

    @Test("DeepL: target and source codes", arguments: [
        ("en", "EN-US", "EN"), ("pt", "PT-BR", "PT"), ("es", "ES", "ES"), ("EN-gb", "EN-GB", "EN"), ("de", "DE", "DE"),
    ])
    func deepLCodes(code: String, target: String, source: String) {
        #expect(DeepL.targetCode(code) == target)
        #expect(DeepL.sourceCode(code) == source)
    }

    // MARK: Languages

    @Test("languages: each provider's list as ISO 639-1 codes with names", arguments: TranslationStub.Provider.allCases)
    func languages(provider: TranslationStub.Provider) async throws {
        let rig = try StubRig(provider)
        defer { rig.stop() }
        let stub = rig.stub
        let languages = try await rig.translator().languages()
        let expected = provider == .deepl
            ? [("de", "German"), ("en", "English"), ("es", "Spanish"), ("fr", "French"), ("pt", "Portuguese")]
            : provider == .yandex ? [("de", "German"), ("en", "English"), ("es", "Spanish"), ("fr", "French"), ("pt", "Portuguese")]
            : [("en", "English"), ("es", "Spanish"), ("de", "German"), ("fr", "French"), ("pt", "Portuguese")]
        #expect(languages == expected.map { TranslationLanguage(code: $0.0, name: $0.1) })
        let request = try #require(stub.lastRequest)
        switch provider {
        case .libretranslate:
            #expect(request.method == "GET" && request.path == "/languages")
        case .deepl:
            #expect(request.method == "GET" && request.path == "/v2/languages" && request.param("type") == "target")
            #expect(request.header("Authorization") == "DeepL-Auth-Key " + F.keys[.deepl]!)
        case .yandex:
            #expect(request.method == "POST" && request.path == "/api/v1.5/tr.json/getLangs")
            #expect(request.params.map(\.name) == ["key", "ui"] && request.param("ui") == "en" && request.param("key") == F.keys[.yandex])
        }
    }

    // MARK: Configuration

    @Test("the factory: each provider by name, anything else translates nothing", arguments: [
        ("libretranslate", "libretranslate"), ("deepl", "deepl"), ("yandex", "yandex"), ("none", "none"), ("google", "none"), ("", "none"),
    ])
    func factory(name: String, provider: String) async throws {
        let client = try F.client()
        defer { client.shutdown() }
        let translator = Providers.translator(for: ProviderSettings(provider: name, url: "http://127.0.0.1:9", apiKey: "k", timeout: .seconds(1)), client: client)
        #expect(translator.provider == provider)
        if provider == "none" {
            let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "x", target: "es")) }
            #expect(failure?.failure == .translationDisabled)
        }
    }

    @Test("LibreTranslate without a URL says the URL is missing, and calls nothing")
    func missingURL() async throws {
        let client = try F.client()
        defer { client.shutdown() }
        let translator = Providers.translator(for: ProviderSettings(provider: "libretranslate", url: " ", apiKey: nil, timeout: .seconds(1)), client: client)
        let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "x", target: "es")) }
        #expect(failure?.failure == .providerUnavailable)
        #expect(failure?.message == "The LibreTranslate URL is missing: an admin can set it in Settings.")
        let languages = await F.failure { _ = try await translator.languages() }
        #expect(languages == failure)
    }

    @Test("an unusable URL is provider_unavailable in words", arguments: ["not a url", "ftp://example.com", "http://"])
    func invalidURL(url: String) async throws {
        let client = try F.client()
        defer { client.shutdown() }
        let translator = Providers.translator(for: ProviderSettings(provider: "libretranslate", url: url, apiKey: nil, timeout: .seconds(1)), client: client)
        let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "x", target: "es")) }
        #expect(failure == TranslationFailure(.providerUnavailable, "The LibreTranslate URL is not a valid http or https address."))
    }

    @Test("DeepL and Yandex without a key: invalid_key before any call", arguments: [TranslationStub.Provider.deepl, .yandex])
    func missingKey(provider: TranslationStub.Provider) async throws {
        let rig = try StubRig(provider)
        defer { rig.stop() }
        let stub = rig.stub
        for key in [nil, ""] as [String?] {
            let translator = rig.translator(key: .some(key))
            let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "x", target: "es")) }
            #expect(failure?.failure == .invalidKey)
            #expect(failure?.message.contains("none is set") == true)
        }
        #expect(stub.requestCount == 0)
    }

    @Test("DeepL: a request over 128 KiB is refused before sending")
    func deepLRequestSizeCap() async throws {
        let rig = try StubRig(.deepl)
        defer { rig.stop() }
        let stub = rig.stub
        let translator = rig.translator()
        let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: String(repeating: "a", count: 128 * 1024), target: "es")) }
        #expect(failure?.failure == .textTooLong)
        #expect(stub.requestCount == 0)
        // Well under the cap, it goes.
        let result = try await translator.translate(TranslationRequest(text: String(repeating: "a", count: 100 * 1024), target: "es"))
        #expect(result.text.count == 100 * 1024 + 5)
        #expect(stub.requestCount == 1)
    }

    @Test("a stub that checks keys refuses another key as the provider would", arguments: TranslationStub.Provider.allCases)
    func wrongKey(provider: TranslationStub.Provider) async throws {
        let rig = try StubRig(provider)
        defer { rig.stop() }
        let stub = rig.stub
        stub.key = "the-right-key"
        let request = TranslationRequest(text: "hi", target: "es")
        let wrong = await F.failure { _ = try await rig.translator().translate(request) }
        #expect(wrong?.failure == .invalidKey)
        #expect(try await rig.translator(key: "the-right-key").translate(request).text == "[es] hi")
    }

    @Test("durations in words", arguments: [(Duration.seconds(5), "5 seconds"), (.seconds(1), "1 second"), (.milliseconds(300), "300 milliseconds"),
                                            (.milliseconds(2500), "2500 milliseconds")])
    func durationWords(duration: Duration, words: String) {
        #expect(ProviderCall.words(duration) == words)
    }

    @Test("form encoding keeps unreserved characters and escapes the rest")
    func formEncoding() {
        let encoded = String(decoding: ProviderCall.formEncoded([("key", "a:b/c+d"), ("text", "Hola & adiós=1 ~._-")]), as: UTF8.self)
        #expect(encoded == "key=a%3Ab%2Fc%2Bd&text=Hola%20%26%20adi%C3%B3s%3D1%20~._-")
    }
}
