import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport
import SGEMTestSupport
@testable import SGEMTranslation
import Testing

@Suite("Translation providers: failures")
struct ProviderFailureTests {
    typealias F = ProviderFixture

    /// A provider's error status, the words in its body (`KEY` stands for the key, echoed back
    /// the way a careless provider might) and the code it must become.
    struct StatusCase: Sendable, CustomTestStringConvertible {
        let provider: TranslationStub.Provider
        let status: Int
        let message: String?
        let expected: TranslationFailure.Code
        var testDescription: String { "\(provider) \(status)\(message.map { " \($0)" } ?? "") → \(expected.rawValue)" }

        init(_ provider: TranslationStub.Provider, _ status: Int, _ expected: TranslationFailure.Code, _ message: String? = nil) {
            self.provider = provider
            self.status = status
            self.expected = expected
            self.message = message
        }
    }

    static let statuses: [StatusCase] = [
        StatusCase(.libretranslate, 400, .unprocessable, "Invalid request for KEY"),
        StatusCase(.libretranslate, 400, .unsupportedDirection, "xx is not supported (key KEY)"),
        StatusCase(.libretranslate, 403, .invalidKey, "Invalid API key KEY"),
        StatusCase(.libretranslate, 429, .rateLimited),
        StatusCase(.libretranslate, 500, .providerUnavailable, "Cannot translate text: KEY"),
        StatusCase(.libretranslate, 502, .providerUnavailable),
        StatusCase(.libretranslate, 404, .providerUnavailable),
        StatusCase(.deepl, 400, .unprocessable, "Bad request for KEY"),
        StatusCase(.deepl, 400, .unsupportedDirection, "Value for 'target_lang' not supported. KEY"),
        StatusCase(.deepl, 403, .invalidKey),
        StatusCase(.deepl, 413, .textTooLong),
        StatusCase(.deepl, 429, .rateLimited),
        StatusCase(.deepl, 456, .quotaExceeded),
        StatusCase(.deepl, 500, .providerUnavailable),
        StatusCase(.deepl, 503, .providerUnavailable),
        StatusCase(.deepl, 418, .providerUnavailable),
        StatusCase(.yandex, 401, .invalidKey, "API key KEY is invalid"),
        StatusCase(.yandex, 402, .blockedKey),
        StatusCase(.yandex, 403, .quotaExceeded),
        StatusCase(.yandex, 404, .quotaExceeded),
        StatusCase(.yandex, 413, .textTooLong),
        StatusCase(.yandex, 422, .unprocessable, "The text KEY cannot be translated"),
        StatusCase(.yandex, 501, .unsupportedDirection),
        StatusCase(.yandex, 500, .providerUnavailable),
    ]

