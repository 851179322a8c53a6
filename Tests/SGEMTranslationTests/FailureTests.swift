import SGEMContracts
import SGEMCore
@testable import SGEMTranslation
import Testing

@Suite("Translation failures")
struct FailureTests {
    @Test("every stable code has the contract's status")
    func statuses() {
        let expected: [TranslationFailure.Code: Int] = [
            .translationDisabled: 503, .invalidKey: 502, .blockedKey: 502, .quotaExceeded: 429, .textTooLong: 413,
            .unprocessable: 422, .unsupportedDirection: 422, .rateLimited: 429, .providerUnavailable: 502, .providerTimeout: 504,
        ]
        for code in TranslationFailure.Code.allCases {
            #expect(TranslationFailure(code, "x").status == expected[code], "\(code)")
        }
        #expect(TranslationFailure(.rateLimited, "x", retryAfter: 7).headers["Retry-After"] == "7")
    }

    @Test("with no provider every call is translation_disabled")
    func none() async {
        let none = NoTranslator()
        await #expect(throws: TranslationFailure(.translationDisabled, "Translation is switched off: an admin can choose a provider in Settings.")) {
            try await none.translate(TranslationRequest(text: "hola", target: "en"))
        }
    }
}
