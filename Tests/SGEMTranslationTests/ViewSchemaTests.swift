import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport
@testable import SGEMTranslation
import Testing

/// Each answer of the translation API, encoded from a sample value, against the OpenAPI schema
/// documented beside its route: the same keys (every required one), types and nullability.
@Suite("Translation: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static let outcome = TranslationDesk.Outcome(text: "Buenos días", source: "en", target: "es", provider: "deepl", cached: true)

    /// The value as the API writes it, read back.
    static func wire(_ value: some Encodable) -> JSONValue {
        (try? JSONValue.parse(Response.json(value).body)) ?? .null
    }

    static let cases: [(String, JSONValue, JSONValue)] = [
        ("text", wire(outcome), TranslationAPI.textSchema),
        ("message", wire(TranslatedMessage(messageId: 9_007_199_254, translation: outcome)), TranslationAPI.messageSchema),
        ("notice", wire(TranslatedNotice(noticeId: 4, title: "Cierre", text: "La oficina cierra", source: "en", target: "es",
                                         provider: "deepl", cached: false)), TranslationAPI.noticeSchema),
        ("languages", wire(LanguageList(provider: "deepl", languages: [TranslationLanguage(code: "es", name: "Spanish")])),
         TranslationAPI.languagesSchema),
        ("languages, none", wire(LanguageList(provider: "none", languages: [])), TranslationAPI.languagesSchema),
        ("chat, on", wire(ChatTranslationChoice(target: "es")), TranslationAPI.chatSchema),
        ("chat, off", wire(ChatTranslationChoice(target: nil)), TranslationAPI.chatSchema),
        ("settings, ready", wire(TranslationSettingsView(provider: "deepl", url: "", apiKeySet: true, apiKeyNeedsReentry: false,
                                                         timeoutMs: 2500, ready: true, problem: nil)), TranslationAPI.settingsSchema),
        ("settings, a problem", wire(TranslationSettingsView(provider: "libretranslate", url: "", apiKeySet: false, apiKeyNeedsReentry: true,
                                                             timeoutMs: 10_000, ready: false, problem: TranslationDesk.keyLost)),
         TranslationAPI.settingsSchema),
        ("check", wire(ProviderCheck(ok: false, message: "The key was refused.")), TranslationAPI.checkSchema),
    ]

    @Test("the encoded value has the schema's properties, types and nulls", arguments: cases.indices)
    func matches(_ index: Int) {
        let (name, value, schema) = ViewSchemaTests.cases[index]
        #expect(value != .null, "\(name) did not encode")
        #expect(APISchema.mismatches(value, against: schema) == [], "\(name)")
    }

    @Test("a chat that is off says so with a null target; ids stay whole numbers")
    func nullsAndIDs() {
        let off = ViewSchemaTests.wire(ChatTranslationChoice(target: nil))
        #expect(off["enabled"] == false && off["target"] == .null)
        let message = ViewSchemaTests.wire(TranslatedMessage(messageId: 9_007_199_254, translation: ViewSchemaTests.outcome))
        #expect(message["messageId"] == 9_007_199_254 && message["cached"] == true && message["sameLanguage"] == nil)
    }
}