    @Test("each provider error status maps to its stable code, without the key in the message", arguments: statuses)
    func statusMapping(_ c: StatusCase) async throws {
        let rig = try StubRig(c.provider)
        defer { rig.stop() }
        let stub = rig.stub
        let key = F.keys[c.provider]!
        stub.fail(.status(c.status, message: c.message?.replacingOccurrences(of: "KEY", with: key)))
        let translator = rig.translator()
        for call in [true, false] {
            let failure = await F.failure {
                if call { _ = try await translator.translate(TranslationRequest(text: "hello", target: "es")) } else { _ = try await translator.languages() }
            }
            let f = try #require(failure)
            #expect(f.failure == c.expected, "\(f)")
            #expect(!f.message.contains(key) && !f.message.contains("secret"), "\(f.message)")
            #expect(f.message.hasSuffix(".") && !f.message.contains("\n"))
            #expect(f.retryAfter == (c.status == 429 ? 7 : nil))
            if c.expected == .providerUnavailable { #expect(f.message.contains("HTTP \(c.status)"), "\(f.message)") }
        }
        #expect(stub.requestCount == 2)
    }

    @Test("a quoted provider reason keeps its sense but loses the key")
    func quotedReason() async throws {
        let rig = try StubRig(.libretranslate)
        defer { rig.stop() }
        let stub = rig.stub
        stub.fail(.status(400, message: "zz is not supported for lt-secret-4711."))
        let failure = await F.failure { _ = try await rig.translator().translate(TranslationRequest(text: "x", target: "zz")) }
        #expect(failure == TranslationFailure(.unsupportedDirection, "LibreTranslate does not translate between these languages (zz is not supported for …)."))
    }

    /// A way the network or a provider can go wrong, the code it must become, and how the message begins.
    struct BrokenCase: Sendable, CustomTestStringConvertible {
        let provider: TranslationStub.Provider
        let failure: TranslationStub.Failure
        let expected: TranslationFailure.Code
        let words: String
        var testDescription: String { "\(provider) \(failure) → \(expected.rawValue)" }
    }

    static let broken: [BrokenCase] = TranslationStub.Provider.allCases.flatMap { provider in
        [
            BrokenCase(provider: provider, failure: .slow(.seconds(5)), expected: .providerTimeout, words: "No answer from"),
            BrokenCase(provider: provider, failure: .hang, expected: .providerTimeout, words: "No answer from"),
            BrokenCase(provider: provider, failure: .notJSON, expected: .providerUnavailable, words: "could not be understood"),
            BrokenCase(provider: provider, failure: .missingText, expected: .providerUnavailable, words: "could not be understood"),
            BrokenCase(provider: provider, failure: .notHTTP, expected: .providerUnavailable, words: "did not answer like an HTTP server"),
            BrokenCase(provider: provider, failure: .oversized, expected: .providerUnavailable, words: "larger than 1 MiB"),
            BrokenCase(provider: provider, failure: .close, expected: .providerUnavailable, words: "did not answer like an HTTP server"),
        ]
    }

    @Test("slow, hanging, garbled, oversized or cut answers become provider_timeout or provider_unavailable", arguments: broken)
    func brokenAnswers(_ c: BrokenCase) async throws {
        let rig = try StubRig(c.provider)
        defer { rig.stop() }
        let stub = rig.stub
        stub.fail(c.failure)
        // 300 ms where the timeout is the point; elsewhere room for a loaded machine.
        let timeout: Duration = c.expected == .providerTimeout ? .milliseconds(300) : .seconds(5)
        let translator = rig.translator(timeout: timeout)
        let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "hello", target: "es")) }
        let f = try #require(failure)
        #expect(f.failure == c.expected, "\(f)")
        #expect(f.message.contains(c.words), "\(f.message)")
        #expect(!f.message.contains("secret"))
        if c.expected == .providerTimeout {
            // The failure is the timeout's (a slow answer that came would have been a translation),
            // said with the configured time; how long it took is the benchmarks' business.
            #expect(f.message == "No answer from \(translator.provider == "libretranslate" ? "LibreTranslate" : translator.provider == "deepl" ? "DeepL" : "Yandex") within 300 milliseconds.")
        }
        let languages = await F.failure { _ = try await translator.languages() }
        #expect(languages?.failure == c.expected, "\(String(describing: languages))")
        // Back to normal, the same translator works again.
        stub.fail(nil)
        #expect(try await translator.translate(TranslationRequest(text: "hello", target: "es")).text == "[es] hello")
    }

    @Test("every client failure maps to provider_timeout or provider_unavailable, in words", arguments: [
        (HTTPClientError.Code.timeout, TranslationFailure.Code.providerTimeout, "No answer from DeepL within 2 seconds."),
        (.connectTimeout, .providerTimeout, "No answer from DeepL within 2 seconds."),
        (.connectFailed, .providerUnavailable, "DeepL at h:1 refused the connection or could not be reached."),
        (.resolveFailed, .providerUnavailable, "The host name h of DeepL could not be found."),
        (.tooLarge, .providerUnavailable, "DeepL sent an answer larger than 1 MiB, which was refused."),
        (.badResponse, .providerUnavailable, "DeepL at h:1 did not answer like an HTTP server."),
        (.redirectRefused, .providerUnavailable, "DeepL at h:1 did not answer like an HTTP server."),
        (.tlsFailed, .providerUnavailable, "No secure connection to DeepL at h:1 could be set up, so nothing was sent."),
        (.cancelled, .providerUnavailable, "The call to DeepL was cancelled."),
    ])
    func clientFailures(error: HTTPClientError.Code, expected: TranslationFailure.Code, message: String) throws {
        let client = try F.client()
        defer { client.shutdown() }
        let call = ProviderCall(name: "DeepL", client: client, timeout: .seconds(2), key: "k")
        #expect(call.failure(HTTPClientError(error, "connect to h:1 with k failed"), host: "h:1") == TranslationFailure(expected, message))
    }

    @Test("a refused connection is provider_unavailable", arguments: TranslationStub.Provider.allCases)
    func refused(provider: TranslationStub.Provider) async throws {
        let port = try RefusingPort()
        let client = try F.client()
        defer { client.shutdown() }
        let url = port.url + (provider == .yandex ? "/api/v1.5/tr.json" : "")
        let settings = ProviderSettings(provider: provider.rawValue, url: url, apiKey: F.keys[provider], timeout: .seconds(2))
        let failure = await F.failure { _ = try await Providers.translator(for: settings, client: client).translate(TranslationRequest(text: "x", target: "es")) }
        #expect(failure?.failure == .providerUnavailable)
        #expect(failure?.message.contains("refused the connection") == true, "\(String(describing: failure))")
        #expect(failure?.message.contains("secret") == false)
    }

    @Test("a stopped stub is no longer reached")
    func stoppedStub() async throws {
        let rig = try StubRig(.libretranslate)
        defer { rig.stop() }
        let stub = rig.stub
        let translator = rig.translator(timeout: .seconds(2))
        _ = try await translator.translate(TranslationRequest(text: "x", target: "es"))
        stub.stop()
        let failure = await F.failure { _ = try await translator.translate(TranslationRequest(text: "y", target: "es")) }
        #expect(failure?.failure == .providerUnavailable || failure?.failure == .providerTimeout, "\(String(describing: failure))")
        #expect(stub.requestCount == 1)
    }

    @Test("HTTPS: a certificate from the trusted CA is accepted", arguments: TranslationStub.Provider.allCases)
    func trustedCertificate(provider: TranslationStub.Provider) async throws {
        let rig = try StubRig(provider, tls: .good)
        defer { rig.stop() }
        let stub = rig.stub
        #expect(stub.url.hasPrefix("https://localhost:"))
        let result = try await rig.translator().translate(TranslationRequest(text: "hello", target: "de"))
        #expect(result.text == "[de] hello")
    }

    @Test("HTTPS: an expired, wrong-host or self-signed certificate is provider_unavailable, and nothing is sent",
          arguments: [TestCertificates.Leaf.expired, .wrongHost, .selfSigned])
    func untrustedCertificate(leaf: TestCertificates.Leaf) async throws {
        let rig = try StubRig(.deepl, tls: leaf)
        defer { rig.stop() }
        let stub = rig.stub
        let failure = await F.failure { _ = try await rig.translator().translate(TranslationRequest(text: "hello", target: "de")) }
        #expect(failure?.failure == .providerUnavailable)
        #expect(failure?.message == "The certificate of DeepL at localhost:\(stub.port) could not be verified, so nothing was sent.")
        #expect(stub.requestCount == 0)
    }
}
